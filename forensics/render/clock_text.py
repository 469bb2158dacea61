"""Time text of the incident clock: the as-of time and where it comes from, what the file times say
about it (every command's stderr and tables, the abort script, the report)."""

from __future__ import annotations

from collections.abc import Callable

from forensics.analysis.clock import CLEAN_SHUTDOWN_FILE, AsOf, AsOfBasis, FileTimes, SetAside, TimeKind
from forensics.findings import Finding, FindingKind
from forensics.render.time_text import duration, stamp


TIME_WORDS = {TimeKind.BATCH: "batch timestamp", TimeKind.TXN_LAST_UPDATE: "txnLastUpdateTimestamp",
              TimeKind.PRODUCER_LAST: "producer lastTimestamp"}
_BASIS_WORDS = {AsOfBasis.GIVEN: "--as-of", AsOfBasis.NO_TIMESTAMP: "no timestamp on the inputs",
                AsOfBasis.NOT_COMPUTED: "not computed"}
_FILE_TIMES_WORDS = {FileTimes.NONE: "", FileTimes.AGREE: "; file times agree (within 1 h)",
                     FileTimes.COPY: "; file times ignored (copy times)",
                     FileTimes.OLDER: "; file times ignored (older than the records)"}


def as_of_source(when: AsOf) -> str:
    """Where the as-of time comes from, as every output says it (``--as-of``; ``newest batch timestamp, in
    <path>; file times agree (within 1 h); clean shutdown recorded (.kafka_cleanshutdown)``; ...)."""
    r = when.newest
    if when.basis is not AsOfBasis.RECORD or r is None:
        return _BASIS_WORDS[when.basis]
    words = f"newest {TIME_WORDS[r.what]}, in {r.path}{_FILE_TIMES_WORDS[when.file_times]}"
    if when.clean_shutdown:
        words += f"; clean shutdown recorded ({CLEAN_SHUTDOWN_FILE})"
    return words


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
    return f"{'unknown' if when.time_ms is None else stamp(when.time_ms)}: {as_of_source(when)}"


def set_aside_finding(s: SetAside, time_text: Callable[[int], str] = stamp) -> Finding:
    """The FUTURE_TIMESTAMP finding of a record time set aside, its times as ``time_text`` writes them
    (export's findings table: the epoch milliseconds, ``str``)."""
    r = s.record
    return Finding(FindingKind.FUTURE_TIMESTAMP,
                   f"{TIME_WORDS[r.what]} {time_text(r.time_ms)} is more than 1 h after the newest file time of the inputs "
                   f"({time_text(s.newest_file_ms)}, {s.newest_file_path}): not used for the as-of time (a damaged or "
                   "forged record, or a producer clock far ahead)", path=r.path)


def set_aside_findings(when: AsOf, time_text: Callable[[int], str] = stamp) -> tuple[Finding, ...]:
    """:func:`set_aside_finding` of each record time ``when`` set aside."""
    return tuple(set_aside_finding(s, time_text) for s in when.set_aside)
