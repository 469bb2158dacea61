"""The C accelerator (csrc/, forensics._speedups) against the pure-Python reference.

The accelerator only takes the healthy common case and hands the rest back, so with or without it
every frame, header, record, finding and error message must be the same. These tests run both
paths on every fixture segment, on the real Kafka 4.1 disks when ../shared is present, and on
randomly damaged batches.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import forensics.codec.batch as batch_mod
import forensics.codec.legacy as legacy_mod
from forensics.codec.batch import decode_header, iter_records
from forensics.codec.legacy import decode_entry, iter_deep
from forensics.errors import ForensicsError
from forensics.io.frames import FrameScanner
from forensics.speedups import native
from tests.segments import needs_native, real_segments, segment_params
from tests.tiers import examples

REPO = Path(__file__).resolve().parents[2]
_segments = real_segments


from tests.fuzz.strategies import pure_python as _pure  # noqa: E402  (the accelerator switched off here)


def _scan(buf: bytes, verify: bool, headers: bool, base: int = None) -> tuple[list, list, int, object]:
    scanner = FrameScanner(buf, "seg.log", verify_crc=verify, headers=headers, base_offset=base)
    frames = list(scanner)
    return frames, scanner.findings, scanner.valid_bytes, scanner.first_invalid_position


def _decode_all(buf: bytes) -> list:
    """Every record (or the error) of every frame, v2 and legacy (wrappers deep), as plain tuples."""
    out = []
    for frame in FrameScanner(buf, "seg.log", verify_crc=False):
        got = []
        try:
            if frame.magic == 2:
                records = iter_records(buf, frame.position, decode_header(buf, frame.position))
            else:
                entry = decode_entry(buf, frame.position)
                got.append((type(entry).__name__,) + tuple(entry))
                records = iter_deep(entry)
            for rec in records:
                got.append((type(rec).__name__,) + tuple(rec))
        except ForensicsError as exc:
            got.append(("error", type(exc).__name__, str(exc), exc.position, exc.offset))
        projected = []  # the bulk API: the same records projected, the same error
        try:
            if frame.magic == 2:
                rows = batch_mod.record_tuples(buf, frame.position, decode_header(buf, frame.position))
            else:
                rows = legacy_mod.deep_tuples(buf, frame.position)
            for row in rows:
                assert type(row) is tuple and len(row) == 5
                projected.append(row)
        except ForensicsError as exc:
            projected.append(("error", type(exc).__name__, str(exc), exc.position, exc.offset))
        out.append((got, projected))
    return out


@needs_native
def test_crc32c_matches_the_package_on_every_length() -> None:
    from crc32c import crc32c as reference

    rnd = random.Random(7)
    # around the three-stream blocks (3 x 256 and 3 x 8192 bytes) and their sums too
    edges = [k * 768 + d for k in (1, 2, 5) for d in (-1, 0, 1, 7, 8)] + [24576 + d for d in (-1, 0, 1, 768, 769)]
    for n in list(range(0, 70)) + [1000, 4095, 65537, 2 * 24576 + 768 * 3 + 13] + edges:
        data = rnd.randbytes(n)
        assert native.crc32c(data) == reference(data), n
        assert native.crc32c(memoryview(data)[1:]) == reference(data[1:]), n  # unaligned
    assert native.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value


@needs_native
def test_crc32_matches_zlib_on_every_length() -> None:
    import zlib

    rnd = random.Random(8)
    for n in list(range(0, 70)) + [1000, 65537]:
        data = bytes(rnd.randrange(256) for _ in range(n))
        assert native.crc32(data) == zlib.crc32(data), n
    assert native.crc32(b"123456789") == 0xCBF43926  # the CRC-32 check value


def _error(exc: ForensicsError) -> tuple:
    return ("error", type(exc).__name__, str(exc), exc.position, exc.offset)


def _bulk(buf: bytes, verify: bool) -> tuple:
    """FrameScanner.record_tuples() of the buffer (up to its first error, then the error) with the
    scanner's findings; the same records from the frames one by one (batch.record_tuples /
    legacy.deep_tuples of each) up to the same point must be equal to them."""
    scanner = FrameScanner(buf, "seg.log", verify_crc=verify)
    got = []
    try:
        got.extend(scanner.record_tuples())
    except ForensicsError as exc:
        got.append(_error(exc))
    one_by_one = []
    for frame in FrameScanner(buf, "seg.log", verify_crc=verify):
        try:
            if frame.magic == 2:
                one_by_one.extend(batch_mod.record_tuples(buf, frame.position, decode_header(buf, frame.position)))
            else:
                one_by_one.extend(legacy_mod.deep_tuples(buf, frame.position))
        except ForensicsError as exc:
            one_by_one.append(_error(exc))
            break
    assert got == one_by_one
    return got, scanner.findings, scanner.valid_bytes, scanner.first_invalid_position


@needs_native
@pytest.mark.parametrize("path", segment_params(_segments()))
def test_every_segment_frames_and_decodes_the_same_both_ways(path: Path) -> None:
    buf = path.read_bytes()
    base = int(path.stem) if path.stem.isdigit() else None
    for verify in (True, False):
        fast = _scan(buf, verify, headers=True, base=base)
        with _pure():
            slow = _scan(buf, verify, headers=True, base=base)
        assert fast == slow
    assert all(f.header == decode_header(buf, f.position) for f in fast[0] if f.magic == 2)
    fast_records = _decode_all(buf), _bulk(buf, True), _bulk(buf, False)
    with _pure():
        assert fast_records == (_decode_all(buf), _bulk(buf, True), _bulk(buf, False))


@needs_native
@pytest.mark.parametrize("budget", [1, 5])
@pytest.mark.parametrize("path", [p for p in _segments() if p.stat().st_size < 4 << 20][:40],
                         ids=lambda p: str(p.relative_to(p.parents[2])))
def test_record_tuples_resume_between_runs_of_any_size(path: Path, budget: int, monkeypatch) -> None:
    """The accelerator hands out a segment's record tuples in runs of whole entries of about
    frames._NATIVE_RECORDS records; with runs of one entry (budget 1) or a few, every run ends and
    the next one starts somewhere: the records, findings and counters are those of the pure path."""
    import forensics.io.frames as frames_mod

    monkeypatch.setattr(frames_mod, "_NATIVE_RECORDS", budget)
    buf = path.read_bytes()
    fast = _bulk(buf, True), _bulk(buf, False)
    with _pure():
        assert fast == (_bulk(buf, True), _bulk(buf, False))


def _batch_segment(seed: int) -> bytes:
    from fixtures.generator import RecordSpec, encode_v2_batch

    rnd = random.Random(seed)
    out, offset = bytearray(), 0
    for _ in range(4):
        recs = [RecordSpec(key=None if rnd.random() < 0.2 else b"k%d" % i,
                           value=None if rnd.random() < 0.1 else bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 30))),
                           headers=tuple((f"h{j}", b"v" if j % 2 else None) for j in range(rnd.randint(0, 2))),
                           timestamp_delta=rnd.randint(-5, 1 << 40))
                for i in range(rnd.randint(1, 6))]
        out += encode_v2_batch(offset, recs, producer_id=5, producer_epoch=1, base_sequence=rnd.choice([-1, 0, 2**31 - 3]),
                               codec=rnd.choice([0, 0, 1, 2, 3, 4]), timestamp_type=rnd.choice([0, 1]))
        offset += len(recs)
    return bytes(out)


@needs_native
@settings(max_examples=examples(300), deadline=None)
@given(seed=st.integers(0, 2**16), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=4),
       cut=st.integers(0, 10**6))
def test_damaged_batches_give_the_same_frames_records_and_errors(seed: int, flips, cut: int) -> None:
    data = bytearray(_batch_segment(seed))
    for where, value in flips:
        data[where % len(data)] = value
    if cut % 3 == 0:
        del data[cut % len(data):]
    buf = bytes(data)
    fast = (_scan(buf, True, True), _scan(buf, False, False), _decode_all(buf), _bulk(buf, True), _bulk(buf, False))
    with _pure():
        slow = (_scan(buf, True, True), _scan(buf, False, False), _decode_all(buf), _bulk(buf, True), _bulk(buf, False))
    assert fast == slow


@needs_native
def test_record_fields_that_overflow_64_bits_fall_back_to_python() -> None:
    """Python's ints do not overflow; the accelerator hands such a record back, so the timestamp
    is the exact sum either way."""
    from fixtures.generator import RecordSpec, encode_v2_batch

    big = 2**63 - 10
    raw = encode_v2_batch(0, [RecordSpec(value=b"x", timestamp_delta=100)], base_timestamp=big, max_timestamp=big)
    h = decode_header(raw, 0)
    assert native.records(raw, 61, len(raw), h) is None
    (rec,) = list(iter_records(raw, 0, h))
    assert rec.timestamp == big + 100


@needs_native
def test_scan_stops_where_python_must_look() -> None:
    """A checksum mismatch in the middle: the accelerator frames the batches before it and stops
    at it; the Python scanner reports it (or the resync) and the accelerator goes on after."""
    buf = bytearray(_batch_segment(3))
    first = FrameScanner(bytes(buf), "s", verify_crc=True)
    frames = list(first)
    assert len(frames) == 4 and not first.findings
    second = frames[1]
    buf[second.position + 70] ^= 0xFF  # a record byte: the CRC fails, the framing holds
    got, pos, nxt, valid = native.scan(bytes(buf), 0, len(buf), True, None, None, False, 100)
    assert [f.position for f in got] == [frames[0].position] and pos == second.position
    assert nxt == frames[0].last_offset + 1 and valid == frames[0].size
    scanner = FrameScanner(bytes(buf), "s", verify_crc=True)
    assert [f.crc_ok for f in scanner] == [True, False, True, True]
    assert [f.kind.name for f in scanner.findings] == ["CRC_MISMATCH"]


@needs_native
def test_records_decodes_its_range_and_refuses_impossible_counts() -> None:
    from fixtures.generator import RecordSpec, encode_v2_batch

    raw = encode_v2_batch(7, [RecordSpec(key=b"a", value=b"b", headers=(("h", None),)), RecordSpec(value=None)],
                          base_sequence=2**31 - 1)
    h = decode_header(raw, 0)
    recs = native.records(raw, 61, h.size, h)
    assert [tuple(r) for r in recs] == [(7, h.base_timestamp, b"a", b"b", (("h", None),), 2**31 - 1, 0, 61),
                                        (8, h.base_timestamp, None, None, (), 0, 0, 73)]
    assert type(recs[0]) is batch_mod.Record and type(recs[0].headers[0]) is batch_mod.Header
    # a count no range can hold is refused without allocating it; so is a negative one
    assert native.records(raw, 61, h.size, h._replace(records_count=2**40)) is None
    assert native.records(raw, 61, h.size, h._replace(records_count=-1)) is None
    # header fields beyond int64 (no decoded header has them) go to the Python decoder too
    assert native.records(raw, 61, h.size, h._replace(base_offset=2**63)) is None


_ATTRIBUTE_PROPERTIES = (("codec", 0x07, False), ("is_log_append_time", 0x08, True), ("is_transactional", 0x10, True),
                         ("is_control", 0x20, True))  # Kafka's DefaultRecordBatch attribute bits, written here again


def test_the_attribute_properties_are_kafkas_bits() -> None:
    from forensics.codec.batch import ATTRIBUTE_PROPERTIES

    assert ATTRIBUTE_PROPERTIES == _ATTRIBUTE_PROPERTIES


@needs_native
def test_header_attribute_properties_are_the_bits_of_attributes() -> None:
    """BatchHeader's attribute properties are C descriptors with the accelerator (batch.ATTRIBUTE_PROPERTIES):
    the same values and types as the Python properties on every int16 attributes value, beyond a C
    long too, read-only, and the descriptor itself when read on the class."""
    from forensics.codec.batch import BatchHeader

    def header(attributes):
        return BatchHeader(0, 49, 0, 2, 0, attributes, 0, 0, 0, -1, -1, -1, 0)

    for name, mask, flag in _ATTRIBUTE_PROPERTIES:
        assert isinstance(getattr(BatchHeader, name), type(native.attribute_bits(5, mask, flag)))
        for attributes in list(range(-(1 << 15), 1 << 15)) + [(1 << 70) | 0x3F, -(1 << 70)]:
            got = getattr(header(attributes), name)
            want = bool(attributes & mask) if flag else attributes & mask
            assert got == want and type(got) is type(want), (name, attributes)
        with pytest.raises(AttributeError):
            setattr(header(0), name, 1)
    assert BatchHeader._fields[5] == "attributes"


def test_header_attribute_properties_without_the_accelerator() -> None:
    """BatchHeader's pure-Python attribute properties (the ones in use without the accelerator)."""
    from forensics.codec import batch as batch_py

    for name, mask, flag in _ATTRIBUTE_PROPERTIES:
        prop = batch_py.PURE_ATTRIBUTE_PROPERTIES[name]
        assert isinstance(prop, property)
        for attributes in (0, 0x3F, 0x7F, -1, -(1 << 15), mask, ~mask):
            h = batch_py.BatchHeader(0, 49, 0, 2, 0, attributes, 0, 0, 0, -1, -1, -1, 0)
            got, want = prop.fget(h), bool(attributes & mask) if flag else attributes & mask
            assert got == want and type(got) is type(want)


