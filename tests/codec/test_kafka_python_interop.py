"""Interop: bytes written by an independent encoder (kafka-python's record builders) decode right.

kafka-python (``kafka.record.default_records.DefaultRecordBatchBuilder`` for magic 2,
``kafka.record.legacy_records.LegacyRecordBatchBuilder`` for magic 0/1,
``kafka.record.memory_records.MemoryRecordsBuilder``) writes batches for every codec it supports:
none/gzip/snappy/lz4/zstd for v2, none/gzip/snappy/lz4 for legacy (lz4 magic 0 with the KAFKA-3160
broken header checksum). Fields a *broker* sets (base offset, partition leader epoch, LogAppendTime,
the offset of a legacy wrapper) are patched in afterwards exactly where the broker writes them, with
the checksum recomputed when it covers them.

Every batch is decoded with our codec and checked field by field against what was written, against
kafka-python's own reader (``kafka.record.MemoryRecords``) record for record, and through the dump
report (``Dumping`` / batch / ``|`` record lines). Also worked examples: the 78-byte COMMIT
control batch (``EndTransactionMarker``) and varints (``ByteUtils``).
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Sequence
from typing import NamedTuple

import kafka.codec
import pytest
from kafka.record import MemoryRecords
from kafka.record._crc32c import crc as kp_crc32c  # kafka-python's pure-Python CRC-32C
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecordsBuilder
from kafka.record.util import decode_varint as kp_decode_varint
from kafka.record.util import encode_varint as kp_encode_varint

from forensics.codec import control, legacy
from forensics.codec.batch import Header, crc_ok, decode_header, iter_records
from forensics.codec.primitives import (
    encode_varint,
    encode_varlong,
    read_varint,
    read_varlong,
)
from forensics.errors import CorruptInputError, CorruptRecordError, ForensicsError
from forensics.render.dump_text import render_dump_text
from forensics.report.dump import DumpOptions, dump_file
from tests.kafka_python_support import XXHashModule, xxh32_independent

CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
V2_CODECS = [0, 1, 2, 3, 4]
LEGACY_CODECS = [0, 1, 2, 3]
INT32_MAX = 0x7FFFFFFF
T0 = 1_700_000_000_000




def test_xxh32_stand_in_matches_reference_vectors():
    assert xxh32_independent(b"") == 0x02CC5D05
    assert xxh32_independent(b"abc") == 0x32D153FF


@pytest.fixture
def xxhash_for_kafka_python(monkeypatch):
    """kafka.codec needs ``xxhash`` only for lz4 in magic 0 (lz4_encode_old_kafka / lz4_decode_old_kafka)."""
    if kafka.codec.xxhash is None:
        monkeypatch.setattr(kafka.codec, "xxhash", XXHashModule())
    yield


# -- what we write ------------------------------------------------------------------------------


class Rec(NamedTuple):
    offset: int  # v2: offset delta; legacy: offset field of the message as the producer wrote it
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


def v2_records(scenario: str) -> list[Rec]:
    filler = b"compressible payload " * 12
    if scenario == "large":  # several snappy xerial chunks (32 KiB) and lz4 blocks (64 KiB)
        return [Rec(i, T0 + i, b"big-%d" % i, (b"%06d-" % i) * 30_000, ()) for i in range(3)]
    deltas = [0, 1, 2, 3, 4]
    if scenario == "gaps":  # compacted-looking offset deltas; sequences follow the deltas
        deltas = [0, 1, 4, 9, 10]
    return [
        Rec(deltas[0], T0, b"key-0", filler + b"0", (("trace-id", b"abc"), ("empty", b""), ("null", None))),
        Rec(deltas[1], T0 + 5, None, filler + b"1", ()),  # null key
        Rec(deltas[2], T0 - 3, b"", None, (("\u043a\u043b\u044e\u0447", b"\x00\xff"),)),  # negative ts delta, tombstone
        Rec(deltas[3], T0 + 86_400_000_000, b"k3", b"", ()),  # delta needs a long varlong; empty value
        Rec(deltas[4], T0 + 7, b"\xff\xfebinary", filler + bytes(range(256)), (("a", b"1"), ("b", b"2"), ("c", None))),
    ]


class V2Case(NamedTuple):
    name: str
    codec: int
    scenario: str
    producer_id: int
    producer_epoch: int
    base_sequence: int
    transactional: bool
    log_append_time: int | None  # broker-assigned maxTimestamp when set


V2_SCENARIOS = {
    # scenario: (producer_id, epoch, base_sequence, transactional, log_append_time)
    "plain": (-1, -1, -1, False, None),
    "idempotent": (4_611_686_018_427_387_904, 3, 100, False, None),
    "transactional": (1000, 5, 0, True, None),
    "seq-wrap": (77, 32_767, INT32_MAX - 1, True, None),
    "gaps": (78, 0, 500, False, None),
    "log-append-time": (-1, -1, -1, False, T0 + 123_456),
    "large": (79, 1, 7, True, None),
}

V2_CASES = [
    V2Case(f"{CODEC_NAMES[c]}-{s}", c, s, *V2_SCENARIOS[s]) for c in V2_CODECS for s in V2_SCENARIOS
]


def build_v2(case: V2Case, recs: Sequence[Rec]) -> bytes:
    b = DefaultRecordBatchBuilder(
        magic=2, compression_type=case.codec, is_transactional=case.transactional,
        producer_id=case.producer_id, producer_epoch=case.producer_epoch, base_sequence=case.base_sequence,
        batch_size=1 << 24)
    for r in recs:
        assert b.append(r.offset, r.timestamp, r.key, r.value, list(r.headers)) is not None
    return bytes(b.build())


def broker_v2(buf: bytes, base_offset: int, leader_epoch: int, log_append_time: int | None = None) -> bytes:
    """What the leader does on append: base offset and partition leader epoch (outside the CRC) and,
    for LogAppendTime topics, timestamp type + maxTimestamp (inside the CRC, so re-checksum)."""
    out = bytearray(buf)
    struct.pack_into(">q", out, 0, base_offset)
    struct.pack_into(">i", out, 12, leader_epoch)
    if log_append_time is not None:
        attrs = struct.unpack_from(">h", out, 21)[0] | 0x08
        struct.pack_into(">h", out, 21, attrs)
        struct.pack_into(">q", out, 35, log_append_time)
        struct.pack_into(">I", out, 17, kp_crc32c(bytes(out[21:])))
    return bytes(out)


def seq_of(base_sequence: int, delta: int) -> int:
    """Independent form of Kafka's incrementSequence: wrap modulo 2^31."""
    return -1 if base_sequence == -1 else (base_sequence + delta) % (1 << 31)


