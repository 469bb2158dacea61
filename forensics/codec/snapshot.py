"""Producer state snapshots ``<offset>.snapshot`` (Kafka's ``ProducerStateManager.readSnapshot``) and the
entry lines Kafka 4.1's ``kafka-dump-log.sh`` (``DumpLogSegments``) prints for them.

Mirrors ``storage/src/main/resources/message/ProducerSnapshot.json`` (only version 1 exists) and
``storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerStateManager.java``
(``readSnapshot``), ``ProducerStateEntry.java``, ``BatchMetadata.java``; the sequence arithmetic of
``clients/.../record/DefaultRecordBatch.decrementSequence``; ``DumpLogSegments.dumpProducerIdSnapshot``.

Checks, in Kafka's order: version, then the schema (entry count, whole entries), then the CRC-32C
over bytes [6, end). Bytes after the last entry are covered by the CRC and otherwise ignored, as in
Kafka (``trailing_bytes``). Error messages reuse Kafka's wording where Kafka has one.
"""

from __future__ import annotations

import struct
from forensics.dataclass_fast import dataclass
from typing import NamedTuple

from forensics.codec.crc import crc32c
from forensics.codec.primitives import INT32_MAX
from forensics.errors import CorruptSnapshotError

SNAPSHOT_VERSION = 1  # ProducerSnapshot validVersions "1"

# header
#   version         int16   @0
#   crc             uint32  @2   CRC-32C of bytes [6, end of file)
#   entry count     int32   @6   non-nullable array
SNAPSHOT_HEADER = struct.Struct(">hIi")
CRC_OFFSET = 2
PRODUCER_ENTRIES_OFFSET = 6

# ProducerEntry (46 bytes)
#   producerId             int64  @0
#   epoch                  int16  @8
#   lastSequence           int32  @10
#   lastOffset             int64  @14  -1: no batch metadata
#   offsetDelta            int32  @22
#   timestamp              int64  @26  entry's lastTimestamp (and the batch's max timestamp)
#   coordinatorEpoch       int32  @34
#   currentTxnFirstOffset  int64  @38  -1: no open transaction
PRODUCER_ENTRY = struct.Struct(">qhiqiqiq")


def _i32(n: int) -> int:
    n &= 0xFFFFFFFF
    return n - 0x1_0000_0000 if n & 0x8000_0000 else n


def decrement_sequence(sequence: int, decrement: int) -> int:
    """``DefaultRecordBatch.decrementSequence`` in Java int arithmetic (wraps below 0)."""
    if sequence < decrement:
        return _i32(_i32(INT32_MAX - _i32(decrement - sequence)) + 1)
    return _i32(sequence - decrement)


class ProducerEntry(NamedTuple):
    """One 46-byte entry exactly as stored (``ProducerSnapshot.ProducerEntry``)."""

    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int


