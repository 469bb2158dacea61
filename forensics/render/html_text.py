"""Text helpers of the HTML report: escaping hostile text, times and sizes as people read them.

Everything shown comes from evidence (topic names, transactional ids, paths, reasons that quote
them): :func:`esc` escapes it for HTML text and attribute values alike, and makes control and
bidirectional-override characters visible (``\\x1b``, ``\\u202e``) as a terminal shows them
(:mod:`forensics.render.terminal_text`) so that a name cannot hide or reorder what is printed
around it.
"""

from __future__ import annotations

import html
from datetime import datetime, timezone
from typing import Optional

from forensics.render.terminal_text import ESCAPES

# the terminal's table (forensics/render/terminal_text.py), but tab, newline and carriage return,
# which HTML shows as a space
_INVISIBLE = {c: shown for c, shown in ESCAPES.items() if c not in (0x09, 0x0A, 0x0D)}


def esc(value: object) -> str:
    """``value`` as text, safe inside HTML/SVG text and double- or single-quoted attributes."""
    text = "" if value is None else str(value)
    return html.escape(text.translate(_INVISIBLE), quote=True)


def iso(ms: Optional[int]) -> str:
    """Epoch milliseconds as ISO-8601 UTC with milliseconds; "unknown" for None or negative."""
    if ms is None or ms < 0:
        return "unknown"
    try:
        t = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def clock(ms: int, span_ms: int) -> str:
    """A tick label: time of day to the millisecond for short ranges, date and time for long ones."""
    text = iso(ms)
    if "T" not in text:
        return text
    day, time = text[:-1].split("T")
    if span_ms >= 86_400_000:
        return f"{day[5:]} {time[:5]}"
    return time if span_ms < 60_000 else time[:8]


def duration(ms: Optional[int]) -> str:
    """``6.749 s``, ``3 min 20 s``, ``5 h 2 min``, ``324 d 1 h``."""
    if ms is None:
        return "unknown"
    sign, ms = ("-" if ms < 0 else ""), abs(ms)
    if ms < 60_000:
        return f"{sign}{ms / 1000:.3f} s"
    s = ms // 1000
    for unit, size, sub, subsize in (("d", 86_400, "h", 3600), ("h", 3600, "min", 60), ("min", 60, "s", 1)):
        if s >= size:
            return f"{sign}{s // size} {unit} {s % size // subsize} {sub}"
    return f"{sign}{s} s"  # pragma: no cover - unreachable


def size(n: Optional[int]) -> str:
    if n is None:
        return "unknown"
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)  # pragma: no cover


def scalar(value: object, is_time: bool = False) -> str:
    """A field value as text (not escaped): times with their epoch ms, booleans as JSON spells them."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_time and isinstance(value, int):
        return f"{iso(value)} ({value})"
    return str(value)
