"""``export --overwrite`` removes only a previous export it can identify (issue 15, item 12): the
tables its ``_export.json`` lists, holding nothing but Spark's Parquet output, then that file.
Any directory merely named like a table, or anything it does not list, makes it refuse and remove
nothing. (The export itself, on Spark: tests/spark/test_export.py.)"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, Iterable

import pytest
from typer.testing import CliRunner

import forensics.cli.export_cmd  # noqa: F401  (registers the command)
from forensics.cli.app import app
from forensics.cli.export_cmd import _clear, previous_export

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
runner = CliRunner()
PART = "part-00000-0f6a3c1e-8d2b-4c55-9b7e-1a2b3c4d5e6f-c000.snappy.parquet"


def _previous(out: Path, tables: Iterable[str] = ("batches", "findings"), listed: Iterable[str] = None) -> None:
    """A previous export as Spark and the command leave it."""
    out.mkdir(parents=True, exist_ok=True)
    for name in tables:
        (out / name).mkdir()
        for f in (PART, f".{PART}.crc", "_SUCCESS", "._SUCCESS.crc"):
            (out / name / f).write_bytes(b"PAR1")
    doc = {"format": "kafka-forensics-export", "formatVersion": 1,
           "tables": {n: {"path": n, "rows": 1} for n in (tables if listed is None else listed)}}
    (out / "_export.json").write_text(json.dumps(doc))


def _tree(root: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else b"<dir>") for p in sorted(root.rglob("*"))}


def _overwrite(out: Path):
    return runner.invoke(app, ["export", str(EXAMPLE), "--out", str(out), "--overwrite", "--no-progress"])


@pytest.mark.parametrize("make, named", [
    (lambda out: [(out / "findings").mkdir(parents=True), (out / "batches").mkdir()], "no _export.json"),
    (lambda out: [_previous(out), (out / "_export.json").write_text("{}")], "no _export.json"),
    (lambda out: [_previous(out), (out / "_export.json").write_text('{"format": "other", "tables": {}}')],
     "no _export.json"),
    (lambda out: _previous(out, listed=("batches",)), "findings"),  # a table directory it does not list
    (lambda out: [_previous(out), (out / "batches" / "notes.txt").write_text("mine")], "batches/notes.txt"),
    (lambda out: [_previous(out), (out / "findings" / "sub").mkdir()], "findings/sub"),
    (lambda out: [_previous(out, tables=("batches",), listed=("batches", "findings")),
                  (out / "findings").symlink_to(out.parent / "elsewhere")], "findings"),
])
def test_overwrite_refuses_what_it_cannot_identify_and_removes_nothing(tmp_path: Path, make, named) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "precious").write_text("keep")
    out = tmp_path / "out"
    make(out)
    before = _tree(tmp_path)
    done = _overwrite(out)
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(f"kafka-forensics: --out {out}: ") and named in done.stderr
    assert done.stderr.count("\n") == 1
    assert _tree(tmp_path) == before


def test_overwrite_removes_exactly_the_previous_export(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _previous(out)
    assert [os.path.relpath(p, out) for p in previous_export(str(out))] == [
        *(f"batches/{f}" for f in sorted((PART, f".{PART}.crc", "_SUCCESS", "._SUCCESS.crc"))), "batches",
        *(f"findings/{f}" for f in sorted((PART, f".{PART}.crc", "_SUCCESS", "._SUCCESS.crc"))), "findings",
        "_export.json"]
    _clear(str(out))
    assert out.is_dir() and os.listdir(out) == []


def test_a_listed_table_that_is_gone_is_no_obstacle(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _previous(out, tables=("batches",), listed=("batches", "partitions"))
    _clear(str(out))
    assert os.listdir(out) == []
