"""What a gap in the evidence is, as facts: why a log may not hold every record the broker wrote
(:mod:`forensics.analysis.evidence_gaps`), where the records contradict each other
(:mod:`forensics.analysis.contradictions`), what was copied too soon (:mod:`forensics.analysis.settling`).

Each fact is a frozen dataclass naming its values (paths, byte positions, offsets, epochs, broker ids,
epoch-ms times), never a sentence; :mod:`forensics.render.gap_text` writes them as the lines the commands
print (a verdict's reason, the evidence's ``gaps[].text``, the run's warnings).
"""

from __future__ import annotations

from forensics.dataclass_fast import dataclass
from enum import Enum
from typing import NamedTuple

from forensics.analysis.coverage import Uncovered
from forensics.analysis.producers import StateDisagreement
from forensics.findings import FindingKind
from forensics.model import TopicPartition

# -- damage and the log's end against what the broker's files say -------------------------------------


@dataclass(frozen=True, slots=True)
class Damage:
    """A damage finding in one of the log's files (an unreadable file, a torn tail, a CRC mismatch, ...)."""

    kind: FindingKind
    path: str
    position: int | None  # None: the file as a whole


@dataclass(frozen=True, slots=True)
class BelowHighWatermark:
    high_watermark: int


@dataclass(frozen=True, slots=True)
class BelowRecoveryPoint:
    recovery_point: int


@dataclass(frozen=True, slots=True)
class PastRecoveryPoint:
    """Past its recovery point although its broker stopped cleanly (a clean stop checkpoints every log's end)."""

    recovery_point: int


@dataclass(frozen=True, slots=True)
class PastHighWatermark:
    """Past the high watermark of its only replica although its broker stopped cleanly."""

    high_watermark: int


@dataclass(frozen=True, slots=True)
class BelowLogStart:
    log_start: int


@dataclass(frozen=True, slots=True)
class EpochPastEnd:
    """Below the start of a leader epoch its leader-epoch-checkpoint names."""

    epoch: int
    start_offset: int


@dataclass(frozen=True, slots=True)
class IndexPastEnd:
    """Below an offset one of its last segment's indexes names."""

    offset: int  # the offset the index names
    index: str  # "offset index", "time index"
    index_path: str


@dataclass(frozen=True, slots=True)
class EpochBehindMetadata:
    """Its leader-epoch-checkpoint ends below the epoch at which __cluster_metadata makes its broker the leader."""

    last_epoch: int
    led_at: int


@dataclass(frozen=True, slots=True)
class SnapshotPastEnd:
    offset: int  # the producer snapshot's (its file name)


EndFact = (BelowHighWatermark | BelowRecoveryPoint | PastRecoveryPoint | PastHighWatermark | BelowLogStart
           | EpochPastEnd | IndexPastEnd | EpochBehindMetadata | SnapshotPastEnd)

# -- what the coordinator partitions hold, what the inputs lack -------------------------------------------


@dataclass(frozen=True, slots=True)
class Misplaced:
    """A coordinator partition holds records of ids that hash to other partitions."""

    partition: int  # the __transaction_state partition
    ids: tuple[tuple[str, int], ...]  # (transactional id, the partition it hashes to), in record order
    path: str  # the first such record's
    position: int


@dataclass(frozen=True, slots=True)
class CopyMissing:
    """The copy of a partition a verdict needs is not among the inputs."""

    topic_partition: TopicPartition
    uncovered: Uncovered


@dataclass(frozen=True, slots=True)
class CoordinatorCopiesMissing:
    """Coordinator partitions (any may hold the producer's record) lack the copy that matters."""

    partitions: tuple[TopicPartition, ...]  # by partition number
    first: Uncovered  # the first one's


# -- the evidence against itself -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EpochMismatch:
    """A batch whose partition leader epoch is not the one its leader-epoch-checkpoint gives its offset."""

    label: str  # the partition ("orders-0", "__transaction_state-3")
    offset: int
    path: str
    position: int
    epoch: int  # the batch's
    expected: int | None  # the checkpoint's; None: no entry starts at or below the offset


