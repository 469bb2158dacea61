"""A small schema-driven reader/writer for Kafka's generated message classes.

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

import base64
import math
import struct as _struct
from dataclasses import dataclass
from dataclasses import field as _dc_field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from forensics.codec.primitives import encode_uvarint
from forensics.errors import CorruptInputError

MAX_VERSION = 0x7FFF

Versions = Optional[Tuple[int, int]]  # inclusive (lowest, highest); None = no versions

BUFFER_UNDERFLOW = "java.nio.BufferUnderflowException"
RUNTIME = "java.lang.RuntimeException"
ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"
NEGATIVE_ARRAY_SIZE = "java.lang.NegativeArraySizeException"
UNSUPPORTED_VERSION = "org.apache.kafka.common.errors.UnsupportedVersionException"


class SchemaReadError(CorruptInputError):
    """Bytes that the generated Kafka class would have rejected.

    ``java_class``/``java_message`` describe the exception Kafka would have thrown.
    """

    def __init__(self, java_class: str, java_message: Optional[str], *, position: Optional[int] = None) -> None:
        super().__init__(java_message if java_message is not None else java_class, position=position)
        self.java_class = java_class
        self.java_message = java_message

    def java_to_string(self) -> str:
        """``Throwable.toString()``: class name, then ``": message"`` when there is one."""
        if self.java_message is None:
            return self.java_class
        return f"{self.java_class}: {self.java_message}"


# --------------------------------------------------------------------------- versions


def parse_versions(text: Optional[str]) -> Versions:
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


def cond(version: int, containing: Versions, possible: Versions) -> Tuple[bool, Versions]:
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
    tag: Optional[int] = None
    default: Any = _NO_DEFAULT  # spec default; "null" means null
    ignorable: bool = False
    struct: Optional["Struct"] = None
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
    fields: List[Field]
    parent: Versions = None  # filled in by Message (StructRegistry.parentVersions)

    def default_data(self) -> Dict[str, Any]:
        return {f.name: f.default_value() for f in self.fields}


@dataclass
class Message:
    name: str
    valid: Versions
    flexible: Versions
    fields: List[Field]
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
    nullable: Optional[str] = None,
    tagged: Optional[str] = None,
    tag: Optional[int] = None,
    default: Any = _NO_DEFAULT,
    ignorable: bool = False,
    struct: Optional[Struct] = None,
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


def S(name: str, fields: List[Field], versions: str = "0+") -> Struct:
    """An inline struct (its versions are replaced by the owning field's) or, when
    listed in ``Message.common``, a common struct with its own versions."""
    return Struct(name, parse_versions(versions), fields)


# --------------------------------------------------------------------------- Java reader


def _i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - 0x100000000 if v & 0x80000000 else v


def java_string(raw: bytes) -> str:
    """``new String(raw, StandardCharsets.UTF_8)``: malformed input becomes U+FFFD."""
    return raw.decode("utf-8", errors="replace")


class JavaReader:
    """Mirrors ``ByteBufferAccessor`` over ``buf[pos:end]``."""

    def __init__(self, buf: bytes, pos: int = 0, end: Optional[int] = None) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def _need(self, n: int) -> None:
        if self.end - self.pos < n:
            raise SchemaReadError(BUFFER_UNDERFLOW, None, position=self.pos)

    def read_byte(self) -> int:
        self._need(1)
        b = self.buf[self.pos]
        self.pos += 1
        return b - 256 if b >= 128 else b

    def _fixed(self, fmt: str, n: int) -> Any:
        self._need(n)
        v = _struct.unpack_from(fmt, self.buf, self.pos)[0]
        self.pos += n
        return v

    def read_short(self) -> int:
        return self._fixed(">h", 2)

    def read_unsigned_short(self) -> int:
        return self._fixed(">H", 2)

    def read_int(self) -> int:
        return self._fixed(">i", 4)

    def read_unsigned_int(self) -> int:
        return self._fixed(">I", 4)

    def read_long(self) -> int:
        return self._fixed(">q", 8)

    def read_double(self) -> float:
        return self._fixed(">d", 8)

    def read_uuid(self) -> str:
        self._need(16)
        raw = bytes(self.buf[self.pos : self.pos + 16])
        self.pos += 16
        return uuid_to_string(raw)

    def read_array(self, size: int) -> bytes:
        rem = self.remaining()
        if size > rem:
            raise SchemaReadError(
                RUNTIME,
                f"Error reading byte array of {size} byte(s): only {rem} byte(s) available",
                position=self.pos,
            )
        if size < 0:
            raise SchemaReadError(NEGATIVE_ARRAY_SIZE, str(size), position=self.pos)
        raw = bytes(self.buf[self.pos : self.pos + size])
        self.pos += size
        return raw

    def read_byte_buffer(self, size: int) -> bytes:
        rem = self.remaining()
        if size > rem or size < 0:
            raise SchemaReadError(
                ILLEGAL_ARGUMENT,
                f"newLimit > capacity: ({size} > {rem})" if size > rem else f"newLimit < 0: ({size} < 0)",
                position=self.pos,
            )
        raw = bytes(self.buf[self.pos : self.pos + size])
        self.pos += size
        return raw

    def read_unsigned_varint(self) -> int:
        """``ByteUtils.readUnsignedVarint``: a Java int (may be negative)."""
        start = self.pos
        result = 0
        for i in range(4):
            b = self.read_byte()
            if b >= 0:
                return _i32(result | (b << (7 * i)))
            result |= (b & 0x7F) << (7 * i)
        b = self.read_byte()  # 5th byte, signed, shifted by 28 in an int
        result = _i32(result | ((b << 28) & 0xFFFFFFFF))
        if b < 0:
            raise SchemaReadError(
                ILLEGAL_ARGUMENT,
                "Varint is too long, the most significant bit in the 5th byte is set, "
                f"converted value: {result & 0xFFFFFFFF:x}",
                position=start,
            )
        return result


# --------------------------------------------------------------------------- decoding


def read_message(msg: Message, reader: JavaReader, version: int) -> Dict[str, Any]:
    """``msg.read(readable, version)``; returns field name -> value (schema order)."""
    return _read_struct(msg, msg.struct, reader, version)


def _read_struct(msg: Message, st: Struct, r: JavaReader, v: int) -> Dict[str, Any]:
    ok, _ = cond(v, st.parent, st.versions)
    if not ok:
        raise SchemaReadError(UNSUPPORTED_VERSION, f"Can't read version {v} of {st.name}", position=r.pos)
    cur = intersect(st.parent, st.versions)
    out: Dict[str, Any] = {}
    for f in st.fields:
        mandatory = subtract(f.versions, f.tagged)
        ok, present = cond(v, mandatory, cur)
        if ok:
            out[f.name] = _read_value(msg, f, r, v, present, tagged=False)
        else:
            out[f.name] = f.default_value()
    ok, cur_flex = cond(v, msg.flexible, cur)
    if ok:
        count = r.read_unsigned_varint()
        i = 0
        while i < count:
            tag = r.read_unsigned_varint()
            size = r.read_unsigned_varint()
            target = None
            for f in st.fields:
                valid_tagged = intersect(f.versions, f.tagged)
                if valid_tagged is not None and f.tag == tag:
                    target = (f, valid_tagged)
                    break
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


def _field_flexible(msg: Message, f: Field) -> Versions:
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
    flexible, _ = cond(v, _field_flexible(msg, f), possible)
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
        length = _i32(r.read_unsigned_varint() - 1)
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
    items: List[Any] = []
    for _ in range(length):
        if elem in ("string", "bytes"):
            items.append(_read_variable(msg, f, elem, name + " element", None, r, v, possible, flexible))
        elif elem == "struct":
            assert f.struct is not None
            items.append(_read_struct(msg, f.struct, r, v))
        else:
            items.append(_read_primitive(elem, r))
    return items


# --------------------------------------------------------------------------- JSON (Jackson)


_B64 = base64.b64encode


def uuid_to_string(raw: bytes) -> str:
    """``Uuid.toString()``: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def uuid_from_string(text: str) -> bytes:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"not a 16-byte uuid: {text!r}")
    return raw