# -- v2: field by field -------------------------------------------------------------------------


def check_v2_batch(buf: bytes, pos: int, case: V2Case, recs: Sequence[Rec], base_offset: int, leader_epoch: int):
    h = decode_header(buf, pos)
    assert h.magic == 2
    assert h.base_offset == base_offset
    assert h.partition_leader_epoch == leader_epoch
    assert h.size == h.batch_length + 12
    assert h.codec == case.codec, "kafka-python fell back to no compression: make the data compressible"
    assert h.is_transactional is case.transactional
    assert h.is_control is False
    assert h.delete_horizon_ms is None
    assert h.timestamp_type == ("LogAppendTime" if case.log_append_time is not None else "CreateTime")
    assert h.is_log_append_time is (case.log_append_time is not None)
    assert h.last_offset_delta == recs[-1].offset
    assert h.last_offset == base_offset + recs[-1].offset
    assert h.records_count == len(recs)
    assert h.base_timestamp == recs[0].timestamp
    assert h.max_timestamp == (case.log_append_time if case.log_append_time is not None
                               else max(r.timestamp for r in recs))
    assert h.producer_id == case.producer_id
    assert h.has_producer_id is (case.producer_id >= 0)
    assert h.producer_epoch == case.producer_epoch
    assert h.base_sequence == case.base_sequence
    assert h.last_sequence == seq_of(case.base_sequence, recs[-1].offset)
    assert h.crc == struct.unpack_from(">I", buf, pos + 17)[0] == kp_crc32c(buf[pos + 21: pos + h.size])
    assert crc_ok(buf, pos, h)
    got = list(iter_records(buf, pos, h))
    assert len(got) == len(recs)
    for g, r in zip(got, recs):
        assert g.offset == base_offset + r.offset
        assert g.timestamp == (case.log_append_time if case.log_append_time is not None else r.timestamp)
        assert g.key == r.key and g.key_size == (-1 if r.key is None else len(r.key))
        assert g.value == r.value and g.value_size == (-1 if r.value is None else len(r.value))
        assert g.headers == tuple(Header(k, v) for k, v in r.headers)
        assert g.sequence == seq_of(case.base_sequence, r.offset)
        assert g.attributes == 0
    if case.codec == 0:
        assert got[0].position == pos + 61  # first record's length varint follows the 61-byte header
    return h, got


@pytest.mark.parametrize("case", V2_CASES, ids=lambda c: c.name)
def test_v2_kafka_python_batch_decodes_field_by_field(case):
    recs = v2_records(case.scenario)
    raw = build_v2(case, recs)
    assert raw[:8] == b"\x00" * 8 and raw[12:16] == b"\x00" * 4  # producer-side: broker fields unset
    buf = broker_v2(raw, 1_234_567, 9, case.log_append_time)
    check_v2_batch(buf, 0, case, recs, 1_234_567, 9)
    # the same batch as kafka-python's producer sent it (base offset 0, epoch 0) decodes too
    if case.log_append_time is None:
        check_v2_batch(raw, 0, case, recs, 0, 0)