@dataclass(frozen=True, slots=True)
class RepeatedBatch:
    """The open transaction's first batch holds the same records as an earlier transaction's first batch."""

    path: str
    position: int
    producer_id: int
    first_offset: int  # the earlier transaction's
    other_path: str
    other_position: int
    crc: int


@dataclass(frozen=True, slots=True)
class FoldDisagreement:
    """The state the broker loads (the snapshot plus the replay) against another reading of one producer."""

    partition: TopicPartition
    producer_id: int
    snapshot: str | None  # the producer snapshot the loaded state starts from (None: the replay alone)
    older_snapshot: str | None  # the other reading: this older snapshot plus the replay (None: the full history)
    disagreement: StateDisagreement
    log_first: int | None  # the log's first offset (None: no segment)
    log_end: int


@dataclass(frozen=True, slots=True)
class RepeatedProducer:
    """The producer snapshot used lists one producer more than once."""

    snapshot: str
    partition: TopicPartition
    producer_id: int


@dataclass(frozen=True, slots=True)
class SnapshotWithoutData:
    """The loaded state holds an open transaction whose producer has no batch in the log."""

    snapshot: str
    producer_id: int
    partition: TopicPartition
    first_offset: int
    log_first: int
    log_end: int


@dataclass(frozen=True, slots=True)
class CoordinatorRecordsContradict:
    """The id's coordinator records hold a transition a coordinator never writes."""

    transactional_id: str
    problem: str  # forensics.state.transitions' name of it ("PrepareCommit -> Empty is not a valid transition")
    offset: int
    partition: int  # the __transaction_state partition
    path: str
    position: int


@dataclass(frozen=True, slots=True)
class MixedEpochs:
    """The open transaction holds batches of several producer epochs."""

    first_offset: int
    path: str
    position: int | None
    epochs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RepeatedSequence:
    """The open transaction holds a batch repeating sequence numbers its producer already wrote at that epoch."""

    first_offset: int
    path: str
    position: int


@dataclass(frozen=True, slots=True)
class AboveHighWatermark:
    """The open transaction's data reaches at or above the high watermark."""

    last_offset: int
    high_watermark: int
    log_dir: str


@dataclass(frozen=True, slots=True)
class Replica:
    """Another replica, as a reason names it: its broker, with its directory where another replica claims it too."""

    broker_id: int | None
    path: str | None  # set only when the broker id alone does not tell it apart


@dataclass(frozen=True, slots=True)
class ReplicaEpochs:
    """Another replica's leader-epoch-checkpoint starts a leader epoch at another offset than the copy read's."""

    replica: Replica
    partition: TopicPartition
    replica_dir: str
    epoch: int
    start_offset: int  # the other replica's
    copy_dir: str
    copy_start_offset: int  # the copy read's


@dataclass(frozen=True, slots=True)
class ReplicaTransaction:
    """Another replica holds the same open transaction differently."""

    replica: Replica
    partition: TopicPartition
    replica_dir: str
    producer_id: int
    first_offset: int  # the other replica's
    epochs: tuple[int, ...]
    copy_first_offset: int | None  # the copy read's
    copy_epochs: tuple[int, ...]


Contradiction = (EpochMismatch | RepeatedBatch | FoldDisagreement | RepeatedProducer | SnapshotWithoutData
                 | CoordinatorRecordsContradict | MixedEpochs | RepeatedSequence | AboveHighWatermark | ReplicaEpochs
                 | ReplicaTransaction)

# -- the settling rule (analysis/settling.py) -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MarkerMayBeLater:
    """The data partition was copied less than the window after the coordinator's newest record for the id."""

    partition: TopicPartition
    copied_ms: int | None  # no earlier than this; None: nothing on the disk tells
    window_ms: int
    transactional_id: str
    state_name: str
    decided_ms: int


