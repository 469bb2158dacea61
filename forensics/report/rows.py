"""The rows of find-hanging (abort-commands, the report), describe-producers, list and describe, each kind declared once (see
:mod:`forensics.columns`): its fields in JSON order, with their CSV places and Kafka's tool table
columns (``kafka-transactions.sh`` 4.1, ``TransactionsCommand``: each command's ``HEADERS``) and their
cells in the ``--format table`` screens, from which :mod:`forensics.render.state_render`,
:mod:`forensics.render.kafka_text` and :mod:`forensics.render.state_screens` take theirs.
Built by keyword in :mod:`forensics.report.state`."""

from __future__ import annotations

from dataclasses import field
from forensics.dataclass_fast import dataclass

from forensics.columns import (
    ABSENT,
    BYTES,
    DURATION,
    ELSEWHERE,
    FACT,
    ITEMS,
    MS,
    PLAIN,
    START,
    TIME,
    TOPIC_N,
    VERDICT,
    Cell,
    JsonRow,
    Label,
    column,
    derived,
)
from forensics.model import whole_minutes
from forensics.report.preview import NO_BATCH, AbortPreview


def _elsewhere(text: str) -> Label:
    """The report's label of a column its card shows elsewhere than among the facts (heading, badge, ...)."""
    return Label(text, place=ELSEWHERE)


def _fact(order: int, text: str, none: str = "unknown", kind: str = PLAIN, skip_none: bool = False) -> Label:
    """The report's label of a column among its card's facts, the ``order``-th."""
    return Label(text, none, kind, FACT, skip_none=skip_none, order=order)


# -- describe-producers ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpanRow(JsonRow):
    """One transaction of a producer on the partition (``--timeline``; JSON's ``transactions``). Its
    screen's first column is its producer's id (:class:`ProducerRow`'s)."""

    first_offset: int = field(metadata=column(table=Cell(2, "FirstOffset"), wide=Cell(2, "FirstOffset")))
    last_data_offset: int | None = field(metadata=column(table=Cell(3, "LastDataOffset", drop=1),
                                                         wide=Cell(3, "LastDataOffset", drop=1)))
    marker_offset: int | None = field(metadata=column(table=Cell(4, "MarkerOffset"), wide=Cell(4, "MarkerOffset")))
    outcome: str = field(metadata=column(table=Cell(5, "Outcome"), wide=Cell(5, "Outcome")))  # COMMIT, ABORT, or OPEN
    data_epochs: list[int] = field(metadata=column(wide=Cell(6, "DataEpochs", ITEMS)))
    marker_epoch: int | None = field(metadata=column(wide=Cell(7, "MarkerEpoch")))
    coordinator_epoch: int | None = field(metadata=column(wide=Cell(8, "CoordinatorEpoch")))
    batches: int = field(metadata=column(wide=Cell(9, "Batches")))
    records: int = field(metadata=column(wide=Cell(10, "Records")))
    bytes: int
    first_timestamp: int | None = field(metadata=column(table=Cell(6, "FirstTimestamp", TIME),
                                                        wide=Cell(11, "FirstTimestamp", TIME)))
    last_timestamp: int | None
    marker_timestamp: int | None = field(metadata=column(wide=Cell(12, "MarkerTimestamp", TIME)))
    from_snapshot: bool


@dataclass(frozen=True, slots=True)
class ProducerRow(JsonRow):
    """One producer of a partition replica, as the broker holds it (DescribeProducersCommand)."""

    topic: str
    partition: int
    producer_id: int = field(metadata=column(csv=1, kafka=(1, "ProducerId"), table=Cell(1, "ProducerId"),
                                             wide=Cell(1, "ProducerId")))
    producer_epoch: int = field(metadata=column(csv=2, kafka=(2, "ProducerEpoch"), table=Cell(2, "Epoch"),
                                                wide=Cell(2, "ProducerEpoch")))
    latest_coordinator_epoch: int = field(metadata=column(
        csv=3, kafka=(3, "LatestCoordinatorEpoch"), absent="-1", table=Cell(3, "CoordEpoch"),
        wide=Cell(3, "LatestCoordinatorEpoch")))
    last_sequence: int = field(metadata=column(csv=4, kafka=(4, "LastSequence"), table=Cell(4, "LastSequence", drop=1),
                                               wide=Cell(4, "LastSequence")))
    last_timestamp: int = field(metadata=column(csv=5, kafka=(5, "LastTimestamp"), table=Cell(5, "LastTimestamp", TIME),
                                                wide=Cell(5, "LastTimestamp", TIME)))
    current_transaction_start_offset: int | None = field(metadata=column(
        csv=6, kafka=(6, "CurrentTransactionStartOffset"), table=Cell(6, "StartOffset"),
        wide=Cell(6, "CurrentTransactionStartOffset")))
    broker_id: int | None = field(metadata=column(csv=8, wide=Cell(8, "Broker")))
    last_offset: int | None = field(metadata=column(csv=7, wide=Cell(7, "LastOffset")))
    transactions: list[SpanRow]


