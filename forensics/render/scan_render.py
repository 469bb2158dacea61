"""Render a :class:`forensics.report.scan.ScanReport` as rich tables or JSON.

The tables go through rich with markup, emoji codes and highlighting off, so that no text from the
evidence (a directory named ``[link=file:evil]click``, a checkpoint line ``[/b]``) is ever read as
rich markup, and every such text is shown through :func:`~forensics.render.terminal_text.term`.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, TextIO

from rich.console import Console
from rich.table import Table

from forensics.analysis.broker_version import BrokerVersionRange
from forensics.findings import Finding, total
from forensics.render.table_text import print_table
from forensics.render.terminal_text import term
from forensics.report.scan import PartitionSummary, ScanReport, SegmentSummary


def _offsets(first: Optional[int], last: Optional[int]) -> str:
    return "-" if first is None else f"{first}..{last}"


def _set(values) -> str:
    return ",".join(str(v) for v in sorted(values)) or "-"


def _opt(value) -> str:
    return "-" if value is None else term(value)


class _Console(Console):
    """rich's console, except that a closed pipe is left to the command line (which ends the
    command quietly, exit 0) instead of rich's ``SystemExit(1)``."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def render_scan_table(report: ScanReport, out: TextIO, version: Optional[BrokerVersionRange] = None) -> None:
    console = _Console(file=out, width=None if out.isatty() else 220, highlight=False, soft_wrap=False, markup=False,
                      emoji=False)
    brokers = Table(title="Log directories", title_justify="left")
    for col in ("Broker", "Cluster", "LogDir", "CleanShutdown", "Partitions", "Bytes", "LateTxnPartitions",
                "Findings"):
        brokers.add_column(col)
    for d in report.log_dirs:
        n = sum(total(p.all_findings()) for p in d.partitions) + total(d.findings)
        brokers.add_row(_opt(d.broker_id), _opt(d.cluster_id), term(d.path) or "(partition dirs given directly)",
                        "yes" if d.clean_shutdown else "no", str(len(d.partitions)),
                        str(sum(p.bytes for p in d.partitions)), str(d.partitions_with_late_transactions), str(n))
    console.print(brokers)
    console.print(f"As of {report.as_of.time_ms} ({term(report.as_of.source)})")
    if version is not None:
        console.print(term(version.label))
    parts = Table(title="Partitions", title_justify="left")
    for col in ("Broker", "Topic", "Partition", "Status", "TopicId", "Segments", "Bytes", "Batches", "Records",
                "Offsets", "LogStart", "HW", "LSO", "LSOLag", "OpenTxns", "MaxTxnAge(s)", "Magic", "Codecs",
                "Findings"):
        parts.add_column(col, no_wrap=True)
    for d in report.log_dirs:
        for p in d.partitions:
            parts.add_row(_opt(p.broker_id), _opt(p.topic), _opt(p.partition), term(p.status), _opt(p.topic_id),
                          str(len(p.segments)), str(p.bytes), str(p.batches), str(p.records),
                          _offsets(p.first_offset, p.last_offset), _opt(p.log_start_offset), _opt(p.high_watermark),
                          _opt(p.last_stable_offset), _opt(p.last_stable_offset_lag), str(p.open_transactions)
                          + (" (late)" if p.late_transaction else ""),
                          _opt(None if p.max_active_txn_duration_ms is None else p.max_active_txn_duration_ms // 1000),
                          _set(p.magics), _set(p.codecs), str(total(p.all_findings())))
    print_table(console, parts)  # 50,000 rows: written row by row, not laid out by rich
    if report.loose_segments:
        loose = Table(title="Segment files", title_justify="left")
        for col in ("File", "Bytes", "Batches", "Records", "Offsets", "Magic", "Codecs", "Findings"):
            loose.add_column(col, no_wrap=True)
        for s in report.loose_segments:
            loose.add_row(term(s.path), str(s.size), str(s.batches), str(s.records),
                          _offsets(s.first_offset, s.last_offset),
                          _set(s.magics), _set(s.codecs), str(total(s.findings)))
        print_table(console, loose)
    findings = report.all_findings()
    if findings:
        table = Table(title=f"Findings ({total(findings)})", title_justify="left")
        for col in ("Severity", "Kind", "Path", "Bytes", "Offsets", "Message"):
            table.add_column(col)
        for f in findings:
            table.add_row(f.level.value, f.kind.value, _opt(f.path),
                          "-" if f.position is None else f"{f.position}..{_opt(f.last_position if f.end_position is None else f.end_position)}",
                          "-" if f.first_offset is None else f"{f.first_offset}..{_opt(f.last_offset)}",
                          term(f.message))
        console.print(table)
    else:
        console.print("Findings: none")


def _segment_obj(s: SegmentSummary) -> Dict[str, Any]:
    return {
        "path": s.path, "baseOffset": s.base_offset, "bytes": s.size, "batches": s.batches, "records": s.records,
        "firstOffset": s.first_offset, "lastOffset": s.last_offset, "maxTimestamp": s.max_timestamp,
        "magics": sorted(s.magics), "codecs": sorted(s.codecs), "transactionalBatches": s.transactional_batches,
        "controlBatches": s.control_batches, "invalidBatches": s.invalid_batches,
        "findings": [f.to_dict() for f in s.findings],
    }


def _partition_obj(p: PartitionSummary) -> Dict[str, Any]:
    return {
        "brokerId": p.broker_id, "path": p.path, "topic": p.topic, "partition": p.partition, "status": p.status,
        "topicId": p.topic_id, "logStartOffset": p.log_start_offset, "highWatermark": p.high_watermark,
        "lastStableOffset": p.last_stable_offset, "lastStableOffsetLag": p.last_stable_offset_lag,
        "openTransactions": p.open_transactions, "maxActiveTransactionDurationMs": p.max_active_txn_duration_ms,
        "lateTransaction": p.late_transaction,
        "bytes": p.bytes, "batches": p.batches, "records": p.records, "firstOffset": p.first_offset,
        "lastOffset": p.last_offset, "magics": sorted(p.magics), "codecs": sorted(p.codecs),
        "segments": [_segment_obj(s) for s in p.segments],
        "findings": [f.to_dict() for f in p.findings + p.state_findings],
    }


def _findings(items: List[Finding]) -> List[Dict[str, Any]]:
    return [f.to_dict() for f in items]


def render_scan_json(report: ScanReport, out: TextIO, manifest: Optional[Dict[str, Any]] = None,
                     version: Optional[BrokerVersionRange] = None) -> None:
    """One JSON document; ``manifest``: path and digest of the evidence manifest, embedded when given;
    ``version``: the broker version range (``brokerVersion``), when given."""
    obj: Dict[str, Any] = {
        "inputs": list(report.inputs),
        "asOf": {"timeMs": report.as_of.time_ms, "source": report.as_of.source},
    }
    if version is not None:
        obj["brokerVersion"] = version.as_json()
    obj.update({
        "logDirs": [{
            "path": d.path, "brokerId": d.broker_id, "clusterId": d.cluster_id, "directoryId": d.directory_id,
            "cleanShutdown": d.clean_shutdown,
            "partitionsWithLateTransactions": d.partitions_with_late_transactions,
            "partitions": [_partition_obj(p) for p in d.partitions],
            "findings": _findings(list(d.findings)),
        } for d in report.log_dirs],
        "segmentFiles": [_segment_obj(s) for s in report.loose_segments],
        "otherFiles": list(report.other_loose_files),
        "findings": _findings(list(report.findings)),
        "summary": {
            "logDirs": len(report.log_dirs),
            "partitions": sum(len(d.partitions) for d in report.log_dirs),
            "bytes": report.total_bytes(),
            "findings": total(report.all_findings()),
        },
    })
    if manifest is not None:
        obj["manifest"] = manifest
    json.dump(obj, out, indent=2, sort_keys=False)
    out.write("\n")
