"""The transaction coordinator's metadata, folded from one ``__transaction_state`` partition.

Emulates ``TransactionStateManager.loadTransactionMetadata``: every record from the
log start to the log end (above the high watermark too), in offset order; a tombstone removes the
transactional id, a value replaces its metadata (the partition set only counts when the state is
not Empty). Like the coordinator the fold keeps one metadata per id (plus the few facts of its
history the verdicts read: first and last record, last decision, producer ids used); the full history
only of the ids a caller keeps (``keep_history``: the commands that print it). Every transition is
checked against :mod:`forensics.state.transitions`; illegal ones become findings.
"""

from __future__ import annotations

from dataclasses import field, fields
from forensics.dataclass_fast import dataclass
from enum import Enum
from operator import attrgetter
from typing import NamedTuple
from collections.abc import Callable, Iterable, Sequence

from forensics.codec.txnlog import TransactionLogValue, TransactionStatus
from forensics.findings import Finding, FindingKind, FindingRuns
from forensics.model import Provenance, TopicPartition
from forensics.state.transitions import transition_problem


class TxnLogRecord(NamedTuple):
    """One decoded ``__transaction_state`` record (``value`` None = tombstone)."""

    transactional_id: str
    value: TransactionLogValue | None
    offset: int
    timestamp: int
    leader_epoch: int  # partitionLeaderEpoch of its batch = the writer's coordinator epoch
    position: int  # byte position of its batch in the segment


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One record of a transactional id's history, with where it was read."""

    offset: int
    timestamp: int
    leader_epoch: int
    value: TransactionLogValue | None
    at: Provenance

    @property
    def state_name(self) -> str:
        return _state_name(None if self.value is None else self.value.status)


class RecordRef(NamedTuple):
    """Where one record of an id's history was read, and its state (without the rest of its value)."""

    offset: int
    timestamp: int
    status: TransactionStatus | int | None  # None: a tombstone
    at: Provenance

    @property
    def state_name(self) -> str:
        return _state_name(self.status)


def _state_name(s: TransactionStatus | int | None) -> str:
    if s is None:
        return "<tombstone>"
    return s.kafka_name if isinstance(s, TransactionStatus) else f"Unknown({s})"


def _tps(partitions: Sequence[TopicPartition]) -> str:
    return "{" + ", ".join(sorted(map(str, partitions))) + "}"


class IllegalRecord(NamedTuple):
    """A record a coordinator would not have written after the id's previous one (or cannot load)."""

    offset: int
    at: Provenance
    problem: str  # "PrepareCommit -> Empty is not a valid transition", "unknown transaction status 9"


class Decision(str, Enum):
    """What the coordinator decided for a transaction: its PrepareCommit/CompleteCommit or
    PrepareAbort/CompleteAbort record (``TransactionCoordinator.endTransaction``)."""

    COMMIT = "COMMIT"
    ABORT = "ABORT"


@dataclass(frozen=True, slots=True)
class IdSummary:
    """What the verdicts read of an id's history, kept whether or not the history is."""

    first: RecordRef
    last: RecordRef
    decision: Decision | None  # the last Prepare/Complete record's; None if none
    producer_ids: tuple[int, ...]  # every producer id its records carried, in order of appearance
    illegal: IllegalRecord | None = None  # the first record that contradicts the ones before it


# status -> the decision it records (TransactionCoordinator: PrepareX then CompleteX)
_DECISIONS = {TransactionStatus.PREPARE_COMMIT: Decision.COMMIT, TransactionStatus.COMPLETE_COMMIT: Decision.COMMIT,
              TransactionStatus.PREPARE_ABORT: Decision.ABORT, TransactionStatus.COMPLETE_ABORT: Decision.ABORT}
KeepHistory = Callable[[str], bool] | None  # which ids keep their full history; None: every id


