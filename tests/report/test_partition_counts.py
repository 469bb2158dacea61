"""scan, report and export count the same partitions, or say once what they leave out: the report's
and export's partitions are the data partitions (``__consumer_offsets`` among them); the internal
ones without producer state are named with their count, and the counts add up to scan's."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

import forensics.cli.export_cmd  # noqa: F401  (registers the commands)
import forensics.cli.report_cmd  # noqa: F401
import forensics.cli.scan_cmd  # noqa: F401
from forensics.cli.app import app

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "example-disk"


def _run(*args):
    r = CliRunner().invoke(app, [*map(str, args), "--no-progress", "--engine", "local"])
    assert r.exit_code == 0, r.output
    return r


def _left_out(text: str):
    m = re.search(r"not counted: the (\d+) partitions of ((?:__\w+ \d+(?:, )?)+) \(scan counts them\)", text)
    assert m, text
    by_topic = dict((t, int(n)) for t, n in (part.rsplit(" ", 1) for part in m.group(2).split(", ")))
    assert sum(by_topic.values()) == int(m.group(1))
    return by_topic


def test_report_and_export_partitions_add_up_to_scans(tmp_path):
    scanned = json.loads(_run("scan", EXAMPLE, "--format", "json").stdout)
    on_disk = [p for d in scanned["logDirs"] for p in d["partitions"] if p["status"] == "live"]

    _run("report", EXAMPLE, "--out", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    card = re.search(r'<span class="n">(\d+)</span>partitions<br><span class="muted">([^<]*)</span>', page)
    assert card, page[:2000]
    left_out = _left_out(card.group(2))
    assert left_out == {t: sum(p["topic"] == t for p in on_disk) for t in ("__cluster_metadata", "__transaction_state")}
    assert int(card.group(1)) + sum(left_out.values()) == len(on_disk)

    r = _run("export", EXAMPLE, "--out", tmp_path / "exp")
    rows = int(re.search(r"^partitions +(\d+) rows", r.stdout, re.M).group(1))
    assert _left_out(r.stderr) == left_out and rows + sum(left_out.values()) == len(on_disk)  # one broker: a row each
