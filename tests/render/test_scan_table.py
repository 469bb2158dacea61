"""scan's tables fit the screen: at 80, 100 and 160 columns (COLUMNS pins the width, as a terminal
would) every line fits, and the key numbers (HW, LSO, LSOLag, log start, open transactions, findings)
appear whole in their row, however long the topic names and offsets; internal topics with nothing to
look at are hidden and counted; --wide shows every column; a single segment file prints no empty
table; --topic / --partition select rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
import forensics.cli.scan_cmd  # noqa: F401
import forensics.cli.state_cmd  # noqa: F401
from forensics.cli.app import app
from tests.terminal_output import read_terminal

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
REAL = REPO / "fixtures" / "real" / "kraft-tv2" / "disk"
LONG = "payments-" + "x" * 100  # a long topic name (Kafka allows 249 characters)
BIG_HW = 98765432101234  # a high watermark wider than any header


def scan(*args, width=None) -> tuple[int, str, str]:
    env = {"COLUMNS": str(width) if width else None}  # None: unset (a pipe, no width), whatever the shell says
    r = CliRunner().invoke(app, ["scan", *map(str, args), "--no-progress", "--engine", "local"], env=env)
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def disk(tmp_path_factory) -> Path:
    """The example disk with a long topic name and a high watermark of 14 digits (orders-1)."""
    root = tmp_path_factory.mktemp("wide") / "broker-1"
    shutil.copytree(EXAMPLE / "broker-1", root)
    (root / "payments-0").rename(root / f"{LONG}-0")
    ckpt = root / "replication-offset-checkpoint"
    ckpt.write_text(ckpt.read_text().replace("orders 1 15\n", f"orders 1 {BIG_HW}\n").replace("payments 0", f"{LONG} 0"))
    return root


def _rows(stdout: str, title: str) -> list[list[str]]:
    """The rows of the table titled ``title``: cells stripped, a row's folded lines joined per cell."""
    lines = stdout.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(title))
    body = []
    for ln in lines[start + 4:]:
        if not ln.startswith("│"):
            break
        body.append([c.strip() for c in ln.strip("│").split("│")])
    rows: list[list[str]] = []
    for cells in body:
        if rows and not cells[-1]:  # a folded line continues the row above (every row has its Findings)
            rows[-1] = [a + b for a, b in zip(rows[-1], cells)]
        else:
            rows.append(cells)
    return rows


def _header(stdout: str, title: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(title))
    return [c.strip() for c in lines[start + 2].strip("┃").split("┃")]


def _expected(disk: Path) -> dict[str, dict[str, str]]:
    code, out, _ = scan(disk, "--format", "json")
    assert code == 0
    parts = [p for d in json.loads(out)["logDirs"] for p in d["partitions"]]

    def text(v):
        return "-" if v is None else str(v)

    return {f"{p['topic']}-{p['partition']}": {
        "HW": text(p["highWatermark"]), "LSO": text(p["lastStableOffset"]), "LSOLag": text(p["lastStableOffsetLag"]),
        "LogStart": text(p["logStartOffset"]), "Findings": str(len(p["findings"]) + sum(
            len(s["findings"]) for s in p["segments"]))} for p in parts}


@pytest.mark.parametrize("width", [80, 100, 160])
def test_every_line_fits_and_the_key_numbers_are_whole(disk, width):
    code, out, _ = scan(disk, width=width)
    assert code == 0
    assert max(cell_len(ln) for ln in out.splitlines()) <= width
    header = _header(out, "Partitions")
    assert {"Partition", "HW", "LSO", "LSOLag", "OpenTxns", "Findings"} <= set(header)
    rows = {r[header.index("Partition")]: dict(zip(header, r)) for r in _rows(out, "Partitions")}
    expected = _expected(disk)
    assert set(rows) == {name for name in expected if not name.startswith("__")}  # internal: quiet, hidden
    for name, row in rows.items():
        for column, value in expected[name].items():
            if column in row:
                assert row[column] == value, (width, name, column)
    assert (rows["orders-1"]["HW"], rows["orders-1"]["LSO"], rows["orders-1"]["LSOLag"]) == (str(BIG_HW), str(BIG_HW),
                                                                                           "0")  # no transaction
    assert rows["orders-0"]["OpenTxns"] == "1 (7 s)"  # as of the newest record: 7.049 s after its first batch
    assert f"{LONG}-0" in rows  # the long name folds within its cell, whole


def test_a_narrow_screen_says_which_columns_it_left_out(disk):
    _, out, _ = scan(disk, width=80)
    assert _header(out, "Partitions") == ["Partition", "HW", "LSO", "LSOLag", "OpenTxns", "Findings"]
    assert "(LogStart, Broker left out to fit 80 columns: --wide shows every column)" in out.splitlines()
    _, wide, _ = scan(disk, width=160)
    assert "LogStart" in _header(wide, "Partitions") and "left out" not in wide


