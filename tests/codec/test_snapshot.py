"""forensics.codec.snapshot: producer state snapshots and their Kafka 4.1 dump lines."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensics.codec import snapshot as sn
from forensics.codec.crc import crc32c
from forensics.errors import CorruptSnapshotError, ForensicsError
from tests.tiers import examples

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "real"
REAL = Path("/work/shared/real-kafka/4.1.0")
RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")

# a worked example (ProducerStateManager.writeSnapshot): open txn for pid 1000 (epoch 5, first offset 1030)
# + marker-only pid 2000
SPEC_EXAMPLE = bytes.fromhex(
    "0001cd05a45d00000002"
    "00000000000003e8000500000029000000000000041100000003"
    "0000018bcfe56800000000070000000000000406"
    "00000000000007d00000ffffffffffffffffffffffff00000000"
    "0000018bcfe569f400000003ffffffffffffffff"
)


def dump_lines(dump_path: Path, part: str, name: str) -> list:
    lines = dump_path.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and lines[0].startswith("# kafka-dump-log.sh")
    assert lines[1] == f"Dumping {part}/{name}"
    return lines[2:-1]


def our_lines(path: Path) -> list:
    return [sn.format_snapshot_entry(e) for e in sn.decode_snapshot(path.read_bytes()).entries]


def build(entries, version=1, crc=None, extra=b"") -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(sn.PRODUCER_ENTRY.pack(*e) for e in entries) + extra
    if crc is None:
        crc = crc32c(body)
    return struct.pack(">hI", version, crc) + body


# --------------------------------------------------------------------------- spec example


def test_spec_worked_example():
    snap = sn.decode_snapshot(SPEC_EXAMPLE)
    assert snap.version == 1 and snap.crc == 0xCD05A45D == snap.computed_crc and snap.crc_valid
    assert snap.trailing_bytes == 0
    open_txn, marker_only = snap.entries
    assert open_txn.producer_id == 1000 and open_txn.producer_epoch == 5
    assert open_txn.coordinator_epoch == 7 and open_txn.current_txn_first_offset == 1030
    assert open_txn.last_timestamp == 1700000000000
    assert open_txn.batch_metadata == sn.BatchMetadata(41, 1041, 3, 1700000000000)
    assert open_txn.batch_metadata.first_seq == 38 and open_txn.batch_metadata.first_offset == 1038
    assert open_txn.position == 10 and marker_only.position == 56
    assert marker_only.batch_metadata is None and marker_only.current_txn_first_offset is None
    assert marker_only.raw == sn.ProducerEntry(2000, 0, -1, -1, 0, 1700000000500, 3, -1)
    assert [sn.format_snapshot_entry(e) for e in snap.entries] == [
        "producerId: 1000 producerEpoch: 5 coordinatorEpoch: 7 currentTxnFirstOffset: OptionalLong[1030] "
        "lastTimestamp: 1700000000000 firstSequence: 38 lastSequence: 41 lastOffset: 1041 offsetDelta: 3 "
        "timestamp: 1700000000000",
        "producerId: 2000 producerEpoch: 0 coordinatorEpoch: 3 currentTxnFirstOffset: OptionalLong.empty "
        "lastTimestamp: 1700000000500 ",
    ]


def test_empty_snapshot():
    snap = sn.decode_snapshot(build([]))
    assert snap.entries == () and snap.crc_valid and len(build([])) == 10


# --------------------------------------------------------------------------- real oracle


@pytest.mark.parametrize("part,name,expect_open", [
    ("d-txn-ongoing-0", "00000000000000000005.snapshot", True),
    ("b-txn-aborts-1", "00000000000000000028.snapshot", False),
])
def test_fixture_snapshots_match_dump(part, name, expect_open):
    path = FIXTURES / "kraft-tv2" / part / name
    expected = dump_lines(FIXTURES / "kraft-tv2" / "dumps" / part / f"{name}.dump.txt", part, name)
    assert our_lines(path) == expected
    entries = sn.decode_snapshot(path.read_bytes()).entries
    assert any(e.current_txn_first_offset is not None for e in entries) == expect_open
    if expect_open:
        assert entries[0].current_txn_first_offset == 2 and entries[0].producer_id == 20
    else:
        assert expected[-1].endswith("lastTimestamp: 1795211217612 ")  # no batch metadata: trailing space
        assert entries[-1].batch_metadata is None and entries[-1].raw.last_offset == -1


@pytest.mark.skipif(not REAL.is_dir(), reason="/work/shared/real-kafka not available")
@pytest.mark.parametrize("run", RUNS)
def test_every_real_snapshot_matches_kafka_dump(run):
    files = sorted((REAL / run / "data").glob("*/*.snapshot"))
    assert len(files) >= 50
    mismatches = []
    for path in files:
        part = path.parent.name
        expected = dump_lines(REAL / run / "dumps" / part / f"{path.name}.dump.txt", part, path.name)
        got = our_lines(path)
        if got != expected:
            mismatches.append((str(path), got, expected))
    assert not mismatches, mismatches[:3]


# --------------------------------------------------------------------------- sequence arithmetic


@pytest.mark.parametrize("last,delta,first", [
    (19, 3, 16),
    (2, 5, 2147483645),  # wrapped batch: sequences 2147483645..2147483647, 0..2
    (0, 1, 2147483647),
    (-1, 0, 2147483647),  # Java: -1 < 0, so MAX - 1 + 1
    (5, 0, 5),
    (2147483647, 2147483647, 0),
    (-5, 2147483647, -4),  # garbage wraps in Java int arithmetic
    (3, -4, 7),
])
def test_first_seq_matches_java_decrement_sequence(last, delta, first):
    assert sn.BatchMetadata(last, 100, delta, 0).first_seq == first
    assert -2**31 <= sn.decrement_sequence(last, delta) < 2**31


# --------------------------------------------------------------------------- errors


def test_unknown_version_message_and_position():
    with pytest.raises(CorruptSnapshotError) as info:
        sn.decode_snapshot(build([], version=2))
    assert info.value.message == "Snapshot failed schema validation: Snapshot contained an unknown file version 2"
    assert info.value.position == 0


def test_crc_mismatch_and_verify_crc_false():
    data = build([(7, 0, 4, 9, 0, 123, 0, -1)], crc=12345)
    with pytest.raises(CorruptSnapshotError) as info:
        sn.decode_snapshot(data)
    assert info.value.message.startswith("Snapshot is corrupt (CRC is no longer valid). Stored crc: 12345. Computed crc: ")
    assert info.value.position == 2
    snap = sn.decode_snapshot(data, verify_crc=False)
    assert not snap.crc_valid and snap.entries[0].producer_id == 7


def test_negative_and_oversized_counts():
    neg = struct.pack(">hIi", 1, 0, -1)
    with pytest.raises(CorruptSnapshotError, match="non-nullable field producerEntries"):
        sn.decode_snapshot(neg)
    big = struct.pack(">hIi", 1, 0, 5) + b"\x00" * 4
    with pytest.raises(CorruptSnapshotError, match="Tried to allocate a collection of size 5"):
        sn.decode_snapshot(big)


def test_trailing_bytes_covered_by_crc_are_accepted():
    snap = sn.decode_snapshot(build([(1, 0, 0, 0, 0, 5, -1, -1)], extra=b"\x01\x02"))
    assert snap.trailing_bytes == 2 and len(snap.entries) == 1


def test_every_truncation_raises_our_error():
    for n in range(len(SPEC_EXAMPLE)):
        with pytest.raises(CorruptSnapshotError) as info:
            sn.decode_snapshot(SPEC_EXAMPLE[:n])
        assert info.value.position is not None and 0 <= info.value.position <= n


def test_every_single_bit_flip_is_detected():
    for i in range(len(SPEC_EXAMPLE) * 8):
        flipped = bytearray(SPEC_EXAMPLE)
        flipped[i // 8] ^= 1 << (i % 8)
        with pytest.raises(CorruptSnapshotError):
            sn.decode_snapshot(bytes(flipped))


@settings(max_examples=examples(400), deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_our_errors(data):
    for candidate in (data, b"\x00\x01" + data, build([]) [:6] + data):
        try:
            sn.decode_snapshot(candidate, verify_crc=False)
        except ForensicsError as exc:
            assert isinstance(exc, CorruptSnapshotError) and exc.position is not None


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(
    st.integers(-2**63, 2**63 - 1), st.integers(-2**15, 2**15 - 1), st.integers(-2**31, 2**31 - 1),
    st.integers(-2**63, 2**63 - 1), st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1),
    st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1)), max_size=5))
def test_roundtrip_any_entries(entries):
    snap = sn.decode_snapshot(build(entries))
    assert [e.raw for e in snap.entries] == [sn.ProducerEntry(*e) for e in entries]
    for e in snap.entries:
        line = sn.format_snapshot_entry(e)
        assert line.startswith(f"producerId: {e.producer_id} ")
        assert (e.batch_metadata is None) == line.endswith(" ")
