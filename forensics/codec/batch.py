"""Record batch v2 (magic 2, Kafka >= 0.11.0, KIP-98): header and records (Kafka's
``DefaultRecordBatch``, ``DefaultRecord``).

Mirrors ``clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java`` and
``DefaultRecord.java``. The header is declared once as a precompiled struct; decoding the
header never touches the record bodies, so a header-only scan costs one ``unpack_from``.
"""

from __future__ import annotations

import struct
from forensics.dataclass_fast import dataclass
from typing import Any, NamedTuple, cast, final
from collections.abc import Iterable, Iterator

from forensics.codec.compression import NATIVE_CODECS, decompress
from forensics.codec.crc import crc32c
from forensics.codec.primitives import INT32_MAX, read_varint, read_varlong
from forensics.codec.log_entry import LOG_OVERHEAD, nullable_size
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
MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD  # 49: a batch with no record
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
LAST_OFFSET_DELTA_OFFSET = 23
RECORDS_COUNT_OFFSET = 57
CRC = struct.Struct(">I")  # @CRC_OFFSET
ATTRIBUTES_AND_LAST_DELTA = struct.Struct(">hi")  # @ATTRIBUTES_OFFSET: attributes, lastOffsetDelta
LAST_OFFSET_DELTA = struct.Struct(">i")  # @LAST_OFFSET_DELTA_OFFSET
RECORDS_COUNT = struct.Struct(">i")  # @RECORDS_COUNT_OFFSET
MIN_RECORD_SIZE = 7  # a record of one-byte varints: length, attributes, deltas, null key and value, 0 headers

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40
KNOWN_ATTRIBUTES = 0x7F  # bits 7-15 are unused: Kafka writes them as 0
MAX_CODEC_ID = 4  # zstd, the highest CompressionType id

NO_PRODUCER_ID = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP


def increment_sequence(sequence: int, increment: int) -> int:
    """Kafka's ``DefaultRecordBatch.incrementSequence``: wraps past Integer.MAX_VALUE to 0."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


_ATTRIBUTES = 5  # the index of BatchHeader.attributes


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

    # the four attribute bits: replaced below by C descriptors when the accelerator is there
    @property
    def codec(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_MASK)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def timestamp_type(self) -> str:
        return "LogAppendTime" if self.attributes & TIMESTAMP_TYPE_MASK else "CreateTime"

    @property
    def delete_horizon_ms(self) -> int | None:
        return self.base_timestamp if self.attributes & DELETE_HORIZON_MASK else None

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)


# BatchHeader's attribute properties: (name, mask, as a bool). With the accelerator each is a C
# descriptor reading the same bits (native.attribute_bits): a property's Python getter costs a frame
# per read, and a segment's readers ask for these once per batch. PURE_ATTRIBUTE_PROPERTIES keeps the
# Python ones (the tests compare the two).
ATTRIBUTE_PROPERTIES = (("codec", COMPRESSION_MASK, False), ("is_log_append_time", TIMESTAMP_TYPE_MASK, True),
                        ("is_transactional", TRANSACTIONAL_MASK, True), ("is_control", CONTROL_MASK, True))
PURE_ATTRIBUTE_PROPERTIES = {name: BatchHeader.__dict__[name] for name, _, _ in ATTRIBUTE_PROPERTIES}
if native is not None:
    for _name, _mask, _flag in ATTRIBUTE_PROPERTIES:
        setattr(BatchHeader, _name, native.attribute_bits(_ATTRIBUTES, _mask, _flag))


class Header(NamedTuple):
    key: str
    value: bytes | None


class Record(NamedTuple):
    """One record of a v2 batch, with absolute offset, timestamp and sequence."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    sequence: int
    attributes: int
    position: int  # byte position of the record's length varint (in the decompressed stream if compressed)

    @property
    def key_size(self) -> int:
        return nullable_size(self.key)

    @property
    def value_size(self) -> int:
        return nullable_size(self.value)


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
    decoded = _native_records(buf, pos, header, False)
    return iter(decoded) if decoded is not None else _iter_records(buf, pos, header)


RecordTuple = tuple[int, int, bytes | None, bytes | None, tuple[Header, ...]]
"""A record projected to ``(offset, timestamp, key, value, headers)``: what bulk readers take."""


