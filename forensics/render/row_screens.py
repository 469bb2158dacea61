"""Row reports as screens for people (``--format table``): a table fitted to the screen as scan's are
(:mod:`forensics.render.table_fit`), the long texts of each row folded after it, one record as
``Field  value`` lines. Knows no Kafka rule: the caller gives its fields (their headers, layout and
cells; the state screens take them from the rows' declarations, :func:`forensics.columns.screen_columns`)
and texts.

Every cell and text goes through :func:`~forensics.render.terminal_text.term` (evidence text never
reaches the terminal raw). A width of None (``--wide``, or a file or a pipe without ``COLUMNS``)
prints every line whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from rich.cells import cell_len

if TYPE_CHECKING:  # (made by table_fit.fit_console when a screen is printed)
    from rich.console import Console

from forensics.columns import ABSENT, Cell, screen_columns
from forensics.render.table_fit import Column, fold, print_fitted
from forensics.render.terminal_text import term

INDENT = "    "


class Field(NamedTuple):
    """A column of a screen: its header and layout, and its cell text of a row."""

    column: Column
    text: Callable[[Any], str]  # of a typed row (forensics.columns)


def dash(value: Any) -> str:
    """A value as a cell shows it: as it is, ``-`` for None."""
    return "-" if value is None else str(value)


Texts = Mapping[str, Callable[[Any, Any], str]]  # Cell.text -> the cell of (row, value)


def declared_field(path: str, cell: Cell, texts: Texts) -> Field:
    """The screen's column of a row's field ``path`` (a dotted path: ``span.first_offset``) as its declared
    ``cell`` says, written by ``texts[cell.text]``; a column the row does not have is None."""
    get, write = attrgetter(path), texts[cell.text]

    def text(row: Any) -> str:
        value = get(row)
        return write(row, None if value is ABSENT else value)
    return Field(Column(cell.header, fold=cell.fold, drop=cell.drop, min_width=cell.min_width, path=cell.path), text)


def declared_fields(kind: type, wide: bool, texts: Texts, prefix: str = "") -> tuple[Field, ...]:
    """A row kind's screen (``wide``: with ``--wide``) as its fields declare it
    (:func:`forensics.columns.screen_columns`); ``prefix``: the path from the screen's row to one of ``kind``."""
    return tuple(declared_field(prefix + attr, cell, texts) for attr, cell in screen_columns(kind, wide))


def print_rows(console: Console, title: str | None, fields: Sequence[Field], rows: Sequence[Any],
               width: int | None) -> None:
    """The table of ``rows`` fitted to ``width`` (columns left out to fit are named under it)."""
    cells = [[term(f.text(r)) for f in fields] for r in rows]
    print_fitted(console, None if title is None else term(title), [f.column for f in fields], cells, width, floors=True)


def print_notes(console: Console, notes: Sequence[tuple[str, Sequence[str]]], width: int | None) -> None:
    """Each row's long texts: a heading that names the row, then each text indented, folded at ``width``."""
    write = console.file.write
    for heading, texts in notes:
        lines = fold(term(heading), width, "", INDENT)
        for text in texts:
            lines += fold(term(text), width, INDENT, INDENT * 2)
        write("".join(line + "\n" for line in lines))


def print_record(console: Console, fields: Sequence[tuple[str, str]], width: int | None) -> None:
    """One record as ``Name  value`` lines, the values aligned and folded under themselves."""
    pad = max((cell_len(name) for name, _ in fields), default=0) + 2
    lines: list[str] = []
    for name, value in fields:
        head = name + " " * (pad - cell_len(name))
        lines += fold(term(value), width, head, " " * pad) if value else [name]
    console.file.write("".join(line + "\n" for line in lines))
