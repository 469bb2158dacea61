"""Kafka's generated messages as the JSON Jackson prints for them (``JsonConverterGenerator``): what
``kafka-dump-log.sh``'s decoders print. The messages are read by :mod:`forensics.codec.schema`.
"""

from __future__ import annotations

import base64
import math
from typing import Any

from forensics.codec.java_reader import UNSUPPORTED_VERSION, SchemaReadError
from forensics.codec.schema import PRIMITIVES, Field, Message, Struct, cond, intersect

_B64 = base64.b64encode




# Jackson's default escaping: '"', '\\', the short escapes \b \t \n \f \r, every other control
# char below 0x20 as \u00XX with upper-case hex; '/', DEL, non-ASCII and U+2028/9 stay as they are.
_JSON_ESCAPES = {i: f"\\u{i:04X}" for i in range(0x20)}
_JSON_ESCAPES.update({0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"})


def json_string(s: str) -> str:
    """A JSON string as Jackson writes it: only ``"``, ``\\`` and C0 controls escaped,
    generic escapes with upper-case hex, everything else verbatim."""
    return '"' + s.translate(_JSON_ESCAPES) + '"'


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


def _shortest_digits(a: float) -> tuple[str, int]:
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


def write_json(msg: Message, data: dict[str, Any], version: int) -> str:
    """``XJsonConverter.write(message, version).toString()``."""
    return _write_struct(msg.struct, data, version)


def _write_struct(st: Struct, data: dict[str, Any], v: int) -> str:
    ok, _ = cond(v, st.versions, st.parent)
    if not ok:
        raise SchemaReadError(UNSUPPORTED_VERSION, f"Can't write version {v} of {st.name}")
    cur = intersect(st.parent, st.versions)
    parts: list[str] = []
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
