"""Renderers for row reports, chosen by name: ``text`` (the table Kafka's own tool prints, its columns
only: :mod:`forensics.render.kafka_text`), ``table`` (the command's screen for people,
:mod:`forensics.render.state_screens`), ``json``, ``jsonl``, ``csv``.

Rows are typed (:mod:`forensics.columns`: each kind declares its columns once): JSON and JSONL print
each row's JSON object, CSV the columns the kind declares (by their JSON keys), Kafka's table and the
screen read the rows' fields. Knows nothing of Kafka rules: the caller says which columns, in which
order. Text in a row may come from the evidence: a
table cell shows it through :func:`~forensics.render.terminal_text.term` (no control character
reaches the terminal), a CSV cell through :func:`~forensics.render.csv_text.csv_text` (no
spreadsheet formula), JSON escapes it itself.
"""

from __future__ import annotations

import csv
import json
from typing import Any, NamedTuple, TextIO
from collections.abc import Callable, Mapping, Sequence

from forensics.render.csv_text import csv_text
from forensics.render.machine_format import MachineFormat
from forensics.render.terminal_text import term
from forensics.columns import JsonRow


def header_of(key: str) -> str:
    """``producerId`` -> ``ProducerId`` (kafka-transactions.sh column spelling)."""
    return key[:1].upper() + key[1:]


def plain(value: Any) -> str:
    """A value as Kafka's tools write it (``String.valueOf``): lists comma-joined, None as ``None``
    (the word Kafka's tool prints for an absent value), booleans ``true``/``false``."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(plain(v) for v in value)
    return str(value)


def _is_number(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_is_number(v) for v in value)
    return value is None or isinstance(value, (int, float))


def cell(value: Any) -> str:
    """A table cell: lists comma-joined, None as ``None``, text escaped for the terminal."""
    return term(plain(value))


def csv_cell(value: Any) -> str:
    """A CSV cell: empty for None, numbers as they are, text neutralised for spreadsheets."""
    if value is None:
        return ""
    return plain(value) if _is_number(value) else csv_text(plain(value))


Screen = Callable[[Sequence[Any], TextIO], None]  # typed rows printed for people (render/state_screens)


class KafkaColumn(NamedTuple):
    """A column of one of Kafka's tool tables: its header and its cell of a row, as the tool writes it."""

    header: str
    text: Callable[[Any], str]


class KafkaLayout(NamedTuple):
    """What ``--format text`` prints of a command's rows: Kafka's columns, in the order Kafka's tool
    lists the rows (``order``)."""

    columns: tuple[KafkaColumn, ...]
    order: Callable[[Sequence[Any]], Sequence[Any]] = lambda rows: rows


def _java_length(text: str) -> int:
    """``String.length()``: UTF-16 code units (a character outside the BMP counts twice)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def kafka_table(rows: Sequence[Any], layout: KafkaLayout) -> str:
    """``ToolsUtils.prettyPrintTable``: the header, then each row; every cell left-aligned, padded with
    spaces to its column's width (``String.length()``) and followed by a TAB, the last one too; no
    row: the header alone. Nothing else: no folding at any width, no line of ours."""
    grid = [[c.header for c in layout.columns]] + [[term(c.text(r)) for c in layout.columns]
                                                    for r in layout.order(rows)]
    widths = [max(_java_length(line[i]) for line in grid) for i in range(len(layout.columns))]
    return "".join("".join(v + " " * (w - _java_length(v)) + "\t" for v, w in zip(line, widths)) + "\n"
                   for line in grid)


def render_json(rows: Sequence[Mapping[str, Any]], out: TextIO, machine: MachineFormat,
                manifest: Mapping[str, Any] | None = None) -> None:
    """``{"format": ..., "formatVersion": N, "rows": [...]}`` (``rows`` an empty array when none), with
    ``"manifest": {...}`` before ``rows`` when given."""
    doc: dict[str, Any] = machine.header()
    if manifest is not None:
        doc["manifest"] = manifest
    doc["rows"] = list(rows)
    json.dump(doc, out, indent=2, sort_keys=False)
    out.write("\n")


def render_jsonl(rows: Sequence[Mapping[str, Any]], out: TextIO, machine: MachineFormat,
                 manifest: Mapping[str, Any] | None = None) -> None:
    """A first line ``{"format": ..., "formatVersion": N}``, then one row per line (the same objects as
    :func:`render_json`); with a manifest reference, a last line ``{"manifest": {...}}``."""
    out.write(json.dumps(machine.header()) + "\n")
    for r in rows:
        out.write(json.dumps(r) + "\n")
    if manifest is not None:
        out.write(json.dumps({"manifest": manifest}) + "\n")


def render_csv(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], out: TextIO) -> None:
    """``columns`` (JSON keys) of each row's JSON object, headed as Kafka spells them."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow([header_of(c) for c in columns])
    for r in rows:
        w.writerow([csv_cell(r.get(c)) for c in columns])


def render_rows(fmt: str, machine: MachineFormat, rows: Sequence[JsonRow], columns: Sequence[str], out: TextIO, *,
                text: KafkaLayout, screen: Screen, manifest: Mapping[str, Any] | None = None) -> None:
    """Render ``rows`` in format ``fmt``: ``table`` is the command's ``screen`` for people, ``text`` Kafka's
    tool's table of them (``text``: its columns), ``csv`` the ``columns``, ``json``/``jsonl`` the command's
    ``machine`` output (its name and version, :mod:`forensics.render.machine_format`); ``manifest`` (path
    and digest of the evidence manifest) is embedded in JSON. ``columns``: the JSON keys of the CSV
    columns (:func:`forensics.columns.csv_columns` of the rows' kind)."""
    if fmt == "json":
        render_json([r.as_json() for r in rows], out, machine, manifest)
    elif fmt == "jsonl":
        render_jsonl([r.as_json() for r in rows], out, machine, manifest)
    elif fmt == "csv":
        render_csv([r.as_json() for r in rows], columns, out)
    elif fmt == "table":
        screen(rows, out)
    else:
        out.write(kafka_table(rows, text))
