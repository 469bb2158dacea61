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

import random
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures.generator import RecordSpec, encode_legacy_message, encode_marker_batch, encode_v2_batch
from forensics.io.frames import FrameScanner
from forensics.speedups import native
from tests.codec.dump_ways import decoder_of, dump_ways
from tests.fuzz.strategies import recrc as _recrc
from tests.oracle import shared_dir
from tests.segments import segment_params
from tests.tiers import examples

needs_native = pytest.mark.skipif(native is None, reason="the C accelerator is not built (or KAFKA_FORENSICS_PURE)")

REPO = Path(__file__).resolve().parents[2]
SHARED = shared_dir() / "real-kafka"


def _segments() -> list[Path]:
    found = sorted((REPO / "fixtures").rglob("*.log"))
    if SHARED.is_dir():
        found += sorted(SHARED.rglob("*.log"))
    return [p for p in found if p.stat().st_size > 0 and p.stem.isdigit()]


@pytest.mark.parametrize("path", segment_params(_segments()))
def test_every_segment_dumps_the_same_with_runs(path: Path) -> None:
    dump_ways(path)
    if decoder_of(path) is not None:  # and with its topic's decoder
        dump_ways(path, decoder_of(path))


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


@settings(max_examples=examples(120), deadline=None)
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
    dump_ways(path)


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
    text = dump_ways(path)[1][0]
    assert text.count("\n| offset:") == 200 * 3 + 200 // 7 and text.endswith("\n")


@needs_native
def test_dump_batches_hands_back_what_python_writes() -> None:
    """A KRaft control batch, a marker with a bad version and, with a decoder, a legacy entry go back
    to Python (at their index); a text past the limit stops before the next frame without handing
    it back."""
    good = encode_v2_batch(0, [RecordSpec(key=b"k", value=b"v")])
    marker = encode_marker_batch(1, 7, 1, True, 5, 10)
    legacy = encode_legacy_message(2, b"k", b"v", magic=1, timestamp=3)
    kraft = encode_v2_batch(3, [RecordSpec(key=struct.pack(">hh", 0, 3), value=b"\x00\x00" + bytes(8))], control=True)
    bad = encode_v2_batch(4, [RecordSpec(key=struct.pack(">hh", 0, 1), value=struct.pack(">hi", -1, 0))], control=True)
    buf = good + marker + legacy + kraft + bad + good
    frames = list(FrameScanner(buf, "seg.log"))
    assert [f.magic for f in frames] == [2, 2, 1, 2, 2, 2]
    text, i, python = native.dump_batches(buf, frames, 0, True, False)
    assert (i, python) == (3, True) and text.count("\n") == 6
    assert text.splitlines()[3].endswith("headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 5")
    assert text.splitlines()[4].startswith("offset: 2 position: 148 CreateTime: 3 size: 36 magic: 1 compresscodec: none")
    assert text.splitlines()[5].startswith("| offset: 2 CreateTime: 3 keySize: 1 valueSize: 1 isValid: true crc: ")
    assert text.splitlines()[5].endswith("} key: k payload: v")
    assert native.dump_batches(buf, frames, 2, True, False, "offsets")[1:] == (2, True)
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


# -- the decoders the run writer takes: --transaction-log-decoder and --offsets-decoder ------------

_STRINGS = [b"", b"a-tx-producer-1", b'q"uo\\te', b"tab\tnl\ncr\r\x00\x1f\x7f", "\u00fcml \u20ac".encode(),
            b"\xff\xfe", b"x" * 300]


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _string(rnd: random.Random, flexible: bool, null_ok: bool = False) -> bytes:
    raw = rnd.choice(_STRINGS)
    if null_ok and rnd.random() < 0.1:
        return _uvarint(0) if flexible else struct.pack(">h", -1)
    return (_uvarint(len(raw) + 1) if flexible else struct.pack(">h", len(raw))) + raw


def _tags(rnd: random.Random, known) -> bytes:
    """A tagged-field section: some of ``known`` ((tag, size) pairs, sometimes of the wrong size) and unknown tags."""
    fields = []
    for tag, size in known:
        if rnd.random() < 0.4:
            fields.append((tag, bytes(rnd.randrange(256) for _ in range(size if rnd.random() < 0.9 else size + 1))))
    if rnd.random() < 0.2:
        fields.append((rnd.choice([7, 40, 300]), b"\x01\x02"))
    return _uvarint(len(fields)) + b"".join(_uvarint(t) + _uvarint(len(d)) + d for t, d in fields)


def _txn_key(rnd: random.Random):
    kind = rnd.random()
    if kind < 0.05:
        return None
    if kind < 0.1:
        return rnd.choice([b"", b"\x00", struct.pack(">hh", 1, 3) + b"abc", struct.pack(">hh", 0, 9) + b"short"])
    return struct.pack(">h", 0) + _string(rnd, False, null_ok=True) + rnd.choice([b"", b"", b"trailing"])


