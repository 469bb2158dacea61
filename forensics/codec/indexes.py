"""Segment index files (Kafka's ``OffsetIndex``, ``TimeIndex``, ``TransactionIndex``): ``.index``,
``.timeindex``, ``.txnindex``, and the entry lines Kafka 4.1's ``kafka-dump-log.sh`` (``DumpLogSegments``)
prints for them.

Mirrors ``storage/src/main/java/org/apache/kafka/storage/internals/log/``: ``AbstractIndex.java``
(entries = file length // entry size), ``OffsetIndex.java``, ``TimeIndex.java``,
``TransactionIndex.java`` and ``AbortedTxn.java``; and ``DumpLogSegments.dumpIndex`` /
``dumpTimeIndex`` / ``dumpTxnIndex``.

Rules emulated:

* ``.index`` / ``.timeindex``: entry 0 is always taken; iteration stops at the first entry
  ``i > 0`` whose relative offset is 0 (the start of a zero-filled preallocated tail after a crash,
  or of garbage). Bytes past the last whole entry are ignored (``trailing_bytes``).
* ``.txnindex``: flat 34-byte entries, a trailing partial entry is ignored. Kafka's
  ``AbortedTxn.version()`` reads only byte @0 of the int16 version (``kafka_version``); when that
  signed byte is > 0 the index iterator throws, so the dump prints no entry at all.

Everything here is pure and never raises on any bytes except :func:`txn_index_dump_lines`, which
raises :class:`CorruptIndexError` where Kafka's tool would fail.
"""

from __future__ import annotations

import struct
from forensics.dataclass_fast import dataclass
from typing import Generic, NamedTuple, TypeVar
from collections.abc import Callable, Iterator

from forensics.codec.zeros import NO_HOLES, Holes
from forensics.errors import CorruptIndexError
from forensics.findings import Finding, FindingKind

# .index entry (OffsetIndex.ENTRY_SIZE = 8)
#   relativeOffset  int32  @0   offset - baseOffset
#   position        int32  @4   byte position of the batch in the .log
OFFSET_INDEX_ENTRY = struct.Struct(">ii")

# .timeindex entry (TimeIndex.ENTRY_SIZE = 12)
#   timestamp       int64  @0
#   relativeOffset  int32  @8
TIME_INDEX_ENTRY = struct.Struct(">qi")

# .txnindex entry (AbortedTxn.TOTAL_SIZE = 34)
#   version           int16  @0   CURRENT_VERSION 0; Java getter reads only byte @0
#   producerId        int64  @2
#   firstOffset       int64  @10
#   lastOffset        int64  @18  offset of the ABORT marker
#   lastStableOffset  int64  @26
ABORTED_TXN_ENTRY = struct.Struct(">hqqqq")
ABORTED_TXN_CURRENT_VERSION = 0

_ZERO_CHUNK = bytes(1 << 16)


class OffsetPosition(NamedTuple):
    """An ``.index`` entry with the absolute offset (``OffsetIndex.parseEntry``)."""

    offset: int
    position: int


class TimestampOffset(NamedTuple):
    """A ``.timeindex`` entry with the absolute offset (``TimeIndex.parseEntry``)."""

    timestamp: int
    offset: int


class AbortedTxn(NamedTuple):
    """A ``.txnindex`` entry; ``version`` is the stored int16."""

    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    @property
    def kafka_version(self) -> int:
        """What Kafka's ``AbortedTxn.version()`` returns: the signed byte @0."""
        return self.version >> 8


IndexEntry = OffsetPosition | TimestampOffset
E = TypeVar("E", OffsetPosition, TimestampOffset)  # the entries of one kind of index


