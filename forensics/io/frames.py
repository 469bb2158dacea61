"""Split a ``.log`` segment into batch frames without touching record bodies.

Kafka's iteration rule (``FileLogInputStream.nextBatch``): read offset and size
at every entry; size < 14 is corrupt; an entry running past the end of the file ends the log
(a torn tail); the magic byte at @16 selects legacy (0/1) or v2 parsing.

The forensic scanner follows that rule but never stops silently at damage: every byte it
does not frame as a batch is reported as a finding (truncated tail, zero fill, corrupt
region, CRC mismatch) with path, byte range and the offsets around it, and it resyncs at the
next position that frames a batch (of any magic) whose checksum verifies and whose offsets fit
the segment. A frame costs one 12-byte unpack (plus a CRC when ``verify_crc``), so header-only
scans stay cheap.
"""

from __future__ import annotations

import re
import struct
from itertools import chain
from typing import TYPE_CHECKING, Any, Generic, Literal, NamedTuple, TypeVar, cast, overload
from collections.abc import Callable, Iterable, Iterator, Sequence

from forensics.codec import batch as v2
from forensics.codec import legacy
from forensics.codec.batch import BatchHeader, RecordTuple, decode_header
from forensics.codec.crc import crc32, crc32c
from forensics.codec.primitives import INT32_MAX
from forensics.codec.log_entry import HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MAGIC_OFFSET, MAX_MAGIC, PREFIX
from forensics.codec.zeros import NO_HOLES, Holes
from forensics.findings import Finding, FindingKind
from forensics.speedups import native

_INT32 = struct.Struct(">i")
MIN_ENTRY_SIZE = legacy.RECORD_OVERHEAD_V0  # FileLogInputStream.nextBatch: a smaller size is corrupt
_ANY_MAGIC = re.compile(rb"[\x00-\x02]")
_V2_MAGIC = re.compile(rb"\x02")


class Frame(NamedTuple):
    position: int
    size: int  # whole entry: 12 + size field
    magic: int
    base_offset: int  # v2: baseOffset; legacy: the entry's (last) offset
    last_offset: int
    crc_ok: bool | None  # None when the CRC was not verified
    header: BatchHeader | None = None  # the v2 header, when the scanner was asked for headers

    @property
    def end(self) -> int:
        return self.position + self.size


if TYPE_CHECKING:
    # What the type checker knows that the class does not say: a scanner asked for headers decodes
    # the header of every v2 batch, so each frame it yields is a V2Frame (magic 2, its header set) or
    # a LegacyFrame (magic 0 or 1, no header); a test of ``frame.magic`` tells them apart. Both are
    # Frames at run time (the accelerator builds Frame objects: native.init_frames), so the views
    # cost nothing per batch; FrameScanner and SegmentWalk are typed by what they yield.
    class V2Frame(Frame):
        @property
        def magic(self) -> Literal[2]: ...

        @property
        def header(self) -> BatchHeader: ...

    class LegacyFrame(Frame):
        @property
        def magic(self) -> Literal[0, 1]: ...

        @property
        def header(self) -> None: ...
else:
    V2Frame = LegacyFrame = Frame

HeadedFrame = V2Frame | LegacyFrame  # a frame of a scanner asked for headers
F_co = TypeVar("F_co", bound=Frame, covariant=True)  # the frames a scanner yields: HeadedFrame or Frame

if native is not None:
    native.init_frames(Frame, BatchHeader)

# FrameScanner.folded's fold: (buf, pos, end, verify_crc, base_offset, next_offset) -> (pos, next_offset, valid_bytes)
Fold = Callable[..., tuple[int, int | None, int]]

_NATIVE_CHUNK = 256  # frames per call into the accelerator: few calls, few objects alive at once
# record tuples per call (whole entries up to at least this many): the objects of a run are made,
# read and freed while they are still in the CPU's cache (256 entries' records were ~5,000 tuples
# and their keys and values, ~2 MB: a cache miss on every allocation and free)
_NATIVE_RECORDS = 512