# -- list and describe ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TransactionRow(JsonRow):
    """One transactional id as its coordinator holds it (ListTransactionsCommand)."""

    transactional_id: str = field(metadata=column(
        csv=1, kafka=(1, "TransactionalId"), table=Cell(1, "TransactionalId", fold=True, min_width=16),
        wide=Cell(1, "TransactionalId", fold=True, min_width=16)))
    coordinator: int | None = field(metadata=column(csv=2, kafka=(2, "Coordinator"), table=Cell(2, "Coordinator", drop=2),
                                                    wide=Cell(2, "Coordinator", drop=2)))
    producer_id: int | None = field(metadata=column(csv=3, kafka=(3, "ProducerId"), table=Cell(3, "ProducerId"),
                                                    wide=Cell(3, "ProducerId")))
    producer_epoch: int | None = field(metadata=column(csv=5, table=Cell(5, "ProducerEpoch", drop=1),
                                                       wide=Cell(5, "ProducerEpoch", drop=1)))
    transaction_state: str = field(metadata=column(csv=4, kafka=(4, "TransactionState"), table=Cell(4, "TransactionState"),
                                                   wide=Cell(4, "TransactionState")))
    transaction_timeout_ms: int | None = field(metadata=column(csv=6, wide=Cell(6, "TransactionTimeoutMs")))
    current_transaction_start_time_ms: int | None
    topic_partitions: list[str] = field(metadata=column(csv=8, table=Cell(6, "TopicPartitions", ITEMS, fold=True),
                                                        wide=Cell(8, "TopicPartitions", ITEMS, fold=True)))
    last_update_time_ms: int | None = field(metadata=column(csv=7, wide=Cell(7, "LastUpdateTime", TIME)))
    coordinator_epoch: int
    transaction_state_partition: int


@dataclass(frozen=True, slots=True)
class HistoryRow(JsonRow):
    """One record of a transactional id in ``__transaction_state`` (describe's history); a tombstone
    has no value columns."""

    offset: int = field(metadata=column(table=Cell(1, "Offset"), wide=Cell(1, "Offset")))
    timestamp: int = field(metadata=column(table=Cell(2, "Timestamp", TIME), wide=Cell(2, "Timestamp", TIME)))
    coordinator_epoch: int = field(metadata=column(wide=Cell(6, "CoordinatorEpoch")))
    transaction_state: str = field(metadata=column(table=Cell(3, "TransactionState"), wide=Cell(3, "TransactionState")))
    path: str
    position: int
    producer_id: int | None = field(default=ABSENT, metadata=column(table=Cell(4, "ProducerId", drop=2),
                                                                    wide=Cell(4, "ProducerId", drop=2)))
    producer_epoch: int | None = field(default=ABSENT, metadata=column(table=Cell(5, "Epoch", drop=1),
                                                                       wide=Cell(5, "Epoch", drop=1)))
    transaction_timeout_ms: int | None = field(default=ABSENT, metadata=column(wide=Cell(7, "TransactionTimeoutMs")))
    topic_partitions: list[str] = field(default=ABSENT, metadata=column(
        table=Cell(6, "TopicPartitions", ITEMS, fold=True), wide=Cell(9, "TopicPartitions", ITEMS, fold=True)))
    last_update_time_ms: int | None = ABSENT
    start_time_ms: int | None = field(default=ABSENT, metadata=column(wide=Cell(8, "StartTime", TIME)))
    value_version: int | None = ABSENT


