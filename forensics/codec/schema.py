"""A small schema-driven reader for Kafka's generated message classes (the JSON they print is
written by :mod:`forensics.codec.schema_json`, the bytes by :mod:`forensics.codec.schema_encode`).

Kafka describes its records in JSON specs (``*.json`` under ``resources/common``) and
generates Java classes from them (``generator/.../MessageDataGenerator.java`` for the
binary form, ``JsonConverterGenerator.java`` for the JSON form printed by
``kafka-dump-log.sh``). This module re-states those rules for the handful of specs the
forensics toolkit needs, so that decoding yields exactly what the Java classes would hold
and rendering yields exactly the text Jackson prints.

Behaviour reproduced on purpose (it shows in Kafka's output):

* Version conditions are evaluated the way ``VersionConditional`` emits them: a check is
  only generated on a side where the field's range is narrower than the range that is
  possible at that point, so versions outside a message's ``validVersions`` are read
  with the layout of the nearest valid version instead of being rejected.
* Nested inline structs check their own version range on read ("Can't read version V
  of X"), common structs never do.
* Tagged fields: the ``size`` of a known tag is read and ignored (the field is decoded
  straight from the stream), unknown tags are skipped by size; JSON shows a tagged field
  only when it differs from its default.
* Strings are decoded like ``new String(bytes, UTF_8)``: malformed input becomes U+FFFD,
  never an error.
* All length/count varints are Java ``int``: values >= 2**31 wrap negative.

Errors: every failure raises :class:`SchemaReadError` (a ``CorruptInputError``) whose
``java_message`` is what ``Throwable.getMessage()`` would have returned in Kafka (None
for exceptions without a message such as ``BufferUnderflowException``) and whose
``java_class`` names the Java exception type. Callers that must reproduce Kafka's
"Error at offset ..." strings build them from these two attributes.
"""

from __future__ import annotations

from collections.abc import Sequence
from forensics.dataclass_fast import dataclass
from dataclasses import field as _dc_field
from typing import Any

from forensics.codec.java_reader import (
    RUNTIME,
    UNSUPPORTED_VERSION,
    JavaReader,
    SchemaReadError,
    i32,
    java_string,
)

MAX_VERSION = 0x7FFF

Versions = tuple[int, int] | None  # inclusive (lowest, highest); None = no versions


# --------------------------------------------------------------------------- versions


def parse_versions(text: str | None) -> Versions:
    """``"0+"``, ``"3"``, ``"0-4"`` or ``"none"`` (also ``None``) as in the JSON specs."""
    if text is None or text == "none" or text == "":
        return None
    if text.endswith("+"):
        return (int(text[:-1]), MAX_VERSION)
    if "-" in text:
        lo, hi = text.split("-", 1)
        return (int(lo), int(hi))
    v = int(text)
    return (v, v)


def intersect(a: Versions, b: Versions) -> Versions:
    if a is None or b is None:
        return None
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return (lo, hi) if lo <= hi else None


def subtract(a: Versions, b: Versions) -> Versions:
    """``Versions.subtract`` for the shapes used in specs (a tail or the whole range)."""
    if a is None:
        return None
    if b is None:
        return a
    inter = intersect(a, b)
    if inter is None:
        return a
    if inter == a:
        return None
    if inter[0] > a[0] and inter[1] >= a[1]:
        return (a[0], inter[0] - 1)
    if inter[0] <= a[0] and inter[1] < a[1]:
        return (inter[1] + 1, a[1])
    return a  # two ranges: the generator falls back to the original range


def cond(version: int, containing: Versions, possible: Versions) -> tuple[bool, Versions]:
    """Evaluate ``VersionConditional.forVersions(containing, possible)`` at ``version``.

    Returns (member, versions handed to the taken branch).
    """
    inter = intersect(containing, possible)
    if possible is None or inter is None:
        return False, possible
    assert containing is not None
    check_lo = possible[0] < containing[0]
    check_hi = possible[1] > containing[1]
    member = (not check_lo or version >= containing[0]) and (not check_hi or version <= containing[1])
    if member:
        return True, inter
    rest = subtract(possible, containing)
    return False, rest if rest is not None else possible


# --------------------------------------------------------------------------- schema model


