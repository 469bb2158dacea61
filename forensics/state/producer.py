"""A partition replica's producer state, folded with the broker's replication semantics.

Mirrors ``ProducerStateManager`` / ``ProducerAppendInfo`` / ``ProducerStateEntry``
on the *replication and recovery* path: nothing is rejected. Where the broker's leader
path would refuse a batch (epoch or coordinator epoch going backwards) or where every path throws
(``InvalidTxnStateException``: a non-transactional batch inside an open transaction) the fold
applies what the replication path applies and records a :class:`Finding` with file, byte position
and offset. Batches are applied one at a time, as ``LogSegment.recover`` does.

Besides the broker's entry per producer id the fold keeps, for forensics, every transaction it
saw on the partition (:class:`TransactionSpan`: first offset, marker, outcome, epochs, size).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import field
from forensics.dataclass_fast import dataclass

from forensics.codec.snapshot import ProducerStateEntry
from forensics.findings import Finding, FindingKind, FindingRuns
from forensics.model import Provenance
from forensics.state.events import DataBatch, Marker, ProducerEvent

NO_EPOCH = -1


@dataclass(frozen=True, slots=True)
class ProducerState:
    """One producer id's entry as the broker holds it (what ``DescribeProducers`` returns)."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int  # of the last end-transaction marker, -1 if none
    last_sequence: int  # of the last data batch of the current epoch, -1 if none
    last_offset: int  # last offset of that batch, -1 if none
    offset_delta: int
    last_timestamp: int  # last data batch's maxTimestamp or last marker's timestamp
    current_txn_first_offset: int | None

    @property
    def latest_coordinator_epoch(self) -> int:
        """The coordinator epoch as ``DescribeProducers`` reports it: Kafka's admin client
        (``DescribeProducersHandler``) reads a negative one as none, which ``kafka-transactions.sh``
        prints as -1; the entry itself may hold another negative value (a snapshot's int32)."""
        return self.coordinator_epoch if self.coordinator_epoch >= 0 else NO_EPOCH

    @property
    def abort_coordinator_epoch(self) -> int:
        """The ``--coordinator-epoch`` an abort of this producer's transaction passes: the reported one,
        none (-1) as 0, as ``kafka-transactions.sh abort --start-offset`` does (Kafka's
        ``TransactionsCommand``: ``coordinatorEpoch().orElse(0)``)."""
        return max(self.latest_coordinator_epoch, 0)


@dataclass(frozen=True, slots=True)
class TransactionSpan:
    """One transaction of one producer on this partition: its data and, if any, its marker."""

    producer_id: int
    first_offset: int
    last_data_offset: int | None  # None: no data seen (opened before a snapshot, or empty)
    data_epochs: tuple[int, ...]
    batches: int
    records: int
    bytes: int
    first_timestamp: int | None  # maxTimestamp of the first data batch (header-only)
    last_timestamp: int | None
    start: Provenance | None  # first data batch seen
    marker_offset: int | None = None
    outcome: str | None = None  # "COMMIT" | "ABORT" | None while open
    marker_epoch: int | None = None
    coordinator_epoch: int | None = None
    marker_timestamp: int | None = None
    marker_at: Provenance | None = None
    from_snapshot: bool = False  # opened before the replay started (first offset from a snapshot)
    duplicate_at: Provenance | None = None  # its first batch repeating sequence numbers already written

    @property
    def is_open(self) -> bool:
        return self.marker_offset is None


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """``CompletedTxn`` plus the last stable offset the broker computes for it
    (``ProducerStateManager.lastStableOffset``)."""

    producer_id: int
    first_offset: int
    last_offset: int  # the marker's offset
    is_aborted: bool
    last_stable_offset: int


@dataclass(frozen=True, slots=True)
class ProducerFold:
    """Result of folding a partition's events: entries, open and completed transactions."""

    entries: dict[int, ProducerState]
    ongoing: dict[int, int]  # producer id -> first offset of its open transaction
    completed: tuple[CompletedTxn, ...]
    spans: dict[int, tuple[TransactionSpan, ...]]  # per producer, in offset order
    findings: tuple[Finding, ...]
    last_offset: int | None  # highest offset applied (map end offset - 1)
    events: int = 0


