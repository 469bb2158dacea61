"""The events a producer-state fold consumes, one per v2 batch that carries a producer id.

Extracted from segments by :mod:`forensics.pipeline.units`; plain picklable tuples so that
work units can ship them between processes (local or Spark executors).
"""

from __future__ import annotations

from typing import NamedTuple


class DataBatch(NamedTuple):
    """A non-control v2 batch with ``producerId >= 0`` (mirrors what ``ProducerAppendInfo.append``
    reads from a ``RecordBatch``), or a *run* of such batches.

    A run stands for consecutive batches of one producer, in one segment, with the same epoch and
    transactional flag, between which nothing else of that producer happened (no marker, no damage,
    no snapshot offset). Folding a run gives exactly the state folding its batches one by one gives:
    only the first batch can change the epoch or open a transaction, and the entry keeps the last
    batch's sequence, offsets and timestamp. The work units build runs so that what crosses process
    boundaries grows with the number of transactions, not of batches.
    """

    producer_id: int
    epoch: int
    base_offset: int  # of the first batch
    last_offset: int  # of the last batch
    base_sequence: int  # of the first batch
    last_sequence: int  # of the last batch
    max_timestamp: int  # of the last batch (Kafka's lastTimestamp)
    transactional: bool
    records: int  # recordsCount summed (after compaction it may be below the offset span)
    size: int  # bytes of the whole batches
    position: int  # byte position of the first batch in its segment
    batches: int = 1
    first_timestamp: int | None = None  # maxTimestamp of the first batch (None: a single batch)
    last_base_offset: int | None = None  # baseOffset of the last batch (None: a single batch)

    @property
    def offset_delta(self) -> int:
        """``lastOffset - baseOffset`` of the last batch (``BatchMetadata.offsetDelta``)."""
        return self.last_offset - (self.base_offset if self.last_base_offset is None else self.last_base_offset)

    @property
    def first_max_timestamp(self) -> int:
        return self.max_timestamp if self.first_timestamp is None else self.first_timestamp


class Marker(NamedTuple):
    """A control batch holding an end-transaction marker (``EndTransactionMarker``)."""

    producer_id: int
    epoch: int
    offset: int
    commit: bool
    coordinator_epoch: int
    timestamp: int  # the control batch's maxTimestamp (Kafka: ``batch.maxTimestamp()``)
    position: int


ProducerEvent = DataBatch | Marker
