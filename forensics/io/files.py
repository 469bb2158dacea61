"""Open evidence files strictly read-only.

Files are opened with O_RDONLY (plus O_NOATIME where the kernel allows it, so reading does not
even update access times) and memory-mapped with ACCESS_READ: nothing is ever written, locked
or created next to the input. Memory use does not grow with file size: pages are file-backed
and reclaimable, never private copies.
"""

from __future__ import annotations

import errno
import mmap
import os
from typing import Optional, Union

from forensics.errors import InputError

_NOATIME = getattr(os, "O_NOATIME", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

Buffer = Union[mmap.mmap, bytes]


def open_readonly_fd(path: str) -> int:
    """An O_RDONLY descriptor; InputError (one clear line) if the path cannot be opened."""
    flags = os.O_RDONLY | _CLOEXEC
    try:
        try:
            return os.open(path, flags | _NOATIME)
        except PermissionError:
            if not _NOATIME:
                raise
            return os.open(path, flags)  # O_NOATIME needs ownership; fall back without it
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", path=path) from None
    except PermissionError:
        raise InputError("permission denied", path=path) from None
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), path=path) from None


class MappedFile:
    """A read-only memory map of a whole file (``data`` is b'' for an empty file).

    Use as a context manager; ``data`` supports slicing, ``struct.unpack_from``, ``find`` and
    the buffer protocol, so decoders work on it without copying the file.
    """

    __slots__ = ("path", "size", "data", "_mmap")

    def __init__(self, path: str) -> None:
        self.path = path
        self._mmap: Optional[mmap.mmap] = None
        fd = open_readonly_fd(path)
        try:
            st = os.fstat(fd)
            if not _is_regular(st.st_mode):
                raise InputError("not a regular file", path=path)
            self.size = st.st_size
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

    def __enter__(self) -> "MappedFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_small_file(path: str, limit: int = 16 * 1024 * 1024) -> bytes:
    """Read a small text/metadata file read-only (checkpoints, properties, snapshots)."""
    fd = open_readonly_fd(path)
    try:
        st = os.fstat(fd)
        if not _is_regular(st.st_mode):
            raise InputError("not a regular file", path=path)
        if st.st_size > limit:
            raise InputError(f"file is {st.st_size} bytes, larger than the {limit} expected for its type", path=path)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), path=path) from None
    finally:
        os.close(fd)


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)
