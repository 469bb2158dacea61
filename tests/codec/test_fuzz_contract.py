"""Error contract of the segment decoders, by property testing.

Contract (forensics/errors.py): on *any* input bytes, the decoders of codec/ raise nothing but
:class:`forensics.errors.ForensicsError` subclasses, and :class:`forensics.io.frames.FrameScanner`
raises nothing at all (damage becomes findings). Entry points exercised:

* ``codec.batch``: ``decode_header``, ``crc_ok``, ``iter_records`` (consumed fully)
* ``codec.legacy``: ``decode_entry``, ``iter_deep`` / ``inner_records`` (consumed fully)
* ``codec.control``: ``decode_control_key``, ``decode_end_txn_marker``
* ``codec.primitives``: the varint / fixed-width / string readers
* ``io.frames.FrameScanner`` (consumed fully), then every frame through the decoders above

Inputs: arbitrary bytes, structured v2 batches with a valid CRC but random field values and record
bytes (so the record parser is reached), and mutations (flip / insert / delete / truncate / splice)
of valid batches written by kafka-python's builders for every codec and magic.

The long-running variant is ``tests/fuzz/fuzz_decoders.py`` (not collected by pytest).
"""

from __future__ import annotations

import struct
import zlib

import kafka.codec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record._crc32c import crc as kp_crc32c

from forensics.codec import control, legacy, primitives
from forensics.codec.batch import crc_ok, decode_header, iter_records
from forensics.errors import CorruptRecordError, ForensicsError
from forensics.io.frames import FrameScanner
from tests.decode_all import decode_frame
from tests.fuzz.strategies import mutate
from tests.kafka_python_support import build_seeds, legacy_seed
from tests.tiers import examples

