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


def age(ms: int, as_of: Optional[int]) -> str:
    """How far ``ms`` lies from the as-of time: ``4 d 19 h before as-of``; "" without an as-of time."""
    if as_of is None:
        return ""
    if ms == as_of:
        return "at the as-of time"
    return f"{duration(abs(as_of - ms))} {'before' if ms < as_of else 'after'} as-of"


def moment(ms: Optional[int], as_of: Optional[int] = None, epoch: bool = True) -> str:
    """A time as people read it: ISO-8601 UTC, with its epoch milliseconds (as Kafka's tools print
    it, so values can be matched) and its age at the as-of time:
    ``2026-11-20T21:50:47.928Z (1795211447928) · 12.410 s before as-of``."""
    if ms is None or ms < 0:
        return iso(ms)
    text = iso(ms) + (f" ({ms})" if epoch else "")
    ago = age(ms, as_of)
    return f"{text} · {ago}" if ago else text


def value_text(value: object, kind: str = "", as_of: Optional[int] = None) -> str:
    """A row's value as text (not escaped): times with their epoch ms and age, durations and sizes
    as people read them, yes/no for booleans. Lists and missing values are the caller's."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and kind == "time":
        return moment(value, as_of)
    if isinstance(value, int) and kind == "duration":
        return duration(value)
    if isinstance(value, int) and kind == "bytes":
        return f"{value} bytes" if value < 1024 else f"{size(value)} ({value} bytes)"
    return str(value)
