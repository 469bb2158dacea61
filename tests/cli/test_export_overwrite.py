"""``export --overwrite`` removes only a previous export it can identify (issue 15, item 12): the
tables its ``_export.json`` lists, holding nothing but what that export's engine wrote there (the
files it lists; on Spark, or before ``formatVersion`` 2, Spark's Parquet output), then that file.
Any directory merely named like a table, or anything it does not list, makes it refuse and remove
nothing. (The export itself: tests/cli/test_export_local.py in-process, tests/spark/test_export.py on
Spark.)"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.export_cmd  # noqa: F401  (registers the command)
from forensics.cli.app import app
from forensics.runs.export import _clear, previous_export

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


def _previous_local(out: Path, tables: Iterable[str] = ("batches", "findings"), files=("part-0.parquet",)) -> None:
    """A previous in-process export as the command leaves it (formatVersion 2: engine and files named)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in tables:
        (out / name).mkdir()
        (out / name / "part-0.parquet").write_bytes(b"PAR1")
    doc = {"format": "kafka-forensics-export", "formatVersion": 2, "engine": "local", "schemaVersion": 1,
           "tables": {n: {"path": n, "rows": 1, "files": list(files)} for n in tables}}
    (out / "_export.json").write_text(json.dumps(doc))


def _tree(root: Path) -> dict[str, bytes]:
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
    # an in-process export's table holds the files its _export.json lists, and nothing of Spark's
    (lambda out: [_previous_local(out), (out / "batches" / "_SUCCESS").write_bytes(b"")], "batches/_SUCCESS"),
    (lambda out: [_previous_local(out), (out / "findings" / PART).write_bytes(b"PAR1")], f"findings/{PART}"),
    (lambda out: [_previous_local(out), (out / "batches" / "part-1.parquet").write_bytes(b"PAR1")],
     "batches/part-1.parquet"),
    (lambda out: [_previous_local(out, files=()), ], "batches/part-0.parquet"),  # it lists no file
    (lambda out: [_previous_local(out), (out / "batches" / "part-0.parquet").unlink(),
                  (out / "batches" / "part-0.parquet").symlink_to(out.parent / "elsewhere" / "precious")],
     "batches/part-0.parquet"),
    (lambda out: [_previous_local(out), (out / "_export.json").write_text(
        '{"format": "kafka-forensics-export", "engine": "local", "tables": {"batches": {"path": "batches", '
        '"files": "part-0.parquet"}}}')], "no _export.json"),  # files not a list of names
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


def test_overwrite_removes_exactly_a_previous_in_process_export(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _previous_local(out)
    assert [os.path.relpath(p, out) for p in previous_export(str(out))] == [
        "batches/part-0.parquet", "batches", "findings/part-0.parquet", "findings", "_export.json"]
    _clear(str(out))
    assert out.is_dir() and os.listdir(out) == []


@pytest.mark.parametrize("engine", ["local", "spark-v1"])
def test_an_export_replaces_a_previous_one_of_either_layout(tmp_path: Path, engine: str) -> None:
    """The command itself (in-process) over a previous in-process export, and over Spark's layout."""
    out = tmp_path / "out"
    if engine == "local":
        first = runner.invoke(app, ["export", str(EXAMPLE), "--out", str(out), "--engine", "local", "--no-progress"])
        assert first.exit_code == 0, first.stderr
    else:
        _previous(out)
    done = runner.invoke(app, ["export", str(EXAMPLE), "--out", str(out), "--overwrite", "--engine", "local",
                               "--no-progress"])
    assert done.exit_code == 0, done.stderr
    doc = json.loads((out / "_export.json").read_text())
    assert doc["engine"] == "local" and doc["tables"]["batches"] == {"path": "batches", "rows": 72,
                                                                    "files": ["part-0.parquet"]}
    assert sorted(os.listdir(out / "batches")) == ["part-0.parquet"]
    assert sorted(os.listdir(out)) == sorted(["_export.json", *doc["tables"]])


# -- the output directory, refused before anything is read -------------------------------------------------


def _export(args: list[str]):
    result = runner.invoke(app, ["export"] + args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def _sizes(root: Path) -> dict[str, tuple]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def test_refuses_an_output_inside_or_around_the_evidence(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    shutil.copytree(EXAMPLE, disk)
    before = _sizes(disk)
    for out in (disk / "broker-1" / "export", disk, tmp_path):
        done = _export([str(disk), "--out", str(out)])
        assert done.exit_code == 2, done.stderr
        assert "--out" in done.stderr and ("evidence" in done.stderr or "not empty" in done.stderr)
    done = _export([str(disk), "--out", str(tmp_path), "--overwrite"])
    assert done.exit_code == 2 and "holds the evidence" in done.stderr
    assert _sizes(disk) == before


def test_refuses_a_non_empty_output_without_overwrite_and_foreign_files_with_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    done = _export([str(EXAMPLE), "--out", str(out)])
    assert done.exit_code == 2 and "not empty" in done.stderr and "--overwrite" in done.stderr
    done = _export([str(EXAMPLE), "--out", str(out), "--overwrite"])
    assert done.exit_code == 2 and "notes.txt" in done.stderr
    assert os.listdir(out) == ["notes.txt"]
    done = _export([str(EXAMPLE), "--out", str(tmp_path / "missing" / "out")])
    assert done.exit_code == 3 and "does not exist" in done.stderr
    done = _export([str(EXAMPLE), "--out", str(tmp_path / "new"), "--manifest", str(tmp_path / "new" / "m.json")])
    assert done.exit_code == 2 and "--manifest" in done.stderr and not (tmp_path / "new").exists()