@dataclass(frozen=True, slots=True)
class DescribeRow(JsonRow):
    """One transactional id with its history (DescribeTransactionsCommand); JSON: the list row's
    columns, then ``coordinatorId``, ``transactionDurationMs`` (as-of minus the start) and ``history``."""

    transactional_id: str = field(metadata=column(csv=2, kafka=(2, "TransactionalId"), table=Cell(2, "TransactionalId")))
    coordinator: int | None
    producer_id: int | None = field(metadata=column(csv=3, kafka=(3, "ProducerId"), table=Cell(3, "ProducerId")))
    producer_epoch: int | None = field(metadata=column(csv=4, kafka=(4, "ProducerEpoch"), table=Cell(4, "ProducerEpoch")))
    transaction_state: str = field(metadata=column(csv=5, kafka=(5, "TransactionState"),
                                                   table=Cell(5, "TransactionState")))
    transaction_timeout_ms: int | None = field(metadata=column(csv=6, kafka=(6, "TransactionTimeoutMs"),
                                                               table=Cell(6, "TransactionTimeoutMs", MS)))
    current_transaction_start_time_ms: int | None = field(metadata=column(
        csv=7, kafka=(7, "CurrentTransactionStartTimeMs"), table=Cell(7, "CurrentTransactionStartTime", START)))
    topic_partitions: list[str] = field(metadata=column(csv=9, kafka=(9, "TopicPartitions"),
                                                        table=Cell(9, "TopicPartitions", ITEMS)))
    last_update_time_ms: int | None
    coordinator_epoch: int
    transaction_state_partition: int
    transaction_duration_ms: int | None = field(metadata=column(csv=8, kafka=(8, "TransactionDurationMs"),
                                                                table=Cell(8, "TransactionDurationMs", MS)))
    history: list[HistoryRow]

    @derived(after="transaction_state_partition", csv=1, kafka=(1, "CoordinatorId"), table=Cell(1, "CoordinatorId"))
    def coordinator_id(self) -> int | None:
        """Kafka's describe calls the coordinator ``CoordinatorId``."""
        return self.coordinator


# -- find-hanging, abort-commands, the report -----------------------------------------------------------

_NO_DATA = f"{NO_BATCH} (known from the producer snapshot only)"


@dataclass(frozen=True, slots=True)
class BatchPlace(JsonRow):
    """Where the open transaction's first batch is (the evidence's ``firstBatch``)."""

    path: str = field(metadata=column(label=Label("first batch of the transaction: segment file")))
    position: int = field(metadata=column(label=Label("first batch: byte position in that file")))


@dataclass(frozen=True, slots=True)
class OpenTransactionEvidence(JsonRow):
    """The open transaction as the log read holds it (the evidence's ``openTransaction``)."""

    first_offset: int = field(metadata=column(label=Label("open transaction: first offset")))
    last_data_offset: int | None = field(metadata=column(label=Label("open transaction: last data offset", _NO_DATA)))
    batches: int = field(metadata=column(label=Label("open transaction: data batches read")))
    records: int = field(metadata=column(label=Label("open transaction: records read")))
    bytes: int = field(metadata=column(label=Label("open transaction: bytes read", kind=BYTES)))
    epochs: list[int] = field(metadata=column(label=Label("open transaction: producer epochs of its batches",
                                                          empty="none: no data batch of it read")))
    from_snapshot: bool = field(metadata=column(label=Label(
        "open transaction: opened before the snapshot the replay starts from")))


@dataclass(frozen=True, slots=True)
class CoordinatorRecordEvidence(JsonRow):
    """The newest coordinator record of the transactional id (the evidence's ``coordinatorRecord``)."""

    partition: int | None = field(metadata=column(label=Label("coordinator record: __transaction_state partition")))
    offset: int = field(metadata=column(label=Label("coordinator record: offset")))
    state: str = field(metadata=column(label=Label("coordinator record: state")))
    timestamp: int = field(metadata=column(label=Label("coordinator record: time", kind=TIME)))
    path: str = field(metadata=column(label=Label("coordinator record: segment file")))
    position: int = field(metadata=column(label=Label("coordinator record: byte position")))


