"""The incident clock ("as of"): the evidence's own newest record, never the analysing machine's clock.

Default as-of = the newest record time among the inputs of one cluster (see docs/cli.md, "The as-of
time"): the max timestamp of every batch read (data partitions, ``__transaction_state``,
``__cluster_metadata``: on a KRaft node the active controller appends a NoOpRecord every
``metadata.max.idle.interval.ms``, 500 ms by default, so that log ends within a second of the stop),
the ``txnLastUpdateTimestamp`` of every ``__transaction_state`` value and the ``lastTimestamp`` of every
producer-snapshot entry.

File modification times only corroborate it: a copy made with ``cp -r``, a git checkout or most
archive tools sets them to the copy time. The newest file time of the inputs is compared with the
newest record:

* within :data:`FILE_TIME_BOUND_MS` (1 h): they agree (:class:`FileTimes` ``AGREE``, said in the source's words);
* more than that after it: copy times, ignored (:class:`FileTimes` ``COPY``, one line for the user);
* every record more than that after it: the file times cannot be right (an archive's 1980 dates, a
  ``touch``), ignored, and the record times stay unchecked (``OLDER``).

A record time more than 1 h after the newest file time is impossible for an honest disk (no file
holds a record written after the file was last changed; 1 h as Kafka 4's default
``message.timestamp.after.max.ms``, ``ServerLogConfigs.LOG_MESSAGE_TIMESTAMP_AFTER_MAX_MS_DEFAULT``,
allows for a producer clock running ahead): a forged or damaged batch dated in the year 9999 is set
aside with a FUTURE_TIMESTAMP finding instead of becoming the clock. Record times are compared per
file (a segment's max timestamp, a snapshot's newest lastTimestamp), so the other records of a file
set aside do not count either.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from forensics.dataclass_fast import dataclass
from enum import Enum
from typing import NamedTuple

FILE_TIME_BOUND_MS = 3_600_000  # 1 h
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"


class TimeKind(Enum):
    """Which record time (its words: :mod:`forensics.render.clock_text`)."""

    BATCH = "batch"  # a batch's maxTimestamp
    TXN_LAST_UPDATE = "txn_last_update"  # a __transaction_state value's txnLastUpdateTimestamp
    PRODUCER_LAST = "producer_last"  # a producer-snapshot entry's lastTimestamp


class RecordTime(NamedTuple):
    """The newest time of one kind that one file holds."""

    time_ms: int
    path: str
    what: TimeKind = TimeKind.BATCH


class SetAside(NamedTuple):
    """A record time not used for the as-of time: more than 1 h after the newest file time of the inputs (a
    FUTURE_TIMESTAMP finding, as :func:`forensics.render.clock_text.set_aside_finding` writes it)."""

    record: RecordTime
    newest_file_ms: int
    newest_file_path: str


class FileTimes(str, Enum):
    NONE = "none"  # no file time among the inputs (or --as-of)
    AGREE = "agree"  # the newest file time lies within 1 h of the newest record
    COPY = "copy"  # more than 1 h after it: copy times, ignored
    OLDER = "older"  # more than 1 h before every record: not the files' real times, ignored


class AsOfBasis(Enum):
    """Where the as-of time comes from (its words: :func:`forensics.render.clock_text.as_of_source`)."""

    GIVEN = "given"  # --as-of
    RECORD = "record"  # the newest plausible record time among the inputs (AsOf.newest)
    NO_TIMESTAMP = "no_timestamp"  # no record time among the inputs
    NOT_COMPUTED = "not_computed"  # (a report made without a clock)


@dataclass(frozen=True, slots=True)
class AsOf:
    time_ms: int | None
    basis: AsOfBasis
    file_time_ms: int | None = None  # the newest modification time among the inputs' files
    file_time_path: str | None = None
    file_times: FileTimes = FileTimes.NONE  # what the file times say about the record time
    clean_shutdown: tuple[str, ...] = ()  # the .kafka_cleanshutdown files among the inputs
    set_aside: tuple[SetAside, ...] = ()  # record times not used: after every file time + 1 h
    newest: RecordTime | None = None  # the record time chosen (basis RECORD)

    @property
    def file_offset_ms(self) -> int | None:
        """The newest file time minus the as-of time (positive: the files are later)."""
        if self.file_time_ms is None or self.time_ms is None:
            return None
        return self.file_time_ms - self.time_ms


def given(time_ms: int) -> AsOf:
    return AsOf(time_ms, AsOfBasis.GIVEN)


def incident_clock(records: Iterable[RecordTime], files: Iterable[tuple[int, str]]) -> AsOf:
    """The as-of time of one cluster's inputs: its newest plausible record time, checked against the
    newest of ``files`` (``(mtime_ms, path)``), and the record times set aside. Pure: the same inputs give the
    same answer."""
    recs = [r for r in records if r.time_ms >= 0]  # -1: no timestamp (magic 0, empty batch)
    files = list(files)
    newest_file = max(files) if files else None
    clean = tuple(sorted(p for _, p in files if os.path.basename(p) == CLEAN_SHUTDOWN_FILE))
    ceiling = newest_file[0] + FILE_TIME_BOUND_MS if newest_file is not None else None
    older = ceiling is not None and bool(recs) and all(r.time_ms > ceiling for r in recs)
    if older:
        ceiling = None
    kept = [r for r in recs if ceiling is None or r.time_ms <= ceiling]
    aside = tuple(SetAside(r, *newest_file) for r in recs
                  if newest_file is not None and ceiling is not None and r.time_ms > ceiling)
    best = max(kept, key=lambda r: (r.time_ms, r.path)) if kept else None
    file_time, file_path = newest_file if newest_file is not None else (None, None)
    if best is None:
        return AsOf(None, AsOfBasis.NO_TIMESTAMP, file_time, file_path, FileTimes.NONE, clean, aside)
    verdict = _file_verdict(best.time_ms, newest_file, older)
    return AsOf(best.time_ms, AsOfBasis.RECORD, file_time, file_path, verdict, clean, aside, best)


def _file_verdict(record_ms: int, newest_file: tuple[int, str] | None, older: bool) -> FileTimes:
    if newest_file is None:
        return FileTimes.NONE
    if older:
        return FileTimes.OLDER
    return FileTimes.COPY if newest_file[0] - record_ms > FILE_TIME_BOUND_MS else FileTimes.AGREE


def newest_per_file(times: Iterable[tuple[int | None, str]], what: TimeKind = TimeKind.BATCH) -> list[RecordTime]:
    """``(time, path)`` pairs folded to one :class:`RecordTime` per path (its newest); ``None`` skipped."""
    best: dict[str, int] = {}
    for t, path in times:
        if t is not None and (path not in best or t > best[path]):
            best[path] = t
    return [RecordTime(t, path, what) for path, t in best.items()]
