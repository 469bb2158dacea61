"""``kafka-forensics export`` on a real local Spark session (the CLI as a subprocess for the example disk, in
this process on its shared session for the others): Spark's layout and
``_export.json``; the same schema and the same values as the in-process export of the same disks (the
example disk, scenario disks and a real Kafka 4.1.0 disk), both read back with pyarrow and compared row
for row (what the in-process tables must hold is tests/cli/test_export_local.py's); Spark reads the
in-process export as its own (docs/export.md's Spark snippet, run); joins an investigator would run in
Spark SQL; a standalone cluster's executors writing the same tables; no Java: in-process instead."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from forensics.pipeline.engine import spark_available
from forensics.pipeline.export_local import PART_FILE
from forensics.pipeline.export_rows import SCHEMA_VERSION, TABLES
from forensics.runs.export import _SPARK_FILE
from tests.export_tables import CLI, DISKS, EXAMPLE, REPO, Export, read_rows

pytestmark = pytest.mark.spark


def _spark_or_skip() -> None:
    ok, why = spark_available()
    if not ok:
        pytest.skip(why)


@pytest.fixture(scope="module")
def session():
    """The process's session, on the contract suite's master: a second SparkContext in one JVM
    recreates the first one's scratch directory (the JVM keeps its spark.local.dir), so this
    module does not switch masters; the session stops at exit, as the contract suite's does."""
    _spark_or_skip()
    from forensics.pipeline.spark_session import process_session

    return process_session().get("local[2]", ())


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return tmp_path_factory.mktemp("export"), {}


# The case exported by the CLI as a child process (its own JVM, TMPDIR its scratch directory: none of it may
# be left behind); the other cases' command lines run in this process, on the session the module's Spark
# tests share (one JVM for all of them instead of one each: ~25 s of CPU and wall saved per case)
CHILD = "example-disk"


@pytest.fixture(scope="module")
def exports(built) -> dict[str, Export]:
    """Spark's export of every case (the example disk's over a previous export, with --overwrite)."""
    _spark_or_skip()
    base, disks_of = built
    return {name: Export(name, base, ["--master", "local[2]"], disks_of, tag="spark",
                         overwrite_stale=name == "example-disk", here=name != CHILD) for name in DISKS}


@pytest.fixture(scope="module")
def in_process(built, exports) -> dict[str, Export]:
    """The in-process export of the same disks (the same paths)."""
    base, disks_of = built
    return {name: Export(name, base, ["--engine", "local"], disks_of, tag="local") for name in DISKS}


def _spark_rows(session, out: Path, name: str) -> list[dict]:
    return [r.asDict(recursive=True) for r in session.read.parquet(str(out / name)).collect()]


def _sql(session, e: Export, query: str) -> list[tuple]:
    for t in TABLES:
        if re.search(rf"\b{t.name}\b", query):
            session.read.parquet(str(e.out / t.name)).createOrReplaceTempView(t.name)
    return [tuple(r) for r in session.sql(query).collect()]


@pytest.mark.parametrize("name", DISKS)
def test_the_run_writes_sparks_layout_and_touches_nothing_else(name, exports) -> None:
    e = exports[name]
    assert e.run.returncode == 0, e.run.stderr
    assert e.unchanged, "the evidence changed"
    assert e.here or not list(e.scratch.iterdir()), "Spark's scratch directory was left behind"
    assert e.run.stderr.startswith("kafka-forensics: engine spark (local[2]): --master given\n"), e.run.stderr
    summary = json.loads((e.out / "_export.json").read_text())
    assert (summary["formatVersion"], summary["engine"], summary["schemaVersion"]) == (2, "spark", SCHEMA_VERSION)
    assert sorted(os.listdir(e.out)) == sorted(["_export.json"] + [t.name for t in TABLES])
    assert summary["manifest"]["sha256"] == hashlib.sha256(e.manifest.read_bytes()).hexdigest()
    lines = e.run.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [t.name for t in TABLES]
    for t, line in zip(TABLES, lines):
        held = sorted(os.listdir(e.out / t.name))
        assert "_SUCCESS" in held and all(_SPARK_FILE.match(f) for f in held), held
        parts = [f for f in held if f.startswith("part-") and f.endswith(".snappy.parquet")]
        assert summary["tables"][t.name]["files"] == parts and parts
        assert len(e.table(t.name)) == summary["tables"][t.name]["rows"] == int(line.split()[1])
    assert not (e.out / "batches" / "part-00000-stale.snappy.parquet").exists()


@pytest.mark.parametrize("name", DISKS)
def test_both_engines_write_the_same_schema_and_values(name, exports, in_process) -> None:
    """Read back with pyarrow, Spark's tables and the in-process ones have the same schema (names,
    order, types, nullability: a nullable long is int64 in both) and the same rows (order aside)."""
    spark, local = exports[name], in_process[name]
    assert local.run.returncode == 0, local.run.stderr
    for t in TABLES:
        a, b = pq.read_table(spark.out / t.name), pq.read_table(local.out / t.name)
        assert a.schema.equals(b.schema, check_metadata=False), (t.name, a.schema, b.schema)
        assert tuple(a.schema.names) == t.names
        assert sorted(map(repr, a.to_pylist())) == sorted(map(repr, b.to_pylist())), t.name
        assert a.num_rows == len(read_rows(local.out, t.name))
    ours, theirs = (json.loads((x.out / "_export.json").read_text()) for x in (spark, local))
    assert {n: v["rows"] for n, v in ours["tables"].items()} == {n: v["rows"] for n, v in theirs["tables"].items()}
    assert (ours["asOfMs"], ours["asOfSource"], ours["inputs"]) == (theirs["asOfMs"], theirs["asOfSource"],
                                                                    theirs["inputs"])
    assert spark.run.stdout.replace(str(spark.out), "OUT") == local.run.stdout.replace(str(local.out), "OUT")


