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
from typing import List, NamedTuple, Optional, Sequence, TextIO, Tuple

from rich.cells import cell_len
from rich.table import Table

NO_LIMIT = 1_000_000  # a console this wide never folds a line (a file or a pipe)


class Column(NamedTuple):
    header: str
    fold: bool = False  # long text folds within the cell (names, paths, messages); else never wraps
    drop: int = 0  # 0: always shown; else may be left out to fit, the highest first
    min_width: int = 12  # a folding column's narrowest, before another column is left out for it


def screen_width(out: TextIO) -> Optional[int]:
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


def fit(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: Optional[int]) -> Tuple[List[int], List[str]]:
    """The indexes of the columns shown at ``width`` (None: all), and the headers left out."""
    shown = list(range(len(columns)))
    if width is None:
        return shown, []
    natural = [max([cell_len(c.header)] + [cell_len(r[i]) for r in rows]) for i, c in enumerate(columns)]
    narrow = [min(n, c.min_width) if c.fold else n for n, c in zip(natural, columns)]
    left_out: List[str] = []
    for i in sorted((i for i, c in enumerate(columns) if c.drop), key=lambda i: -columns[i].drop):
        if _width(shown, narrow) <= width:
            break
        shown.remove(i)
        left_out.append(columns[i].header)
    return shown, left_out


def make_table(title: Optional[str], columns: Sequence[Column], rows: Sequence[Sequence[str]],
               shown: Optional[Sequence[int]] = None) -> Table:
    """A rich table of ``rows`` (text cells) with the ``shown`` columns: folding ones fold, the others
    never wrap."""
    keep = list(range(len(columns))) if shown is None else list(shown)
    table = Table(title=title, title_justify="left")
    for i in keep:
        c = columns[i]
        table.add_column(c.header, no_wrap=not c.fold, overflow="fold" if c.fold else "ellipsis")
    for r in rows:
        table.add_row(*(r[i] for i in keep))
    return table
