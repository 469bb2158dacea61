"""The driver's export rows (report/export.py), every column against what the state rebuild holds: the
``transactions`` table against the spans of each replica's folds, ``coordinator_records`` against each
coordinator partition's history (tombstones, tagged fields of transaction version 2). Rows are read by
the table's column names, so a value under the wrong column, or a column dropped, fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures import scenarios
from forensics.pipeline.export_rows import COORDINATOR_RECORDS, TRANSACTIONS
from forensics.report.export import coordinator_rows, transaction_rows
from forensics.runs.rebuild import load_state

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def states(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("export-rows")
    disks = {"example": REPO / "fixtures" / "example-disk", "real-tv2": REPO / "fixtures" / "real" / "kraft-tv2" / "disk"}
    for name in ("tv2", "expiry-tombstone", "anomalies"):
        disks[name] = scenarios.build(name, base / name)
    return {name: load_state([str(d)]) for name, d in disks.items()}


def _named(table, rows: list[tuple]) -> list[dict]:
    assert all(len(r) == len(table.columns) for r in rows)
    return [dict(zip(table.names, r)) for r in rows]


@pytest.mark.parametrize("name", ["example", "real-tv2", "tv2", "expiry-tombstone", "anomalies"])
def test_transactions_are_every_span_column_by_column(name, states) -> None:
    report = states[name]
    expected = []
    for v in report.partitions:
        for pid in sorted(v.history.spans.keys() | v.broker.spans.keys()):
            fold = "history" if v.history.spans.get(pid) else "broker"
            for s in (v.history.spans if fold == "history" else v.broker.spans)[pid]:
                expected.append({
                    "replicaPath": v.inputs.path, "logDir": v.inputs.log_dir or None, "brokerId": v.inputs.broker_id,
                    "topic": v.topic_partition.topic, "partition": v.topic_partition.partition, "producerId": pid,
                    "fold": fold, "firstOffset": s.first_offset, "lastDataOffset": s.last_data_offset,
                    "dataEpochs": list(s.data_epochs), "batches": s.batches, "records": s.records, "bytes": s.bytes,
                    "firstTimestamp": s.first_timestamp, "lastTimestamp": s.last_timestamp,
                    "startPath": s.start.path if s.start else None,
                    "startPosition": s.start.position if s.start else None, "isOpen": s.is_open,
                    "markerOffset": s.marker_offset, "outcome": s.outcome, "markerEpoch": s.marker_epoch,
                    "coordinatorEpoch": s.coordinator_epoch, "markerTimestamp": s.marker_timestamp,
                    "markerPath": s.marker_at.path if s.marker_at else None,
                    "markerPosition": s.marker_at.position if s.marker_at else None,
                    "fromSnapshot": s.from_snapshot})
    got = _named(TRANSACTIONS, transaction_rows(report))
    assert got == expected
    assert got, "no transaction: the disk is not what the test means"
    assert list(got[0]) == list(expected[0])  # every column, in the table's order


@pytest.mark.parametrize("name", ["example", "real-tv2", "tv2", "expiry-tombstone", "anomalies"])
def test_coordinator_records_are_every_record_column_by_column(name, states) -> None:
    report = states[name]
    expected = []
    for part, cp in sorted(report.coordinator.partitions.items()):
        for tid, h in sorted(((tid, h) for tid, hs in cp.state.history.items() for h in hs),
                             key=lambda e: e[1].offset):
            v = h.value
            expected.append({
                "transactionStatePartition": part, "replicaPath": cp.inputs.path, "brokerId": cp.broker_id,
                "path": h.at.path, "position": h.at.position, "offset": h.offset, "timestamp": h.timestamp,
                "coordinatorEpoch": h.leader_epoch, "transactionalId": tid, "isTombstone": v is None,
                "transactionState": h.state_name,
                "valueVersion": None if v is None else v.version,
                "producerId": None if v is None else v.producer_id,
                "producerEpoch": None if v is None else v.producer_epoch,
                "transactionTimeoutMs": None if v is None else v.transaction_timeout_ms,
                "topicPartitions": None if v is None else [
                    f"{t.topic}-{p}" for t in (v.partitions or ()) for p in t.partition_ids],
                "lastUpdateTimeMs": None if v is None else v.last_update_timestamp_ms,
                "startTimeMs": None if v is None else v.start_timestamp_ms,
                "previousProducerId": None if v is None else v.previous_producer_id,
                "nextProducerId": None if v is None else v.next_producer_id,
                "nextProducerEpoch": None if v is None else v.next_producer_epoch,
                "clientTransactionVersion": None if v is None else v.client_transaction_version})
    got = _named(COORDINATOR_RECORDS, coordinator_rows(report))
    assert got == expected
    assert got and list(got[0]) == list(expected[0])


def test_the_disks_hold_what_the_columns_need(states) -> None:
    """A tombstone, tagged fields of transaction version 2, an open transaction and a snapshot's."""
    records = [r for s in states.values() for r in _named(COORDINATOR_RECORDS, coordinator_rows(s))]
    assert any(r["isTombstone"] for r in records)
    assert any(r["clientTransactionVersion"] == 2 or (r["nextProducerId"] or -1) >= 0 for r in records)
    assert len({(r["startTimeMs"], r["lastUpdateTimeMs"]) for r in records}) > 1
    txns = [r for s in states.values() for r in _named(TRANSACTIONS, transaction_rows(s))]
    assert any(r["isOpen"] for r in txns) and any(not r["isOpen"] for r in txns)
    assert {r["outcome"] for r in txns} >= {"COMMIT", "ABORT"}