@dataclass(frozen=True, slots=True)
class GapEvidence(JsonRow):
    """One gap in the evidence of a verdict, with its words (the evidence's ``gaps``; snake_case keys, as
    formatVersion 1 named them)."""

    kind: str = field(metadata=column(label=Label("evidence gap {n}: kind")))
    text: str = field(metadata=column(label=Label("evidence gap {n}: the log")))
    path: str = field(metadata=column(label=Label("evidence gap {n}: file")))
    position: int | None = field(metadata=column(label=Label("evidence gap {n}: byte position", skip_none=True)))
    log_end: int | None = field(metadata=column(json="log_end", label=Label(
        "evidence gap {n}: the log read ends at offset", skip_none=True)))
    partition_dir: str = field(metadata=column(json="partition_dir", label=Label(
        "evidence gap {n}: partition directory")))


@dataclass(frozen=True, slots=True)
class RowEvidence(JsonRow):
    """Files, byte positions, offsets and the coordinator record behind a row's verdict (its ``evidence``;
    :func:`forensics.render.reasons.evidence_row` writes the gaps' words)."""

    partition_dir: str = field(metadata=column(label=Label("partition directory")))
    broker_id: int | None = field(metadata=column(label=Label("broker id of the log dir",
                                                              "unknown: no meta.properties in the log dir")))
    first_batch: BatchPlace | None = field(metadata=column(label=Label("first batch of the transaction", _NO_DATA)))
    snapshot: str | None = field(metadata=column(label=Label("producer snapshot the replay starts from",
                                                             "none: replayed from the start of the log")))
    log_start_offset: int = field(metadata=column(label=Label("log start offset")))
    high_watermark: int = field(metadata=column(label=Label("high watermark")))
    last_stable_offset: int = field(metadata=column(label=Label("last stable offset (LSO)")))
    open_transaction: OpenTransactionEvidence | None = field(metadata=column(label=Label("the open transaction",
                                                                                         _NO_DATA)))
    coordinator_record: CoordinatorRecordEvidence = field(default=ABSENT, metadata=column(label=Label(
        "coordinator record", "none: no coordinator record names this transactional id")))  # where one names it
    gaps: list[GapEvidence] = field(default=ABSENT, metadata=column(  # where there are any
        label=Label("evidence gaps", empty="none")))


