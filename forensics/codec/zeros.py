"""Zero runs of a buffer, found without touching the bytes already known to be zero.

A sparse file's holes read as zeros but occupy no disk: a 100 GiB segment made with ``truncate``
has no data at all. Reading a hole through a memory map still materialises a zero page per 4 KiB
(time and resident memory grow with the file's apparent size), so the io layer finds the holes
with ``lseek(SEEK_HOLE/SEEK_DATA)`` and hands them to the scanners as a :class:`Holes`. Every
question "is this range zero?" or "where is the next non-zero byte?" then reads only the data
between the holes: the cost follows the data bytes. Without holes (a dense file, a bytes buffer)
the answers are those of a plain search, so results never depend on how a file is allocated.
"""

from __future__ import annotations

import mmap
import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence

_NONZERO = re.compile(rb"[^\x00]")
_CHUNK = 16 << 20  # zeros compared a chunk at a time; a mapped chunk's pages are released once read
_ZEROS = bytes(_CHUNK)


class Holes:
    """Sorted, disjoint ``(start, end)`` byte ranges of a buffer known to hold only zeros."""

    __slots__ = ("ranges", "_ends")

    def __init__(self, ranges: Sequence[tuple[int, int]] = ()) -> None:
        self.ranges: tuple[tuple[int, int], ...] = tuple((a, b) for a, b in ranges if b > a)
        self._ends = [b for _, b in self.ranges]

    def __bool__(self) -> bool:
        return bool(self.ranges)

    @property
    def total(self) -> int:
        """Bytes inside holes."""
        return sum(b - a for a, b in self.ranges)

    def data_pieces(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        """The parts of ``[start, end)`` outside every hole, in order."""
        ranges = self.ranges
        i = bisect_right(self._ends, start)  # the first hole that ends after start
        pos = start
        while pos < end:
            if i < len(ranges) and ranges[i][0] <= pos:
                pos = ranges[i][1]
                i += 1
                continue
            stop = min(end, ranges[i][0]) if i < len(ranges) else end
            yield pos, stop
            pos = stop

    def next_nonzero(self, buf, start: int, end: int) -> int | None:
        """Position of the first non-zero byte in ``buf[start:end]``, or None; holes are not read."""
        view = memoryview(buf)
        for a, b in self.data_pieces(start, min(end, len(view))):
            for lo in range(a, b, _CHUNK):
                hi = min(b, lo + _CHUNK)
                if view[lo:hi] != _ZEROS[:hi - lo]:
                    return _NONZERO.search(buf, lo, hi).start()  # type: ignore[union-attr]  # not all zeros
                _release(buf, lo, hi)
        return None

    def all_zero(self, buf, start: int, end: int) -> bool:
        """Does ``buf[start:end]`` hold only zero bytes? Holes are not read."""
        return self.next_nonzero(buf, start, end) is None


def _release(buf, start: int, end: int) -> None:
    """Drop the pages of ``buf[start:end]`` from a read-only file map once read: a long run of dense
    zeros (a file system that reports no holes) then costs no resident memory. They read back from
    the file if touched again."""
    if not isinstance(buf, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):
        return
    page = mmap.PAGESIZE
    first, last = -(-start // page) * page, end // page * page
    if last > first:
        try:
            buf.madvise(mmap.MADV_DONTNEED, first, last - first)
        except OSError:  # advisory only
            pass


NO_HOLES = Holes()

__all__ = ["Holes", "NO_HOLES"]