def _v2_crc_ok(buf, pos: int, size: int) -> bool:
    return crc32c(memoryview(buf)[pos + v2.ATTRIBUTES_OFFSET : pos + size]) == v2.CRC.unpack_from(buf, pos + v2.CRC_OFFSET)[0]


def _legacy_crc_ok(buf, pos: int, size: int) -> bool:
    return crc32(memoryview(buf)[pos + MAGIC_OFFSET : pos + size]) == legacy.CRC.unpack_from(buf, pos + legacy.CRC_OFFSET)[0]


def _make_frame(buf, pos: int, offset: int, size: int, magic: int, crc: bool | None, headers: bool) -> Frame:
    if magic != 2:
        return Frame(pos, size, magic, offset, offset, crc)
    last = offset + v2.LAST_OFFSET_DELTA.unpack_from(buf, pos + v2.LAST_OFFSET_DELTA_OFFSET)[0]
    return Frame(pos, size, magic, offset, last, crc, decode_header(buf, pos) if headers else None)


def with_header(buf, frame: Frame) -> HeadedFrame:
    """``frame`` as a scanner asked for headers yields it: a v2 frame framed without its header (a
    run's, :meth:`FrameScanner.runs`) gets it here, decoded from ``buf`` (CorruptBatchError when it
    does not decode); a frame that has it, and a legacy one, as it is."""
    if frame.magic == 2 and frame.header is None:
        frame = frame._replace(header=decode_header(buf, frame.position))
    # what HeadedFrame says: magic 2 with its header (set just above, or by the scanner), or a legacy frame
    return cast(HeadedFrame, frame)


def _int64(value: int | None) -> bool:
    """Can the accelerator take this offset? (Damaged offsets near the int64 limits make the next
    expected offset overflow it; a file name may carry a base offset beyond it.)"""
    return value is None or -(1 << 63) <= value < (1 << 63)


