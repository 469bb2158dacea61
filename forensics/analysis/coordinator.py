"""The transaction coordinators' view, rebuilt from every ``__transaction_state`` partition found.

One replica per partition is folded (the one with the highest leader epoch, then the longest log); the
partition count N is the number of partitions found (max index + 1) unless the caller overrides it. Each
transactional id is checked to live where ``abs(javaHash(id)) % N`` says
(``TransactionStateManager.partitionFor``); the coordinator epoch of each partition is the larger of its
``leader-epoch-checkpoint`` tail and the highest batch leader epoch (a coordinator loads a partition at its
leader epoch: ``TransactionCoordinator.onElection``).
"""

from __future__ import annotations

from dataclasses import field, replace
from forensics.dataclass_fast import dataclass
from typing import NamedTuple
from collections.abc import Iterable, Sequence

from forensics.analysis.replicas import replica_rank
from forensics.codec.txnlog import transaction_partition_for
from forensics.findings import Finding, FindingKind
from forensics.state.coordinator import (
    Decision,
    CoordinatorFold,
    CoordinatorPartitionState,
    HistoryEntry,
    IdSummary,
    KeepHistory,
    RecordRef,
    TransactionMetadata,
)
from forensics.state.inputs import TxnStateInputs


@dataclass(frozen=True, slots=True)
class CoordinatorPartitionView:
    inputs: TxnStateInputs  # its segments without their records (folded into ``state``)
    state: CoordinatorPartitionState
    coordinator_epoch: int  # -1 when nothing tells
    other_replicas: tuple[str, ...]  # paths of replicas not folded

    @property
    def broker_id(self) -> int | None:
        return self.inputs.broker_id


@dataclass(frozen=True, slots=True)
class TransactionIdView:
    """One transactional id: its current metadata (None once tombstoned), what the verdicts read of its
    history (``summary``) and, where the caller kept it, the full history (else ``()``)."""

    transactional_id: str
    partition: int  # the __transaction_state partition holding it
    expected_partition: int
    coordinator: int | None  # broker id of the replica read
    coordinator_epoch: int
    metadata: TransactionMetadata | None
    tombstone: HistoryEntry | None
    history: tuple[HistoryEntry, ...]
    summary: IdSummary

    @property
    def state_name(self) -> str:
        return self.metadata.state_name if self.metadata is not None else "Dead"

    @property
    def first(self) -> RecordRef:
        """Its first record."""
        return self.summary.first

    @property
    def last(self) -> RecordRef:
        """Its newest record."""
        return self.summary.last

    @property
    def decision(self) -> Decision | None:
        """The coordinator's last decision for the id (its last Prepare/Complete record)."""
        return self.summary.decision