@dataclass
class _Span:
    first_offset: int
    from_snapshot: bool = False
    last_data_offset: int | None = None
    epochs: list[int] = field(default_factory=list)
    batches: int = 0
    records: int = 0
    bytes: int = 0
    first_ts: int | None = None
    last_ts: int | None = None
    start: Provenance | None = None
    duplicate_at: Provenance | None = None

    def add(self, b: DataBatch, path: str) -> None:
        if b.epoch not in self.epochs:
            self.epochs.append(b.epoch)
        if self.start is None:
            self.start = Provenance(path, b.position)
            self.first_ts = b.first_max_timestamp
        self.last_data_offset = b.last_offset
        self.last_ts = b.max_timestamp
        self.batches += b.batches
        self.records += b.records
        self.bytes += b.size

    def freeze(self, pid: int, marker: Marker | None = None, path: str = "") -> TransactionSpan:
        base = TransactionSpan(pid, self.first_offset, self.last_data_offset, tuple(self.epochs), self.batches,
                               self.records, self.bytes, self.first_ts, self.last_ts, self.start,
                               from_snapshot=self.from_snapshot, duplicate_at=self.duplicate_at)
        if marker is None:
            return base
        return TransactionSpan(
            pid, self.first_offset, self.last_data_offset, tuple(self.epochs), self.batches, self.records,
            self.bytes, self.first_ts, self.last_ts, self.start, marker.offset,
            "COMMIT" if marker.commit else "ABORT", marker.epoch, marker.coordinator_epoch, marker.timestamp,
            Provenance(path, marker.position), self.from_snapshot, self.duplicate_at)


class _Entry:
    __slots__ = ("epoch", "last_seq", "last_offset", "offset_delta", "last_ts", "coord_epoch", "txn_first", "span",
                 "earlier")

    def __init__(self) -> None:
        self.epoch = NO_EPOCH
        self.last_seq = -1
        self.last_offset = -1
        self.offset_delta = 0
        self.last_ts = -1
        self.coord_epoch = -1
        self.txn_first: int | None = None
        self.span: _Span | None = None
        self.earlier: dict[int, int] | None = None  # epoch -> last sequence written at it, for a few past epochs

    def set_epoch(self, epoch: int) -> None:
        """``maybeUpdateProducerEpoch``: a new epoch clears the batch metadata (the sequences reached at the
        old one are kept aside: a batch of that epoch repeating them later is a duplicate)."""
        if epoch != self.epoch:
            if self.last_seq >= 0:
                earlier = self.earlier if self.earlier is not None else {}
                earlier[self.epoch] = max(self.last_seq, earlier.get(self.epoch, -1))
                if len(earlier) > _EARLIER_EPOCHS:
                    del earlier[min(earlier)]
                self.earlier = earlier
            self.epoch = epoch
            self.last_seq, self.last_offset, self.offset_delta = -1, -1, 0

    def last_sequence_at(self, epoch: int) -> int:
        """The last sequence written at ``epoch`` (-1: none known)."""
        if epoch == self.epoch:
            return self.last_seq
        return self.earlier.get(epoch, -1) if self.earlier is not None else -1

    def freeze(self, pid: int) -> ProducerState:
        return ProducerState(pid, self.epoch, self.coord_epoch, self.last_seq, self.last_offset, self.offset_delta,
                             self.last_ts, self.txn_first)


_MAX_SEQUENCE = 2**31 - 1
_WRAP_WINDOW = 1 << 20  # sequences wrap at Integer.MAX_VALUE to 0 (DefaultRecordBatch.incrementSequence)
_EARLIER_EPOCHS = 8  # past epochs whose last sequence a producer entry keeps


def _repeats_sequence(e: _Entry, b: DataBatch) -> bool:
    """A transactional batch whose sequences do not move past the last one its producer wrote at that epoch (not the
    wrap from near Integer.MAX_VALUE back to 0): ``ProducerAppendInfo`` on a leader refuses it at the current epoch
    (DUPLICATE_SEQUENCE_NUMBER) and an older epoch's batch outright; a late batch of an expired producer (KAFKA-9144)
    carries the sequences its producer had not written yet. A log holding it holds a duplicated, renumbered or
    replayed batch."""
    if not b.transactional or b.base_sequence < 0:
        return False  # an idempotent producer whose entry expired may start again at 0 (pre-KIP-360 clients)
    last = e.last_sequence_at(b.epoch)
    if last < 0:
        return False
    wrapped = last > _MAX_SEQUENCE - _WRAP_WINDOW and b.base_sequence < _WRAP_WINDOW
    return b.base_sequence <= last and not wrapped


