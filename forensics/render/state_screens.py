"""The screens of find-hanging, list, describe and describe-producers for people (``--format table``):
tables fitted to the screen as scan's are, the key numbers whole (the abort's arguments: partition as
``topic-N``, producer id, epochs, coordinator epoch, start offset; and the duration), long texts (the
reason, times with their epoch ms, partition lists) folded under the table or within their cell.
``--wide``: every column, as wide as it needs. Kafka's own layout is ``--format text``
(:mod:`forensics.render.kafka_text`). No row: one line that says so and what else there is, never
an empty box.

Headers are Kafka's where they fit 100 columns; where they do not, shorter ones of the same words:
``Epoch`` is the producer epoch (Kafka's ProducerEpoch), ``CoordEpoch`` the coordinator epoch
(CoordinatorEpoch, LatestCoordinatorEpoch), ``StartOffset`` the open transaction's first offset
(CurrentTransactionStartOffset), ``Partition`` the topic and partition as ``topic-N``, ``Duration``
the age in people's units (Kafka's Duration(min) in whole minutes); docs/cli.md lists them."""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple, TextIO
from collections.abc import Sequence

from forensics.columns import DURATION, ITEMS, MS, START, TIME, TOPIC_N, VERDICT, screen_columns
from forensics.render.row_screens import (
    Field,
    Texts,
    dash,
    declared_field,
    declared_fields,
    print_notes,
    print_record,
    print_rows,
)
from forensics.render.state_render import hanging_lines, verdict_heading, verdict_label
from forensics.render.table_fit import fit_console, screen_width
from forensics.render.terminal_text import term
from forensics.render.time_text import duration, short_duration, stamp, table_time
from forensics.report.rows import DescribeRow, HangingRow, HistoryRow, ProducerRow, SpanRow, TransactionRow


class ProducerSpan(NamedTuple):
    """A line of the ``--timeline`` table: a producer's transaction."""

    producer_id: int
    span: SpanRow


def _items(value: Any) -> str:
    """A list as people read it: ``a-0, a-1`` (breaks between items), ``-`` when empty."""
    return ", ".join(str(v) for v in value) if value else "-"


def _time(value: Any) -> str:
    return "-" if value is None else table_time(value)


def _partition(row: Any) -> str:
    return f"{row.topic}-{row.partition}"


def _width(out: TextIO, wide: bool) -> int | None:
    return None if wide else screen_width(out)


# -- the screens' columns, as the rows declare them (forensics.report.rows: each field's Cell) -----------

_TEXTS: Texts = {  # Cell.text -> the cell of (row, value)
    "": lambda row, value: dash(value), TIME: lambda row, value: _time(value),
    ITEMS: lambda row, value: _items(value), DURATION: lambda row, value: short_duration(value),
    MS: lambda row, value: _ms(value), START: lambda row, value: _start(row),
    VERDICT: lambda row, value: verdict_label(row), TOPIC_N: lambda row, value: _partition(row)}


def _fields(kind: type, wide: bool, prefix: str = "") -> tuple[Field, ...]:
    return declared_fields(kind, wide, _TEXTS, prefix)


def _hanging_note(row: HangingRow, brokers: bool) -> tuple[str, list[str]]:
    """Under the table, a row's long texts: which row, its verdict, its last timestamp, its reason; for a
    state of a verdict (overdue), what to check and do."""
    txid = row.transactional_id
    heading = (f"{_partition(row)}" + (f" on broker {row.broker_id}" if brokers else "")
               + f", producer {row.producer_id}" + (f" ({txid})" if txid is not None else "")
               + f": {verdict_heading(row)}")
    advice = [f"advice: {a}" for a in row.advice or ()] if verdict_label(row) != row.verdict else []
    return heading, hanging_lines(row) + advice


def no_hanging_line(hidden: Sequence[str], show_all: bool = False, unproven: bool = False) -> str:
    """find-hanging's answer when no row is shown: nothing hangs, and the open transactions left out
    (``hidden``: their verdicts), e.g. ``no hanging transaction; 2 ongoing: see --all``; ``unproven``:
    the evidence does not allow an all-clear."""
    line = "no open transaction" if show_all else "no hanging transaction"
    if unproven:
        line = ("nothing proven hanging, but no all-clear either: the evidence lacks what the lines on "
                "stderr name")
    counts = Counter(hidden)
    if counts and not show_all:
        line += "; " + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) + ": see --all"
    return line