class FrameScanner(Generic[F_co]):
    """Iterate the frames of one segment buffer; findings accumulate in ``findings``.

    ``verify_crc``: check every batch checksum (CRC-32C for v2, CRC-32 for legacy). Frames whose
    checksum fails are still yielded (``crc_ok=False``) when the framing around them is sound,
    so a dump can show them; state rebuilds must skip them.

    ``holes``: ranges of ``buf`` known to be zero (a sparse file's holes, from
    :attr:`forensics.io.files.MappedFile.holes`): zero runs are skipped and reported as
    ``zero_fill`` without reading them, with the findings a dense run of zeros would give.
    """

    @overload
    def __init__(self: FrameScanner[HeadedFrame], buf, path: str, *, start: int = ..., end: int | None = ...,
                 verify_crc: bool = ..., base_offset: int | None = ..., headers: Literal[True],
                 holes: Holes = ...) -> None: ...

    @overload
    def __init__(self: FrameScanner[Frame], buf, path: str, *, start: int = ..., end: int | None = ...,
                 verify_crc: bool = ..., base_offset: int | None = ..., headers: bool = ...,
                 holes: Holes = ...) -> None: ...

    def __init__(self, buf, path: str, *, start: int = 0, end: int | None = None, verify_crc: bool = True,
                 base_offset: int | None = None, headers: bool = False, holes: Holes = NO_HOLES) -> None:
        self.buf = buf
        self.holes = holes
        self.path = path
        self.start = start
        self.end = len(buf) if end is None else min(end, len(buf))
        self.verify_crc = verify_crc
        self.headers = headers  # decode each v2 header into Frame.header (one pass, no second unpack)
        self.base_offset = base_offset
        self.findings: list[Finding] = []
        self.valid_bytes = 0  # bytes covered by yielded frames
        self.first_invalid_position: int | None = None  # where Kafka's reader would stop
        self._next_offset: int | None = None

    def __iter__(self) -> Iterator[F_co]:
        # the frames of _runs() one by one: a C-level loop over each run (a generator resumed per
        # frame cost more than the accelerator takes to frame it)
        return chain.from_iterable(self._runs(False))

    def runs(self) -> Iterator[Sequence[F_co]]:
        """The frames of the iteration in the runs they are framed in: a list of consecutive
        healthy entries the accelerator framed at once (no finding before, between or inside
        them), or a single frame framed by the rules below (its findings, a checksum that failed
        or offsets out of order, are in :attr:`findings` before it is yielded)."""
        return self._runs(False)

    def record_tuples(self) -> Iterator[RecordTuple]:
        """Every record of every frame, in order, as (offset, timestamp, key, value, headers)
        tuples: ``batch.record_tuples`` of each v2 batch (control batches too), ``legacy.deep_tuples``
        of each legacy entry (wrappers deep). The frames are the iteration's, findings included
        (a frame whose checksum fails is decoded too). The accelerator frames and decodes a run
        of healthy entries at once (``native.scan_tuples``: no Frame per entry). A record that
        breaks a rule raises as those functions do."""
        return chain.from_iterable(self._runs(True))

    def folded(self, fold: Fold) -> Iterator[F_co]:
        """The frames of the iteration, less the runs of healthy entries ``fold`` takes: called where
        the accelerator would frame entries, ``fold(buf, pos, end, verify_crc, base_offset,
        next_offset)`` consumes what it can from ``pos`` on (``native.fold``: no Frame each) and
        returns ``(pos, next_offset, valid_bytes)`` after it; an entry it leaves is framed as usual.
        Findings, offsets and counters are those of the whole iteration."""
        return chain.from_iterable(self._runs(False, fold))

    def _frame_tuples(self, frame: Frame) -> Iterable[RecordTuple]:
        if frame.magic == 2:
            return v2.record_tuples(self.buf, frame.position, frame.header or decode_header(self.buf, frame.position))
        return legacy.deep_tuples(self.buf, frame.position)

    @overload
    def _runs(self, records: Literal[False], fold: Fold | None = ...) -> Iterator[Sequence[F_co]]: ...

    @overload
    def _runs(self, records: Literal[True], fold: None = ...) -> Iterator[Iterable[RecordTuple]]: ...

    def _runs(self, records: bool, fold: Fold | None = None) -> Iterator[Iterable[Any]]:
        """The frames in order, as runs: up to _NATIVE_CHUNK healthy ones framed by the accelerator
        at once, or one framed (or skipped, with findings) by the rules below. ``records``: each
        run's record tuples instead of its frames (about _NATIVE_RECORDS per run). ``fold``: healthy
        entries it takes are not framed (see :meth:`folded`)."""
        buf, end = self.buf, self.end
        pos = self.start
        while pos < end:
            if native is not None and _int64(self.base_offset) and _int64(self._next_offset):
                # the healthy entries from here, framed in C; the rest below
                chunk = _NATIVE_CHUNK
                if fold is not None:
                    at, next_offset, valid = fold(buf, pos, end, self.verify_crc, self.base_offset, self._next_offset)
                    if at != pos:
                        pos, self._next_offset = at, next_offset
                        self.valid_bytes += valid
                        continue
                    if end - pos > MAGIC_OFFSET and buf[pos + MAGIC_OFFSET] == 2:
                        chunk = 1  # a batch the fold leaves (a control batch): the fold takes those after it
                if records:
                    items, at, next_offset, valid = native.scan_tuples(
                        buf, pos, end, self.verify_crc, self.base_offset, self._next_offset, _NATIVE_RECORDS)
                else:
                    items, at, next_offset, valid = native.scan(
                        buf, pos, end, self.verify_crc, self.base_offset, self._next_offset, self.headers, chunk)
                if at != pos:
                    pos, self._next_offset = at, next_offset
                    self.valid_bytes += valid
                    yield items
                    continue
            if end - pos <= HEADER_SIZE_UP_TO_MAGIC:
                self._tail(pos, "fewer than 18 bytes left: too short for an entry header")
                return
            offset, length = PREFIX.unpack_from(buf, pos)
            magic = buf[pos + MAGIC_OFFSET]
            size = LOG_OVERHEAD + length
            problem = None
            if length < MIN_ENTRY_SIZE:
                problem = f"entry size {length} is below the minimum of {MIN_ENTRY_SIZE}"
            elif pos + size > end:
                problem = f"entry size {length} runs {pos + size - end} bytes past the end of the file"
            elif magic > MAX_MAGIC:
                problem = f"unsupported magic byte {magic}"
            elif magic == 2 and length < v2.MIN_BATCH_LENGTH:
                problem = f"v2 batch length {length} is below the minimum of {v2.MIN_BATCH_LENGTH}"
            if problem is None:
                crc = None
                if self.verify_crc:
                    crc = _v2_crc_ok(buf, pos, size) if magic == 2 else _legacy_crc_ok(buf, pos, size)
                if crc is False and not self._trusted_end(pos + size):
                    problem = "checksum mismatch and no verified entry follows it: its length is not trusted"
                elif crc is False and self._verified_inside(pos, size, magic):
                    problem = "checksum mismatch and a verified batch starts inside it: its length is not trusted"
                else:
                    frame = _make_frame(buf, pos, offset, size, magic, crc, self.headers)
                    if crc is False:
                        self._crc_finding(frame)
                    self._check_offsets(frame)
                    self.valid_bytes += size
                    yield self._frame_tuples(frame) if records else (frame,)
                    pos += size
                    continue
            if self.first_invalid_position is None:
                self.first_invalid_position = pos
            nxt = self._resync(pos + 1)
            if nxt is None:
                self._tail(pos, problem)
                return
            self._region(pos, nxt, problem)
            pos = nxt

    # -- damage reporting -------------------------------------------------------------------

    def _tail(self, pos: int, problem: str) -> None:
        if self.first_invalid_position is None:
            self.first_invalid_position = pos
        if self.holes.all_zero(self.buf, pos, self.end):
            kind = FindingKind.ZERO_FILL
            msg = f"{self.end - pos} zero bytes at the end of the segment (preallocation or crash)"
        elif self._is_torn(pos):
            kind, msg = FindingKind.TRUNCATED_TAIL, f"last entry is incomplete (torn write): {problem}"
        else:
            kind, msg = FindingKind.CORRUPT_REGION, f"no valid batch found after this point: {problem}"
        self.findings.append(Finding(kind, msg, self.path, pos, self.end, self._next_offset, None))

    def _is_torn(self, pos: int) -> bool:
        end = self.end
        if end - pos <= HEADER_SIZE_UP_TO_MAGIC:
            return True
        _, length = PREFIX.unpack_from(self.buf, pos)
        return length >= MIN_ENTRY_SIZE and pos + LOG_OVERHEAD + length > end and self.buf[pos + MAGIC_OFFSET] <= MAX_MAGIC

    def _region(self, start: int, stop: int, problem: str) -> None:
        nxt_offset = PREFIX.unpack_from(self.buf, stop)[0]
        if self.holes.all_zero(self.buf, start, stop):
            kind, msg = FindingKind.ZERO_FILL, f"{stop - start} zero bytes inside the segment; resynced at byte {stop}"
        else:
            kind, msg = FindingKind.CORRUPT_REGION, f"{stop - start} bytes skipped ({problem}); resynced at byte {stop}"
        last = nxt_offset - 1 if self._next_offset is not None and nxt_offset - 1 >= self._next_offset else None
        self.findings.append(Finding(kind, msg, self.path, start, stop, self._next_offset, last))

    def _crc_finding(self, frame: Frame) -> None:
        algo = "CRC-32C" if frame.magic == 2 else "CRC-32"
        self.findings.append(Finding(
            FindingKind.CRC_MISMATCH, f"{algo} of the magic-{frame.magic} batch does not match its stored checksum",
            self.path, frame.position, frame.end, frame.base_offset, frame.last_offset))

    def _check_offsets(self, frame: Frame) -> None:
        if self.base_offset is not None and frame.base_offset < self.base_offset and frame.crc_ok is not False:
            self.findings.append(Finding(
                FindingKind.BATCH_BEFORE_BASE,
                f"batch offset {frame.base_offset} is below the segment base offset {self.base_offset}",
                self.path, frame.position, frame.end, frame.base_offset, frame.last_offset))
        elif self.base_offset is not None and frame.last_offset - self.base_offset > INT32_MAX:
            self.findings.append(Finding(
                FindingKind.OFFSET_OVERFLOW,
                "last offset minus segment base offset does not fit in 32 bits (Kafka splits such segments on load)",
                self.path, frame.position, frame.end, frame.base_offset, frame.last_offset))
        if self._next_offset is not None and frame.base_offset < self._next_offset and frame.magic == 2:
            self.findings.append(Finding(
                FindingKind.OFFSET_REGRESSION,
                f"batch starts at offset {frame.base_offset}, below the previous batch's end {self._next_offset}",
                self.path, frame.position, frame.end, frame.base_offset, frame.last_offset))
        self._next_offset = max(self._next_offset or 0, frame.last_offset + 1)

    # -- resync -----------------------------------------------------------------------------

    def _resync(self, pos: int) -> int | None:
        """The next position >= pos where an entry frames correctly, its checksum verifies and its
        offsets fit the segment. Every magic is searched for: legacy entries may follow v2 ones
        (appends down-converted after a message format downgrade)."""
        buf, end = self.buf, self.end
        while pos + LOG_OVERHEAD + MIN_ENTRY_SIZE <= end:
            m = _ANY_MAGIC.search(buf, pos + MAGIC_OFFSET, end)
            if m is None:
                return None
            cand = m.start() - MAGIC_OFFSET
            if cand + LOG_OVERHEAD + MIN_ENTRY_SIZE > end:
                return None
            _, length = PREFIX.unpack_from(buf, cand)
            if length == 0 and self.holes.all_zero(buf, cand, cand + LOG_OVERHEAD):
                nz = self.holes.next_nonzero(buf, cand, end)
                if nz is None:
                    return None
                pos = max(cand + 1, nz - 11)  # no entry can start in a zero run before its last 11 bytes
                continue
            if self._verified_at(cand, length) and self._offsets_fit(cand):
                return cand
            pos = cand + 1
        return None

    def _trusted_end(self, pos: int) -> bool:
        """May a batch whose checksum failed be framed as ending at ``pos``? Only if ``pos`` is the
        end, only zeros follow (preallocated tail), or an entry that verifies (checksum and
        offsets, as for a resync) starts there. A merely well-formed header there can be a
        coincidence inside the next batch when the damage hit the length field, and framing up
        to it would swallow intact batches; the bytes are then a corrupt region and the resync
        finds the next intact batch."""
        buf, end = self.buf, self.end
        if pos == end or self.holes.all_zero(buf, pos, end):
            return True
        if end - pos < LOG_OVERHEAD + MIN_ENTRY_SIZE:
            return False
        return self._verified_at(pos, PREFIX.unpack_from(buf, pos)[1]) and self._offsets_fit(pos)

    def _verified_inside(self, pos: int, size: int, magic: int) -> bool:
        """Does an entry that verifies (as for a resync) start inside the entry at ``pos``? Then the
        length of that entry, whose checksum failed, swallows intact batches: damage that shortened
        it (deleted bytes) left its claimed end on zeros, the end of the file or a later batch by
        chance. Inside a legacy entry only v2 batches count: a snappy or lz4 wrapper stores its
        inner legacy messages literally, and they verify."""
        buf, stop = self.buf, min(pos + size, self.end)
        search = (_ANY_MAGIC if magic == 2 else _V2_MAGIC).search
        at = pos + 1 + MAGIC_OFFSET
        while True:
            m = search(buf, at, stop + MAGIC_OFFSET)
            if m is None:
                return False
            cand = m.start() - MAGIC_OFFSET
            if cand >= stop or cand + LOG_OVERHEAD + MIN_ENTRY_SIZE > self.end:
                return False
            length = PREFIX.unpack_from(buf, cand)[1]
            if length == 0 and self.holes.all_zero(buf, cand, cand + LOG_OVERHEAD):
                nz = self.holes.next_nonzero(buf, cand, stop + MAGIC_OFFSET)  # skip the zero run (a hole is not read)
                if nz is None:
                    return False
                at = max(m.start() + 1, nz - 11 + MAGIC_OFFSET)
                continue
            if self._verified_at(cand, length) and self._offsets_fit(cand):
                return True
            at = m.start() + 1

    def _offsets_fit(self, pos: int) -> bool:
        """Kafka's segment invariant for a resync candidate: offsets >= 0 and, when the segment's
        base offset is known, base <= offset and lastOffset - base <= Integer.MAX_VALUE. Rejects
        look-alikes such as an inner legacy message stored literally in a snappy/lz4 wrapper whose
        offset bytes were split by compression tags."""
        buf = self.buf
        offset = PREFIX.unpack_from(buf, pos)[0]
        last = offset + v2.LAST_OFFSET_DELTA.unpack_from(buf, pos + v2.LAST_OFFSET_DELTA_OFFSET)[0] \
            if buf[pos + MAGIC_OFFSET] == 2 else offset
        if offset < 0 or last < offset:
            return False
        base = self.base_offset
        return base is None or (base <= offset and last - base <= INT32_MAX)

    def _verified_at(self, pos: int, length: int) -> bool:
        """A sync point: the entry at ``pos`` is structurally consistent (cheap checks first, so
        that scanning damaged bytes does not checksum a random span at every candidate) and its
        checksum verifies."""
        buf, end = self.buf, self.end
        size = LOG_OVERHEAD + length
        if length < MIN_ENTRY_SIZE or pos + size > end:
            return False
        magic = buf[pos + MAGIC_OFFSET]
        if magic == 2:
            if length < v2.MIN_BATCH_LENGTH:
                return False
            attributes, last_delta = v2.ATTRIBUTES_AND_LAST_DELTA.unpack_from(buf, pos + v2.ATTRIBUTES_OFFSET)
            # Kafka writes attribute bits 7-15 as 0 and codec ids 0-4 only; counts are >= 0
            count = v2.RECORDS_COUNT.unpack_from(buf, pos + v2.RECORDS_COUNT_OFFSET)[0]
            if attributes & ~v2.KNOWN_ATTRIBUTES or attributes & v2.COMPRESSION_MASK > v2.MAX_CODEC_ID \
                    or last_delta < 0 or count < 0:
                return False
            return _v2_crc_ok(buf, pos, size)
        if magic not in (0, 1):
            return False
        overhead = legacy.RECORD_OVERHEAD_V0 if magic == 0 else legacy.RECORD_OVERHEAD_V1
        if length < overhead or buf[pos + legacy.ATTRIBUTES_OFFSET] & legacy.CODEC_MASK > legacy.MAX_CODEC_ID:
            return False
        key_at = pos + (legacy.KEY_SIZE_OFFSET_V0 if magic == 0 else legacy.KEY_SIZE_OFFSET_V1)
        key_len = _INT32.unpack_from(buf, key_at)[0]
        if key_len < -1 or key_len > length - overhead:
            return False
        value_len = _INT32.unpack_from(buf, key_at + 4 + max(key_len, 0))[0]
        # key and value sizes must fill the message exactly
        if value_len < -1 or max(key_len, 0) + max(value_len, 0) != length - overhead:
            return False
        return _legacy_crc_ok(buf, pos, size)