PRIMITIVES = ("bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "uuid")
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
_NO_DEFAULT = object()


@dataclass
class Field:
    """One field of a spec. ``type`` is a primitive name, ``string``, ``bytes``,
    ``struct`` or ``[]<elem>`` where elem is a primitive, ``string``, ``bytes`` or
    ``struct`` (then ``struct`` holds the element :class:`Struct`)."""

    name: str  # camelCase, as printed in JSON
    type: str
    versions: Versions
    nullable: Versions = None
    tagged: Versions = None
    tag: int | None = None
    default: Any = _NO_DEFAULT  # spec default; "null" means null
    ignorable: bool = False
    struct: Struct | None = None
    zero_copy: bool = False
    flexible: Any = _NO_DEFAULT  # field-level flexibleVersions override

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def elem(self) -> str:
        return self.type[2:]

    def default_value(self) -> Any:
        d = self.default
        t = self.type
        if self.is_array:
            return None if d == "null" else []
        if t == "string":
            if d == "null":
                return None
            return "" if d is _NO_DEFAULT else str(d)
        if t == "bytes":
            return None if d == "null" else b""
        if t == "struct":
            if d == "null":
                return None
            assert self.struct is not None
            return self.struct.default_data()
        if t == "bool":
            return False if d is _NO_DEFAULT else (str(d).lower() == "true")
        if t == "uuid":
            return ZERO_UUID if d is _NO_DEFAULT else str(d)
        if t == "float64":
            return 0.0 if d is _NO_DEFAULT else float(d)
        if d is _NO_DEFAULT or d == "":
            return 0
        s = str(d)
        return int(s[2:], 16) if s.startswith("0x") else int(s)


@dataclass
class Struct:
    name: str  # Java class name, used in "Can't read version V of <name>"
    versions: Versions
    fields: list[Field]
    parent: Versions = None  # filled in by Message (StructRegistry.parentVersions)

    def default_data(self) -> dict[str, Any]:
        return {f.name: f.default_value() for f in self.fields}


@dataclass
class Message:
    name: str
    valid: Versions
    flexible: Versions
    fields: list[Field]
    api_key: int = -1
    common: Sequence[Struct] = ()
    struct: Struct = _dc_field(init=False)

    def __post_init__(self) -> None:
        self.struct = Struct(self.name, self.valid, self.fields, parent=self.valid)
        for c in self.common:
            c.parent = c.versions
        _assign_parents(self.valid, self.fields, {id(c) for c in self.common})

    @property
    def lowest(self) -> int:
        return self.valid[0] if self.valid else 0

    @property
    def highest(self) -> int:
        return self.valid[1] if self.valid else -1


def _assign_parents(parent: Versions, fields: Sequence[Field], common_ids: set) -> None:
    for f in fields:
        if f.struct is None:
            continue
        if id(f.struct) not in common_ids:
            f.struct.parent = parent
            f.struct.versions = f.versions
        _assign_parents(intersect(parent, f.versions), f.struct.fields, common_ids)


def F(
    name: str,
    type: str,
    versions: str = "0+",
    *,
    nullable: str | None = None,
    tagged: str | None = None,
    tag: int | None = None,
    default: Any = _NO_DEFAULT,
    ignorable: bool = False,
    struct: Struct | None = None,
    zero_copy: bool = False,
) -> Field:
    """Shorthand used by the schema tables."""
    return Field(
        name=name,
        type=type,
        versions=parse_versions(versions),
        nullable=parse_versions(nullable),
        tagged=parse_versions(tagged),
        tag=tag,
        default=default,
        ignorable=ignorable,
        struct=struct,
        zero_copy=zero_copy,
    )


def S(name: str, fields: list[Field], versions: str = "0+") -> Struct:
    """An inline struct (its versions are replaced by the owning field's) or, when
    listed in ``Message.common``, a common struct with its own versions."""
    return Struct(name, parse_versions(versions), fields)


# --------------------------------------------------------------------------- decoding


def read_message(msg: Message, reader: JavaReader, version: int) -> dict[str, Any]:
    """``msg.read(readable, version)``; returns field name -> value (schema order)."""
    return _read_struct(msg, msg.struct, reader, version)


def _struct_plan(msg: Message, st: Struct, v: int):
    """What :func:`_read_struct` works out from the versions alone, once per (struct, version): None when
    the struct has no version ``v``, else (per field: field, read at ``v``, versions handed to it), whether
    a tagged-field section follows, the versions handed to its fields, and tag -> (field, its tagged
    versions), the first field in schema order carrying that tag. Kept on the struct, keyed by everything it
    is computed from (a struct's versions are assigned when its message is built)."""
    key = (v, st.parent, st.versions, msg.flexible)
    plans = st.__dict__.setdefault("_plans", {})
    try:
        return plans[key]
    except KeyError:
        pass
    ok, _ = cond(v, st.parent, st.versions)
    plan = None
    if ok:
        cur = intersect(st.parent, st.versions)
        fields = []
        for f in st.fields:
            fok, present = cond(v, subtract(f.versions, f.tagged), cur)
            fields.append((f, fok, present))
        fok, cur_flex = cond(v, msg.flexible, cur)
        tags: dict[int | None, tuple[Field, Versions]] = {}
        for f in st.fields:
            valid_tagged = intersect(f.versions, f.tagged)
            if valid_tagged is not None and f.tag not in tags:
                tags[f.tag] = (f, valid_tagged)
        plan = (tuple(fields), fok, cur_flex, tags)
    plans[key] = plan
    return plan


def _read_struct(msg: Message, st: Struct, r: JavaReader, v: int) -> dict[str, Any]:
    plan = _struct_plan(msg, st, v)
    if plan is None:
        raise SchemaReadError(UNSUPPORTED_VERSION, f"Can't read version {v} of {st.name}", position=r.pos)
    fields, flexible, cur_flex, tags = plan
    out: dict[str, Any] = {}
    for f, ok, present in fields:
        if ok:
            out[f.name] = _read_value(msg, f, r, v, present, tagged=False)
        else:
            out[f.name] = f.default_value()
    if flexible:
        count = r.read_unsigned_varint()
        i = 0
        while i < count:
            tag = r.read_unsigned_varint()
            size = r.read_unsigned_varint()
            target = tags.get(tag)
            if target is None:
                r.read_array(size)  # unknown tagged field: kept raw by Kafka, never printed
            else:
                f, valid_tagged = target
                ok2, pt = cond(v, valid_tagged, cur_flex)
                if not ok2:
                    raise SchemaReadError(RUNTIME, f"Tag {tag} is not valid for version {v}", position=r.pos)
                out[f.name] = _read_value(msg, f, r, v, pt, tagged=True)
            i += 1
    return out


def field_flexible(msg: Message, f: Field) -> Versions:
    return msg.flexible if f.flexible is _NO_DEFAULT else f.flexible


def _read_primitive(t: str, r: JavaReader) -> Any:
    if t == "bool":
        return r.read_byte() != 0
    if t == "int8":
        return r.read_byte()
    if t == "int16":
        return r.read_short()
    if t == "uint16":
        return r.read_unsigned_short()
    if t == "int32":
        return r.read_int()
    if t == "uint32":
        return r.read_unsigned_int()
    if t == "int64":
        return r.read_long()
    if t == "uuid":
        return r.read_uuid()
    if t == "float64":
        return r.read_double()
    raise AssertionError(t)


def _read_value(msg: Message, f: Field, r: JavaReader, v: int, possible: Versions, *, tagged: bool) -> Any:
    t = f.type
    if t in PRIMITIVES:
        return _read_primitive(t, r)
    if t == "struct":
        assert f.struct is not None
        is_nullable, _ = cond(v, f.nullable, possible)
        if is_nullable:
            if tagged:
                if r.read_unsigned_varint() <= 0:
                    return None
            elif r.read_byte() < 0:
                return None
        return _read_struct(msg, f.struct, r, v)
    flexible, _ = cond(v, field_flexible(msg, f), possible)
    return _read_variable(msg, f, t, f.name, f.nullable, r, v, possible, flexible)


def _read_variable(
    msg: Message,
    f: Field,
    t: str,
    name: str,
    nullable: Versions,
    r: JavaReader,
    v: int,
    possible: Versions,
    flexible: bool,
) -> Any:
    start = r.pos
    if flexible:
        length = i32(r.read_unsigned_varint() - 1)
    elif t == "string":
        length = r.read_short()
    else:
        length = r.read_int()
    if length < 0:
        ok, _ = cond(v, nullable, possible)
        if not ok:
            raise SchemaReadError(RUNTIME, f"non-nullable field {name} was serialized as null", position=start)
        return None
    if t == "string":
        if length > 0x7FFF:
            raise SchemaReadError(RUNTIME, f"string field {name} had invalid length {length}", position=start)
        return java_string(r.read_array(length))
    if t == "bytes":
        return r.read_byte_buffer(length) if f.zero_copy else r.read_array(length)
    assert t.startswith("[]")
    if length > r.remaining():
        raise SchemaReadError(
            RUNTIME,
            f"Tried to allocate a collection of size {length}, but there are only {r.remaining()} bytes remaining.",
            position=start,
        )
    elem = t[2:]
    items: list[Any] = []
    for _ in range(length):
        if elem in ("string", "bytes"):
            items.append(_read_variable(msg, f, elem, name + " element", None, r, v, possible, flexible))
        elif elem == "struct":
            assert f.struct is not None
            items.append(_read_struct(msg, f.struct, r, v))
        else:
            items.append(_read_primitive(elem, r))
    return items