@dataclass(frozen=True, slots=True)
class IndexScan(Generic[E]):
    """How an ``.index`` / ``.timeindex`` ends, for findings.

    ``entries``: the entries Kafka's dump considers (entry 0, then up to the stop entry).
    ``entry_count``: whole entries in the file (Kafka's ``AbstractIndex.entries()``).
    ``stop_position``: byte position of the first entry ``i > 0`` with relative offset 0, or None.
    ``zero_tail_start``: ``stop_position`` when every byte from there to the end of the file is
    zero (a preallocated tail), else None. ``all_zero``: the whole (non-empty) file is zero, e.g.
    the index of an empty active segment after a crash (entry 0 then reads as (base, 0)).
    ``trailing_bytes``: bytes after the last whole entry.
    """

    entries: tuple[E, ...]
    entry_count: int
    stop_position: int | None
    zero_tail_start: int | None
    all_zero: bool
    trailing_bytes: int


OffsetIndexScan = IndexScan[OffsetPosition]
TimeIndexScan = IndexScan[TimestampOffset]


@dataclass(frozen=True, slots=True)
class TxnIndexScan:
    """A ``.txnindex`` read in full. ``unsupported_version_positions``: byte positions of entries
    Kafka rejects (``kafka_version > 0``); ``non_increasing_positions``: entries whose lastOffset is
    not above the previous one (Kafka's append invariant); ``trailing_bytes``: partial entry.
    ``positions``: the byte position of each entry; ``hole_runs``: ``(start, end)`` byte ranges of
    whole entries inside a sparse file's holes, not decoded (zeros, never read)."""

    entries: tuple[AbortedTxn, ...]
    unsupported_version_positions: tuple[int, ...]
    non_increasing_positions: tuple[int, ...]
    trailing_bytes: int
    positions: tuple[int, ...] = ()
    hole_runs: tuple[tuple[int, int], ...] = ()


def is_zero(buf, start: int, end: int | None = None) -> bool:
    """True when ``buf[start:end]`` holds only zero bytes (chunked, no whole-file copy)."""
    end = len(buf) if end is None else end
    view = memoryview(buf)
    pos = start
    while pos < end:
        n = min(len(_ZERO_CHUNK), end - pos)
        if view[pos : pos + n] != _ZERO_CHUNK[:n]:
            return False
        pos += n
    return True


def _iter_entries(buf, st: struct.Struct, rel_index: int, make: Callable[[tuple[int, ...]], E]
                  ) -> Iterator[tuple[int, E]]:
    """(byte position, entry) under DumpLogSegments' stop rule; the stop entry is not yielded."""
    size = st.size
    count = len(buf) // size
    for i in range(count):
        fields = st.unpack_from(buf, i * size)
        if i > 0 and fields[rel_index] == 0:
            return
        yield i * size, make(fields)


def _scan(buf, st: struct.Struct, rel_index: int, make: Callable[[tuple[int, ...]], E], holes: Holes) -> IndexScan[E]:
    size = st.size
    entries = [e for _, e in _iter_entries(buf, st, rel_index, make)]
    count = len(buf) // size
    stop = len(entries) * size if len(entries) < count else None
    zero_tail = stop if stop is not None and holes.all_zero(buf, stop, len(buf)) else None
    if zero_tail is not None:
        all_zero = holes.all_zero(buf, 0, zero_tail)
    else:  # without a stop entry only a file of at most one whole entry can be all zero
        all_zero = stop is None and count <= 1 and len(buf) > 0 and is_zero(buf, 0)
    return IndexScan(tuple(entries), count, stop, zero_tail, all_zero, len(buf) % size)


def _offset_entry(base_offset: int) -> Callable[[tuple[int, ...]], OffsetPosition]:
    return lambda f: OffsetPosition(base_offset + f[0], f[1])


def _time_entry(base_offset: int) -> Callable[[tuple[int, ...]], TimestampOffset]:
    return lambda f: TimestampOffset(f[0], base_offset + f[1])


def iter_offset_index(buf, base_offset: int) -> Iterator[OffsetPosition]:
    """``.index`` entries with absolute offsets, stopping like DumpLogSegments."""
    for _, entry in _iter_entries(buf, OFFSET_INDEX_ENTRY, 0, _offset_entry(base_offset)):
        yield entry


