"""The rows of find-hanging (abort-commands, the report), describe-producers, list and describe, each kind declared once (see
:mod:`forensics.columns`): its fields in JSON order, with their CSV places and Kafka's tool table
columns (``kafka-transactions.sh`` 4.1, ``TransactionsCommand``: each command's ``HEADERS``), from
which :mod:`forensics.render.state_render` and :mod:`forensics.render.kafka_text` take theirs.
Built by keyword in :mod:`forensics.report.state`."""

from __future__ import annotations

from dataclasses import field
from forensics.dataclass_fast import dataclass
from typing import Any

from forensics.columns import ABSENT, JsonRow, column, derived
from forensics.model import whole_minutes

# -- describe-producers ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpanRow(JsonRow):
    """One transaction of a producer on the partition (``--timeline``; JSON's ``transactions``)."""

    first_offset: int
    last_data_offset: int | None
    marker_offset: int | None
    outcome: str  # COMMIT, ABORT, or OPEN
    data_epochs: list[int]
    marker_epoch: int | None
    coordinator_epoch: int | None
    batches: int
    records: int
    bytes: int
    first_timestamp: int | None
    last_timestamp: int | None
    marker_timestamp: int | None
    from_snapshot: bool


@dataclass(frozen=True, slots=True)
class ProducerRow(JsonRow):
    """One producer of a partition replica, as the broker holds it (DescribeProducersCommand)."""

    topic: str
    partition: int
    producer_id: int = field(metadata=column(csv=1, kafka=(1, "ProducerId")))
    producer_epoch: int = field(metadata=column(csv=2, kafka=(2, "ProducerEpoch")))
    latest_coordinator_epoch: int = field(metadata=column(csv=3, kafka=(3, "LatestCoordinatorEpoch"), absent="-1"))
    last_sequence: int = field(metadata=column(csv=4, kafka=(4, "LastSequence")))
    last_timestamp: int = field(metadata=column(csv=5, kafka=(5, "LastTimestamp")))
    current_transaction_start_offset: int | None = field(
        metadata=column(csv=6, kafka=(6, "CurrentTransactionStartOffset")))
    broker_id: int | None = field(metadata=column(csv=8))
    last_offset: int | None = field(metadata=column(csv=7))
    transactions: list[SpanRow]


# -- list and describe ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TransactionRow(JsonRow):
    """One transactional id as its coordinator holds it (ListTransactionsCommand)."""

    transactional_id: str = field(metadata=column(csv=1, kafka=(1, "TransactionalId")))
    coordinator: int = field(metadata=column(csv=2, kafka=(2, "Coordinator")))
    producer_id: int | None = field(metadata=column(csv=3, kafka=(3, "ProducerId")))
    producer_epoch: int | None = field(metadata=column(csv=5))
    transaction_state: str = field(metadata=column(csv=4, kafka=(4, "TransactionState")))
    transaction_timeout_ms: int | None = field(metadata=column(csv=6))
    current_transaction_start_time_ms: int | None
    topic_partitions: list[str] = field(metadata=column(csv=8))
    last_update_time_ms: int | None = field(metadata=column(csv=7))
    coordinator_epoch: int
    transaction_state_partition: int


@dataclass(frozen=True, slots=True)
class HistoryRow(JsonRow):
    """One record of a transactional id in ``__transaction_state`` (describe's history); a tombstone
    has no value columns."""

    offset: int
    timestamp: int
    coordinator_epoch: int
    transaction_state: str
    path: str
    position: int
    producer_id: int | None = ABSENT
    producer_epoch: int | None = ABSENT
    transaction_timeout_ms: int | None = ABSENT
    topic_partitions: list[str] = ABSENT
    last_update_time_ms: int | None = ABSENT
    start_time_ms: int | None = ABSENT
    value_version: int | None = ABSENT


