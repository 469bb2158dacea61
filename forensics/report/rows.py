"""The rows of describe-producers, list and describe, each kind declared once (see
:mod:`forensics.columns`): its fields in JSON order, with their CSV places and Kafka's tool table
columns (``kafka-transactions.sh`` 4.1, ``TransactionsCommand``: each command's ``HEADERS``), from
which :mod:`forensics.render.state_render` and :mod:`forensics.render.kafka_text` take theirs.
Built by keyword in :mod:`forensics.report.state`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from forensics.columns import JsonRow, column

# -- describe-producers ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpanRow(JsonRow):
    """One transaction of a producer on the partition (``--timeline``; JSON's ``transactions``)."""

    first_offset: int
    last_data_offset: Optional[int]
    marker_offset: Optional[int]
    outcome: str  # COMMIT, ABORT, or OPEN
    data_epochs: List[int]
    marker_epoch: Optional[int]
    coordinator_epoch: Optional[int]
    batches: int
    records: int
    bytes: int
    first_timestamp: Optional[int]
    last_timestamp: Optional[int]
    marker_timestamp: Optional[int]
    from_snapshot: bool


@dataclass(frozen=True, slots=True)
class ProducerRow(JsonRow):
    """One producer of a partition replica, as the broker holds it (DescribeProducersCommand)."""

    topic: str
    partition: int
    producer_id: int = column(csv=1, kafka=(1, "ProducerId"))
    producer_epoch: int = column(csv=2, kafka=(2, "ProducerEpoch"))
    latest_coordinator_epoch: int = column(csv=3, kafka=(3, "LatestCoordinatorEpoch"), absent="-1")
    last_sequence: int = column(csv=4, kafka=(4, "LastSequence"))
    last_timestamp: int = column(csv=5, kafka=(5, "LastTimestamp"))
    current_transaction_start_offset: Optional[int] = column(csv=6, kafka=(6, "CurrentTransactionStartOffset"))
    broker_id: Optional[int] = column(csv=8)
    last_offset: Optional[int] = column(csv=7)
    transactions: List[SpanRow]