def test_spark_reads_the_in_process_export_as_its_own(exports, in_process, session) -> None:
    """``spark.read.parquet`` on the in-process tables gives Spark's rows; docs/export.md's Spark SQL
    snippet runs on them as written and shows the example disk's open transaction."""
    for name in ("example-disk", "real"):
        for t in TABLES:
            assert sorted(map(repr, _spark_rows(session, in_process[name].out, t.name))) == \
                sorted(map(repr, _spark_rows(session, exports[name].out, t.name))), (name, t.name)
    doc = (REPO / "docs" / "export.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", doc.split("\n**Spark SQL.**", 1)[1], re.S).group(1)
    code = code.replace('"DIR/', f'"{in_process["example-disk"].out}/')
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        exec(compile(code, "docs/export.md (Spark SQL)", "exec"), {"spark": session})  # noqa: S102 - our docs
    rows = [line for line in shown.getvalue().splitlines() if line.startswith("|") and "orders" in line]
    assert len(rows) == 1 and "2002" in rows[0] and "2026-01-01 00:00:06.251" in rows[0], shown.getvalue()


def test_an_investigators_queries(exports, session) -> None:
    """Open transactions per partition, with their first batch and the partition's LSO lag; every
    marker joined to its control batch."""
    e = exports["hanging/unclean-election"]
    open_txns = _sql(session, e, """
        SELECT t.topic, t.partition, t.brokerId, t.producerId, t.firstOffset, b.baseOffset, b.isTransactional,
               p.highWatermark - p.lastStableOffset AS lsoLag
        FROM transactions t
        JOIN batches b ON b.path = t.startPath AND b.position = t.startPosition
        JOIN partitions p ON p.replicaPath = t.replicaPath
        WHERE t.isOpen ORDER BY t.topic, t.partition, t.brokerId""")
    leader = next(v for v in e.state.partitions if v.inputs.broker_id == 2)
    lag = leader.high_watermark - leader.last_stable_offset if leader.high_watermark_known else None
    assert open_txns == [("ue", 0, 2, 300, 1, 1, True, lag)]
    per_partition = _sql(session, e, "SELECT topic, partition, count(*) FROM transactions WHERE isOpen "
                                     "GROUP BY topic, partition")
    assert per_partition == [("ue", 0, 1)]
    for name in DISKS:
        x = exports[name]
        markers = _sql(session, x, """
            SELECT t.outcome, b.controlType, t.coordinatorEpoch, b.coordinatorEpoch, t.producerId, b.producerId,
                   t.markerOffset, b.baseOffset
            FROM transactions t LEFT JOIN batches b ON b.path = t.markerPath AND b.position = t.markerPosition
            WHERE NOT t.isOpen""")
        for outcome, control, epoch, batch_epoch, pid, batch_pid, offset, batch_offset in markers:
            assert (control, batch_epoch, batch_pid, batch_offset) == (outcome, epoch, pid, offset), name
    committed = _sql(session, exports["example-disk"], "SELECT count(*) FROM batches WHERE controlType = 'COMMIT'")
    assert committed[0][0] == sum(1 for v in exports["example-disk"].state.partitions
                                  for spans in v.history.spans.values() for s in spans if s.outcome == "COMMIT")
    legacy = _sql(session, exports["mixed"], "SELECT magic, compressionType, count(*) FROM batches WHERE magic < 2 "
                                             "GROUP BY magic, compressionType ORDER BY magic, compressionType")
    assert legacy == [(0, "gzip", 1), (0, "none", 3), (1, "none", 2), (1, "snappy", 1)]


def test_on_a_standalone_cluster_the_executors_write_the_same_tables(standalone_cluster, spark_env, exports,
                                                                     tmp_path: Path) -> None:
    """With a cluster master the executors (the worker's JVM and Python) make and write the files,
    and the tables are the ones ``local[2]`` wrote."""
    out = tmp_path / "out"
    done = subprocess.run(CLI + ["export", str(EXAMPLE), "--out", str(out), "--master", standalone_cluster,
                                 "--no-progress"], capture_output=True, text=True, env=spark_env(), cwd=REPO,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    local = exports["example-disk"]
    for t in TABLES:
        assert sorted(map(repr, read_rows(out, t.name))) == sorted(map(repr, local.table(t.name))), t.name
    assert {n: v["rows"] for n, v in json.loads((out / "_export.json").read_text())["tables"].items()} == {
        n: v["rows"] for n, v in json.loads((local.out / "_export.json").read_text())["tables"].items()}


def test_without_java_export_writes_in_process(tmp_path: Path) -> None:
    """No Java: ``auto`` writes in-process as it would on a disk this small; Spark asked for by name
    (--master) is refused in one line with the environment exit code, nothing written."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "KAFKA_FORENSICS_ENGINE")}
    env["PATH"] = str(tmp_path / "no-java")
    out = tmp_path / "out"
    done = subprocess.run(CLI + ["export", str(EXAMPLE), "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("kafka-forensics: engine local (in-process): "), done.stderr
    assert json.loads((out / "_export.json").read_text())["engine"] == "local"
    assert os.listdir(out / "batches") == [PART_FILE]
    refused = subprocess.run(CLI + ["export", str(EXAMPLE), "--out", str(tmp_path / "spark"), "--no-progress",
                                    "--master", "local[2]"],
                             capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert refused.returncode == 6 and refused.stdout == "" and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("kafka-forensics: --master local[2] needs Spark, which cannot run here: "
                                     "no Java runtime found"), refused.stderr
    assert not (tmp_path / "spark").exists()
