"""The dump's run writer: ``native.dump_batches`` writes the lines of a run of batches in one call
(``DumpOptions.batch_runs``, the text dump of the command line) and hands back every frame it does
not take, which is then written from its rows. Its text and findings must be those of the dump
without runs (a BatchRow and its records per batch), with and without the accelerator, on every
segment, on damaged ones and on batches built to hit every rule: control batches (markers well
and badly formed, KRaft control records, compressed ones), legacy entries between v2 batches,
invalid UTF-8, LogAppendTime, sequences that wrap, offsets and timestamps at the ends of int64,
runs whose text passes the writer's limit.
"""

from __future__ import annotations

import io
import random
import struct
import sys
from pathlib import Path
from typing import List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensics.io.frames import FrameScanner
from forensics.render.dump_text import render_dump_text
from forensics.report.dump import DumpOptions, dump_file
from forensics.speedups import native
from tests.fuzz.strategies import pure_python as _pure
from tests.fuzz.strategies import recrc as _recrc

needs_native = pytest.mark.skipif(native is None, reason="the C accelerator is not built (or KAFKA_FORENSICS_PURE)")

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "real-kafka"
sys.path.insert(0, str(REPO / "fixtures"))
from generator import RecordSpec, encode_legacy_message, encode_marker_batch, encode_v2_batch  # noqa: E402

OPTIONS = [dict(deep_iteration=True), dict(print_data_log=True), dict(print_data_log=True, skip_record_metadata=True),
           dict(deep_iteration=True, skip_record_metadata=True)]


def _segments() -> List[Path]:
    found = sorted((REPO / "fixtures").rglob("*.log"))
    if SHARED.is_dir():
        found += sorted(SHARED.rglob("*.log"))
    return [p for p in found if p.stat().st_size > 0 and p.stem.isdigit()]


def _dump(path: Path, runs: bool) -> list:
    got = []
    for options in OPTIONS:
        out, err = io.StringIO(), io.StringIO()
        opts = DumpOptions(batch_runs=runs, **options)
        findings = render_dump_text(dump_file(str(path), opts), out, err, opts.skip_record_metadata)
        got.append((out.getvalue(), err.getvalue(), findings))
    return got


def _all_ways(path: Path) -> list:
    """The dump with runs and without, accelerated and pure: all four the same."""
    fast_runs, fast_rows = _dump(path, True), _dump(path, False)
    with _pure():
        pure_runs, pure_rows = _dump(path, True), _dump(path, False)
    assert fast_runs == fast_rows
    assert pure_runs == pure_rows
    assert fast_runs == pure_runs
    return fast_runs


@pytest.mark.parametrize("path", _segments(), ids=lambda p: str(p.relative_to(p.parents[2])))
def test_every_segment_dumps_the_same_with_runs(path: Path) -> None:
    _all_ways(path)


_PIECES = [None, b"", b"plain", b"\xff\xfe", "h\u00e9llo \u20ac \U0001f600".encode(), b"a\nb\r\x00c", b"\xed\xa0\x80x",
           b"\xc0\xaf", b"\xe2\x82", b"ok\xf4\x90\x80\x80", bytes(range(256)), b"x" * 70]


def _control_record(rnd: random.Random) -> RecordSpec:
    """A control record: an ABORT/COMMIT marker, mostly well formed, or one Kafka's tool would not print."""
    key = struct.pack(">hh", rnd.choice([0, 0, 0, 1, -1]), rnd.choice([0, 1, 1, 2, 3, 4, 5, 6, 9, -3]))
    value = struct.pack(">hi", rnd.choice([0, 0, 3, -2]), rnd.choice([0, 7, -1, 2**31 - 1, -(2**31)]))
    if rnd.random() < 0.15:
        key = rnd.choice([None, b"", key[:3], key + b"zz"])
    if rnd.random() < 0.15:
        value = rnd.choice([None, b"", value[:5], value + b"\x01"])
    return RecordSpec(key=key, value=value)


def _awkward_segment(seed: int) -> bytes:
    rnd = random.Random(seed)
    out, offset = bytearray(), rnd.choice([0, 0, 2**40, 2**63 - 50])
    for _ in range(rnd.randint(3, 9)):
        roll = rnd.random()
        if roll < 0.25:  # an end-transaction marker as a broker writes it, or a control batch of any shape
            if rnd.random() < 0.6:
                out += encode_marker_batch(offset, 7, 1, rnd.random() < 0.5, rnd.randint(0, 9), 1795211299778)
                offset += 1
                continue
            recs = [_control_record(rnd) for _ in range(rnd.choice([0, 1, 1, 2]))]
            out += encode_v2_batch(offset, recs, producer_id=7, producer_epoch=1, transactional=True, control=True,
                                   codec=rnd.choice([0, 0, 0, 1]), timestamp_type=rnd.choice([0, 1]))
            offset += max(1, len(recs))
            continue
        if roll < 0.35:  # a legacy entry between v2 batches (a format downgrade)
            out += encode_legacy_message(offset, rnd.choice([None, b"k"]), rnd.choice(_PIECES), magic=rnd.choice([0, 1]),
                                         timestamp=rnd.randint(-1, 1 << 41))
            offset += 1
            continue
        recs = [RecordSpec(key=rnd.choice(_PIECES), value=rnd.choice(_PIECES),
                           headers=tuple((rnd.choice(["h", "", "\u00fc", "k,v", "scenario"]), rnd.choice([None, b"v"]))
                                         for _ in range(rnd.randint(0, 3))),
                           timestamp_delta=rnd.choice([0, 1, -5, 1 << 40]))
                for _ in range(rnd.randint(0, 6))]
        out += encode_v2_batch(offset, recs, producer_id=rnd.choice([-1, 7, 2**62]), producer_epoch=rnd.choice([-1, 1]),
                               base_sequence=rnd.choice([-1, 0, 2**31 - 2]), codec=rnd.choice([0, 0, 0, 1, 2, 3, 4]),
                               timestamp_type=rnd.choice([0, 1]), delete_horizon=rnd.choice([None, None, 123]),
                               base_timestamp=rnd.choice([1795211299092, -1, 2**62]),
                               partition_leader_epoch=rnd.choice([0, -1, 2**31 - 1]))
        offset += max(1, len(recs))
    return bytes(out)


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**16), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=2),
       recrc=st.booleans())