def test_internal_topics_with_nothing_to_see_are_hidden_and_counted():
    _, out, _ = scan(EXAMPLE, width=100)
    assert "4 partitions of internal topics hidden (__cluster_metadata 1, __transaction_state 3): no LSO lag, open transaction or " \
           "finding; --internal shows them" in out.replace("\n", " ").replace("  ", " ")
    _, shown, _ = scan(EXAMPLE, "--internal", width=200)
    names = [r[1] for r in _rows(shown, "Partitions")]
    assert names == ["__cluster_metadata-0", "__transaction_state-0", "__transaction_state-1",
                     "__transaction_state-2", "orders-0", "orders-1", "payments-0"]
    assert "hidden" not in shown


def test_wide_shows_every_column_whole_whatever_the_screen(disk):
    _, out, _ = scan(disk, "--wide", width=80)
    assert _header(out, "Partitions") == ["Broker", "Partition", "TopicId", "Segments", "Bytes", "Batches", "Records",
                                          "Offsets", "LogStart", "HW", "LSO", "LSOLag", "OpenTxns", "Magic", "Codecs",
                                          "Findings"]
    rows = {r[1]: r for r in _rows(out, "Partitions")}
    assert rows["orders-1"][:3] == ["1", "orders-1", "f-Tnh5FaXzaWXySlSKPBOg"]
    assert rows["orders-0"][6:9] == ["16", "0..15", "0"]
    assert "Cluster" in _header(out, "Log directories")


def test_a_pipe_gets_whole_lines_without_columns_set(disk):
    _, out, _ = scan(disk)
    assert f"│ 1      │ {LONG}-0 │" in out  # no fold, no cut


def test_topic_and_partition_select_rows(disk):
    _, out, _ = scan(EXAMPLE, "--topic", "orders", "--partition", "1", width=100)
    assert [r[1] for r in _rows(out, "Partitions")] == ["orders-1"]
    _, internal, _ = scan(EXAMPLE, "--topic", "__transaction_state", width=100)  # asked for: shown
    assert len(_rows(internal, "Partitions")) == 3
    code, js, _ = scan(EXAMPLE, "--topic", "orders", "--format", "json")
    assert code == 0 and [p["partition"] for d in json.loads(js)["logDirs"] for p in d["partitions"]] == [0, 1]


def test_a_single_segment_file_prints_no_empty_table():
    code, out, _ = scan(EXAMPLE / "broker-1" / "orders-0" / "00000000000000000015.log", width=100)
    assert code == 0
    assert "Log directories" not in out and "Partitions" not in out
    assert out.splitlines()[0].startswith("As of 2026-01-01T00:00:13.000Z (1767225613000): newest batch timestamp")
    assert _rows(out, "Segment files")[0][1:] == ["139 bytes", "1", "1", "15..15", "2", "none", "0"]


def test_the_real_disk_at_100_columns():
    if not REAL.is_dir():
        pytest.skip(f"{REAL} is absent")
    _, out, _ = scan(REAL, width=100)
    assert max(cell_len(ln) for ln in out.splitlines()) <= 100
    header = _header(out, "Partitions")
    rows = {r[1]: dict(zip(header, r)) for r in _rows(out, "Partitions")}
    assert not [n for n in rows if n.startswith("__")]
    assert {k: rows["d-txn-ongoing-0"][k] for k in ("HW", "LSO", "LSOLag", "OpenTxns")} == {
        "HW": "5", "LSO": "2", "LSOLag": "3", "OpenTxns": "1 (12 s)"}


def _block(text: str) -> str:
    return "\n".join(ln.rstrip() for ln in text.splitlines()) + "\n"


@pytest.mark.parametrize("doc, args", [
    ("cli.md", ("scan", "fixtures/example-disk")),
    ("stuck-lso.md", ("scan", "fixtures/example-disk", "--as-of", "2026-01-01T01:00:00Z")),
    ("stuck-lso.md", ("find-hanging", "fixtures/example-disk", "--as-of", "2026-01-01T01:00:00Z")),
    ("cli.md", ("find-hanging", "fixtures/example-disk", "--as-of", "2026-01-01T01:00:00Z")),
    ("cli.md", ("list", "fixtures/example-disk")),
    ("cli.md", ("describe", "fixtures/example-disk", "--transactional-id", "reporting-app")),
    ("cli.md", ("describe-producers", "fixtures/example-disk", "--topic", "orders", "--partition", "0", "--timeline")),
])
def test_the_docs_show_the_screens_as_printed_at_100_columns(doc, args, monkeypatch):
    """docs/cli.md and docs/stuck-lso.md show these outputs exactly (run from the repository, TABs
    expanded as a terminal does, trailing blanks dropped; cli.md indents find-hanging's in a list)."""
    monkeypatch.chdir(REPO)
    r = CliRunner().invoke(app, [*args, "--no-progress", "--engine", "local"], env={"COLUMNS": "100"})
    assert r.exit_code in (0, 1), r.output
    screen = _block(r.stdout.expandtabs())
    text = (REPO / "docs" / doc).read_text(encoding="utf-8")
    indented = "".join("  " + ln + "\n" for ln in screen.splitlines())
    assert screen in text or indented in text


