"""What the work units return: per-file results the folds and the analysis consume.

Plain picklable tuples (they cross process boundaries in the Spark executor), with findings.
"""

from __future__ import annotations

from forensics.dataclass_fast import dataclass
from typing import NamedTuple

from forensics.codec.checkpoints import EpochEntry
from forensics.codec.snapshot import ProducerSnapshot
from forensics.findings import Finding
from forensics.model import TopicPartition
from forensics.state.coordinator import TxnLogRecord
from forensics.state.events import ProducerEvent


@dataclass(frozen=True, slots=True)
class SegmentSummary:
    """Header statistics of one ``.log`` file (what ``scan`` reports per segment)."""

    path: str
    base_offset: int
    size: int
    batches: int = 0
    records: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    max_timestamp: int | None = None
    magics: frozenset[int] = frozenset()
    codecs: frozenset[str] = frozenset()
    transactional_batches: int = 0
    control_batches: int = 0
    invalid_batches: int = 0
    findings: tuple[Finding, ...] = ()


class SegmentEvents(NamedTuple):
    """What one ``.log`` segment contributes to a partition's producer state."""

    path: str
    base_offset: int
    size: int
    events: tuple[ProducerEvent, ...]
    batches: int  # frames with a valid checksum
    next_offset: int | None  # last valid offset + 1 (None: no valid batch)
    max_timestamp: int | None
    first_invalid_position: int | None  # where the broker's reader would stop
    findings: tuple[Finding, ...]


class TxnLogSegment(NamedTuple):
    """What one ``__transaction_state`` segment contributes to the coordinator's metadata."""

    path: str
    base_offset: int
    size: int
    records: tuple[TxnLogRecord, ...]
    next_offset: int | None
    max_timestamp: int | None
    findings: tuple[Finding, ...]


class SnapshotRead(NamedTuple):
    path: str
    offset: int
    snapshot: ProducerSnapshot | None
    findings: tuple[Finding, ...]


class AbortedTxnEntry(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    path: str
    position: int


@dataclass(frozen=True, slots=True)
class PartitionInputs:
    """Everything read from one partition replica directory (by the pipeline's units)."""

    path: str
    topic_partition: TopicPartition
    broker_id: int | None
    log_dir: str
    log_start_offset: int | None  # log-start-offset-checkpoint
    high_watermark: int | None  # replication-offset-checkpoint
    leader_epoch: int | None  # last entry of leader-epoch-checkpoint
    segments: tuple[SegmentEvents, ...]  # in base-offset order
    snapshots: tuple[SnapshotRead, ...]  # in offset order
    txn_index: tuple[AbortedTxnEntry, ...]
    findings: tuple[Finding, ...] = ()  # from reading the txn indexes and the layout
    cleaner_offset: int | None = None  # cleaner-offset-checkpoint: offsets below it were compacted
    leader_epochs: tuple[EpochEntry, ...] = ()  # leader-epoch-checkpoint


@dataclass(frozen=True, slots=True)
class TxnStateInputs:
    """Everything read from one ``__transaction_state-<partition>`` replica directory."""

    path: str
    partition: int
    broker_id: int | None
    log_dir: str
    log_start_offset: int | None
    high_watermark: int | None
    leader_epoch: int | None  # last entry of leader-epoch-checkpoint
    segments: tuple[TxnLogSegment, ...]
    findings: tuple[Finding, ...] = ()