def test_awkward_and_damaged_batches_dump_the_same_with_runs(tmp_path_factory, seed: int, flips, recrc: bool) -> None:
    data = bytearray(_awkward_segment(seed))
    for where, value in flips:
        data[where % len(data)] = value
    if recrc and data[16:17] == b"\x02":  # damage behind a good CRC reaches the records
        end = 12 + int.from_bytes(data[8:12], "big", signed=True)
        if 61 <= end <= len(data):
            first = bytearray(data[:end])
            _recrc(first)
            data[:end] = first
    path = tmp_path_factory.mktemp("runs") / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    _all_ways(path)


def _big_values(n: int, size: int) -> bytes:
    """n batches of three ``size``-byte values, a COMMIT marker after every seventh."""
    out, offset = bytearray(), 0
    for i in range(n):
        out += encode_v2_batch(offset, [RecordSpec(key=b"k", value=bytes([65 + i % 26]) * size) for _ in range(3)])
        offset += 3
        if i % 7 == 6:
            out += encode_marker_batch(offset, 7, 1, True, 0, 1795211299778)
            offset += 1
    return bytes(out)


def test_a_run_longer_than_the_writers_limit_is_written_in_pieces(tmp_path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_big_values(200, 4000))  # 2.4 MB of payloads in one run
    text = _all_ways(path)[1][0]
    assert text.count("\n| offset:") == 200 * 3 + 200 // 7 and text.endswith("\n")


@needs_native
def test_dump_batches_hands_back_what_python_writes() -> None:
    """A legacy entry, a KRaft control batch and a marker with a bad version go back to Python (at
    their index); a text past the limit stops before the next frame without handing it back."""
    good = encode_v2_batch(0, [RecordSpec(key=b"k", value=b"v")])
    marker = encode_marker_batch(1, 7, 1, True, 5, 10)
    legacy = encode_legacy_message(2, b"k", b"v", magic=1, timestamp=3)
    kraft = encode_v2_batch(3, [RecordSpec(key=struct.pack(">hh", 0, 3), value=b"\x00\x00" + bytes(8))], control=True)
    bad = encode_v2_batch(4, [RecordSpec(key=struct.pack(">hh", 0, 1), value=struct.pack(">hi", -1, 0))], control=True)
    buf = good + marker + legacy + kraft + bad + good
    frames = list(FrameScanner(buf, "seg.log"))
    assert [f.magic for f in frames] == [2, 2, 1, 2, 2, 2]
    text, i, python = native.dump_batches(buf, frames, 0, True, False)
    assert (i, python) == (2, True) and text.count("\n") == 4
    assert text.splitlines()[3].endswith("headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 5")
    assert native.dump_batches(buf, frames, 3, True, False)[1:] == (3, True)
    assert native.dump_batches(buf, frames, 4, True, False)[1:] == (4, True)
    assert native.dump_batches(buf, frames, 5, True, False)[1:] == (6, False)
    assert native.dump_batches(buf, frames, 5, True, True)[0].endswith(" payload: v\n")  # skip_metadata: "| key: k ..."
    assert native.dump_batches(buf, [frames[1]], 0, True, True)[0].endswith("isvalid: true\n\n")  # a marker's empty line
    big = _big_values(600, 4000)
    big_frames = list(FrameScanner(big, "seg.log"))
    text, i, python = native.dump_batches(big, big_frames, 0, True, False)
    assert not python and 0 < i < len(big_frames) and len(text) >= 1 << 20
    rest, j, python = native.dump_batches(big, big_frames, i, True, False)
    assert text.rsplit("\n", 2)[-2].startswith("| offset:") and rest.startswith("baseOffset: ")


@needs_native
def test_dump_batches_refuses_what_is_not_a_frame_list() -> None:
    with pytest.raises(TypeError):
        native.dump_batches(b"", 5, 0, True, False)
    with pytest.raises(TypeError):
        native.dump_batches(b"", [], 0, True)
    buf = encode_v2_batch(0, [RecordSpec(value=b"v")])
    assert native.dump_batches(buf, [("not", "a", "frame")], 0, True, False)[1:] == (0, True)
    assert native.dump_batches(buf, [(10**6, 73, 2, 0, 0, True, None)], 0, True, False)[1:] == (0, True)  # past the end
