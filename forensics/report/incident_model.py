"""The incident report's model: plain frozen data that :mod:`forensics.report.incident` builds and
:mod:`forensics.render.html_report` lays out. Times are epoch milliseconds."""

from __future__ import annotations

from forensics.dataclass_fast import dataclass

from forensics.analysis.clock import AsOf
from forensics.findings import Finding

Scalar = str | int | float | bool | None

# Tones: what a picture's colour says; the renderer maps each to a colour and a legend entry.
IDLE, OPEN, PREPARE, COMMIT, ABORT, DEAD, HANGING, UNVERIFIED, UNKNOWN = (
    "idle", "open", "prepare", "commit", "abort", "dead", "hanging", "unverified", "unknown")


@dataclass(frozen=True, slots=True)
class Field:  # One fact of a row, flattened: ``evidence.openTransaction.firstOffset`` = 6.
    key: str  # its path in the row (find-hanging --format json)
    value: Scalar | tuple[Scalar, ...]  # a tuple: a list of scalars
    label: str = ""  # what a person calls it (forensics.report.incident_labels)
    kind: str = ""  # how to show it: time (epoch ms), duration (ms), bytes, lines, quoted, or plain
    none: str = "unknown"  # what a missing value (or an empty list) means

    @property
    def is_time(self) -> bool:
        return self.kind == "time"


@dataclass(frozen=True, slots=True)
class FieldGroup:  # A nested record of a row (``abortPreview``), or the row's other keys (``key`` "").
    key: str
    label: str
    fields: tuple[Field, ...]


@dataclass(frozen=True, slots=True)
class CommandLine:
    key: str  # the row key it came from (abortArgs, ...)
    label: str
    argv: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Summary:
    brokers: tuple[int | None, ...]  # broker id of each log dir (None: no meta.properties)
    log_dirs: int
    topics: int
    partitions: int  # data partitions read (distinct topic-partitions)
    replicas: int
    txn_state_partitions: int  # __transaction_state partitions among the inputs
    txn_state_partition_count: int  # the count the analysis used
    transactional_ids: int
    open_transactions: int
    hanging: int  # proven hanging: the verdicts whose abort is armed
    unverifiable: int  # open transactions the evidence cannot decide (never armed by the report)
    attention: int  # stuck or fenced coordinators, ongoing long past their timeout
    verdicts: tuple[tuple[str, int], ...]  # verdict -> count, every open transaction
    findings: int
    findings_by_severity: tuple[tuple[str, int], ...]
    log_bytes: int
    segments: int | None = None  # from a scan, when one was given
    batches: int | None = None
    records: int | None = None
    not_counted: tuple[tuple[str, int], ...] = ()  # internal partitions among the inputs not in ``partitions``


@dataclass(frozen=True, slots=True)
class LsoLag:
    topic: str
    partition: int
    broker_id: int | None
    log_start_offset: int
    last_stable_offset: int
    high_watermark: int
    high_watermark_known: bool  # False: no checkpoint, the log end stands in
    log_end_offset: int
    pinned_by: int | None  # producer id of the transaction at the LSO
    pinned_offset: int | None  # its first offset (the first unstable offset)
    pinned_since_ms: int | None  # its first data batch's timestamp
    lag_ms: int | None  # newest batch timestamp of the partition minus pinned_since_ms
    age_ms: int | None  # as-of minus pinned_since_ms
    tone: str  # HANGING when the pinning transaction hangs, OPEN when the LSO lags, else IDLE
    open_transactions: int = 0  # open transactions on the partition (its verdicts)

    @property
    def lag_offsets(self) -> int:
        return self.high_watermark - self.last_stable_offset


