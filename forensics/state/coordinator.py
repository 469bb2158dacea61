"""The transaction coordinator's metadata, folded from one ``__transaction_state`` partition.

Emulates ``TransactionStateManager.loadTransactionMetadata``: every record from the
log start to the log end (above the high watermark too), in offset order; a tombstone removes the
transactional id, a value replaces its metadata (the partition set only counts when the state is
not Empty). Unlike the coordinator the fold keeps each id's full history and checks every
transition against :mod:`forensics.state.transitions`; illegal ones become findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, NamedTuple, Optional, Tuple, Union

from forensics.codec.txnlog import TransactionLogValue, TransactionStatus
from forensics.findings import Finding, FindingKind, FindingRuns
from forensics.model import Provenance, TopicPartition
from forensics.state.transitions import transition_problem


class TxnLogRecord(NamedTuple):
    """One decoded ``__transaction_state`` record (``value`` None = tombstone)."""

    transactional_id: str
    value: Optional[TransactionLogValue]
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
    value: Optional[TransactionLogValue]
    at: Provenance

    @property
    def state_name(self) -> str:
        if self.value is None:
            return "<tombstone>"
        s = self.value.status
        return s.kafka_name if isinstance(s, TransactionStatus) else f"Unknown({s})"


@dataclass(frozen=True, slots=True)
class TransactionMetadata:
    """The coordinator's current metadata for one transactional id (``TransactionMetadata``)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: Union[TransactionStatus, int]
    partitions: Tuple[TopicPartition, ...]  # empty unless Ongoing / PrepareX
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


@dataclass(frozen=True, slots=True)
class CoordinatorPartitionState:
    """Folded ``__transaction_state-<partition>`` replica."""

    partition: int
    metadata: Dict[str, TransactionMetadata]  # live ids (tombstoned ones removed)
    tombstoned: Dict[str, HistoryEntry]  # ids whose last record is a tombstone
    history: Dict[str, Tuple[HistoryEntry, ...]]  # every record per id, in offset order
    max_leader_epoch: int  # over batches; -1 when the partition holds no batch
    last_offset: Optional[int]
    records: int
    findings: Tuple[Finding, ...]


def metadata_of(tid: str, v: TransactionLogValue, offset: int, leader_epoch: int) -> TransactionMetadata:
    keep = v.status_id != TransactionStatus.EMPTY and v.partitions is not None
    parts = tuple(TopicPartition(t.topic, p) for t in (v.partitions or ()) for p in t.partition_ids) if keep else ()
    return TransactionMetadata(tid, v.producer_id, v.producer_epoch, v.transaction_timeout_ms, v.status, parts,
                               v.last_update_timestamp_ms, v.start_timestamp_ms, v.previous_producer_id,
                               v.next_producer_id, v.client_transaction_version, offset, leader_epoch)


class CoordinatorFold:
    """Fold the records of one ``__transaction_state`` partition replica, in offset order.
    Findings are aggregated per kind and transactional id (:class:`~forensics.findings.FindingRuns`)."""

    def __init__(self, partition: int) -> None:
        self.partition = partition
        self._metadata: Dict[str, TransactionMetadata] = {}
        self._tombstoned: Dict[str, HistoryEntry] = {}
        self._history: Dict[str, List[HistoryEntry]] = {}
        self._findings = FindingRuns()
        self._max_epoch = -1
        self._last_offset: Optional[int] = None
        self._records = 0

    def apply_all(self, path: str, records: Iterable[TxnLogRecord]) -> None:
        for r in records:
            self.apply(path, r)

    def apply(self, path: str, r: TxnLogRecord) -> None:
        self._records += 1
        self._max_epoch = max(self._max_epoch, r.leader_epoch)
        if self._last_offset is None or r.offset > self._last_offset:
            self._last_offset = r.offset
        entry = HistoryEntry(r.offset, r.timestamp, r.leader_epoch, r.value, Provenance(path, r.position))
        self._history.setdefault(r.transactional_id, []).append(entry)
        tid = r.transactional_id
        if r.value is None:
            self._metadata.pop(tid, None)
            self._tombstoned[tid] = entry
            return
        self._tombstoned.pop(tid, None)
        self._check(path, r, self._metadata.get(tid))
        self._metadata[tid] = metadata_of(tid, r.value, r.offset, r.leader_epoch)

    def _check(self, path: str, r: TxnLogRecord, previous: Optional[TransactionMetadata]) -> None:
        v = r.value
        if v is None:
            return
        subject = f"transactional id {r.transactional_id!r}"
        if not v.status_known:
            self._findings.add(Finding(
                FindingKind.UNKNOWN_TRANSACTION_STATUS,
                f"{subject}: unknown transaction status {v.status_id} "
                "(Kafka throws IllegalStateException loading it)", path, r.position, None, r.offset), subject)
            return
        prev_state = previous.state if previous is not None and isinstance(previous.state, TransactionStatus) else None
        problem = transition_problem(prev_state, TransactionStatus(v.status_id), v.client_transaction_version)
        if problem is not None:
            self._findings.add(Finding(
                FindingKind.ILLEGAL_TRANSITION, f"{subject}: {problem}"
                + (f" (previous record at offset {previous.offset})" if previous is not None else ""),
                path, r.position, None, r.offset), subject)

    def finish(self) -> CoordinatorPartitionState:
        return CoordinatorPartitionState(
            self.partition, dict(sorted(self._metadata.items())), dict(sorted(self._tombstoned.items())),
            {k: tuple(v) for k, v in sorted(self._history.items())}, self._max_epoch, self._last_offset,
            self._records, self._findings.findings())
