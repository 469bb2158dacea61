"""Shared frozen vocabulary used across layers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class Provenance(NamedTuple):
    """Where a decoded object came from: file and byte position inside it."""

    path: str
    position: int


TRANSACTION_STATE_TOPIC = "__transaction_state"
CONSUMER_OFFSETS_TOPIC = "__consumer_offsets"
CLUSTER_METADATA_TOPIC = "__cluster_metadata"

Progress = Callable[[int], None]  # told the number of bytes just read (drives a progress bar)


def whole_minutes(ms: int) -> int:
    """``TimeUnit.MILLISECONDS.toMinutes``: Java's division, toward zero (-59 s is 0 min, not -1), as
    kafka-transactions.sh find-hanging writes a transaction's duration."""
    return abs(ms) // 60_000 * (-1 if ms < 0 else 1)


def first_few(items: Sequence[str], shown: int, sep: str = ", ") -> str:
    """The first ``shown`` of ``items`` joined by ``sep``, and how many more: ``a, b, c and 2 more``
    (``sep="; "``: ``a; b; c; and 2 more``, for items that hold commas). The one such tail of every
    message that names a few of many (partitions, offsets, log dirs, topics)."""
    head = sep.join(items[:shown])
    if len(items) <= shown:
        return head
    return f"{head}{' ' if sep == ', ' else sep}and {len(items) - shown} more"