def _txn_value(rnd: random.Random):
    if rnd.random() < 0.1:
        return None  # a tombstone
    version = rnd.choice([0, 1, 1, 1, 2, -1])
    flexible = version >= 1
    out = bytearray(struct.pack(">hqhib", version, rnd.choice([0, 17, -1, 2**62]), rnd.choice([0, 3, -1]),
                                rnd.choice([10000, 60000]), rnd.choice([0, 1, 2, 3, 4, 5, 9, -2])))
    n = rnd.choice([None, 0, 1, 2, 3])
    if n is None:
        out += _uvarint(0) if flexible else struct.pack(">i", rnd.choice([-1, -7]))
    else:
        out += _uvarint(n + 1) if flexible else struct.pack(">i", n)
        for _ in range(n):
            out += _string(rnd, flexible, null_ok=True)
            ids = [rnd.choice([0, 1, 2, 2**31 - 1, -1]) for _ in range(rnd.randint(0, 3))]
            out += (_uvarint(len(ids) + 1) if flexible else struct.pack(">i", len(ids))) + struct.pack(f">{len(ids)}i", *ids)
            if flexible:
                out += _tags(rnd, ())
    out += struct.pack(">qq", rnd.choice([1795211205618, -1]), rnd.choice([-1, 1795211205700]))
    if flexible:
        out += _tags(rnd, ((0, 8), (1, 8), (2, 2), (3, 2)))
    if rnd.random() < 0.1:
        out += b"\x00\x01"  # bytes after the value: Kafka's reader ignores them
    if rnd.random() < 0.1:
        del out[rnd.randrange(len(out)):]  # cut short
    return bytes(out)


def _offsets_key(rnd: random.Random):
    if rnd.random() < 0.05:
        return rnd.choice([None, b"", b"\x00"])
    record_type = rnd.choice([0, 1, 1, 1, 1, 2, 3, 9])
    out = struct.pack(">h", record_type) + _string(rnd, False, null_ok=True)
    if record_type in (0, 1):
        out += _string(rnd, False, null_ok=True) + struct.pack(">i", rnd.choice([0, 2, -1]))
    return out[: rnd.choice([len(out)] * 9 + [len(out) - 2])]


def _offsets_value(rnd: random.Random):
    if rnd.random() < 0.1:
        return None
    version = rnd.choice([0, 1, 2, 3, 4, 4, 4, 5, -1])
    flexible = version >= 4
    out = bytearray(struct.pack(">hq", version, rnd.choice([0, 26, -1, 2**62])))
    if version >= 3:
        out += struct.pack(">i", rnd.choice([0, 5, -1]))
    out += _string(rnd, flexible, null_ok=True)
    out += struct.pack(">q", rnd.choice([1795211292011, -1]))
    if version == 1:
        out += struct.pack(">q", rnd.choice([1795211292999, -1]))
    if flexible:
        out += _tags(rnd, ())
    if rnd.random() < 0.1:
        del out[rnd.randrange(len(out)):]
    return bytes(out)


def _coordinator_segment(seed: int, decoder: str) -> bytes:
    rnd = random.Random(seed)
    key, value = (_txn_key, _txn_value) if decoder == "transaction-log" else (_offsets_key, _offsets_value)
    out, offset = bytearray(), 0
    for _ in range(rnd.randint(2, 8)):
        if rnd.random() < 0.2:
            out += encode_marker_batch(offset, 17, 0, rnd.random() < 0.5, 0, 1795211292037)
            offset += 1
            continue
        recs = [RecordSpec(key=key(rnd), value=value(rnd)) for _ in range(rnd.randint(1, 3))]
        out += encode_v2_batch(offset, recs, producer_id=rnd.choice([-1, 17]), codec=rnd.choice([0, 0, 0, 1, 4]))
        offset += len(recs)
    return bytes(out)


@settings(max_examples=examples(150), deadline=None)
@given(seed=st.integers(0, 2**20), decoder=st.sampled_from(["transaction-log", "offsets"]))
def test_coordinator_records_dump_the_same_with_runs(tmp_path_factory, seed: int, decoder: str) -> None:
    """Keys and values of every version, null and not, with tagged fields known and unknown, of the
    wrong size, strings to escape or not UTF-8, unknown record types, cut short: the decoders in C
    write what the Python ones write, and hand back what they do not."""
    path = tmp_path_factory.mktemp("coord") / "00000000000000000000.log"
    path.write_bytes(_coordinator_segment(seed, decoder))
    dump_ways(path, decoder)


@needs_native
def test_the_decoders_in_c_take_the_common_records() -> None:
    """Well-formed records of every value version are written in C, not handed back."""
    txn = [RecordSpec(key=struct.pack(">hh", 0, 4) + b"tx-1",
                      value=struct.pack(">hqhib", 0, 5, 1, 10000, 1) + struct.pack(">i", 1) + struct.pack(">h", 1) + b"t"
                      + struct.pack(">ii", 1, 3) + struct.pack(">qq", 7, 8)),
           RecordSpec(key=struct.pack(">hh", 0, 4) + b"tx-1", value=None)]
    commit = [RecordSpec(key=struct.pack(">hh", 1, 1) + b"g" + struct.pack(">h", 1) + b"t" + struct.pack(">i", 0),
                         value=struct.pack(">hq", v, 26) + (struct.pack(">i", 0) if v >= 3 else b"")
                         + (b"\x01" if v >= 4 else struct.pack(">h", 0)) + struct.pack(">q", 99)
                         + (struct.pack(">q", 100) if v == 1 else b"") + (b"\x00" if v >= 4 else b""))
              for v in range(5)]
    for decoder, recs, want in (("transaction-log", txn, '"transactionPartitions":[{"topic":"t","partitionIds":[3]}]'),
                                ("offsets", commit, '"data":{"offset":26,"leaderEpoch":0,"metadata":"","commitTimestamp":99}')):
        buf = encode_v2_batch(0, recs)
        frames = list(FrameScanner(buf, "seg.log"))
        text, i, python = native.dump_batches(buf, frames, 0, True, False, decoder)
        assert (i, python) == (1, False) and want in text, text
    with pytest.raises(ValueError):
        native.dump_batches(buf, frames, 0, True, False, "cluster-metadata")