class ProducerStateBuilder:
    """Fold v2 producer batches of one partition replica, in offset order.

    ``initial``: entries of a loaded ``.snapshot`` (the broker-equivalent rebuild starts there).
    ``cleaner_offset``: the cleaner-offset-checkpoint; below it a marker without its transaction's
    data is no finding (the log cleaner removed data that later records superseded; the marker
    stays until its delete horizon). ``sequenced``: the batches come from clients, whose sequences a
    leader checks (``__consumer_offsets``' transactional offset commits are the group coordinator's own
    appends, ``AppendOrigin.COORDINATOR``, whose sequences nobody checks).

    Findings are aggregated per kind and producer (:class:`~forensics.findings.FindingRuns`): a log
    replaying one producer's history yields a few findings and a count, not one object per batch.
    """

    def __init__(self, initial: Iterable[ProducerStateEntry] = (), cleaner_offset: int | None = None,
                 sequenced: bool = True) -> None:
        self._entries: dict[int, _Entry] = {}
        self._ongoing: dict[int, int] = {}
        self._oldest: list[tuple[int, int]] = []  # heap of (first offset, pid) of _ongoing; stale entries skipped
        self._completed: list[CompletedTxn] = []
        self._spans: dict[int, list[TransactionSpan]] = {}
        self._findings = FindingRuns()
        self._cleaner_offset = cleaner_offset
        self._sequenced = sequenced  # a client's log (a coordinator writes its own batches unsequenced)
        self._last_offset: int | None = None
        self._events = 0
        for s in initial:
            e = _Entry()
            e.epoch, e.coord_epoch, e.last_ts = s.producer_epoch, s.coordinator_epoch, s.last_timestamp
            if s.batch_metadata is not None:
                m = s.batch_metadata
                e.last_seq, e.last_offset, e.offset_delta = m.last_seq, m.last_offset, m.offset_delta
            if s.current_txn_first_offset is not None:
                e.txn_first = s.current_txn_first_offset
                e.span = _Span(s.current_txn_first_offset, from_snapshot=True)
                self._open(s.producer_id, s.current_txn_first_offset)
            self._entries[s.producer_id] = e

    # -- applying ------------------------------------------------------------------------------

    def apply_all(self, path: str, events: Iterable[ProducerEvent]) -> None:
        for ev in events:
            self.apply(path, ev)

    def apply(self, path: str, ev: ProducerEvent) -> None:
        self._events += 1
        if isinstance(ev, Marker):
            self._marker(path, ev)
            last = ev.offset
        else:
            self._data(path, ev)
            last = ev.last_offset
        if self._last_offset is None or last > self._last_offset:
            self._last_offset = last

    def _entry(self, pid: int) -> _Entry:
        e = self._entries.get(pid)
        if e is None:
            e = self._entries[pid] = _Entry()
        return e

    def _finding(self, kind: FindingKind, pid: int, message: str, path: str, position: int, first: int,
                 last: int | None = None) -> None:
        self._findings.add(Finding(kind, f"producer {pid}: {message}", path, position, None, first, last),
                           f"producer {pid}")

    def _data(self, path: str, b: DataBatch) -> None:
        e = self._entry(b.producer_id)
        if b.epoch < e.epoch:
            self._finding(FindingKind.EPOCH_REGRESSION, b.producer_id,
                          f"data batch at epoch {b.epoch} after epoch {e.epoch} "
                          "(a leader would reject it with INVALID_PRODUCER_EPOCH; replication applies it)",
                          path, b.position, b.base_offset, b.last_offset)
        duplicate = self._sequenced and _repeats_sequence(e, b)
        if duplicate:
            self._finding(FindingKind.DUPLICATE_SEQUENCE, b.producer_id,
                          f"batch with sequence {b.base_sequence} at epoch {b.epoch} after sequence "
                          f"{e.last_sequence_at(b.epoch)} of that epoch (a leader refuses it with "
                          "DUPLICATE_SEQUENCE_NUMBER: a duplicated or replayed batch)", path, b.position, b.base_offset, b.last_offset)
        if e.txn_first is not None and b.epoch != e.epoch and b.transactional:
            self._finding(FindingKind.TRANSACTION_SPANS_EPOCHS, b.producer_id,
                          f"transaction open since offset {e.txn_first} at epoch "
                          f"{e.epoch} continues with a batch at epoch {b.epoch}",
                          path, b.position, b.base_offset, b.last_offset)
        e.set_epoch(b.epoch)
        e.last_seq, e.last_offset, e.offset_delta = b.last_sequence, b.last_offset, b.offset_delta
        e.last_ts = b.max_timestamp
        if e.txn_first is not None and not b.transactional:
            what = "non-transactional batch" if b.batches == 1 else f"{b.batches} consecutive non-transactional batches"
            self._finding(FindingKind.INVALID_TXN_STATE, b.producer_id,
                          f"{what} inside its transaction open since "
                          f"offset {e.txn_first} (the broker throws InvalidTxnStateException)",
                          path, b.position, b.base_offset, b.last_offset)
        elif b.transactional:
            if e.txn_first is None:
                e.txn_first = b.base_offset
                e.span = _Span(b.base_offset)
                self._open(b.producer_id, b.base_offset)
            if e.span is None:  # opened in a snapshot taken before any of its data we replay
                e.span = _Span(e.txn_first, from_snapshot=True)
            if duplicate and e.span.duplicate_at is None:
                e.span.duplicate_at = Provenance(path, b.position)
            e.span.add(b, path)

    def _marker(self, path: str, m: Marker) -> None:
        e = self._entry(m.producer_id)
        kind = "COMMIT" if m.commit else "ABORT"
        if m.epoch < e.epoch:
            self._finding(FindingKind.EPOCH_REGRESSION, m.producer_id,
                          f"{kind} marker at epoch {m.epoch} after epoch {e.epoch} "
                          "(a leader would reject it with INVALID_PRODUCER_EPOCH)", path, m.position, m.offset)
        if e.coord_epoch > m.coordinator_epoch:
            self._finding(FindingKind.COORDINATOR_EPOCH_REGRESSION, m.producer_id,
                          f"{kind} marker with coordinatorEpoch {m.coordinator_epoch} "
                          f"after {e.coord_epoch} (a leader would reject it with TRANSACTION_COORDINATOR_FENCED)",
                          path, m.position, m.offset)
        if e.txn_first is not None:
            self._complete(m, e.txn_first)
            span = e.span or _Span(e.txn_first)
            self._spans.setdefault(m.producer_id, []).append(span.freeze(m.producer_id, m, path))
        else:
            if self._cleaner_offset is None or m.offset >= self._cleaner_offset:
                self._finding(FindingKind.MARKER_WITHOUT_TRANSACTION, m.producer_id,
                              f"{kind} marker with no open transaction (an empty transaction, "
                              "or a marker written by an administrator)", path, m.position, m.offset)
            empty = _Span(m.offset)
            self._spans.setdefault(m.producer_id, []).append(empty.freeze(m.producer_id, m, path))
        e.set_epoch(m.epoch)
        e.coord_epoch = m.coordinator_epoch
        e.txn_first, e.span = None, None
        e.last_ts = m.timestamp

    def _open(self, pid: int, first: int) -> None:
        self._ongoing[pid] = first
        heapq.heappush(self._oldest, (first, pid))

    def _complete(self, m: Marker, first: int) -> None:
        """``ProducerStateManager.lastStableOffset`` then ``completeTxn``."""
        del self._ongoing[m.producer_id]
        heap = self._oldest
        while heap and self._ongoing.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)  # completed since it was pushed
        lso = heap[0][0] if heap else m.offset + 1
        self._completed.append(CompletedTxn(m.producer_id, first, m.offset, not m.commit, lso))

    # -- result --------------------------------------------------------------------------------

    def finish(self) -> ProducerFold:
        spans = {pid: list(s) for pid, s in self._spans.items()}
        for pid, e in self._entries.items():
            if e.span is not None:
                spans.setdefault(pid, []).append(e.span.freeze(pid))
        return ProducerFold(
            entries={pid: e.freeze(pid) for pid, e in sorted(self._entries.items())},
            ongoing=dict(sorted(self._ongoing.items(), key=lambda kv: kv[1])),
            completed=tuple(self._completed),
            spans={pid: tuple(sorted(s, key=lambda t: t.first_offset)) for pid, s in sorted(spans.items())},
            findings=self._findings.findings(),
            last_offset=self._last_offset,
            events=self._events,
        )
