"""The one time formatter (render/time_text.py): ISO-8601 UTC, epoch ms beside it where Kafka's tools
print ms, ages at the as-of time; and the times the reasons and the abort script name."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
from forensics.cli.app import app
from forensics.render.counts import count
from forensics.render.time_text import age, duration, iso, short_duration, stamp
from tests.machine_output import rows_of

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"
SHARED = REPO.parent / "shared" / "real-kafka" / "4.1.0"
T = 1795211447934  # the live broker's TransactionStartTimeMs of d-tx-ongoing (kafka-transactions.sh describe)


def _python_iso(ms: int) -> str:  # independent of the module: the standard library's own ISO text
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds")


def test_iso_and_stamp():
    assert iso(T) == _python_iso(T).replace("+00:00", "Z") == "2026-11-20T21:50:47.934Z"
    assert stamp(T) == "2026-11-20T21:50:47.934Z (1795211447934)"
    assert stamp(T, T + 12_404) == "2026-11-20T21:50:47.934Z (1795211447934; 12.404 s before as-of)"
    assert stamp(T, T) == "2026-11-20T21:50:47.934Z (1795211447934; at the as-of time)"
    assert (stamp(-1), stamp(None)) == ("-1", "None")  # Kafka's "no time" stays as Kafka prints it
    assert stamp(10 ** 18) == "1000000000000000000 ms since the epoch (not a calendar date)"


@pytest.mark.parametrize("ms, text, short", [
    (0, "0.000 s", "0 s"), (59_999, "59.999 s", "59 s"), (60_000, "1 min 0 s", "1 min 0 s"),
    (3 * 3600_000 + 2 * 60_000, "3 h 2 min", "3 h 2 min"),
    ((4 * 24 + 19) * 3600_000 + 59 * 60_000, "4 d 19 h", "4 d 19 h"), (-90_000, "-1 min 30 s", "-1 min 30 s")])
def test_durations(ms, text, short):
    assert (duration(ms), short_duration(ms)) == (text, short)
    assert short_duration(None) == "-"


def test_age():
    assert age(T, T + 90_000) == "1 min 30 s before as-of"
    assert age(T + 1000, T) == "1.000 s after as-of"
    assert age(T, None) == ""


def test_count():
    assert [count(n, "batch") for n in (0, 1, 2)] == ["0 batches", "1 batch", "2 batches"]
    assert (count(1, "record"), count(3, "record"), count(None, "byte")) == ("1 record", "3 records", "? bytes")


@pytest.mark.parametrize("disk", [REAL / "kraft-tv2" / "disk", SHARED / "kraft-tv2" / "data"])
def test_ongoing_reason_names_the_coordinators_start_time_human_and_in_ms(disk):
    if not disk.is_dir():
        pytest.skip(f"{disk} is absent")
    r = CliRunner().invoke(app, ["find-hanging", str(disk), "--all", "--format", "json", "--no-progress",
                                 "--engine", "local"])
    assert r.exit_code == 0, r.output
    rows = rows_of(r.stdout)
    assert rows and {row["reason"].split(": the coordinator")[0] for row in rows} == {
        f"Ongoing with d-txn-ongoing-{p} in its set since 2026-11-20T21:50:47.934Z (1795211447934; "
        f"{duration(rows[0]['asOfMs'] - T)} before as-of)" for p in (0, 1)}
    assert all(row["asOfMs"] - T == 12_404 for row in rows)  # the incident clock: the newest record


def test_abort_script_comments_name_times_and_count_in_words():
    r = CliRunner().invoke(app, ["abort-commands", str(REPO / "fixtures" / "example-disk"), "--bootstrap-server",
                                 "k:9092", "--no-progress", "--engine", "local"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert "#   last timestamp of the producer: 2026-01-01T00:00:06.251Z (1767225606251), 7.049 s before the " \
           "as-of time" in lines
    assert "#     record timestamps 2026-01-01T00:00:06.250Z (1767225606250) .. 2026-01-01T00:00:06.251Z " \
           "(1767225606251); first keys: 'k18', 'k19'" in lines
    assert "#   open transaction: offsets 6..7, 1 batch, 2 records, epoch 1" in lines
    assert "#   coordinator: __transaction_state-0 offset 3 (CompleteCommit, written 2026-01-01T00:00:07.250Z " \
           "(1767225607250)) in " + str(REPO / "fixtures" / "example-disk" / "broker-1" / "__transaction_state-0" /
                                     "00000000000000000000.log") + " @ byte 400" in lines
    assert "#   the abort DISCARDS this producer's offsets 6..7: 1 batch, 2 records, 249 bytes" in lines


def _table(args, width=None, fmt="text"):
    import forensics.cli.state_cmd  # noqa: F401  (registers the commands)

    env = {"COLUMNS": str(width) if width else None}  # None: unset (a pipe, no width), whatever the shell says
    r = CliRunner().invoke(app, [*map(str, args), "--no-progress", "--engine", "local", "--format", fmt], env=env)
    assert r.exit_code == 0, r.output
    return r.stdout.splitlines()


def _cells(line: str):
    return [c.strip() for c in line.split("\t")[:-1]]


def test_list_shows_our_last_update_column_in_iso_and_kafkas_columns_as_kafka():
    lines = _table(["list", REPO / "fixtures" / "example-disk"])
    assert _cells(lines[0]) == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]  # Kafka's only
    assert _cells(lines[3]) == ["reporting-app", "1", "2002", "CompleteCommit"]
    wide = _table(["list", REPO / "fixtures" / "example-disk", "--wide"], fmt="table")
    assert any(line.startswith("│ reporting-app ") and f"│ {iso(1767225606750)} │" in line for line in wide)
    csv = _table(["list", REPO / "fixtures" / "example-disk"], fmt="csv")
    assert csv[0].split(",")[6] == "LastUpdateTimeMs" and csv[3].split(",")[6] == "1767225606750"  # ms kept


@pytest.mark.parametrize("disk", [REAL / "kraft-tv2" / "disk", SHARED / "kraft-tv2" / "data"])
def test_describe_gives_kafkas_start_time_in_ms_and_the_table_in_iso(disk):
    if not disk.is_dir():
        pytest.skip(f"{disk} is absent")
    lines = _table(["describe", disk, "--transactional-id", "d-tx-ongoing"], width=100)
    # kafka-transactions.sh describe on the live broker: CurrentTransactionStartTimeMs 1795211447934
    assert len(lines) == 2 and _cells(lines[1])[:7] == ["1", "d-tx-ongoing", "20", "0", "Ongoing", "110000", str(T)]
    duration_ms = int(_cells(lines[1])[7])
    screen = _table(["describe", disk, "--transactional-id", "d-tx-ongoing"], fmt="table")  # a pipe: lines whole
    assert (f"CurrentTransactionStartTime  2026-11-20T21:50:47.934Z ({T}), {duration(duration_ms)} before the "
            "as-of time") in screen
    assert any(line.startswith("│ 4 ") and "│ 2026-11-20T21:50:47.934Z │" in line for line in screen)  # history


def test_the_timeline_shows_iso_times():
    lines = _table(["describe-producers", REPO / "fixtures" / "example-disk", "--topic", "orders", "--partition", "0",
                    "--timeline", "--wide"], fmt="table")
    timeline = lines[next(i for i, line in enumerate(lines) if line.startswith("Transactions of orders-0")) + 1:]
    assert [c.strip() for c in timeline[1].strip("┃").split("┃")][-2:] == ["FirstTimestamp", "MarkerTimestamp"]
    assert f"│ {iso(1767225601501)} │ {iso(1767225602500)} │" in timeline[3]
    assert timeline[-2].endswith(f"│ {iso(1767225606251)} │ -                        │")  # open: no marker
    kafka = _table(["describe-producers", REPO / "fixtures" / "example-disk", "--topic", "orders", "--partition", "0"])
    assert _cells(kafka[2])[4] == "1767225606251"  # Kafka's describe-producers column: Kafka's ms