def test_v2_sequence_wraps_past_int32_max():
    case = next(c for c in V2_CASES if c.scenario == "seq-wrap" and c.codec == 0)
    recs = v2_records("seq-wrap")
    buf = broker_v2(build_v2(case, recs), 10, 0)
    h = decode_header(buf)
    assert [r.sequence for r in iter_records(buf, 0, h)] == [INT32_MAX - 1, INT32_MAX, 0, 1, 2]
    assert h.last_sequence == 2


def test_v2_memory_records_builder_with_offset_skip():
    mrb = MemoryRecordsBuilder(magic=2, compression_type=4, batch_size=1 << 20, offset=0,
                               transactional=True, producer_id=42, producer_epoch=2, base_sequence=11)
    for i in range(3):
        mrb.append(T0 + i, b"k%d" % i, b"zstd value " * 30, [("h", b"%d" % i)])
    mrb.skip(4)  # next offset 3 -> 7
    mrb.append(T0 + 9, None, None, [])
    mrb.close()
    buf = broker_v2(bytes(mrb.buffer()), 5000, 1)
    h = decode_header(buf)
    assert (h.codec, h.records_count, h.last_offset_delta, h.last_offset) == (4, 4, 7, 5007)
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.last_sequence) == (42, 2, 11, 18)
    recs = list(iter_records(buf, 0, h))
    assert [r.offset for r in recs] == [5000, 5001, 5002, 5007]
    assert [r.sequence for r in recs] == [11, 12, 13, 18]
    assert recs[-1].key is None and recs[-1].value is None and recs[-1].headers == ()
    assert recs[1].headers == (Header("h", b"1"),)


# -- kafka-python's reader agrees with ours, record for record ---------------------------------


def kp_v2_view(buf: bytes):
    """[(batch fields, [record fields])] as kafka-python's MemoryRecords reads the buffer."""
    out = []
    pos = 0
    for kb in MemoryRecords(buf):
        valid = kb.validate_crc()
        fields = dict(
            position=pos, base_offset=kb.base_offset, last_offset=kb.last_offset, count=kb.records_count,
            base_sequence=kb.base_sequence, last_sequence=kb.last_sequence, producer_id=kb.producer_id,
            producer_epoch=kb.producer_epoch, leader_epoch=kb.leader_epoch, transactional=kb.is_transactional,
            control=kb.is_control_batch, timestamp_type=kb.timestamp_type, max_timestamp=kb.max_timestamp,
            size=kb.size_in_bytes, codec=kb.compression_type, crc=kb.crc, valid=valid,
            base_timestamp=kb.first_timestamp)
        records = [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers),
                    seq_of(kb.base_sequence, r.offset - kb.base_offset)) for r in kb]
        out.append((fields, records))
        pos += kb.size_in_bytes
    return out


def our_v2_view(buf: bytes):
    out = []
    pos = 0
    while pos < len(buf):
        h = decode_header(buf, pos)
        fields = dict(
            position=pos, base_offset=h.base_offset, last_offset=h.last_offset, count=h.records_count,
            base_sequence=h.base_sequence, last_sequence=h.last_sequence, producer_id=h.producer_id,
            producer_epoch=h.producer_epoch, leader_epoch=h.partition_leader_epoch,
            transactional=h.is_transactional, control=h.is_control, timestamp_type=int(h.is_log_append_time),
            max_timestamp=h.max_timestamp, size=h.size, codec=h.codec, crc=h.crc, valid=crc_ok(buf, pos, h),
            base_timestamp=h.base_timestamp)
        records = [(r.offset, r.timestamp, r.key, r.value, tuple((x.key, x.value) for x in r.headers), r.sequence)
                   for r in iter_records(buf, pos, h)]
        out.append((fields, records))
        pos += h.size
    return out


def v2_segment() -> tuple[int, bytes, list[V2Case]]:
    """All v2 cases back to back, offsets increasing, as one segment's bytes."""
    base = 3_000
    first = base
    parts = []
    for i, case in enumerate(V2_CASES):
        recs = v2_records(case.scenario)
        parts.append(broker_v2(build_v2(case, recs), base, i % 4, case.log_append_time))
        base += recs[-1].offset + 1
    return first, b"".join(parts), V2_CASES


def test_v2_kafka_python_reader_agrees_record_for_record():
    _, buf, cases = v2_segment()
    ours, theirs = our_v2_view(buf), kp_v2_view(buf)
    assert len(ours) == len(theirs) == len(cases)
    for (of, orecs), (tf, trecs) in zip(ours, theirs):
        assert of == tf
        assert orecs == trecs


# -- legacy (magic 0 and 1) ---------------------------------------------------------------------


class LegacyCase(NamedTuple):
    name: str
    magic: int
    codec: int
    wrapper_offset: int | None  # None: leave what kafka-python wrote (0)
    log_append_time: int | None  # v1 wrapper LogAppendTime


