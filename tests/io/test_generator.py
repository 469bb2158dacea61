"""The synthetic-disk writer (``fixtures/generator.py``) against the real thing.

* worked examples (the 78-byte COMMIT marker, a producer snapshot, transaction log values) byte
  for byte;
* batches written by a real Kafka 4.1 broker and its clients, re-encoded from their decoded fields:
  identical bytes (committed fixtures always; more from ``/work/shared/real-kafka`` when present);
  for compressed real batches, our record encoding equals their decompressed payload;
* real ``.snapshot`` / ``.txnindex`` / ``.index`` / ``.timeindex`` files re-encoded: identical;
* kafka-python (an independent implementation) writes identical uncompressed v0/v1/v2 bytes and
  reads our compressed ones;
* the committed example disk is exactly what ``python -m fixtures.generator example`` writes,
  regenerating is deterministic, and it holds the scenario its RECIPE describes.
"""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures import generator as gen
from forensics.codec import batch as v2
from forensics.codec import indexes, snapshot, txnlog
from forensics.codec.compression import decompress
from forensics.findings import FindingKind
from forensics.layout.discovery import discover
from forensics.report.dump import DumpOptions, dump_file, expand_rows
from forensics.report.dump_rows import BatchRow, FindingRow, RecordRow

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"
SHARED = REPO.parent / "shared" / "real-kafka" / "4.1.0"
EXAMPLE = REPO / "fixtures" / "example-disk"
LOG = "00000000000000000000.log"


def hexdump_bytes(text: str) -> bytes:
    return bytes.fromhex("".join(line.split(":", 1)[1] for line in text.strip().splitlines()))


# --------------------------------------------------------------------------- spec worked examples


def test_commit_marker_worked_example() -> None:
    expected = hexdump_bytes("""
        0000: 00 00 00 00 00 00 00 2a 00 00 00 42 00 00 00 03
        0010: 02 40 d5 14 e9 00 30 00 00 00 00 00 00 01 8b cf
        0020: e5 68 00 00 00 01 8b cf e5 68 00 00 00 00 00 00
        0030: 00 03 e8 00 05 ff ff ff ff 00 00 00 01 20 00 00
        0040: 00 08 00 00 00 01 0c 00 00 00 00 00 07 00
    """)
    got = gen.encode_marker_batch(42, 1000, 5, True, 7, 1_700_000_000_000, leader_epoch=3)
    assert len(got) == 78
    assert got == expected


def test_producer_snapshot_worked_example() -> None:
    expected = bytes.fromhex(
        "0001cd05a45d00000002"
        "00000000000003e8000500000029000000000000041100000003""0000018bcfe56800000000070000000000000406"
        "00000000000007d00000ffffffffffffffffffffffff00000000""0000018bcfe569f400000003ffffffffffffffff")
    entries = [gen.SnapshotEntrySpec(1000, 5, 41, 1041, 3, 1_700_000_000_000, 7, 1030),
               gen.SnapshotEntrySpec(2000, 0, -1, -1, 0, 1_700_000_000_500, 3, -1)]
    assert gen.encode_producer_snapshot(entries) == expected


def test_transaction_log_worked_examples() -> None:
    assert gen.encode_txn_log_key("my-txn-id") == bytes.fromhex("00000009 6d792d74786e2d6964".replace(" ", ""))
    ongoing = gen.encode_txn_log_value(1000, 5, 60000, gen.ONGOING, [("orders", 2), ("orders", 0)],
                                       1_700_000_000_000, 1_699_999_990_000)
    assert ongoing.hex() == ("0000" "00000000000003e8" "0005" "0000ea60" "01" "00000001" "0006" "6f7264657273"
                             "00000002" "00000000" "00000002" "0000018bcfe56800" "0000018bcfe540f0")
    empty = gen.encode_txn_log_value(1000, 6, 60000, gen.EMPTY, None, 1_700_000_000_000, -1)
    assert empty.hex() == "000000000000000003e800060000ea6000ffffffff0000018bcfe56800ffffffffffffffff"


