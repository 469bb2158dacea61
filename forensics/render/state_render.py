"""Column layouts of the state commands (kafka-transactions.sh order first, then ours) and the
extra text blocks (transaction timelines, record history) printed after a table."""

from __future__ import annotations

from typing import List, Sequence

from forensics.render.rows import Row, kafka_table
from forensics.render.terminal_text import term

PRODUCER_TABLE = ("producerId", "producerEpoch", "latestCoordinatorEpoch", "lastSequence", "lastTimestamp",
                  "currentTransactionStartOffset", "lastOffset", "brokerId")
LIST_TABLE = ("transactionalId", "coordinator", "producerId", "transactionState", "producerEpoch",
              "transactionTimeoutMs", "lastUpdateTimeMs", "topicPartitions")
DESCRIBE_TABLE = ("coordinatorId", "transactionalId", "producerId", "producerEpoch", "transactionState",
                  "transactionTimeoutMs", "currentTransactionStartTimeMs", "transactionDurationMs",
                  "topicPartitions")
TIMELINE_TABLE = ("producerId", "firstOffset", "lastDataOffset", "markerOffset", "outcome", "dataEpochs",
                  "markerEpoch", "coordinatorEpoch", "batches", "records", "firstTimestamp", "markerTimestamp")
HISTORY_TABLE = ("offset", "timestamp", "coordinatorEpoch", "transactionState", "producerId", "producerEpoch",
                 "transactionTimeoutMs", "startTimeMs", "topicPartitions")


def producer_timeline_tables(rows: Sequence[Row]) -> List[str]:
    spans = [dict(s, producerId=r["producerId"]) for r in rows for s in r.get("transactions", ())]
    return ["# transactions on this partition\n" + kafka_table(spans, TIMELINE_TABLE)] if spans else []


def history_tables(rows: Sequence[Row]) -> List[str]:
    return [f"# history of {term(r['transactionalId'])} "
            f"(transaction state partition {r['transactionStatePartition']})\n"
            + kafka_table(r.get("history", ()), HISTORY_TABLE) for r in rows]
