"""Record batch v2 (magic 2, Kafka >= 0.11.0, KIP-98): header and records (spec §3.2-§3.6).

Mirrors ``clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java`` and
``DefaultRecord.java``. The header is declared once as a precompiled struct; decoding the
header never touches the record bodies, so a header-only scan costs one ``unpack_from``.
"""

from __future__ import annotations

import struct
from typing import Iterator, NamedTuple, Optional, Tuple

from forensics.codec.compression import decompress
from forensics.codec.crc import crc32c
from forensics.codec.primitives import read_varint, read_varlong
from forensics.errors import CorruptBatchError, CorruptRecordError, ForensicsError
from forensics.speedups import native

# baseOffset            int64   @0
# batchLength           int32   @8   bytes after this field; batch size = 12 + batchLength
# partitionLeaderEpoch  int32   @12  not covered by the CRC
# magic                 int8    @16
# crc                   uint32  @17  CRC-32C of [21, 12 + batchLength)
# attributes            int16   @21
# lastOffsetDelta       int32   @23
# baseTimestamp         int64   @27  (delete horizon when attribute bit 6 is set)
# maxTimestamp          int64   @35
# producerId            int64   @43
# producerEpoch         int16   @51
# baseSequence          int32   @53
# recordsCount          int32   @57
HEADER = struct.Struct(">qiibIhiqqqhii")
RECORD_BATCH_OVERHEAD = HEADER.size  # 61
LOG_OVERHEAD = 12  # offset + size prefix shared by every magic
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD  # 49

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

NO_PRODUCER_ID = -1
NO_SEQUENCE = -1
INT32_MAX = 0x7FFFFFFF


def increment_sequence(sequence: int, increment: int) -> int:
    """Kafka's ``DefaultRecordBatch.incrementSequence``: wraps past Integer.MAX_VALUE to 0."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


class BatchHeader(NamedTuple):
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        return LOG_OVERHEAD + self.batch_length

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def codec(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_MASK)

    @property
    def timestamp_type(self) -> str:
        return "LogAppendTime" if self.attributes & TIMESTAMP_TYPE_MASK else "CreateTime"

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def delete_horizon_ms(self) -> Optional[int]:
        return self.base_timestamp if self.attributes & DELETE_HORIZON_MASK else None

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)


class Header(NamedTuple):
    key: str
    value: Optional[bytes]


class Record(NamedTuple):
    """One record of a v2 batch, with absolute offset, timestamp and sequence."""

    offset: int
    timestamp: int
    key: Optional[bytes]
    value: Optional[bytes]
    headers: Tuple[Header, ...]
    sequence: int
    attributes: int
    position: int  # byte position of the record's length varint (in the decompressed stream if compressed)

    @property
    def key_size(self) -> int:
        return -1 if self.key is None else len(self.key)

    @property
    def value_size(self) -> int:
        return -1 if self.value is None else len(self.value)


def decode_header(buf, pos: int = 0) -> BatchHeader:
    """Decode the 61-byte v2 header at ``pos``. Raises CorruptBatchError if it does not fit."""
    if pos < 0 or pos + RECORD_BATCH_OVERHEAD > len(buf):
        raise CorruptBatchError("record batch header runs past the end of the data", position=pos)
    return BatchHeader._make(HEADER.unpack_from(buf, pos))


def compute_crc(buf, pos: int, header: BatchHeader) -> int:
    return crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET : pos + header.size])


def crc_ok(buf, pos: int, header: BatchHeader) -> bool:
    return compute_crc(buf, pos, header) == header.crc


def iter_records(buf, pos: int, header: BatchHeader) -> Iterator[Record]:
    """Decode the records of the v2 batch at ``pos`` (decompressing first if needed).

    Applies Kafka's validity rules: every record body is consumed exactly, the declared
    count is read and no bytes remain afterwards. Raises CorruptRecordError (with the byte
    position inside the file for uncompressed batches, the batch position otherwise) while
    iterating, after the records before the broken one.

    With the C accelerator a healthy batch is decoded at once and an iterator over it returned;
    anything else (and every batch without it) goes through the lazy pure-Python decoder.
    """
    if native is not None:
        try:
            data, p, end, _ = _payload(buf, pos, header)
        except ForensicsError:  # the lazy decoder raises it again, while iterating
            return _iter_records(buf, pos, header)
        decoded = native.records(data, p, end, header.base_offset, header.base_timestamp,
                                 header.max_timestamp if header.is_log_append_time else None,
                                 header.base_sequence, header.records_count)
        if decoded is not None:
            return iter(decoded)
    return _iter_records(buf, pos, header)


def _payload(buf, pos: int, header: BatchHeader) -> Tuple[object, int, int, Optional[int]]:
    """The records' bytes of the batch at ``pos``: ``(data, start, end, batch_pos)``; batch_pos
    is the batch's position for compressed batches (errors then name it), None otherwise."""
    end = pos + header.size
    if end > len(buf):
        raise CorruptBatchError("record batch runs past the end of the data", position=pos, offset=header.base_offset)
    if not header.codec:
        return buf, pos + RECORD_BATCH_OVERHEAD, end, None
    try:
        with memoryview(buf) as view:
            data = decompress(header.codec, view[pos + RECORD_BATCH_OVERHEAD : end], magic=2)
    except CorruptBatchError as exc:
        raise exc.at(position=pos, offset=header.base_offset) from None
    return data, 0, len(data), pos


