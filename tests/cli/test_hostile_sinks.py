"""Hostile evidence cannot restyle, forge or inject anything on the investigator's side (issue 15,
items 2 and 3): every attack of the issue against the terminal, rich and CSV sinks, on disks made by
``fixtures/hostile.py``, with the exact escaped form asserted and the raw character never present.

The whole matrix (every payload, command and format) is the sweep in test_injection_sweep.py.
"""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.dump_cmd  # noqa: F401  (registers the commands)
import forensics.cli.hanging_cmd  # noqa: F401
import forensics.cli.scan_cmd  # noqa: F401
import forensics.cli.state_cmd  # noqa: F401
from fixtures import hostile
from forensics.cli.app import app
from tests.engine_lines import BY_OPTION
from tests.machine_output import rows_of
from tests.terminal_output import read_terminal

LOCAL = ("--engine", "local", "--no-progress")
TEXT = ("--format", "text")  # kafka-transactions.sh's lines: a cell is what precedes a TAB
AS_OF = ("--as-of", "1767225700000")  # 100 s after the disks' first record: durations are fixed
runner = CliRunner()
NAMES = ("ansi-clear", "osc-title", "newline-forged-row", "carriage-return", "c1-csi", "bidi-override", "rich-link",
         "rich-close", "emoji-code", "csv-hyperlink", "csv-dde", "csv-minus", "csv-at", "csv-semicolon",
         "invalid-utf8")


