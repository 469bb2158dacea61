"""The incident clock's rule (forensics.analysis.clock) and the lines every command prints about it
(forensics.cli.as_of), on hand-made inputs: the boundaries of the 1 h bound, set-aside record times,
file times older than every record, no file time at all."""

from __future__ import annotations

from forensics.analysis.clock import (
    FILE_TIME_BOUND_MS,
    AsOf,
    AsOfBasis,
    FileTimes,
    RecordTime,
    SetAside,
    TimeKind,
    given,
    incident_clock,
    newest_per_file,
)
from forensics.cli.as_of import clock_lines
from forensics.render.clock_text import as_of_source, set_aside_findings
from forensics.render.time_text import stamp
from forensics.findings import FindingKind

T = 1_795_211_460_338  # 2026-11-20T21:51:00.338Z
HOUR = 3_600_000
RECORDS = [RecordTime(T - 5_000, "/d/a-0/0.log"), RecordTime(T, "/d/__cluster_metadata-0/0.log"),
           RecordTime(T - 1, "/d/__transaction_state-3/0.log", TimeKind.TXN_LAST_UPDATE),
           RecordTime(-1, "/d/old-0/0.log")]
SOURCE = "newest batch timestamp, in /d/__cluster_metadata-0/0.log"


def files(ms: int) -> list:
    return [(ms, "/d/recovery-point-offset-checkpoint"), (ms - 10, "/d/.kafka_cleanshutdown")]


def test_bound_is_one_hour():
    assert FILE_TIME_BOUND_MS == HOUR


def test_no_file_times_newest_record():
    assert incident_clock(RECORDS, []) == AsOf(T, AsOfBasis.RECORD, newest=RECORDS[1])
    assert as_of_source(incident_clock(RECORDS, [])) == SOURCE
    assert incident_clock([], []) == AsOf(None, AsOfBasis.NO_TIMESTAMP)
    assert as_of_source(incident_clock([], [])) == "no timestamp on the inputs"
    assert incident_clock([RecordTime(-1, "/x")], []).time_ms is None


def test_file_times_that_agree_are_said_in_the_source():
    for offset in (-HOUR, 0, 412, HOUR):
        got = incident_clock(RECORDS, files(T + offset))
        assert (got.time_ms, got.file_times, got.file_offset_ms) == (T, FileTimes.AGREE, offset)
        assert as_of_source(got) == SOURCE + "; file times agree (within 1 h); clean shutdown recorded (.kafka_cleanshutdown)"
        assert got.clean_shutdown == ("/d/.kafka_cleanshutdown",) and got.set_aside == ()
        assert clock_lines(got, as_of_line=False) == []


def test_copy_times_are_ignored_with_one_line():
    got = incident_clock(RECORDS, files(T + HOUR + 1))
    assert (got.time_ms, got.file_times, got.file_time_path) == (T, FileTimes.COPY,
                                                                 "/d/recovery-point-offset-checkpoint")
    assert as_of_source(got) == SOURCE + "; file times ignored (copy times); clean shutdown recorded (.kafka_cleanshutdown)"
    gap = (4 * 24 + 19) * HOUR + 59 * 60_000
    assert clock_lines(incident_clock(RECORDS, files(T + gap)), as_of_line=False) == [
        "file times look like copy times: 4 d 19 h after the newest record; using the newest record time"]
    assert clock_lines(incident_clock(RECORDS, [(T + 2 * HOUR + 61_000, "/p/0.log")])) == [
        f"as of 2026-11-20T21:51:00.338Z ({T}): {SOURCE}; file times ignored (copy times)",
        "file times look like copy times: 2 h 1 min after the newest record; using the newest record time"]


