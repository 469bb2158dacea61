"""scan says what the disk names that the inputs lack (issue 22): the same coverage lines find-hanging
warns of, as an ``Evidence`` section under the findings and ``evidence.gaps`` in JSON."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from forensics.cli.app import app

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "example-disk"
WHOLE = "Evidence: every broker, log dir and partition the disk names is among the inputs"


def _scan(path: Path, *args: str):
    r = CliRunner().invoke(app, ["scan", str(path), "--no-progress", "--engine", "local", *args])
    assert r.exit_code == 0, r.output
    return r


def _hanging_warnings(path: Path):
    r = CliRunner().invoke(app, ["find-hanging", str(path), "--no-progress", "--engine", "local"])
    return [ln.removeprefix("WARNING: ") for ln in r.stderr.splitlines() if ln.startswith("WARNING: evidence:")]


def test_a_whole_disk_says_nothing_named_is_missing():
    assert _scan(EXAMPLE).stdout.splitlines()[-1] == WHOLE
    assert json.loads(_scan(EXAMPLE, "--format", "json").stdout)["evidence"] == {"gaps": []}


def test_a_partition_left_out_is_named_as_find_hanging_names_it(tmp_path):
    disk = tmp_path / "disk"
    shutil.copytree(EXAMPLE, disk)
    shutil.rmtree(disk / "broker-1" / "payments-0")
    out = _scan(disk).stdout
    assert "Findings: none" in out and WHOLE not in out
    gaps = json.loads(_scan(disk, "--format", "json").stdout)["evidence"]["gaps"]
    assert len(gaps) == 1 and "payments-0" in gaps[0] and "not among the inputs" in gaps[0]
    assert gaps == _hanging_warnings(disk)  # one rule, the same words
    tail = out.split("Evidence: what weakens any verdict on these inputs\n", 1)[1]
    assert " ".join(tail.split()) == " ".join(gaps[0].removeprefix("evidence: ").split())