@dataclass(frozen=True, slots=True)
class DescribeRow(JsonRow):
    """One transactional id with its history (DescribeTransactionsCommand); JSON: the list row's
    columns, then ``coordinatorId``, ``transactionDurationMs`` (as-of minus the start) and ``history``."""

    transactional_id: str = field(metadata=column(csv=2, kafka=(2, "TransactionalId")))
    coordinator: int
    producer_id: int | None = field(metadata=column(csv=3, kafka=(3, "ProducerId")))
    producer_epoch: int | None = field(metadata=column(csv=4, kafka=(4, "ProducerEpoch")))
    transaction_state: str = field(metadata=column(csv=5, kafka=(5, "TransactionState")))
    transaction_timeout_ms: int | None = field(metadata=column(csv=6, kafka=(6, "TransactionTimeoutMs")))
    current_transaction_start_time_ms: int | None = field(
        metadata=column(csv=7, kafka=(7, "CurrentTransactionStartTimeMs")))
    topic_partitions: list[str] = field(metadata=column(csv=9, kafka=(9, "TopicPartitions")))
    last_update_time_ms: int | None
    coordinator_epoch: int
    transaction_state_partition: int
    transaction_duration_ms: int | None = field(metadata=column(csv=8, kafka=(8, "TransactionDurationMs")))
    history: list[HistoryRow]

    @derived(after="transaction_state_partition", csv=1, kafka=(1, "CoordinatorId"))
    def coordinator_id(self) -> int:
        """Kafka's describe calls the coordinator ``CoordinatorId``."""
        return self.coordinator


# -- find-hanging, abort-commands, the report -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HangingRow(JsonRow):
    """One open transaction as find-hanging, abort-commands and the report show it (columns in JSON order;
    CSV and Kafka's FindHangingTransactionsCommand columns placed as declared). The age is held once
    (``duration_ms``; seconds and Kafka's whole minutes derived), the commands once (``abort_forms``; the
    armed ones, ``abortArgs`` and the rest, derived)."""

    topic: str = field(metadata=column(csv=1, kafka=(1, "Topic")))
    partition: int = field(metadata=column(csv=2, kafka=(2, "Partition")))
    producer_id: int = field(metadata=column(csv=3, kafka=(3, "ProducerId")))
    producer_epoch: int = field(metadata=column(csv=4, kafka=(4, "ProducerEpoch")))
    coordinator_epoch: int = field(metadata=column(csv=5, kafka=(5, "CoordinatorEpoch"), absent="-1"))
    start_offset: int = field(metadata=column(csv=6, kafka=(6, "StartOffset"), absent="-1"))
    last_timestamp: int = field(metadata=column(csv=7, kafka=(7, "LastTimestamp")))
    duration_ms: int | None  # as-of time minus the last timestamp; None: no timestamp
    verdict: str = field(metadata=column(csv=9))
    reason: str = field(metadata=column(csv=10))
    transactional_id: str | None = field(metadata=column(csv=11))
    evidence: dict[str, Any]
    broker_id: int | None
    last_sequence: int  # with lastTimestamp: what the live guard compares besides the epochs
    armed: bool
    not_armed_because: str | None
    abort_forms: dict[str, list[str]] | None  # every abort command form, armed or not
    active_form: str | None
    advice: list[str]
    coordinator_partition: int | None
    overdue_ms: int | None
    verdict_state: str  # the verdict's kind: its verdict, or a state of it ("overdue" of "ongoing")
    as_of_ms: Any = ABSENT  # find-hanging's rows say their as-of time
    as_of_source: Any = ABSENT
    abort_preview: Any = ABSENT  # an AbortPreview, where one was computed (rows with abort forms)

    def _armed_form(self, key: str) -> list[str] | None:
        return self.abort_forms[key] if self.armed and self.abort_forms else None

    @derived(after="transactional_id")
    def abort_args(self) -> list[str] | None:
        """The legacy form, where the abort is armed."""
        return self._armed_form("abortArgs")

    @derived(after="evidence")
    def abort_args_start_offset(self) -> list[str] | None:
        return self._armed_form("abortArgsStartOffset")

    @derived(after="abort_args_start_offset")
    def kafka_python_args(self) -> list[str] | None:
        return self._armed_form("kafkaPythonArgs")

    @derived(after="broker_id")
    def duration_s(self) -> int | None:
        return self.duration_ms // 1000 if self.duration_ms is not None else None

    @derived(after="last_sequence", csv=8, kafka=(8, "Duration(min)"))
    def duration_min(self) -> int | None:
        """Kafka's ``Duration(min)``: ``TimeUnit.MILLISECONDS.toMinutes``, whole minutes toward zero."""
        return whole_minutes(self.duration_ms) if self.duration_ms is not None else None