def test_a_record_after_every_file_time_is_set_aside():
    forged = RecordTime(253402300799000, "/d/c-plain-0/0.log")
    got = incident_clock(RECORDS + [forged], files(T + 3 * HOUR))
    assert (got.time_ms, as_of_source(got).split(";")[0], got.file_times) == (T, SOURCE, FileTimes.COPY)
    assert got.set_aside == (SetAside(forged, T + 3 * HOUR, "/d/recovery-point-offset-checkpoint"),)
    (f,) = set_aside_findings(got, str)
    assert (f.kind, f.path, f.level.value) == (FindingKind.FUTURE_TIMESTAMP, forged.path, "warning")
    assert f.message == (f"batch timestamp 253402300799000 is more than 1 h after the newest file time of the "
                         f"inputs ({T + 3 * HOUR}, /d/recovery-point-offset-checkpoint): not used for the as-of time "
                         "(a damaged or forged record, or a producer clock far ahead)")
    (f,) = set_aside_findings(got)  # as every command's stderr writes it: the times stamped
    assert f.message.startswith(f"batch timestamp {stamp(253402300799000)} is more than 1 h after the newest file "
                                f"time of the inputs ({stamp(T + 3 * HOUR)}, /d/recovery-point-offset-checkpoint)")
    assert clock_lines(got, as_of_line=False)[-1] == "warning: future_timestamp: " + forged.path + ": " + f.message
    # one hour of producer clock skew is tolerated
    ahead = RecordTime(T + 3 * HOUR + HOUR, "/d/a-1/0.log")
    got = incident_clock(RECORDS + [ahead], files(T + 3 * HOUR))
    assert got == AsOf(ahead.time_ms, AsOfBasis.RECORD, T + 3 * HOUR, "/d/recovery-point-offset-checkpoint",
                       FileTimes.AGREE, ("/d/.kafka_cleanshutdown",), newest=ahead)
    assert as_of_source(got) == ("newest batch timestamp, in /d/a-1/0.log; file times agree (within 1 h); clean "
                                 "shutdown recorded (.kafka_cleanshutdown)")


def test_file_times_older_than_every_record_are_not_used():
    """An archive's or a touch's dates: nothing is set aside, the record time is unchecked, one line says so."""
    got = incident_clock(RECORDS, [(T - (100 * 24 + 3) * HOUR - 5 * 60_000, "/d/recovery-point-offset-checkpoint")])
    assert (got.time_ms, got.file_times, got.set_aside) == (T, FileTimes.OLDER, ())
    assert as_of_source(got) == SOURCE + "; file times ignored (older than the records)"
    assert clock_lines(got, as_of_line=False) == [
        "file times look wrong: 100 d 3 h before the newest record; using the newest record time, unchecked"]


def test_given_time_says_nothing_else():
    assert given(5) == AsOf(5, AsOfBasis.GIVEN) and as_of_source(given(5)) == "--as-of"
    assert clock_lines(given(1767229200000)) == ["as of 2026-01-01T01:00:00.000Z (1767229200000): --as-of"]


def test_a_time_no_calendar_holds_is_printed_as_a_number():
    got = incident_clock([RecordTime(2**62, "/p/0.log")], [])
    assert clock_lines(got) == [f"as of {2**62} ms since the epoch (not a calendar date): newest batch timestamp, "
                                "in /p/0.log"]


def test_newest_per_file():
    got = newest_per_file([(3, "a"), (None, "b"), (7, "a"), (1, "c")], TimeKind.PRODUCER_LAST)
    assert sorted(got) == [RecordTime(1, "c", TimeKind.PRODUCER_LAST), RecordTime(7, "a", TimeKind.PRODUCER_LAST)]


def test_each_record_time_kind_has_its_words():
    """txnLastUpdateTimestamp and producer lastTimestamp as the as-of source and a set-aside finding say them."""
    when = incident_clock([RecordTime(T, "/d/__transaction_state-3/0.log", TimeKind.TXN_LAST_UPDATE)], [])
    assert as_of_source(when) == "newest txnLastUpdateTimestamp, in /d/__transaction_state-3/0.log"
    snap = RecordTime(T + 3 * HOUR, "/d/a-0/0.snapshot", TimeKind.PRODUCER_LAST)
    (f,) = set_aside_findings(incident_clock([RecordTime(T, "/d/a-0/0.log"), snap], [(T, "/d/a-0/0.log")]))
    assert f.message.startswith(f"producer lastTimestamp {stamp(T + 3 * HOUR)} is more than 1 h after")
