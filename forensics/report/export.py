"""The tables of ``kafka-forensics export`` that the driver builds from the reports: per replica its
transactions, producer states and partition figures, the coordinators' records, the findings.
Rows are tuples in the column order of :mod:`forensics.pipeline.export_rows` (the ``batches`` table
is made on the executors there)."""

from __future__ import annotations

from forensics.columns import export_values
from forensics.findings import dedupe
from forensics.pipeline.export_rows import Context, ProducerStateRow
from forensics.report.state import partition_row, without_whole_file_regions


def _replica(v) -> tuple:
    tp = v.topic_partition
    return (v.inputs.path, v.inputs.log_dir or None, v.inputs.broker_id, tp.topic, tp.partition)


def transaction_rows(report) -> list[tuple]:
    """Per replica and producer, the transactions of the full history (or, for a producer it does not
    know, of the broker-equivalent fold: snapshot + replay), as ``describe-producers`` shows them."""
    rows = []
    for v in report.partitions:
        for pid in sorted(v.history.spans.keys() | v.broker.spans.keys()):
            spans, fold = (v.history.spans[pid], "history") if v.history.spans.get(pid) else (
                v.broker.spans.get(pid, ()), "broker")
            for s in spans:
                start, marker = s.start, s.marker_at
                rows.append(_replica(v) + (
                    pid, fold, s.first_offset, s.last_data_offset, list(s.data_epochs), s.batches, s.records,
                    s.bytes, s.first_timestamp, s.last_timestamp, start.path if start else None,
                    start.position if start else None, s.is_open, s.marker_offset, s.outcome, s.marker_epoch,
                    s.coordinator_epoch, s.marker_timestamp, marker.path if marker else None,
                    marker.position if marker else None, s.from_snapshot))
    return rows


def producer_state_rows(report) -> list[tuple]:
    """The ``producer_states`` table: each replica's producers, as :class:`ProducerStateRow` declares them."""
    return [export_values(ProducerStateRow(
        replica_path=v.inputs.path, log_dir=v.inputs.log_dir or None, broker_id=v.inputs.broker_id,
        topic=v.topic_partition.topic, partition=v.topic_partition.partition, producer_id=pid,
        producer_epoch=e.producer_epoch, coordinator_epoch=e.latest_coordinator_epoch, last_sequence=e.last_sequence,
        last_offset=e.last_offset, offset_delta=e.offset_delta, last_timestamp=e.last_timestamp,
        current_txn_first_offset=e.current_txn_first_offset))
        for v in report.partitions for pid, e in sorted(v.entries.items())]


def partition_rows(report) -> list[tuple]:
    """The ``partitions`` table: each replica's :func:`~forensics.report.state.partition_row`."""
    return [export_values(partition_row(v)) for v in report.partitions]


def coordinator_rows(report) -> list[tuple]:
    """Every record of the ``__transaction_state`` replica each partition's coordinator loads."""
    rows: list[tuple] = []
    for part, cp in sorted(report.coordinator.partitions.items()):
        entries = sorted(((tid, h) for tid, hs in cp.state.history.items() for h in hs), key=lambda e: e[1].offset)
        for tid, h in entries:
            v = h.value
            head = (part, cp.inputs.path, cp.broker_id, h.at.path, h.at.position, h.offset, h.timestamp,
                    h.leader_epoch, tid, v is None, h.state_name)
            if v is None:
                rows.append(head + (None,) * 11)
                continue
            rows.append(head + (
                v.version, v.producer_id, v.producer_epoch, v.transaction_timeout_ms,
                [f"{t.topic}-{p}" for t in (v.partitions or ()) for p in t.partition_ids],
                v.last_update_timestamp_ms, v.start_timestamp_ms, v.previous_producer_id, v.next_producer_id,
                v.next_producer_epoch, v.client_transaction_version))
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