def scan_offset_index(buf, base_offset: int, holes: Holes = NO_HOLES) -> OffsetIndexScan:
    """``holes``: zero ranges of ``buf`` not to read (a sparse, preallocated index)."""
    return _scan(buf, OFFSET_INDEX_ENTRY, 0, _offset_entry(base_offset), holes)


def iter_time_index(buf, base_offset: int) -> Iterator[TimestampOffset]:
    """``.timeindex`` entries with absolute offsets, stopping like DumpLogSegments."""
    for _, entry in _iter_entries(buf, TIME_INDEX_ENTRY, 1, _time_entry(base_offset)):
        yield entry


def scan_time_index(buf, base_offset: int, holes: Holes = NO_HOLES) -> TimeIndexScan:
    """``holes``: zero ranges of ``buf`` not to read (a sparse, preallocated index)."""
    return _scan(buf, TIME_INDEX_ENTRY, 1, _time_entry(base_offset), holes)


def _last_entry(buf, st: struct.Struct, rel_index: int) -> int | None:
    """The index of the last entry before DumpLogSegments' stop entry (the first entry after entry 0
    whose relative offset is 0), found by bisection: a preallocated index of millions of zero entries is
    touched in a few pages only. None for an empty index."""
    count = len(buf) // st.size
    if count == 0:
        return None
    lo, hi = 1, count  # the stop entry lies in [lo, hi]; hi == count: no stop entry
    while lo < hi:
        mid = (lo + hi) // 2
        if st.unpack_from(buf, mid * st.size)[rel_index] == 0:
            hi = mid
        else:
            lo = mid + 1
    return lo - 1


def last_offset_entry(buf, base_offset: int) -> OffsetPosition | None:
    """The last ``.index`` entry (by the stop rule); entries are written in offset order."""
    i = _last_entry(buf, OFFSET_INDEX_ENTRY, 0)
    return None if i is None else _offset_entry(base_offset)(OFFSET_INDEX_ENTRY.unpack_from(buf, i * OFFSET_INDEX_ENTRY.size))


def last_time_entry(buf, base_offset: int) -> TimestampOffset | None:
    """The last ``.timeindex`` entry (by the stop rule)."""
    i = _last_entry(buf, TIME_INDEX_ENTRY, 1)
    return None if i is None else _time_entry(base_offset)(TIME_INDEX_ENTRY.unpack_from(buf, i * TIME_INDEX_ENTRY.size))


