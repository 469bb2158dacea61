"""The abort preview: what an administrative abort of a hanging transaction discards, where the
partition's last stable offset moves once the marker is written, and who waits behind it.

Typed rows for ``find-hanging --format json``, ``abort-commands`` and the incident report, built from
what :mod:`forensics.pipeline.preview` read (the run reads; this module only shapes). Keys are shown
as text (UTF-8, invalid bytes replaced) unless ``redact`` is set.
"""

from __future__ import annotations

from dataclasses import field
from forensics.dataclass_fast import dataclass
from typing import Any
from collections.abc import Sequence

from forensics.analysis.hanging import Verdict
from forensics.findings import Finding
from forensics.layout import Inventory, PartitionStatus
from forensics.model import CONSUMER_OFFSETS_TOPIC, TopicPartition
from forensics.pipeline.preview import CommittedOffset, DiscardedData
from forensics.report.decoders import string_text
from forensics.columns import BYTES, LINES, QUOTED, TIME, JsonRow, Label, column

REDACTED = "<redacted>"
NO_BATCH = "unknown: no data batch of it among the inputs"  # a label's words where no batch of it was read


@dataclass(frozen=True, slots=True)
class BlockingTransaction(JsonRow):
    """The next open transaction of another producer, which holds the LSO once this one is aborted."""

    producer_id: int = field(metadata=column(label=Label("next transaction holding the LSO back: producer id")))
    first_offset: int = field(metadata=column(label=Label("next transaction holding the LSO back: first offset")))


@dataclass(frozen=True, slots=True)
class StuckGroup(JsonRow):
    """A consumer group whose committed offset sits at the partition's LSO."""

    group: str = field(metadata=column(label=Label("waiting group {n}")))
    committed_offset: int = field(metadata=column(label=Label("waiting group {n}: committed offset")))
    commit_timestamp: int | None = field(metadata=column(label=Label("waiting group {n}: committed at", kind=TIME)))


def lso_after_abort(v: Verdict) -> tuple[int, BlockingTransaction | None]:
    """The last stable offset once this transaction's abort marker is written: the first offset of
    the next open transaction of another producer, else the high watermark (which the marker itself
    then moves past). Returns (offset, the blocking transaction or None)."""
    hw = v.view.high_watermark
    nxt = min(((first, pid) for pid, first in v.view.open_transactions.items()
               if pid != v.entry.producer_id and first is not None), default=None)
    if nxt is not None and nxt[0] < hw:
        first, pid = nxt
        return first, BlockingTransaction(producer_id=pid, first_offset=first)
    return hw, None


def consumer_offsets_logs(inventory: Inventory) -> list[str]:
    """The ``.log`` files of one replica of each ``__consumer_offsets`` partition among the inputs
    (the replica with the most bytes), in partition and offset order."""
    best: dict[int, tuple[int, list[str]]] = {}
    for _, p in inventory.all_partitions():
        if p.topic != CONSUMER_OFFSETS_TOPIC or p.status is not PartitionStatus.LIVE or p.partition is None:
            continue
        logs = [s.log for s in p.segments if s.log]
        size = sum(s.log_size or 0 for s in p.segments)
        if p.partition not in best or size > best[p.partition][0]:
            best[p.partition] = (size, logs)
    return [path for _, (_, logs) in sorted(best.items()) for path in logs]


def stuck_at_lso(commits: dict[TopicPartition, dict[str, CommittedOffset]], lso: dict[TopicPartition, int]
                 ) -> dict[TopicPartition, list[CommittedOffset]]:
    """Per partition, the groups whose committed offset sits at its LSO (``commits``: what
    :func:`~forensics.pipeline.preview.committed_offsets` read for those partitions)."""
    return {tp: sorted((c for c in groups.values() if c.offset == lso[tp]), key=lambda c: c.group)
            for tp, groups in commits.items()}


@dataclass(frozen=True, slots=True)
class AbortPreview(JsonRow):
    """What aborting one open transaction discards on its partition, and what it frees."""

    first_offset: int = field(metadata=column(label=Label("first offset discarded", NO_BATCH)))
    last_offset: int | None = field(metadata=column(label=Label("last offset discarded", NO_BATCH)))
    batches: int = field(metadata=column(label=Label("batches discarded")))
    records: int = field(metadata=column(label=Label("records discarded")))
    bytes: int = field(metadata=column(label=Label("bytes discarded", kind=BYTES)))
    first_timestamp: int | None = field(metadata=column(
        label=Label("first record discarded: time", "unknown: no data batch read", TIME)))
    last_timestamp: int | None = field(metadata=column(
        label=Label("last record discarded: time", "unknown: no data batch read", TIME)))
    keys: Any = field(metadata=column(  # the first distinct keys as text, or REDACTED
        label=Label("record keys discarded (the first ones)", kind=QUOTED, empty="none read")))
    segments: list[str] = field(metadata=column(label=Label("segment files holding them", kind=LINES, empty="none read")))
    last_stable_offset: int = field(metadata=column(label=Label("last stable offset now")))
    high_watermark: int = field(metadata=column(label=Label("high watermark")))
    lso_after_abort: int = field(metadata=column(label=Label("last stable offset after the abort marker")))
    next_blocking_transaction: BlockingTransaction | None = field(metadata=column(
        label=Label("next transaction holding the LSO back", "none: the LSO moves up to the high watermark")))
    stuck_consumer_groups: list[StuckGroup] | None = field(metadata=column(  # None: no __consumer_offsets among the inputs
        label=Label("consumer groups committed at the LSO (waiting on it)", "unknown: no __consumer_offsets in the inputs",
                    empty="none: no group committed at the LSO")))
    findings: list[str] = field(metadata=column(
        label=Label("findings while reading that data", kind=LINES, empty="none: read as Kafka wrote it")))


def abort_preview(v: Verdict, data: DiscardedData, stuck: dict[TopicPartition, list[CommittedOffset]] | None,
                  read_findings: Sequence[Finding] = (), redact: bool = False) -> AbortPreview:
    """What aborting ``v`` discards (``data``: its batches, read from the partition's segments) and frees
    (``stuck``: :func:`stuck_at_lso`, None without ``__consumer_offsets``; ``read_findings``: damage met
    reading those)."""
    after, blocker = lso_after_abort(v)
    tp = v.view.topic_partition
    keys: Any = REDACTED if redact else [string_text(k) for k in data.keys]
    return AbortPreview(
        first_offset=data.first_offset, last_offset=data.last_offset, batches=data.batches, records=data.records,
        bytes=data.bytes, first_timestamp=data.first_timestamp, last_timestamp=data.last_timestamp, keys=keys,
        segments=list(data.segments), last_stable_offset=v.view.last_stable_offset,
        high_watermark=v.view.high_watermark, lso_after_abort=after, next_blocking_transaction=blocker,
        stuck_consumer_groups=None if stuck is None else [
            StuckGroup(group=c.group, committed_offset=c.offset, commit_timestamp=c.commit_timestamp)
            for c in stuck.get(tp, ())],
        findings=[f.one_line() for f in data.findings] + [f.one_line() for f in read_findings])


__all__ = ["AbortPreview", "BlockingTransaction", "StuckGroup", "abort_preview", "consumer_offsets_logs", "lso_after_abort", "stuck_at_lso"]