def legacy_records(magic: int, codec: int, relative: bool) -> list[Rec]:
    filler = b"legacy compressible value " * 8
    offs = [0, 1, 3, 4] if relative else [700, 701, 702, 703]
    return [
        Rec(offs[0], T0 + 10, b"lk0", filler + b"0"),
        Rec(offs[1], T0 + 5, None, filler + b"1"),  # null key, earlier timestamp
        Rec(offs[2], T0 + 20, b"", None),  # empty key, null value
        Rec(offs[3], T0 + 15, b"lk3", b""),
    ]


LEGACY_CASES = (
    [LegacyCase(f"v{m}-{CODEC_NAMES[c]}-offset", m, c, 1_004 if m == 1 else 703, None)
     for m in (0, 1) for c in LEGACY_CODECS]
    + [LegacyCase(f"v1-{CODEC_NAMES[c]}-wrapper-offset-0", 1, c, None, None) for c in LEGACY_CODECS[1:]]
    + [LegacyCase(f"v1-{CODEC_NAMES[c]}-log-append-time", 1, c, 2_004, T0 + 999) for c in LEGACY_CODECS[1:]]
)


def build_legacy(magic: int, codec: int, recs: Sequence[Rec]) -> bytes:
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for r in recs:
        assert b.append(r.offset, r.timestamp, r.key, r.value) is not None
    return bytes(b.build())


def broker_legacy_wrapper(buf: bytes, offset: int | None, log_append_time: int | None) -> bytes:
    """The broker assigns a compressed wrapper's offset (outside the CRC) and, for LogAppendTime,
    sets the wrapper's timestamp type bit and timestamp (inside the CRC-32, so re-checksum)."""
    out = bytearray(buf)
    if offset is not None:
        struct.pack_into(">q", out, 0, offset)
    if log_append_time is not None:
        out[17] |= 0x08
        struct.pack_into(">q", out, 18, log_append_time)
        struct.pack_into(">I", out, 12, zlib.crc32(bytes(out[16:])))
    return bytes(out)


def legacy_case_bytes(case: LegacyCase) -> tuple[bytes, list[Rec], list[int]]:
    """(bytes, records, expected absolute offsets)."""
    relative = case.magic == 1 and case.codec != 0
    recs = legacy_records(case.magic, case.codec, relative)
    if case.codec == 0:  # plain message set: absolute offsets; a v1 set gets offsets 1000.. too
        if case.magic == 1:
            recs = [r._replace(offset=1_000 + i) for i, r in enumerate(recs)]
        return build_legacy(case.magic, 0, recs), recs, [r.offset for r in recs]
    buf = broker_legacy_wrapper(build_legacy(case.magic, case.codec, recs), case.wrapper_offset,
                                case.log_append_time)
    if not relative:
        expected = [r.offset for r in recs]
    elif case.wrapper_offset in (None, 0):
        expected = [r.offset for r in recs]  # wrapper offset 0: absolute base 0 (librdkafka rule)
    else:
        expected = [case.wrapper_offset - recs[-1].offset + r.offset for r in recs]
    return buf, recs, expected


@pytest.mark.parametrize("case", LEGACY_CASES, ids=lambda c: c.name)
def test_legacy_kafka_python_messages_decode_field_by_field(case, xxhash_for_kafka_python):
    buf, recs, expected_offsets = legacy_case_bytes(case)
    ts_type = "NoTimestampType" if case.magic == 0 else (
        "LogAppendTime" if case.log_append_time is not None else "CreateTime")
    if case.codec == 0:  # one entry per message
        pos, got = 0, []
        while pos < len(buf):
            e = legacy.decode_entry(buf, pos)
            assert e.position == pos and e.magic == case.magic and e.codec == 0
            assert e.is_valid and e.crc == zlib.crc32(buf[pos + 16: pos + e.total_size])
            assert e.timestamp_type == ts_type
            assert list(legacy.iter_deep(e)) == [e]
            got.append(e)
            pos += e.total_size
    else:
        w = legacy.decode_entry(buf, 0)
        assert w.total_size == len(buf) and w.size == len(buf) - 12
        assert w.magic == case.magic and w.codec == case.codec
        assert w.offset == w.last_offset == (case.wrapper_offset or 0)
        assert w.key is None and w.value is not None
        assert w.is_valid and w.crc == struct.unpack_from(">I", buf, 12)[0] == zlib.crc32(buf[16:])
        assert w.timestamp_type == ts_type
        assert w.timestamp == (-1 if case.magic == 0 else (case.log_append_time or 0))
        got = list(legacy.iter_deep(w))
        assert got == legacy.inner_records(w)
    assert [g.offset for g in got] == expected_offsets
    for g, r in zip(got, recs):
        assert g.magic == case.magic and g.codec == 0
        assert g.key == r.key and g.key_size == (-1 if r.key is None else len(r.key))
        assert g.value == r.value and g.value_size == (-1 if r.value is None else len(r.value))
        if case.magic == 0:
            assert g.timestamp == -1
        elif case.log_append_time is not None:
            assert g.timestamp == case.log_append_time  # inner messages take the wrapper's time
        else:
            assert g.timestamp == r.timestamp
        assert g.is_valid