@pytest.mark.parametrize("tid,n", [("my-txn-id", 50), ("polygenelubricants", 50), ("Aa", 50), ("BB", 50),
                                   ("orders-app", 3), ("payments-app", 3), ("reporting-app", 3), ("\U0001f600x", 7)])
def test_transaction_partition_matches_the_decoder(tid: str, n: int) -> None:
    assert gen.transaction_partition(tid, n) == txnlog.transaction_partition_for(tid, n)


# --------------------------------------------------------------------------- real batches re-encoded


def real_logs() -> list:
    paths = [REAL / "kraft-tv2" / "__consumer_offsets-42" / LOG, REAL / "kraft-tv2" / "__transaction_state-21" / LOG,
             REAL / "kraft-rv3.9-tv0" / "__transaction_state-20" / LOG]
    paths += [REAL / run / "disk" / "__cluster_metadata-0" / LOG for run in ("kraft-tv2", "kraft-rv3.9-tv0")]
    data = SHARED / "kraft-tv2" / "data"
    shared = ["b-txn-aborts-0", "b-txn-aborts-2", "a-txn-orders-0", "c-idempotent-0", "c-plain-0", "g-compact-txn-0",
              "h-eos-output-2", "i-java-txn-1", "j-kafka-python-txn-0", "f-comp-gzip-0", "f-comp-snappy-0",
              "f-comp-lz4-0", "f-comp-zstd-0"]
    paths += [data / p / LOG for p in shared]
    return [pytest.param(p, id=p.parent.name) for p in paths]


def reencode(buf: bytes, pos: int, header: v2.BatchHeader):
    """Our encoding of the batch at ``pos`` from its decoded header and records (uncompressed)."""
    specs = [gen.RecordSpec(key=r.key, value=r.value, headers=tuple((h.key, h.value) for h in r.headers),
                            timestamp_delta=r.timestamp - header.base_timestamp,
                            offset_delta=r.offset - header.base_offset, attributes=r.attributes)
             for r in v2.iter_records(buf, pos, header)]
    return gen.encode_v2_batch(
        header.base_offset, specs, producer_id=header.producer_id, producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence, partition_leader_epoch=header.partition_leader_epoch,
        transactional=header.is_transactional, control=header.is_control, codec=header.codec,
        timestamp_type=1 if header.is_log_append_time else 0, base_timestamp=header.base_timestamp,
        max_timestamp=header.max_timestamp, last_offset_delta=header.last_offset_delta,
        delete_horizon=header.delete_horizon_ms, records_count=header.records_count), specs


@pytest.mark.parametrize("path", real_logs())
def test_real_batches_reencode_identically(path: Path) -> None:
    if not path.is_file():
        pytest.skip("real segment not available here")
    buf = path.read_bytes()
    pos = compared = compressed = 0
    while pos < len(buf):
        header = v2.decode_header(buf, pos)
        original = buf[pos : pos + header.size]
        ours, specs = reencode(buf, pos, header)
        if header.codec == 0:
            assert ours == original, f"batch at {pos} (offset {header.base_offset}) differs"
            compared += 1
        else:  # compressor output differs between implementations: compare the plaintext and the rest
            plain = decompress(header.codec, original[61:], magic=2)
            ours_plain = b"".join(gen.encode_record(s, s.offset_delta, s.timestamp_delta) for s in specs)
            assert ours_plain == plain, f"records of compressed batch at {pos} differ"
            assert ours[:8] == original[:8] and ours[12:17] == original[12:17]
            assert ours[21:61] == original[21:61]
            again = list(v2.iter_records(ours, 0, v2.decode_header(ours, 0)))
            assert [(r.offset, r.key, r.value) for r in again] == [
                (r.offset, r.key, r.value) for r in v2.iter_records(buf, pos, header)]
            compressed += 1
        pos += header.size
    assert compared + compressed > 0 and pos == len(buf)


