"""Typed rows: frozen dataclasses whose fields are the columns, in output order.

A field ``producer_id`` is the column ``producerId`` (lowerCamelCase, as Kafka's tools and our JSON
name it). A field left :data:`ABSENT` is no column of that row (``asOfMs`` only in find-hanging's rows,
``abortPreview`` only where one was computed). :meth:`JsonRow.as_json` is the one place a row
becomes the mapping the renderers print (JSON as is, tables and CSV by column name).
"""

from __future__ import annotations

from dataclasses import Field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Dict, Union


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()  # a column this row does not have


def column_name(field_name: str) -> str:
    """``abort_args_start_offset`` -> ``abortArgsStartOffset``."""
    head, *rest = field_name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def json_value(value: Any) -> Any:
    if isinstance(value, JsonRow):
        return value.as_json()
    if isinstance(value, (list, tuple)) and any(isinstance(v, JsonRow) for v in value):
        return [json_value(v) for v in value]
    return value


class JsonRow:
    """Mixin for a frozen dataclass row (see the module doc)."""

    __slots__ = ()
    if TYPE_CHECKING:  # what the dataclass it is mixed into has (dataclasses.fields reads it)
        __dataclass_fields__: ClassVar[Dict[str, Field[Any]]]

    def as_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not ABSENT:
                out[column_name(f.name)] = json_value(value)
        return out


AnyRow = Union[JsonRow, Dict[str, Any]]  # a typed row, or its columns already (what the renderers take)


def as_mapping(row: AnyRow) -> Dict[str, Any]:
    """A row as its columns (a :class:`JsonRow`, or a mapping already)."""
    return row.as_json() if isinstance(row, JsonRow) else row