@dataclass(frozen=True, slots=True)
class HangingRow(JsonRow):
    """One open transaction as find-hanging, abort-commands and the report show it (columns in JSON order;
    CSV and Kafka's FindHangingTransactionsCommand columns placed as declared). The age is held once
    (``duration_ms``; seconds and Kafka's whole minutes derived), the commands once (``abort_forms``; the
    armed ones, ``abortArgs`` and the rest, derived)."""

    topic: str = field(metadata=column(  # the screens show topic and partition as one: topic-N
        csv=1, kafka=(1, "Topic"), table=Cell(1, "Partition", TOPIC_N, fold=True, min_width=24),
        wide=Cell(1, "Partition", TOPIC_N, fold=True, min_width=24), label=_elsewhere("topic")))
    partition: int = field(metadata=column(csv=2, kafka=(2, "Partition"), label=_elsewhere("partition")))
    producer_id: int = field(metadata=column(csv=3, kafka=(3, "ProducerId"), table=Cell(2, "ProducerId"),
                                             wide=Cell(3, "ProducerId"), label=_fact(3, "producer id")))
    producer_epoch: int = field(metadata=column(csv=4, kafka=(4, "ProducerEpoch"), table=Cell(3, "Epoch"),
                                                wide=Cell(4, "ProducerEpoch"), label=_fact(4, "producer epoch")))
    coordinator_epoch: int = field(metadata=column(
        csv=5, kafka=(5, "CoordinatorEpoch"), absent="-1", table=Cell(4, "CoordEpoch"), wide=Cell(5, "CoordinatorEpoch"),
        label=_fact(5, "coordinator epoch (-1: none yet)")))
    start_offset: int = field(metadata=column(
        csv=6, kafka=(6, "StartOffset"), absent="-1", table=Cell(5, "StartOffset"), wide=Cell(6, "StartOffset"),
        label=_fact(2, "start offset (first offset of the transaction)")))
    last_timestamp: int = field(metadata=column(
        csv=7, kafka=(7, "LastTimestamp"), wide=Cell(7, "LastTimestamp", TIME),
        label=_fact(7, "last timestamp (the producer's newest batch)", kind=TIME)))
    duration_ms: int | None = field(metadata=column(  # as-of time minus the last timestamp; None: no timestamp
        table=Cell(6, "Duration", DURATION, drop=2), wide=Cell(8, "Duration", DURATION),
        label=_fact(8, "open for (as-of time minus last timestamp)", "unknown: no timestamp", DURATION)))
    verdict: str = field(metadata=column(  # shown with its state (verdict_state) where that is another
        csv=9, table=Cell(7, "Verdict", VERDICT, drop=1), wide=Cell(9, "Verdict", VERDICT), label=_elsewhere("verdict")))
    reason: str = field(metadata=column(csv=10, label=_elsewhere("why")))
    transactional_id: str | None = field(metadata=column(csv=11, wide=Cell(10, "TransactionalId", fold=True),
                                                         label=_elsewhere("transactional id")))
    evidence: RowEvidence = field(metadata=column(label=_elsewhere("evidence")))  # its own group, last
    broker_id: int | None = field(metadata=column(
        wide=Cell(2, "Broker"), label=_fact(1, "broker", "unknown: its log dir has no meta.properties")))
    last_sequence: int = field(metadata=column(  # with lastTimestamp: what the live guard compares besides the epochs
        label=_fact(6, "last sequence")))
    armed: bool = field(metadata=column(label=_elsewhere("abort armed")))
    not_armed_because: str | None = field(metadata=column(label=_elsewhere("not armed because")))
    abort_forms: dict[str, list[str]] | None = field(metadata=column(  # every abort command form, armed or not
        label=_elsewhere("abort commands")))
    active_form: str | None = field(metadata=column(
        label=_elsewhere("the abort form for these brokers (first among the commands)")))
    advice: list[str] = field(metadata=column(label=_elsewhere("what to do")))
    coordinator_partition: int | None = field(metadata=column(label=_fact(
        10, "coordinator partition (__transaction_state)", "unknown: no coordinator record names this producer")))
    overdue_ms: int | None = field(metadata=column(
        label=_fact(9, "past its own transaction timeout by", kind=DURATION, skip_none=True)))
    verdict_state: str = field(metadata=column(  # the verdict's kind: its verdict, or a state of it ("overdue" of "ongoing")
        label=_elsewhere("verdict state (the badge shows it: ongoing, overdue)")))
    as_of_ms: int | None = field(default=ABSENT, metadata=column(  # find-hanging's rows say their as-of time
        label=_elsewhere("as of")))
    as_of_source: str = field(default=ABSENT, metadata=column(label=_elsewhere("where the as-of time came from")))
    abort_preview: AbortPreview | None = field(default=ABSENT, metadata=column(  # where one was computed
        label=Label("what the abort discards", skip_none=True)))  # its own group (rows with abort forms)

    def _armed_form(self, key: str) -> list[str] | None:
        return self.abort_forms[key] if self.armed and self.abort_forms else None

    @derived(after="transactional_id", label=_elsewhere("kafka-transactions.sh abort (legacy form), armed"))
    def abort_args(self) -> list[str] | None:
        """The legacy form, where the abort is armed."""
        return self._armed_form("abortArgs")

    @derived(after="evidence", label=_elsewhere("kafka-transactions.sh abort --start-offset, armed"))
    def abort_args_start_offset(self) -> list[str] | None:
        return self._armed_form("abortArgsStartOffset")

    @derived(after="abort_args_start_offset", label=_elsewhere("kafka-python admin abort, armed"))
    def kafka_python_args(self) -> list[str] | None:
        return self._armed_form("kafkaPythonArgs")

    @derived(after="broker_id", label=_elsewhere("open for (seconds)"))
    def duration_s(self) -> int | None:
        return self.duration_ms // 1000 if self.duration_ms is not None else None

    @derived(after="last_sequence", csv=8, kafka=(8, "Duration(min)"),
             label=_elsewhere("open for (minutes, as kafka-transactions.sh find-hanging prints it)"))
    def duration_min(self) -> int | None:
        """Kafka's ``Duration(min)``: ``TimeUnit.MILLISECONDS.toMinutes``, whole minutes toward zero."""
        return whole_minutes(self.duration_ms) if self.duration_ms is not None else None
