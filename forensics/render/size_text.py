"""Sizes as people read them: the one formatter of every table, stderr line, progress bar and report
page. Binary units throughout (1 KiB = 1024 bytes), as ``du -h`` and ``ls -lh`` print them.

- :func:`size`: ``214.5 KiB``, ``812 bytes``;
- :func:`exact_size`: that with the exact count, ``214.5 KiB (219,613 bytes)``, where the count is
  what a reader may match (``ls -l``, ``du -b``, the JSON's ``bytes``).
"""

from __future__ import annotations

_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB")


def size(n: float | None) -> str:
    """``812 bytes`` (``1 byte``), ``214.5 KiB``, ``2.0 GiB`` (one decimal from 1 KiB on); "unknown" for None."""
    if n is None:
        return "unknown"
    if n < 1024:
        return "1 byte" if n == 1 else f"{int(n)} bytes"
    for unit in _UNITS:
        n /= 1024
        if round(n, 1) < 1024 or unit == _UNITS[-1]:  # 1048575 bytes: 1.0 MiB, not 1024.0 KiB
            break
    return f"{n:.1f} {unit}"


def exact_size(n: int | None) -> str:
    """``214.5 KiB (219,613 bytes)``; below 1 KiB only the count (``812 bytes``); "unknown" for None."""
    if n is None or n < 1024:
        return size(n)
    return f"{size(n)} ({n:,} bytes)"


__all__ = ["exact_size", "size"]
