"""The row tables (kafka-transactions.sh's layout) at 80, 100 and 160 columns: Kafka's cells whole on
the row's line whatever the width, the long texts under the row folded to the width, never cut."""

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
def test_find_hanging_rows_whole_and_reasons_folded(width):
    if not REAL.is_dir():
        pytest.skip(f"{REAL} is absent")
    rows = rows_of(_run("find-hanging", REAL, "--all", "--format", "json"))
    lines = _run("find-hanging", REAL, "--all", "--format", "text", width=width).splitlines()
    table = [[c.strip() for c in ln.split("\t")[:-1]] for ln in lines if ln.endswith("\t")]
    assert [r[:8] for r in table[1:]] == [
        [r["topic"], str(r["partition"]), str(r["producerId"]), str(r["producerEpoch"]), str(r["coordinatorEpoch"]),
         str(r["startOffset"]), str(r["lastTimestamp"]), str(r["durationMin"])] for r in rows]
    under = [ln for ln in lines if not ln.endswith("\t")]
    assert under and all(ln.startswith("    ") and len(ln) <= width for ln in under)
    text = " ".join(ln.strip() for ln in under)
    for r in rows:  # each reason whole once the folded lines are joined
        assert f"reason: {r['reason']}" in text
