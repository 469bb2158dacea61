"""What the file times say about the as-of time, as one line (every command's stderr, the report)."""

from __future__ import annotations

from typing import Optional

from forensics.analysis.clock import AsOf, FileTimes
from forensics.render.time_text import duration


def file_times_note(when: AsOf) -> Optional[str]:
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
