"""What an administrative abort would discard: read from the partition's own segments.

For one open transaction (producer id, first offset, last data offset) the segments from the one
holding the first offset on are framed (headers only) and the producer's transactional data
batches in that range counted; their records are decoded only until the first record's timestamp
and five distinct keys are known (a transaction writing fewer distinct keys is decoded whole). The consumer groups stuck behind the transaction come from the
``__consumer_offsets`` partitions among the inputs: the groups whose newest committed offset for
the partition sits at its last stable offset (a read_committed consumer cannot pass it). Files are
opened read-only, one at a time; damage met here is returned as findings.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from forensics.dataclass_fast import dataclass

from forensics.codec import batch as v2
from forensics.codec.offsets import decode_offset_commit
from forensics.errors import ForensicsError
from forensics.findings import Finding
from forensics.io.frames import HeadedFrame, V2Frame
from forensics.io.segment import SegmentWalk, unreadable
from forensics.model import TopicPartition

MAX_KEYS = 5


@dataclass(frozen=True)
class DiscardedData:
    """The producer's data batches of the open transaction on this replica."""

    producer_id: int
    first_offset: int
    last_offset: int | None  # last offset of its last data batch (None: no data batch found)
    batches: int
    records: int
    bytes: int
    first_timestamp: int | None  # the first record's timestamp
    last_timestamp: int | None  # the last batch's max timestamp
    keys: tuple[builtins.bytes | None, ...]  # (the field above shadows the type) the first few distinct record keys, in offset order
    segments: tuple[str, ...]  # the segment files that hold them
    findings: tuple[Finding, ...] = ()


class _Tally:
    def __init__(self) -> None:
        self.batches = self.records = self.bytes = 0
        self.last_offset: int | None = None
        self.first_ts: int | None = None
        self.last_ts: int | None = None
        self.keys: list[bytes | None] = []
        self.segments: list[str] = []
        self.last: tuple[str, int] | None = None  # where the newest batch is (path, position)

    def add(self, walk: SegmentWalk[HeadedFrame], frame: V2Frame, findings: list[Finding], floor: int = 0) -> None:
        """Count one batch; ``floor``: the log start offset: records below it are gone already (a batch
        straddling it counts its records from there on)."""
        h, path = frame.header, walk.path
        kept = None
        if h.base_offset < floor:  # DeleteRecords moved the log start inside this batch
            kept = [r for r in _records(walk, frame, findings) if r.offset >= floor]
            if not kept:
                return
        self.batches += 1
        self.records += max(h.records_count, 0) if kept is None else len(kept)
        self.bytes += h.size
        self.last_offset = h.last_offset
        self.last_ts = h.max_timestamp
        if not self.segments or self.segments[-1] != path:
            self.segments.append(path)
        if self.first_ts is None or len(self.keys) < MAX_KEYS:
            for rec in _records(walk, frame, findings) if kept is None else kept:
                if self.first_ts is None:
                    self.first_ts = rec.timestamp
                if len(self.keys) < MAX_KEYS and rec.key not in self.keys:
                    self.keys.append(rec.key)


def _records(walk: SegmentWalk[HeadedFrame], frame: V2Frame, findings: list[Finding]) -> list[v2.Record]:
    """The batch's records; none when one of them does not decode (the finding says why)."""
    records, error = walk.records(frame)
    if error is None:
        return records
    findings.append(walk.finding(frame, f"batch records do not decode: {error.message}"))
    return []


def discarded_data(segments: Sequence[tuple[str, int]], producer_id: int, first_offset: int,
                   last_offset: int | None, first_batch: tuple[str, int] | None = None,
                   log_start: int = 0) -> DiscardedData:
    """Count the producer's transactional data batches with offsets in [first_offset, last_offset]
    (to the log end when None) in ``segments`` ((path, base offset) in offset order), from the log
    start on: an abort cannot discard what DeleteRecords or retention already removed from the log
    (``UnifiedLog.logStartOffset``: nothing below it is read any more, though its segment may remain).
    ``first_batch``: (path, byte position) of the transaction's first batch, where the scan of that
    segment starts (so that previews of many transactions of one segment do not each read it from
    its first byte)."""
    tally, findings = _Tally(), []
    floor = log_start
    stop = last_offset if last_offset is not None else float("inf")
    start = max((i for i, (_, base) in enumerate(segments) if base <= first_offset), default=0)
    for path, base in segments[start:]:
        if base > stop:
            break
        at = first_batch[1] if first_batch is not None and first_batch[0] == path else 0
        try:
            walk = SegmentWalk(path, start=at, base_offset=base)
        except ForensicsError as exc:
            findings.append(unreadable(path, exc))
            continue
        with walk:
            _scan(walk, producer_id, first_offset, stop, tally, findings, floor)
    return DiscardedData(producer_id, max(first_offset, floor), tally.last_offset, tally.batches, tally.records, tally.bytes,
                         tally.first_ts, tally.last_ts, tuple(tally.keys), tuple(tally.segments), tuple(findings))


def _scan(walk: SegmentWalk[HeadedFrame], pid: int, first: int, stop, tally: _Tally, findings: list[Finding],
          floor: int = 0) -> None:
    for frame in walk.batches():
        if frame.base_offset < first:
            continue
        if frame.base_offset > stop:
            break
        h = frame.header
        if h.producer_id == pid and h.is_transactional and not h.is_control and h.last_offset >= floor:
            tally.add(walk, frame, findings, floor)


# -- consumer groups behind the transaction ------------------------------------------------------


@dataclass(frozen=True)
class CommittedOffset:
    group: str
    offset: int
    commit_timestamp: int | None


def committed_offsets(segments: Iterable[str], wanted: Iterable[TopicPartition]
                      ) -> tuple[dict[TopicPartition, dict[str, CommittedOffset]], tuple[Finding, ...]]:
    """The newest committed offset of every group for the ``wanted`` partitions, from
    ``__consumer_offsets`` segment files given in offset order (tombstones delete)."""
    want = set(wanted)
    out: dict[TopicPartition, dict[str, CommittedOffset]] = {tp: {} for tp in want}
    findings: list[Finding] = []
    for path in segments:
        try:
            walk = SegmentWalk(path)
        except ForensicsError as exc:
            findings.append(unreadable(path, exc))
            continue
        with walk:
            _fold_commits(walk, want, out, findings)
    return out, tuple(findings)


def _fold_commits(walk: SegmentWalk[HeadedFrame], want, out, findings: list[Finding]) -> None:
    for frame in walk.batches():
        if frame.header.is_control:
            continue
        for rec in _records(walk, frame, findings):
            try:
                commit = decode_offset_commit(rec.key, rec.value)
            except ForensicsError:
                continue  # not an offset commit we can read; the dump's offsets decoder shows it
            if commit is None:
                continue
            tp = TopicPartition(commit.topic, commit.partition)
            if tp not in want:
                continue
            if commit.offset is None:  # a tombstone (is_tombstone: a commit has its offset)
                out[tp].pop(commit.group, None)
            else:
                out[tp][commit.group] = CommittedOffset(commit.group, commit.offset, commit.commit_timestamp)


__all__ = ["CommittedOffset", "DiscardedData", "committed_offsets", "discarded_data"]
