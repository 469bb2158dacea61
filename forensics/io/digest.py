"""SHA-256 of evidence files, read-only, for the evidence manifest.

Each file is opened like every other input (:func:`forensics.io.files.open_evidence`: read-only,
non-blocking, regular files only) and read in 1 MiB pieces into one reused buffer, so memory does
not grow with file size. Size and modification time come from ``fstat`` of the same descriptor
before and after hashing: a file that changed while it was read says so. Several files are hashed
at once by threads (hashlib releases the GIL).

Sparse files (see :mod:`forensics.codec.zeros`): holes are never read. Up to
:data:`SPARSE_HASH_LIMIT` bytes of holes the ordinary SHA-256 is still computed, the holes' zeros
fed from memory (a preallocated index of 10 MiB keeps a digest ``sha256sum`` reproduces). Beyond
it, hashing the zeros alone would take minutes (SHA-256 runs at about 1 GB/s here), so the file
gets a *sparse digest* instead (:func:`sparse_sha256`), whose cost follows the data bytes:

    SHA-256 over  b"kafka-forensics sparse-sha256 v1\\n"
                  then, for each 1 MiB chunk (chunk i = bytes [i MiB, (i+1) MiB)) holding a
                  non-zero byte, in order: i as 8 bytes big-endian + SHA-256(chunk bytes)
                  then b"size" + the file size as 8 bytes big-endian

It depends on the content only (an all-zero chunk is left out whether it is a hole or written
zeros), so a copy made with or without ``--sparse`` verifies against it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from forensics.codec.zeros import Holes
from forensics.errors import ForensicsError
from forensics.io.files import file_holes, open_evidence

CHUNK = 1 << 20
SPARSE_HASH_LIMIT = 1 << 30  # bytes of holes up to which the ordinary SHA-256 is still computed
SPARSE_DIGEST_PREFIX = b"kafka-forensics sparse-sha256 v1\n"
_ZEROS = bytes(CHUNK)


class FileDigest(NamedTuple):
    path: str
    size: int | None
    mtime_ns: int | None
    sha256: str | None
    error: str | None = None  # why it could not be hashed (then size/mtime/sha256 may be None)
    changed_while_read: bool = False
    sparse_sha256: str | None = None  # the sparse digest, for a file with more holes than SPARSE_HASH_LIMIT


class FileStat(NamedTuple):
    size: int
    mtime_ns: int


def stat_file(path: str) -> FileStat | None:
    """Size and modification time (following symlinks), or None if the file cannot be stat-ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return FileStat(st.st_size, st.st_mtime_ns)


def _read_to_end(fd: int) -> str:
    h = hashlib.sha256()
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    with open(fd, "rb", buffering=0, closefd=False) as fh:
        while True:
            n = fh.readinto(buf)
            if not n:
                break
            h.update(view[:n])
    return h.hexdigest()


def _pieces(size: int, holes: Holes) -> Iterator[tuple[int, int, bool]]:
    """``(start, end, is_hole)`` covering ``[0, size)`` in order."""
    pos = 0
    for a, b in holes.data_pieces(0, size):
        if a > pos:
            yield pos, a, True
        yield a, b, False
        pos = b
    if pos < size:
        yield pos, size, True


def _sha256_with_holes(fd: int, size: int, holes: Holes) -> str:
    """The ordinary SHA-256 of the first ``size`` bytes; the holes' zeros come from memory."""
    h = hashlib.sha256()
    for a, b, hole in _pieces(size, holes):
        for pos in range(a, b, CHUNK):
            n = min(CHUNK, b - pos)
            h.update(_ZEROS[:n] if hole else os.pread(fd, n, pos))
    return h.hexdigest()


def sparse_sha256(fd: int, size: int, holes: Holes) -> str:
    """The sparse digest (module docstring) of the first ``size`` bytes; holes are not read."""
    h = hashlib.sha256(SPARSE_DIGEST_PREFIX)
    last = -1
    for a, b in holes.data_pieces(0, size):
        for chunk in range(max(a // CHUNK, last + 1), (b - 1) // CHUNK + 1):
            data = os.pread(fd, min(CHUNK, size - chunk * CHUNK), chunk * CHUNK)
            if data != _ZEROS[:len(data)]:
                h.update(chunk.to_bytes(8, "big") + hashlib.sha256(data).digest())
            last = chunk
    h.update(b"size" + size.to_bytes(8, "big"))
    return h.hexdigest()


def hash_file(path: str, follow: bool = True, form: str = "auto") -> FileDigest:
    """The file's digest; an unreadable file gives a FileDigest with ``error`` set, never an exception.

    ``follow=False``: a symlink at ``path`` is refused, not followed. ``form``: ``sha256``, ``sparse``
    or ``auto`` (the ordinary SHA-256 unless the holes exceed :data:`SPARSE_HASH_LIMIT`)."""
    try:
        fd, before = open_evidence(path, follow)
    except ForensicsError as exc:
        return FileDigest(path, None, None, None, exc.message)
    try:
        holes = file_holes(fd, before.st_size)
        sha = sparse = None
        if form == "sparse" or (form == "auto" and holes.total > SPARSE_HASH_LIMIT):
            sparse = sparse_sha256(fd, before.st_size, holes)
        elif holes:
            sha = _sha256_with_holes(fd, before.st_size, holes)
        else:
            sha = _read_to_end(fd)
        after = os.fstat(fd)
        changed = (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns)
        return FileDigest(path, after.st_size, after.st_mtime_ns, sha, None, changed, sparse)
    except OSError as exc:
        return FileDigest(path, None, None, None, exc.strerror or str(exc))
    finally:
        os.close(fd)


def hash_many(requests: Sequence[tuple[str, bool, str]], workers: int | None = None) -> list[FileDigest]:
    """:func:`hash_file` of each ``(path, follow, form)``, in order, several at once."""
    if not requests:
        return []
    workers = workers or min(8, os.cpu_count() or 1, len(requests))
    if workers <= 1:
        return [hash_file(*r) for r in requests]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sha256") as pool:
        return list(pool.map(lambda r: hash_file(*r), requests))


def hash_files(paths: Sequence[str], workers: int | None = None, follow: bool = True) -> list[FileDigest]:
    """Digests in the order of ``paths``."""
    return hash_many([(p, follow, "auto") for p in paths], workers)


__all__ = ["SPARSE_HASH_LIMIT", "FileDigest", "FileStat", "hash_file", "hash_files", "hash_many", "sparse_sha256",
           "stat_file"]