def test_the_accelerator_is_built_wherever_a_compiler_is() -> None:
    """The extension is optional at install time; on a machine with a C compiler its absence is a
    broken build, not a reason to skip the tests above."""
    import os
    import shutil

    if os.environ.get("KAFKA_FORENSICS_PURE") or not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("pure Python asked for, or no C compiler")
    from forensics import speedups

    assert speedups.native is not None and speedups.describe().startswith("C accelerator")


def _legacy_segment(seed: int) -> bytes:
    """Legacy entries of both magics: plain messages and compressed wrappers (gzip, snappy, lz4),
    CreateTime and LogAppendTime, null and empty keys and values."""
    from fixtures.generator import RecordSpec, encode_legacy_message

    rnd = random.Random(seed)
    out, offset = bytearray(), rnd.choice([0, 5, 2**40])
    for _ in range(5):
        magic = rnd.choice([0, 1])
        value = lambda: rnd.choice([None, b"", bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 20)))])  # noqa: E731
        if rnd.random() < 0.4:
            out += encode_legacy_message(offset, rnd.choice([None, b"k"]), value(), magic=magic,
                                         timestamp=rnd.randint(-1, 1 << 41))
            offset += 1
            continue
        inner = [RecordSpec(key=rnd.choice([None, b"k%d" % i]), value=value(), timestamp_delta=rnd.randint(0, 9))
                 for i in range(rnd.randint(1, 5))]
        offset += len(inner)
        out += encode_legacy_message(offset - 1, magic=magic, codec=rnd.choice([1, 2, 3]), inner=inner,
                                     log_append_time=rnd.random() < 0.3, timestamp=rnd.randint(0, 1 << 41))
    return bytes(out)


