"""Parser for the live broker's ``kafka-transactions.sh`` outputs saved under ``ground-truth/broker-view-*/``.

Kafka prints tables with ``ToolsUtils.prettyPrintTable``: one row per line, header first, every cell
left-aligned and right-padded with spaces to its column's width and followed by a TAB, the last cell
included (``TransactionsCommand``). The saved files put context lines before the tables:

* ``$ kafka-transactions.sh describe-producers --topic T --partition P`` (before-d view), or
  ``# T-P`` (at-stop ``describe-producers-d.txt``), before each describe-producers table;
* ``$ kafka-transactions.sh describe --transactional-id X`` before each describe table (before-d), which
  may be followed by an error line instead of a table (``Failed to describe transaction state ...``);
* ``$ ... list`` before the list table (before-d only).

Cells: the literal ``None`` becomes ``None``; integer cells become ``int``; cells of the string columns
(transactional id, state, partitions) stay strings even when they look like numbers. ``TopicPartitions``
of describe tables is turned into a list of ``topic-partition`` strings (empty cell: ``[]``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

STRING_COLUMNS = frozenset({"TransactionalId", "TransactionState", "TopicPartitions"})
_INT = re.compile(r"-?\d+\Z")
_DESCRIBE_PRODUCERS_CMD = re.compile(r"describe-producers\b.*--topic\s+(\S+)\s+--partition\s+(\d+)")
_DESCRIBE_CMD = re.compile(r"\bdescribe\b.*--transactional-id\s+(\S+)")

Cell = int | str | None | list[str]
Row = dict[str, Cell]


@dataclass
class Table:
    """One printed table and the context line (``$ ...`` or ``# ...``) that preceded it, if any."""

    context: str | None
    header: list[str]
    rows: list[Row] = field(default_factory=list)
    raw_lines: list[str] = field(default_factory=list)  # header + rows exactly as printed (no newline)


@dataclass
class Section:
    """What followed one context line: a table, or free text (e.g. an error message), or nothing."""

    context: str | None
    table: Table | None = None
    text: list[str] = field(default_factory=list)


def split_cells(line: str) -> list[str]:
    """Cells of one printed table line with the padding removed (the trailing TAB is required)."""
    if not line.endswith("\t"):
        raise ValueError(f"not a kafka-transactions.sh table line (no trailing TAB): {line!r}")
    return [cell.rstrip(" ") for cell in line[:-1].split("\t")]


def strip_padding(line: str) -> str:
    """``'ProducerId\\tProducerEpoch  \\t'`` -> ``'ProducerId\\tProducerEpoch\\t'``: each cell without padding."""
    return "".join(cell + "\t" for cell in split_cells(line))


def convert(column: str, cell: str) -> Cell:
    if column in STRING_COLUMNS:
        return cell
    if cell == "None":
        return None
    if _INT.match(cell):
        return int(cell)
    return cell


def _is_table_line(line: str) -> bool:
    return line.endswith("\t")


def parse_sections(text: str) -> list[Section]:
    """Split a saved output file into sections; a ``$``/``#`` line or a blank line starts a new one."""
    sections: list[Section] = []
    current: Section | None = None
    for line in text.split("\n"):
        if line.startswith("$ ") or line.startswith("# "):
            current = Section(context=line[2:].strip())
            sections.append(current)
            continue
        if line.strip() == "":
            if current is not None and (current.table is not None or current.text):
                current = None  # a blank line closes the table/text of the section
            continue
        if current is None:
            current = Section(context=None)
            sections.append(current)
        if _is_table_line(line):
            if current.table is None:
                current.table = Table(context=current.context, header=split_cells(line), raw_lines=[line])
            else:
                cells = split_cells(line)
                if len(cells) != len(current.table.header):
                    raise ValueError(f"row has {len(cells)} cells, header {len(current.table.header)}: {line!r}")
                current.table.rows.append({h: convert(h, c) for h, c in zip(current.table.header, cells)})
                current.table.raw_lines.append(line)
        else:
            current.text.append(line)
    return sections


def parse_tables(text: str) -> list[Table]:
    return [s.table for s in parse_sections(text) if s.table is not None]


def _read(path: str | Path) -> str:
    return Path(path).read_text(encoding="utf-8")


# -- describe-producers --------------------------------------------------------------------------------


def _topic_partition(context: str | None) -> tuple[str, int]:
    if context is None:
        raise ValueError("describe-producers table without a '$ ...' or '# T-P' line before it")
    m = _DESCRIBE_PRODUCERS_CMD.search(context)
    if m:
        return m.group(1), int(m.group(2))
    topic, _, partition = context.rpartition("-")
    if not topic or not partition.isdigit():
        raise ValueError(f"cannot read topic-partition from {context!r}")
    return topic, int(partition)


def describe_producers_tables(path: str | Path) -> dict[tuple[str, int], list[Row]]:
    """``{(topic, partition): rows}`` for every table in the file, including empty ones (no producers)."""
    out: dict[tuple[str, int], list[Row]] = {}
    for table in parse_tables(_read(path)):
        topic, partition = _topic_partition(table.context)
        if (topic, partition) in out:
            raise ValueError(f"{path}: {topic}-{partition} printed twice")
        out[(topic, partition)] = [dict(row, topic=topic, partition=partition) for row in table.rows]
    return out


def describe_producers_raw(path: str | Path) -> dict[tuple[str, int], list[str]]:
    """``{(topic, partition): [header line, row lines...]}`` exactly as Kafka printed them."""
    return {_topic_partition(t.context): list(t.raw_lines) for t in parse_tables(_read(path))}


def parse_describe_producers(path: str | Path) -> list[Row]:
    """Every describe-producers row of the file with ``topic`` and ``partition`` attached."""
    return [row for rows in describe_producers_tables(path).values() for row in rows]


# -- list ----------------------------------------------------------------------------------------------


def parse_list(path: str | Path) -> list[Row]:
    """Rows of the (single) ``kafka-transactions.sh list`` table of the file."""
    tables = parse_tables(_read(path))
    if len(tables) != 1:
        raise ValueError(f"{path}: expected one list table, found {len(tables)}")
    return list(tables[0].rows)


# -- describe ------------------------------------------------------------------------------------------


def _describe_row(row: Row) -> Row:
    row = dict(row)
    parts = row.get("TopicPartitions")
    row["TopicPartitions"] = [p for p in parts.split(",") if p] if isinstance(parts, str) else []
    return row


def parse_describe(path: str | Path) -> tuple[dict[str, Row], dict[str, str]]:
    """``({transactional id: row}, {transactional id: error text})`` of every describe in the file.

    The id comes from the table's ``TransactionalId`` cell; it must agree with the ``$ ... describe
    --transactional-id X`` line when there is one. Sections without a table (the broker could not find
    the id) are returned as errors keyed by the id of their ``$`` line.
    """
    rows: dict[str, Row] = {}
    errors: dict[str, str] = {}
    for section in parse_sections(_read(path)):
        wanted = None
        if section.context is not None:
            m = _DESCRIBE_CMD.search(section.context)
            wanted = m.group(1) if m else None
        if section.table is None:
            if wanted is not None:
                errors[wanted] = "\n".join(section.text)
            continue
        for row in section.table.rows:
            txid = row["TransactionalId"]
            if wanted is not None and txid != wanted:
                raise ValueError(f"{path}: describe of {wanted!r} printed a row for {txid!r}")
            rows[str(txid)] = _describe_row(row)
    return rows, errors


# -- one broker view directory -------------------------------------------------------------------------


@dataclass
class BrokerView:
    name: str  # "broker-view-at-stop" / "broker-view-before-d"
    describe_producers: dict[tuple[str, int], list[Row]]
    list_rows: list[Row]
    describe: dict[str, Row]
    describe_errors: dict[str, str]


def load_view(view_dir: str | Path) -> BrokerView:
    """Read ``describe-producers*.txt``, ``transactions-list.txt`` and the describe outputs of one view."""
    view_dir = Path(view_dir)
    producers: dict[tuple[str, int], list[Row]] = {}
    for f in sorted(view_dir.glob("describe-producers*.txt")):
        producers.update(describe_producers_tables(f))
    describe: dict[str, Row] = {}
    errors: dict[str, str] = {}
    describe_files = [f for f in sorted(view_dir.glob("describe-*.txt")) if not f.name.startswith("describe-producers")]
    describe_files += sorted(view_dir.glob("transactions-describe*.txt"))
    for f in describe_files:
        rows, errs = parse_describe(f)
        describe.update(rows)
        errors.update(errs)
    list_file = view_dir / "transactions-list.txt"
    return BrokerView(name=view_dir.name, describe_producers=producers,
                      list_rows=parse_list(list_file) if list_file.is_file() else [],
                      describe=describe, describe_errors=errors)