def test_legacy_lz4_magic0_uses_broken_header_checksum(xxhash_for_kafka_python):
    recs = legacy_records(0, 3, False)
    w = legacy.decode_entry(build_legacy(0, 3, recs), 0)
    frame = w.value
    assert frame[:4] == b"\x04\x22\x4d\x18" and not frame[4] & 0x08  # no content size in old-kafka frames
    assert frame[6] == (xxh32_independent(frame[0:6]) >> 8) & 0xFF  # KAFKA-3160: hash from the magic
    assert [r.value for r in legacy.iter_deep(w)] == [r.value for r in recs]


def test_legacy_lz4_magic1_frame_with_correct_checksum_and_content_size():
    w = legacy.decode_entry(build_legacy(1, 3, legacy_records(1, 3, True)), 0)
    frame = w.value
    flg = frame[4]
    hc_at = 14 if flg & 0x08 else 6
    assert frame[hc_at] == (xxh32_independent(frame[4:hc_at]) >> 8) & 0xFF
    assert len(legacy.inner_records(w)) == 4


@pytest.mark.parametrize("codec", LEGACY_CODECS[1:], ids=lambda c: CODEC_NAMES[c])
def test_legacy_v1_wrapper_offset_below_last_relative_is_invalid(codec):
    recs = legacy_records(1, codec, True)  # last relative offset 4
    w = legacy.decode_entry(broker_legacy_wrapper(build_legacy(1, codec, recs), 2, None), 0)
    with pytest.raises(CorruptRecordError):
        legacy.inner_records(w)


def kp_legacy_view(buf: bytes):
    out, pos = [], 0
    for kb in MemoryRecords(buf):
        valid = kb.validate_crc()
        crc = struct.unpack_from(">I", buf, pos + 12)[0]
        ts = struct.unpack_from(">q", buf, pos + 18)[0] if kb.magic == 1 else -1
        fields = dict(position=pos, offset=kb.base_offset, size=kb.size_in_bytes, magic=kb.magic,
                      codec=kb.compression_type, ts_type=kb.timestamp_type, timestamp=ts, crc=crc, valid=valid)
        records = [(r.offset, -1 if r.timestamp is None else r.timestamp, r.key, r.value, r.checksum,
                    r.validate_crc()) for r in kb]
        out.append((fields, records))
        pos += kb.size_in_bytes
    return out


def our_legacy_view(buf: bytes):
    out, pos = [], 0
    while pos < len(buf):
        e = legacy.decode_entry(buf, pos)
        ts_type = None if e.magic == 0 else int(e.timestamp_type == "LogAppendTime")
        fields = dict(position=pos, offset=e.offset, size=e.total_size, magic=e.magic, codec=e.codec,
                      ts_type=ts_type, timestamp=e.timestamp, crc=e.crc, valid=e.is_valid)
        records = [(r.offset, r.timestamp, r.key, r.value, r.crc, r.is_valid) for r in legacy.iter_deep(e)]
        out.append((fields, records))
        pos += e.total_size
    return out


def legacy_segment() -> tuple[int, bytes]:
    """Legacy cases whose offsets kafka-python and Kafka compute alike, back to back, offsets increasing."""
    parts, base, first = [], 10_000, None
    for case in LEGACY_CASES:
        recs = legacy_records(case.magic, case.codec, case.magic == 1 and case.codec != 0)
        n = recs[-1].offset - recs[0].offset
        if case.codec == 0:
            recs = [r._replace(offset=base + i) for i, r in enumerate(recs)]
            n = len(recs) - 1
            buf = build_legacy(case.magic, 0, recs)
        elif case.magic == 0:  # v0 inner offsets are absolute
            recs = [r._replace(offset=base + r.offset - recs[0].offset) for r in recs]
            buf = broker_legacy_wrapper(build_legacy(0, case.codec, recs), base + n, None)
        else:
            buf = broker_legacy_wrapper(build_legacy(1, case.codec, recs), base + n, case.log_append_time)
        first = base if first is None else first
        parts.append(buf)
        base += n + 1
    return first, b"".join(parts)


def test_legacy_kafka_python_reader_agrees_record_for_record(xxhash_for_kafka_python):
    _, buf = legacy_segment()
    ours, theirs = our_legacy_view(buf), kp_legacy_view(buf)
    assert len(ours) == len(theirs) > len(LEGACY_CASES)
    for (of, orecs), (tf, trecs) in zip(ours, theirs):
        assert of == tf
        assert orecs == trecs


@pytest.mark.parametrize("case", [c for c in LEGACY_CASES if c.wrapper_offset is not None],
                         ids=lambda c: c.name)