@needs_native
@settings(max_examples=examples(300), deadline=None)
@given(seed=st.integers(0, 2**16), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=4),
       cut=st.integers(0, 10**6), recrc=st.booleans())
def test_damaged_legacy_entries_give_the_same_records_and_errors(seed: int, flips, cut: int, recrc: bool) -> None:
    """Damage anywhere in legacy entries, also behind a recomputed CRC-32 (so that it reaches the
    inner messages of wrappers): the accelerated and the pure decoders agree on every record and
    every error."""
    import zlib

    data = bytearray(_legacy_segment(seed))
    for where, value in flips:
        data[where % len(data)] = value
    if cut % 3 == 0:
        del data[cut % len(data):]
    if recrc:  # outer checksums made valid again, entry by entry, where the framing still holds
        pos = 0
        while pos + 26 <= len(data):
            end = pos + 12 + int.from_bytes(data[pos + 8:pos + 12], "big", signed=True)
            if end > len(data) or end < pos + 26:
                break
            data[pos + 12:pos + 16] = zlib.crc32(bytes(data[pos + 16:end])).to_bytes(4, "big")
            pos = end
    buf = bytes(data)
    fast = (_scan(buf, True, True), _decode_all(buf), _bulk(buf, True), _bulk(buf, False))
    with _pure():
        slow = (_scan(buf, True, True), _decode_all(buf), _bulk(buf, True), _bulk(buf, False))
    assert fast == slow


