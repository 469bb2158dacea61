"""What the work units return: per-file results the folds and the analysis consume.

Plain picklable tuples (they cross process boundaries in the Spark executor), with findings.
"""

from __future__ import annotations

from dataclasses import field
from forensics.dataclass_fast import dataclass
from typing import NamedTuple

from forensics.codec.checkpoints import EpochEntry
from forensics.codec.snapshot import ProducerSnapshot
from forensics.columns import EXACT_SIZE, OFFSETS, SET, SIZE, TOTAL, Cell, JsonRow, column
from forensics.findings import Finding
from forensics.model import TopicPartition
from forensics.state.coordinator import TxnLogRecord
from forensics.state.events import ProducerEvent


@dataclass(frozen=True, slots=True)
class SegmentSummary(JsonRow):
    """Header statistics of one ``.log`` file (what ``scan`` reports per segment: its JSON object, in field
    order, and its cells in scan's table of files given alone, the same at any width: :mod:`forensics.columns`)."""

    path: str = field(metadata=column(table=Cell(1, "File", fold=True, path=True),
                                      wide=Cell(1, "File", fold=True, path=True)))
    base_offset: int
    size: int = field(metadata=column(json="bytes", table=Cell(2, "Bytes", SIZE), wide=Cell(2, "Bytes", EXACT_SIZE)))
    batches: int = field(default=0, metadata=column(table=Cell(3, "Batches"), wide=Cell(3, "Batches")))
    records: int = field(default=0, metadata=column(table=Cell(4, "Records"), wide=Cell(4, "Records")))
    first_offset: int | None = field(default=None, metadata=column(table=Cell(5, "Offsets", OFFSETS),
                                                                   wide=Cell(5, "Offsets", OFFSETS)))
    last_offset: int | None = None
    max_timestamp: int | None = None
    magics: frozenset[int] = field(default=frozenset(), metadata=column(table=Cell(6, "Magic", SET, drop=2),
                                                                        wide=Cell(6, "Magic", SET, drop=2)))
    codecs: frozenset[str] = field(default=frozenset(), metadata=column(table=Cell(7, "Codecs", SET, drop=1),
                                                                        wide=Cell(7, "Codecs", SET, drop=1)))
    transactional_batches: int = 0
    control_batches: int = 0
    invalid_batches: int = 0
    findings: tuple[Finding, ...] = field(default=(), metadata=column(table=Cell(8, "Findings", TOTAL),
                                                                      wide=Cell(8, "Findings", TOTAL)))


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
