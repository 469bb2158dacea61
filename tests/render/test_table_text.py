"""print_table writes what rich writes, byte for byte, whichever path it takes."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table

from forensics.render import table_text
from forensics.render.table_text import print_table
from tests.tiers import examples

# plain text, spaces, wide characters, rich markup and emoji openers, a newline and a tab
CELLS = st.text(alphabet=st.sampled_from(list("ab -./09_") + ["表", "é", "[", "]", ":", "\n", "\t"]), max_size=12)


def _console(out: io.StringIO, width: int, markup: bool, emoji: bool) -> Console:
    return Console(file=out, width=width, highlight=False, soft_wrap=False, markup=markup, emoji=emoji)


def _table(title, headers, rows, no_wrap: bool) -> Table:
    t = Table(title=title, title_justify="left")
    for h in headers:
        t.add_column(h, no_wrap=no_wrap)
    for r in rows:
        t.add_row(*r)
    return t


def _out(write) -> str:
    out = io.StringIO()
    try:
        write(out)
    except Exception as exc:  # rich refuses some markup: so must we, the same way
        return f"raised {type(exc).__name__}"
    return out.getvalue()


def _both(width, markup, emoji, title, headers, rows, no_wrap):
    return (_out(lambda o: print_table(_console(o, width, markup, emoji), _table(title, headers, rows, no_wrap))),
            _out(lambda o: _console(o, width, markup, emoji).print(_table(title, headers, rows, no_wrap))))


@settings(max_examples=examples(400), deadline=None)
@given(st.integers(20, 220), st.booleans(), st.booleans(), st.one_of(st.none(), CELLS),
       st.integers(1, 5).flatmap(lambda n: st.tuples(st.lists(CELLS, min_size=n, max_size=n),
                                                     st.lists(st.lists(CELLS, min_size=n, max_size=n), max_size=6))),
       st.booleans())
def test_the_same_bytes_as_rich(width, markup, emoji, title, table, no_wrap) -> None:
    headers, rows = table
    ours, theirs = _both(width, markup, emoji, title, headers, rows, no_wrap)
    assert ours == theirs


def test_a_plain_grid_is_written_without_rich(monkeypatch) -> None:
    """The fast path is really taken for a plain table (else the test above proves nothing about it)."""
    calls = []
    monkeypatch.setattr(Console, "print", lambda self, *a, **k: calls.append(a))
    out = io.StringIO()
    print_table(_console(out, 220, True, True), _table("Partitions", ["Topic", "Bytes"], [["orders", "12"]], True))
    assert calls == [] and out.getvalue() == (
        "Partitions        \n┏━━━━━━━━┳━━━━━━━┓\n┃ Topic  ┃ Bytes ┃\n┡━━━━━━━━╇━━━━━━━┩\n│ orders │ 12    │\n"
        "└────────┴───────┘\n")
    assert table_text.__all__ == ["print_table"]


def test_too_wide_or_marked_up_goes_to_rich(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(Console, "print", lambda self, *a, **k: calls.append(a))
    print_table(_console(io.StringIO(), 20, True, True), _table(None, ["Topic"], [["x" * 30]], True))
    print_table(_console(io.StringIO(), 220, True, True), _table(None, ["Topic"], [["[b]x"]], True))
    assert len(calls) == 2
