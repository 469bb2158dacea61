"""Renderers for row reports, chosen by name: ``text`` (kafka-transactions.sh layout), ``table`` (the
command's screen for people, :mod:`forensics.render.state_screens`; without one, ``text``), ``json``,
``jsonl``, ``csv``.

Rows are mappings keyed by lowerCamelCase column names (typed rows give theirs, see
:mod:`forensics.report.row`). Knows nothing of Kafka rules: the
caller says which keys are columns, in which order. Text in a row may come from the evidence: a
table cell shows it through :func:`~forensics.render.terminal_text.term` (no control character
reaches the terminal), a CSV cell through :func:`~forensics.render.csv_text.csv_text` (no
spreadsheet formula), JSON escapes it itself.
"""

from __future__ import annotations

import csv
import json
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, TextIO, Tuple

import textwrap

from forensics.render.csv_text import csv_text
from forensics.render.machine_format import MachineFormat
from forensics.render.table_fit import screen_width
from forensics.render.terminal_text import term
from forensics.report.row import as_mapping

Row = Dict[str, Any]


def header_of(key: str) -> str:
    """``producerId`` -> ``ProducerId`` (kafka-transactions.sh column spelling)."""
    return key[:1].upper() + key[1:]


def _plain(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_plain(v) for v in value)
    return str(value)


def _is_number(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_is_number(v) for v in value)
    return value is None or isinstance(value, (int, float))


def cell(value: Any) -> str:
    """A table cell: lists comma-joined, None as ``None``, text escaped for the terminal."""
    return term(_plain(value))


def csv_cell(value: Any) -> str:
    """A CSV cell: empty for None, numbers as they are, text neutralised for spreadsheets."""
    if value is None:
        return ""
    return _plain(value) if _is_number(value) else csv_text(_plain(value))


class Below(NamedTuple):
    """Long texts of a table row (a reason) printed under the row, not as columns: the columns they
    replace in the table (CSV and JSON keep them) and the lines they make of a row."""

    columns: Tuple[str, ...]
    lines: Callable[[Row], List[str]]


INDENT = "    "


def _below_lines(texts: Sequence[str], width: Optional[int]) -> str:
    """Each text on its own indented line; folded at ``width`` (None: whole) under its first words."""
    out = []
    for text in texts:
        shown = term(text)
        if width is None or len(INDENT) + len(shown) <= width:
            out.append(INDENT + shown + "\n")
            continue
        out.extend(line + "\n" for line in textwrap.wrap(shown, width, initial_indent=INDENT,
                                                           subsequent_indent=INDENT * 2, break_on_hyphens=False))
    return "".join(out)


Formats = Mapping[str, Callable[[Any], str]]  # a column's cell text in a table (times: render/time_text)
Screen = Callable[[Sequence[Row], TextIO], None]  # rows printed for people (render/state_screens)


def kafka_table(rows: Sequence[Row], columns: Sequence[str], headers: Sequence[str] = (),
                below: Optional[Below] = None, width: Optional[int] = None, formats: Optional[Formats] = None) -> str:
    """``ToolsUtils.prettyPrintTable``: every cell left-aligned, padded to its column's width and
    followed by a TAB (the last one too); header first. ``below``: the row's long texts (a reason),
    each on an indented line under the row (no TAB: never read as a row), folded at ``width``;
    ``formats``: the cell text of some columns (times as people read them; CSV and JSON keep the values)."""
    heads = list(headers) or [header_of(c) for c in columns]
    kept = [i for i, c in enumerate(columns) if below is None or c not in below.columns]
    shown = [(formats or {}).get(columns[i], cell) for i in kept]
    grid = [[heads[i] for i in kept]] + [[term(f(r.get(columns[i]))) for i, f in zip(kept, shown)] for r in rows]
    widths = [max(len(line[i]) for line in grid) for i in range(len(kept))]
    lines = ["".join(f"{v:<{w}}\t" for v, w in zip(line, widths)) + "\n" for line in grid]
    if below is not None:
        lines[1:] = [line + _below_lines(below.lines(r), width) for line, r in zip(lines[1:], rows)]
    return "".join(lines)


def render_json(rows: Sequence[Row], out: TextIO, machine: MachineFormat, manifest: Optional[Row] = None) -> None:
    """``{"format": ..., "formatVersion": N, "rows": [...]}`` (``rows`` an empty array when none), with
    ``"manifest": {...}`` before ``rows`` when given."""
    doc: Dict[str, Any] = machine.header()
    if manifest is not None:
        doc["manifest"] = manifest
    doc["rows"] = list(rows)
    json.dump(doc, out, indent=2, sort_keys=False)
    out.write("\n")


def render_jsonl(rows: Sequence[Row], out: TextIO, machine: MachineFormat, manifest: Optional[Row] = None) -> None:
    """A first line ``{"format": ..., "formatVersion": N}``, then one row per line (the same objects as
    :func:`render_json`); with a manifest reference, a last line ``{"manifest": {...}}``."""
    out.write(json.dumps(machine.header()) + "\n")
    for r in rows:
        out.write(json.dumps(r) + "\n")
    if manifest is not None:
        out.write(json.dumps({"manifest": manifest}) + "\n")


def render_csv(rows: Sequence[Row], columns: Sequence[str], out: TextIO) -> None:
    w = csv.writer(out, lineterminator="\n")
    w.writerow([header_of(c) for c in columns])
    for r in rows:
        w.writerow([csv_cell(r.get(c)) for c in columns])


def render_rows(fmt: str, machine: MachineFormat, rows: Sequence[Row], columns: Sequence[str], out: TextIO,
                extra_tables: Callable[[Sequence[Row]], List[str]] = lambda rows: [],
                headers: Sequence[str] = (), manifest: Optional[Row] = None, below: Optional[Below] = None,
                formats: Optional[Formats] = None, screen: Optional[Screen] = None) -> None:
    """Render ``rows`` in format ``fmt``; ``machine``: the command's JSON/JSONL output (its name and
    version, :mod:`forensics.render.machine_format`); ``screen``: what ``table`` prints (else ``text``'s lines);
    ``extra_tables`` adds text blocks after the ``text`` lines;
    ``headers`` overrides the table's column titles; ``manifest`` (path and digest of the evidence
    manifest) is embedded in JSON; ``below``, ``formats``: see :func:`kafka_table`. A row is a mapping of
    its columns or a typed row (:class:`~forensics.report.row.JsonRow`)."""
    rows = [as_mapping(r) for r in rows]
    if fmt == "json":
        render_json(rows, out, machine, manifest)
    elif fmt == "jsonl":
        render_jsonl(rows, out, machine, manifest)
    elif fmt == "csv":
        render_csv(rows, columns, out)
    elif fmt == "table" and screen is not None:
        screen(rows, out)
    else:
        out.write(kafka_table(rows, columns, headers, below, screen_width(out), formats))
        for block in extra_tables(rows):
            out.write("\n" + block)