class BatchMetadata(NamedTuple):
    """The one cached batch a snapshot persists per producer (Kafka ``BatchMetadata``)."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(frozen=True, slots=True)
class ProducerStateEntry:
    """An entry as ``ProducerStateManager.readSnapshot`` builds it: ``current_txn_first_offset`` is
    None when the stored value is negative (Kafka's ``OptionalLong.empty``), ``batch_metadata`` is
    None when the stored lastOffset is negative. ``raw`` keeps the stored fields and ``position`` the
    entry's byte position in the file."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    last_timestamp: int
    current_txn_first_offset: int | None
    batch_metadata: BatchMetadata | None
    raw: ProducerEntry
    position: int

    @classmethod
    def from_raw(cls, raw: ProducerEntry, position: int) -> ProducerStateEntry:
        batch = None
        if raw.last_offset >= 0:
            batch = BatchMetadata(raw.last_sequence, raw.last_offset, raw.offset_delta, raw.timestamp)
        first = raw.current_txn_first_offset if raw.current_txn_first_offset >= 0 else None
        return cls(raw.producer_id, raw.epoch, raw.coordinator_epoch, raw.timestamp, first, batch, raw, position)


@dataclass(frozen=True, slots=True)
class ProducerSnapshot:
    """A decoded snapshot. ``crc`` is stored, ``computed_crc`` recomputed over [6, end)."""

    version: int
    crc: int
    computed_crc: int
    entries: tuple[ProducerStateEntry, ...]
    trailing_bytes: int = 0

    @property
    def crc_valid(self) -> bool:
        return self.crc == self.computed_crc


def _schema_error(detail: str, position: int) -> CorruptSnapshotError:
    return CorruptSnapshotError(f"Snapshot failed schema validation: {detail}", position=position)


def decode_snapshot(buf, *, verify_crc: bool = True) -> ProducerSnapshot:
    """Decode a whole ``.snapshot`` file held in ``buf``.

    Raises :class:`CorruptSnapshotError` for an unknown version, a malformed entry array and, unless
    ``verify_crc`` is False, a CRC mismatch (then compare ``crc`` / ``computed_crc`` yourself).
    """
    size = len(buf)
    if size < 2:
        raise _schema_error(f"file of {size} bytes has no version field", 0)
    version = int.from_bytes(bytes(buf[0:2]), "big", signed=True)
    if version != SNAPSHOT_VERSION:
        raise _schema_error(f"Snapshot contained an unknown file version {version}", 0)
    if size < SNAPSHOT_HEADER.size:
        raise _schema_error(f"file of {size} bytes ends inside the {SNAPSHOT_HEADER.size}-byte header", size)
    _, crc, count = SNAPSHOT_HEADER.unpack_from(buf, 0)
    pos = SNAPSHOT_HEADER.size
    if count < 0:
        raise _schema_error("non-nullable field producerEntries was serialized as null", PRODUCER_ENTRIES_OFFSET)
    if count > size - pos:
        raise _schema_error(
            f"Tried to allocate a collection of size {count}, but there are only {size - pos} bytes remaining.",
            PRODUCER_ENTRIES_OFFSET,
        )
    needed = count * PRODUCER_ENTRY.size
    if needed > size - pos:
        whole = (size - pos) // PRODUCER_ENTRY.size
        raise _schema_error(
            f"{count} entries of {PRODUCER_ENTRY.size} bytes need {needed} bytes, only {size - pos} remain",
            pos + whole * PRODUCER_ENTRY.size,
        )
    computed = crc32c(memoryview(buf)[PRODUCER_ENTRIES_OFFSET:size])
    if verify_crc and crc != computed:
        raise CorruptSnapshotError(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed}",
            position=CRC_OFFSET,
        )
    entries = []
    for i in range(count):
        at = pos + i * PRODUCER_ENTRY.size
        entries.append(ProducerStateEntry.from_raw(ProducerEntry(*PRODUCER_ENTRY.unpack_from(buf, at)), at))
    return ProducerSnapshot(version, crc, computed, tuple(entries), size - pos - needed)


def format_optional_long(value: int | None) -> str:
    """Java's ``OptionalLong.toString``."""
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def format_snapshot_entry(entry: ProducerStateEntry) -> str:
    """One line of DumpLogSegments 4.1 for a snapshot entry. Note the space after lastTimestamp,
    which stays at the end of the line when the entry has no batch metadata."""
    line = (
        f"producerId: {entry.producer_id} producerEpoch: {entry.producer_epoch} "
        f"coordinatorEpoch: {entry.coordinator_epoch} "
        f"currentTxnFirstOffset: {format_optional_long(entry.current_txn_first_offset)} "
        f"lastTimestamp: {entry.last_timestamp} "
    )
    b = entry.batch_metadata
    if b is not None:
        line += (
            f"firstSequence: {b.first_seq} lastSequence: {b.last_seq} "
            f"lastOffset: {b.last_offset} offsetDelta: {b.offset_delta} timestamp: {b.timestamp}"
        )
    return line
