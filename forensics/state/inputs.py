"""What the work units return: per-file results the folds and the analysis consume.

Plain picklable tuples (they cross process boundaries in the Spark executor), with findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, NamedTuple, Optional, Tuple

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
    first_offset: Optional[int] = None
    last_offset: Optional[int] = None
    max_timestamp: Optional[int] = None
    magics: FrozenSet[int] = frozenset()
    codecs: FrozenSet[str] = frozenset()
    transactional_batches: int = 0
    control_batches: int = 0
    invalid_batches: int = 0
    findings: Tuple[Finding, ...] = ()


class SegmentEvents(NamedTuple):
    """What one ``.log`` segment contributes to a partition's producer state."""

    path: str
    base_offset: int
    size: int
    events: Tuple[ProducerEvent, ...]
    batches: int  # frames with a valid checksum
    next_offset: Optional[int]  # last valid offset + 1 (None: no valid batch)
    max_timestamp: Optional[int]
    first_invalid_position: Optional[int]  # where the broker's reader would stop
    findings: Tuple[Finding, ...]


class TxnLogSegment(NamedTuple):
    """What one ``__transaction_state`` segment contributes to the coordinator's metadata."""

    path: str
    base_offset: int
    size: int
    records: Tuple[TxnLogRecord, ...]
    next_offset: Optional[int]
    max_timestamp: Optional[int]
    findings: Tuple[Finding, ...]


class SnapshotRead(NamedTuple):
    path: str
    offset: int
    snapshot: Optional[ProducerSnapshot]
    findings: Tuple[Finding, ...]


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
    broker_id: Optional[int]
    log_dir: str
    log_start_offset: Optional[int]  # log-start-offset-checkpoint
    high_watermark: Optional[int]  # replication-offset-checkpoint
    leader_epoch: Optional[int]  # last entry of leader-epoch-checkpoint
    segments: Tuple[SegmentEvents, ...]  # in base-offset order
    snapshots: Tuple[SnapshotRead, ...]  # in offset order
    txn_index: Tuple[AbortedTxnEntry, ...]
    findings: Tuple[Finding, ...] = ()  # from reading the txn indexes and the layout
    cleaner_offset: Optional[int] = None  # cleaner-offset-checkpoint: offsets below it were compacted
    leader_epochs: Tuple[EpochEntry, ...] = ()  # leader-epoch-checkpoint


@dataclass(frozen=True, slots=True)
class TxnStateInputs:
    """Everything read from one ``__transaction_state-<partition>`` replica directory."""

    path: str
    partition: int
    broker_id: Optional[int]
    log_dir: str
    log_start_offset: Optional[int]
    high_watermark: Optional[int]
    leader_epoch: Optional[int]  # last entry of leader-epoch-checkpoint
    segments: Tuple[TxnLogSegment, ...]
    findings: Tuple[Finding, ...] = ()
