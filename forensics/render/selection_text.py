"""What a report narrowed by ``--topic``, ``--partition`` or ``--broker-id`` says about its selection, in
words (the HTML page and the command's summary line on stderr say it alike): which partitions it
shows, and what of the inputs it leaves out, so that no one reads it as a verdict on the whole
cluster."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Protocol

from forensics.render.counts import count

if TYPE_CHECKING:  # (the report's model, loaded by the report alone)
    from forensics.report.incident_model import Selection


class Chosen(Protocol):
    """A selection's options (a report's :class:`Selection`, a run's ``Filters``)."""

    @property
    def topic(self) -> str | None: ...

    @property
    def partition(self) -> int | None: ...

    @property
    def broker_id(self) -> int | None: ...


def selection_words(s: Chosen) -> str:
    """``topic 'orders', partition 0, the replicas on broker 1``."""
    words: list[str] = []
    if s.topic is not None:
        words.append(f"topic {s.topic!r}")
    if s.partition is not None:
        words.append(f"partition {s.partition}")
    if s.broker_id is not None:
        words.append(f"the replicas on broker {s.broker_id}")
    return ", ".join(words)


def selection_options(s: Chosen) -> str:
    """The options that made it: ``--topic orders --partition 0 --broker-id 1``."""
    given = (("--topic", s.topic), ("--partition", s.partition), ("--broker-id", s.broker_id))
    return " ".join(f"{name} {shlex.quote(str(value))}" for name, value in given if value is not None)


def attention_words(s: Selection) -> str:
    """``1 proven hanging, 2 unverifiable, 1 stuck, fenced or overdue`` (those left out needing a person)."""
    parts = [f"{s.hanging_left_out} proven hanging" if s.hanging_left_out else "",
             f"{s.unverifiable_left_out} unverifiable" if s.unverifiable_left_out else "",
             f"{s.attention_left_out} stuck, fenced or overdue" if s.attention_left_out else ""]
    return ", ".join(p for p in parts if p)


def left_out_words(s: Selection) -> str:
    """``12 other partitions (3 other topics) with 4 open transactions, of which 1 proven hanging, 1
    unverifiable`` (with a broker id: ``... and the replicas on other brokers, with ...``), or that every
    data partition among the inputs is in the selection."""
    where = []
    if s.partitions_left_out:
        topics = f" ({count(s.topics_left_out, 'other topic')})" if s.topics_left_out else ""
        where.append(f"{count(s.partitions_left_out, 'other partition')}{topics}")
    if s.broker_id is not None:
        where.append("the replicas on other brokers")
    if not where:
        return "no other data partition among the inputs"
    needing = attention_words(s)
    return (f"{' and '.join(where)}, with {count(s.open_left_out, 'open transaction')}"
            + (f", of which {needing}" if needing else ""))


def selection_summary(s: Selection) -> str:
    """The command's stderr line's part: ``for topic 'orders' only; left out: 12 other partitions with ...``."""
    return f"for {selection_words(s)} only; left out: {left_out_words(s)}"


__all__ = ["attention_words", "left_out_words", "selection_options", "selection_summary", "selection_words"]
