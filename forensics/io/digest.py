"""SHA-256 of evidence files, read-only, for the evidence manifest.

Each file is opened like every other input (:func:`forensics.io.files.open_evidence`: read-only,
non-blocking, regular files only) and read in
1 MiB pieces into one reused buffer, so memory does not grow with file size. Size and modification
time come from ``fstat`` of the same descriptor before and after hashing: a file that changed while
it was read says so. Several files are hashed at once by threads (hashlib releases the GIL).
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from typing import List, NamedTuple, Optional, Sequence

from forensics.errors import ForensicsError
from forensics.io.files import open_evidence

CHUNK = 1 << 20


class FileDigest(NamedTuple):
    path: str
    size: Optional[int]
    mtime_ns: Optional[int]
    sha256: Optional[str]
    error: Optional[str] = None  # why it could not be hashed (then size/mtime/sha256 may be None)
    changed_while_read: bool = False


class FileStat(NamedTuple):
    size: int
    mtime_ns: int


def stat_file(path: str) -> Optional[FileStat]:
    """Size and modification time (following symlinks), or None if the file cannot be stat-ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return FileStat(st.st_size, st.st_mtime_ns)


def hash_file(path: str) -> FileDigest:
    """The file's SHA-256; an unreadable file gives a FileDigest with ``error`` set, never an exception."""
    try:
        fd, before = open_evidence(path)
    except ForensicsError as exc:
        return FileDigest(path, None, None, None, exc.message)
    try:
        h = hashlib.sha256()
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        with open(fd, "rb", buffering=0, closefd=False) as fh:
            while True:
                n = fh.readinto(buf)
                if not n:
                    break
                h.update(view[:n])
        after = os.fstat(fd)
        changed = (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns)
        return FileDigest(path, after.st_size, after.st_mtime_ns, h.hexdigest(), None, changed)
    except OSError as exc:
        return FileDigest(path, None, None, None, exc.strerror or str(exc))
    finally:
        os.close(fd)


def hash_files(paths: Sequence[str], workers: Optional[int] = None) -> List[FileDigest]:
    """Digests in the order of ``paths``."""
    if not paths:
        return []
    workers = workers or min(8, os.cpu_count() or 1, len(paths))
    if workers <= 1:
        return [hash_file(p) for p in paths]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sha256") as pool:
        return list(pool.map(hash_file, paths))


__all__ = ["FileDigest", "FileStat", "hash_file", "hash_files", "stat_file"]