_SHORT_ESCAPES = {0x22: '\\"', 0x5C: "\\\\", 0x08: "\\b", 0x09: "\\t", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r"}


def json_string(s: str) -> str:
    """A JSON string as Jackson writes it: only ``"``, ``\\`` and C0 controls escaped,
    generic escapes with upper-case hex, everything else verbatim."""
    out = ['"']
    for ch in s:
        c = ord(ch)
        if c < 0x20 or c == 0x22 or c == 0x5C:
            out.append(_SHORT_ESCAPES.get(c) or f"\\u{c:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def java_double(d: float) -> str:
    """``Double.toString`` (shortest repr digits; JDK >= 19 algorithm)."""
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0.0:
        return "-0.0" if math.copysign(1.0, d) < 0 else "0.0"
    sign = "-" if d < 0 else ""
    a = abs(d)
    digits, exp = _shortest_digits(a)
    if 1e-3 <= a < 1e7:
        point = exp + 1  # position of the decimal point within digits
        if point <= 0:
            return sign + "0." + "0" * (-point) + digits
        if point >= len(digits):
            return sign + digits + "0" * (point - len(digits)) + ".0"
        return sign + digits[:point] + "." + digits[point:]
    mant = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mant}E{exp}"


def _shortest_digits(a: float) -> Tuple[str, int]:
    r = repr(a)
    if "e" in r:
        m, e = r.split("e")
        exp = int(e)
    else:
        m, exp = r, 0
    if "." in m:
        ip, fp = m.split(".")
    else:
        ip, fp = m, ""
    digits = (ip + fp).lstrip("0")
    lead_zeros = len(ip + fp) - len((ip + fp).lstrip("0"))
    exp10 = exp + len(ip) - 1 - lead_zeros
    digits = digits.rstrip("0") or "0"
    return digits, exp10


def _json_primitive(t: str, value: Any) -> str:
    if t == "bool":
        return "true" if value else "false"
    if t == "uuid":
        return json_string(value)
    if t == "float64":
        if math.isnan(value) or math.isinf(value):
            return json_string(java_double(value))
        return java_double(value)
    return str(int(value))


def write_json(msg: Message, data: Dict[str, Any], version: int) -> str:
    """``XJsonConverter.write(message, version).toString()``."""
    return _write_struct(msg.struct, data, version)


def _write_struct(st: Struct, data: Dict[str, Any], v: int) -> str:
    ok, _ = cond(v, st.versions, st.parent)
    if not ok:
        raise SchemaReadError(UNSUPPORTED_VERSION, f"Can't write version {v} of {st.name}")
    cur = intersect(st.parent, st.versions)
    parts: List[str] = []
    for f in st.fields:
        value = data.get(f.name, f.default_value())
        ok, present = cond(v, f.versions, cur)
        if ok:
            is_tagged, _ = cond(v, f.tagged, present)
            if is_tagged and value == f.default_value():
                continue
            parts.append(json_string(f.name) + ":" + _json_value(f, value, v))
        elif not f.ignorable and value != f.default_value():
            raise SchemaReadError(UNSUPPORTED_VERSION, f"Attempted to write a non-default {f.name} at version {v}")
    return "{" + ",".join(parts) + "}"


class RawJson(str):
    """A value already rendered as JSON; written verbatim in place of the field value
    (DumpLogSegments splices the decoded consumer protocol into GroupMetadataValue)."""


def _json_value(f: Field, value: Any, v: int) -> str:
    if value is None:
        return "null"
    if isinstance(value, RawJson):
        return str(value)
    t = f.type
    if t in PRIMITIVES:
        return _json_primitive(t, value)
    if t == "string":
        return json_string(value)
    if t == "bytes":
        return json_string(_B64(value).decode("ascii"))
    if t == "struct":
        assert f.struct is not None
        return _write_struct(f.struct, value, v)
    elem = t[2:]
    if elem == "struct":
        assert f.struct is not None
        return "[" + ",".join(_write_struct(f.struct, x, v) for x in value) + "]"
    if elem == "string":
        return "[" + ",".join(json_string(x) for x in value) + "]"
    if elem == "bytes":
        return "[" + ",".join(json_string(_B64(x).decode("ascii")) for x in value) + "]"
    return "[" + ",".join(_json_primitive(elem, x) for x in value) + "]"


# --------------------------------------------------------------------------- encoding


def encode_message(msg: Message, version: int, data: Optional[Dict[str, Any]] = None) -> bytes:
    """Serialize like ``msg.write(writable, cache, version)``; for tests and fixtures.

    Missing fields take their defaults. Tagged fields are written when non-default.
    """
    out = bytearray()
    _encode_struct(msg, msg.struct, data or {}, version, out)
    return bytes(out)


def _uvarint(value: int) -> bytes:
    return encode_uvarint(value & 0xFFFFFFFF)


def _encode_struct(msg: Message, st: Struct, data: Dict[str, Any], v: int, out: bytearray) -> None:
    cur = intersect(st.parent, st.versions)
    tagged_parts: List[Tuple[int, bytes]] = []
    for f in st.fields:
        value = data.get(f.name, f.default_value())
        ok, present = cond(v, f.versions, cur)
        if not ok:
            continue
        is_tagged, pt = cond(v, f.tagged, present)
        if is_tagged:
            if value == f.default_value():
                continue
            buf = bytearray()
            _encode_value(msg, f, value, v, pt, buf, tagged=True)
            assert f.tag is not None
            tagged_parts.append((f.tag, bytes(buf)))
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
    flexible, _ = cond(v, _field_flexible(msg, f), possible)
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
