"""Rows declared once: frozen dataclasses built by keyword, whose fields are their columns.

A row kind is one declaration: its fields in output order, each a :func:`column` that may say more
than its name and type (``field(metadata=column(...))``): the key it has in JSON (default: the field's name in lowerCamelCase,
``producer_id`` -> ``producerId``, as Kafka's tools and our JSON name it), its place among the CSV
columns (``csv=N``), its header and place in Kafka's tool table (``kafka=(N, "Header")``, with the
text that tool prints for an absent value, ``absent``), and its name and type in an export table
(``export="long!"``; ``!``: never null), and its cell in the ``--format table`` screens for people
(``table=Cell(N, "Header", ...)`` at the screen's width, ``wide=Cell(...)`` with ``--wide``: its place,
header, how the cell writes it, whether it folds or may be left out to fit), and what the HTML report
calls it (``label=Label(...)``). A value computed from the others is a :func:`derived`
column: stored nowhere, printed where its declaration places it (``after`` a field). Everything a
renderer prints of a row comes from here: :meth:`JsonRow.as_json` (the JSON object, and the mapping
the tables and CSV read by key), :func:`csv_columns`, :func:`kafka_columns`, :func:`screen_columns`,
:func:`export_columns` and :func:`export_values`.

A field left :data:`ABSENT` is no column of that row (``asOfMs`` only in find-hanging's rows,
``abortPreview`` only where one was computed); a column declared ``json=NO_KEY`` is in no JSON object (a
figure only the screens show, a field JSON shows merged into another column). In JSON a nested row is
its own object, a list of rows a list of them, a set its sorted list.

A floor of its own under every other but ``dataclass_fast`` (findings declare their columns with it too):
the pipeline's export tables, the reports' rows and the renderers all read the same declarations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import fields
from enum import Enum
from forensics.dataclass_fast import dataclass
from typing import Any, ClassVar, NamedTuple


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()  # a column this row does not have
NO_KEY = ""  # column(json=NO_KEY): a column that no JSON object shows
_KEY = "forensics.column"


def column_name(field_name: str) -> str:
    """``abort_args_start_offset`` -> ``abortArgsStartOffset``."""
    head, *rest = field_name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# what a value is, for the outputs that write it for people, each its own way (a screen's cell, the report's
# card): as it is (PLAIN: "-" for None on a screen), an epoch-ms time, a duration in ms, a byte count, lines,
# quoted texts, a list; a screen's own: ms with their duration, describe's start time with its age, the
# verdict with its state, the row's topic and partition as topic-N
PLAIN, TIME, DURATION, BYTES, LINES, QUOTED, ITEMS = "", "time", "duration", "bytes", "lines", "quoted", "items"
MS, START, VERDICT, TOPIC_N = "ms", "start", "verdict", "topic-N"
# scan's: a count of items, yes/no, a byte count in people's units / exact too, a log dir's path, a partition's
# name (topic-N, or its directory's; its status when not live), its open transactions with the oldest's age,
# an offset range (first_offset..last_offset), a set, a count of findings
COUNT, YES_NO, SIZE, EXACT_SIZE, LOG_DIR, NAME, OPEN, OFFSETS, SET, TOTAL = (
    "count", "yes/no", "size", "exact size", "log dir", "name", "open", "offsets", "set", "total")
# a finding's: an enum as its value, its byte range (position..end)
VALUE, BYTE_RANGE = "value", "byte range"
# where the report's card of a row shows a top-level column (a nested one shows in its record's group)
FACT, ELSEWHERE, MORE = "fact", "elsewhere", "more"


class Label(NamedTuple):
    """What the HTML report calls a column (:mod:`forensics.report.incident_labels`): how a person reads it
    (``text``, where ``{n}`` is a list item's number), what a missing value means (``none``: never a bare
    ``null``), how the value is shown (``kind``), where the card shows it (``place``), what an empty list
    means (``empty``), whether a missing value says nothing worth a line (``skip_none``: left out), and a
    :data:`FACT`'s place among the card's facts (``order``)."""

    text: str
    none: str = "unknown"
    kind: str = PLAIN
    place: str = MORE
    empty: str = "none"
    skip_none: bool = False
    order: int = 0


class Cell(NamedTuple):
    """A column of a ``--format table`` screen (:mod:`forensics.render.state_screens`): its place (from 1) and
    header; ``text``, how the screen writes the value (``""``: as it is, ``-`` for None; the screen names the
    others: ``time``, ``items``, ...); ``fold``: long text folds within the cell, else it never wraps;
    ``drop``: 0 always shown, else may be left out to fit, the highest first; ``min_width``: a folding
    column's narrowest; ``path``: it folds after a '/'."""

    place: int
    header: str
    text: str = PLAIN
    fold: bool = False
    drop: int = 0
    min_width: int = 12
    path: bool = False  # a folding column of paths: folded after a '/'