FUZZ = settings(max_examples=examples(300), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- seeds: valid batches from an independent encoder -------------------------------------------


SEEDS: list[bytes] = build_seeds()


def test_seeds_are_valid_batches():
    for seed in SEEDS:
        scanner = FrameScanner(seed, "seed.log")
        frames = list(scanner)
        assert frames and scanner.findings == [], seed[:32].hex()
        for frame in frames:
            assert frame.crc_ok
            decode_frame(seed, frame.position, frame.magic)


# -- the contract ------------------------------------------------------------------------------


def only_forensics_errors(fn, *args) -> None:
    try:
        fn(*args)
    except ForensicsError:
        pass


def scan_all(buf, **kwargs):
    """FrameScanner must raise nothing; every frame it yields then goes through the decoders."""
    scanner = FrameScanner(buf, "fuzz.log", **kwargs)
    frames = list(scanner)
    start = kwargs.get("start", 0)
    end = len(buf) if kwargs.get("end") is None else min(kwargs["end"], len(buf))
    prev_end = start
    for f in frames:
        assert prev_end <= f.position and f.end <= end and f.size >= 12 + 14
        prev_end = f.end
    assert scanner.valid_bytes == sum(f.size for f in frames)
    for finding in scanner.findings:
        assert finding.path == "fuzz.log"
        if finding.position is not None:
            assert start <= finding.position <= end
        finding.one_line()
        finding.as_json()
    if scanner.first_invalid_position is not None:
        assert start <= scanner.first_invalid_position <= end
    for f in frames:
        only_forensics_errors(decode_frame, buf, f.position, f.magic)
    return scanner, frames


# -- strategies --------------------------------------------------------------------------------


@st.composite
def mutated(draw, seeds=SEEDS):
    """A valid batch (or several back to back) with a few byte-level mutations."""
    parts = draw(st.lists(st.sampled_from(seeds), min_size=1, max_size=3))
    return mutate(draw, bytearray(b"".join(parts)), draw(st.integers(1, 4)), splice_from=seeds)


@st.composite
def mutated_fields(draw, seeds=SEEDS):
    """A valid seed with one header/record field overwritten and the CRC recomputed, so the damage
    passes the checksum and reaches the field decoders."""
    buf = bytearray(draw(st.sampled_from(seeds)))
    i = draw(st.integers(0, len(buf) - 1))
    width = draw(st.sampled_from([1, 2, 4, 8]))
    buf[i: i + width] = draw(st.binary(min_size=width, max_size=width))
    if len(buf) >= 61 and buf[16] == 2:
        struct.pack_into(">I", buf, 17, kp_crc32c(bytes(buf[21:])))
    elif len(buf) >= 26 and buf[16] in (0, 1):
        size = struct.unpack_from(">i", buf, 8)[0]
        if 14 <= size <= len(buf) - 12:
            struct.pack_into(">I", buf, 12, zlib.crc32(bytes(buf[16: 12 + size])))
    return bytes(buf)


def _varint(n: int) -> bytes:
    return primitives.encode_varint(n)


@st.composite
def raw_record(draw):
    """Record bytes that are *mostly* well formed: random lengths, counts and deltas."""
    small = st.integers(-3, 12)
    body = bytearray([draw(st.integers(0, 255))])
    body += primitives.encode_varlong(draw(st.integers(-2**63, 2**63 - 1)))
    body += _varint(draw(st.integers(-2**31, 2**31 - 1)))
    for _ in range(2):  # key, value
        n = draw(small)
        body += _varint(n) + draw(st.binary(min_size=max(n, 0), max_size=max(n, 0)))
    hc = draw(st.integers(-2, 3))
    body += _varint(hc)
    for _ in range(max(hc, 0)):
        n = draw(small)
        body += _varint(n) + draw(st.binary(min_size=max(n, 0), max_size=max(n, 0)))
        n = draw(small)
        body += _varint(n) + draw(st.binary(min_size=max(n, 0), max_size=max(n, 0)))
    body += draw(st.binary(max_size=2))
    length = len(body) + draw(st.sampled_from([0, 0, 0, -1, 1, -len(body), -len(body) + 1]))
    return _varint(length) + bytes(body)


def _compress(codec: int, data: bytes) -> bytes:
    if codec == 1:
        return kafka.codec.gzip_encode(data)
    if codec == 2:
        return kafka.codec.snappy_encode(data)
    if codec == 3:
        return kafka.codec.lz4_encode(data)
    if codec == 4:
        return kafka.codec.zstd_encode(data)
    return data


@st.composite
def structured_v2(draw):
    """A v2 batch with random header fields, random-ish records (compressed with a real codec or
    not) and a *valid* CRC, so decoding goes past the checksum into the records."""
    recs = draw(st.lists(st.one_of(raw_record(), st.lists(st.sampled_from(b"\x00\x01\x02\x7f\x80\xff"),
                                                             max_size=3).map(bytes)), max_size=4))
    records = b"".join(recs)
    if draw(st.booleans()):  # cut anywhere: records that end inside a field
        records = records[: draw(st.integers(0, len(records)))]
    codec = draw(st.integers(0, 7))
    payload = _compress(codec, records) if codec <= 4 else draw(st.binary(max_size=40))
    attrs = codec | draw(st.sampled_from([0, 0x08, 0x10, 0x20, 0x30, 0x40, 0x78, 0xFF00]))
    count = draw(st.one_of(st.integers(len(recs) - 1, len(recs) + 1), st.integers(-2, 6),
                           st.integers(-2**31, 2**31 - 1)))
    fields = struct.pack(">Hiqqqhii", attrs, draw(st.integers(-2**31, 2**31 - 1)),
                         draw(st.integers(-2**63, 2**63 - 1)), draw(st.integers(-2**63, 2**63 - 1)),
                         draw(st.integers(-2**63, 2**63 - 1)), draw(st.integers(-2**15, 2**15 - 1)),
                         draw(st.integers(-2**31, 2**31 - 1)), count)
    body = fields + payload
    crc = kp_crc32c(body)
    batch = struct.pack(">qiibI", draw(st.integers(-2**63, 2**63 - 1)), len(body) + 9,
                        draw(st.integers(-2**31, 2**31 - 1)), 2, crc) + body
    return batch + draw(st.sampled_from([b"", b"", b"\x00" * 20, b"junk"]))


@st.composite
def structured_legacy(draw):
    """A legacy entry with random attributes and inner data, valid CRC-32."""
    magic = draw(st.integers(0, 1))
    codec = draw(st.integers(0, 7))
    if codec:
        inner = b"".join(draw(st.lists(st.sampled_from(
            [legacy_seed(m, 0, 0) for m in (0, 1)] + [draw(st.binary(max_size=40))]), max_size=3)))
        if draw(st.booleans()):
            inner += legacy_seed(magic, draw(st.integers(1, 3)), draw(st.integers(-5, 5)))
        value = _compress(codec, inner) if codec <= 3 else draw(st.binary(max_size=40))
    else:
        value = draw(st.one_of(st.none(), st.binary(max_size=40)))
    key = draw(st.one_of(st.none(), st.binary(max_size=8)))
    body = struct.pack(">bB", magic, codec | draw(st.sampled_from([0, 0x08, 0xF0])))
    if magic == 1:
        body += struct.pack(">q", draw(st.integers(-2**63, 2**63 - 1)))
    for part in (key, value):
        body += struct.pack(">i", -1) if part is None else struct.pack(">i", len(part)) + part
    entry = struct.pack(">qiI", draw(st.integers(-2**63, 2**63 - 1)), len(body) + 4, zlib.crc32(body)) + body
    return entry + draw(st.sampled_from([b"", b"\x00" * 17, b"x"]))


ANY_INPUT = st.one_of(st.binary(max_size=400), mutated(), mutated_fields(), structured_v2(), structured_legacy())


# -- properties --------------------------------------------------------------------------------


@FUZZ
@given(buf=st.binary(max_size=200), pos=st.integers(-70, 260))
def test_decode_header_raises_only_forensics_errors(buf, pos):
    try:
        h = decode_header(buf, pos)
    except ForensicsError:
        return
    assert 0 <= pos <= len(buf) - 61
    assert h.size == h.batch_length + 12
    h.last_offset, h.last_sequence, h.codec, h.timestamp_type, h.delete_horizon_ms, h.has_producer_id  # noqa: B018


@FUZZ
@given(buf=ANY_INPUT, prefix=st.binary(max_size=3))
def test_iter_records_consumed_fully_raises_only_forensics_errors(buf, prefix):
    data = prefix + buf
    pos = len(prefix)
    try:
        h = decode_header(data, pos)
        crc_ok(data, pos, h)
        records = list(iter_records(data, pos, h))
    except ForensicsError:
        return
    assert len(records) == h.records_count
    for r in records:
        assert r.key_size >= -1 and r.value_size >= -1
        for header in r.headers:
            assert isinstance(header.key, str)


@FUZZ
@given(buf=ANY_INPUT, pos=st.integers(0, 8))
def test_legacy_decode_entry_and_iter_deep_raise_only_forensics_errors(buf, pos):
    try:
        entry = legacy.decode_entry(buf, pos)
    except ForensicsError:
        return
    assert entry.total_size <= len(buf) - pos
    try:
        inner = list(legacy.iter_deep(entry))
    except ForensicsError:
        return
    assert inner
    for r in inner:
        assert r.magic in (0, 1) and r.codec == 0
        r.timestamp_type, r.key_size, r.value_size  # noqa: B018


@FUZZ
@given(buf=ANY_INPUT, end=st.one_of(st.none(), st.integers(0, 500)))
def test_legacy_decode_entry_with_end_bound(buf, end):
    if end is not None:
        end = min(end, len(buf))
    only_forensics_errors(lambda: list(legacy.iter_deep(legacy.decode_entry(buf, 0, end))))


@FUZZ
@given(key=st.one_of(st.none(), st.binary(max_size=10)), value=st.one_of(st.none(), st.binary(max_size=12)))
def test_control_decoders_raise_only_forensics_errors(key, value):
    try:
        ckey = control.decode_control_key(key)
    except ForensicsError:
        return
    assert ckey.version >= 0
    ckey.type, ckey.type_name  # noqa: B018
    try:
        marker = control.decode_end_txn_marker(ckey, value)
    except ForensicsError:
        return
    assert marker.control_type in (control.ControlRecordType.ABORT, control.ControlRecordType.COMMIT)
    assert marker.version >= 0


@FUZZ
@given(buf=st.binary(max_size=24), pos=st.integers(0, 26), end=st.integers(0, 26))
def test_primitive_readers_raise_only_forensics_errors(buf, pos, end):
    end = min(end, len(buf))
    for fn in (primitives.read_varint, primitives.read_varlong, primitives.read_int8, primitives.read_int16,
               primitives.read_int32, primitives.read_uint32, primitives.read_int64, primitives.read_string16,
               primitives.read_compact_string, primitives.read_compact_array_len, primitives.read_tagged_fields):
        try:
            _, new_pos = fn(buf, pos, end)
        except ForensicsError:
            continue
        assert pos < new_pos <= end


@FUZZ
@given(buf=st.binary(max_size=600))
def test_frame_scanner_never_raises_on_arbitrary_bytes(buf):
    scan_all(buf)


@FUZZ
@given(buf=ANY_INPUT, verify_crc=st.booleans(), base_offset=st.one_of(st.none(), st.integers(-5, 2**63 - 1)),
       end=st.one_of(st.none(), st.integers(0, 700)), start=st.integers(0, 20))
def test_frame_scanner_never_raises_on_damaged_batches(buf, verify_crc, base_offset, end, start):
    scan_all(buf, verify_crc=verify_crc, base_offset=base_offset, end=end, start=start)


SEED_FRAMES = {seed: [(f.position, f.size, f.magic) for f in FrameScanner(seed, "seed.log")] for seed in SEEDS}


@FUZZ
@given(buf=mutated())
def test_frame_scanner_recovers_batches_after_damage(buf):
    """A batch whose bytes survived the damage intact is framed again after the resync, unless a
    frame yielded before it (a damaged length that still frames) covers it. The resync searches
    every format, so this holds for legacy batches after v2 ones too."""
    scanner, frames = scan_all(buf)
    spans = {(f.position, f.size) for f in frames}
    for seed in SEEDS:
        i = buf.find(seed)
        while i >= 0:
            for rel, size, magic in SEED_FRAMES[seed]:
                p = i + rel
                if (p, size) in spans:
                    continue
                assert any(f.position < p + size and p < f.end for f in frames), (
                    f"intact magic-{magic} batch at byte {p} ({size} bytes) was not framed: "
                    f"{frames} {[x.one_line() for x in scanner.findings]}")
            i = buf.find(seed, i + 1)


@FUZZ
@given(buf=st.one_of(structured_v2(), mutated_fields()))
def test_structured_batches_reach_the_record_decoder(buf):
    scan_all(buf)
    only_forensics_errors(decode_frame, buf, 0, buf[16] if len(buf) > 16 else 2)


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"magic{s[16]}-attr{s[22] if s[16] == 2 else s[17]}")
def test_every_truncation_of_a_seed(seed):
    """Each prefix of a valid batch: the scanner reports a tail, the decoders raise cleanly."""
    boundaries = [0] + [rel + size for rel, size, _ in SEED_FRAMES[seed]]
    for n in range(len(seed)):
        cut = seed[:n]
        scanner, frames = scan_all(cut)
        whole = [(rel, size) for rel, size, _ in SEED_FRAMES[seed] if rel + size <= n]
        assert [(f.position, f.size) for f in frames] == whole
        if n in boundaries:
            assert scanner.findings == [] and scanner.first_invalid_position is None
        else:
            assert len(scanner.findings) == 1
            assert scanner.first_invalid_position == max(b for b in boundaries if b < n)
        only_forensics_errors(decode_frame, cut, 0, seed[16])


def _batch(attributes: int, count: int, payload: bytes) -> bytes:
    body = struct.pack(">hiqqqhii", attributes, 0, 0, 0, -1, -1, -1, count) + payload
    return struct.pack(">qiibI", 0, len(body) + 9, 0, 2, kp_crc32c(body)) + body


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4], ids=["none", "gzip", "snappy", "lz4", "zstd"])
@pytest.mark.parametrize("records", [b"\x00", b"\x01", b"\x7f", b"\x02\x00", b"\x00\x00"])
def test_record_with_empty_or_negative_body_is_corrupt_not_a_crash(codec, records):
    """Regression (found by this fuzz test): a record length varint of 0 (or negative) as the last
    byte of the records made ``_record`` index one byte past the data (IndexError)."""
    buf = _batch(codec, 1, _compress(codec, records))
    h = decode_header(buf)
    with pytest.raises(CorruptRecordError):
        list(iter_records(buf, 0, h))
    scan_all(buf)
