"""Shared frozen vocabulary used across layers."""

from __future__ import annotations

from typing import Callable, NamedTuple


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