@needs_native
def test_legacy_wrappers_decode_in_c_with_kafkas_offset_and_timestamp_rules() -> None:
    """A v1 LogAppendTime wrapper: inner offsets relative to the wrapper's last offset, every inner
    timestamp the wrapper's; a v0 wrapper: absolute inner offsets, no timestamps."""
    from fixtures.generator import RecordSpec, encode_legacy_message

    from forensics.codec.compression import decompress

    inner = [RecordSpec(key=b"a", value=b"1"), RecordSpec(value=None, timestamp_delta=5)]
    v1 = encode_legacy_message(41, magic=1, codec=1, inner=inner, log_append_time=True, timestamp=777)
    wrapper = decode_entry(v1, 0)
    got = native.legacy_inner(decompress(1, wrapper.value, magic=1), wrapper)
    assert [(r.offset, r.timestamp, r.key, r.value, r.is_valid) for r in got] == [(40, 777, b"a", b"1", True),
                                                                                   (41, 777, None, None, True)]
    v0 = decode_entry(encode_legacy_message(9, magic=0, codec=2, inner=inner), 0)
    assert [(r.offset, r.timestamp) for r in iter_deep(v0)] == [(8, -1), (9, -1)]
    assert type(got[0]).__name__ == "LegacyRecord"
    with _pure():
        assert iter_deep(decode_entry(v1, 0)) == got
    # a wrapper offset below its last relative inner offset is refused (the Python decoder says why)
    assert native.legacy_inner(decompress(1, wrapper.value, magic=1), wrapper._replace(offset=0)) is not None
    assert native.legacy_inner(decompress(1, wrapper.value, magic=1), wrapper._replace(offset=-3)) is None


