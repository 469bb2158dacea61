"""Legacy messages, magic 0 and 1 (Kafka's ``LegacyRecord``), including compressed wrapper messages.

Mirrors ``clients/.../record/LegacyRecord.java`` and ``AbstractLegacyRecordBatch.java``
(``DeepRecordsIterator``): a wrapper's value is a compressed inner message set; v0 inner
offsets are absolute, v1 inner offsets are relative to the wrapper's (last) offset, with
librdkafka's wrapper offset 0 special case; v1 inner timestamps follow the wrapper's when the
wrapper uses LogAppendTime. Legacy entries never carry producer ids, epochs or sequences.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any, NamedTuple, cast

from forensics.codec.batch import RecordTuple
from forensics.codec.compression import decompress
from forensics.codec.crc import crc32
from forensics.codec.log_entry import LOG_OVERHEAD, MAGIC_OFFSET, nullable_size
from forensics.errors import CorruptRecordError, UnsupportedCodecError
from forensics.speedups import native

# offset int64 @0, size int32 @8 (the prefix every magic shares), then the message:
# crc                uint32  @12  CRC-32 of [16, 12 + size)
# magic              int8    @16
# attributes         int8    @17  codec in bits 0-2, timestamp type in bit 3 (magic 1)
# timestamp          int64   @18  magic 1 only
# key size           int32   @18 (magic 0) / @26 (magic 1), -1 = null, then the key
# value size         int32   after the key, -1 = null, then the value
_PREFIX = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
CRC = struct.Struct(">I")
CRC_OFFSET = LOG_OVERHEAD  # LegacyRecord.CRC_OFFSET, from the entry's start
ATTRIBUTES_OFFSET = LOG_OVERHEAD + 5  # LegacyRecord.ATTRIBUTES_OFFSET
TIMESTAMP_OFFSET = LOG_OVERHEAD + 6  # LegacyRecord.TIMESTAMP_OFFSET (magic 1)
KEY_SIZE_OFFSET_V0 = LOG_OVERHEAD + 6  # LegacyRecord.KEY_SIZE_OFFSET_V0
KEY_SIZE_OFFSET_V1 = LOG_OVERHEAD + 14  # LegacyRecord.KEY_SIZE_OFFSET_V1
RECORD_OVERHEAD_V0 = 14  # crc 4 + magic 1 + attributes 1 + key size 4 + value size 4
RECORD_OVERHEAD_V1 = 22  # + timestamp 8
CODEC_MASK = 0x07
MAX_CODEC_ID = 3  # lz4: zstd (4) is invalid in legacy messages
TIMESTAMP_TYPE_MASK = 0x08
NO_TIMESTAMP = -1


def entry_timestamp(buf, pos: int, magic: int) -> int:
    """The stored timestamp of the legacy entry at ``pos``: magic 0 has none (-1)."""
    return _INT64.unpack_from(buf, pos + TIMESTAMP_OFFSET)[0] if magic == 1 else NO_TIMESTAMP


def timestamp_type(magic: int, attributes: int) -> str:
    """``LegacyRecord.timestampType`` by name, as the dump prints it."""
    if magic == 0:
        return "NoTimestampType"
    return "LogAppendTime" if attributes & TIMESTAMP_TYPE_MASK else "CreateTime"


class LegacyRecord(NamedTuple):
    """One legacy message (an outer entry or an inner message of a wrapper)."""

    offset: int  # absolute offset (for a wrapper: its last inner offset)
    size: int  # value of the size field (bytes after the 12-byte prefix)
    crc: int
    magic: int
    attributes: int
    timestamp: int  # effective timestamp (wrapper rules applied for inner v1 messages)
    key: bytes | None
    value: bytes | None
    is_valid: bool  # stored CRC-32 matches the computed one
    position: int  # byte position of the entry (inside the decompressed set for inner messages)

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def timestamp_type(self) -> str:
        return timestamp_type(self.magic, self.attributes)

    @property
    def key_size(self) -> int:
        return nullable_size(self.key)

    @property
    def value_size(self) -> int:
        return nullable_size(self.value)

    @property
    def total_size(self) -> int:
        return LOG_OVERHEAD + self.size

    @property
    def last_offset(self) -> int:
        return self.offset


def decode_entry(buf, pos: int, end: int | None = None) -> LegacyRecord:
    """Decode the legacy entry at ``pos`` (prefix, CRC check, key and value)."""
    if end is None:
        end = len(buf)
    if native is not None:  # the C accelerator takes an entry that breaks no rule; the code below says which
        rec = native.legacy_entry(buf, pos, end)
        if rec is not None:
            return rec
    if pos + LOG_OVERHEAD + RECORD_OVERHEAD_V0 > end:
        raise CorruptRecordError("legacy message header runs past the end of the data", position=pos)
    offset, size, crc, magic, attributes = _PREFIX.unpack_from(buf, pos)
    if magic not in (0, 1):
        raise CorruptRecordError(f"legacy message with magic {magic}", position=pos, offset=offset)
    overhead = RECORD_OVERHEAD_V0 if magic == 0 else RECORD_OVERHEAD_V1
    rec_end = pos + LOG_OVERHEAD + size
    if size < overhead or rec_end > end:
        raise CorruptRecordError(f"legacy message size {size} is invalid for magic {magic}", position=pos, offset=offset)
    timestamp = entry_timestamp(buf, pos, magic)
    p = pos + (KEY_SIZE_OFFSET_V0 if magic == 0 else KEY_SIZE_OFFSET_V1)
    key, p = _sized(buf, p, rec_end, pos, offset, "key")
    value, p = _sized(buf, p, rec_end, pos, offset, "value")
    is_valid = crc32(memoryview(buf)[pos + MAGIC_OFFSET : rec_end]) == crc
    return LegacyRecord(offset, size, crc, magic, attributes, timestamp, key, value, is_valid, pos)


def _sized(buf, p: int, end: int, pos: int, offset: int, what: str):
    if p + 4 > end:
        raise CorruptRecordError(f"legacy message {what} size runs past the message", position=pos, offset=offset)
    n = _INT32.unpack_from(buf, p)[0]
    p += 4
    if n == -1:
        return None, p
    if n < -1 or p + n > end:
        raise CorruptRecordError(f"legacy message {what} size {n} is invalid", position=pos, offset=offset)
    return bytes(buf[p : p + n]), p + n


def iter_deep(wrapper: LegacyRecord) -> Sequence[LegacyRecord]:
    """The records a dump prints for one legacy entry: itself if uncompressed, else its inner messages
    (decompressed here: errors are raised by this call, not while iterating)."""
    if wrapper.codec == 0:
        return (wrapper,)
    return inner_records(wrapper)


def record_tuples(entry: LegacyRecord) -> Sequence[RecordTuple]:
    """``iter_deep`` projected to ``(offset, timestamp, key, value, ())`` tuples, the shape of
    ``batch.record_tuples`` (legacy messages have no headers)."""
    if entry.codec == 0:
        return ((entry.offset, entry.timestamp, entry.key, entry.value, ()),)
    return _inner(entry, True)


def deep_tuples(buf, pos: int) -> Sequence[RecordTuple]:
    """``record_tuples(decode_entry(buf, pos))``: the entry at ``pos`` decoded, decompressed and
    projected at once. With the C accelerator this name is bound to ``native.deep_tuples``, which
    takes the healthy entries (and the codecs it decompresses) and hands the others to this
    function (``python_deep_tuples``)."""
    return record_tuples(decode_entry(buf, pos))


def inner_records(wrapper: LegacyRecord) -> list[LegacyRecord]:
    """Decompress a wrapper message and return its inner messages with absolute offsets."""
    return _inner(wrapper, False)


def _inner(wrapper: LegacyRecord, plain: bool) -> list:
    if wrapper.codec == 4:
        raise UnsupportedCodecError("zstd is invalid inside a legacy wrapper message", offset=wrapper.offset)
    if wrapper.value is None:
        raise CorruptRecordError(
            f"compressed legacy wrapper (magic {wrapper.magic}) has a null value", offset=wrapper.offset
        )
    data = decompress(wrapper.codec, wrapper.value, magic=wrapper.magic)
    if native is not None:
        fast = native.legacy_inner(data, wrapper, plain)
        if fast is not None:
            return fast
    inner: list[LegacyRecord] = []
    p, end = 0, len(data)
    while end - p >= LOG_OVERHEAD:
        size = _INT32.unpack_from(data, p + 8)[0]
        if size < RECORD_OVERHEAD_V0:
            raise CorruptRecordError(f"inner message size {size} is smaller than the minimum", offset=wrapper.offset)
        if p + LOG_OVERHEAD + size > end:
            break  # Kafka's DataLogInputStream stops on a partial trailing inner entry
        rec = decode_entry(data, p, end)
        if rec.magic == 1:
            ts = wrapper.timestamp if wrapper.attributes & TIMESTAMP_TYPE_MASK else rec.timestamp
            rec = rec._replace(timestamp=ts)
        inner.append(rec)
        p += LOG_OVERHEAD + size
    if not inner:
        raise CorruptRecordError("compressed legacy message set has no inner messages", offset=wrapper.offset)
    if wrapper.magic == 1:
        last_inner = inner[-1].offset
        if wrapper.offset == 0:
            base = 0
        elif wrapper.offset < last_inner:
            raise CorruptRecordError(
                f"wrapper offset {wrapper.offset} is less than the last inner relative offset {last_inner}",
                offset=wrapper.offset,
            )
        else:
            base = wrapper.offset - last_inner
        inner = [r._replace(offset=base + r.offset) for r in inner]
    for r in inner:
        if r.codec != 0:
            raise CorruptRecordError("inner legacy messages must not be compressed", offset=r.offset)
    if plain:
        return [(r.offset, r.timestamp, r.key, r.value, ()) for r in inner]
    return inner


python_deep_tuples = deep_tuples  # the reference (the accelerator's fallback; tests call it)
if native is not None:
    native.init_legacy(LegacyRecord)
    native.init_fallback("deep_tuples", python_deep_tuples)
    deep_tuples = cast(Any, native.deep_tuples)  # noqa: F811  (same contract; saves a Python frame per entry)