def record_tuples(buf, pos: int, header: BatchHeader) -> Iterable[RecordTuple]:
    """The records of the v2 batch at ``pos`` as ``(offset, timestamp, key, value, headers)``
    tuples: ``iter_records`` projected to the fields bulk readers use, without the objects of the
    other three (sequence, attributes, position) or a Record per record. Same rules and errors as
    ``iter_records`` (raised while iterating, after the good records).

    With the C accelerator this name is bound to ``native.record_tuples``, which takes the healthy
    batches and hands the others to this function (``python_record_tuples``)."""
    decoded = _native_records(buf, pos, header, True)
    return decoded if decoded is not None else (r[:5] for r in _iter_records(buf, pos, header))


@final  # (so that a test of ``type(x) is RecordBlock`` tells the type checker both ways)
@dataclass(frozen=True)
class RecordBlock:
    """The records of one v2 batch, checked whole by the C accelerator and kept as their bytes (a
    copy of the batch's records, or its decompressed payload): a sequence of Record made on
    demand, so that a consumer that only writes them out (the dump's text writer, through
    ``native.record_lines``) never makes a Python object per record."""

    __slots__ = ("data", "header", "base")
    data: bytes
    header: BatchHeader
    base: int  # where data[0] is: its file position (uncompressed batch), 0 (the plaintext)

    def __len__(self) -> int:
        return self.header.records_count

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records())

    def __getitem__(self, index):
        return self.records()[index]

    def records(self) -> list[Record]:
        assert native is not None  # only the accelerator makes a RecordBlock (record_block)
        # eager (lazy=False) on a payload decompressed already: always a list
        return cast(list[Record], native.records(self.data, 0, len(self.data), self.header, False, True, self.base))


def record_block(buf, pos: int, header: BatchHeader) -> RecordBlock | None:
    """The batch's records as a RecordBlock when the C accelerator decodes them all (same rules as
    ``iter_records``); None without it, or when a record breaks a rule or the payload does not
    decompress there: ``iter_records`` then gives the good records and raises the error."""
    if native is None:
        return None
    data = native.record_block(buf, pos, header)
    if data is None:
        return None
    return RecordBlock(data, header, pos + RECORD_BATCH_OVERHEAD if not header[5] & COMPRESSION_MASK else 0)


def _native_records(buf, pos: int, header: BatchHeader, plain: bool) -> list | None:
    """The whole batch decoded by the C accelerator (``plain``: as record tuples), or None when it
    is absent or hands the batch back (damage: the lazy decoder then raises the exact error)."""
    if native is None:
        return None
    codec = header[5] & COMPRESSION_MASK  # attributes
    if not codec or codec in NATIVE_CODECS:  # read in place, or decompressed by the accelerator
        return native.records(buf, pos + RECORD_BATCH_OVERHEAD, pos + LOG_OVERHEAD + header[1], header, plain)
    try:
        data, p, end, _ = _payload(buf, pos, header)
    except ForensicsError:  # the lazy decoder raises it again, while iterating
        return None
    return native.records(cast(bytes, data), p, end, header, plain, True)


def _payload(buf, pos: int, header: BatchHeader) -> tuple[object, int, int, int | None]:
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


def _records(data, p: int, end: int, header: BatchHeader, batch_pos: int | None) -> Iterator[Record]:
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


def _nullable_bytes(data, p: int, end: int, what: str) -> tuple[bytes | None, int]:
    """A varint length (-1 = null) followed by that many bytes."""
    n, p = read_varint(data, p, end, CorruptRecordError)
    if n < -1 or p + n > end:
        raise CorruptRecordError(f"invalid {what} length {n}", position=p)
    if n < 0:
        return None, p
    return bytes(data[p : p + n]), p + n


def _record(data, p: int, end: int, base_offset: int, base_ts: int, log_append: int | None, base_seq: int):
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



python_record_tuples = record_tuples  # the reference (the accelerator's fallback; tests call it)
if native is not None:
    native.init_records(Record, Header)
    native.init_fallback("record_tuples", python_record_tuples)
    record_tuples = cast(Any, native.record_tuples)  # noqa: F811  (same contract; saves a Python frame per batch)
