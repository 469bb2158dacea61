"""The tables of ``kafka-forensics export`` that the driver builds from the reports: per replica its
transactions, producer states and partition figures, the coordinators' records, the findings.
Each row is built by keyword as the row kind :mod:`forensics.pipeline.export_rows` declares for its table,
then written as the tuple of its export columns (:func:`~forensics.columns.export_values`); the ``batches``
table is made on the executors there."""

from __future__ import annotations

from forensics.columns import export_values
from forensics.findings import dedupe
from forensics.pipeline.export_rows import Context, CoordinatorRecordRow, ProducerStateRow, TransactionTableRow
from forensics.report.state import partition_row, without_whole_file_regions


def _replica(v) -> dict:
    """The replica's columns of a row (:class:`~forensics.pipeline.export_rows.ReplicaColumns`), by keyword."""
    tp = v.topic_partition
    return {"replica_path": v.inputs.path, "log_dir": v.inputs.log_dir or None, "broker_id": v.inputs.broker_id,
            "topic": tp.topic, "partition": tp.partition}


def transaction_rows(report) -> list[tuple]:
    """Per replica and producer, the transactions of the full history (or, for a producer it does not
    know, of the broker-equivalent fold: snapshot + replay), as ``describe-producers`` shows them
    (:class:`TransactionTableRow`)."""
    rows = []
    for v in report.partitions:
        replica = _replica(v)
        for pid in sorted(v.history.spans.keys() | v.broker.spans.keys()):
            spans, fold = (v.history.spans[pid], "history") if v.history.spans.get(pid) else (
                v.broker.spans.get(pid, ()), "broker")
            for s in spans:
                start, marker = s.start, s.marker_at
                rows.append(export_values(TransactionTableRow(
                    **replica, producer_id=pid, fold=fold, first_offset=s.first_offset,
                    last_data_offset=s.last_data_offset, data_epochs=list(s.data_epochs), batches=s.batches,
                    records=s.records, bytes=s.bytes, first_timestamp=s.first_timestamp,
                    last_timestamp=s.last_timestamp, start_path=start.path if start else None,
                    start_position=start.position if start else None, is_open=s.is_open,
                    marker_offset=s.marker_offset, outcome=s.outcome, marker_epoch=s.marker_epoch,
                    coordinator_epoch=s.coordinator_epoch, marker_timestamp=s.marker_timestamp,
                    marker_path=marker.path if marker else None, marker_position=marker.position if marker else None,
                    from_snapshot=s.from_snapshot)))
    return rows


def producer_state_rows(report) -> list[tuple]:
    """The ``producer_states`` table: each replica's producers, as :class:`ProducerStateRow` declares them."""
    return [export_values(ProducerStateRow(
        **_replica(v), producer_id=pid, producer_epoch=e.producer_epoch, coordinator_epoch=e.latest_coordinator_epoch,
        last_sequence=e.last_sequence, last_offset=e.last_offset, offset_delta=e.offset_delta, last_timestamp=e.last_timestamp,
        current_txn_first_offset=e.current_txn_first_offset))
        for v in report.partitions for pid, e in sorted(v.entries.items())]


def partition_rows(report) -> list[tuple]:
    """The ``partitions`` table: each replica's :func:`~forensics.report.state.partition_row`."""
    return [export_values(partition_row(v)) for v in report.partitions]


def _value_columns(v) -> dict:
    """A ``__transaction_state`` record's value columns of its row, by keyword (a tombstone: none, all null)."""
    if v is None:
        return {}
    return {"value_version": v.version, "producer_id": v.producer_id, "producer_epoch": v.producer_epoch,
            "transaction_timeout_ms": v.transaction_timeout_ms,
            "topic_partitions": [f"{t.topic}-{p}" for t in (v.partitions or ()) for p in t.partition_ids],
            "last_update_time_ms": v.last_update_timestamp_ms, "start_time_ms": v.start_timestamp_ms,
            "previous_producer_id": v.previous_producer_id, "next_producer_id": v.next_producer_id,
            "next_producer_epoch": v.next_producer_epoch, "client_transaction_version": v.client_transaction_version}


def coordinator_rows(report) -> list[tuple]:
    """Every record of the ``__transaction_state`` replica each partition's coordinator loads
    (:class:`CoordinatorRecordRow`)."""
    rows: list[tuple] = []
    for part, cp in sorted(report.coordinator.partitions.items()):
        entries = sorted(((tid, h) for tid, hs in cp.state.history.items() for h in hs), key=lambda e: e[1].offset)
        for tid, h in entries:
            rows.append(export_values(CoordinatorRecordRow(
                transaction_state_partition=part, replica_path=cp.inputs.path, broker_id=cp.broker_id,
                path=h.at.path, position=h.at.position, offset=h.offset, timestamp=h.timestamp,
                coordinator_epoch=h.leader_epoch, transactional_id=tid, is_tombstone=h.value is None,
                transaction_state=h.state_name, **_value_columns(h.value))))
    return rows


def all_findings(scan_report, state_report) -> list:
    """What ``scan`` reports and what the state rebuild adds (coordinator, snapshots, replicas), once each."""
    return without_whole_file_regions(dedupe(scan_report.all_findings() + state_report.findings()))


def finding_rows(findings) -> list[tuple]:
    """The ``findings`` table: each finding's export columns (:class:`~forensics.findings.Finding` declares them)."""
    return [export_values(f) for f in findings]


def contexts(inventory) -> dict[str, Context]:
    """Per replica (partition directory): what each of its ``batches`` rows says about where it lies."""
    return {p.path: (p.path, log_dir.path if log_dir is not None and log_dir.path else None,
                     log_dir.broker_id if log_dir is not None else None, p.topic, p.partition, p.status.value)
            for log_dir, p in inventory.all_partitions()}
