"""Every command's stderr is readable at 100 columns: the engine line is one line of at most 100
characters for ordinary sizes; the as-of line and the other notes fold at the screen width (COLUMNS,
else the terminal's), their next lines indented, and go whole into a file or a pipe, as scan's tables
do; findings stay one line each (to grep). On the example disk and the real disks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.evidence  # noqa: F401  (registers the commands)
import forensics.cli.hanging_cmd  # noqa: F401
import forensics.cli.report_cmd  # noqa: F401
import forensics.cli.scan_cmd  # noqa: F401
import forensics.cli.state_cmd  # noqa: F401
from forensics.cli.app import app
from tests.screen_disks import DISKS, EXAMPLE, REPO

COMMANDS = [("scan",), ("find-hanging", "--all"), ("list",), ("describe", "--transactional-id", "{id}"),
            ("describe-producers", "--topic", "{topic}", "--partition", "0"),
            ("abort-commands", "--bootstrap-server", "kafka:9092"), ("report", "--out", "{tmp}/report.html", "--overwrite")]
FINDING = ("error: ", "warning: ", "info: ")  # a finding's one line (Finding.one_line)


def _log_bytes(disk: Path) -> int:
    return sum(p.stat().st_size for p in disk.rglob("*.log"))


def stderr(args, disk: Path, tmp: Path, width: int | None) -> list[str]:
    real = disk.resolve() != EXAMPLE
    fill = {"id": "d-tx-ongoing" if real else "reporting-app", "topic": "d-txn-ongoing" if real else "orders",
            "tmp": str(tmp)}
    env = {"KAFKA_FORENSICS_ENGINE": None, "COLUMNS": str(width) if width else None}
    r = CliRunner().invoke(app, [args[0], str(disk), *(a.format(**fill) for a in args[1:]), "--no-progress"], env=env)
    assert r.exit_code in (0, 1, 7), r.output
    return r.stderr.splitlines()


@pytest.mark.parametrize("disk", DISKS)
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_every_line_fits_100_columns_and_unfolds_into_a_pipe(args, disk, tmp_path):
    if not disk.is_dir():
        pytest.skip(f"{disk} is absent")
    if os.cpu_count() == 1 and args[0] != "describe":
        pytest.skip("one core: the engine line gives another reason")
    folded, whole = stderr(args, disk, tmp_path, 100), stderr(args, disk, tmp_path, None)
    assert all(len(line) <= 100 for line in folded if not line.startswith(FINDING)), folded
    engine = [line for line in folded if line.startswith("kafka-forensics: engine ")]
    assert len(engine) == 1 and engine[0] in whole  # one line, the same whatever the width
    joined: list[str] = []
    for line in folded:  # a note's next lines are indented: joined, they give the pipe's lines (a word
        if line.startswith("    ") and joined:  # longer than a line, a path, is broken within it as scan's are)
            joined[-1] += " " + line.strip()
        else:
            joined.append(line)
    assert [line.replace(" ", "") for line in joined] == [line.replace(" ", "") for line in whole]
    assert len(joined) == len(whole)


def test_the_engine_line_names_the_size_and_the_threshold_in_100_columns(tmp_path):
    lines = stderr(("find-hanging",), EXAMPLE, tmp_path, 100)
    size = f"{_log_bytes(EXAMPLE) / 1024:.1f} KiB"
    line = f"kafka-forensics: engine local (in-process): {size} of logs; Spark is not faster on one machine"
    if os.cpu_count() == 1:
        pytest.skip("one core: the engine line gives another reason")
    assert lines[0] == line and len(line) <= 100


def test_the_as_of_line_folds_at_the_screen_width(tmp_path):
    lines = stderr(("find-hanging",), EXAMPLE, tmp_path, 100)
    at = next(i for i, line in enumerate(lines) if line.startswith("as of "))
    assert lines[at] == "as of 2026-01-01T00:00:13.300Z (1767225613300): newest batch timestamp, in"
    more = [line for line in lines[at + 1:at + 4] if line.startswith("    ")]
    assert len(more) >= 2 and all(len(line) <= 100 for line in lines)
    assert more[-1].endswith("clean shutdown recorded (.kafka_cleanshutdown)")
    whole = stderr(("find-hanging",), EXAMPLE, tmp_path, None)
    assert next(line for line in whole if line.startswith("as of ")).replace(" ", "") == "".join(
        line.strip() for line in [lines[at], *more]).replace(" ", "")


def test_stuck_lso_shows_the_as_of_lines_as_printed_at_100_columns(monkeypatch, tmp_path):
    """docs/stuck-lso.md's as-of lines are the printed ones (run from the repository; the file times'
    note that follows them depends on the checkout's time)."""
    monkeypatch.chdir(REPO)
    lines = stderr(("find-hanging",), Path("fixtures/example-disk"), tmp_path, 100)
    at = next(i for i, line in enumerate(lines) if line.startswith("as of "))
    end = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith("    "))
    shown = "```\n" + "".join(line + "\n" for line in lines[at:end]) + "file times look like copy times: "
    assert shown in (REPO / "docs" / "stuck-lso.md").read_text(encoding="utf-8")