@pytest.fixture(scope="module")
def disks(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hostile")
    return {name: hostile.build(name, root / name) for name in NAMES}


def cli(*args) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def rows(text: str) -> list[list[str]]:
    """kafka-transactions.sh table lines as cells (each cell is followed by a tab)."""
    return [[c.rstrip() for c in line.split("\t")[:-1]] for line in text.splitlines()]


# -- the terminal: control characters shown escaped ---------------------------------------------------


def test_ansi_escapes_in_a_topic_and_id_are_shown_not_run(disks) -> None:
    code, out, err = cli("find-hanging", disks["ansi-clear"], *LOCAL, *AS_OF, *TEXT)
    shown = "\\x1b[2J\\x1b[H\\x1b[31mred"
    assert code == 1
    assert rows(out)[1] == [shown, "0", "4242", "0", "-1", "2", "1767225600400", "1"]  # Kafka's columns only
    _, screen, _ = cli("find-hanging", disks["ansi-clear"], *LOCAL, *AS_OF)  # the table: the reason under it
    assert (f"    reason: coordinator has '{shown}' in CompleteCommit (epoch 0): no transaction in flight, no marker "
            "will come") in screen.splitlines()  # a pipe gets it whole
    assert "\x1b" not in out + err + screen
    assert err.splitlines()[:2] == [BY_OPTION, "as of 2026-01-01T00:01:40.000Z (1767225700000): --as-of"]
    assert f"/logs{shown}/broker-1/cleaner-offset-checkpoint, byte 4: line 3: malformed entry '{shown} 0 x'" \
        in err.splitlines()[2]


def test_a_title_setting_sequence_is_shown_not_run(disks) -> None:
    code, out, err = cli("list", disks["osc-title"], *LOCAL, *TEXT)
    assert code == 0
    assert rows(out)[1][0] == "\\x1b]0;owned\\x07title"
    assert "\x1b" not in out + err and "\x07" not in out + err


@pytest.mark.parametrize("command", [("find-hanging", *AS_OF), ("list",), ("describe", "--transactional-id")])
def test_a_newline_cannot_forge_a_table_row(disks, command) -> None:
    payload = hostile.PAYLOADS["newline-forged-row"]
    args = [*command, payload] if command[0] == "describe" else list(command)
    code, out, err = cli(args[0], disks["newline-forged-row"], *args[1:], *LOCAL, *TEXT)
    assert code in (0, 1), err
    rows_ = out.splitlines()
    assert len(rows_) == 2 and all(ln.endswith("\t") for ln in rows_)  # Kafka's header and the one row, alone
    assert "x\\ntouch PWNED\\n#" in rows_[1]
    assert "\ntouch PWNED" not in out + err


@pytest.mark.parametrize("name, shown", [
    ("carriage-return", "safe\\rFORGED"),
    ("c1-csi", "\\u009b2J\\u0085next"),
    ("bidi-override", "evil\\u202egnp.exe\\u2066x\\u2069"),
    ("invalid-utf8", "bad\\xff\\xfe\\xc3("),
])
def test_other_invisible_characters_are_shown_escaped(disks, name, shown) -> None:
    code, out, err = cli("find-hanging", disks[name], *LOCAL, *AS_OF, *TEXT)
    assert code == 1
    assert rows(out)[1][0] == shown  # the topic, from the directory name
    for raw in ("\r", "\x9b", "\x85", "\u202e", "\u2066", "\udcff"):
        assert raw not in out + err


@pytest.mark.parametrize("name, shown", [
    ("ansi-clear", "\\x1b[2J\\x1b[H\\x1b[31mred"),
    ("carriage-return", "safe\\rFORGED"),
    ("c1-csi", "\\u009b2J\\u0085next"),
    ("bidi-override", "evil\\u202egnp.exe\\u2066x\\u2069"),
    ("invalid-utf8", "bad\\xff\\xfe\\xc3("),
])
def test_the_screens_for_people_show_the_evidence_escaped(disks, name, shown) -> None:
    """The default table (every column whole with --wide): the topic escaped in its cell and in the
    line under the table, nothing raw."""
    code, out, err = cli("find-hanging", disks[name], *LOCAL, *AS_OF, "--wide")
    assert code == 1
    assert f"│ {shown}-0 " in out and out.count(f"{shown}-0, producer 4242") == 1
    for raw in ("\x1b", "\r", "\x9b", "\x85", "\u202e", "\u2066", "\udcff"):
        assert raw not in out + err


def test_evidence_in_an_error_line_is_escaped(tmp_path: Path) -> None:
    code, out, err = cli("scan", tmp_path / "gone\x1b[2J\nforged", *LOCAL)
    assert code == 3 and out == ""
    assert err == f"kafka-forensics: {tmp_path}/gone\\x1b[2J\\nforged: no such file or directory\n"


def test_a_note_about_copies_of_a_disk_names_them_escaped(disks, tmp_path: Path) -> None:
    copy = tmp_path / "b\x1b[2J"
    shutil.copytree(disks["ansi-clear"], copy)
    code, out, err = cli("list", disks["ansi-clear"], copy, *LOCAL)
    assert code == 0 and "\x1b" not in out + err
    note = err.splitlines()[0]
    assert note.startswith("kafka-forensics: broker 1 of cluster \\x1b[2J\\x1b[H\\x1b[31mred is in 2 log dirs")
    assert f"{tmp_path}/b\\x1b[2J" in note and "/logs\\x1b[2J\\x1b[H\\x1b[31mred/broker-1" in note


# -- rich: no markup, no emoji codes read from data ------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("name, literal", [
    ("rich-link", "[link=file:evil]click[blink]"),
    ("rich-close", "[/b] zz [/i]"),  # in the log dir's path, the as-of line and a checkpoint line
    ("emoji-code", ":smile:"),
])
def test_scan_never_reads_rich_markup_from_the_evidence(disks, name, literal) -> None:
    code, out, err = cli("scan", disks[name], *LOCAL)
    assert code == 0, err  # a stray closing tag made rich raise MarkupError (exit 70)
    assert literal in out
    assert "😄" not in out
    if name == "rich-close":
        assert "/logs[/b] zz [/i]/broker-1/__transaction_state-0/00000000000000000000.log;" in out  # as-of line


def test_on_a_terminal_a_markup_link_stays_text(disks, monkeypatch) -> None:
    from forensics.render.scan_render import render_scan_table
    from forensics.runs.rebuild import scan

    monkeypatch.setenv("COLUMNS", "400")  # wide enough for the cells not to wrap
    screen = _Terminal()
    render_scan_table(scan([str(disks["rich-link"])]), screen)
    text = screen.getvalue()
    assert "\x1b[1m" in text or "\x1b[" in text  # a terminal: rich styles the headers
    assert "\x1b]8;" not in text  # no OSC 8 hyperlink
    assert "[link=file:evil]click[blink]" in text and "\x1b[5m" not in text  # no blink either


# -- CSV: no formula reaches a spreadsheet ----------------------------------------------------------------