@dataclass(frozen=True, slots=True)
class CoordinatorMayBeLater:
    """Coordinator partitions copied less than the window after the transaction's newest data."""

    partitions: tuple[int, ...]  # the __transaction_state partitions copied too soon
    copied_ms: int | None  # the first one's: no earlier than this; None: nothing on the disk tells
    window_ms: int
    data_ms: int
    known_id: bool  # the coordinator's record of the id (else: of this producer)


Settling = MarkerMayBeLater | CoordinatorMayBeLater

GapFact = Damage | EndFact | Misplaced | CopyMissing | CoordinatorCopiesMissing | Contradiction | Settling


class GapKind(str, Enum):
    """A gap's kind but for damage (a damage gap's kind is its finding's :class:`FindingKind`); its value is the
    row's ``evidence.gaps[].kind``."""

    BELOW_HIGH_WATERMARK = "below_high_watermark"  # the log's end against its broker's files (EndFact)
    BELOW_RECOVERY_POINT = "below_recovery_point"
    PAST_RECOVERY_POINT = "past_recovery_point"
    PAST_HIGH_WATERMARK = "past_high_watermark"
    BELOW_LOG_START = "below_log_start"
    EPOCH_PAST_END = "epoch_past_end"
    INDEX_PAST_END = "index_past_end"
    EPOCH_BEHIND_METADATA = "epoch_behind_metadata"
    SNAPSHOT_PAST_END = "snapshot_past_end"
    CONTRADICTION = "contradiction"  # the evidence against itself (Contradiction)
    MISPLACED_RECORDS = "misplaced_records"  # a coordinator partition holds records of ids that hash to another one
    COPY_MISSING = "copy_missing"  # the copy a verdict needs (a partition's leader's) is not among the inputs
    TOO_RECENT = "too_recent"  # copied too soon after what would change it (Settling: analysis/settling.py)


class Gap(NamedTuple):
    """One reason why a log may not hold every record the broker wrote, or why its records are not proven the
    broker's own: its kind (the JSON's ``kind``), its fact (the words: :func:`forensics.render.gap_text.gap_text`)
    and where it is."""

    kind: GapKind | FindingKind  # a damage finding's kind, or the gap's
    fact: GapFact
    path: str
    position: int | None = None
    log_end: int | None = None  # the end gaps: where the log read ends
    partition_dir: str = ""

    @property
    def settling(self) -> Settling | None:
        """The settling fact of a too_recent gap (its partition copied too soon after what would change it);
        None for every other gap."""
        return self.fact if isinstance(self.fact, MarkerMayBeLater | CoordinatorMayBeLater) else None


class DamageMeans(Enum):
    """What damage to the records a verdict rests on means for it (the tail of its part of the reason)."""

    NOTHING = "nothing"  # said alone (a snapshot-only transaction's damage, a torn log)
    MARKER_MAY_BE_MISSING = "marker"  # hanging: this transaction's marker may be missing from the copy
    COPY_MAY_NOT_HOLD = "copy"  # another kind: the copy may not hold what the broker last wrote of it
    ID_RECORD_MAY_BE_MISSING = "id"  # a coordinator partition: the id's newest record may be missing
    PRODUCER_RECORD_MAY_BE_MISSING = "producer"  # ... the record of this producer id may be missing


@dataclass(frozen=True, slots=True)
class LogDamage:
    """The gaps of one log, said together (``the log of orders-0 is damaged at ... and ends at offset 4, below
    ...``), and what they mean for the verdict."""

    label: str  # the partition ("orders-0", "__transaction_state-43")
    gaps: tuple[Gap, ...]
    means: DamageMeans = DamageMeans.NOTHING


@dataclass(frozen=True, slots=True)
class NotBrokersOwn:
    """A coordinator partition's records contradict its leader-epoch-checkpoint: the id's records there are not
    proven to be the broker's own."""

    gap: Gap


Part = Gap | LogDamage | NotBrokersOwn  # one part of what keeps a verdict from being proven