def test_legacy_case_matches_kafka_python_reader(case, xxhash_for_kafka_python):
    buf, _, _ = legacy_case_bytes(case)
    assert our_legacy_view(buf) == kp_legacy_view(buf)


# -- the dump report over a segment file made of kafka-python bytes ----------------------------


def _b(v: bool) -> str:
    return "true" if v else "false"


def _text(data: bytes | None) -> str:
    return data.decode("utf-8", errors="replace")


def expected_v2_lines(buf: bytes, print_data: bool) -> list[str]:
    lines, pos = [], 0
    for kb in MemoryRecords(buf):
        valid = kb.validate_crc()
        ts_type = "LogAppendTime" if kb.timestamp_type == 1 else "CreateTime"
        lines.append(
            f"baseOffset: {kb.base_offset} lastOffset: {kb.last_offset} count: {kb.records_count} "
            f"baseSequence: {kb.base_sequence} lastSequence: {kb.last_sequence} producerId: {kb.producer_id} "
            f"producerEpoch: {kb.producer_epoch} partitionLeaderEpoch: {kb.leader_epoch} "
            f"isTransactional: {_b(kb.is_transactional)} isControl: {_b(kb.is_control_batch)} "
            f"deleteHorizonMs: OptionalLong.empty position: {pos} {ts_type}: {kb.max_timestamp} "
            f"size: {kb.size_in_bytes} magic: 2 compresscodec: {CODEC_NAMES[kb.compression_type]} "
            f"crc: {kb.crc} isvalid: {_b(valid)}")
        for r in kb:
            seq = seq_of(kb.base_sequence, r.offset - kb.base_offset)
            line = (f"| offset: {r.offset} {ts_type}: {r.timestamp} "
                    f"keySize: {-1 if r.key is None else len(r.key)} "
                    f"valueSize: {-1 if r.value is None else len(r.value)} sequence: {seq} "
                    f"headerKeys: [{','.join(k for k, _ in r.headers)}]")
            if kb.is_control_batch:
                line += (f" endTxnMarker: {'COMMIT' if r.commit else 'ABORT'} "
                         f"coordinatorEpoch: {struct.unpack('>hi', r.value[:6])[1]}")
            elif print_data:
                if r.key is not None:
                    line += f" key: {_text(r.key)}"
                if r.value is not None:
                    line += f" payload: {_text(r.value)}"
            lines.append(line)
        pos += kb.size_in_bytes
    return lines


def expected_legacy_lines(buf: bytes, print_data: bool) -> list[str]:
    lines, pos = [], 0
    for kb in MemoryRecords(buf):
        valid = kb.validate_crc()
        magic = kb.magic
        ts_type = {None: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}[kb.timestamp_type]
        wrapper_ts = struct.unpack_from(">q", buf, pos + 18)[0] if magic == 1 else -1
        crc = struct.unpack_from(">I", buf, pos + 12)[0]
        lines.append(f"offset: {kb.base_offset} position: {pos} {ts_type}: {wrapper_ts} size: {kb.size_in_bytes} "
                     f"magic: {magic} compresscodec: {CODEC_NAMES[kb.compression_type]} crc: {crc} "
                     f"isvalid: {_b(valid)}")
        for r in kb:
            ts = -1 if r.timestamp is None else r.timestamp
            line = (f"| offset: {r.offset} {ts_type}: {ts} keySize: {-1 if r.key is None else len(r.key)} "
                    f"valueSize: {-1 if r.value is None else len(r.value)} "
                    f"isValid: {_b(r.validate_crc())} crc: {r.checksum}}}")
            if print_data:
                if r.key is not None:
                    line += f" key: {_text(r.key)}"
                if r.value is not None:
                    line += f" payload: {_text(r.value)}"
            lines.append(line)
        pos += kb.size_in_bytes
    return lines


def run_dump(path, **options) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    render_dump_text(dump_file(str(path), DumpOptions(**options)), out, err)
    return out.getvalue(), err.getvalue()


def text_of(lines: Sequence[str]) -> str:
    """Payloads may contain newlines (Kafka prints them raw), so compare whole outputs, not split lines."""
    return "".join(line + "\n" for line in lines)


@pytest.mark.parametrize("print_data", [False, True], ids=["deep-iteration", "print-data-log"])
def test_dump_lines_of_v2_segment_written_by_kafka_python(tmp_path, print_data):
    first, buf, _ = v2_segment()
    path = tmp_path / f"{first:020d}.log"
    path.write_bytes(buf)
    out, err = run_dump(path, deep_iteration=True, print_data_log=print_data)
    assert err == ""
    head = [f"Dumping {path}", f"Log starting offset: {first}"]
    assert out == text_of(head + expected_v2_lines(buf, print_data))
    # shallow: batch lines only
    shallow, err = run_dump(path)
    assert err == ""
    assert shallow == text_of(head + [ln for ln in expected_v2_lines(buf, False) if not ln.startswith("|")])


