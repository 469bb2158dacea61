"""The abort preview: what an administrative abort of a hanging transaction discards, where the
partition's last stable offset moves once the marker is written, and who waits behind it.

Plain rows (JSON-able dicts) for ``find-hanging --format json``, ``abort-commands`` and the
incident report. Keys are shown as text (UTF-8, invalid bytes replaced) unless ``redact`` is set.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from forensics.analysis.hanging import Verdict
from forensics.layout import Inventory, PartitionStatus
from forensics.model import CONSUMER_OFFSETS_TOPIC, TopicPartition
from forensics.pipeline.preview import (
    CommittedOffset,
    committed_offsets,
    discarded_data,
)
from forensics.report.decoders import string_text

Row = Dict[str, Any]
REDACTED = "<redacted>"


def lso_after_abort(v: Verdict) -> Tuple[int, Optional[Row]]:
    """The last stable offset once this transaction's abort marker is written: the first offset of
    the next open transaction of another producer, else the high watermark (which the marker itself
    then moves past). Returns (offset, the blocking transaction or None)."""
    hw = v.view.high_watermark
    nxt = min(((first, pid) for pid, first in v.view.open_transactions.items()
               if pid != v.entry.producer_id and first is not None), default=None)
    if nxt is not None and nxt[0] < hw:
        first, pid = nxt
        return first, {"producerId": pid, "firstOffset": first}
    return hw, None


def consumer_offsets_logs(inventory: Inventory) -> List[str]:
    """The ``.log`` files of one replica of each ``__consumer_offsets`` partition among the inputs
    (the replica with the most bytes), in partition and offset order."""
    best: Dict[int, Tuple[int, List[str]]] = {}
    for _, p in inventory.all_partitions():
        if p.topic != CONSUMER_OFFSETS_TOPIC or p.status is not PartitionStatus.LIVE or p.partition is None:
            continue
        logs = [s.log for s in p.segments if s.log]
        size = sum(s.log_size or 0 for s in p.segments)
        if p.partition not in best or size > best[p.partition][0]:
            best[p.partition] = (size, logs)
    return [path for _, (_, logs) in sorted(best.items()) for path in logs]


def stuck_groups(inventory: Inventory, verdicts: Sequence[Verdict]
                 ) -> Tuple[Optional[Dict[TopicPartition, List[CommittedOffset]]], Tuple]:
    """Per partition, the groups whose committed offset sits at its LSO; None without
    ``__consumer_offsets`` among the inputs."""
    logs = consumer_offsets_logs(inventory)
    if not logs:
        return None, ()
    lso = {v.view.topic_partition: v.view.last_stable_offset for v in verdicts}
    commits, findings = committed_offsets(logs, lso)
    return {tp: sorted((c for c in groups.values() if c.offset == lso[tp]), key=lambda c: c.group)
            for tp, groups in commits.items()}, findings


def abort_preview(v: Verdict, stuck: Optional[Dict[TopicPartition, List[CommittedOffset]]],
                  redact: bool = False) -> Row:
    """What aborting ``v`` discards on its partition, and what it frees."""
    last = v.span.last_data_offset if v.span is not None else None
    segments = [(s.path, s.base_offset) for s in v.view.inputs.segments]
    start = v.span.start if v.span is not None and v.span.first_offset == v.start_offset else None
    data = discarded_data(segments, v.entry.producer_id, v.start_offset, last,
                          (start.path, start.position) if start is not None else None)
    after, blocker = lso_after_abort(v)
    tp = v.view.topic_partition
    keys: Any = REDACTED if redact else [string_text(k) for k in data.keys]
    return {
        "firstOffset": data.first_offset, "lastOffset": data.last_offset, "batches": data.batches,
        "records": data.records, "bytes": data.bytes, "firstTimestamp": data.first_timestamp,
        "lastTimestamp": data.last_timestamp, "keys": keys, "segments": list(data.segments),
        "lastStableOffset": v.view.last_stable_offset, "highWatermark": v.view.high_watermark,
        "lsoAfterAbort": after, "nextBlockingTransaction": blocker,
        "stuckConsumerGroups": None if stuck is None else [
            {"group": c.group, "committedOffset": c.offset, "commitTimestamp": c.commit_timestamp}
            for c in stuck.get(tp, ())],
        "findings": [f.one_line() for f in data.findings],
    }


def add_previews(pairs: Sequence[Tuple[Row, Verdict]], inventory: Inventory, redact: bool = False) -> None:
    """Set ``abortPreview`` on each (row, verdict) pair whose row carries abort commands (armed or not)."""
    candidates = [v for row, v in pairs if row.get("abortForms")]
    stuck, findings = stuck_groups(inventory, candidates)
    for row, v in pairs:
        if row.get("abortForms"):
            row["abortPreview"] = abort_preview(v, stuck, redact)
            row["abortPreview"]["findings"] += [f.one_line() for f in findings]


__all__ = ["abort_preview", "add_previews", "consumer_offsets_logs", "lso_after_abort", "stuck_groups"]
