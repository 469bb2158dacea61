"""Time text of the incident clock: the as-of time and where it comes from, what the file times say
about it (every command's stderr and tables, the abort script, the report)."""

from __future__ import annotations

from forensics.analysis.clock import AsOf, FileTimes
from forensics.render.time_text import duration, stamp


def file_times_note(when: AsOf) -> str | None:
    """One line when the file times were ignored: copy times, or older than every record."""
    gap = when.file_offset_ms
    if gap is None:
        return None
    if when.file_times is FileTimes.COPY:
        return f"file times look like copy times: {duration(gap)} after the newest record; using the newest record time"
    if when.file_times is FileTimes.OLDER:
        return (f"file times look wrong: {duration(-gap)} before the newest record; using the newest record time, "
                "unchecked")
    return None


def as_of_text(when: AsOf) -> str:
    """``<time>: <source>``, as the as-of lines, the scan table and the abort script print it: the time
    as :func:`~forensics.render.time_text.stamp` writes it (``2026-11-20T21:51:00.338Z (1795211460338)``);
    inputs without a timestamp (empty segments only): ``unknown: no timestamp on the inputs``, as the
    report's page writes it."""
    return f"{'unknown' if when.time_ms is None else stamp(when.time_ms)}: {when.source}"