@pytest.mark.parametrize("print_data", [False, True], ids=["deep-iteration", "print-data-log"])
def test_dump_lines_of_legacy_segment_written_by_kafka_python(tmp_path, print_data, xxhash_for_kafka_python):
    first, buf = legacy_segment()
    path = tmp_path / f"{first:020d}.log"
    path.write_bytes(buf)
    out, err = run_dump(path, deep_iteration=True, print_data_log=print_data)
    assert err == ""
    head = [f"Dumping {path}", f"Log starting offset: {first}"]
    assert out == text_of(head + expected_legacy_lines(buf, print_data))


def test_dump_of_mixed_magic_segment(tmp_path, xxhash_for_kafka_python):
    """After a message.format.version upgrade one segment holds legacy then v2 batches."""
    first, lbuf = legacy_segment()
    last_legacy = our_legacy_view(lbuf)[-1][0]["offset"]
    case = next(c for c in V2_CASES if c.name == "lz4-transactional")
    recs = v2_records(case.scenario)
    vbuf = broker_v2(build_v2(case, recs), last_legacy + 1, 2)
    path = tmp_path / f"{first:020d}.log"
    path.write_bytes(lbuf + vbuf)
    out, err = run_dump(path, deep_iteration=True)
    assert err == ""
    v2_lines = expected_v2_lines(vbuf, False)
    v2_lines[0] = v2_lines[0].replace("position: 0 ", f"position: {len(lbuf)} ")
    head = [f"Dumping {path}", f"Log starting offset: {first}"]
    assert out == text_of(head + expected_legacy_lines(lbuf, False) + v2_lines)


# -- the 78-byte COMMIT control batch (EndTransactionMarker) --------------------------------------

COMMIT_MARKER = bytes.fromhex(
    "00 00 00 00 00 00 00 2a 00 00 00 42 00 00 00 03"
    "02 40 d5 14 e9 00 30 00 00 00 00 00 00 01 8b cf"
    "e5 68 00 00 00 01 8b cf e5 68 00 00 00 00 00 00"
    "00 03 e8 00 05 ff ff ff ff 00 00 00 01 20 00 00"
    "00 08 00 00 00 01 0c 00 00 00 00 00 07 00"
)


def test_spec_commit_control_batch_every_field():
    buf = COMMIT_MARKER
    assert len(buf) == 78
    h = decode_header(buf)
    assert h.base_offset == 42
    assert h.batch_length == 66 and h.size == 78
    assert h.partition_leader_epoch == 3
    assert h.magic == 2
    assert h.crc == 0x40D514E9 and crc_ok(buf, 0, h)
    assert kp_crc32c(buf[21:]) == 0x40D514E9  # independent CRC-32C agrees
    assert h.attributes == 0x0030
    assert h.codec == 0 and h.is_transactional and h.is_control and not h.is_log_append_time
    assert h.delete_horizon_ms is None
    assert h.last_offset_delta == 0 and h.last_offset == 42
    assert h.base_timestamp == h.max_timestamp == 1_700_000_000_000
    assert h.producer_id == 1000 and h.producer_epoch == 5
    assert h.base_sequence == -1 and h.last_sequence == -1
    assert h.records_count == 1
    (rec,) = list(iter_records(buf, 0, h))
    assert rec.position == 61 and rec.attributes == 0
    assert rec.offset == 42 and rec.timestamp == 1_700_000_000_000 and rec.sequence == -1
    assert rec.key == b"\x00\x00\x00\x01" and rec.value == b"\x00\x00\x00\x00\x00\x07" and rec.headers == ()
    key = control.decode_control_key(rec.key)
    assert (key.version, key.type_id, key.type, key.type_name) == (0, 1, control.ControlRecordType.COMMIT, "COMMIT")
    marker = control.decode_end_txn_marker(key, rec.value)
    assert marker.control_type is control.ControlRecordType.COMMIT and marker.is_commit
    assert marker.version == 0 and marker.coordinator_epoch == 7
    assert control.encode_end_txn_marker(True, 7) == (rec.key, rec.value)
    # kafka-python reads it the same way
    (kb,) = list(MemoryRecords(buf))
    assert kb.validate_crc() and kb.is_control_batch and kb.is_transactional
    (kr,) = list(kb)
    assert kr.commit and kr.version == 0 and kr.offset == 42 and kr.timestamp == 1_700_000_000_000
    assert our_v2_view(buf) == kp_v2_view(buf)