@dataclass(frozen=True)
class ColumnSpec:
    """What a field's declaration says of it beyond its name and type (see the module doc)."""

    json: str | None = None  # its JSON key; None: the field's name in lowerCamelCase; NO_KEY: in no JSON
    csv: int | None = None  # its place among the CSV columns; None: no CSV column
    kafka: tuple[int, str] | None = None  # (place, header) in Kafka's tool table; None: not there
    absent: str = "None"  # what Kafka's tool prints where the value is None
    export: str | None = None  # its type in an export table (``long``, ``string!``, ``array<short>``)
    table: Cell | None = None  # its cell in the --format table screen; None: not there
    wide: Cell | None = None  # its cell in that screen with --wide; None: not there
    label: Label | None = None  # what the HTML report calls it; None: the report humanises its key
    after: str | None = None  # a derived column: the field it follows
    json_unless: Any = ABSENT  # its JSON object leaves the column out where the value is this (None, or a default)


def column(*, json: str | None = None, csv: int | None = None, kafka: tuple[int, str] | None = None,
           absent: str = "None", export: str | None = None, table: Cell | None = None,
           wide: Cell | None = None, label: Label | None = None, json_unless: Any = ABSENT) -> dict[str, ColumnSpec]:
    """What a field's declaration says of it (see :class:`ColumnSpec`), as the field's metadata::

        producer_id: int = field(metadata=column(csv=1, kafka=(1, "ProducerId")))
    """
    return {_KEY: ColumnSpec(json, csv, kafka, absent, export, table, wide, label, json_unless=json_unless)}


class derived(property):  # noqa: N801 (a decorator, spelled as one)
    """A column computed from a row's fields (stored nowhere), printed after the field ``after``::

        @derived(after="last_sequence", csv=8)
        def duration_min(self) -> Optional[int]: ...
    """

    def __init__(self, fget: Callable[[Any], Any] | None = None, *, after: str = "", **spec: Any) -> None:
        super().__init__(fget)
        self.spec = ColumnSpec(after=after, **spec)

    def __call__(self, fget: Callable[[Any], Any]) -> derived:
        made = derived(fget, after=self.spec.after or "")
        made.spec = self.spec
        return made


class Column(NamedTuple):
    """One column of a row kind: the attribute that holds it, its JSON key, what its declaration says, and its
    name in an export table (the key in lowerCamelCase, whatever the kind's JSON keys)."""

    attr: str
    key: str
    spec: ColumnSpec
    export_name: str

    def in_json(self, value: Any) -> bool:
        """Whether a row's JSON object shows the column with this value."""
        unless = self.spec.json_unless
        if value is ABSENT or value is unless:
            return False
        return unless is None or unless is ABSENT or type(value) is not type(unless) or value != unless


_COLUMNS: dict[type, tuple[Column, ...]] = {}


def _column(kind: type, attr: str, spec: ColumnSpec) -> Column:
    export_name = column_name(attr) if spec.json is None else spec.json
    key = attr if spec.json is None and getattr(kind, "JSON_KEYS", CAMEL_CASE) == FIELD_NAMES else export_name
    return Column(attr, key, spec, export_name)


