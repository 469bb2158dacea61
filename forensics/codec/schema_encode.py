"""Kafka's generated messages written as bytes (``MessageDataGenerator``'s ``write``): the test
fixtures' encoder, the inverse of :func:`forensics.codec.schema.read_message`.
"""

from __future__ import annotations

import struct as _struct
from typing import Any

from forensics.codec.java_reader import uuid_from_string
from forensics.codec.primitives import encode_uvarint
from forensics.codec.schema import PRIMITIVES, Field, Message, Struct, Versions, cond, field_flexible, intersect

def encode_message(msg: Message, version: int, data: dict[str, Any] | None = None) -> bytes:
    """Serialize like ``msg.write(writable, cache, version)``; for tests and fixtures.

    Missing fields take their defaults. Tagged fields are written when non-default.
    """
    out = bytearray()
    _encode_struct(msg, msg.struct, data or {}, version, out)
    return bytes(out)


def _uvarint(value: int) -> bytes:
    return encode_uvarint(value & 0xFFFFFFFF)


def _encode_struct(msg: Message, st: Struct, data: dict[str, Any], v: int, out: bytearray) -> None:
    cur = intersect(st.parent, st.versions)
    tagged_parts: list[tuple[int, bytes]] = []
    for f in st.fields:
        value = data.get(f.name, f.default_value())
        ok, present = cond(v, f.versions, cur)
        if not ok:
            continue
        is_tagged, pt = cond(v, f.tagged, present)
        if is_tagged:
            if value == f.default_value():
                continue
            part = bytearray()
            _encode_value(msg, f, value, v, pt, part, tagged=True)
            assert f.tag is not None
            tagged_parts.append((f.tag, bytes(part)))
        else:
            _encode_value(msg, f, value, v, present, out, tagged=False)
    ok, _ = cond(v, msg.flexible, cur)
    if ok:
        out += _uvarint(len(tagged_parts))
        for tag, buf in sorted(tagged_parts):
            out += _uvarint(tag) + _uvarint(len(buf)) + buf


def _encode_primitive(t: str, value: Any, out: bytearray) -> None:
    fmt = {
        "bool": ">b", "int8": ">b", "int16": ">h", "uint16": ">H", "int32": ">i",
        "uint32": ">I", "int64": ">q", "float64": ">d",
    }.get(t)
    if t == "uuid":
        out += uuid_from_string(value)
    elif t == "bool":
        out += b"\x01" if value else b"\x00"
    else:
        assert fmt is not None
        out += _struct.pack(fmt, value)


def _encode_value(msg: Message, f: Field, value: Any, v: int, possible: Versions, out: bytearray, *, tagged: bool) -> None:
    t = f.type
    if t in PRIMITIVES:
        _encode_primitive(t, value, out)
        return
    if t == "struct":
        assert f.struct is not None
        is_nullable, _ = cond(v, f.nullable, possible)
        if is_nullable:
            if value is None:
                out += b"\x00" if tagged else b"\xff"
                return
            out += b"\x01"
        _encode_struct(msg, f.struct, value, v, out)
        return
    flexible, _ = cond(v, field_flexible(msg, f), possible)
    _encode_variable(msg, f, t, value, v, flexible, out)


def _encode_variable(msg: Message, f: Field, t: str, value: Any, v: int, flexible: bool, out: bytearray) -> None:
    if value is None:
        if flexible:
            out += b"\x00"
        elif t == "string":
            out += _struct.pack(">h", -1)
        else:
            out += _struct.pack(">i", -1)
        return
    if t in ("string", "bytes"):
        raw = value.encode("utf-8") if t == "string" else bytes(value)
        if flexible:
            out += _uvarint(len(raw) + 1)
        elif t == "string":
            out += _struct.pack(">h", len(raw))
        else:
            out += _struct.pack(">i", len(raw))
        out += raw
        return
    elem = t[2:]
    out += _uvarint(len(value) + 1) if flexible else _struct.pack(">i", len(value))
    for x in value:
        if elem in ("string", "bytes"):
            _encode_variable(msg, f, elem, x, v, flexible, out)
        elif elem == "struct":
            assert f.struct is not None
            _encode_struct(msg, f.struct, x, v, out)
        else:
            _encode_primitive(elem, x, out)
