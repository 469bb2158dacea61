"""Why a verdict is what it is, as facts: each reason a frozen dataclass, its kind and the values it
names (offsets, epochs, epoch-ms times, timeouts, file names), never a formatted time or a JSON key.
:mod:`forensics.render.reasons` writes them as the lines the commands print.

The reasons of :mod:`forensics.analysis.hanging`, from what the coordinator's records say
(:data:`Classified`), the patterns a hang shows (:data:`Pattern`), what keeps one from being proven
(:class:`Unproven`: the gaps of the evidence, :mod:`forensics.analysis.gap_facts`, with the settling facts of
:mod:`forensics.analysis.settling`), to the open transactions only a snapshot or the segments' history shows
(:class:`SnapshotOnly`, :class:`HistoryOnly`).
"""

from __future__ import annotations

from forensics.dataclass_fast import dataclass

from forensics.analysis.gap_facts import Gap, LogDamage, Part
from forensics.model import TopicPartition

# -- what the coordinator's records say ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fenced:
    """The partition holds a coordinator epoch above the coordinator's own for the producer."""

    partition: TopicPartition
    coordinator_epoch: int  # the partition's entry's
    producer_id: int
    marker_outcome: str | None  # the marker written at that coordinator epoch, if the log shows one
    marker_offset: int | None
    coordinator_own_epoch: int
    transaction_state_partition: int
    coordinator: int | None  # the coordinator's broker id


@dataclass(frozen=True, slots=True)
class IdExpired:
    transactional_id: str
    tombstone_offset: int | None
    transaction_state_partition: int


@dataclass(frozen=True, slots=True)
class ProducerIdRotated:
    transactional_id: str
    producer_id: int  # the id's producer id now
    producer_epoch: int


@dataclass(frozen=True, slots=True)
class NothingInFlight:
    """The coordinator holds the id in Empty, CompleteCommit or CompleteAbort."""

    transactional_id: str
    state_name: str
    producer_epoch: int


@dataclass(frozen=True, slots=True)
class NotInPartitionSet:
    partition: TopicPartition
    transactional_id: str
    state_name: str
    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True, slots=True)
class OngoingBelowEpoch:
    """Ongoing at a producer epoch below the partition's: the coordinator's markers would be rejected."""

    coordinator_epoch: int  # the producer epoch the coordinator holds
    partition_epoch: int


@dataclass(frozen=True, slots=True)
class Ongoing:
    partition: TopicPartition
    start_ms: int
    timeout_ms: int


@dataclass(frozen=True, slots=True)
class Prepared:
    """PrepareCommit or PrepareAbort with the partition still pending."""

    state_name: str
    partition: TopicPartition
    commit: bool


@dataclass(frozen=True, slots=True)
class InState:
    """Any other state the coordinator holds the id in."""

    transactional_id: str
    state_name: str


@dataclass(frozen=True, slots=True)
class NoCoordinator:
    """No ``__transaction_state`` among the inputs."""


@dataclass(frozen=True, slots=True)
class CoordinatorPartitionsMissing:
    producer_id: int
    missing: tuple[int, ...]  # the __transaction_state partitions not among the inputs


@dataclass(frozen=True, slots=True)
class PartitionCountUnknown:
    producer_id: int
    partition_count: int  # the partitions read


@dataclass(frozen=True, slots=True)
class NoCoordinatorRecord:
    producer_id: int


Classified = (Fenced | IdExpired | ProducerIdRotated | NothingInFlight | NotInPartitionSet | OngoingBelowEpoch
              | Ongoing | Prepared | InState | NoCoordinator | CoordinatorPartitionsMissing | PartitionCountUnknown
              | NoCoordinatorRecord)

# -- the patterns of a hang --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Kafka9144:
    """A marker at a higher epoch before this transaction's data."""

    outcome: str | None
    marker_offset: int
    marker_epoch: int
    start_offset: int
    epoch: int


@dataclass(frozen=True, slots=True)
class LeaderChange:
    """A leader epoch begun after the transaction's first offset (KAFKA-7408)."""

    epoch: int
    start_offset: int


@dataclass(frozen=True, slots=True)
class MarkerElsewhere:
    """Another replica holds the transaction's marker (KAFKA-7408)."""

    broker_id: int | None
    outcome: str
    offset: int
    epoch: int
    coordinator_epoch: int
    path: str
    position: int


Pattern = Kafka9144 | LeaderChange | MarkerElsewhere


@dataclass(frozen=True, slots=True)
class Patterned:
    """A hanging reason and the patterns it shows."""

    reason: Classified
    patterns: tuple[Pattern, ...]


# -- what keeps a verdict from being proven, and the transactions the log read does not show --------


@dataclass(frozen=True, slots=True)
class Unproven:
    """``not proven: <reason>; but <part>; <part>...``: each part a gap (a contradiction, a settling fact, ...),
    the damage of one log, or a coordinator partition's records not proven the broker's own."""

    reason: Classified | Patterned
    parts: tuple[Part, ...]
    torn_or_lost: bool  # a torn copy and a lost marker look alike (hanging with damaged records)
    too_recent: bool  # the settling rule kept it from being judged


@dataclass(frozen=True, slots=True)
class Overdue:
    """Ongoing, past its own timeout by more than the grace."""

    partition: TopicPartition
    start_ms: int
    timeout_ms: int


@dataclass(frozen=True, slots=True)
class SnapshotOnly:
    """Open in the newest producer snapshot, not in the log read."""

    first_offset: int
    snapshot_file: str
    damage: LogDamage | None  # what is damaged of the partition's log
    coordinator: Classified


@dataclass(frozen=True, slots=True)
class HistoryOnly:
    """Open in the segments' history (or an older snapshot plus the replay), not in the state the broker loads."""

    first_offset: int
    older_snapshot: str | None  # None: the full history of the segments
    disagreement: Gap | None  # how the readings disagree; None: not said
    coordinator: Classified


Reason = Classified | Patterned | Unproven | Overdue | SnapshotOnly | HistoryOnly