def columns(kind: type) -> tuple[Column, ...]:
    """The columns of a row kind, in output order: its fields, each derived column after its field."""
    known = _COLUMNS.get(kind)
    if known is not None:
        return known
    extra: dict[str, list[Column]] = {}
    for klass in reversed(kind.__mro__):
        for name, attr in vars(klass).items():  # in declaration order
            if isinstance(attr, derived):
                extra.setdefault(attr.spec.after or "", []).append(_column(kind, name, attr.spec))
    out: list[Column] = []

    def place(c: Column) -> None:  # a column, then the derived ones declared after it
        out.append(c)
        for d in extra.pop(c.attr, ()):
            place(d)

    for f in fields(kind):
        spec = f.metadata.get(_KEY, ColumnSpec())
        place(_column(kind, f.name, spec))
    if extra:
        raise TypeError(f"{kind.__name__}: derived columns after no column: {sorted(extra)}")
    keyed = [c.key for c in out if c.key != NO_KEY]
    if len(set(keyed)) != len(keyed) or any(c.key == NO_KEY and (c.spec.csv is not None or c.spec.export) for c in out):
        raise TypeError(f"{kind.__name__}: a JSON key twice, or a CSV or export column with no key")
    made = tuple(out)
    _COLUMNS[kind] = made
    return made


def json_value(value: Any) -> Any:
    """A column's value as JSON writes it: a row as its object, a list of rows as a list of them, a set
    sorted, an enum as its value."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, JsonRow):
        return value.as_json()
    if isinstance(value, (list, tuple)) and any(isinstance(v, JsonRow) for v in value):
        return [json_value(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return value


CAMEL_CASE, FIELD_NAMES = "lowerCamelCase", "field names"  # how a row kind's JSON keys are named (JsonRow.JSON_KEYS)


class JsonRow:
    """Mixin for a frozen dataclass row (see the module doc). ``JSON_KEYS``: its JSON keys are its fields' names in
    lowerCamelCase (:data:`CAMEL_CASE`), or the names themselves (:data:`FIELD_NAMES`: a finding's, as scan's JSON
    has always named them); its export columns are named in lowerCamelCase either way."""

    __slots__ = ()
    JSON_KEYS: ClassVar[str] = CAMEL_CASE

    def json_items(self) -> Iterator[tuple[str, Any]]:
        """(JSON key, JSON value) of every column the row has, in declared order."""
        for c in columns(type(self)):
            if c.key == NO_KEY:
                continue
            value = getattr(self, c.attr)
            if c.in_json(value):
                yield c.key, json_value(value)

    def as_json(self) -> dict[str, Any]:
        """The row as its JSON object: every column it has, keyed and ordered as declared."""
        return dict(self.json_items())


def as_mapping(row: Any) -> dict[str, Any]:
    """A row as its columns (a :class:`JsonRow`, or a mapping already)."""
    return row.as_json() if isinstance(row, JsonRow) else row


def csv_columns(kind: type) -> tuple[str, ...]:
    """The JSON keys of a row kind's CSV columns, in their declared places."""
    return tuple(c.key for c in sorted((c for c in columns(kind) if c.spec.csv is not None),
                                       key=lambda c: c.spec.csv or 0))


class KafkaCell(NamedTuple):
    """A column of Kafka's tool table: its header, the row's field it shows, what the tool prints for None."""

    header: str
    attr: str
    absent: str


def kafka_columns(kind: type) -> tuple[KafkaCell, ...]:
    """A row kind's columns in Kafka's tool table, in that table's order."""
    chosen = sorted((c for c in columns(kind) if c.spec.kafka is not None), key=lambda c: c.spec.kafka[0])  # type: ignore[index]
    return tuple(KafkaCell(c.spec.kafka[1], c.attr, c.spec.absent) for c in chosen)  # type: ignore[index]


def screen_columns(kind: type, wide: bool = False) -> tuple[tuple[str, Cell], ...]:
    """A row kind's columns in its ``--format table`` screen (``wide``: with ``--wide``), in the screen's
    order: (the attribute that holds it, its cell)."""
    cells = ((c.attr, c.spec.wide if wide else c.spec.table) for c in columns(kind))
    return tuple(sorted(((attr, cell) for attr, cell in cells if cell is not None), key=lambda ac: ac[1].place))


def export_columns(kind: type) -> tuple[tuple[str, str], ...]:
    """A row kind's export table columns: (name, type) in declared order (``!``: never null)."""
    return tuple((c.export_name, c.spec.export) for c in columns(kind) if c.spec.export is not None)


def export_values(row: Any) -> tuple:
    """A row's values in its export table's column order (an enum as its value)."""
    values = (getattr(row, c.attr) for c in columns(type(row)) if c.spec.export is not None)
    return tuple(v.value if isinstance(v, Enum) else v for v in values)