def test_real_transaction_log_v0_records_reencode() -> None:
    buf = (REAL / "kraft-rv3.9-tv0" / "__transaction_state-20" / LOG).read_bytes()
    pos = seen = 0
    while pos < len(buf):
        header = v2.decode_header(buf, pos)
        for r in v2.iter_records(buf, pos, header):
            key, value = txnlog.decode_key(r.key), txnlog.decode_value(r.value)
            assert gen.encode_txn_log_key(key.transactional_id) == r.key
            parts = None if value.partitions is None else [
                (p.topic, i) for p in value.partitions for i in p.partition_ids]
            assert gen.encode_txn_log_value(value.producer_id, value.producer_epoch, value.transaction_timeout_ms,
                                            value.status_id, parts, value.last_update_timestamp_ms,
                                            value.start_timestamp_ms) == r.value
            seen += 1
        pos += header.size
    assert seen == 4


def real_snapshots() -> list[Path]:
    found = sorted(REAL.glob("*/*/*.snapshot"))
    if SHARED.is_dir():
        found += sorted(SHARED.glob("*/data/*/*.snapshot"))
    return found


def test_real_snapshots_reencode_identically() -> None:
    paths = real_snapshots()
    assert paths
    for path in paths:
        raw = path.read_bytes()
        snap = snapshot.decode_snapshot(raw)
        assert gen.encode_producer_snapshot(gen.SnapshotEntrySpec(*e.raw) for e in snap.entries) == raw, path


def test_real_indexes_reencode_identically() -> None:
    txn = sorted(REAL.glob("*/*/*.txnindex")) + (sorted(SHARED.glob("*/data/*/*.txnindex")) if SHARED.is_dir() else [])
    for path in txn:
        raw = path.read_bytes()
        entries = [gen.AbortedTxnSpec(e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset)
                   for e in indexes.iter_txn_index(raw)]
        assert gen.encode_txn_index(entries) == raw, path
    idx = sorted(REAL.glob("*/*/*.index")) + (sorted(SHARED.glob("*/data/*/*.index")) if SHARED.is_dir() else [])
    for path in idx:
        raw, base = path.read_bytes(), int(path.name.split(".")[0])
        entries = [(e.offset, e.position) for e in indexes.iter_offset_index(raw, base)]
        assert gen.encode_offset_index(entries, base, preallocate=len(raw)) == raw, path
        tpath = path.with_suffix(".timeindex")
        if tpath.is_file():
            traw = tpath.read_bytes()
            tentries = [(e.timestamp, e.offset) for e in indexes.iter_time_index(traw, base)]
            assert gen.encode_time_index(tentries, base, preallocate=len(traw)) == traw, tpath


# --------------------------------------------------------------------------- kafka-python, independent


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_messages_match_kafka_python(magic: int) -> None:
    from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder

    builder = LegacyRecordBatchBuilder(magic, 0, 1 << 20)
    ours = b""
    for i, (key, value) in enumerate([(b"k", b"value"), (None, b"v2"), (b"key", None), (b"", b"")]):
        builder.append(i, 1_700_000_000_123 + i, key, value)
        ours += gen.encode_legacy_message(i, key, value, magic=magic, timestamp=1_700_000_000_123 + i)
    assert bytes(builder.build()) == ours
    inner = [gen.RecordSpec(b"a", b"x" * 50), gen.RecordSpec(None, b"y" * 60, timestamp_delta=3)]
    for codec in (gen.GZIP, gen.SNAPPY) + ((gen.LZ4,) if magic == 1 else ()):  # kafka-python needs xxhash for v0 lz4
        wrapper = gen.encode_legacy_message(9, magic=magic, codec=codec, inner=inner)
        got = [(r.offset, r.key, r.value) for r in LegacyRecordBatch(bytearray(wrapper), magic)]
        assert got == [(8, b"a", b"x" * 50), (9, None, b"y" * 60)]