@pytest.mark.parametrize("name, topic, transactional_id", [
    ("csv-hyperlink", '\'=HYPERLINK("evil.example","click")', '\'=HYPERLINK("evil.example","click")'),
    ("csv-dde", "'+cmd|' _C calc'!A0", "'+cmd|' /C calc'!A0"),
    ("csv-minus", "'-2+3+cmd|' _C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
    ("csv-at", "'@SUM(1+1)*cmd|' _C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0"),
    ("csv-semicolon", "ok;'=1+1", "ok;'=1+1"),
])
def test_csv_cells_cannot_be_formulas(disks, name, topic, transactional_id) -> None:
    code, out, err = cli("find-hanging", disks[name], *LOCAL, *AS_OF, "--format", "csv")
    assert code == 1, err
    header, row = list(csv.reader(io.StringIO(out)))
    cells = dict(zip(header, row))
    assert (cells["Topic"], cells["TransactionalId"]) == (topic, transactional_id)
    assert (cells["Partition"], cells["CoordinatorEpoch"], cells["StartOffset"]) == ("0", "-1", "2")  # numbers
    assert cells["Reason"].startswith("coordinator has ")
    assert transactional_id[1:] if transactional_id.startswith("'") else transactional_id in cells["Reason"]
    for command in (("list",), ("describe", "--transactional-id", hostile.as_java_string(hostile.PAYLOADS[name]))):
        code, out, err = cli(command[0], disks[name], *command[1:], *LOCAL, "--format", "csv")
        assert code == 0, err
        (head, *body) = list(csv.reader(io.StringIO(out)))
        assert body and all(not c.startswith(("=", "+", "@", "\t", "\r")) for r in body for c in r)
        assert all(not c.startswith("-") or c.lstrip("-").isdigit() for r in body for c in r)
        assert dict(zip(head, body[0]))["TransactionalId"] == transactional_id


def test_json_keeps_the_exact_values(disks) -> None:
    code, out, _ = cli("find-hanging", disks["invalid-utf8"], *LOCAL, *AS_OF, "--format", "json")
    [row] = rows_of(out)
    assert row["topic"] == "bad\udcff\udcfe\udcc3("  # the directory name, byte for byte
    assert row["transactionalId"] == "bad\ufffd\ufffd\ufffd("  # as Kafka decodes the id's bytes
    assert out.isascii()


# -- dump: Kafka's bytes on stdout, our findings escaped on stderr ------------------------------------------


def test_dump_text_prints_records_as_kafka_does_and_findings_escaped(disks, tmp_path: Path) -> None:
    segment = next(disks["ansi-clear"].glob("*-0/00000000000000000000.log"))
    damaged = tmp_path / "\x1b[2J-0" / segment.name
    damaged.parent.mkdir()
    damaged.write_bytes(segment.read_bytes() + b"\x00" * 30)
    code, out, err = cli("dump", damaged, "--print-data-log")
    assert code == 0
    # kafka-dump-log.sh prints keys and payloads as UTF-8, control characters included: so do we
    assert out.startswith(f"Dumping {damaged}\n") and "key: \x1b[2J\x1b[H\x1b[31mred payload:" in out
    assert err.startswith(f"warning: zero_fill: {tmp_path}/\\x1b[2J-0/{segment.name}") and "\x1b" not in err
    code, out, err = cli("dump", damaged, "--print-data-log", "--format", "json")
    assert "\x1b" not in out + err and "\\u001b[2J" in out


def test_dump_text_on_a_terminal_shows_the_records_control_characters_escaped(disks) -> None:
    """Piped, dump's text is Kafka's bytes; on a terminal (a real pty here) a record cannot clear the
    screen or set the title: the same lines with the control characters escaped."""
    import os
    import pty
    import subprocess
    import sys

    segment = next(disks["ansi-clear"].glob("*-0/00000000000000000000.log"))
    args = [sys.executable, "-m", "forensics", "dump", str(segment), "--print-data-log"]
    piped = subprocess.run(args, capture_output=True, text=True, timeout=120)
    primary, secondary = pty.openpty()
    with subprocess.Popen(args, stdout=secondary, stderr=subprocess.PIPE) as proc:
        os.close(secondary)
        written = read_terminal(primary, timeout=120)
        proc.wait(timeout=120)
    os.close(primary)
    shown = written.decode().replace("\r\n", "\n")  # the pty's own line discipline
    assert proc.returncode == piped.returncode == 0
    assert "key: \x1b[2J\x1b[H\x1b[31mred payload:" in piped.stdout
    assert "\x1b" not in shown and "key: \\x1b[2J\\x1b[H\\x1b[31mred payload:" in shown
    assert shown == piped.stdout.replace("\x1b", "\\x1b")
