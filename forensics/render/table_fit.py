"""Tables that fit the screen: which columns a text table shows at a given width, and how wide the
screen is. Knows no Kafka rule: the caller names its columns, says which fold (names, paths) and
which may be left out at a narrow width; a number is never cut (its column never wraps).

A table at a width W shows every column when its natural width fits; else its folding columns give
way down to their minimum (rich folds their text onto more lines), and when that is not enough the
columns that may be left out go, in the caller's order, until the rest fits. ``--wide`` callers pass
no width: every column, as wide as it needs.
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, NamedTuple, TextIO

from rich.cells import cell_len, chop_cells

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

from forensics.render.table_text import print_table

NO_LIMIT = 1_000_000  # a console this wide never folds a line (a file or a pipe)


class Column(NamedTuple):
    header: str
    fold: bool = False  # long text folds within the cell (names, paths, messages); else never wraps
    drop: int = 0  # 0: always shown; else may be left out to fit, the highest first
    min_width: int = 12  # a folding column's narrowest, before another column is left out for it
    path: bool = False  # a folding column of paths: folded after a '/' (or a space), within a name only when
    #                     the name alone is wider than the column


def screen_width(out: TextIO) -> int | None:
    """The width to fit: ``COLUMNS`` when set (tests and documentation pin it), else the terminal's;
    None for a file or a pipe (every line whole)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(out.fileno()).columns if out.isatty() else None
    except (AttributeError, OSError, ValueError):  # no descriptor, or not a terminal after all
        return None


def _width(cols: Sequence[int], widths: Sequence[int]) -> int:
    """A rich box table's width: each cell padded by one space each side, a rule before each column
    and one after the last."""
    return sum(widths[i] + 3 for i in cols) + 1


