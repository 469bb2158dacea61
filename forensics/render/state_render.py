"""The CSV columns of the state commands (kafka-transactions.sh's first, then ours; epoch ms, as JSON)
and the lines under a find-hanging row of the table. ``--format text`` is Kafka's table alone
(:mod:`forensics.render.kafka_text`); the table for people is :mod:`forensics.render.state_screens`."""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

from forensics.columns import csv_columns
from forensics.report.rows import DescribeRow, HangingRow, ProducerRow, TransactionRow
from forensics.render.time_text import duration, stamp

PRODUCER_TABLE = csv_columns(ProducerRow)
LIST_TABLE = csv_columns(TransactionRow)
DESCRIBE_TABLE = csv_columns(DescribeRow)
HANGING_TABLE = csv_columns(HangingRow)


def hanging_lines(row: HangingRow) -> list[str]:
    """Under a find-hanging row: its last timestamp as people read it, and the reason."""
    ago = row.duration_ms
    when = f"last timestamp: {stamp(row.last_timestamp)}" + ("" if ago is None else f", {duration(ago)} "
                                                             "before the as-of time")
    return [when, f"reason: {row.reason}"]


def verdict_label(row: HangingRow | Mapping[str, Any]) -> str:
    """A find-hanging row's verdict as people read it: the verdict, and its state where that is another
    (``ongoing, overdue``: ``verdictState``), as :attr:`forensics.analysis.verdict_kinds.VerdictKind.label`.
    ``row``: the typed row, or its JSON object (as read back from ``--format json``)."""
    word: Any
    state: Any
    if isinstance(row, HangingRow):
        word, state = row.verdict, row.verdict_state
    else:
        word, state = row.get("verdict"), row.get("verdictState")
    return f"{word}" if state in (None, word) else f"{word}, {state}"


def verdict_heading(row: HangingRow) -> str:
    """:func:`verdict_label` with how long an overdue one is past its own timeout (``overdueMs``):
    ``ongoing, overdue by 1 h 7 min``."""
    late = row.overdue_ms
    return verdict_label(row) + ("" if late is None else f" by {duration(late)}")

