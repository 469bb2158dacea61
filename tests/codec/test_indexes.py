"""forensics.codec.indexes: .index / .timeindex / .txnindex decoding and Kafka 4.1 dump lines."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensics.codec import indexes as ix
from forensics.errors import CorruptIndexError, ForensicsError
from tests.tiers import examples

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "real"
REAL = Path("/work/shared/real-kafka/4.1.0")
RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")


def dump_lines(dump_path: Path, part: str, name: str) -> list:
    """Lines after the '# ...' comment and the 'Dumping <part>/<name>' line (trailing spaces kept)."""
    lines = dump_path.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    assert lines[0].startswith("# kafka-dump-log.sh")
    assert lines[1] == f"Dumping {part}/{name}"
    return lines[2:-1]


def our_lines(path: Path, part: str) -> tuple:
    buf = path.read_bytes()
    base = int(path.name.split(".")[0])
    ext = path.suffix
    if ext == ".index":
        return ix.offset_index_dump_lines(buf, base, f"{part}/{path.name}")
    if ext == ".timeindex":
        return ix.time_index_dump_lines(buf, base)
    assert ext == ".txnindex"
    return ix.txn_index_dump_lines(buf)


def compare_tree(data_root: Path, dumps_root: Path, ext: str) -> int:
    files = sorted(p for p in data_root.glob(f"*/*{ext}") if p.parent.name != "dumps")
    mismatches = []
    for path in files:
        part = path.parent.name
        expected = dump_lines(dumps_root / part / f"{path.name}.dump.txt", part, path.name)
        got = list(our_lines(path, part))
        if got != expected:
            mismatches.append((str(path), got[:3], expected[:3]))
    assert not mismatches, mismatches[:5]
    return len(files)


# --------------------------------------------------------------------------- real oracle


@pytest.mark.parametrize("name", ["00000000000000000000.index", "00000000000000000000.timeindex"])
def test_fixture_index_matches_dump(name):
    path = FIXTURES / "kraft-tv2" / "i-java-txn-1" / name
    expected = dump_lines(FIXTURES / "kraft-tv2" / "dumps" / "i-java-txn-1" / f"{name}.dump.txt", "i-java-txn-1", name)
    assert len(expected) >= 7
    assert list(our_lines(path, "i-java-txn-1")) == expected


def test_fixture_txnindex_matches_dump():
    path = FIXTURES / "kraft-tv2" / "b-txn-aborts-0" / "00000000000000000000.txnindex"
    expected = dump_lines(FIXTURES / "kraft-tv2" / "dumps" / "b-txn-aborts-0" / f"{path.name}.dump.txt",
                          "b-txn-aborts-0", path.name)
    assert list(our_lines(path, "b-txn-aborts-0")) == expected
    scan = ix.scan_txn_index(path.read_bytes())
    assert scan.entries[-1] == ix.AbortedTxn(0, 5, 25, 28, 29)
    assert scan.trailing_bytes == 0 and not scan.non_increasing_positions


@pytest.mark.skipif(not REAL.is_dir(), reason="/work/shared/real-kafka not available")
@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("ext,minimum", [(".index", 100), (".timeindex", 100), (".txnindex", 10)])
def test_every_real_index_matches_kafka_dump(run, ext, minimum):
    n = compare_tree(REAL / run / "data", REAL / run / "dumps", ext)
    assert n >= minimum


# --------------------------------------------------------------------------- offset index


def offset_index(*pairs) -> bytes:
    return b"".join(struct.pack(">ii", r, p) for r, p in pairs)


def test_offset_index_absolute_offsets_and_format():
    buf = offset_index((54, 4284), (98, 8399))
    entries = list(ix.iter_offset_index(buf, 1000))
    assert entries == [ix.OffsetPosition(1054, 4284), ix.OffsetPosition(1098, 8399)]
    assert ix.format_offset_position(entries[0]) == "offset: 1054 position: 4284"


def test_offset_index_empty_file_rule():
    assert ix.offset_index_dump_lines(b"", 0, "t-0/00000000000000000000.index") == (
        "t-0/00000000000000000000.index is empty.",
    )
    # fewer than 8 bytes is 0 entries for Kafka too
    assert ix.offset_index_dump_lines(b"\x00" * 7, 0, "x.index") == ("x.index is empty.",)
    scan = ix.scan_offset_index(b"\x01" * 7, 0)
    assert scan.entries == () and scan.entry_count == 0 and scan.trailing_bytes == 7


def test_offset_index_preallocated_zero_tail():
    buf = offset_index((3, 0), (7, 4100), (12, 8200)) + bytes(64 * 1024)
    scan = ix.scan_offset_index(buf, 100)
    assert scan.entries == (ix.OffsetPosition(103, 0), ix.OffsetPosition(107, 4100), ix.OffsetPosition(112, 8200))
    assert scan.entry_count == len(buf) // 8
    assert scan.stop_position == 24 and scan.zero_tail_start == 24
    assert not scan.all_zero and scan.trailing_bytes == 0
    assert ix.offset_index_dump_lines(buf, 100, "x") == (
        "offset: 103 position: 0", "offset: 107 position: 4100", "offset: 112 position: 8200")


def test_offset_index_all_zero_after_crash():
    buf = bytes(1024 * 1024)  # the 10 MiB preallocated index of an empty active segment, shortened
    scan = ix.scan_offset_index(buf, 500)
    assert scan.entries == (ix.OffsetPosition(500, 0),)  # entry 0 is always taken, as Kafka does
    assert scan.stop_position == 8 and scan.zero_tail_start == 8 and scan.all_zero
    assert ix.scan_offset_index(bytes(8), 0).all_zero
    assert ix.scan_offset_index(bytes(8), 0).stop_position is None


def test_offset_index_relative_zero_entry_with_garbage_after():
    buf = offset_index((5, 10), (0, 99), (9, 20))
    scan = ix.scan_offset_index(buf, 0)
    assert scan.entries == (ix.OffsetPosition(5, 10),)
    assert scan.stop_position == 8 and scan.zero_tail_start is None and not scan.all_zero


def test_offset_index_entry0_with_relative_zero_is_kept_and_trailing_bytes():
    buf = offset_index((0, 0), (4, 77)) + b"\x00\x00\x00"
    scan = ix.scan_offset_index(buf, 10)
    assert scan.entries == (ix.OffsetPosition(10, 0), ix.OffsetPosition(14, 77))
    assert scan.stop_position is None and scan.zero_tail_start is None and scan.trailing_bytes == 3


def test_offset_index_accepts_memoryview():
    buf = bytearray(offset_index((1, 2))) + bytearray(16)
    mv = memoryview(buf)
    assert list(ix.iter_offset_index(mv, 0)) == [ix.OffsetPosition(1, 2)]
    assert ix.scan_offset_index(mv, 0).zero_tail_start == 8


# --------------------------------------------------------------------------- time index


def time_index(*pairs) -> bytes:
    return b"".join(struct.pack(">qi", t, r) for t, r in pairs)


def test_time_index_entries_tail_and_format():
    buf = time_index((1795211299246, 54), (1795211299394, 98)) + bytes(12 * 100) + b"\x00" * 5
    scan = ix.scan_time_index(buf, 0)
    assert scan.entries == (ix.TimestampOffset(1795211299246, 54), ix.TimestampOffset(1795211299394, 98))
    assert scan.zero_tail_start == 24 and scan.trailing_bytes == 5
    assert ix.time_index_dump_lines(buf, 0) == (
        "timestamp: 1795211299246 offset: 54", "timestamp: 1795211299394 offset: 98")
    assert ix.time_index_dump_lines(b"", 0) == ()  # no "is empty." line for time indexes


def test_time_index_negative_relative_offset_and_timestamp():
    buf = time_index((-1, -3))
    assert list(ix.iter_time_index(buf, 10)) == [ix.TimestampOffset(-1, 7)]


# --------------------------------------------------------------------------- txn index


def txn_entry(version, pid, first, last, lso) -> bytes:
    return struct.pack(">hqqqq", version, pid, first, last, lso)


def test_txn_index_entries_and_partial_tail():
    buf = txn_entry(0, 3, 5, 9, 10) + txn_entry(0, 3, 15, 19, 20) + b"\x00" * 33
    assert list(ix.iter_txn_index(buf)) == [ix.AbortedTxn(0, 3, 5, 9, 10), ix.AbortedTxn(0, 3, 15, 19, 20)]
    scan = ix.scan_txn_index(buf)
    assert scan.trailing_bytes == 33 and not scan.unsupported_version_positions
    assert ix.txn_index_dump_lines(buf) == (
        "version: 0 producerId: 3 firstOffset: 5 lastOffset: 9 lastStableOffset: 10",
        "version: 0 producerId: 3 firstOffset: 15 lastOffset: 19 lastStableOffset: 20",
    )
    assert ix.txn_index_dump_lines(b"") == ()


def test_txn_index_version_quirk_only_byte0_counts():
    # Kafka's AbortedTxn.version() reads the byte @0: 0x0001 reads as 0 and is accepted
    buf = txn_entry(1, 7, 1, 2, 3)
    assert ix.scan_txn_index(buf).entries[0].version == 1
    assert ix.scan_txn_index(buf).entries[0].kafka_version == 0
    assert ix.txn_index_dump_lines(buf) == ("version: 0 producerId: 7 firstOffset: 1 lastOffset: 2 lastStableOffset: 3",)
    # 0xFF00: signed byte -1, not > 0, accepted and printed as -1
    buf = txn_entry(-256, 7, 1, 2, 3)
    assert ix.txn_index_dump_lines(buf)[0].startswith("version: -1 producerId: 7")


def test_txn_index_unsupported_version_fails_like_kafka():
    buf = txn_entry(0, 1, 1, 2, 3) + txn_entry(0x0100, 1, 4, 5, 6)
    scan = ix.scan_txn_index(buf)
    assert scan.unsupported_version_positions == (34,)
    assert len(scan.entries) == 2  # still decoded for the analysis
    with pytest.raises(CorruptIndexError) as info:
        ix.txn_index_dump_lines(buf)
    assert info.value.position == 34
    assert "Unexpected aborted transaction version 1" in info.value.message


def test_txn_index_non_increasing_last_offsets():
    buf = txn_entry(0, 1, 1, 9, 10) + txn_entry(0, 2, 3, 9, 10) + txn_entry(0, 2, 3, 4, 5)
    assert ix.scan_txn_index(buf).non_increasing_positions == (34, 68)


# --------------------------------------------------------------------------- fuzz contract


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=400), st.integers(min_value=0, max_value=2**62))
def test_arbitrary_bytes_never_raise_foreign_errors(data, base):
    for scan in (ix.scan_offset_index(data, base), ix.scan_time_index(data, base)):
        assert len(scan.entries) <= scan.entry_count
        assert scan.zero_tail_start is None or scan.zero_tail_start == scan.stop_position
    ix.offset_index_dump_lines(data, base, "f")
    ix.time_index_dump_lines(data, base)
    ix.scan_txn_index(data)
    try:
        ix.txn_index_dump_lines(data)
    except ForensicsError as exc:
        assert isinstance(exc, CorruptIndexError) and exc.position is not None
