"""Work units: pure functions of (path, byte range) that read one file and return compact results.

One unit = io + codec for one segment range (or snapshot, or txn index): it opens the file
read-only, splits its range into frames, decodes only what is asked (61-byte headers for data
batches, records only for control batches and ``__transaction_state``) and returns picklable
tuples plus findings. Data batches leave the unit as *runs* (:class:`DataBatch` with ``batches``
> 1) so that a unit's result grows with transactions, not with batches. The local executor and
the Spark executor call the same :func:`run_unit`.

:meth:`_Reader.read` folds frame by frame: the reference, and the path without the accelerator
(``KAFKA_FORENSICS_PURE=1``). With it, runs of healthy v2 batches are folded in C (``native.fold``,
csrc/fold.c: no Frame, no header tuple, no Python call per batch; the counters, the statistics and
each producer's runs come back once per call, which ends at a control batch, damage, a legacy
entry or the range's end) and everything else frame by frame as without it; both give the same
piece (tests/pipeline/test_fold.py).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import NamedTuple, cast

from forensics.codec import batch as v2
from forensics.codec import legacy
from forensics.codec.batch import (
    COMPRESSION_MASK,
    CONTROL_MASK,
    MIN_BATCH_LENGTH,
    MIN_RECORD_SIZE,
    TRANSACTIONAL_MASK,
)
from forensics.codec.compression import codec_name
from forensics.codec.control import read_control_batch
from forensics.codec.indexes import (
    scan_txn_index,
    txn_index_findings,
)
from forensics.codec.snapshot import decode_snapshot
from forensics.codec.txnlog import TransactionLogKey, decode_key, decode_value
from forensics.errors import ForensicsError, InputError
from forensics.findings import Finding, FindingKind
from forensics.io.files import WHOLE_FILE_LIMIT, FileTooLarge, MappedFile, read_small_file
from forensics.io.frames import HeadedFrame, V2Frame
from forensics.io.segment import SegmentWalk, unreadable
from forensics.pipeline.plan import UnitKind, WorkUnit
from forensics.state.coordinator import TxnLogRecord
from forensics.speedups import native
from forensics.state.events import DataBatch, Marker, ProducerEvent
from forensics.state.inputs import (
    AbortedTxnEntry,
    SegmentEvents,
    SegmentSummary,
    SnapshotRead,
    TxnLogSegment,
)

class SegmentPiece(NamedTuple):
    """What one unit read from one byte range of a segment."""

    unit: WorkUnit
    file_size: int
    summary: SegmentSummary | None  # header statistics (when asked)
    events: SegmentEvents | None  # data segments
    txnlog: TxnLogSegment | None  # __transaction_state segments
    first_base_offset: int | None  # of the range's first frame (to check the seam with the range before)
    clean: bool  # framed from start to end with no finding: may be joined with its neighbours


class TxnIndexRead(NamedTuple):
    unit: WorkUnit
    entries: tuple[AbortedTxnEntry, ...]
    findings: tuple[Finding, ...]


UnitResult = SegmentPiece | SnapshotRead | TxnIndexRead


# -- header statistics (scan) ------------------------------------------------------------------


def _miscounted(path: str, frame: V2Frame) -> Finding:
    """A checksum-valid v2 batch that declares more records than its header lets it hold."""
    h = frame.header
    room = h.last_offset_delta + 1
    if h.records_count > room:
        why = f"its offsets {h.base_offset}-{h.last_offset} hold at most {room}"
    else:
        body = h.batch_length - MIN_BATCH_LENGTH
        why = f"its {body} record bytes hold at most {body // MIN_RECORD_SIZE}"
    return Finding(FindingKind.CORRUPT_BATCH, f"batch declares {h.records_count} records but {why}", path,
                   frame.position, frame.end, h.base_offset, h.last_offset)


class _Stats:
    __slots__ = ("batches", "records", "tx", "ctl", "invalid", "first", "last", "max_ts", "magics", "codecs",
                 "miscounted")

    def __init__(self) -> None:
        self.batches = self.records = self.tx = self.ctl = self.invalid = 0
        self.first: int | None = None
        self.last: int | None = None
        self.max_ts: int | None = None
        self.magics: set = set()
        self.codecs: set = set()
        self.miscounted: list[V2Frame] = []  # checksum-valid v2 batches declaring more records than they hold

    def add(self, buf, frame: HeadedFrame) -> None:
        self.batches += 1
        self.magics.add(frame.magic)
        if frame.crc_ok is False:
            self.invalid += 1
        if frame.magic == 2:
            h = frame.header
            attrs, ts, count = h.attributes, h.max_timestamp, h.records_count
            self.records += max(count, 0)
            # no more records than offsets; uncompressed, no more than the smallest (7-byte) records fit
            if (count > h.last_offset_delta + 1 or (not attrs & COMPRESSION_MASK
                                                    and count * MIN_RECORD_SIZE > h.batch_length - MIN_BATCH_LENGTH)) \
                    and frame.crc_ok is not False:
                self.miscounted.append(frame)
            self.tx += bool(attrs & TRANSACTIONAL_MASK)
            self.ctl += bool(attrs & CONTROL_MASK)
        else:
            attrs = buf[frame.position + legacy.ATTRIBUTES_OFFSET]
            ts = legacy.entry_timestamp(buf, frame.position, frame.magic)
            self.records += 1  # inner messages of a wrapper are counted by a deep pass, not here
        self.codecs.add(codec_name(attrs & COMPRESSION_MASK))
        if self.first is None or frame.base_offset < self.first:
            self.first = frame.base_offset
        if self.last is None or frame.last_offset > self.last:
            self.last = frame.last_offset
        if self.max_ts is None or ts > self.max_ts:
            self.max_ts = ts

    def add_folded(self, frames: int, records: int, tx: int, ctl: int, first: int, last: int, max_ts: int,
                   codecs: int) -> None:
        """What :meth:`add` of each v2 batch a fold took gives (``native.fold``'s counters; ``codecs``:
        bit i set for codec id i)."""
        self.batches += frames
        self.magics.add(2)
        self.records += records
        self.tx += tx
        self.ctl += ctl
        self.codecs.update(codec_name(i) for i in range(8) if codecs >> i & 1)
        self.first = first if self.first is None else min(self.first, first)
        self.last = last if self.last is None else max(self.last, last)
        self.max_ts = max_ts if self.max_ts is None else max(self.max_ts, max_ts)

    def summary(self, path: str, base: int | None, size: int, findings: tuple[Finding, ...]) -> SegmentSummary:
        base_offset = base if base is not None else (self.first or 0)
        findings += tuple(_miscounted(path, f) for f in self.miscounted)
        return SegmentSummary(path, base_offset, size, self.batches, self.records, self.first, self.last,
                              self.max_ts, frozenset(self.magics), frozenset(self.codecs), self.tx, self.ctl,
                              self.invalid, findings)


# -- producer events, as runs --------------------------------------------------------------------


def _continues(last_sequence: int, base_sequence: int) -> bool:
    """Does a batch starting at ``base_sequence`` follow one ending at ``last_sequence``? A batch that does not
    (a repeat, a gap, a reset) stays apart from the run, so that the fold sees its sequences (unsequenced
    batches, -1, follow each other)."""
    if base_sequence < 0 or last_sequence < 0:
        return base_sequence < 0 and last_sequence < 0
    return base_sequence == (last_sequence + 1 if last_sequence < 0x7FFFFFFF else 0)


class _Runs:
    """Producer events of a range in order; consecutive batches of one producer with the same
    epoch, transactional flag and snapshot bucket become one run (see :class:`DataBatch`)."""

    def __init__(self, cuts: tuple[int, ...]) -> None:
        self.cuts = cuts
        self.events: list[Marker | list | DataBatch] = []  # a run's list until freeze()
        self.open: dict[int, tuple[tuple, list]] = {}  # pid -> (run key, run fields)
        self.txn_open: set = set()  # pids whose transaction this range saw open (no marker since)

    def data(self, h: v2.BatchHeader, pos: int) -> None:
        pid = h.producer_id
        transactional = h.is_transactional
        key = (h.producer_epoch, transactional, bisect_right(self.cuts, h.last_offset))
        current = self.open.get(pid)
        # inside a transaction this range saw open, a non-transactional batch is an anomaly the fold
        # reports per batch: keep those single
        mergeable = transactional or pid not in self.txn_open
        if current is not None and current[0] == key and mergeable and _continues(current[1][5], h.base_sequence):
            run = current[1]
            run[3], run[5], run[6] = h.last_offset, h.last_sequence, h.max_timestamp
            run[8] += h.records_count
            run[9] += h.size
            run[11] += 1
            run[13] = h.base_offset
            return
        run = [pid, h.producer_epoch, h.base_offset, h.last_offset, h.base_sequence, h.last_sequence,
               h.max_timestamp, transactional, h.records_count, h.size, pos, 1, h.max_timestamp, h.base_offset]
        self.events.append(run)
        self.open[pid] = (key, run)
        if transactional:
            self.txn_open.add(pid)

    def join(self, run: list) -> None:
        """A run ``native.fold`` made of consecutive batches of one producer within one call (laid
        out as :meth:`data` keeps runs, then its snapshot bucket and whether its first batch may join
        the producer's open run): what :meth:`data` of each of its batches gives."""
        pid, mergeable = run[0], run[15]
        key = (run[1], run[7], run[14])
        del run[14:]
        current = self.open.get(pid)
        if current is not None and current[0] == key and mergeable and _continues(current[1][5], run[4]):
            open_run = current[1]
            open_run[3], open_run[5], open_run[6] = run[3], run[5], run[6]
            open_run[8] += run[8]
            open_run[9] += run[9]
            open_run[11] += run[11]
            open_run[13] = run[13]
            return
        self.events.append(run)
        self.open[pid] = (key, run)
        if run[7]:
            self.txn_open.add(pid)

    def marker(self, m: Marker) -> None:
        self.open.pop(m.producer_id, None)
        self.txn_open.discard(m.producer_id)
        self.events.append(m)

    def break_all(self) -> None:
        """Damage: nothing joins across it (the broker's reader stops at the first invalid batch)."""
        self.open.clear()

    def freeze(self) -> tuple[ProducerEvent, ...]:
        """The events as tuples, each run's list replaced where it stands (so that the lists and the
        tuples of a large range are never all alive at once)."""
        events, self.open = self.events, {}
        for i, ev in enumerate(events):
            if not isinstance(ev, Marker):
                events[i] = DataBatch(*ev[:11]) if ev[11] == 1 else DataBatch(*ev)
        self.events = []
        return tuple(cast(list[ProducerEvent], events))  # no list left: each became its DataBatch


def _marker(buf, pos: int, h: v2.BatchHeader) -> Marker | None:
    """The end-transaction marker of a control batch, or None for other control records."""
    control = read_control_batch(buf, pos, h)
    if control is None or control.marker is None:
        return None
    m = control.marker
    return Marker(h.producer_id, h.producer_epoch, control.offset, m.is_commit, m.coordinator_epoch, h.max_timestamp,
                  pos)


# -- __transaction_state records -------------------------------------------------------------------


def _txn_record(rec, h: v2.BatchHeader, pos: int, path: str, out: list[TxnLogRecord],
                findings: list[Finding], names: dict) -> None:
    """Decode one record into ``out`` (each transactional id's text and each partition list kept once,
    in ``names``: an id has a record per state it goes through)."""
    try:
        key = decode_key(rec.key)
    except ForensicsError as exc:
        findings.append(Finding(FindingKind.CORRUPT_TRANSACTION_LOG, f"record key does not decode: {exc.message}",
                                path, pos, None, rec.offset))
        return
    if not isinstance(key, TransactionLogKey):
        findings.append(Finding(FindingKind.CORRUPT_TRANSACTION_LOG,
                                f"unknown record type {key.version}: skipped, as the coordinator does",
                                path, pos, None, rec.offset))
        return
    try:
        value = decode_value(rec.value, shared=names)
    except ForensicsError as exc:
        findings.append(Finding(FindingKind.CORRUPT_TRANSACTION_LOG,
                                f"value of {key.transactional_id!r} does not decode: {exc.message}",
                                path, pos, None, rec.offset))
        return
    tid = names.setdefault(key.transactional_id, key.transactional_id)
    out.append(TxnLogRecord(tid, value, rec.offset, rec.timestamp, h.partition_leader_epoch, pos))


# -- one segment range ---------------------------------------------------------------------------


class _Reader:
    """One pass over the frames of a segment range, feeding what the unit asks for."""

    def __init__(self, u: WorkUnit, walk: SegmentWalk[HeadedFrame]) -> None:
        self.u, self.walk, self.buf, self.path = u, walk, walk.buf, u.path
        self.stats = _Stats() if u.stats else None
        self.runs = _Runs(u.cuts) if u.kind is UnitKind.EVENTS else None
        self.records: list[TxnLogRecord] | None = [] if u.kind is UnitKind.TXNLOG else None
        self.names: dict = {}  # transactional ids and partition lists, each once
        self.findings: list[Finding] = []  # decoding findings (the walk keeps the framing ones)
        self.valid = 0
        self.next_offset: int | None = None
        self.max_ts: int | None = None
        self.first_base: int | None = None
        self.seen = 0  # the framing findings the runs were broken at

    def read(self) -> None:
        # with the accelerator, runs of healthy batches are folded in C (one call per run of a
        # producer, not per batch: _fold); every other frame as below, the reference
        runs, records = self.runs, self.records
        frames = self.walk.folded(self._fold) if native is not None and records is None else self.walk.frames()
        for frame in frames:
            if self.first_base is None:
                self.first_base = frame.base_offset
            self._at_damage()
            if self.stats is not None:
                self.stats.add(self.buf, frame)
            if frame.crc_ok is False or (records is not None and frame.magic != 2):
                continue
            self.valid += 1
            self.next_offset = max(self.next_offset or 0, frame.last_offset + 1)
            if frame.magic != 2:
                ts = legacy.entry_timestamp(self.buf, frame.position, frame.magic)
                self.max_ts = ts if self.max_ts is None else max(self.max_ts, ts)
                continue
            h = frame.header
            self.max_ts = h.max_timestamp if self.max_ts is None else max(self.max_ts, h.max_timestamp)
            if runs is not None:
                self._producer(runs, frame, h)
            elif records is not None and not h.is_control:
                self._txnlog(records, frame, h)

    def _at_damage(self) -> None:
        """Nothing joins across damage: the runs break at each new framing finding."""
        if len(self.walk.findings) != self.seen:
            self.seen = len(self.walk.findings)
            if self.runs is not None:
                self.runs.break_all()

    def _fold(self, buf, pos: int, end: int, verify: bool, base: int | None, next_offset: int | None):
        """What :meth:`read` does with each frame, for the healthy batches ``native.fold`` takes from
        ``pos`` on (SegmentWalk.folded's fold)."""
        assert native is not None  # read() folds only with the accelerator
        self._at_damage()
        runs = self.runs
        at, next_offset, valid_bytes, frames, first_base, next_after, max_ts, records, tx, ctl, first, last, codecs, \
            joined = native.fold(buf, pos, end, verify, base, next_offset, self.u.cuts,
                                 runs.txn_open if runs is not None else None, self.stats is not None)
        if frames:
            if self.first_base is None:
                self.first_base = first_base
            self.valid += frames
            self.next_offset = max(self.next_offset or 0, next_after)
            self.max_ts = max_ts if self.max_ts is None else max(self.max_ts, max_ts)
            if self.stats is not None:
                self.stats.add_folded(frames, records, tx, ctl, first, last, max_ts, codecs)
            if runs is not None:  # (joined is [] without: the fold folds no events)
                for run in joined:
                    runs.join(run)
        return at, next_offset, valid_bytes

    def _producer(self, runs: _Runs, frame: V2Frame, h: v2.BatchHeader) -> None:
        if h.producer_id < 0:
            return
        if not h.is_control:
            runs.data(h, frame.position)
            return
        try:
            marker = _marker(self.buf, frame.position, h)
        except ForensicsError as exc:
            self.findings.append(self.walk.finding(frame, f"control batch does not decode: {exc.message}"))
            return
        if marker is not None:
            runs.marker(marker)

    def _txnlog(self, out: list[TxnLogRecord], frame: V2Frame, h: v2.BatchHeader) -> None:
        records, error = self.walk.records(frame)
        for rec in records:
            _txn_record(rec, h, frame.position, self.path, out, self.findings, self.names)
        if error is not None:
            self.findings.append(self.walk.finding(frame, f"batch records do not decode: {error.message}"))

    def piece(self) -> SegmentPiece:
        u, walk = self.u, self.walk
        base = u.base_offset if u.base_offset is not None else 0
        framing = tuple(walk.findings)
        size = walk.size
        summary = self.stats.summary(u.path, u.base_offset, size, framing) if self.stats is not None else None
        events = txnlog = None
        if self.runs is not None:
            events = SegmentEvents(u.path, base, size, self.runs.freeze(), self.valid, self.next_offset, self.max_ts,
                                   walk.first_invalid_position, framing + tuple(self.findings))
        if self.records is not None:
            txnlog = TxnLogSegment(u.path, base, size, tuple(self.records), self.next_offset, self.max_ts,
                                   framing + tuple(self.findings))
        return SegmentPiece(u, size, summary, events, txnlog, self.first_base, not framing and not self.findings)


def _unreadable_piece(u: WorkUnit, exc: InputError) -> SegmentPiece:
    finding = (unreadable(u.path, exc),)
    base = u.base_offset or 0
    summary = SegmentSummary(u.path, base, 0, findings=finding) if u.stats else None
    events = SegmentEvents(u.path, base, 0, (), 0, None, None, None, finding) if u.kind is UnitKind.EVENTS else None
    txnlog = TxnLogSegment(u.path, base, 0, (), None, None, finding) if u.kind is UnitKind.TXNLOG else None
    return SegmentPiece(u, 0, summary, events, txnlog, None, False)


def read_segment(u: WorkUnit) -> SegmentPiece:
    """Run a segment unit (events, txnlog or stats) over its byte range."""
    try:
        walk = SegmentWalk(u.path, start=u.start, end=u.end, base_offset=u.base_offset)
    except InputError as exc:
        return _unreadable_piece(u, exc)
    with walk:
        reader = _Reader(u, walk)
        reader.read()
        return reader.piece()


# -- snapshots and transaction indexes ---------------------------------------------------------------


def read_snapshot(path: str, offset: int) -> SnapshotRead:
    """A ``.snapshot`` decoded (CRC checked); damage is a finding, never an exception."""
    try:
        snap = decode_snapshot(read_small_file(path, WHOLE_FILE_LIMIT), verify_crc=True)
    except ForensicsError as exc:
        return SnapshotRead(path, offset, None, (Finding(FindingKind.CORRUPT_SNAPSHOT, exc.message, path,
                                                         exc.position),))
    if not snap.crc_valid:
        return SnapshotRead(path, offset, snap, (Finding(
            FindingKind.CORRUPT_SNAPSHOT, f"snapshot CRC mismatch: stored {snap.crc}, computed {snap.computed_crc} "
            "(the broker deletes it and loads an older one)", path, 2),))
    return SnapshotRead(path, offset, snap, ())


def read_txn_index(path: str) -> tuple[tuple[AbortedTxnEntry, ...], tuple[Finding, ...]]:
    """Entries of a ``.txnindex`` with their byte positions; damage becomes findings."""
    try:
        mf = MappedFile(path)
    except InputError as exc:
        return (), (unreadable(path, exc),)
    with mf:
        if mf.size > WHOLE_FILE_LIMIT:
            return (), (unreadable(path, FileTooLarge(path, mf.size, WHOLE_FILE_LIMIT)),)
        scan = scan_txn_index(mf.data, mf.holes)  # a sparse file's holes are not read
    entries = tuple(AbortedTxnEntry(e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset, path,
                                    pos) for pos, e in zip(scan.positions, scan.entries))
    return entries, txn_index_findings(scan, path, mf.size)


def run_unit(u: WorkUnit) -> UnitResult:
    """The one entry point both executors call."""
    if u.kind is UnitKind.SNAPSHOT:
        return read_snapshot(u.path, u.base_offset if u.base_offset is not None else 0)
    if u.kind is UnitKind.TXNINDEX:
        entries, findings = read_txn_index(u.path)
        return TxnIndexRead(u, entries, findings)
    return read_segment(u)


# -- single-file conveniences (tests, dump-style callers) ----------------------------------------------


def producer_events(path: str, base_offset: int | None = None) -> SegmentEvents:
    """Producer events of one whole segment."""
    piece = read_segment(WorkUnit(UnitKind.EVENTS, path, path, base_offset))
    assert piece.events is not None
    return piece.events


def txn_log_records(path: str, base_offset: int | None = None) -> TxnLogSegment:
    """Every ``__transaction_state`` record of one whole segment, keys and values decoded."""
    piece = read_segment(WorkUnit(UnitKind.TXNLOG, path, path, base_offset))
    assert piece.txnlog is not None
    return piece.txnlog