def _iter_records(buf, pos: int, header: BatchHeader) -> Iterator[Record]:
    data, p, end, batch_pos = _payload(buf, pos, header)
    yield from _records(data, p, end, header, batch_pos)


def _records(data, p: int, end: int, header: BatchHeader, batch_pos: Optional[int]) -> Iterator[Record]:
    base_offset = header.base_offset
    base_ts = header.base_timestamp
    log_append = header.max_timestamp if header.is_log_append_time else None
    base_seq = header.base_sequence
    count = header.records_count
    if count < 0:
        raise CorruptRecordError(f"negative record count {count}", position=batch_pos, offset=base_offset)
    for i in range(count):
        if p >= end:
            raise CorruptRecordError(
                f"batch declares {count} records but its data ends after {i}",
                position=batch_pos if batch_pos is not None else p,
                offset=base_offset,
            )
        try:
            record, p = _record(data, p, end, base_offset, base_ts, log_append, base_seq)
        except CorruptRecordError as exc:
            if batch_pos is not None:  # compressed: positions are inside the plaintext
                exc.position = batch_pos
            raise exc.at(offset=base_offset)
        yield record
    if p != end:
        raise CorruptRecordError(
            f"incorrect declared batch size: {end - p} bytes remain after {count} records",
            position=batch_pos if batch_pos is not None else p,
            offset=base_offset,
        )


def _nullable_bytes(data, p: int, end: int, what: str) -> Tuple[Optional[bytes], int]:
    """A varint length (-1 = null) followed by that many bytes."""
    n, p = read_varint(data, p, end, CorruptRecordError)
    if n < -1 or p + n > end:
        raise CorruptRecordError(f"invalid {what} length {n}", position=p)
    if n < 0:
        return None, p
    return bytes(data[p : p + n]), p + n


def _record(data, p: int, end: int, base_offset: int, base_ts: int, log_append: Optional[int], base_seq: int):
    start = p
    err = CorruptRecordError
    length, p = read_varint(data, p, end, err)
    body_end = p + length
    if length < 1 or body_end > end:  # a body holds at least the attributes byte
        what = "is too small for a record body" if length < 1 else "runs past the end of the batch"
        raise err(f"record length {length} {what}", position=start)
    attributes = data[p]
    p += 1
    ts_delta, p = read_varlong(data, p, body_end, err)
    offset_delta, p = read_varint(data, p, body_end, err)
    key, p = _nullable_bytes(data, p, body_end, "key")
    value, p = _nullable_bytes(data, p, body_end, "value")
    header_count, p = read_varint(data, p, body_end, err)
    if header_count < 0 or header_count > body_end - p:
        raise err(f"invalid header count {header_count}", position=p)
    headers = []
    for _ in range(header_count):
        hk_len, p = read_varint(data, p, body_end, err)
        if hk_len < 0 or p + hk_len > body_end:
            raise err(f"invalid header key length {hk_len}", position=p)
        try:
            hkey = bytes(data[p : p + hk_len]).decode("utf-8")
        except UnicodeDecodeError:
            raise err("header key is not valid UTF-8", position=p) from None
        p += hk_len
        hval, p = _nullable_bytes(data, p, body_end, "header value")
        headers.append(Header(hkey, hval))
    if p != body_end:
        raise err(f"record body has {body_end - p} unread bytes", position=p)
    seq = -1 if base_seq == NO_SEQUENCE else increment_sequence(base_seq, offset_delta)
    ts = log_append if log_append is not None else base_ts + ts_delta
    return Record(base_offset + offset_delta, ts, key, value, tuple(headers), seq, attributes, start), body_end


if native is not None:
    native.init_records(Record, Header)
