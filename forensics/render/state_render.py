"""Column layouts of the state commands (kafka-transactions.sh order first, then ours) and the
extra text blocks (transaction timelines, record history) printed after a table.

Times: Kafka's own columns keep Kafka's epoch milliseconds (the values match kafka-transactions.sh
byte for byte) and the line under the row gives them in ISO-8601 UTC with the ms beside it
(:func:`~forensics.render.time_text.stamp`); our own columns show ISO-8601 UTC (CSV and JSON keep
the ms)."""

from __future__ import annotations

from typing import List, Sequence

from forensics.render.rows import Below, Formats, Row, kafka_table
from forensics.render.terminal_text import term
from forensics.render.time_text import duration, stamp, table_time

PRODUCER_TABLE = ("producerId", "producerEpoch", "latestCoordinatorEpoch", "lastSequence", "lastTimestamp",
                  "currentTransactionStartOffset", "lastOffset", "brokerId")
LIST_TABLE = ("transactionalId", "coordinator", "producerId", "transactionState", "producerEpoch",
              "transactionTimeoutMs", "lastUpdateTimeMs", "topicPartitions")
LIST_HEADERS = ("TransactionalId", "Coordinator", "ProducerId", "TransactionState", "ProducerEpoch",
                "TransactionTimeoutMs", "LastUpdateTime", "TopicPartitions")  # Kafka's list: the first four
LIST_FORMATS: Formats = {"lastUpdateTimeMs": table_time}
DESCRIBE_TABLE = ("coordinatorId", "transactionalId", "producerId", "producerEpoch", "transactionState",
                  "transactionTimeoutMs", "currentTransactionStartTimeMs", "transactionDurationMs",
                  "topicPartitions")
TIMELINE_TABLE = ("producerId", "firstOffset", "lastDataOffset", "markerOffset", "outcome", "dataEpochs",
                  "markerEpoch", "coordinatorEpoch", "batches", "records", "firstTimestamp", "markerTimestamp")
# find-hanging: kafka-transactions.sh find-hanging's columns, then ours; the reason under each row
HANGING_TABLE = ("topic", "partition", "producerId", "producerEpoch", "coordinatorEpoch", "startOffset",
                 "lastTimestamp", "durationMin", "verdict", "reason", "transactionalId")
HANGING_HEADERS = ("Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                   "LastTimestamp", "Duration(min)", "Verdict", "Reason", "TransactionalId")
HISTORY_TABLE = ("offset", "timestamp", "coordinatorEpoch", "transactionState", "producerId", "producerEpoch",
                 "transactionTimeoutMs", "startTimeMs", "topicPartitions")


_TIMELINE_FORMATS: Formats = {"firstTimestamp": table_time, "markerTimestamp": table_time}
_HISTORY_FORMATS: Formats = {"timestamp": table_time, "startTimeMs": table_time}


def producer_timeline_tables(rows: Sequence[Row]) -> List[str]:
    spans = [dict(s, producerId=r["producerId"]) for r in rows for s in r.get("transactions", ())]
    return (["# transactions on this partition\n" + kafka_table(spans, TIMELINE_TABLE, formats=_TIMELINE_FORMATS)]
            if spans else [])


def history_tables(rows: Sequence[Row]) -> List[str]:
    return [f"# history of {term(r['transactionalId'])} "
            f"(transaction state partition {r['transactionStatePartition']})\n"
            + kafka_table(r.get("history", ()), HISTORY_TABLE, formats=_HISTORY_FORMATS) for r in rows]


def _describe_lines(row: Row) -> List[str]:
    """Under a describe row: the current transaction's start as people read it."""
    start, open_for = row.get("currentTransactionStartTimeMs"), row.get("transactionDurationMs")
    if not isinstance(start, int) or start < 0:
        return []
    return [f"current transaction start: {stamp(start)}"
            + ("" if open_for is None else f", {duration(open_for)} before the as-of time")]


DESCRIBE_BELOW = Below((), _describe_lines)


def hanging_lines(row: Row) -> List[str]:
    """Under a find-hanging row: its last timestamp as people read it, and the reason."""
    ago = row.get("durationMs")
    when = f"last timestamp: {stamp(row.get('lastTimestamp'))}" + ("" if ago is None else f", {duration(ago)} "
                                                                   "before the as-of time")
    return [when, f"reason: {row.get('reason')}"]


def verdict_label(row: Row) -> str:
    """A find-hanging row's verdict as people read it: the verdict, and its state where that is another
    (``ongoing, overdue``: ``verdictState``), as :attr:`forensics.analysis.verdict_kinds.VerdictKind.label`."""
    word, state = row.get("verdict"), row.get("verdictState")
    return f"{word}" if state in (None, word) else f"{word}, {state}"


def verdict_heading(row: Row) -> str:
    """:func:`verdict_label` with how long an overdue one is past its own timeout (``overdueMs``):
    ``ongoing, overdue by 1 h 7 min``."""
    late = row.get("overdueMs")
    return verdict_label(row) + ("" if late is None else f" by {duration(late)}")


HANGING_BELOW = Below(("reason",), hanging_lines)  # the reason under the row, not a column of the table