def iter_txn_index(buf) -> Iterator[AbortedTxn]:
    """Every whole 34-byte entry (a trailing partial entry is ignored, as Kafka does), including
    entries Kafka would reject for their version; see :func:`scan_txn_index`."""
    size = ABORTED_TXN_ENTRY.size
    for i in range(len(buf) // size):
        yield AbortedTxn(*ABORTED_TXN_ENTRY.unpack_from(buf, i * size))


def _entry_runs_in_holes(count: int, size: int, holes: Holes) -> tuple[tuple[int, int], ...]:
    """``(first, stop)`` entry numbers of the whole entries lying inside holes."""
    runs = []
    for a, b in holes.ranges:
        first, stop = -(-a // size), min(b // size, count)
        if first < stop:
            runs.append((first, stop))
    return tuple(runs)


def scan_txn_index(buf, holes: Holes = NO_HOLES) -> TxnIndexScan:
    """Every whole entry, checked; entries lying wholly in ``holes`` are zeros not read nor listed
    (a run of them is one ``zero_fill`` finding): the cost follows the file's data, not its size."""
    size = ABORTED_TXN_ENTRY.size
    count = len(buf) // size
    runs = _entry_runs_in_holes(count, size, holes)
    numbers: list[int] = []
    i = 0
    for first, stop in runs + ((count, count),):
        numbers.extend(range(i, first))
        i = max(i, stop)
    entries = tuple(AbortedTxn(*ABORTED_TXN_ENTRY.unpack_from(buf, n * size)) for n in numbers)
    positions = tuple(n * size for n in numbers)
    bad_version = tuple(p for p, e in zip(positions, entries) if e.kafka_version > ABORTED_TXN_CURRENT_VERSION)
    non_increasing = tuple(
        positions[i] for i in range(1, len(entries)) if entries[i].last_offset <= entries[i - 1].last_offset
    )
    return TxnIndexScan(entries, bad_version, non_increasing, len(buf) % size, positions,
                        tuple((a * size, b * size) for a, b in runs))


def txn_index_findings(scan: TxnIndexScan, path: str, file_size: int) -> tuple[Finding, ...]:
    """The damage a :class:`TxnIndexScan` found, as findings with byte ranges."""
    size = ABORTED_TXN_ENTRY.size
    out = [Finding(FindingKind.CORRUPT_INDEX, "aborted-transaction entry with an unsupported version "
                   "(Kafka rejects the whole file)", path, pos, pos + size)
           for pos in scan.unsupported_version_positions]
    out += [Finding(FindingKind.CORRUPT_INDEX, "entry's lastOffset does not increase over the previous entry's",
                    path, pos, pos + size) for pos in scan.non_increasing_positions]
    if scan.trailing_bytes:
        end = file_size - scan.trailing_bytes
        out.append(Finding(FindingKind.CORRUPT_INDEX, f"{scan.trailing_bytes} bytes of a partial entry "
                           "(ignored by Kafka)", path, end, file_size))
    out += [Finding(FindingKind.ZERO_FILL, f"{(b - a) // size} entries of zeros in a sparse hole (not read, not "
                    "listed)", path, a, b) for a, b in scan.hole_runs]
    return tuple(out)


# --------------------------------------------------------------------------- dump text


def format_offset_position(entry: OffsetPosition) -> str:
    return f"offset: {entry.offset} position: {entry.position}"


def format_timestamp_offset(entry: TimestampOffset) -> str:
    return f"timestamp: {entry.timestamp} offset: {entry.offset}"


def format_aborted_txn(entry: AbortedTxn) -> str:
    return (
        f"version: {entry.kafka_version} producerId: {entry.producer_id} firstOffset: {entry.first_offset} "
        f"lastOffset: {entry.last_offset} lastStableOffset: {entry.last_stable_offset}"
    )


def offset_index_dump_lines(buf, base_offset: int, file_label: str) -> tuple[str, ...]:
    """The lines DumpLogSegments prints for an ``.index`` after ``Dumping <file>``.

    ``<file_label> is empty.`` when the file holds no whole entry. Assumes the ``.log`` has a
    batch at every printed position: Kafka's tool reads the batch at each entry's position before
    printing it and crashes (NoSuchElementException) when there is none, e.g. on the zero-filled
    index of an empty segment left by a crash.
    """
    if len(buf) // OFFSET_INDEX_ENTRY.size == 0:
        return (f"{file_label} is empty.",)
    return tuple(format_offset_position(e) for e in iter_offset_index(buf, base_offset))


def time_index_dump_lines(buf, base_offset: int) -> tuple[str, ...]:
    """The lines DumpLogSegments prints for a ``.timeindex`` (nothing at all when it is empty;
    its mismatch reports go to stderr and are not emulated here)."""
    return tuple(format_timestamp_offset(e) for e in iter_time_index(buf, base_offset))


def txn_index_dump_lines(buf) -> tuple[str, ...]:
    """The lines DumpLogSegments prints for a ``.txnindex``. Kafka collects all entries before
    printing, so one entry with an unsupported version means no line at all and a failed tool:
    raised here as :class:`CorruptIndexError` at that entry's position."""
    scan = scan_txn_index(buf)
    if scan.unsupported_version_positions:
        pos = scan.unsupported_version_positions[0]
        version = scan.entries[pos // ABORTED_TXN_ENTRY.size].kafka_version
        raise CorruptIndexError(
            f"Unexpected aborted transaction version {version} in transaction index, "
            f"current version is {ABORTED_TXN_CURRENT_VERSION}",
            position=pos,
        )
    return tuple(format_aborted_txn(e) for e in scan.entries)
