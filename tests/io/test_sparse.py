"""Sparse files: holes are found with SEEK_HOLE/SEEK_DATA and never read, and the results are those
of the same bytes written densely (issue 15, item 8).

Each case writes a real Kafka 4.1 segment (``fixtures/real``) into a file with holes, then checks
the frame scanner, the index scans and the digests on it against the same content as a dense
``bytes`` buffer, and that a hole of tens of GiB costs nothing.
"""

from __future__ import annotations

import hashlib
import os
import struct
import time
from pathlib import Path

import pytest

from forensics.codec import indexes
from forensics.codec.zeros import NO_HOLES, Holes
from forensics.io.digest import SPARSE_HASH_LIMIT, hash_file, sparse_sha256
from forensics.io.files import MappedFile, file_holes, open_evidence
from forensics.io.frames import FrameScanner

REPO = Path(__file__).resolve().parents[2]
SEGMENT = (REPO / "fixtures" / "real" / "kraft-tv2" / "disk" / "b-txn-aborts-0" /
           "00000000000000000000.log").read_bytes()
MiB = 1 << 20


def sparse_file(path: Path, pieces: list[tuple[int, bytes]], size: int) -> Path:
    """A file of ``size`` bytes holding ``pieces`` (position, bytes) and holes everywhere else."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for pos, data in pieces:
            os.pwrite(fd, data, pos)
        os.ftruncate(fd, size)
    finally:
        os.close(fd)
    fd, _ = open_evidence(str(path))
    try:
        if not file_holes(fd, size):
            pytest.skip("this file system does not report holes (SEEK_HOLE)")
    finally:
        os.close(fd)
    return path


def scan(buf, path: str, holes: Holes = NO_HOLES, base: int = 0):
    scanner = FrameScanner(buf, path, base_offset=base, headers=True, holes=holes)
    frames = list(scanner)
    return frames, scanner.findings, scanner.first_invalid_position


def same_as_dense(path: Path) -> None:
    with MappedFile(str(path)) as mf:
        assert mf.holes, "the file has holes"
        sparse = scan(mf.data, str(path), mf.holes)
        dense = scan(bytes(mf.data), str(path))
    assert sparse == dense


def test_holes_are_found_without_reading(tmp_path: Path) -> None:
    path = sparse_file(tmp_path / "x.log", [(0, SEGMENT), (2 * MiB, SEGMENT)], 4 * MiB)
    with MappedFile(str(path)) as mf:
        first_hole, tail = mf.holes.ranges
    assert first_hole[0] >= len(SEGMENT) and first_hole[1] == 2 * MiB  # block-aligned after the data
    assert tail[0] >= 2 * MiB + len(SEGMENT) and tail[1] == 4 * MiB
    dense = tmp_path / "dense.log"
    dense.write_bytes(SEGMENT)
    with MappedFile(str(dense)) as mf:
        assert not mf.holes


def test_a_hole_between_batches_and_a_hole_at_the_end_scan_as_the_dense_bytes(tmp_path: Path) -> None:
    same_as_dense(sparse_file(tmp_path / "x.log", [(0, SEGMENT), (2 * MiB, SEGMENT)], 4 * MiB))


def test_a_damaged_length_reaching_into_a_hole_scans_as_the_dense_bytes(tmp_path: Path) -> None:
    # the first batch claims to run 1 MiB further, into the hole: its checksum fails and the scanner
    # looks for a verified batch inside its claimed length (across the hole)
    raw = bytearray(SEGMENT)
    struct.pack_into(">i", raw, 8, struct.unpack_from(">i", raw, 8)[0] + MiB)
    same_as_dense(sparse_file(tmp_path / "x.log", [(0, bytes(raw))], 3 * MiB))


def test_zero_fill_of_a_huge_hole_is_one_finding_in_no_time(tmp_path: Path) -> None:
    size = 64 << 30
    path = sparse_file(tmp_path / "00000000000000000000.log", [(0, SEGMENT)], size)
    started = time.monotonic()
    with MappedFile(str(path)) as mf:
        frames, findings, _ = scan(mf.data, str(path), mf.holes)
    assert time.monotonic() - started < 10
    assert len(frames) == len(scan(SEGMENT, "x")[0])
    (zero,) = findings
    assert (zero.kind.value, zero.position, zero.end_position) == ("zero_fill", len(SEGMENT), size)
    assert zero.message == f"{size - len(SEGMENT)} zero bytes at the end of the segment (preallocation or crash)"


def test_a_preallocated_sparse_index_scans_as_the_dense_bytes(tmp_path: Path) -> None:
    entries = struct.pack(">ii", 3, 0) + struct.pack(">ii", 9, 4000)
    path = sparse_file(tmp_path / "00000000000000000000.index", [(0, entries)], 10 * MiB)
    with MappedFile(str(path)) as mf:
        sparse = indexes.scan_offset_index(mf.data, 0, mf.holes)
        dense = indexes.scan_offset_index(bytes(mf.data), 0)
    assert sparse == dense and sparse.zero_tail_start == 16


def test_txn_index_entries_in_a_hole_are_one_finding(tmp_path: Path) -> None:
    entry = indexes.ABORTED_TXN_ENTRY.pack(0, 7, 1, 5, 6)
    path = sparse_file(tmp_path / "00000000000000000000.txnindex", [(0, entry), (MiB, entry)], 2 * MiB)
    with MappedFile(str(path)) as mf:
        scan_ = indexes.scan_txn_index(mf.data, mf.holes)
        findings = indexes.txn_index_findings(scan_, str(path), mf.size)
        (hole,) = mf.holes.ranges[:1]
    size = indexes.ABORTED_TXN_ENTRY.size
    first, stop = -(-hole[0] // size), MiB // size  # the whole entries inside the first hole
    zero = [f for f in findings if f.kind.value == "zero_fill"]
    assert (zero[0].position, zero[0].end_position) == (first * size, stop * size)
    assert zero[0].message == f"{stop - first} entries of zeros in a sparse hole (not read, not listed)"
    assert scan_.positions[0] == 0 and scan_.entries[0] == indexes.AbortedTxn(0, 7, 1, 5, 6)
    # every entry outside the holes is listed at its own position
    assert all(p % size == 0 for p in scan_.positions) and first * size not in scan_.positions


def test_digests_of_a_sparse_file(tmp_path: Path) -> None:
    path = sparse_file(tmp_path / "x.log", [(0, SEGMENT), (3 * MiB + 5, SEGMENT)], 8 * MiB)
    content = path.read_bytes()
    d = hash_file(str(path))
    assert (d.sha256, d.sparse_sha256) == (hashlib.sha256(content).hexdigest(), None)  # few holes: sha256sum's
    forced = hash_file(str(path), form="sparse")
    dense = tmp_path / "dense.log"
    dense.write_bytes(content)
    assert hash_file(str(dense), form="sparse").sparse_sha256 == forced.sparse_sha256  # allocation does not count
    # the definition, computed independently
    h = hashlib.sha256(b"kafka-forensics sparse-sha256 v1\n")
    for i in range(0, len(content), MiB):
        chunk = content[i:i + MiB]
        if chunk.strip(b"\0"):
            h.update((i // MiB).to_bytes(8, "big") + hashlib.sha256(chunk).digest())
    h.update(b"size" + len(content).to_bytes(8, "big"))
    assert forced.sparse_sha256 == h.hexdigest()
    changed = bytearray(content)
    changed[3 * MiB + 100] ^= 1
    dense.write_bytes(bytes(changed))
    assert hash_file(str(dense), form="sparse").sparse_sha256 != forced.sparse_sha256


def test_a_dense_file_keeps_its_plain_sha256(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint"
    path.write_bytes(b"0\n1\norders 0 5\n")
    d = hash_file(str(path))
    assert (d.sha256, d.sparse_sha256, d.size) == (hashlib.sha256(path.read_bytes()).hexdigest(), None, 15)


def test_a_file_of_huge_holes_gets_the_sparse_digest_in_no_time(tmp_path: Path) -> None:
    size = 100 << 30
    path = sparse_file(tmp_path / "x.log", [(0, SEGMENT)], size)
    started = time.monotonic()
    d = hash_file(str(path))
    assert time.monotonic() - started < 10
    assert d.sha256 is None and d.size == size and SPARSE_HASH_LIMIT < size
    fd, _ = open_evidence(str(path))
    try:
        assert d.sparse_sha256 == sparse_sha256(fd, size, file_holes(fd, size))
    finally:
        os.close(fd)


def test_dense_zeros_are_searched_chunk_by_chunk_and_their_pages_released(tmp_path: Path) -> None:
    """Where the file system reports no holes the zeros are read: the first non-zero byte is found
    on either side of a chunk boundary, and a long dense zero run read from a map leaves no pages
    resident behind it (memory stays flat on a 2 GiB zero tail)."""
    from forensics.codec import zeros

    chunk = zeros._CHUNK
    for at in (0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk - 1):
        buf = bytearray(3 * chunk)
        buf[at] = 7
        assert NO_HOLES.next_nonzero(buf, 0, len(buf)) == at
        assert NO_HOLES.next_nonzero(buf, at + 1, len(buf)) is None
        assert NO_HOLES.all_zero(buf, 0, at) and not NO_HOLES.all_zero(buf, 0, at + 1)
    path = tmp_path / "dense-zeros.log"
    with open(path, "wb") as fh:
        for _ in range(8):
            fh.write(bytes(chunk))
    import mmap

    def resident_kib() -> int:  # now, not the peak: earlier tests' peaks would hide a leak
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * mmap.PAGESIZE // 1024

    if not hasattr(mmap, "MADV_DONTNEED") or not os.path.exists("/proc/self/statm"):
        return  # the search above is the whole check where pages cannot be released or counted
    with MappedFile(str(path)) as mf:
        before = resident_kib()
        assert NO_HOLES.all_zero(mf.data, 0, mf.size)
        grown_kib = resident_kib() - before
    assert grown_kib < 2 * chunk // 1024, grown_kib  # 128 MiB read, at most about a chunk resident
