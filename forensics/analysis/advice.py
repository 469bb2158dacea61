"""What to do when the answer is "do not abort" (or "not yet"): the coordinator involved, the
evidence, what to look for in the broker logs and which operator action exists on which versions.

Grounded in Kafka's own code paths:
* a coordinator that becomes leader of a ``__transaction_state`` partition reloads it and resends
  the markers of every transaction in PrepareCommit/PrepareAbort (``TransactionCoordinator.onElection``);
* a marker refused with TRANSACTION_COORDINATOR_FENCED or INVALID_PRODUCER_EPOCH is dropped by the
  coordinator, which completes the transaction without it (``TransactionMarkerRequestCompletionHandler``);
* a producer calling ``initTransactions()`` with the same ``transactional.id`` bumps the epoch and
  aborts the transaction in flight (``TransactionCoordinator.handleInitProducerId``), on every broker
  with transactions (0.11+); ``kafka-transactions.sh forceTerminateTransaction`` (Kafka 4.0+, KIP-939)
  sends that request from the command line.

Each line of advice is a fact (a frozen dataclass: what to do, with the values it names: the partition, the
coordinator, the producer, the epochs); :mod:`forensics.render.advice_text` writes the sentences.
"""

from __future__ import annotations

from forensics.dataclass_fast import dataclass
from typing import Protocol

from forensics.analysis.coordinator import TransactionIdView
from forensics.analysis.gap_facts import Gap
from forensics.analysis.producers import PartitionView
from forensics.model import TopicPartition
from forensics.state.coordinator import Decision
from forensics.state.producer import ProducerState


class Verdict(Protocol):
    """What the advice reads of a verdict (:class:`forensics.analysis.hanging.Verdict`, whose kind,
    :class:`forensics.analysis.verdict_kinds.VerdictKind`, names the function: no import circle)."""

    @property
    def view(self) -> PartitionView: ...
    @property
    def entry(self) -> ProducerState: ...
    @property
    def transactional_id(self) -> str | None: ...
    @property
    def id_view(self) -> TransactionIdView | None: ...
    @property
    def gaps(self) -> tuple[Gap, ...]: ...
    @property
    def decision(self) -> Decision | None: ...


@dataclass(frozen=True, slots=True)
class Coordinator:
    """The coordinator of the verdict's transactional id, as the id view found it."""

    transactional_id: str
    partition: int  # its __transaction_state partition
    broker: int | None  # the broker the partition was read from
    coordinator_epoch: int


def _coordinator(v: Verdict) -> Coordinator | None:
    i = v.id_view
    return None if i is None else Coordinator(i.transactional_id, i.partition, i.coordinator, i.coordinator_epoch)


# -- stuck-coordinator ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DoNotAbortCommitted:
    """The coordinator decided to commit: an abort would discard data committed on the other partitions."""


@dataclass(frozen=True, slots=True)
class MarkersNeverArrived:
    """The coordinator holds the transaction in PrepareCommit/PrepareAbort; its markers never reached the partition."""

    coordinator: Coordinator | None
    state_name: str | None  # None: no id view
    partition: TopicPartition


@dataclass(frozen=True, slots=True)
class CheckMarkerWrites:
    """Where to look for the errors of the coordinator's WriteTxnMarkers."""

    partition: TopicPartition
    producer_id: int


@dataclass(frozen=True, slots=True)
class ReloadCoordinator:
    """A new leader of the coordinator partition reloads it and resends the pending markers."""

    coordinator: Coordinator | None
    partition: TopicPartition


@dataclass(frozen=True, slots=True)
class AbortWritesMarker:
    """The coordinator decided to abort: the (commented) abort writes the marker it could not."""


# -- fenced-coordinator -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DoNotAbortLastCommit:
    """The coordinator's last decision was COMMIT: no tool writes one, an abort discards committed data."""


@dataclass(frozen=True, slots=True)
class RefusesMarkers:
    """The partition refuses the coordinator's markers: its entry holds a higher coordinator epoch."""

    coordinator: Coordinator | None
    producer_id: int
    coordinator_epoch: int  # the partition's entry's


@dataclass(frozen=True, slots=True)
class CheckFencing:
    """Where to look for TRANSACTION_COORDINATOR_FENCED, and for who aborted with that coordinator epoch."""

    partition: TopicPartition
    producer_id: int
    coordinator_epoch: int


