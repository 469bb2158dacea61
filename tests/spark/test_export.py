"""``kafka-forensics export``: Parquet tables written through a real local Spark session (the CLI as a
subprocess), read back with Spark SQL and checked against what the local engine makes of the same
disks: every batch header against ``scan``'s per-segment counts, every transaction against the
spans of ``load_state``, every coordinator record against ``describe``'s history, the findings
against ``scan`` and the state rebuild; joins an investigator would run; the output directory
rules (never inside the evidence, never over foreign files); the schema against docs/export.md."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, List

import pytest
from typer.testing import CliRunner

from fixtures import hanging_scenarios, replay, scenarios
from forensics.cli import export_cmd  # noqa: F401  (registers the command)
from forensics.cli.app import app
from forensics.findings import dedupe
from forensics.layout.discover import discover
from forensics.layout.clusters import select_cluster
from forensics.pipeline.engine import spark_available
from forensics.pipeline.export_rows import TABLES
from forensics.runs.rebuild import load_state, scan
from forensics.report.state import (
    describe_rows,
    partition_state_rows,
    producer_rows,
    without_whole_file_regions,
)

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
CLI = [sys.executable, "-m", "forensics"]
# "mixed": two disks in one run (a torn marker; legacy formats before v2), both claiming broker 1 with one
# directory.id; the second holds only its data partitions (two disks holding the same partitions would be
# copies of one broker, of which only the newer is analysed)
DISKS = ["example-disk", "hanging/unclean-election", "mixed"]
MIXED = ("hanging/torn-tail-marker", "scenario/legacy-then-v2", "replay/i-java-txn-1")


def _spark_or_skip() -> None:
    ok, why = spark_available()
    if not ok:
        pytest.skip(why)


def _tree(root: Path) -> Dict[str, tuple]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def _disks(name: str, base: Path) -> List[Path]:
    if name == "example-disk":
        return [EXAMPLE]
    out = []
    for one in MIXED if name == "mixed" else (name,):
        kind, scenario = one.split("/")
        if kind == "replay":  # a real producer's history replayed: aggregated findings
            out.append(replay.write_partition(base / kind, 8))
            continue
        module = hanging_scenarios if kind == "hanging" else scenarios
        out.append(module.build(scenario, base / kind / scenario))
    if name == "mixed":
        for coordinator in Path(out[1]).glob("__transaction_state-*"):
            shutil.rmtree(coordinator)
    return out


class Export:
    """One export run: the disks, its output, the run, and the local engine's reports of the disks."""

    def __init__(self, name: str, base: Path) -> None:
        self.name = name
        self.disks = _disks(name, base)
        self.paths = [str(d) for d in self.disks]
        self.rows: Dict[str, List[dict]] = {}
        self.out = base / "out" / name.replace("/", "-")
        self.manifest = base / f"{name.replace('/', '-')}.manifest.json"
        scratch = base / "scratch" / name.replace("/", "-")
        scratch.mkdir(parents=True)
        self.scratch = scratch
        if name == "example-disk":  # a previous export, replaced with --overwrite
            (self.out / "batches").mkdir(parents=True)
            (self.out / "batches" / "part-00000-stale.snappy.parquet").write_bytes(b"old")
            (self.out / "_export.json").write_text(json.dumps({"format": "kafka-forensics-export",
                                                               "tables": {"batches": {"path": "batches"}}}))
        before = [_tree(d) for d in self.disks]
        env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_ENGINE"}
        env["TMPDIR"] = str(scratch)
        args = ["export", *self.paths, "--out", str(self.out), "--master", "local[2]", "--no-progress",
                "--manifest", str(self.manifest)] + (["--overwrite"] if name == "example-disk" else [])
        self.run = subprocess.run(CLI + args, capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
        self.unchanged = [_tree(d) for d in self.disks] == before
        # the inventory the export reads: one cluster, one copy of each broker (with their findings)
        inventory = select_cluster(discover(self.paths), None).inventory
        self.scan = scan(self.paths, inventory=inventory)
        self.state = load_state(self.paths, inventory=inventory)


@pytest.fixture(scope="module")
def session():
    """The process's session, on the contract suite's master: a second SparkContext in one JVM
    recreates the first one's scratch directory (the JVM keeps its spark.local.dir), so this
    module does not switch masters; the session stops at exit, as the contract suite's does."""
    _spark_or_skip()
    from forensics.pipeline.spark_session import SESSION

    return SESSION.get("local[2]", ())


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> Dict[str, Export]:
    _spark_or_skip()
    base = tmp_path_factory.mktemp("export")
    (base / "out").mkdir()
    return {name: Export(name, base) for name in DISKS}


def _table(session, e: Export, name: str) -> List[dict]:
    if name not in e.rows:
        e.rows[name] = [r.asDict(recursive=True) for r in session.read.parquet(str(e.out / name)).collect()]
    return e.rows[name]


def _sql(session, e: Export, query: str) -> List[tuple]:
    for t in TABLES:
        if re.search(rf"\b{t.name}\b", query):
            session.read.parquet(str(e.out / t.name)).createOrReplaceTempView(t.name)
    return [tuple(r) for r in session.sql(query).collect()]


@pytest.mark.parametrize("name", DISKS)
def test_the_run_writes_every_table_and_touches_nothing_else(name, exports, session) -> None:
    e = exports[name]
    assert e.run.returncode == 0, e.run.stderr
    assert e.unchanged, "the evidence changed"
    assert not list(e.scratch.iterdir()), "Spark's scratch directory was left behind"
    summary = json.loads((e.out / "_export.json").read_text())
    assert sorted(os.listdir(e.out)) == sorted(["_export.json"] + [t.name for t in TABLES])
    assert summary["manifest"]["sha256"] == hashlib.sha256(e.manifest.read_bytes()).hexdigest()
    lines = e.run.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [t.name for t in TABLES]
    for t, line in zip(TABLES, lines):
        assert tuple(session.read.parquet(str(e.out / t.name)).columns) == t.names
        rows = _table(session, e, t.name)
        assert len(rows) == summary["tables"][t.name]["rows"] == int(line.split()[1])
        for c in t.columns:  # "never null" holds (Parquet readers relax nullability)
            assert c.nullable or all(r[c.name] is not None for r in rows), (t.name, c.name)
    assert not (e.out / "batches" / "part-00000-stale.snappy.parquet").exists()


@pytest.mark.parametrize("name", DISKS)
def test_batches_are_every_header_scan_counts(name, exports, session) -> None:
    e = exports[name]
    rows = _table(session, e, "batches")
    by_path: Dict[str, List[dict]] = {}
    for r in rows:
        by_path.setdefault(r["path"], []).append(r)
    segments = [s for d in e.scan.log_dirs for p in d.partitions for s in p.segments] + list(e.scan.loose_segments)
    assert sorted(by_path) == sorted(s.path for s in segments if s.batches)
    for s in segments:
        got = by_path.get(s.path, [])
        assert len(got) == s.batches, s.path
        assert sum(r["recordsCount"] for r in got) == s.records
        assert sum(not r["crcValid"] for r in got) == s.invalid_batches
        assert sum(r["isTransactional"] for r in got) == s.transactional_batches
        assert sum(r["isControl"] for r in got) == s.control_batches
        assert {r["magic"] for r in got} == set(s.magics)
        assert {r["compressionType"] for r in got} == set(s.codecs)
        if got:
            assert min(r["baseOffset"] for r in got) == s.first_offset
            assert max(r["lastOffset"] for r in got) == s.last_offset
        ordered = sorted(got, key=lambda r: r["position"])
        assert all(a["position"] + a["size"] <= b["position"] for a, b in zip(ordered, ordered[1:]))
    where = {p.path: (d.broker_id, p.topic, p.partition, p.status) for d in e.scan.log_dirs for p in d.partitions}
    for r in rows:
        if r["replicaPath"] is not None:
            assert (r["brokerId"], r["topic"], r["partition"], r["partitionStatus"]) == where[r["replicaPath"]]
            assert r["path"].startswith(r["replicaPath"] + os.sep)


_SPAN_COLUMNS = {"first_offset": "firstOffset", "last_data_offset": "lastDataOffset", "batches": "batches",
                 "records": "records", "bytes": "bytes", "first_timestamp": "firstTimestamp",
                 "last_timestamp": "lastTimestamp", "marker_offset": "markerOffset", "outcome": "outcome",
                 "marker_epoch": "markerEpoch", "coordinator_epoch": "coordinatorEpoch",
                 "marker_timestamp": "markerTimestamp", "from_snapshot": "fromSnapshot", "is_open": "isOpen"}


@pytest.mark.parametrize("name", DISKS)
def test_transactions_and_producers_are_the_local_engines(name, exports, session) -> None:
    e = exports[name]
    expected = []
    for v in e.state.partitions:
        for pid in v.history.spans.keys() | v.broker.spans.keys():
            fold = "history" if v.history.spans.get(pid) else "broker"
            for s in (v.history.spans if fold == "history" else v.broker.spans)[pid]:
                row = {col: getattr(s, attr) for attr, col in _SPAN_COLUMNS.items()}
                row.update(replicaPath=v.inputs.path, brokerId=v.inputs.broker_id, producerId=pid, fold=fold,
                           dataEpochs=list(s.data_epochs), startPath=s.start.path if s.start else None,
                           startPosition=s.start.position if s.start else None,
                           markerPath=s.marker_at.path if s.marker_at else None)
                expected.append(row)
    got = _table(session, e, "transactions")
    columns = list(expected[0]) if expected else []

    def key(r: dict) -> tuple:
        return (r["replicaPath"], r["producerId"], r["firstOffset"])

    assert sorted(({k: r[k] for k in columns} for r in got), key=key) == sorted(expected, key=key)
    # what describe-producers shows per producer, for every replica
    for v in e.state.partitions:
        for prow in producer_rows(v):
            where = (v.inputs.path, prow["producerId"])
            mine = sorted((r for r in got if (r["replicaPath"], r["producerId"]) == where),
                          key=lambda r: r["firstOffset"])
            assert [(r["firstOffset"], r["markerOffset"], r["outcome"] or "OPEN", r["records"]) for r in mine] == \
                [(t["firstOffset"], t["markerOffset"], t["outcome"], t["records"]) for t in prow["transactions"]]
    states = {(r["replicaPath"], r["producerId"]): r for r in _table(session, e, "producer_states")}
    assert len(states) == sum(len(v.entries) for v in e.state.partitions)
    for v in e.state.partitions:
        for pid, entry in v.entries.items():
            r = states[(v.inputs.path, pid)]
            assert (r["producerEpoch"], r["coordinatorEpoch"], r["lastSequence"], r["lastOffset"], r["offsetDelta"],
                    r["lastTimestamp"], r["currentTxnFirstOffset"]) == (
                entry.producer_epoch, entry.coordinator_epoch, entry.last_sequence, entry.last_offset,
                entry.offset_delta, entry.last_timestamp, entry.current_txn_first_offset)
    same = ("topic", "partition", "brokerId", "logStartOffset", "logEndOffset", "highWatermark", "firstUnstableOffset",
            "lastStableOffset", "openTransactions", "producers")
    parts = sorted(tuple(r[k] for k in same) + (r["snapshotPath"],) for r in _table(session, e, "partitions"))
    local = sorted(tuple(r[k] for k in same) + (r["snapshot"],) for r in partition_state_rows(e.state))
    assert parts == local


_HISTORY = ("offset", "timestamp", "coordinatorEpoch", "transactionState", "path", "position", "producerId",
            "producerEpoch", "transactionTimeoutMs", "topicPartitions", "lastUpdateTimeMs", "startTimeMs",
            "valueVersion")


@pytest.mark.parametrize("name", DISKS)
def test_coordinator_records_are_describes_history(name, exports, session) -> None:
    e = exports[name]
    rows = _table(session, e, "coordinator_records")
    assert len(rows) == sum(len(h) for cp in e.state.coordinator.partitions.values() for h in cp.state.history.values())
    assert e.state.coordinator.ids or not rows
    for tid, view in e.state.coordinator.ids.items():
        history = describe_rows(e.state, tid)[0]["history"]
        where = (tid, view.partition)
        mine = sorted((r for r in rows if (r["transactionalId"], r["transactionStatePartition"]) == where),
                      key=lambda r: r["offset"])
        assert [{k: r[k] for k in _HISTORY if k in h} for r, h in zip(mine, history)] == history
        assert len(mine) == len(history)
        assert all(r["isTombstone"] == (r["producerId"] is None) for r in mine)


@pytest.mark.parametrize("name", DISKS)
def test_findings_are_scans_and_the_state_rebuilds(name, exports, session) -> None:
    e = exports[name]
    local = without_whole_file_regions(dedupe(e.scan.all_findings() + e.state.findings()))
    expected = Counter((f.kind.value, f.level.value, f.message, f.path, f.position, f.end_position, f.first_offset,
                        f.last_offset, f.count, f.last_position) for f in local)
    got = Counter((r["kind"], r["severity"], r["message"], r["path"], r["position"], r["endPosition"], r["firstOffset"],
                   r["lastOffset"], r["count"], r["lastPosition"]) for r in _table(session, e, "findings"))
    assert got == expected
    if name == "mixed":
        assert sum(k[8] for k in got if k[0] == "epoch_regression") == 7 and max(k[8] for k in got) == 4
        torn = [k for k in got if k[0] == "truncated_tail"]
        assert torn and torn[0][3].endswith(os.path.join("torn-0", "00000000000000000000.log"))
        assert torn[0][2] in e.run.stderr  # damage to the evidence is also said on stderr
        assert any(k[0] == "duplicate_broker" for k in got)
    if name == "hanging/unclean-election":
        assert any(k[0] == "replica_divergence" for k in got)


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


def test_on_a_standalone_cluster_the_executors_write_the_same_tables(standalone_cluster, spark_env, exports, session,
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
        rows = [r.asDict(recursive=True) for r in session.read.parquet(str(out / t.name)).collect()]
        assert sorted(map(repr, rows)) == sorted(map(repr, _table(session, local, t.name))), t.name
    assert json.loads((out / "_export.json").read_text())["tables"] == json.loads(
        (local.out / "_export.json").read_text())["tables"]


# -- the output directory ---------------------------------------------------------------------------------

runner = CliRunner()


def _export(args: List[str]):
    result = runner.invoke(app, ["export"] + args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def test_refuses_an_output_inside_or_around_the_evidence(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    shutil.copytree(EXAMPLE, disk)
    before = _tree(disk)
    for out in (disk / "broker-1" / "export", disk, tmp_path):
        done = _export([str(disk), "--out", str(out)])
        assert done.exit_code == 2, done.stderr
        assert "--out" in done.stderr and ("evidence" in done.stderr or "not empty" in done.stderr)
    done = _export([str(disk), "--out", str(tmp_path), "--overwrite"])
    assert done.exit_code == 2 and "holds the evidence" in done.stderr
    assert _tree(disk) == before


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


def test_without_java_export_says_it_needs_spark(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "KAFKA_FORENSICS_ENGINE")}
    env["PATH"] = str(tmp_path / "no-java")
    done = subprocess.run(CLI + ["export", str(EXAMPLE), "--out", str(tmp_path / "out")], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=120)
    assert done.returncode == 6
    assert done.stderr.count("\n") == 1 and "through Spark" in done.stderr and "Java" in done.stderr
    assert not (tmp_path / "out").exists() and not done.stdout


# -- the documentation --------------------------------------------------------------------------------------


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
