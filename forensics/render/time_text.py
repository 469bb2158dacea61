"""Times as people read them: the one formatter of every table, reason, script comment, as-of line
and report page. Inside the program a time is int epoch milliseconds; it becomes text only here.

- :func:`iso`: ISO-8601 UTC to the millisecond, ``2026-11-20T21:50:47.928Z``;
- :func:`iso_ns`: to the nanosecond, for file modification times (``st_mtime_ns``, which
  verify-manifest compares exactly), ``2026-12-01T09:48:57.433523270Z``;
- :func:`stamp`: that with its epoch milliseconds, ``2026-11-20T21:50:47.928Z (1795211447928)``, where
  Kafka's own tools print milliseconds (``kafka-transactions.sh`` LastTimestamp, ``kafka-dump-log.sh``
  CreateTime), so values can be matched;
- :func:`duration`: ``6.749 s``, ``3 min 20 s``, ``5 h 2 min``, ``4 d 19 h``;
- :func:`age` and :func:`moment`: how far a time lies from the as-of time.
"""

from __future__ import annotations

from datetime import datetime, timezone


def _iso(t: int | None, per_second: int, digits: int, unit: str) -> str:
    if t is None or t < 0:
        return "unknown"
    try:
        whole = datetime.fromtimestamp(t // per_second, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return f"{t} {unit}"
    return f"{whole.replace(tzinfo=None).isoformat(timespec='seconds')}.{t % per_second:0{digits}d}Z"


def iso(ms: int | None) -> str:
    """Epoch milliseconds as ISO-8601 UTC with milliseconds; "unknown" for None or negative; the
    number with "ms" for a time no calendar holds."""
    return _iso(ms, 1000, 3, "ms")


def iso_ns(ns: int | None) -> str:
    """Epoch nanoseconds as ISO-8601 UTC with nanoseconds; "unknown" for None or negative; the number
    with "ns" for a time no calendar holds."""
    return _iso(ns, 1_000_000_000, 9, "ns")


def stamp(ms: int | None, as_of: int | None = None) -> str:
    """``2026-11-20T21:50:47.928Z (1795211447928)``: the ISO time with its epoch milliseconds, and with
    an as-of time its age (``... (1795211447928; 12.410 s before as-of)``); a value that is no time
    (None, negative: Kafka's -1) as it is."""
    if ms is None or ms < 0:
        return "None" if ms is None else str(ms)
    text = iso(ms)
    if not text.endswith("Z"):
        return f"{ms} ms since the epoch (not a calendar date)"
    ago = age(ms, as_of)
    return f"{text} ({ms}; {ago})" if ago else f"{text} ({ms})"


def table_time(ms: int | None) -> str:
    """A table cell: the ISO time; a value that is no time (None, negative: Kafka's -1) as it is."""
    return ("None" if ms is None else str(ms)) if ms is None or ms < 0 else iso(ms)


def duration(ms: int | None) -> str:
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


def short_duration(ms: int | None) -> str:
    """A duration for a table cell: ``4 d 19 h``, ``3 min 20 s``, ``12 s`` (whole seconds); "-" for None."""
    if ms is None:
        return "-"
    if -60_000 < ms < 60_000:
        return f"{int(ms / 1000)} s"
    return duration(ms)


def age(ms: int, as_of: int | None) -> str:
    """How far ``ms`` lies from the as-of time: ``4 d 19 h before as-of``; "" without an as-of time."""
    if as_of is None:
        return ""
    if ms == as_of:
        return "at the as-of time"
    return f"{duration(abs(as_of - ms))} {'before' if ms < as_of else 'after'} as-of"


def moment(ms: int | None, as_of: int | None = None, epoch: bool = True) -> str:
    """A time as people read it: ISO-8601 UTC, with its epoch milliseconds (as Kafka's tools print
    it, so values can be matched) and its age at the as-of time:
    ``2026-11-20T21:50:47.928Z (1795211447928) · 12.410 s before as-of``."""
    if ms is None or ms < 0:
        return iso(ms)
    text = iso(ms) + (f" ({ms})" if epoch else "")
    ago = age(ms, as_of)
    return f"{text} · {ago}" if ago else text


def clock(ms: int, span_ms: int) -> str:
    """A tick label: time of day to the millisecond for short ranges, date and time for long ones."""
    text = iso(ms)
    if "T" not in text:
        return text
    day, time = text[:-1].split("T")
    if span_ms >= 86_400_000:
        return f"{day[5:]} {time[:5]}"
    return time if span_ms < 60_000 else time[:8]


__all__ = ["age", "clock", "duration", "iso", "iso_ns", "moment", "short_duration", "stamp", "table_time"]
