"""The one way evidence files are opened: strictly read-only, regular files only, never blocking.

Every layer that reads a byte of evidence (discovery's small text files, segment maps, snapshots,
the manifest's digests) goes through :func:`open_evidence`:

* ``O_RDONLY | O_CLOEXEC``, plus ``O_NOATIME`` where the kernel allows it (the file's owner or
  root), so reading does not even move access times;
* ``O_NONBLOCK``, so opening a FIFO (or a device) named like a segment returns at once instead of
  waiting for a writer that never comes; ``O_NOFOLLOW`` where the caller does not follow symlinks;
* ``fstat`` of the descriptor just opened (not of the path: the path may be swapped between a
  ``stat`` and the ``open``) must say regular file, else nothing is read from it.

Segments are memory-mapped ``ACCESS_READ``: nothing is ever written, locked or created next to the
input, and memory does not grow with file size (pages are file-backed and reclaimable).
"""

from __future__ import annotations

import errno
import mmap
import os
import stat
import struct
import sys

from forensics.codec.zeros import NO_HOLES, Holes
from forensics.errors import InputError

_NOATIME = getattr(os, "O_NOATIME", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

Buffer = mmap.mmap | bytes

WHOLE_FILE_LIMIT = 1 << 30  # the most a file decoded whole (snapshot, index, txn index, manifest) may hold

_SPECIAL = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
            (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link"))


def describe_mode(mode: int) -> str:
    """What a file of this mode is, in words ("a FIFO (named pipe)", "a regular file", ...)."""
    for test, words in _SPECIAL:
        if test(mode):
            return words
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


class EvidenceError(InputError):
    """An evidence file could not be opened or read. ``strerror`` is the system's reason when the
    system refused (then the file is unreadable), None when we refused (its type or size)."""

    def __init__(self, message: str, path: str, strerror: str | None = None) -> None:
        super().__init__(message, path=path)
        self.strerror = strerror


class FileTooLarge(EvidenceError):
    """A small file (checkpoint, snapshot, index read whole) larger than its kind can be."""

    def __init__(self, path: str, size: int, limit: int, grew: bool = False) -> None:
        message = (f"grew past the {limit}-byte limit while it was read" if grew
                   else f"file is {size} bytes, larger than the {limit} expected for its type")
        super().__init__(message, path)
        self.size, self.limit, self.grew = size, limit, grew


def _os_error(exc: OSError, path: str, follow: bool) -> EvidenceError:
    if isinstance(exc, FileNotFoundError):
        return EvidenceError("no such file", path, exc.strerror)
    if isinstance(exc, PermissionError):
        return EvidenceError("permission denied", path, exc.strerror)
    if exc.errno == errno.ELOOP and not follow:
        return EvidenceError("a symbolic link, not a regular file: not followed", path)
    return EvidenceError(exc.strerror or str(exc), path, exc.strerror or type(exc).__name__)


def open_evidence(path: str, follow: bool = True) -> tuple[int, os.stat_result]:
    """A read-only descriptor of the regular file at ``path`` and its ``fstat``; EvidenceError (one
    clear line) when it cannot be opened or is not a regular file. ``follow=False``: a symlink at
    ``path`` itself is refused (``O_NOFOLLOW``). The caller closes the descriptor."""
    flags = os.O_RDONLY | _CLOEXEC | _NONBLOCK | (0 if follow else _NOFOLLOW)
    try:
        try:
            fd = os.open(path, flags | _NOATIME)
        except OSError as exc:
            if not _NOATIME or exc.errno not in (errno.EPERM, errno.EACCES, errno.EINVAL):
                raise
            fd = os.open(path, flags)  # O_NOATIME needs ownership; open without it
    except OSError as exc:
        raise _os_error(exc, path, follow) from None
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise _os_error(exc, path, follow) from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise EvidenceError(f"{describe_mode(st.st_mode)}, not a regular file: not read", path)
    return fd, st


def require_regular(path: str) -> None:
    """EvidenceError unless ``path`` (symlinks followed) is a regular file: the early, friendly form
    of :func:`open_evidence`'s check, for a command that wants to refuse before it prints anything."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _os_error(exc, path, True) from None
    if not stat.S_ISREG(st.st_mode):
        raise EvidenceError(f"{describe_mode(st.st_mode)}, not a regular file: not read", path)


def file_holes(fd: int, size: int) -> Holes:
    """The holes of a sparse file (ranges that read as zeros and hold no data), found with
    ``lseek(SEEK_HOLE/SEEK_DATA)`` without reading anything; none where the file system cannot
    tell (the whole file then counts as data). The file position is left at 0."""
    if size <= 0 or not hasattr(os, "SEEK_HOLE"):
        return NO_HOLES
    ranges = []
    pos = 0
    try:
        while pos < size:
            hole = os.lseek(fd, pos, os.SEEK_HOLE)
            if hole >= size:
                break
            try:
                data = os.lseek(fd, hole, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno != errno.ENXIO:  # ENXIO: no data after the hole, it runs to the end
                    raise
                data = size
            ranges.append((hole, min(data, size)))
            pos = data
    except OSError:
        return NO_HOLES
    finally:
        os.lseek(fd, 0, os.SEEK_SET)  # the seeks moved the file position: a reader starts at 0
    return Holes(ranges)


class MappedFile:
    """A read-only memory map of a whole file (``data`` is b'' for an empty file).

    Use as a context manager; ``data`` supports slicing, ``struct.unpack_from``, ``find`` and
    the buffer protocol, so decoders work on it without copying the file. ``holes``: the sparse
    file's holes, which scanners skip instead of reading (see :mod:`forensics.codec.zeros`).
    """

    __slots__ = ("path", "size", "data", "holes", "_mmap")

    def __init__(self, path: str) -> None:
        self.path = path
        self._mmap: mmap.mmap | None = None
        fd, st = open_evidence(path)
        try:
            self.size = st.st_size
            self.holes = file_holes(fd, st.st_size)
            if self.size == 0:
                self.data: Buffer = b""
            else:
                try:
                    self._mmap = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
                except (OSError, ValueError) as exc:
                    raise InputError(f"cannot map file: {exc}", path=path) from None
                if hasattr(self._mmap, "madvise") and hasattr(mmap, "MADV_SEQUENTIAL"):
                    try:
                        self._mmap.madvise(mmap.MADV_SEQUENTIAL)
                    except OSError as exc:  # advisory only
                        if exc.errno not in (errno.EINVAL, errno.ENOSYS):
                            raise
                self.data = self._mmap
        finally:
            os.close(fd)

    def close(self) -> None:
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:
                # a view into the map is still alive (e.g. held by an exception's traceback);
                # the map is released when that view goes away. Never mask the real error.
                pass
            self._mmap = None
            self.data = b""

    def __enter__(self) -> MappedFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_small_file(path: str, limit: int = 16 * 1024 * 1024) -> bytes:
    """The whole content of a small regular file (checkpoints, properties, snapshots, indexes read
    whole), opened by :func:`open_evidence`. FileTooLarge when it is, or grows while it is read,
    larger than ``limit``; EvidenceError when it cannot be opened or read."""
    fd, st = open_evidence(path)
    try:
        if st.st_size > limit:
            raise FileTooLarge(path, st.st_size, limit)
        chunks = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise FileTooLarge(path, len(data), limit, grew=True)
        return data
    except OSError as exc:
        raise EvidenceError(exc.strerror or str(exc), path, exc.strerror or type(exc).__name__) from None
    finally:
        os.close(fd)


def lock_holder(path: str) -> int | None:
    """The pid of a process holding a lock on the file at ``path`` (Kafka's ``LogManager`` holds its log
    dirs' ``.lock`` with ``FileChannel.tryLock``, an ``fcntl`` lock on Linux), 0 when none does, None when
    it cannot be told (not Linux, not a regular file, cannot be opened). Asks with ``F_GETLK`` on a
    read-only descriptor: nothing is locked, written or changed (not even the access time)."""
    if not sys.platform.startswith("linux"):
        return None
    import fcntl

    try:
        fd, _ = open_evidence(path, follow=False)
    except EvidenceError:
        return None
    try:
        # struct flock on Linux: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid
        query = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
    except OSError:
        return None
    finally:
        os.close(fd)
    kind, _, _, _, pid = struct.unpack(_FLOCK, answer)
    return 0 if kind == fcntl.F_UNLCK else max(pid, 1)


_FLOCK = "@hhqqixxxx"  # padded to sizeof(struct flock), 32 bytes on 64-bit Linux


__all__ = ["WHOLE_FILE_LIMIT", "Buffer", "EvidenceError", "FileTooLarge", "MappedFile", "describe_mode",
           "file_holes", "lock_holder", "open_evidence", "read_small_file", "require_regular"]