@dataclass(frozen=True, slots=True)
class AbortAtPartitionEpoch:
    """The coordinator decided to abort: an abort given the partition's own coordinator epoch writes the marker."""

    coordinator_epoch: int


@dataclass(frozen=True, slots=True)
class RefusedWhateverDecided:
    """Still Ongoing: whatever the coordinator decides, its marker will be refused."""


# -- overdue ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PastOwnTimeout:
    """Ongoing past its own timeout: the coordinator should have aborted it."""

    timeout_ms: int | None  # None: the id's metadata is unknown
    coordinator: Coordinator | None


@dataclass(frozen=True, slots=True)
class CheckTimeoutAborts:
    """Where to look for why the coordinator did not abort the timed-out transaction."""

    coordinator: Coordinator | None
    partition: TopicPartition
    producer_id: int


@dataclass(frozen=True, slots=True)
class ReloadAborts:
    """A new leader of the coordinator partition loads it and aborts the timed-out transaction."""

    coordinator: Coordinator | None


@dataclass(frozen=True, slots=True)
class Terminate:
    """How to end it by hand: initTransactions() with its transactional.id, or forceTerminateTransaction."""

    transactional_id: str | None


# -- unverifiable -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FreshCopy:
    """Take a fresh copy of the partition dirs whose records are damaged or incomplete."""

    partition_dirs: tuple[str, ...]  # sorted, each once


@dataclass(frozen=True, slots=True)
class AddCoordinators:
    """Add the disks holding every __transaction_state partition, or ask the live cluster."""


Advice = (DoNotAbortCommitted | MarkersNeverArrived | CheckMarkerWrites | ReloadCoordinator | AbortWritesMarker
          | DoNotAbortLastCommit | RefusesMarkers | CheckFencing | AbortAtPartitionEpoch | RefusedWhateverDecided
          | PastOwnTimeout | CheckTimeoutAborts | ReloadAborts | Terminate | FreshCopy | AddCoordinators)


def stuck(v: Verdict) -> tuple[Advice, ...]:
    """A coordinator that holds the transaction in PrepareCommit/PrepareAbort: its markers never arrived."""
    c, tp = _coordinator(v), v.view.topic_partition
    lines: list[Advice] = [MarkersNeverArrived(c, v.id_view.state_name if v.id_view else None, tp),
                           CheckMarkerWrites(tp, v.entry.producer_id), ReloadCoordinator(c, tp)]
    if v.decision is Decision.COMMIT:
        lines.insert(0, DoNotAbortCommitted())
    else:
        lines.append(AbortWritesMarker())
    return tuple(lines)


def fenced(v: Verdict) -> tuple[Advice, ...]:
    """The partition refuses the coordinator's markers (a coordinator epoch above the coordinator's own)."""
    e = v.entry
    lines: list[Advice] = [RefusesMarkers(_coordinator(v), e.producer_id, e.coordinator_epoch),
                           CheckFencing(v.view.topic_partition, e.producer_id, e.coordinator_epoch)]
    if v.decision is Decision.COMMIT:
        lines.insert(0, DoNotAbortLastCommit())
    elif v.decision is Decision.ABORT:
        lines.append(AbortAtPartitionEpoch(e.coordinator_epoch))
    else:
        lines.append(RefusedWhateverDecided())
    return tuple(lines)


def overdue(v: Verdict) -> tuple[Advice, ...]:
    """Ongoing past its own timeout: the coordinator should have aborted it (its timeout checker,
    ``TransactionCoordinator.abortTimedOutTransactions``, every 10 s by default) and has not. How long
    past it is the verdict's heading's (``ongoing, overdue by 1 h 7 min``) and JSON's ``overdueMs``,
    said once, not here again."""
    m = v.id_view.metadata if v.id_view is not None else None
    c = _coordinator(v)
    return (PastOwnTimeout(m.timeout_ms if m is not None else None, c),
            CheckTimeoutAborts(c, v.view.topic_partition, v.entry.producer_id), ReloadAborts(c),
            Terminate(v.transactional_id))


def unverifiable(v: Verdict) -> tuple[Advice, ...]:
    """The evidence cannot decide: what to add or copy again."""
    if v.gaps:
        return (FreshCopy(tuple(sorted({g.partition_dir for g in v.gaps}))),)
    return (AddCoordinators(),)


def none(v: Verdict) -> tuple[Advice, ...]:
    """A proven hang (the abort command is the advice), or a transaction its coordinator will finish in time."""
    return ()
