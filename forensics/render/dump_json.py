"""Dump rows as JSON lines: a header line (``"type": "header"``, the output's name and version:
:data:`~forensics.render.machine_format.DUMP`), then one object per file start, batch, record, index
entry or finding.

Each row kind's object is the one :data:`forensics.report.dump_rows.JSON_OBJECTS` declares; here each
declaration is compiled, when this module loads, into a function that builds the
object (a dict display of the declared keys, each value read through its attributes as a hand-written
builder would): batches and records come by the million."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from forensics.codec.compression import codec_name
from forensics.render.machine_format import DUMP
from forensics.render.terminal_text import json_text
from forensics.report.dump import expand_rows
from forensics.report.dump_rows import (
    AS_IS,
    CODEC_NAME,
    JSON_OBJECTS,
    NOT_FALSE,
    TEXT_OR_BASE64,
    THE_ROW,
    ByTag,
    FindingRow,
    JsonObject,
    Key,
    Variants,
)


def _bytes(data: bytes | None) -> str | None:
    """Bytes as UTF-8 text when they are valid UTF-8, else as base64 with a prefix."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(data).decode("ascii")


# how each way of writing a value (dump_rows.AS_IS ...) writes the expression that reads it
_WRITE: dict[str, Callable[[str], str]] = {
    AS_IS: lambda v: v,
    CODEC_NAME: lambda v: f"_codec_name({v})",
    NOT_FALSE: lambda v: f"({v} is not False)",
    TEXT_OR_BASE64: lambda v: f"_bytes({v})",
}
_SPACE = {"_codec_name": codec_name, "_bytes": _bytes}


def _from_row(key: Key) -> str:
    """The expression that reads a key's path from the row: through the local that holds the row's
    attribute it starts with (``frame.position``: ``_row_frame.position``), or from the row itself."""
    head, dot, rest = _checked(key.path).partition(".")
    return f"_row_{head}.{rest}" if dot else f"row.{head}"


def _checked(path: str) -> str:
    """A declared path, refused unless it is attribute names (it is written into the builder's text)."""
    if not all(part.isidentifier() for part in path.split(".")):
        raise TypeError(f"{path!r}: a key's path is attribute names between dots")
    return path


def _value(key: Key, read: Callable[[Key], str], depth: int = 0) -> str:
    """The expression of a key's value (``read``: the expression of its path)."""
    if key.each:
        item = f"_item{depth}"
        if any(k.omit_none for k in key.each):
            raise TypeError(f"{key.name}: a list's objects have every key")
        return f"[{_display('', key.each, lambda k: f'{item}.{_checked(k.path)}', depth + 1)} for {item} in {read(key)}]"
    return _WRITE[key.write](read(key))


def _display(tag: str, keys: Iterable[Key], read: Callable[[Key], str], depth: int = 0) -> str:
    """A dict display of ``keys`` (``"type"`` first when there is a tag)."""
    parts = [f"'type': {tag!r}"] if tag else []
    parts += [f"{k.name!r}: {_value(k, read, depth)}" for k in keys]
    return "{" + ", ".join(parts) + "}"


def _body(obj: JsonObject, indent: str, bound: set[str]) -> list[str]:
    """The lines that build and return one object from ``row``: each of the row's attributes its keys read
    first held in a local (``bound``: those held already); the keys up to the first that None leaves out
    in one dict display, each after it added in turn."""
    lines = []
    for head in dict.fromkeys(k.path.partition(".")[0] for k in obj.keys if "." in k.path):
        if f"_row_{head}" not in bound:
            lines.append(f"{indent}_row_{head} = row.{head}")
    first = next((i for i, k in enumerate(obj.keys) if k.omit_none), len(obj.keys))
    display = _display(obj.tag, obj.keys[:first], _from_row)
    if obj.rest:  # after every key
        if first < len(obj.keys):
            raise TypeError(f"{obj.tag}: a key left out when None before the items of {obj.rest}")
        source = "row" if obj.rest == THE_ROW else f"row.{_checked(obj.rest)}"
        display = display[:-1] + (", " if len(display) > 2 else "") + f"**{source}.as_json()}}"
    if first == len(obj.keys):
        return lines + [f"{indent}return {display}"]
    lines.append(f"{indent}obj = {display}")
    for k in obj.keys[first:]:
        if k.omit_none:
            lines += [f"{indent}value = {_value(k, _from_row)}", f"{indent}if value is not None:",
                      f"{indent}    obj[{k.name!r}] = value"]
        else:
            lines.append(f"{indent}obj[{k.name!r}] = {_value(k, _from_row)}")
    return lines + [f"{indent}return obj"]


def json_builder(declared: JsonObject | Variants | ByTag, name: str = "row") -> Callable[[Any], dict[str, Any]]:
    """A function that makes a row's JSON object as ``declared`` says."""
    space: dict[str, Any] = dict(_SPACE)
    lines = ["def build(row):"]
    if type(declared) is JsonObject:
        lines += _body(declared, "    ", set())
    elif type(declared) is Variants:
        held = f"_row_{_checked(declared.on)}"
        lines.append(f"    {held} = row.{declared.on}")
        for i, (kind, obj) in enumerate(declared.objects):
            space[f"_Kind{i}"] = kind
            lines.append(f"    if isinstance({held}, _Kind{i}):")
            lines += _body(obj, "        ", {held})
        lines.append(f"    raise TypeError(f'{name}: what it holds is a {{type({held}).__name__}}')")
    else:
        assert type(declared) is ByTag
        lines.append(f"    tag = row.{_checked(declared.on)}")
        for obj in declared.objects:
            lines.append(f"    if tag == {obj.tag!r}:")
            lines += _body(obj, "        ", set())
        lines.append(f"    raise TypeError(f'{name}: no object of the kind {{tag!r}}')")
    exec("\n".join(lines) + "\n", space)  # text made here from the declarations, none of it from an input
    build: Callable[[Any], dict[str, Any]] = space["build"]
    build.__qualname__ = build.__name__ = f"{name}_json"
    return build


# each row kind's builder, made once when this module loads (only a JSON dump loads it)
_BUILDERS: dict[type, Callable[[Any], dict[str, Any]]] = {
    kind: json_builder(declared, kind.__name__) for kind, declared in JSON_OBJECTS.items()}


def row_obj(row) -> dict[str, Any]:
    """A dump row's JSON object."""
    build = _BUILDERS.get(type(row))
    if build is None:
        raise TypeError(f"unknown dump row {type(row).__name__}")
    return build(row)


def header_line() -> str:
    """The stream's first line: ``{"type": "header", "format": "kafka-forensics-dump", "formatVersion": N}``."""
    return json.dumps({"type": "header", **DUMP.header()}) + "\n"


def render_dump_json(rows: Iterable, out: TextIO) -> int:
    findings = 0
    builders = _BUILDERS
    for row in expand_rows(rows):
        kind = type(row)
        if kind is FindingRow:
            findings += 1
        build = builders.get(kind)
        obj = build(row) if build is not None else row_obj(row)  # (row_obj: an unknown kind's error)
        out.write(json_text(json.dumps(obj, ensure_ascii=False, default=str)) + "\n")
    return findings
