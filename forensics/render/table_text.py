"""Print a rich :class:`~rich.table.Table` of plain one-line cells without rich's per-cell layout.

rich lays out and renders every cell as a renderable (padding, text, wrap, crop, segments) and
holds the whole table's segments before writing the first line: a 50,000-row scan table took
three times the CPU of its JSON and over 800 MiB. Where the outcome is known in advance (no
colours, every cell a printable one-line string that rich would not read as markup or emoji, the
table at its natural width within the console's, no wrapping, styles, sections or footer),
:func:`print_table` writes the very lines rich would, one row at a time, using rich's own box and
cell-width functions; in every other case it hands the table to rich.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len

if TYPE_CHECKING:  # (rich's console and tables are loaded by who makes them: JSON and CSV never do)
    from rich.box import Box
    from rich.console import Console
    from rich.table import Table


def _plain(console: Console, text: object) -> str | None:
    """``text`` if rich would print it as is, on one line; else None."""
    if not isinstance(text, str) or not text.isprintable():
        return None
    if (console._markup and "[" in text) or (console._emoji and ":" in text):
        return None
    return text


def _simple(table: Table) -> bool:
    """A table whose rendering is the plain grid: what :func:`_lines` writes."""
    return (table.box is not None and table.show_edge and table.show_header and not table.show_footer
            and not table.show_lines and not table.leading and not table.expand and table.width is None
            and table.min_width is None and tuple(table.padding) == (0, 1, 0, 1) and table.pad_edge
            and not table.collapse_padding and not table.caption and not table.row_styles
            and table.title_justify == "left" and not any(r.end_section for r in table.rows)
            and all(c.justify == "left" and c.width is None and c.min_width is None and c.max_width is None
                    and c.ratio is None for c in table.columns))


def _lines(table: Table, box: Box, cells: list[list[str]], widths: list[int], title: str | None):
    inner = [w - 2 for w in widths]
    width = sum(widths) + len(widths) + 1
    if title is not None:
        yield title + " " * (width - cell_len(title))
    yield box.get_top(widths)
    rows = len(cells[0])
    for i in range(rows):
        left, mid, right = ((box.head_left, box.head_vertical, box.head_right) if i == 0 else
                            (box.foot_left, box.foot_vertical, box.foot_right) if i == rows - 1 else
                            (box.mid_left, box.mid_vertical, box.mid_right))
        yield left + mid.join(" " + c[i] + " " * (w - cell_len(c[i]) + 1) for c, w in zip(cells, inner)) + right
        if i == 0:
            yield box.get_row(widths, "head", edge=True)
    yield box.get_bottom(widths)


def print_table(console: Console, table: Table) -> None:
    """``console.print(table)``, byte for byte, written row by row where it is a plain grid."""
    cells: list[list[str]] = []
    title = _plain(console, table.title) if table.title else None
    fast = (console.color_system is None and not console.record and not console._buffer_index and _simple(table)
            and (title is not None or not table.title))
    for column in table.columns if fast else ():
        col = [_plain(console, column.header)] + [_plain(console, c) for c in column.cells]
        plain = [c for c in col if c is not None]
        if len(plain) != len(col):
            fast = False
            break
        cells.append(plain)
    widths = [max(map(cell_len, col)) + 2 for col in cells]
    table_width = sum(widths) + len(widths) + 1
    # (a fast table has its box, _simple says so: the test of it tells the type checker)
    if not fast or table.box is None or not cells or table_width > console.options.max_width or (
            title is not None and cell_len(title) > table_width):
        console.print(table)
        return
    box = table.box.substitute(console.options, safe=table.safe_box if table.safe_box is not None
                               else console.safe_box)
    write = console.file.write
    for line in _lines(table, box, cells, widths, title):
        write(line + "\n")


__all__ = ["print_table"]
