"""One helper per sink for text from the evidence: the terminal (``term``), CSV (``csv_text``), the
tables and CSV rows built on them, and the HTML escaping sharing the terminal's table."""

from __future__ import annotations

import csv
import io

import pytest

from forensics.render.csv_text import csv_text
from forensics.render.html_text import esc
from forensics.render.rows import KafkaColumn, KafkaLayout, cell, csv_cell, kafka_table, render_csv
from forensics.render.terminal_text import ESCAPES, has_raw_control, term


@pytest.mark.parametrize("raw, shown", [
    ("orders-0", "orders-0"),
    ("\x1b[2J", "\\x1b[2J"),
    ("\x1b]0;owned\x07", "\\x1b]0;owned\\x07"),
    ("a\nb\rc\td", "a\\nb\\rc\\td"),
    ("\x00\x7f", "\\x00\\x7f"),
    ("\x9b2J\x85", "\\u009b2J\\u0085"),
    ("evil\u202egnp.exe\u2066\u2069\u200f\u061c\u2028", "evil\\u202egnp.exe\\u2066\\u2069\\u200f\\u061c\\u2028"),
    ("pay\u200bments\ufeff\u2060", "pay\\u200bments\\ufeff\\u2060"),  # zero-width: two names alike
    ("bad\udcff\udcc3", "bad\\xff\\xc3"),  # bytes that are not UTF-8, as os.listdir carries them
    ("lone\ud800", "lone\\ud800"),
    ("ünïcödé 東京 \\x1b", "ünïcödé 東京 \\x1b"),  # letters of every script, and backslashes, as they are
    (None, ""),
    (42, "42"),
])
def test_term_shows_controls_escaped(raw, shown) -> None:
    assert term(raw) == shown
    assert not has_raw_control(term(raw).replace("\\", ""))
    shown.encode("utf-8")  # always printable on a UTF-8 terminal


def test_every_escaped_character_is_a_control_bidi_or_surrogate() -> None:
    import unicodedata

    for c in ESCAPES:
        assert unicodedata.category(chr(c)) in ("Cc", "Cf", "Cs", "Zl", "Zp") or c == 0x2065, hex(c)  # unassigned
    assert has_raw_control("a\x1bb") and not has_raw_control("a\nb\tc") and has_raw_control("\u202e")


@pytest.mark.parametrize("raw, shown", [
    ('=HYPERLINK("evil.example","click")', '\'=HYPERLINK("evil.example","click")'),
    ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
    ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
    ("@SUM(1+1)", "'@SUM(1+1)"),
    ("\t=1+1", "\\t=1+1"),  # escaped first: no raw tab, and the cell starts with a backslash
    ("\r=1+1", "\\r=1+1"),
    ("ok;=1+1;-2;x", "ok;'=1+1;'-2;x"),  # a spreadsheet splitting on ';' would start a cell there
    ("orders-0", "orders-0"),
    ("a=b", "a=b"),
    ("\x1b[2J", "\\x1b[2J"),
])
def test_csv_text_neutralises_formulas(raw, shown) -> None:
    assert csv_text(raw) == shown


def test_csv_cells_keep_numbers_as_numbers() -> None:
    assert [csv_cell(v) for v in (-1, 0, None, True, [-1, 2], ("-x", 1), "-1")] == \
        ["-1", "0", "", "true", "-1,2", "'-x,1", "'-1"]


def test_table_cells_escape_and_align_on_the_escaped_text() -> None:
    assert cell(["a\nb", "c"]) == "a\\nb,c"
    layout = KafkaLayout((KafkaColumn("Topic", lambda r: r["topic"]), KafkaColumn("Partition", lambda r: str(r["partition"]))))
    table = kafka_table([{"topic": "x\nFORGED\tROW", "partition": 0}], layout)
    assert table == "Topic         \tPartition\t\nx\\nFORGED\\tROW\t0        \t\n"
    assert table.count("\n") == 2


def test_csv_rows_quote_and_neutralise() -> None:
    out = io.StringIO()
    render_csv([{"topic": "=1+1", "partition": -1, "reason": 'a "b"\nc'}], ["topic", "partition", "reason"], out)
    assert out.getvalue() == "Topic,Partition,Reason\n'=1+1,-1,\"a \"\"b\"\"\\nc\"\n"
    assert list(csv.reader(io.StringIO(out.getvalue())))[1] == ["'=1+1", "-1", 'a "b"\\nc']


def test_html_shares_the_table_but_keeps_whitespace() -> None:
    assert esc("<b>\x1b[2J\u202e\udcff\x85\n\t") == "&lt;b&gt;\\x1b[2J\\u202e\\xff\\u0085\n\t"
