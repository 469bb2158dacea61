"""The plan: small picklable work units, one per file (and per byte range of a very large segment).

A unit names a path, a byte range and what to extract; it never carries file contents. Either
executor (in-process or Spark) runs :func:`forensics.pipeline.units.run_unit` on each unit, merges
the results per replica (:mod:`forensics.pipeline.merge`) and hands them to the driver, which
assembles the analysis inputs from the inventory (:mod:`forensics.pipeline.assemble`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from forensics.dataclass_fast import dataclass
from enum import Enum
from typing import NamedTuple

from forensics.codec.indexes import iter_offset_index
from forensics.errors import ForensicsError
from forensics.io.files import WHOLE_FILE_LIMIT, read_small_file
from forensics.layout import (
    Inventory,
    LogDir,
    PartitionDir,
    PartitionStatus,
    SegmentFiles,
)
from forensics.model import CLUSTER_METADATA_TOPIC, TRANSACTION_STATE_TOPIC

DEFAULT_SPLIT_BYTES = 256 << 20  # segments larger than this are read as several byte ranges


class UnitKind(str, Enum):
    EVENTS = "events"  # a data segment: producer events (and header statistics when asked)
    TXNLOG = "txnlog"  # a __transaction_state segment: its records (and statistics when asked)
    STATS = "stats"  # header statistics only (internal logs, non-live copies, loose files)
    SNAPSHOT = "snapshot"  # a producer-state .snapshot
    TXNINDEX = "txnindex"  # a .txnindex


class WorkUnit(NamedTuple):
    kind: UnitKind
    key: str  # the replica it belongs to (partition dir path; a loose file's own path)
    path: str
    base_offset: int | None  # of the segment (from its name); a snapshot's offset
    start: int = 0  # byte range [start, end) of the file this unit reads
    end: int | None = None  # None: to the end of the file
    size: int = 0  # bytes this unit reads (progress, balancing)
    stats: bool = False  # also the header statistics ``scan`` reports
    cuts: tuple[int, ...] = ()  # snapshot offsets: event runs never straddle one

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.end is None


@dataclass(frozen=True)
class Scope:
    """What a command needs read."""

    stats: bool = False  # header statistics of every segment (``scan``)
    data: bool = True  # producer state of data partitions
    coordinator: bool = True  # __transaction_state records
    non_live: bool = False  # -delete/-stray/-future copies and internal logs (statistics only)
    metadata_tail: bool = False  # statistics of __cluster_metadata's newest segment (the incident clock)
    select: Callable[[LogDir | None, PartitionDir], bool] | None = None  # data partitions to rebuild
    split_bytes: int = DEFAULT_SPLIT_BYTES

    def selects(self, log_dir: LogDir | None, p: PartitionDir) -> bool:
        """Is ``p`` one of the data partitions to rebuild (``select``; None: every one)?"""
        return self.select is None or self.select(log_dir, p)


def _kind(p: PartitionDir, scope: Scope, log_dir: LogDir | None) -> UnitKind | None:
    live = p.status is PartitionStatus.LIVE and p.topic_partition is not None
    if live and p.topic == TRANSACTION_STATE_TOPIC:
        if scope.coordinator:
            return UnitKind.TXNLOG
        return UnitKind.STATS if scope.stats else None
    if live and p.topic != CLUSTER_METADATA_TOPIC and scope.data and scope.selects(log_dir, p):
        return UnitKind.EVENTS
    if live and p.topic == CLUSTER_METADATA_TOPIC and scope.metadata_tail and not scope.stats:
        return UnitKind.STATS
    return UnitKind.STATS if scope.stats and (live or scope.non_live) else None


def split_points(s: SegmentFiles, split_bytes: int) -> list[int]:
    """Byte positions where batches start, about ``split_bytes`` apart, taken from the segment's
    offset index (Kafka's ``.index`` maps offsets to the positions of their batches). Without a
    usable index the segment is one range. A wrong position cannot change a result: a range that
    does not frame cleanly is read again as part of its whole segment (see ``merge``)."""
    size = s.log_size or 0
    if s.index is None or size <= split_bytes:
        return []
    try:
        data = read_small_file(s.index, WHOLE_FILE_LIMIT)
    except ForensicsError:
        return []
    points: list[int] = []
    target = split_bytes
    try:
        for entry in iter_offset_index(data, s.base_offset):
            if entry.position >= size:
                break
            if entry.position >= target and (not points or entry.position > points[-1]):
                points.append(entry.position)
                target = entry.position + split_bytes
    except ForensicsError:
        return []
    return [p for p in points if 0 < p < size]


def _segment_units(key: str, s: SegmentFiles, kind: UnitKind, scope: Scope, cuts: tuple[int, ...]
                   ) -> Iterator[WorkUnit]:
    size = s.log_size or 0
    if s.log is None:
        return
    points = split_points(s, scope.split_bytes) if kind is not UnitKind.TXNLOG else []
    if not points:
        yield WorkUnit(kind, key, s.log, s.base_offset, 0, None, size, scope.stats, cuts)
        return
    bounds = [0] + points + [size]
    for start, end in zip(bounds, bounds[1:]):
        yield WorkUnit(kind, key, s.log, s.base_offset, start, end if end < size else None, end - start,
                       scope.stats, cuts)


def partition_units(log_dir: LogDir | None, p: PartitionDir, scope: Scope) -> Iterator[WorkUnit]:
    kind = _kind(p, scope, log_dir)
    if kind is None:
        return
    key = p.path
    cuts = tuple(f.offset for f in p.snapshots) if kind is UnitKind.EVENTS else ()
    segments: Sequence[SegmentFiles] = p.segments
    if scope.metadata_tail and not scope.stats and p.topic == CLUSTER_METADATA_TOPIC:
        segments = [s for s in segments if s.log is not None and s.log_size][-1:]  # the clock needs its newest batch
        scope = replace(scope, stats=True)
    for s in segments:
        if s.log is None:
            continue
        yield from _segment_units(key, s, kind, scope, cuts)
        if kind is UnitKind.EVENTS and s.txnindex is not None:
            yield WorkUnit(UnitKind.TXNINDEX, key, s.txnindex, s.base_offset)
    if kind is UnitKind.EVENTS:
        for f in p.snapshots:
            yield WorkUnit(UnitKind.SNAPSHOT, key, f.path, f.offset)  # size 0: progress counts .log bytes


def plan(inventory: Inventory, scope: Scope) -> list[WorkUnit]:
    """Every unit the command needs, replica by replica, in offset order."""
    units: list[WorkUnit] = []
    for log_dir, p in inventory.all_partitions():
        units.extend(partition_units(log_dir, p, scope))
    if scope.stats:
        for f in inventory.loose_files:
            if f.kind.value == "log" and f.temp_suffix is None:
                units.append(WorkUnit(UnitKind.STATS, f.path, f.path, f.offset, 0, None, f.size, True))
    return units