def _natural(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> list[int]:
    return [max([cell_len(c.header)] + [cell_len(r[i]) for r in rows]) for i, c in enumerate(columns)]


def _floor(column: Column, natural: int) -> int:
    """The narrowest a column gets: a folding one its minimum (its header never broken), or less when
    nothing in it is wider; any other its widest cell."""
    return min(natural, max(column.min_width, cell_len(column.header))) if column.fold else natural


def fit(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None) -> tuple[list[int], list[str]]:
    """The indexes of the columns shown at ``width`` (None: all), and the headers left out."""
    shown = list(range(len(columns)))
    if width is None:
        return shown, []
    natural = _natural(columns, rows)
    narrow = [_floor(c, n) for n, c in zip(natural, columns)]
    left_out: list[str] = []
    for i in sorted((i for i, c in enumerate(columns) if c.drop), key=lambda i: -columns[i].drop):
        if _width(shown, narrow) <= width:
            break
        shown.remove(i)
        left_out.append(columns[i].header)
    return shown, left_out


def fold_widths(columns: Sequence[Column], rows: Sequence[Sequence[str]], shown: Sequence[int],
                width: int | None) -> dict[int, int]:
    """The widths of the folding columns that must give way for the ``shown`` ones to fit ``width``:
    the widest first, one column at a time, none below its minimum (nor its header's width)."""
    natural = _natural(columns, rows)
    widths = {i: natural[i] for i in shown}
    excess = 0 if width is None else _width(shown, natural) - width
    while excess > 0:
        folding = [i for i in shown if columns[i].fold and widths[i] > _floor(columns[i], natural[i])]
        if not folding:
            break
        widest = max(folding, key=lambda i: widths[i])
        widths[widest] -= 1
        excess -= 1
    return {i: w for i, w in widths.items() if w < natural[i]}


def make_table(title: str | None, columns: Sequence[Column], rows: Sequence[Sequence[str]],
               shown: Sequence[int] | None = None, widths: dict[int, int] | None = None) -> Table:
    """A rich table of ``rows`` (text cells) with the ``shown`` columns: folding ones fold (at their
    ``widths`` where given, else where rich folds them), the others never wrap."""
    from rich.table import Table  # (loaded when a table is printed: JSON and CSV never load it)

    keep = list(range(len(columns))) if shown is None else list(shown)
    table = Table(title=title, title_justify="left")
    for i in keep:
        c = columns[i]
        table.add_column(c.header, no_wrap=not c.fold, overflow="fold" if c.fold else "ellipsis",
                         width=(widths or {}).get(i))
    for r in rows:
        table.add_row(*(r[i] for i in keep))
    return table


@cache
def _fit_console_class() -> type[Console]:
    """rich's console, except that a closed pipe is left to the command line (which ends the
    command quietly, exit 0) instead of rich's ``SystemExit(1)`` (made when a screen is first printed:
    rich's console costs a tenth of a command's imports, and JSON and CSV never print one)."""
    from rich.console import Console

    class FitConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError
    return FitConsole


def fit_console(out: TextIO, width: int | None) -> Console:
    """A console onto ``out`` ``width`` columns wide (None: never folds), with markup, emoji codes and
    highlighting off (no text from the evidence is ever read as rich markup)."""
    return _fit_console_class()(file=out, width=width or NO_LIMIT, highlight=False, soft_wrap=False, markup=False, emoji=False)


_PATH_PIECE = re.compile(r"[^/ ]*(?:/+| +)|[^/ ]+$")


def fold_path(text: str, width: int) -> str:
    """``text`` as lines of at most ``width`` cells joined by newlines, each line ending after a '/'
    (or a space): ``/work/shared/`` ``real-kafka/4.1.0/`` ``kraft-tv2/data``; a name wider than a
    line alone is cut within it."""
    lines: list[str] = []
    line = ""
    for piece in _PATH_PIECE.findall(text):
        if line and cell_len(line + piece.rstrip(" ")) > width:
            lines.append(line.rstrip(" "))
            line = ""
        if cell_len(piece.rstrip(" ")) > width:
            *whole, line = chop_cells(piece, width)
            lines += whole
        else:
            line += piece
    return "\n".join(lines + [line.rstrip(" ")]) if line.strip(" ") or not lines else "\n".join(lines)


def _fold_paths(console: Console, table: Table, columns: Sequence[Column], rows: Sequence[Sequence[str]],
                shown: Sequence[int], widths: dict[int, int] | None) -> tuple[list[list[str]], dict[int, int]] | None:
    """The rows with the cells of path columns folded at '/' to the widths rich gives those columns in
    ``table``, and the widths that keep them there; None when no path cell is wider than its column."""
    paths = [k for k, i in enumerate(shown) if columns[i].path]
    if not paths or _width(shown, _natural(columns, rows)) <= console.options.max_width:
        return None  # nothing folds (rich's measuring of every cell is skipped: a table may hold 50,000 rows)
    try:  # rich's own share of the width (private: another rich version folds as before)
        given = table._calculate_column_widths(console, console.options.update_width(
            console.options.max_width - table._extra_width))
    except (AttributeError, TypeError):  # pragma: no cover - a rich without these
        return None
    folded = [list(r) for r in rows]
    out = dict(widths or {})
    for k in paths:
        i, inner = shown[k], given[k] - 2  # a cell is padded by one space each side
        if inner > 0 and any(cell_len(r[i]) > inner for r in rows):
            out[i] = inner
            for r in folded:
                r[i] = fold_path(r[i], inner)
    return (folded, out) if out != (widths or {}) else None


def print_fitted(console: Console, title: str | None, columns: Sequence[Column], rows: Sequence[Sequence[str]],
                 width: int | None, floors: bool = False) -> None:
    """The table of ``rows`` fitted to ``width`` (None: every column), and a line naming the columns
    left out to fit; ``floors``: no folding column narrower than its minimum (:func:`fold_widths`),
    else rich shares the width out. Path columns fold after a '/' (:func:`fold_path`)."""
    shown, left_out = fit(columns, rows, width)
    widths = fold_widths(columns, rows, shown, width) if floors else None
    table = make_table(title, columns, rows, shown, widths)
    folded = _fold_paths(console, table, columns, rows, shown, widths) if width is not None else None
    if folded is not None:
        table = make_table(title, columns, folded[0], shown, folded[1])
    print_table(console, table)
    if left_out:
        console.print(f"({', '.join(left_out)} left out to fit {width} columns: --wide shows every column)")


def fold(text: str, width: int | None, indent: str = "", more: str = "") -> list[str]:
    """``text`` as lines of at most ``width`` columns (None: one line), the first after ``indent``,
    the next after ``more``; broken between words, a word longer than a line (a path) within it."""
    if width is None or cell_len(indent + text) <= width:
        return [indent + text]
    width = max(width, len(indent) + 20, len(more) + 20)  # a line of a few words whatever the indent
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=more, break_on_hyphens=False) \
        or [indent + text]
