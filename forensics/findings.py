"""Findings: damage and anomalies reported as data, next to the results.

A finding never stops the analysis; it records what was seen, where (file path,
byte range, offset range) and why it matters. Plain frozen data; a row kind (:mod:`forensics.columns`)
whose fields declare its JSON object, their columns in export's ``findings`` table and their cells in
scan's Findings table.
"""

from __future__ import annotations

from dataclasses import field
from forensics.columns import BYTE_RANGE, FIELD_NAMES, NO_KEY, OFFSETS, VALUE, Cell, JsonRow, column, derived
from forensics.dataclass_fast import dataclass
from enum import Enum
from typing import final
from collections.abc import Iterable, Sequence


class Severity(str, Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class FindingKind(str, Enum):
    # byte-level damage in .log files
    TRUNCATED_TAIL = "truncated_tail"  # last entry extends past end of file
    ZERO_FILL = "zero_fill"  # zero bytes where a batch should start (preallocation, crash)
    CORRUPT_REGION = "corrupt_region"  # bytes that frame no valid batch; skipped by resync
    CRC_MISMATCH = "crc_mismatch"
    CORRUPT_BATCH = "corrupt_batch"  # framed batch whose header or records do not decode
    UNSUPPORTED_MAGIC = "unsupported_magic"
    UNSUPPORTED_CODEC = "unsupported_codec"
    OFFSET_REGRESSION = "offset_regression"  # batch offsets going backwards in one segment
    OFFSET_OVERFLOW = "offset_overflow"  # lastOffset - segment base does not fit in int32
    BATCH_BEFORE_BASE = "batch_before_base"  # batch offset below the segment's base offset
    # other files
    CORRUPT_INDEX = "corrupt_index"
    INDEX_ZERO_TAIL = "index_zero_tail"
    CORRUPT_SNAPSHOT = "corrupt_snapshot"
    CORRUPT_CHECKPOINT = "corrupt_checkpoint"
    CORRUPT_TRANSACTION_LOG = "corrupt_transaction_log"
    UNREADABLE_FILE = "unreadable_file"
    OUTSIDE_EVIDENCE = "outside_evidence"  # a symlink inside the evidence whose target leaves the inputs
    NOT_KAFKA = "not_kafka"
    # layout
    UNKNOWN_FILE = "unknown_file"
    DELETED_FILE = "deleted_file"
    CLEANED_FILE = "cleaned_file"
    SWAP_FILE = "swap_file"
    STALE_TMP_FILE = "stale_tmp_file"
    DUPLICATE_BROKER = "duplicate_broker"
    NO_CLUSTER_ID = "no_cluster_id"  # an input names no cluster among inputs that do: how its cluster was decided
    ORPHAN_INDEX = "orphan_index"  # index file without its .log
    MISSING_INDEX = "missing_index"
    # producer state (``ProducerAppendInfo``): anomalies the broker's replication path only warns about
    EPOCH_REGRESSION = "epoch_regression"  # producer epoch lower than the entry's
    COORDINATOR_EPOCH_REGRESSION = "coordinator_epoch_regression"  # marker coordinatorEpoch went down
    INVALID_TXN_STATE = "invalid_txn_state"  # non-transactional batch inside an open transaction
    MARKER_WITHOUT_TRANSACTION = "marker_without_transaction"  # COMMIT/ABORT with no open transaction
    TRANSACTION_SPANS_EPOCHS = "transaction_spans_epochs"  # one open transaction, several producer epochs
    DUPLICATE_SEQUENCE = "duplicate_sequence"  # a batch repeating sequence numbers of its producer's epoch
    ABOVE_HIGH_WATERMARK = "above_high_watermark"  # data past the replication-offset-checkpoint
    STATE_DIVERGENCE = "state_divergence"  # snapshot + replay and full history disagree
    SNAPSHOT_SKIPPED = "snapshot_skipped"  # a snapshot the broker would not load (range, CRC)
    NO_SNAPSHOT = "no_snapshot"  # state rebuilt from the segments alone
    TXN_INDEX_MISMATCH = "txn_index_mismatch"  # aborted txns implied by markers vs .txnindex
    UNKNOWN_PRODUCER_HISTORY = "unknown_producer_history"  # producer known only from a snapshot
    REPLICA_DIVERGENCE = "replica_divergence"  # replicas of one partition disagree (markers, producer state)
    # transaction coordinator (``TransactionStateManager``, ``TransactionMetadata``)
    ILLEGAL_TRANSITION = "illegal_transition"
    WRONG_COORDINATOR_PARTITION = "wrong_coordinator_partition"  # id not where its hash says
    UNKNOWN_TRANSACTION_STATUS = "unknown_transaction_status"
    TXN_PARTITION_COUNT = "txn_partition_count"  # __transaction_state partition count vs the disk
    # the KRaft cluster image (``__cluster_metadata`` replayed as ``MetadataDelta``)
    CORRUPT_METADATA_RECORD = "corrupt_metadata_record"  # a metadata record that does not decode
    METADATA_REPLAY = "metadata_replay"  # a record Kafka's replay refuses (unknown topic id, ...): not applied
    METADATA_INCOMPLETE = "metadata_incomplete"  # records of the image are not among the inputs or not readable
    # the incident clock (analysis/clock.py)
    FUTURE_TIMESTAMP = "future_timestamp"  # a record time after every file time: not used as the as-of


_DEFAULT_SEVERITY = {
    FindingKind.TRUNCATED_TAIL: Severity.WARNING,
    FindingKind.ZERO_FILL: Severity.WARNING,
    FindingKind.CORRUPT_REGION: Severity.ERROR,
    FindingKind.CRC_MISMATCH: Severity.ERROR,
    FindingKind.CORRUPT_BATCH: Severity.ERROR,
    FindingKind.UNSUPPORTED_MAGIC: Severity.ERROR,
    FindingKind.UNSUPPORTED_CODEC: Severity.ERROR,
    FindingKind.OFFSET_REGRESSION: Severity.ERROR,
    FindingKind.OFFSET_OVERFLOW: Severity.WARNING,
    FindingKind.BATCH_BEFORE_BASE: Severity.ERROR,
    FindingKind.CORRUPT_INDEX: Severity.WARNING,
    FindingKind.INDEX_ZERO_TAIL: Severity.INFO,
    FindingKind.CORRUPT_SNAPSHOT: Severity.WARNING,
    FindingKind.CORRUPT_CHECKPOINT: Severity.WARNING,
    FindingKind.CORRUPT_TRANSACTION_LOG: Severity.ERROR,
    FindingKind.UNREADABLE_FILE: Severity.ERROR,
    FindingKind.OUTSIDE_EVIDENCE: Severity.WARNING,
    FindingKind.NOT_KAFKA: Severity.WARNING,
    FindingKind.UNKNOWN_FILE: Severity.INFO,
    FindingKind.DELETED_FILE: Severity.INFO,
    FindingKind.CLEANED_FILE: Severity.INFO,
    FindingKind.SWAP_FILE: Severity.INFO,
    FindingKind.STALE_TMP_FILE: Severity.INFO,
    FindingKind.DUPLICATE_BROKER: Severity.WARNING,
    FindingKind.NO_CLUSTER_ID: Severity.WARNING,
    FindingKind.ORPHAN_INDEX: Severity.INFO,
    FindingKind.MISSING_INDEX: Severity.INFO,
    FindingKind.EPOCH_REGRESSION: Severity.WARNING,
    FindingKind.COORDINATOR_EPOCH_REGRESSION: Severity.WARNING,
    FindingKind.INVALID_TXN_STATE: Severity.ERROR,
    FindingKind.DUPLICATE_SEQUENCE: Severity.ERROR,
    FindingKind.MARKER_WITHOUT_TRANSACTION: Severity.INFO,
    FindingKind.TRANSACTION_SPANS_EPOCHS: Severity.WARNING,
    FindingKind.ABOVE_HIGH_WATERMARK: Severity.INFO,
    FindingKind.STATE_DIVERGENCE: Severity.WARNING,
    FindingKind.SNAPSHOT_SKIPPED: Severity.INFO,
    FindingKind.NO_SNAPSHOT: Severity.INFO,
    FindingKind.TXN_INDEX_MISMATCH: Severity.WARNING,
    FindingKind.UNKNOWN_PRODUCER_HISTORY: Severity.INFO,
    FindingKind.REPLICA_DIVERGENCE: Severity.WARNING,
    FindingKind.ILLEGAL_TRANSITION: Severity.WARNING,
    FindingKind.WRONG_COORDINATOR_PARTITION: Severity.WARNING,
    FindingKind.UNKNOWN_TRANSACTION_STATUS: Severity.ERROR,
    FindingKind.TXN_PARTITION_COUNT: Severity.WARNING,
    FindingKind.CORRUPT_METADATA_RECORD: Severity.ERROR,
    FindingKind.METADATA_REPLAY: Severity.WARNING,
    FindingKind.METADATA_INCOMPLETE: Severity.WARNING,
    FindingKind.FUTURE_TIMESTAMP: Severity.WARNING,
}

# findings about the evidence itself (not what it says): inputs that are not Kafka or cannot be read,
# disks claiming one broker, damaged bytes, a partition count that does not fit. Every command that
# reads disks shows these, whatever else it leaves to ``scan``.
EVIDENCE_KINDS = frozenset({
    FindingKind.TRUNCATED_TAIL, FindingKind.ZERO_FILL, FindingKind.CORRUPT_REGION, FindingKind.CRC_MISMATCH,
    FindingKind.CORRUPT_BATCH, FindingKind.UNSUPPORTED_MAGIC, FindingKind.UNSUPPORTED_CODEC,
    FindingKind.CORRUPT_INDEX, FindingKind.CORRUPT_SNAPSHOT, FindingKind.CORRUPT_CHECKPOINT,
    FindingKind.CORRUPT_TRANSACTION_LOG, FindingKind.UNREADABLE_FILE, FindingKind.OUTSIDE_EVIDENCE,
    FindingKind.NOT_KAFKA, FindingKind.DUPLICATE_BROKER, FindingKind.TXN_PARTITION_COUNT, FindingKind.NO_CLUSTER_ID,
    FindingKind.FUTURE_TIMESTAMP,
})


@final  # (so that a test of ``type(x) is Finding`` tells the type checker both ways)
@dataclass(frozen=True, slots=True)
class Finding(JsonRow):
    """One finding; its JSON object (keyed by field name, a field left out where it is None, ``count`` where it
    is 1), its columns in export's ``findings`` table (``export=``, an enum as its value) and its cells in
    scan's Findings table (``table=``, the same at any width) declared with its fields."""

    JSON_KEYS = FIELD_NAMES  # (its JSON keys: end_position, first_offset, ...; its export columns lowerCamelCase)

    kind: FindingKind = field(metadata=column(export="string!", table=Cell(2, "Kind", VALUE), wide=Cell(2, "Kind", VALUE)))
    message: str = field(metadata=column(export="string!", table=Cell(6, "Message", fold=True, min_width=20),
                                         wide=Cell(6, "Message", fold=True, min_width=20)))
    path: str | None = field(default=None, metadata=column(
        export="string", json_unless=None, table=Cell(3, "Path", fold=True, path=True),
        wide=Cell(3, "Path", fold=True, path=True)))
    position: int | None = field(default=None, metadata=column(  # first byte concerned; the table: the byte range
        export="long", json_unless=None, table=Cell(4, "Bytes", BYTE_RANGE, drop=1),
        wide=Cell(4, "Bytes", BYTE_RANGE, drop=1)))
    end_position: int | None = field(default=None, metadata=column(  # exclusive end of that range
        export="long", json_unless=None))
    first_offset: int | None = field(default=None, metadata=column(  # the table: the offset range
        export="long", json_unless=None, table=Cell(5, "Offsets", OFFSETS, drop=2),
        wide=Cell(5, "Offsets", OFFSETS, drop=2)))
    last_offset: int | None = field(default=None, metadata=column(export="long", json_unless=None))
    severity: Severity | None = field(default=None, metadata=column(json=NO_KEY))  # None: the kind's (level)
    count: int = field(default=1, metadata=column(  # more than 1: an aggregate standing for that many (FindingRuns)
        export="long!", json_unless=1))
    last_position: int | None = field(default=None, metadata=column(  # an aggregate's: the last one's first byte
        export="long", json_unless=None))

    @derived(after="kind", json="severity", export="string!", table=Cell(1, "Severity", VALUE),
             wide=Cell(1, "Severity", VALUE))
    def level(self) -> Severity:
        return self.severity or _DEFAULT_SEVERITY.get(self.kind, Severity.WARNING)

    @property
    def byte_count(self) -> int | None:
        if self.position is None or self.end_position is None:
            return None
        return self.end_position - self.position

    def one_line(self) -> str:
        where = []
        if self.path:
            where.append(self.path)
        if self.position is not None:
            end = self.end_position if self.last_position is None else self.last_position
            if end is not None and end != self.position:
                where.append(f"bytes {self.position}-{end}")
            else:
                where.append(f"byte {self.position}")
        if self.first_offset is not None:
            if self.last_offset is not None and self.last_offset != self.first_offset:
                where.append(f"offsets {self.first_offset}-{self.last_offset}")
            else:
                where.append(f"offset {self.first_offset}")
        loc = ", ".join(where)
        return f"{self.level.value}: {self.kind.value}: {loc}: {self.message}" if loc else (
            f"{self.level.value}: {self.kind.value}: {self.message}"
        )


def total(findings: Iterable[Finding]) -> int:
    """How many findings these stand for (an aggregate counts as many as it stands for)."""
    return sum(f.count for f in findings)


def level_counts(findings: Iterable[Finding]) -> dict[str, int]:
    """Findings per severity, aggregates counted as many as they stand for."""
    out: dict[str, int] = {}
    for f in findings:
        out[f.level.value] = out.get(f.level.value, 0) + f.count
    return out


AGGREGATE_AFTER = 3  # findings of one kind about one subject shown whole before the rest are counted


class _Aggregate:
    """The findings of one kind about one subject in one file past the first few: a count and the
    offset and byte ranges they cover."""

    __slots__ = ("first", "count", "first_offset", "last_offset", "position", "last_position")

    def __init__(self, f: Finding) -> None:
        self.first, self.count = f, 1
        self.first_offset, self.last_offset = f.first_offset, _last_offset(f)
        self.position = self.last_position = f.position

    def add(self, f: Finding) -> None:
        self.count += 1
        self.first_offset = _opt(min, self.first_offset, f.first_offset)
        self.last_offset = _opt(max, self.last_offset, _last_offset(f))
        self.position = _opt(min, self.position, f.position)
        self.last_position = _opt(max, self.last_position, f.position)

    def finding(self, subject: str, shown: int) -> Finding:
        if self.count == 1:
            return self.first
        f, where = self.first, []
        if self.first_offset is not None:
            where.append(f"at offsets {self.first_offset}..{self.last_offset}")
        if self.position is not None:
            where.append(f"in batches starting at bytes {self.position}..{self.last_position}")
        message = (f"{subject}: {f.kind.value} x {self.count:,} more{', ' if where else ''}{', '.join(where)} "
                   f"(aggregated: the first {shown} are listed one by one)")
        return Finding(f.kind, message, f.path, self.position, None, self.first_offset, self.last_offset, f.severity,
                       self.count, self.last_position)


def _last_offset(f: Finding) -> int | None:
    return f.last_offset if f.last_offset is not None else f.first_offset


def _opt(pick, a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else pick(a, b)


class FindingRuns:
    """Findings collected as they are made, aggregated: of the findings of one kind about one
    subject (a producer, a transactional id), the first ``keep`` are kept whole, and the rest become,
    per file, one aggregate (:attr:`Finding.count`, offset range, first and last byte) placed where
    the first of them was. Memory stays flat however many findings a log yields."""

    def __init__(self, keep: int = AGGREGATE_AFTER) -> None:
        self.keep = keep
        self._out: list[Finding | tuple[str, _Aggregate]] = []
        self._seen: dict[tuple[FindingKind, str], int] = {}
        self._aggregates: dict[tuple[FindingKind, str, str | None], _Aggregate] = {}

    def add(self, f: Finding, subject: str) -> None:
        key = (f.kind, subject)
        n = self._seen[key] = self._seen.get(key, 0) + 1
        if n <= self.keep:
            self._out.append(f)
            return
        agg = self._aggregates.get((f.kind, subject, f.path))
        if agg is None:
            agg = self._aggregates[(f.kind, subject, f.path)] = _Aggregate(f)
            self._out.append((subject, agg))
        else:
            agg.add(f)

    def findings(self) -> tuple[Finding, ...]:
        return tuple(x if isinstance(x, Finding) else x[1].finding(x[0], self.keep) for x in self._out)


def dedupe(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in order, each once. A file that cannot be read is reported once (the first
    report wins: discovery's, which says what the gap costs, before the reader's)."""
    seen: set[tuple] = set()
    out = []
    for f in findings:
        key: tuple = (f.kind, f.path) if f.kind is FindingKind.UNREADABLE_FILE else (
            f.kind, f.path, f.position, f.end_position, f.first_offset, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def not_kafka_segment(findings: Sequence[Finding], size: int, batches: int) -> tuple[Finding, ...]:
    """A segment in which not one batch frames is not a Kafka segment (a file of another kind
    named like one, or one overwritten whole): its corrupt region from byte 0 to the end becomes
    one NOT_KAFKA finding with the same byte range."""
    if batches or size <= 0:
        return tuple(findings)
    out = []
    for f in findings:
        if f.kind is FindingKind.CORRUPT_REGION and f.position == 0 and f.end_position == size:
            f = Finding(FindingKind.NOT_KAFKA, f"not a Kafka segment: no valid batch in any of its {size} bytes "
                        f"({f.message})", f.path, 0, size, severity=Severity.ERROR)
        out.append(f)
    return tuple(out)