def test_v2_batches_match_kafka_python() -> None:
    from kafka.record.default_records import (
        DefaultRecordBatch,
        DefaultRecordBatchBuilder,
    )

    builder = DefaultRecordBatchBuilder(2, 0, True, 77, 3, 10, 1 << 20)
    builder.append(0, 1_700_000_000_000, b"k", b"v", [("h", b"x"), ("n", None)])
    builder.append(1, 1_700_000_000_005, None, None, [])
    ours = gen.encode_v2_batch(0, [gen.RecordSpec(b"k", b"v", (("h", b"x"), ("n", None))),
                                   gen.RecordSpec(None, None, (), 5)],
                               producer_id=77, producer_epoch=3, base_sequence=10, transactional=True)
    assert bytes(builder.build()) == ours
    for codec in (gen.GZIP, gen.SNAPPY, gen.LZ4, gen.ZSTD):
        recs = [gen.RecordSpec(b"a", b"x" * 500), gen.RecordSpec(b"b", b"y", timestamp_delta=3)]
        data = gen.encode_v2_batch(100, recs, codec=codec)
        batch = DefaultRecordBatch(bytearray(data))
        assert batch.validate_crc()
        assert [(r.offset, r.key, r.timestamp) for r in batch] == [(100, b"a", 1_700_000_000_000),
                                                                   (101, b"b", 1_700_000_000_003)]


# --------------------------------------------------------------------------- our decoders read everything


def dump_rows(path: Path, **kw) -> list:
    return list(dump_file(str(path), DumpOptions(deep_iteration=True, print_data_log=True, **kw)))


@pytest.mark.parametrize("magic", [2, 1, 0])
@pytest.mark.parametrize("codec", list(gen.CODECS.values()), ids=list(gen.CODECS))
def test_sample_segments_decode_cleanly(tmp_path: Path, magic: int, codec: int) -> None:
    if codec == gen.ZSTD and magic < 2:
        pytest.skip("zstd is v2 only")
    path = tmp_path / LOG
    path.write_bytes(gen.sample_segment(codec, magic))
    rows = dump_rows(path)
    assert not [r for r in rows if type(r) is FindingRow]
    batches = [r for r in rows if type(r) is BatchRow]
    assert batches and all(r.frame.crc_ok and r.frame.magic == magic for r in batches)
    assert any(r.header.codec == codec for r in batches)
    offsets = [r.record.offset for r in expand_rows(rows) if type(r) is RecordRow]
    assert offsets == list(range(len(offsets)))


def test_delete_horizon_and_log_append_time(tmp_path: Path) -> None:
    recs = [gen.RecordSpec(b"a", b"1", timestamp_delta=0),
            gen.RecordSpec(b"b", None, timestamp_delta=9, offset_delta=4)]
    data = gen.encode_v2_batch(10, recs, delete_horizon=1_800_000_000_000, base_timestamp=1_700_000_000_000)
    h = v2.decode_header(data, 0)
    assert h.delete_horizon_ms == 1_800_000_000_000 and h.last_offset == 14 and h.records_count == 2
    assert [(r.offset, r.timestamp) for r in v2.iter_records(data, 0, h)] == [(10, 1_700_000_000_000),
                                                                              (14, 1_700_000_000_009)]
    data = gen.encode_v2_batch(0, recs[:1], timestamp_type=1, max_timestamp=1_700_000_000_777)
    h = v2.decode_header(data, 0)
    assert h.is_log_append_time and [r.timestamp for r in v2.iter_records(data, 0, h)] == [1_700_000_000_777]


def test_large_segment_streams(tmp_path: Path) -> None:
    info = gen.build_large_segment(tmp_path / LOG, 50, records_per_batch=3, value_size=100, marker_every=4)
    assert info.size == os.path.getsize(info.path)
    rows = dump_rows(info.path)
    assert not [r for r in rows if type(r) is FindingRow]
    batches = [r for r in rows if type(r) is BatchRow]
    assert len(batches) == 50 and batches[-1].frame.last_offset == info.last_offset
    assert sum(1 for r in batches if r.header.is_control) == 50 // 5


# --------------------------------------------------------------------------- the example disk


def tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_example_disk_is_deterministic_and_committed(tmp_path: Path) -> None:
    a, b = gen.make_example_disk(tmp_path / "a"), gen.make_example_disk(tmp_path / "b")
    assert tree(a) == tree(b)
    committed = EXAMPLE / gen.EXAMPLE_LOG_DIR
    assert committed.is_dir(), "run: python -m fixtures.generator example fixtures/example-disk"
    ours, theirs = tree(a / gen.EXAMPLE_LOG_DIR), tree(committed)
    assert sorted(ours) == sorted(theirs)
    changed = [name for name in ours if ours[name] != theirs[name]]
    assert not changed, f"committed example disk is stale ({changed}); regenerate it (see RECIPE.md)"
    assert (EXAMPLE / "RECIPE.md").is_file()


def test_example_disk_command_line(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "fixtures.generator", "example", str(tmp_path)], cwd=REPO,
                         capture_output=True, text=True, check=True)
    assert "broker-1" in out.stdout
    cmp = filecmp.dircmp(tmp_path / "broker-1", EXAMPLE / "broker-1")
    assert not cmp.left_only and not cmp.right_only
    # running it again replaces the tree (same bytes); a foreign directory is never removed
    subprocess.run([sys.executable, "-m", "fixtures.generator", "example", str(tmp_path)], cwd=REPO, check=True)
    foreign = tmp_path / "other"
    (foreign / "broker-1").mkdir(parents=True)
    (foreign / "broker-1" / "keep").write_text("x")
    with pytest.raises(FileExistsError):
        gen.make_example_disk(foreign)
    assert (foreign / "broker-1" / "keep").exists()


def test_example_disk_scenario() -> None:
    root = EXAMPLE / gen.EXAMPLE_LOG_DIR
    inv = discover([str(EXAMPLE)])
    assert len(inv.log_dirs) == 1
    log_dir = inv.log_dirs[0]
    assert log_dir.broker_id == 1 and log_dir.had_clean_shutdown
    names = sorted(p.name for p in log_dir.partitions)
    assert names == ["__cluster_metadata-0", "__transaction_state-0", "__transaction_state-1",
                     "__transaction_state-2", "orders-0", "orders-1", "payments-0"]
    assert max(len(p.segments) for p in log_dir.partitions) >= 3
    damage = {FindingKind.CRC_MISMATCH, FindingKind.CORRUPT_REGION, FindingKind.TRUNCATED_TAIL, FindingKind.ZERO_FILL}
    codecs, markers = set(), {}
    for log in sorted(root.glob("*/*.log")):
        rows = dump_rows(log)
        assert not [r for r in rows if type(r) is FindingRow and r.finding.kind in damage], log
        for r in rows:
            if type(r) is BatchRow:
                codecs.add(r.header.codec)
                if r.header.is_control:
                    markers.setdefault(log.parent.name, []).append(r.header.producer_id)
    assert codecs == {0, gen.GZIP, gen.ZSTD}
    # the hanging transaction: reporting-app (pid 2002) has a marker on orders-1 only ...
    assert 2002 in markers["orders-1"] and 2002 not in markers.get("orders-0", [])
    last_snapshot = sorted((root / "orders-0").glob("*.snapshot"))[-1]
    entries = {e.producer_id: e for e in snapshot.decode_snapshot(last_snapshot.read_bytes()).entries}
    assert entries[2002].current_txn_first_offset is not None
    # ... while its coordinator (abs(hash) % 3 == 0) says CompleteCommit, for orders-1 only
    assert gen.transaction_partition("reporting-app", 3) == 0
    buf = (root / "__transaction_state-0" / LOG).read_bytes()
    values, pos = [], 0
    while pos < len(buf):
        h = v2.decode_header(buf, pos)
        values += [txnlog.decode_value(r.value) for r in v2.iter_records(buf, pos, h)]
        pos += h.size
    assert [v.status_id for v in values] == [0, 1, 2, 4]
    assert values[1].partitions == (txnlog.PartitionsSchema("orders", (1,)),)
    # an abort on orders-0 after the hanging txn opened records its first offset as the LSO
    aborted = [e for p in sorted((root / "orders-0").glob("*.txnindex"))
               for e in indexes.iter_txn_index(p.read_bytes())]
    assert aborted and aborted[-1].last_stable_offset == entries[2002].current_txn_first_offset