def test_on_a_terminal_the_table_fits_the_terminals_width():
    """A real terminal (a pty 90 columns wide, no COLUMNS): the width comes from the terminal."""
    import fcntl
    import os
    import pty
    import re
    import struct
    import sys
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the child: the command on the terminal
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        os.chdir(REPO)
        os.execve(sys.executable, [sys.executable, "-m", "forensics", "scan", "fixtures/example-disk", "--no-progress",
                                   "--engine", "local"], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 90, 0, 0))
    out = read_terminal(fd)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.decode()).replace("\r\n", "\n")
    table = text[text.index("Partitions"):]
    stdout = [ln for ln in text.splitlines() if not ln.startswith("file times look like")]  # stderr's note
    assert max(cell_len(ln) for ln in stdout) <= 90
    assert "│ 1      │ orders-0   │ 0        │ 16 │ 6   │ 10     │ 1 (7 s)  │ 0        │" in table
    assert "(Bytes left out to fit 90 columns: --wide shows every column)" in text


@pytest.mark.parametrize("width", [80, 100, 160])
def test_findings_keep_their_byte_positions_whole(width):
    corpus = REPO / "tests" / "corpus" / "bitflip-magic"
    _, out, _ = scan(corpus, width=width)
    lines = out[out.index("Findings (2)"):].splitlines()
    header = [c.strip() for c in lines[2].strip("┃").split("┃")]
    rows: list[list[str]] = []
    for ln in lines[4:]:
        if not ln.startswith("│"):
            break
        cells = [c.strip() for c in ln.strip("│").split("│")]
        if rows and not cells[0]:  # a folded line continues the row above
            rows[-1] = [a + (" " if a and b and i == len(cells) - 1 else "") + b
                        for i, (a, b) in enumerate(zip(rows[-1], cells))]
        else:
            rows.append(cells)
    found = {r[1]: dict(zip(header, r)) for r in rows}
    assert found["corrupt_region"]["Bytes"] == "119..262"
    assert found["corrupt_region"]["Path"] == f"{corpus}/00000000000000000000.log"
    assert found["corrupt_region"]["Message"] == "143 bytes skipped (unsupported magic byte 3); resynced at byte 262"
    assert ("Offsets" in header) == (width > 80)  # the first column left out on a narrow screen


def test_log_dir_paths_fold_only_after_a_slash(tmp_path, monkeypatch):
    """A log dir's path folded at 100 columns: every line of its cell ends after a '/', but the last
    (``fixtures/example-di`` / ``sk/broker-1`` was rich's fold); joined, the lines are the path."""
    root = Path("evidence") / "incident-42" / "kafka-b1" / "var" / "lib" / "kafka" / "data-1"
    shutil.copytree(EXAMPLE / "broker-1", tmp_path / root)
    monkeypatch.chdir(tmp_path)
    code, out, _ = scan(root, width=100)
    assert code == 0
    lines = out.splitlines()
    top = next(i for i, ln in enumerate(lines) if ln.startswith("Log directories"))
    cells = []
    for ln in lines[top + 4:]:
        if not ln.startswith("│"):
            break
        cells.append(ln.strip("│").split("│")[1].strip())
    assert len(cells) > 1, out  # the path folded
    assert all(c.endswith("/") for c in cells[:-1]), cells
    assert "".join(cells) == str(root)
    assert max(map(cell_len, lines)) <= 100
    assert "10.4 KiB" in lines[top + 4]  # sizes as on every screen (scan --wide: with the exact count)


def test_fold_path_breaks_after_slashes_and_within_a_name_only_when_it_must():
    from forensics.render.table_fit import fold_path

    assert fold_path("/work/shared/real-kafka/4.1.0/kraft-tv2/data", 15).split("\n") == [
        "/work/shared/", "real-kafka/", "4.1.0/", "kraft-tv2/data"]
    assert fold_path("d/" + "n" * 12 + "/x", 5).split("\n") == ["d/", "nnnnn", "nnnnn", "nn/x"]
    assert fold_path("(partition dirs given directly)", 12).split("\n") == ["(partition", "dirs given", "directly)"]
    assert fold_path("short/path", 20) == "short/path"
