"""The events a producer-state fold consumes, one per v2 batch that carries a producer id.

Extracted from segments by :mod:`forensics.pipeline.units`; plain picklable tuples so that
work units can ship them between processes (local or Spark executors).
"""

from __future__ import annotations

from typing import NamedTuple, Union


class DataBatch(NamedTuple):
    """A non-control v2 batch with ``producerId >= 0`` (mirrors what ``ProducerAppendInfo.append``
    reads from a ``RecordBatch``)."""

    producer_id: int
    epoch: int
    base_offset: int
    last_offset: int
    base_sequence: int
    last_sequence: int
    max_timestamp: int
    transactional: bool
    records: int  # recordsCount of the batch (after compaction it may be below the offset span)
    size: int  # bytes of the whole batch
    position: int  # byte position in its segment


class Marker(NamedTuple):
    """A control batch holding an end-transaction marker (``EndTransactionMarker``)."""

    producer_id: int
    epoch: int
    offset: int
    commit: bool
    coordinator_epoch: int
    timestamp: int  # the control batch's maxTimestamp (Kafka: ``batch.maxTimestamp()``)
    position: int


ProducerEvent = Union[DataBatch, Marker]