def hanging_screen(rows: Sequence[HangingRow], out: TextIO, wide: bool = False, empty: str = "no hanging transaction") -> None:
    """The open transactions of ``rows``, each one's long texts under the table; no row: ``empty``."""
    if not rows:
        out.write(term(empty) + "\n")
        return
    width = _width(out, wide)
    console = fit_console(out, width)
    print_rows(console, None, _HANGING_SCREEN[wide], rows, width)
    brokers = len({r.broker_id for r in rows}) > 1
    print_notes(console, [_hanging_note(r, brokers) for r in rows], width)


# -- list --------------------------------------------------------------------------------------------


def list_screen(rows: Sequence[TransactionRow], out: TextIO, wide: bool = False, empty: str = "no transactional id") -> None:
    """The transactional ids of ``rows``; no row: ``empty``."""
    if not rows:
        out.write(term(empty) + "\n")
        return
    width = _width(out, wide)
    print_rows(fit_console(out, width), None, _LIST_SCREEN[wide], rows, width)


# -- describe ----------------------------------------------------------------------------------------

def _start(row: DescribeRow) -> str:
    start, open_for = row.current_transaction_start_time_ms, row.transaction_duration_ms
    if not isinstance(start, int) or start < 0:
        return dash(start)
    return stamp(start) + ("" if open_for is None else f", {duration(open_for)} before the as-of time")


def _ms(value: Any) -> str:
    return dash(value) if not isinstance(value, int) or value < 0 else f"{value} ({duration(value)})"


def _record(row: DescribeRow) -> list[tuple[str, str]]:
    """kafka-transactions.sh describe's fields, one a line, its times as people read them."""
    return [(f.column.header, f.text(row)) for f in _DESCRIBE_RECORD]


def describe_screen(rows: Sequence[DescribeRow], out: TextIO, wide: bool = False) -> None:
    """Each id's metadata as ``Field  value`` lines, then its history fitted."""
    width = _width(out, wide)
    console = fit_console(out, width)
    for i, row in enumerate(rows):
        if i:
            out.write("\n")
        print_record(console, _record(row), width)
        out.write("\n")
        title = f"History in __transaction_state-{row.transaction_state_partition}"
        print_rows(console, title, _HISTORY_SCREEN[wide], row.history, width)


# -- describe-producers ------------------------------------------------------------------------------

def _replica(rows: Sequence[ProducerRow]) -> str:
    if not rows:
        return ""
    broker = rows[0].broker_id
    return f" of {_partition(rows[0])}" + ("" if broker is None else f" on broker {broker}")


def producers_screen(rows: Sequence[ProducerRow], out: TextIO, wide: bool = False, timeline: bool = False,
                     asked: str = "") -> None:
    """The producers of one replica; ``timeline``: then its transactions; no producer: a line naming the
    replica ``asked`` (``topic-N``, ``on broker B``)."""
    if not rows:
        out.write(term(f"no active producer on {asked}".rstrip()) + "\n")
        return
    width = _width(out, wide)
    console = fit_console(out, width)
    print_rows(console, f"Producers{_replica(rows)}", _PRODUCERS_SCREEN[wide], rows, width)
    spans = [ProducerSpan(r.producer_id, s) for r in rows for s in r.transactions]
    if timeline:
        out.write("\n")
        if spans:
            print_rows(console, f"Transactions{_replica(rows)}", _TIMELINE_SCREEN[wide], spans, width)
        else:
            out.write(term(f"no transaction of these producers{_replica(rows)}") + "\n")


# (False, True): at the screen's width, with --wide; the timeline's rows are (producer id, span)
_HANGING_SCREEN = {w: _fields(HangingRow, w) for w in (False, True)}
_LIST_SCREEN = {w: _fields(TransactionRow, w) for w in (False, True)}
_DESCRIBE_RECORD = _fields(DescribeRow, False)
_HISTORY_SCREEN = {w: _fields(HistoryRow, w) for w in (False, True)}
_PRODUCERS_SCREEN = {w: _fields(ProducerRow, w) for w in (False, True)}
_TIMELINE_SCREEN = {w: (declared_field("producer_id", dict(screen_columns(ProducerRow, w))["producer_id"], _TEXTS),)
                    + _fields(SpanRow, w, "span.") for w in (False, True)}