@dataclass(frozen=True, slots=True)
class TransactionMetadata:
    """The coordinator's current metadata for one transactional id (``TransactionMetadata``)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TransactionStatus | int
    partitions: tuple[TopicPartition, ...]  # empty unless Ongoing / PrepareX
    last_update_ms: int
    start_ms: int  # -1 when no transaction started
    previous_producer_id: int
    next_producer_id: int
    client_transaction_version: int
    offset: int  # of the record this metadata comes from
    leader_epoch: int

    @property
    def state_name(self) -> str:
        s = self.state
        return s.kafka_name if isinstance(s, TransactionStatus) else f"Unknown({s})"


# the states whose transaction timeout is the previous record's (TransactionMetadata.completeTransitionTo:
# only InitProducerId, which writes Empty, sets a new one)
_SAME_TIMEOUT = frozenset((TransactionStatus.ONGOING, TransactionStatus.PREPARE_COMMIT, TransactionStatus.PREPARE_ABORT,
                           TransactionStatus.COMPLETE_COMMIT, TransactionStatus.COMPLETE_ABORT))


# what a record says of its id, all but where it was written (its offset and leader epoch): equal in two
# records in a row, the second is a copy of the first
_WRITTEN = attrgetter(*(f.name for f in fields(TransactionMetadata) if f.compare and f.name not in ("offset", "leader_epoch")))


def _rewritten(previous: TransactionMetadata, new: TransactionMetadata) -> str | None:
    """Why the record of ``new`` cannot follow that of ``previous`` although the transition itself is
    valid: what a coordinator never writes (an older record re-appended, or an edited one), or None."""
    same_producer = new.producer_id == previous.producer_id
    if same_producer and new.producer_epoch < previous.producer_epoch:
        # TransactionMetadata only ever bumps a producer id's epoch (a new id when it is exhausted)
        return (f"producer epoch {new.producer_epoch} after {previous.producer_epoch} for producer id "
                f"{new.producer_id} (a coordinator never lowers an epoch: an older record re-appended)")
    if same_producer and previous.state == TransactionStatus.ONGOING \
            and new.state in (TransactionStatus.PREPARE_COMMIT, TransactionStatus.PREPARE_ABORT) \
            and (set(new.partitions) != set(previous.partitions) or new.start_ms != previous.start_ms):
        # TransactionMetadata.prepareAbortOrCommit keeps the transaction's partitions and start time
        return (f"{new.state_name} of another transaction than the Ongoing one before it (partitions "
                f"{_tps(new.partitions)} started at {new.start_ms}, not {_tps(previous.partitions)} "
                f"started at {previous.start_ms}): an older record re-appended")
    if new.leader_epoch == previous.leader_epoch and new.last_update_ms < previous.last_update_ms:
        return (f"txnLastUpdateTimestamp {new.last_update_ms} before the previous record's {previous.last_update_ms}, "
                f"both written by the coordinator of leader epoch {new.leader_epoch} (one clock: an older record "
                "re-appended)")
    if _WRITTEN(new) == _WRITTEN(previous):
        # every write changes the state, the epoch, the partitions or at least the update time
        return "the same record as the one before it (a coordinator writes only what changes: a record re-appended)"
    if new.state in _SAME_TIMEOUT and new.timeout_ms != previous.timeout_ms:
        return (f"transaction timeout {new.timeout_ms} ms after {previous.timeout_ms} ms in {new.state_name} "
                "(TransactionMetadata keeps it: only InitProducerId, writing Empty, sets one)")
    if new.state == previous.state == TransactionStatus.ONGOING and not set(previous.partitions) <= set(new.partitions):
        return (f"Ongoing with partitions {_tps(new.partitions)} after Ongoing with {_tps(previous.partitions)} "
                "(a transaction's partitions only grow)")
    return None


@dataclass(frozen=True, slots=True)
class CoordinatorPartitionState:
    """Folded ``__transaction_state-<partition>`` replica."""

    partition: int
    metadata: dict[str, TransactionMetadata]  # live ids (tombstoned ones removed)
    tombstoned: dict[str, HistoryEntry]  # ids whose last record is a tombstone
    history: dict[str, tuple[HistoryEntry, ...]]  # every record per kept id, in offset order
    max_leader_epoch: int  # over batches; -1 when the partition holds no batch
    last_offset: int | None
    records: int
    findings: tuple[Finding, ...]
    summaries: dict[str, IdSummary] = field(default_factory=dict)  # every id seen, in id order
    newest_update: dict[str, int] = field(default_factory=dict)  # path -> newest txnLastUpdateTimestamp
    value_versions: frozenset = frozenset()  # TransactionLogValue versions read


def metadata_of(tid: str, v: TransactionLogValue, offset: int, leader_epoch: int,
                cache: dict[tuple, tuple[TopicPartition, ...]] | None = None) -> TransactionMetadata:
    """The metadata a value gives (``cache``: one partition tuple per partition set, shared)."""
    keep = v.status_id != TransactionStatus.EMPTY and v.partitions is not None
    parts: tuple[TopicPartition, ...] = ()
    if keep and v.partitions:
        cached = cache.get(v.partitions) if cache is not None else None
        if cached is not None:
            parts = cached
        else:
            parts = tuple(TopicPartition(t.topic, p) for t in v.partitions for p in t.partition_ids)
            if cache is not None:
                cache[v.partitions] = parts
    return TransactionMetadata(tid, v.producer_id, v.producer_epoch, v.transaction_timeout_ms, v.status, parts,
                               v.last_update_timestamp_ms, v.start_timestamp_ms, v.previous_producer_id,
                               v.next_producer_id, v.client_transaction_version, offset, leader_epoch)


class CoordinatorFold:
    """Fold the records of one ``__transaction_state`` partition replica, in offset order.
    Findings are aggregated per kind and transactional id (:class:`~forensics.findings.FindingRuns`)."""

    def __init__(self, partition: int, keep_history: KeepHistory = None) -> None:
        self.partition = partition
        self._keep = keep_history
        self._metadata: dict[str, TransactionMetadata] = {}
        self._tombstoned: dict[str, HistoryEntry] = {}
        self._history: dict[str, list[HistoryEntry]] = {}
        self._first: dict[str, RecordRef] = {}
        self._last: dict[str, RecordRef] = {}
        self._decision: dict[str, Decision] = {}
        self._pids: dict[str, tuple[int, ...]] = {}
        self._illegal: dict[str, IllegalRecord] = {}
        self._newest_update: dict[str, int] = {}
        self._versions: set = set()
        self._parts: dict[tuple, tuple[TopicPartition, ...]] = {}  # one tuple per partition set seen
        self._findings = FindingRuns()
        self._max_epoch = -1
        self._last_offset: int | None = None
        self._records = 0

    def apply_all(self, path: str, records: Iterable[TxnLogRecord]) -> None:
        for r in records:
            self.apply(path, r)

    def apply(self, path: str, r: TxnLogRecord) -> None:
        self._records += 1
        self._max_epoch = max(self._max_epoch, r.leader_epoch)
        if self._last_offset is None or r.offset > self._last_offset:
            self._last_offset = r.offset
        tid, v = r.transactional_id, r.value
        entry = HistoryEntry(r.offset, r.timestamp, r.leader_epoch, v, Provenance(path, r.position))
        if self._keep is None or self._keep(tid):
            self._history.setdefault(tid, []).append(entry)
        self._summarize(tid, entry)
        if v is None:
            self._metadata.pop(tid, None)
            self._tombstoned[tid] = entry
            return
        if path not in self._newest_update or v.last_update_timestamp_ms > self._newest_update[path]:
            self._newest_update[path] = v.last_update_timestamp_ms
        self._versions.add(v.version)
        self._tombstoned.pop(tid, None)
        new = metadata_of(tid, v, r.offset, r.leader_epoch, self._parts)
        self._check(path, r, self._metadata.get(tid), new)
        self._metadata[tid] = new

    def _summarize(self, tid: str, h: HistoryEntry) -> None:
        ref = RecordRef(h.offset, h.timestamp, None if h.value is None else h.value.status, h.at)
        self._first.setdefault(tid, ref)
        self._last[tid] = ref
        v = h.value
        if v is None:
            return
        decision = _DECISIONS.get(v.status) if isinstance(v.status, TransactionStatus) else None
        if decision is not None:
            self._decision[tid] = decision
        pids = self._pids.get(tid, ())
        if v.producer_id not in pids:
            self._pids[tid] = pids + (v.producer_id,)

    def _check(self, path: str, r: TxnLogRecord, previous: TransactionMetadata | None,
               new: TransactionMetadata) -> None:
        v = r.value
        if v is None:
            return
        if not v.status_known:
            subject = f"transactional id {r.transactional_id!r}"
            self._illegal.setdefault(r.transactional_id, IllegalRecord(
                r.offset, Provenance(path, r.position), f"unknown transaction status {v.status_id}"))
            self._findings.add(Finding(
                FindingKind.UNKNOWN_TRANSACTION_STATUS,
                f"{subject}: unknown transaction status {v.status_id} "
                "(Kafka throws IllegalStateException loading it)", path, r.position, None, r.offset), subject)
            return
        prev_state = previous.state if previous is not None and isinstance(previous.state, TransactionStatus) else None
        problem = transition_problem(prev_state, TransactionStatus(v.status_id), v.client_transaction_version)
        if problem is None and previous is not None:
            problem = _rewritten(previous, new)
        if problem is not None:
            subject = f"transactional id {r.transactional_id!r}"
            self._illegal.setdefault(r.transactional_id, IllegalRecord(r.offset, Provenance(path, r.position), problem))
            self._findings.add(Finding(
                FindingKind.ILLEGAL_TRANSITION, f"{subject}: {problem}"
                + (f" (previous record at offset {previous.offset})" if previous is not None else ""),
                path, r.position, None, r.offset), subject)

    def finish(self) -> CoordinatorPartitionState:
        return CoordinatorPartitionState(
            self.partition, dict(sorted(self._metadata.items())), dict(sorted(self._tombstoned.items())),
            {k: tuple(v) for k, v in sorted(self._history.items())}, self._max_epoch, self._last_offset,
            self._records, self._findings.findings(),
            {tid: IdSummary(first, self._last[tid], self._decision.get(tid), self._pids.get(tid, ()),
                            self._illegal.get(tid))
             for tid, first in sorted(self._first.items())},
            self._newest_update, frozenset(self._versions))