def _decompress_outcome(codec: int, data: bytes, magic: int, limit: int):
    from forensics.codec.compression import decompress

    try:
        return ("ok", decompress(codec, data, magic=magic, max_output=limit))
    except ForensicsError as exc:
        return (type(exc).__name__, str(exc))


@needs_native
def test_xxh32_matches_the_pure_python_reference() -> None:
    from forensics.codec.compression import xxh32

    rnd = random.Random(9)
    for n in list(range(0, 70)) + [1000, 4097]:
        data = bytes(rnd.randrange(256) for _ in range(n))
        assert native.xxh32(data) == xxh32(data), n


def _compressed_cases() -> list:
    from tests.codec.test_compression import ENCODERS, SMALL, SMALL_CASES

    big = random.Random(3).randbytes(70_000) + b"x" * 200_000  # several xerial chunks and LZ4 blocks
    return SMALL_CASES + [(name, codec, magic, encode(big)) for name, codec, magic, encode in ENCODERS] + [
        (name + "-small", codec, magic, encode(SMALL)) for name, codec, magic, encode in ENCODERS]


COMPRESSED = _compressed_cases()


@needs_native
@settings(max_examples=examples(400), deadline=None)
@given(case=st.sampled_from(COMPRESSED), data=st.data())
def test_damaged_payloads_decompress_the_same_both_ways(case, data) -> None:
    """snappy and LZ4 framing (and the zstd frame walk) in C: every payload, truncated or with
    bytes replaced, gives the same plaintext or the same error as the pure-Python parsers; so does
    every limit below and above the plaintext."""
    _, codec, magic, good = case
    buf = bytearray(good)
    for _ in range(data.draw(st.integers(0, 3))):
        buf[data.draw(st.integers(0, len(buf) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.one_of(st.none(), st.integers(0, len(buf))))
    if cut is not None:
        del buf[cut:]
    limit = data.draw(st.sampled_from([256 * 1024 * 1024, 300_000, 270_000, 1000, 100, 0]))
    fast = _decompress_outcome(codec, bytes(buf), magic, limit)
    with _pure():
        assert _decompress_outcome(codec, bytes(buf), magic, limit) == fast


@needs_native
def test_every_truncation_of_every_payload_is_the_same_both_ways() -> None:
    for _, codec, magic, good in COMPRESSED:
        step = max(1, len(good) // 300)
        for cut in range(0, len(good) + 1, step):
            fast = _decompress_outcome(codec, good[:cut], magic, 1 << 28)
            with _pure():
                assert _decompress_outcome(codec, good[:cut], magic, 1 << 28) == fast, (codec, cut)


@needs_native
@settings(max_examples=examples(200), deadline=None)
@given(seed=st.integers(0, 2**16), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=3))
def test_legacy_deep_tuples_are_the_projected_deep_records(seed: int, flips) -> None:
    """deep_tuples (entry, decompression and inner messages in C) against decode_entry + iter_deep
    in pure Python, projected: the same tuples or the same error, on intact and damaged entries."""
    import zlib

    data = bytearray(_legacy_segment(seed))
    for where, value in flips:
        data[where % len(data)] = value
    buf = bytes(data)
    pos = 0
    while pos + 26 <= len(buf):
        end = pos + 12 + int.from_bytes(buf[pos + 8:pos + 12], "big", signed=True)
        if end > len(buf) or end < pos + 26:
            break
        fixed = buf[:pos + 12] + zlib.crc32(buf[pos + 16:end]).to_bytes(4, "big") + buf[pos + 16:]
        for b in (buf, fixed):
            def both():
                try:
                    return ("ok", list(legacy_mod.deep_tuples(b, pos)))
                except ForensicsError as exc:
                    return (type(exc).__name__, str(exc))
            fast = both()
            with _pure():
                slow = both()
                try:
                    ref = [(r.offset, r.timestamp, r.key, r.value, ()) for r in iter_deep(decode_entry(b, pos))]
                    assert slow == ("ok", ref)
                except ForensicsError:
                    pass
            assert fast == slow
        pos = end


# -- the dump's text: record lines written by the accelerator from a RecordBlock ------------------

DUMP_OPTIONS = [dict(deep_iteration=True), dict(print_data_log=True), dict(print_data_log=True, skip_record_metadata=True),
                dict(deep_iteration=True, skip_record_metadata=True)]


def _dump_text(path: Path) -> list:
    """kafka-dump-log lines and findings of the file for every option set, with text as written."""
    import io

    from forensics.render.dump_text import render_dump_text
    from forensics.report.dump import DumpOptions, dump_file

    got = []
    for options in DUMP_OPTIONS:
        out, err = io.StringIO(), io.StringIO()
        opts = DumpOptions(**options)
        render_dump_text(dump_file(str(path), opts), out, err, opts.skip_record_metadata)
        got.append((out.getvalue(), err.getvalue()))
    return got


@needs_native
@pytest.mark.parametrize("path", segment_params([p for p in _segments() if p.stem.isdigit()]))  # dump: segment names only
def test_every_segment_dumps_the_same_text_both_ways(path: Path) -> None:
    fast = _dump_text(path)
    with _pure():
        assert _dump_text(path) == fast


def _text_batches(seed: int) -> bytes:
    """v2 batches whose keys, values and header keys exercise the text rules: invalid and valid
    non-ASCII UTF-8, nulls, empties, newlines, LogAppendTime, sequences that wrap, every codec."""
    from fixtures.generator import RecordSpec, encode_v2_batch

    rnd = random.Random(seed)
    pieces = [b"", b"plain", b"\xff\xfe", "h\u00e9llo \u20ac \U0001f600".encode(), b"a\nb\r\x00c", b"\xed\xa0\x80x",
              b"\xc0\xaf", b"\xe2\x82", b"ok\xf4\x90\x80\x80", bytes(range(256))]
    out, offset = bytearray(), 0
    for _ in range(5):
        recs = [RecordSpec(key=rnd.choice([None] + pieces), value=rnd.choice([None] + pieces),
                           headers=tuple((rnd.choice(["h", "", "\u00fc", "k,v"]), rnd.choice([None, b"v"]))
                                         for _ in range(rnd.randint(0, 3))),
                           timestamp_delta=rnd.randint(-5, 1 << 40))
                for _ in range(rnd.randint(0, 6))]
        out += encode_v2_batch(offset, recs, producer_id=rnd.choice([-1, 7]), producer_epoch=1,
                               base_sequence=rnd.choice([-1, 0, 2**31 - 2]), codec=rnd.choice([0, 0, 1, 2, 3, 4]),
                               timestamp_type=rnd.choice([0, 1]), delete_horizon=rnd.choice([None, 123]))
        offset += max(1, len(recs))
    return bytes(out)


@needs_native
@settings(max_examples=examples(150), deadline=None)
@given(seed=st.integers(0, 2**16), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=2),
       recrc=st.booleans())
def test_dump_text_of_awkward_records_is_the_same_both_ways(tmp_path_factory, seed: int, flips, recrc: bool) -> None:
    from tests.fuzz.strategies import recrc as fix_crc

    data = bytearray(_text_batches(seed))
    for where, value in flips:
        data[where % len(data)] = value
    if recrc and data[16:17] == b"\x02":
        end = 12 + int.from_bytes(data[8:12], "big", signed=True)
        if 61 <= end <= len(data):
            first = bytearray(data[:end])
            fix_crc(first)
            data[:end] = first
    path = tmp_path_factory.mktemp("dump") / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    fast = _dump_text(path)
    with _pure():
        assert _dump_text(path) == fast


@needs_native
@settings(max_examples=examples(100), deadline=None)
@given(seed=st.integers(0, 2**16), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=2))
def test_dump_text_of_legacy_entries_is_the_same_both_ways(tmp_path_factory, seed: int, flips) -> None:
    """Legacy entries and wrappers (the accelerator writes their lines from the LegacyRecord
    tuples), intact and damaged: the same text and findings as the pure-Python writer."""
    data = bytearray(_legacy_segment(seed))
    for where, value in flips:
        data[where % len(data)] = value
    path = tmp_path_factory.mktemp("dump") / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    fast = _dump_text(path)
    with _pure():
        assert _dump_text(path) == fast