def test_spec_commit_control_batch_dump_lines(tmp_path):
    path = tmp_path / "00000000000000000040.log"
    path.write_bytes(COMMIT_MARKER)
    out, err = run_dump(path, deep_iteration=True)
    assert err == ""
    lines = out.split("\n")[:-1]
    assert lines == [
        f"Dumping {path}",
        "Log starting offset: 40",
        "baseOffset: 42 lastOffset: 42 count: 1 baseSequence: -1 lastSequence: -1 producerId: 1000 "
        "producerEpoch: 5 partitionLeaderEpoch: 3 isTransactional: true isControl: true "
        "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000000 size: 78 magic: 2 "
        f"compresscodec: none crc: {0x40D514E9} isvalid: true",
        "| offset: 42 CreateTime: 1700000000000 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
        "endTxnMarker: COMMIT coordinatorEpoch: 7",
    ]
    assert lines[2:] == expected_v2_lines(COMMIT_MARKER, False)


def test_spec_abort_marker_variant_and_crc_damage():
    key, value = control.encode_end_txn_marker(False, 7)
    buf = bytearray(COMMIT_MARKER)
    buf[66:70] = key  # record key bytes
    struct.pack_into(">I", buf, 17, kp_crc32c(bytes(buf[21:])))
    buf = bytes(buf)
    h = decode_header(buf)
    assert crc_ok(buf, 0, h)
    (rec,) = list(iter_records(buf, 0, h))
    marker = control.decode_end_txn_marker(control.decode_control_key(rec.key), rec.value)
    assert marker.control_type is control.ControlRecordType.ABORT and not marker.is_commit
    damaged = COMMIT_MARKER[:-2] + b"\x08\x00"  # coordinatorEpoch 7 -> 8 without re-checksumming
    assert not crc_ok(damaged, 0, decode_header(damaged))


@pytest.mark.parametrize("key,value", [
    (None, b"\x00\x00\x00\x00\x00\x07"), (b"\x00\x00", b""), (b"\xff\xff\x00\x01", b"\x00\x00\x00\x00\x00\x07"),
])
def test_control_key_rejections(key, value):
    with pytest.raises(CorruptRecordError):
        control.decode_control_key(key)


@pytest.mark.parametrize("value", [None, b"", b"\x00\x00\x00\x00\x07", b"\xff\xff\x00\x00\x00\x07"])
def test_end_txn_marker_value_rejections(value):
    key = control.decode_control_key(b"\x00\x00\x00\x01")
    with pytest.raises(CorruptRecordError):
        control.decode_end_txn_marker(key, value)


def test_end_txn_marker_higher_versions_read_as_v0():
    key = control.decode_control_key(b"\x00\x05\x00\x00")  # unknown key version: parsed as v0
    marker = control.decode_end_txn_marker(key, b"\x00\x03\x00\x00\x01\x00extra")
    assert marker.control_type is control.ControlRecordType.ABORT
    assert (marker.version, marker.coordinator_epoch) == (3, 256)
    assert control.decode_control_key(b"\x00\x00\x00\x09").type_name == "UNKNOWN"
    with pytest.raises(CorruptRecordError):
        control.decode_end_txn_marker(control.decode_control_key(b"\x00\x00\x00\x02"), b"\x00" * 6)


# -- varints (ByteUtils.writeVarint) --------------------------------------------------------------

VARINT_EXAMPLES = [(0, "00"), (-1, "01"), (1, "02"), (-2, "03"), (63, "7e"), (-64, "7f"), (64, "8001"),
                   (300, "d804")]


@pytest.mark.parametrize("value,hexbytes", VARINT_EXAMPLES)
def test_spec_varint_examples(value, hexbytes):
    data = bytes.fromhex(hexbytes)
    assert encode_varint(value) == data
    assert encode_varlong(value) == data
    assert read_varint(data, 0, len(data)) == (value, len(data))
    assert read_varlong(data, 0, len(data)) == (value, len(data))
    kp = bytearray()
    kp_encode_varint(value, kp.append)  # kafka-python's encoder agrees
    assert bytes(kp) == data
    assert kp_decode_varint(data, 0) == (value, len(data))


@pytest.mark.parametrize("value", [2**31 - 1, -2**31, 2**40, -2**40, 2**63 - 1, -2**63, 86_400_000_000])
def test_varint_extremes_agree_with_kafka_python(value):
    kp = bytearray()
    kp_encode_varint(value, kp.append)
    data = bytes(kp)
    assert read_varlong(data, 0, len(data)) == (value, len(data))
    assert encode_varlong(value) == data
    if -2**31 <= value < 2**31:
        assert len(data) <= 5
        assert read_varint(data, 0, len(data)) == (value, len(data))
        assert encode_varint(value) == data


def test_varint_rejections():
    with pytest.raises(CorruptInputError):  # Kafka rejects a 5th byte that still has the continuation bit
        read_varint(b"\x80\x80\x80\x80\x80\x01", 0, 6)
    with pytest.raises(CorruptInputError):  # runs past the buffer
        read_varint(b"\x80\x80", 0, 2)
    with pytest.raises(CorruptInputError):
        read_varlong(b"\xff" * 10 + b"\x01", 0, 11)
    with pytest.raises(ForensicsError):
        read_varint(b"", 0, 0)