@dataclass(frozen=True, slots=True)
class OpenTransaction:  # One open transaction and its verdict, with evidence and the proposed commands.
    topic: str
    partition: int
    broker_id: int | None
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: int
    transactional_id: str | None
    verdict: str
    reason: str
    abortable: bool  # proven hanging
    armed: bool  # its abort command is proposed for running (else shown, not armed)
    not_armed_because: str | None
    advice: tuple[str, ...]  # what to do when the answer is "do not abort"
    last_timestamp_ms: int | None
    duration_ms: int | None
    tone: str
    evidence: tuple[Field, ...]
    commands: tuple[CommandLine, ...]
    extras: tuple[FieldGroup, ...]  # any other row key (e.g. abortPreview), flattened
    facts: tuple[Field, ...] = ()  # the row's own facts (broker, offsets, epochs, times), labelled
    active_form: str | None = None  # the command form for these brokers (the key of one of ``commands``)


@dataclass(frozen=True, slots=True)
class CoordinatorEvent:  # One ``__transaction_state`` record of the id.
    time_ms: int
    offset: int
    state: str
    tone: str
    producer_id: int | None
    producer_epoch: int | None
    coordinator_epoch: int  # the batch's partitionLeaderEpoch
    partitions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SpanEvent:  # One transaction of the id on one partition: its data, then its marker (or none: open).
    producer_id: int
    first_offset: int
    last_data_offset: int | None
    first_time_ms: int | None
    last_time_ms: int | None
    marker_offset: int | None
    marker_time_ms: int | None
    outcome: str | None  # COMMIT | ABORT | None (open)
    epochs: tuple[int, ...]
    verdict: str | None  # of an open transaction
    tone: str


@dataclass(frozen=True, slots=True)
class Lane:
    name: str  # topic-partition
    broker_id: int | None
    present: bool  # False: the coordinator named it, but it is not among the inputs
    spans: tuple[SpanEvent, ...]
    omitted: int = 0  # older closed transactions left out


@dataclass(frozen=True, slots=True)
class Timeline:
    title: str  # the transactional id, or "producer id N" when no coordinator record names it
    transactional_id: str | None
    producer_ids: tuple[int, ...]
    coordinator_partition: int | None
    state: str  # current coordinator state ("" when unknown)
    coordinator: tuple[CoordinatorEvent, ...]
    lanes: tuple[Lane, ...]
    start_ms: int | None  # time range of every known time of the timeline
    end_ms: int | None
    hanging: bool
    coordinator_omitted: int = 0


@dataclass(frozen=True, slots=True)
class Selection:
    """The part of the evidence a report with ``--topic``, ``--partition`` or ``--broker-id`` shows, and
    what it leaves out (counted as the report without them would count it)."""

    topic: str | None
    partition: int | None
    broker_id: int | None
    partitions_left_out: int  # data partitions among the inputs with no replica in the selection
    topics_left_out: int  # topics with no partition in the selection
    open_left_out: int  # open transactions the report without the selection judges and this one does not
    hanging_left_out: int  # of those, proven hanging
    unverifiable_left_out: int
    attention_left_out: int  # stuck, fenced or overdue
    findings_left_out: int  # findings on the data partition replicas left out
    timelines_left_out: int  # transactional ids with no transaction on the selected partitions

    @property
    def needs_attention_left_out(self) -> int:
        return self.hanging_left_out + self.unverifiable_left_out + self.attention_left_out


@dataclass(frozen=True, slots=True)
class Incident:
    tool_version: str
    inputs: tuple[str, ...]
    manifest_path: str | None
    manifest_sha256: str | None
    as_of_ms: int | None
    as_of_source: str
    summary: Summary
    lso: tuple[LsoLag, ...]
    transactions: tuple[OpenTransaction, ...]  # abortable first
    timelines: tuple[Timeline, ...]
    timelines_omitted: int
    findings: tuple[Finding, ...]
    findings_omitted: int
    warnings: tuple[str, ...] = ()  # shown first: what makes every verdict weaker (e.g. no coordinator data)
    clock: AsOf | None = None  # the as-of time with what the file times say about it
    brokers: str | None = None  # the brokers' version range, as one line
    selection: Selection | None = None  # None: every partition among the inputs
