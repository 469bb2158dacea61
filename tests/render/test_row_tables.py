"""find-hanging's ``--format text`` (kafka-transactions.sh's layout) at 80, 100 and 160 columns: the
same bytes at every width, Kafka's eight cells whole on each row's line, the values of the JSON rows,
and nothing under a row (the reasons are in the table, CSV and JSON)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
from forensics.cli.app import app
from tests.machine_output import rows_of

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real" / "kraft-tv2" / "disk"


def _run(*args, width=None):
    env = {"COLUMNS": str(width) if width else None}  # None: unset (a pipe, no width), whatever the shell says
    r = CliRunner().invoke(app, [*map(str, args), "--no-progress", "--engine", "local"], env=env)
    assert r.exit_code in (0, 1, 7), r.output
    return r.stdout


@pytest.mark.parametrize("width", [80, 100, 160])
def test_find_hanging_text_is_kafkas_eight_columns_at_any_width(width):
    if not REAL.is_dir():
        pytest.skip(f"{REAL} is absent")
    rows = rows_of(_run("find-hanging", REAL, "--all", "--format", "json"))
    lines = _run("find-hanging", REAL, "--all", "--format", "text", width=width).splitlines()
    assert all(ln.endswith("\t") for ln in lines)  # every line a table line: none under a row
    table = [[c.strip() for c in ln.split("\t")[:-1]] for ln in lines]
    assert table[0] == ["Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                        "LastTimestamp", "Duration(min)"]
    assert rows and table[1:] == [
        [r["topic"], str(r["partition"]), str(r["producerId"]), str(r["producerEpoch"]), str(r["coordinatorEpoch"]),
         str(r["startOffset"]), str(r["lastTimestamp"]), str(r["durationMin"])] for r in rows]
    assert _run("find-hanging", REAL, "--all", "--format", "text").splitlines() == lines  # a pipe: the same


@pytest.mark.parametrize("before_s, minutes", [(30, 0), (59, 0), (60, -1), (90, -1), (-90, 1)])
def test_duration_minutes_round_toward_zero_in_json_as_in_kafkas_text(before_s, minutes):
    """An as-of before a transaction's last batch (a clock behind the producer's) gives a negative
    duration: JSON's durationMin is Kafka's TimeUnit.MILLISECONDS.toMinutes, as the text table's."""
    disk = REPO / "fixtures" / "example-disk"
    (row,) = rows_of(_run("find-hanging", disk, "--format", "json"))
    as_of = row["lastTimestamp"] - before_s * 1000
    (row,) = rows_of(_run("find-hanging", disk, "--format", "json", "--as-of", as_of))
    assert (row["durationMs"], row["durationMin"]) == (-before_s * 1000, minutes)
    header, line = _run("find-hanging", disk, "--format", "text", "--as-of", as_of).splitlines()
    assert line.split("\t")[7].strip() == str(minutes)
