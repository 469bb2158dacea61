"""What an export must hold, checked against what the local engine makes of the same disks (shared by
tests/cli/test_export_local.py, on the in-process export, and tests/spark/test_export.py, which holds
Spark's export to the in-process one row for row): every batch header against ``scan``'s per-segment
counts, every transaction against the spans of ``load_state``, every coordinator record against
``describe``'s history, the findings against ``scan`` and the state rebuild. Tables are read back
with pyarrow, which reads either engine's layout from the table directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from collections.abc import Sequence

import pyarrow.parquet as pq

from fixtures import hanging_scenarios, replay, scenarios
from forensics.findings import dedupe
from forensics.layout.discovery import discover
from forensics.layout.clusters import select_cluster
from forensics.report.state import (
    describe_rows,
    partition_state_rows,
    producer_rows,
    without_whole_file_regions,
)
from forensics.runs.rebuild import load_state, scan

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "fixtures" / "example-disk"
REAL = REPO / "fixtures" / "real" / "kraft-tv2" / "disk"  # a real Kafka 4.1.0 broker's log dir (RECIPE.md)
CLI = [sys.executable, "-m", "forensics"]
# "mixed": two disks in one run (a torn marker; legacy formats before v2), both claiming broker 1 with one
# directory.id; the second holds only its data partitions (two disks holding the same partitions would be
# copies of one broker, of which only the newer is analysed)
DISKS = ["example-disk", "hanging/unclean-election", "mixed", "real"]
MIXED = ("hanging/torn-tail-marker", "scenario/legacy-then-v2", "replay/i-java-txn-1")


def tree(root: Path) -> dict[str, tuple]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def disks(name: str, base: Path) -> list[Path]:
    """The disks of one case, built under ``base`` (the fixtures as they are)."""
    if name == "example-disk":
        return [EXAMPLE]
    if name == "real":
        return [REAL]
    out = []
    for one in MIXED if name == "mixed" else (name,):
        kind, scenario = one.split("/")
        if kind == "replay":  # a real producer's history replayed: aggregated findings
            out.append(replay.write_partition(base / kind, 8))
            continue
        module = hanging_scenarios if kind == "hanging" else scenarios
        out.append(module.build(scenario, base / kind / scenario))
    if name == "mixed":
        for coordinator in [*Path(out[1]).glob("__transaction_state-*"), *Path(out[1]).glob("__cluster_metadata-*")]:
            shutil.rmtree(coordinator)  # the first disk holds the coordinators and the metadata log
    return out


def read_rows(out: Path, table: str) -> list[dict]:
    """A table's rows as pyarrow reads them from its directory (either engine's layout)."""
    return pq.read_table(out / table).to_pylist()


class Export:
    """One export run of the CLI as a subprocess (``engine_args``: how it is told its engine), and the
    local engine's reports of the same disks."""

    def __init__(self, name: str, base: Path, engine_args: Sequence[str], disks_of: dict[str, list[Path]],
                 tag: str = "export", overwrite_stale: bool = False, here: bool = False) -> None:
        """``disks_of``: the disks of each case, built under ``base`` by the first export of it (so that two
        exports of one case read the same paths); ``tag`` names this export's output and scratch; ``here``:
        the command line runs in this process (typer's ``CliRunner``; a Spark export then runs on this
        process's Spark session, started once for every such export, instead of a JVM per run), nothing
        written to ``scratch``."""
        self.here = here
        self.name = name
        slug = name.replace("/", "-")
        if name not in disks_of:
            disks_of[name] = disks(name, base / "disks")
        self.disks = disks_of[name]
        self.paths = [str(d) for d in self.disks]
        self.rows: dict[str, list[dict]] = {}
        self.out = base / tag / slug
        self.manifest = base / f"{tag}-{slug}.manifest.json"
        self.scratch = base / "scratch" / tag / slug
        self.scratch.mkdir(parents=True)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.overwrite_stale = overwrite_stale
        if overwrite_stale:  # a previous export (Spark's layout, formatVersion 1), replaced with --overwrite
            (self.out / "batches").mkdir(parents=True)
            (self.out / "batches" / "part-00000-stale.snappy.parquet").write_bytes(b"old")
            (self.out / "_export.json").write_text('{"format": "kafka-forensics-export", '
                                                   '"tables": {"batches": {"path": "batches"}}}')
        before = [tree(d) for d in self.disks]
        env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_ENGINE"}
        env["TMPDIR"] = str(self.scratch)
        args = ["export", *self.paths, "--out", str(self.out), *engine_args, "--no-progress",
                "--manifest", str(self.manifest)] + (["--overwrite"] if overwrite_stale else [])
        self.run = _in_this_process(args) if here else subprocess.run(CLI + args, capture_output=True, text=True,
                                                                       env=env, cwd=REPO, timeout=600)
        self.unchanged = [tree(d) for d in self.disks] == before
        # the inventory the export reads: one cluster, one copy of each broker (with their findings)
        inventory = select_cluster(discover(self.paths), None).inventory
        self.scan = scan(self.paths, inventory=inventory)
        self.state = load_state(self.paths, inventory=inventory)

    def table(self, name: str) -> list[dict]:
        if name not in self.rows:
            self.rows[name] = read_rows(self.out, name)
        return self.rows[name]


