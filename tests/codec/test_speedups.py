"""The C accelerator (forensics/_speedups.c) against the pure-Python reference.

The accelerator only takes the healthy common case and hands the rest back, so with or without it
every frame, header, record, finding and error message must be the same. These tests run both
paths on every fixture segment, on the real Kafka 4.1 disks when ../shared is present, and on
randomly damaged batches.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import forensics.codec.batch as batch_mod
from forensics.codec.batch import decode_header, iter_records
from forensics.errors import ForensicsError
from forensics.io.frames import FrameScanner
from forensics.speedups import native

needs_native = pytest.mark.skipif(native is None, reason="the C accelerator is not built (or KAFKA_FORENSICS_PURE)")

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "real-kafka"


def _segments() -> List[Path]:
    found = sorted((REPO / "fixtures").rglob("*.log"))
    if SHARED.is_dir():
        found += sorted(SHARED.rglob("*.log"))
    return [p for p in found if p.stat().st_size > 0]


from tests.fuzz.strategies import pure_python as _pure  # noqa: E402  (the accelerator switched off here)


def _scan(buf: bytes, verify: bool, headers: bool, base: int = None) -> Tuple[list, list, int, object]:
    scanner = FrameScanner(buf, "seg.log", verify_crc=verify, headers=headers, base_offset=base)
    frames = list(scanner)
    return frames, scanner.findings, scanner.valid_bytes, scanner.first_invalid_position


def _decode_all(buf: bytes) -> list:
    """Every record (or the error) of every v2 frame, as plain tuples."""
    out = []
    for frame in FrameScanner(buf, "seg.log", verify_crc=False):
        if frame.magic != 2:
            continue
        h = decode_header(buf, frame.position)
        got = []
        try:
            for rec in iter_records(buf, frame.position, h):
                got.append(tuple(rec))
        except ForensicsError as exc:
            got.append(("error", type(exc).__name__, str(exc), exc.position, exc.offset))
        out.append(got)
    return out


@needs_native
def test_crc32c_matches_the_package_on_every_length() -> None:
    from crc32c import crc32c as reference

    rnd = random.Random(7)
    for n in list(range(0, 70)) + [1000, 4095, 65537]:
        data = bytes(rnd.randrange(256) for _ in range(n))
        assert native.crc32c(data) == reference(data), n
    assert native.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value


@needs_native
def test_crc32_matches_zlib_on_every_length() -> None:
    import zlib

    rnd = random.Random(8)
    for n in list(range(0, 70)) + [1000, 65537]:
        data = bytes(rnd.randrange(256) for _ in range(n))
        assert native.crc32(data) == zlib.crc32(data), n
    assert native.crc32(b"123456789") == 0xCBF43926  # the CRC-32 check value


@needs_native
@pytest.mark.parametrize("path", _segments(), ids=lambda p: str(p.relative_to(p.parents[2])))
def test_every_segment_frames_and_decodes_the_same_both_ways(path: Path) -> None:
    buf = path.read_bytes()
    base = int(path.stem) if path.stem.isdigit() else None
    for verify in (True, False):
        fast = _scan(buf, verify, headers=True, base=base)
        with _pure():
            slow = _scan(buf, verify, headers=True, base=base)
        assert fast == slow
    assert all(f.header == decode_header(buf, f.position) for f in fast[0] if f.magic == 2)
    fast_records = _decode_all(buf)
    with _pure():
        assert fast_records == _decode_all(buf)


def _batch_segment(seed: int) -> bytes:
    import sys

    sys.path.insert(0, str(REPO / "fixtures"))
    from generator import RecordSpec, encode_v2_batch

    rnd = random.Random(seed)
    out, offset = bytearray(), 0
    for _ in range(4):
        recs = [RecordSpec(key=None if rnd.random() < 0.2 else b"k%d" % i,
                           value=None if rnd.random() < 0.1 else bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 30))),
                           headers=tuple((f"h{j}", b"v" if j % 2 else None) for j in range(rnd.randint(0, 2))),
                           timestamp_delta=rnd.randint(-5, 1 << 40))
                for i in range(rnd.randint(1, 6))]
        out += encode_v2_batch(offset, recs, producer_id=5, producer_epoch=1, base_sequence=rnd.choice([-1, 0, 2**31 - 3]),
                               codec=rnd.choice([0, 0, 1, 4]), timestamp_type=rnd.choice([0, 1]))
        offset += len(recs)
    return bytes(out)


@needs_native
@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**16), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=4),
       cut=st.integers(0, 10**6))
def test_damaged_batches_give_the_same_frames_records_and_errors(seed: int, flips, cut: int) -> None:
    data = bytearray(_batch_segment(seed))
    for where, value in flips:
        data[where % len(data)] = value
    if cut % 3 == 0:
        del data[cut % len(data):]
    buf = bytes(data)
    fast = (_scan(buf, True, True), _scan(buf, False, False), _decode_all(buf))
    with _pure():
        slow = (_scan(buf, True, True), _scan(buf, False, False), _decode_all(buf))
    assert fast == slow


@needs_native
def test_record_fields_that_overflow_64_bits_fall_back_to_python() -> None:
    """Python's ints do not overflow; the accelerator hands such a record back, so the timestamp
    is the exact sum either way."""
    import sys

    sys.path.insert(0, str(REPO / "fixtures"))
    from generator import RecordSpec, encode_v2_batch

    big = 2**63 - 10
    raw = encode_v2_batch(0, [RecordSpec(value=b"x", timestamp_delta=100)], base_timestamp=big, max_timestamp=big)
    h = decode_header(raw, 0)
    assert native.records(raw, 61, len(raw), h.base_offset, h.base_timestamp, None, h.base_sequence, 1) is None
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
    import sys

    sys.path.insert(0, str(REPO / "fixtures"))
    from generator import RecordSpec, encode_v2_batch

    raw = encode_v2_batch(7, [RecordSpec(key=b"a", value=b"b", headers=(("h", None),)), RecordSpec(value=None)],
                          base_sequence=2**31 - 1)
    h = decode_header(raw, 0)
    recs = native.records(raw, 61, h.size, h.base_offset, h.base_timestamp, None, h.base_sequence, h.records_count)
    assert [tuple(r) for r in recs] == [(7, h.base_timestamp, b"a", b"b", (("h", None),), 2**31 - 1, 0, 61),
                                        (8, h.base_timestamp, None, None, (), 0, 0, 73)]
    assert type(recs[0]) is batch_mod.Record and type(recs[0].headers[0]) is batch_mod.Header
    # a count no range can hold is refused without allocating it; so is a negative one
    assert native.records(raw, 61, h.size, 0, 0, None, -1, 2**40) is None
    assert native.records(raw, 61, h.size, 0, 0, None, -1, -1) is None


def test_the_accelerator_is_built_wherever_a_compiler_is() -> None:
    """The extension is optional at install time; on a machine with a C compiler its absence is a
    broken build, not a reason to skip the tests above."""
    import os
    import shutil

    if os.environ.get("KAFKA_FORENSICS_PURE") or not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("pure Python asked for, or no C compiler")
    from forensics import speedups

    assert speedups.native is not None and speedups.describe().startswith("C accelerator")
