"""``kafka-forensics export`` in this process (pyarrow; issue 23, item 3): the CLI as a subprocess on the
example disk, scenario disks and a real Kafka 4.1.0 disk; its layout (one ``part-0.parquet`` per table,
``_export.json`` naming the engine, files, rows and schema version); the schema derived from the one
declaration of the columns (nullable ``long`` stays int64); every value against what the local engine
makes of the same disks (tests/export_tables.py); rows written a row group at a time; ``--engine auto``
choosing it below the Spark threshold; one line where pyarrow is missing. Spark's export is held to
this one row for row in tests/spark/test_export.py."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import forensics.cli.export_cmd  # noqa: F401  (registers the command)
from forensics.cli.app import app
from forensics.pipeline import engine, export_local
from forensics.pipeline.export_local import PART_FILE, arrow_schema
from forensics.pipeline.export_rows import SCHEMA_VERSION, TABLES
from tests.export_tables import (
    DISKS,
    EXAMPLE,
    REPO,
    Export,
    check_batches,
    check_coordinator_records,
    check_findings,
    check_transactions_and_producers,
    read_rows,
)

runner = CliRunner()


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict[str, Export]:
    base = tmp_path_factory.mktemp("export-local")
    built: dict[str, list[Path]] = {}
    return {name: Export(name, base, ["--engine", "local"], built, overwrite_stale=name == "example-disk")
            for name in DISKS}


@pytest.mark.parametrize("name", DISKS)
def test_the_run_writes_one_file_per_table_and_touches_nothing_else(name, exports) -> None:
    e = exports[name]
    assert e.run.returncode == 0, e.run.stderr
    assert e.unchanged, "the evidence changed"
    assert not list(e.scratch.iterdir()), "scratch left behind"
    assert e.run.stderr.startswith("kafka-forensics: engine local (in-process): --engine local\n")
    summary = json.loads((e.out / "_export.json").read_text())
    assert sorted(os.listdir(e.out)) == sorted(["_export.json"] + [t.name for t in TABLES])
    assert (summary["format"], summary["formatVersion"], summary["engine"], summary["schemaVersion"]) == (
        "kafka-forensics-export", 2, "local", SCHEMA_VERSION)
    assert summary["manifest"]["sha256"] == hashlib.sha256(e.manifest.read_bytes()).hexdigest()
    lines = e.run.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [t.name for t in TABLES]
    for t, line in zip(TABLES, lines):
        assert os.listdir(e.out / t.name) == [PART_FILE]
        assert summary["tables"][t.name] == {"path": t.name, "rows": int(line.split()[1]), "files": [PART_FILE]}
        assert line.split()[-1] == str(e.out / t.name)
        rows = e.table(t.name)
        assert len(rows) == summary["tables"][t.name]["rows"] == pq.ParquetFile(e.out / t.name / PART_FILE).metadata.num_rows
        for c in t.columns:  # "never null" holds
            assert c.nullable or all(r[c.name] is not None for r in rows), (t.name, c.name)
    assert exports[name].table("batches"), "no batch at all: the disk is not what the test means"


@pytest.mark.parametrize("name", DISKS)
def test_the_schema_is_the_declared_one(name, exports) -> None:
    """Each file's schema is the one derived from pipeline/export_rows (names, order, types, nullability);
    every ``long`` is int64, nullable ones too, and reads back as int64 with nulls, never a double."""
    import pyarrow as pa

    e = exports[name]
    for t in TABLES:
        schema = pq.read_schema(e.out / t.name / PART_FILE)
        assert schema.equals(arrow_schema(t), check_metadata=False), t.name
        assert tuple(schema.names) == t.names
        for c in t.columns:
            if c.type == "long":
                assert schema.field(c.name).type == pa.int64(), (t.name, c.name)
    markers = pq.read_table(e.out / "transactions").column("markerTimestamp")
    assert markers.type == pa.int64()
    if name == "example-disk":  # one open transaction: a null among exact ms
        assert markers.null_count == 1 and all(isinstance(v, int) for v in markers.to_pylist() if v is not None)


@pytest.mark.parametrize("name", DISKS)
def test_batches_are_every_header_scan_counts(name, exports) -> None:
    check_batches(exports[name])


@pytest.mark.parametrize("name", DISKS)
def test_transactions_and_producers_are_the_local_engines(name, exports) -> None:
    check_transactions_and_producers(exports[name])


@pytest.mark.parametrize("name", DISKS)
def test_coordinator_records_are_describes_history(name, exports) -> None:
    check_coordinator_records(exports[name])


@pytest.mark.parametrize("name", DISKS)
def test_findings_are_scans_and_the_state_rebuilds(name, exports) -> None:
    check_findings(exports[name])


def test_an_investigators_query_with_pyarrow(exports) -> None:
    """The open transaction of the unclean election, joined to its first batch."""
    e = exports["hanging/unclean-election"]
    batches = {(b["path"], b["position"]): b for b in e.table("batches")}
    open_txns = [(t["topic"], t["partition"], t["brokerId"], t["producerId"], t["firstOffset"],
                  batches[(t["startPath"], t["startPosition"])]["baseOffset"]) for t in e.table("transactions")
                 if t["isOpen"]]
    assert open_txns == [("ue", 0, 2, 300, 1, 1)]


# -- row groups, memory -------------------------------------------------------------------------------


def test_rows_go_out_a_row_group_at_a_time(tmp_path: Path, monkeypatch, exports) -> None:
    """With 7 rows per group the example disk's 72 batches are 11 row groups holding the same rows, and
    no more than one group of rows is drawn from the segments before it is written."""
    import pyarrow.parquet as pq_module

    drawn: list[int] = []
    seen = [0]
    real_rows = export_local.batch_rows

    def counted(*args):
        for row in real_rows(*args):
            seen[0] += 1
            yield row

    written = pq_module.ParquetWriter.write_batch

    def write_batch(self, batch, *args, **kwargs):
        drawn.append(seen[0])
        return written(self, batch, *args, **kwargs)

    monkeypatch.setattr(export_local, "ROW_GROUP_ROWS", 7)
    monkeypatch.setattr(export_local, "batch_rows", counted)
    monkeypatch.setattr(pq_module.ParquetWriter, "write_batch", write_batch)
    out = tmp_path / "out"
    done = runner.invoke(app, ["export", str(EXAMPLE), "--out", str(out), "--engine", "local", "--no-progress"])
    assert done.exit_code == 0, done.stderr
    meta = pq.ParquetFile(out / "batches" / PART_FILE).metadata
    assert meta.num_rows == 72 and meta.num_row_groups == 11
    assert [meta.row_group(i).num_rows for i in range(11)] == [7] * 10 + [2]
    assert drawn[:11] == [7, 14, 21, 28, 35, 42, 49, 56, 63, 70, 72]  # each group written as soon as it is full
    assert sorted(map(repr, read_rows(out, "batches"))) == sorted(map(repr, exports["example-disk"].table("batches")))


# -- the engine -----------------------------------------------------------------------------------------


def test_auto_writes_in_process_below_the_spark_threshold(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("KAFKA_FORENSICS_ENGINE", raising=False)
    done = runner.invoke(app, ["export", str(EXAMPLE), "--out", str(tmp_path / "out"), "--no-progress"])
    assert done.exit_code == 0, done.stderr
    # on 2 to 4 cores Spark is not faster at any size; from 5 on, below export's crossover of those cores
    assert re.match(r"kafka-forensics: engine local \(in-process\): [\d.]+ KiB of logs(; Spark is not faster on one "
                    r"machine|, below the [\d.]+ GiB Spark threshold)\n", done.stderr), done.stderr
    assert json.loads((tmp_path / "out" / "_export.json").read_text())["engine"] == "local"
    assert os.listdir(tmp_path / "out" / "batches") == [PART_FILE]


def test_above_the_threshold_without_spark_auto_writes_in_process_and_says_why(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("KAFKA_FORENSICS_ENGINE", raising=False)
    # export's own crossover (its batches pass is one process in-process): the reading commands' says never
    monkeypatch.setattr(engine, "spark_from_bytes", lambda workload, cores: 1 if workload is engine.Workload.export
                        else None)
    monkeypatch.setattr(engine, "available_cores", lambda: 2)
    monkeypatch.setattr(engine, "spark_available", lambda: (False, "no Java runtime found"))
    done = runner.invoke(app, ["export", str(EXAMPLE), "--out", str(tmp_path / "out"), "--no-progress"])
    assert done.exit_code == 0, done.stderr
    assert "engine local (in-process)" in done.stderr and "Spark cannot run here: no Java runtime found" in done.stderr
    assert json.loads((tmp_path / "out" / "_export.json").read_text())["engine"] == "local"


def test_spark_asked_for_where_it_cannot_run_is_refused_in_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("KAFKA_FORENSICS_ENGINE", raising=False)
    monkeypatch.setattr(engine, "spark_available", lambda: (False, "no Java runtime found"))
    out = tmp_path / "out"
    done = runner.invoke(app, ["export", str(EXAMPLE), "--out", str(out), "--master", "local[2]", "--no-progress"])
    assert done.exit_code == 6, done.stderr
    assert done.stderr == ("kafka-forensics: --master local[2] needs Spark, which cannot run here: no Java runtime "
                           "found; the same command without --master and --conf runs in this process\n")
    assert not out.exists()


def test_without_pyarrow_one_line_and_nothing_written(tmp_path: Path, monkeypatch) -> None:
    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    out = tmp_path / "out"
    done = runner.invoke(app, ["export", str(EXAMPLE), "--out", str(out), "--engine", "local", "--no-progress"])
    assert done.exit_code == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "pyarrow" in done.stderr and "pip install pyarrow" in done.stderr
    assert "--engine spark" in done.stderr and not done.stdout and not out.exists()


def test_pyarrow_is_imported_only_when_an_export_runs(tmp_path: Path) -> None:
    """Loading the command line, the export command and its run imports no pyarrow; an in-process
    export does."""
    import subprocess

    code = ("import sys, forensics.cli.app, forensics.cli.export_cmd, forensics.runs.export, "
            "forensics.pipeline.export_rows; print('pyarrow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.stdout == "False\n", done.stderr


# -- the schema's version --------------------------------------------------------------------------------

# The declarations of SCHEMA_VERSION 1 (pipeline/export_rows.py). A change of a column's name, type or
# nullability, or of their order, changes this digest: raise SCHEMA_VERSION, then write the new digest here.
SCHEMA_DIGESTS = {1: "741f86f689b0c6b933acff3b11bf2743b0967973fce7d17293ed2d90ac24782a"}


def _digest() -> str:
    text = "\n".join(f"{t.name}:" + ",".join(f"{c.name} {c.type}{'' if c.nullable else '!'}" for c in t.columns)
                     for t in TABLES)
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_change_of_columns_raises_the_schema_version() -> None:
    assert SCHEMA_DIGESTS[SCHEMA_VERSION] == _digest(), (
        "the columns changed: raise SCHEMA_VERSION in pipeline/export_rows.py (docs/export.md says what it means) "
        f"and record {_digest()} for it here")


def test_docs_describe_every_column() -> None:
    """docs/export.md has one section per table with a row per column: name, type, null, meaning."""
    text = (REPO / "docs" / "export.md").read_text()
    for t in TABLES:
        m = re.search(rf"^### `{t.name}`\n(.*?)(?=^##|\Z)", text, re.S | re.M)
        assert m, f"no section for {t.name}"
        documented = []
        for line in m.group(1).splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| `") and len(cells) == 4:
                documented.append((cells[0].strip("`"), cells[1], cells[2] == "yes", bool(cells[3])))
        assert [(n, ty, nl) for n, ty, nl, _ in documented] == [(c.name, c.type, c.nullable) for c in t.columns]
        assert all(meaning for *_, meaning in documented)
    assert f"`schemaVersion` ({SCHEMA_VERSION}:" in text
