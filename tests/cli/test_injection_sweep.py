"""The injection sweep (issue 15): every hostile disk of ``fixtures/hostile.py`` through every
command and every format, in-process on the local engine. Whatever a disk holds, nothing may reach
stdout or stderr that a terminal would run (a raw control, C1 or bidi character: ``term``'s rules),
no CSV cell may start like a formula, no output may lose evidence text to rich markup, and no run
may end in an internal error (exit 70, or an exception out of the command).

Exempt by design: ``dump`` in text form prints keys, payloads and file names exactly as Kafka's
``kafka-dump-log.sh`` does (its stdout is checked to be valid text, its stderr like every other).
The script of ``abort-commands`` is the shell sink's (forensics/render/shell_text.py): it joins
the sweep when that sink is in place (see the skipped test below).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.dump_cmd  # noqa: F401  (registers the commands)
import forensics.cli.hanging_cmd  # noqa: F401
import forensics.cli.report_cmd  # noqa: F401
import forensics.cli.scan_cmd  # noqa: F401
import forensics.cli.state_cmd  # noqa: F401
from fixtures import hostile
from forensics.cli.app import EXIT_CODES, EXIT_INTERNAL, app
from forensics.render.csv_text import FORMULA_STARTS
from forensics.render.terminal_text import has_raw_control, term
from tests.machine_output import rows_of

REPO = Path(__file__).resolve().parents[2]
LOCAL = ("--engine", "local", "--no-progress")
runner = CliRunner()


@pytest.fixture(scope="module")
def disks(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hostile")
    return dict(zip(hostile.PAYLOADS, hostile.build_all(root)))


def _commands(name: str, disk: Path) -> list[tuple[str, Sequence[str]]]:
    """(format, argv) of every command on one hostile disk."""
    payload = hostile.PAYLOADS[name]
    topic = hostile.name_part(payload)  # the directory name, as discovery reads it
    segment = next(p for p in disk.iterdir() if p.name == f"{topic}-0") / "00000000000000000000.log"
    out: list[tuple[str, Sequence[str]]] = [(f, ("scan", str(disk), "--format", f)) for f in ("table", "json")]
    for fmt in ("table", "text", "json", "csv"):
        out += [(fmt, ("find-hanging", str(disk), "--all", "--format", fmt)),
                (fmt, ("list", str(disk), "--format", fmt)),
                (fmt, ("describe", str(disk), "--transactional-id", hostile.as_java_string(payload), "--format", fmt)),
                (fmt, ("describe-producers", str(disk), "--topic", topic, "--partition", "0", "--timeline",
                       "--format", fmt))]
    out += [(f, ("dump", str(segment), "--print-data-log", "--format", f)) for f in ("text", "json")]
    return out


def _check_csv(text: str, where: str) -> None:
    for row in csv.reader(io.StringIO(text)):
        for c in row:
            assert not c.startswith(FORMULA_STARTS) or c.lstrip("-").isdigit(), f"{where}: formula cell {c!r}"
            assert ";=" not in c and ";+" not in c and ";@" not in c, f"{where}: formula after ';' in {c!r}"


def _check(name: str, fmt: str, args: Sequence[str], code: int, out: str, err: str) -> list[str]:
    """What is wrong with one run's output (nothing, as a rule)."""
    where = f"{name}: {' '.join(args[:1])} --format {fmt}"
    problems = []
    if code == EXIT_INTERNAL or code not in EXIT_CODES:
        problems.append(f"{where}: exit {code}: {err[-300:]!r}")
    dump_text = args[0] == "dump" and fmt == "text"
    if not dump_text and has_raw_control(out):
        problems.append(f"{where}: raw control character on stdout")
    if has_raw_control(err):
        problems.append(f"{where}: raw control character on stderr: {err[:300]!r}")
    if fmt == "csv":
        try:
            _check_csv(out, where)
        except AssertionError as exc:
            problems.append(str(exc))
    if args[0] == "scan" and fmt == "table":  # rich must show the evidence text, not read it as markup
        shown = term(hostile.name_part(hostile.PAYLOADS[name]))[:12]
        if shown not in out:
            problems.append(f"{where}: {shown!r} (the topic) missing from the table")
    return problems


def test_no_hostile_disk_injects_anything_into_any_output(disks) -> None:
    problems: list[str] = []
    runs = 0
    for name, disk in disks.items():
        for fmt, args in _commands(name, disk):
            # catch_exceptions=False: an exception out of a command (exit 70 in real life) fails the test
            result = runner.invoke(app, [*args, *(LOCAL if args[0] != "dump" else ())], catch_exceptions=False)
            runs += 1
            problems += _check(name, fmt, args, result.exit_code, result.stdout, result.stderr)
    assert runs == len(disks) * 20
    assert not problems, "\n".join(problems[:20])


def test_the_sweep_can_fail(disks, monkeypatch) -> None:
    """With the terminal and CSV sinks switched off, the checks above report every payload."""
    import forensics.render.row_screens as screens
    import forensics.render.rows as rows

    monkeypatch.setattr(rows, "term", str)
    monkeypatch.setattr(rows, "csv_text", str)
    monkeypatch.setattr(screens, "term", str)
    name = "ansi-clear"
    for fmt in ("table", "text"):
        args = ("find-hanging", str(disks[name]), "--all", "--format", fmt)
        result = runner.invoke(app, [*args, *LOCAL], catch_exceptions=False)
        assert _check(name, fmt, args, result.exit_code, result.stdout, result.stderr)
    name = "csv-dde"
    args = ("find-hanging", str(disks[name]), "--all", "--format", "csv")
    result = runner.invoke(app, [*args, *LOCAL], catch_exceptions=False)
    assert _check(name, "csv", args, result.exit_code, result.stdout, result.stderr)


@pytest.mark.skipif(not (REPO / "forensics" / "render" / "shell_text.py").exists(),
                    reason="the abort script joins the sweep with the shell sink (forensics/render/shell_text.py, "
                           "issue 15 items 1 and 4), which is not in this tree yet")
def test_abort_script_sweep(disks) -> None:
    """``abort-commands`` on every hostile disk: the script holds no raw control character."""
    problems: list[str] = []
    for name, disk in disks.items():
        args = ("abort-commands", str(disk), "--bootstrap-server", "broker:9092")
        result = runner.invoke(app, [*args, *LOCAL], catch_exceptions=False)
        problems += _check(name, "script", args, result.exit_code, result.stdout, result.stderr)
    assert not problems, "\n".join(problems[:20])


def test_the_hostile_disks_hold_what_they_claim(disks) -> None:
    """The generator really planted each payload: in the log dir's path, a topic directory, a
    transactional id the coordinator holds and a consumer group stuck at the LSO."""
    for name in ("newline-forged-row", "invalid-utf8", "long"):
        disk, payload = disks[name], hostile.PAYLOADS[name]
        assert os.fsencode(disk).find(hostile.raw(payload)[:100].replace(b"/", b"_").replace(b"\x00", b"_")) > 0
        result = runner.invoke(app, ["find-hanging", str(disk), "--format", "json", *LOCAL], catch_exceptions=False)
        [row] = rows_of(result.stdout)
        assert row["topic"] == hostile.name_part(payload) and row["transactionalId"] == hostile.as_java_string(payload)
        if name != "invalid-utf8":  # the commit names the topic as a Java string: not the directory's bytes
            assert row["abortPreview"]["stuckConsumerGroups"][0]["group"] == payload