def _in_this_process(args: Sequence[str]) -> subprocess.CompletedProcess:
    """``kafka-forensics ARGS`` run by typer's ``CliRunner`` (KAFKA_FORENSICS_ENGINE unset, as for the
    subprocess), as a child's CompletedProcess; an exception that escapes is its traceback on stderr, exit 1."""
    import traceback

    from typer.testing import CliRunner

    from forensics.cli.app import app

    r = CliRunner(env={"KAFKA_FORENSICS_ENGINE": None}).invoke(app, list(args))
    err = r.stderr
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        err += "".join(traceback.format_exception(*r.exc_info))
    return subprocess.CompletedProcess(["kafka-forensics", *args], r.exit_code, r.stdout, err)


def check_batches(e: Export) -> None:
    rows = e.table("batches")
    by_path: dict[str, list[dict]] = {}
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


def check_transactions_and_producers(e: Export) -> None:
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
    got = e.table("transactions")
    columns = list(expected[0]) if expected else []

    def key(r: dict) -> tuple:
        return (r["replicaPath"], r["producerId"], r["firstOffset"])

    assert sorted(({k: r[k] for k in columns} for r in got), key=key) == sorted(expected, key=key)
    # what describe-producers shows per producer, for every replica
    for v in e.state.partitions:
        for prow in (r.as_json() for r in producer_rows(v)):
            where = (v.inputs.path, prow["producerId"])
            mine = sorted((r for r in got if (r["replicaPath"], r["producerId"]) == where),
                          key=lambda r: r["firstOffset"])
            assert [(r["firstOffset"], r["markerOffset"], r["outcome"] or "OPEN", r["records"]) for r in mine] == \
                [(t["firstOffset"], t["markerOffset"], t["outcome"], t["records"]) for t in prow["transactions"]]
    states = {(r["replicaPath"], r["producerId"]): r for r in e.table("producer_states")}
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
    parts = sorted(tuple(r[k] for k in same) + (r["snapshotPath"],) for r in e.table("partitions"))
    local = sorted(tuple(r[k] for k in same) + (r["snapshotPath"],)
                   for r in (x.as_json() for x in partition_state_rows(e.state)))
    assert parts == local


_HISTORY = ("offset", "timestamp", "coordinatorEpoch", "transactionState", "path", "position", "producerId",
            "producerEpoch", "transactionTimeoutMs", "topicPartitions", "lastUpdateTimeMs", "startTimeMs",
            "valueVersion")


def check_coordinator_records(e: Export) -> None:
    rows = e.table("coordinator_records")
    assert len(rows) == sum(len(h) for cp in e.state.coordinator.partitions.values() for h in cp.state.history.values())
    assert e.state.coordinator.ids or not rows
    for tid, view in e.state.coordinator.ids.items():
        history = describe_rows(e.state, tid)[0].as_json()["history"]
        where = (tid, view.partition)
        mine = sorted((r for r in rows if (r["transactionalId"], r["transactionStatePartition"]) == where),
                      key=lambda r: r["offset"])
        assert [{k: r[k] for k in _HISTORY if k in h} for r, h in zip(mine, history)] == history
        assert len(mine) == len(history)
        assert all(r["isTombstone"] == (r["producerId"] is None) for r in mine)


def check_findings(e: Export) -> None:
    local = without_whole_file_regions(dedupe(e.scan.all_findings() + e.state.findings()))
    expected = Counter((f.kind.value, f.level.value, f.message, f.path, f.position, f.end_position, f.first_offset,
                        f.last_offset, f.count, f.last_position) for f in local)
    got = Counter((r["kind"], r["severity"], r["message"], r["path"], r["position"], r["endPosition"], r["firstOffset"],
                   r["lastOffset"], r["count"], r["lastPosition"]) for r in e.table("findings"))
    assert got == expected
    if e.name == "mixed":
        assert sum(k[8] for k in got if k[0] == "epoch_regression") == 7 and max(k[8] for k in got) == 4
        torn = [k for k in got if k[0] == "truncated_tail"]
        assert torn and torn[0][3].endswith(os.path.join("torn-0", "00000000000000000000.log"))
        assert torn[0][2] in e.run.stderr  # damage to the evidence is also said on stderr
        assert any(k[0] == "duplicate_broker" for k in got)
    if e.name == "hanging/unclean-election":
        assert any(k[0] == "replica_divergence" for k in got)
