"""Merging unit results per replica: an associative (and commutative) merge, then one finalize.

:class:`ReplicaParts` is what the units of one replica produced, kept sorted by position in the
log; :func:`merge` of two parts is their sorted union, so the executors may combine results in any
grouping and order (Spark's ``reduceByKey``, or a plain loop) and get the same value. The fold
itself runs once per replica afterwards, on the driver, over the finalized parts in offset order.

:func:`finalize` joins the byte ranges of each split segment. Ranges framed cleanly from their
first to their last byte, whose offsets continue across each seam, join exactly into what one
whole-segment pass yields (same frames, same events, no findings). When any range saw damage, the
segment is read again whole so that findings (which depend on what came before them in the
segment) are exactly those of a whole-segment pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from forensics.findings import Finding
from forensics.pipeline.units import (
    SegmentPiece,
    TxnIndexRead,
    UnitResult,
    read_segment,
)
from forensics.state.inputs import (
    AbortedTxnEntry,
    SegmentEvents,
    SegmentSummary,
    SnapshotRead,
    TxnLogSegment,
)


class ReplicaParts(NamedTuple):
    pieces: tuple[SegmentPiece, ...]  # sorted by (base offset, byte start)
    snapshots: tuple[SnapshotRead, ...]  # sorted by offset
    txn_indexes: tuple[TxnIndexRead, ...]  # sorted by segment base offset


class ReplicaResult(NamedTuple):
    """A replica's finalized results: one entry per segment, in offset order."""

    summaries: tuple[SegmentSummary, ...]
    events: tuple[SegmentEvents, ...]
    txnlog: tuple[TxnLogSegment, ...]
    snapshots: tuple[SnapshotRead, ...]
    txn_entries: tuple[AbortedTxnEntry, ...]
    txn_findings: tuple[Finding, ...]


EMPTY = ReplicaParts((), (), ())


def _piece_order(p: SegmentPiece) -> tuple:
    return (p.unit.base_offset if p.unit.base_offset is not None else -1, p.unit.start, p.unit.path)


def _index_order(t: TxnIndexRead) -> tuple:
    return (t.unit.base_offset if t.unit.base_offset is not None else -1, t.unit.path)


def _snapshot_order(s: SnapshotRead) -> tuple:
    return (s.offset, s.path)


def part_of(result: UnitResult) -> ReplicaParts:
    """A one-unit :class:`ReplicaParts`."""
    if isinstance(result, SegmentPiece):
        return ReplicaParts((result,), (), ())
    if isinstance(result, TxnIndexRead):
        return ReplicaParts((), (), (result,))
    return ReplicaParts((), (result,), ())


def _union(a: tuple, b: tuple, key: Callable) -> tuple:
    if not a:
        return b
    if not b:
        return a
    return tuple(sorted(a + b, key=key))


def merge(a: ReplicaParts, b: ReplicaParts) -> ReplicaParts:
    """Associative and commutative: the sorted union of both sides' results."""
    return ReplicaParts(_union(a.pieces, b.pieces, _piece_order), _union(a.snapshots, b.snapshots, _snapshot_order),
                        _union(a.txn_indexes, b.txn_indexes, _index_order))


def merge_all(parts: Iterable[ReplicaParts]) -> ReplicaParts:
    pieces: list[SegmentPiece] = []
    snapshots: list[SnapshotRead] = []
    indexes: list[TxnIndexRead] = []
    for p in parts:
        pieces.extend(p.pieces)
        snapshots.extend(p.snapshots)
        indexes.extend(p.txn_indexes)
    return ReplicaParts(tuple(sorted(pieces, key=_piece_order)), tuple(sorted(snapshots, key=_snapshot_order)),
                        tuple(sorted(indexes, key=_index_order)))


# -- joining the ranges of a split segment ------------------------------------------------------------


def _seams_hold(ranges: Sequence[SegmentPiece]) -> bool:
    """Every range clean, contiguous, and offsets going on across each seam as within a range."""
    for before, after in zip(ranges, ranges[1:]):
        if not (before.clean and after.clean) or before.unit.end != after.unit.start:
            return False
        end = _next_offset(before)
        if end is not None and after.first_base_offset is not None and after.first_base_offset < end:
            return False  # an offset regression at the seam: a whole pass reports it
    return ranges[0].unit.start == 0 and ranges[-1].unit.end is None and ranges[-1].clean


def _next_offset(p: SegmentPiece) -> int | None:
    if p.events is not None:
        return p.events.next_offset
    if p.txnlog is not None:
        return p.txnlog.next_offset
    if p.summary is not None and p.summary.last_offset is not None:
        return p.summary.last_offset + 1
    return None


def _opt_max(values: Iterable[int | None]) -> int | None:
    return max((v for v in values if v is not None), default=None)


def _opt_min(values: Iterable[int | None]) -> int | None:
    return min((v for v in values if v is not None), default=None)


def _join_summaries(first: SegmentPiece, summaries: Sequence[SegmentSummary]) -> SegmentSummary:
    s0 = summaries[0]
    return SegmentSummary(
        s0.path, s0.base_offset if first.unit.base_offset is not None else (_opt_min(s.first_offset for s in summaries) or 0),
        first.file_size, sum(s.batches for s in summaries), sum(s.records for s in summaries),
        _opt_min(s.first_offset for s in summaries), _opt_max(s.last_offset for s in summaries),
        _opt_max(s.max_timestamp for s in summaries), frozenset().union(*(s.magics for s in summaries)),
        frozenset().union(*(s.codecs for s in summaries)), sum(s.transactional_batches for s in summaries),
        sum(s.control_batches for s in summaries), sum(s.invalid_batches for s in summaries), ())


def _join_events(first: SegmentPiece, events: Sequence[SegmentEvents]) -> SegmentEvents:
    e0 = events[0]
    return SegmentEvents(e0.path, e0.base_offset, first.file_size, tuple(ev for e in events for ev in e.events),
                         sum(e.batches for e in events), _opt_max(e.next_offset for e in events),
                         _opt_max(e.max_timestamp for e in events), None, ())


def _join(ranges: Sequence[SegmentPiece]) -> SegmentPiece:
    first = ranges[0]
    if len(ranges) == 1 and first.unit.whole:
        return first
    if not _seams_hold(ranges):
        return read_segment(first.unit._replace(start=0, end=None, size=first.file_size))
    summaries = [r.summary for r in ranges if r.summary is not None]
    events_of = [r.events for r in ranges if r.events is not None]  # every range reads what the first does
    summary = _join_summaries(first, summaries) if first.summary is not None else None
    events = _join_events(first, events_of) if first.events is not None else None
    unit = first.unit._replace(start=0, end=None, size=first.file_size)
    return SegmentPiece(unit, first.file_size, summary, events, None, first.first_base_offset, True)


def _segments(pieces: Sequence[SegmentPiece]) -> list[SegmentPiece]:
    out: list[SegmentPiece] = []
    group: list[SegmentPiece] = []
    for p in pieces:
        if group and p.unit.path != group[0].unit.path:
            out.append(_join(group))
            group = []
        group.append(p)
    if group:
        out.append(_join(group))
    return out


def finalize(parts: ReplicaParts) -> ReplicaResult:
    segments = _segments(parts.pieces)
    return ReplicaResult(
        tuple(s.summary for s in segments if s.summary is not None),
        tuple(s.events for s in segments if s.events is not None),
        tuple(s.txnlog for s in segments if s.txnlog is not None),
        parts.snapshots,
        tuple(e for t in parts.txn_indexes for e in t.entries),
        tuple(f for t in parts.txn_indexes for f in t.findings),
    )