@dataclass(frozen=True, slots=True)
class CoordinatorView:
    partition_count: int
    partitions: dict[int, CoordinatorPartitionView]
    ids: dict[str, TransactionIdView]
    findings: tuple[Finding, ...]
    # where partition_count comes from: "--transaction-state-partitions" or "__cluster_metadata" (proven), or
    # "" (inferred from the partitions present: a higher-numbered one may be missing)
    count_source: str = ""
    # producer id -> ids, built once (callers look up one producer per open transaction)
    _current: dict[int, tuple[TransactionIdView, ...]] = field(default_factory=dict, compare=False, repr=False)
    _ever: dict[int, tuple[TransactionIdView, ...]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        current: dict[int, list[TransactionIdView]] = {}
        ever: dict[int, list[TransactionIdView]] = {}
        for v in self.ids.values():
            m = v.metadata
            if m is not None:
                for pid in dict.fromkeys((m.producer_id, m.previous_producer_id, m.next_producer_id)):
                    current.setdefault(pid, []).append(v)
            for pid in v.summary.producer_ids:
                ever.setdefault(pid, []).append(v)
        object.__setattr__(self, "_current", {pid: tuple(vs) for pid, vs in current.items()})
        object.__setattr__(self, "_ever", {pid: tuple(vs) for pid, vs in ever.items()})

    def ids_for_producer(self, producer_id: int) -> list[TransactionIdView]:
        """Ids whose current (or previous/next, TV2 rotation) producer id is ``producer_id``, in id order."""
        return list(self._current.get(producer_id, ()))

    def ever_used_producer(self, producer_id: int) -> list[TransactionIdView]:
        """Ids whose history ever carried ``producer_id`` (also tombstoned ones), in id order."""
        return list(self._ever.get(producer_id, ()))


def _preference(r: TxnStateInputs | FoldedReplica) -> tuple:
    if isinstance(r, FoldedReplica):
        r = r.inputs
    end = max((s.next_offset for s in r.segments if s.next_offset is not None), default=0)
    return replica_rank(r.leader_epoch, end, r.broker_id)


def _fold(r: TxnStateInputs, keep_history: KeepHistory) -> CoordinatorPartitionState:
    fold = CoordinatorFold(r.partition, keep_history)
    for seg in r.segments:
        fold.apply_all(seg.path, seg.records)
    return fold.finish()


def _without_records(r: TxnStateInputs) -> TxnStateInputs:
    """The replica's inputs once folded: what the fold keeps of its records is in its state (the
    records themselves are what a large coordinator partition costs)."""
    return replace(r, segments=tuple(s._replace(records=()) for s in r.segments))


class FoldedReplica(NamedTuple):
    """A ``__transaction_state`` replica folded as soon as it was read (its records dropped)."""

    inputs: TxnStateInputs  # without records
    state: CoordinatorPartitionState

    @property
    def path(self) -> str:
        return self.inputs.path

    @property
    def partition(self) -> int:
        return self.inputs.partition


def fold_replica(r: TxnStateInputs, keep_history: KeepHistory = None) -> FoldedReplica:
    """Fold a replica now (the only copy of its partition: nothing to choose it against)."""
    return FoldedReplica(_without_records(r), _fold(r, keep_history))


def stored_ids(r: TxnStateInputs | FoldedReplica) -> Iterable[str]:
    """The transactional ids a replica's records name."""
    if isinstance(r, FoldedReplica):
        return r.state.summaries.keys()
    return (rec.transactional_id for seg in r.segments for rec in seg.records)


def _partition_findings(r: TxnStateInputs, st: CoordinatorPartitionState) -> list[Finding]:
    out = list(r.findings)
    for seg in r.segments:
        out.extend(seg.findings)
    out.extend(st.findings)
    if r.high_watermark is not None and st.last_offset is not None and st.last_offset >= r.high_watermark:
        out.append(Finding(FindingKind.ABOVE_HIGH_WATERMARK, f"coordinator records at offsets {r.high_watermark}.."
                           f"{st.last_offset} lie above the high watermark (the coordinator loads them anyway)",
                           r.path, first_offset=r.high_watermark, last_offset=st.last_offset))
    return out


def rebuild_coordinator(replicas: Sequence[TxnStateInputs | FoldedReplica],
                        partition_count: int | None = None, keep_history: KeepHistory = None,
                        count_source: str = "") -> CoordinatorView:
    """The coordinators' view; ``keep_history`` says which ids keep their full history (None: all;
    the commands that print no history keep none). Replicas come as read, or folded already."""
    by_partition: dict[int, list[TxnStateInputs | FoldedReplica]] = {}
    for r in replicas:
        by_partition.setdefault(r.partition, []).append(r)
    n = partition_count if partition_count else (max(by_partition) + 1 if by_partition else 0)
    findings: list[Finding] = []
    views: dict[int, CoordinatorPartitionView] = {}
    ids: dict[str, TransactionIdView] = {}
    for part in sorted(by_partition):
        best, *others = sorted(by_partition[part], key=_preference, reverse=True)
        chosen = best.inputs if isinstance(best, FoldedReplica) else best
        st = best.state if isinstance(best, FoldedReplica) else _fold(chosen, keep_history)
        epoch = max(chosen.leader_epoch if chosen.leader_epoch is not None else -1, st.max_leader_epoch)
        views[part] = CoordinatorPartitionView(_without_records(chosen), st, epoch, tuple(o.path for o in others))
        findings.extend(_partition_findings(chosen, st))
        for tid, summary in st.summaries.items():
            expected = transaction_partition_for(tid, n) if n else part
            first = summary.first
            if expected != part:
                findings.append(Finding(FindingKind.WRONG_COORDINATOR_PARTITION,
                                        f"transactional id {tid!r} is stored in partition {part}, but "
                                        f"abs(hash) % {n} = {expected}: its coordinator would never look here",
                                        first.at.path, first.at.position, None, first.offset))
            view = TransactionIdView(tid, part, expected, chosen.broker_id, epoch, st.metadata.get(tid),
                                     st.tombstoned.get(tid), st.history.get(tid, ()), summary)
            if tid not in ids or expected == part:
                ids[tid] = view
    return CoordinatorView(n, views, dict(sorted(ids.items())), tuple(findings), count_source if partition_count else "")
