"""Primitive encodings (Kafka's ``ByteUtils``): zig-zag varints of records, unsigned varints and the
compact/tagged types of flexible message versions, big-endian fixed-width reads.

All readers take a bytes-like buffer and a position and return ``(value, new_position)``.
Running past the end of the buffer raises :class:`CorruptInputError` (or the subclass
given as ``error``), never IndexError/struct.error.

Mirrors ``clients/src/main/java/org/apache/kafka/common/utils/ByteUtils.java`` and
``clients/.../protocol/types/Type.java``.
"""

from __future__ import annotations

import struct

from forensics.errors import CorruptInputError

Buffer = "bytes | bytearray | memoryview"

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1  # Java int: sizes, sequences, offset deltas, epochs
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # Java long: offsets, producer ids, timestamps

_INT8 = struct.Struct(">b")
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_INT64 = struct.Struct(">q")


def read_uvarint(
    buf, pos: int, end: int, max_bytes: int = 5, error: type[CorruptInputError] = CorruptInputError
) -> tuple[int, int]:
    """Unsigned LEB128. ``max_bytes`` 5 for int32-sized values, 10 for int64."""
    value = 0
    shift = 0
    for i in range(max_bytes):
        if pos >= end:
            raise error("varint runs past the end of its buffer", position=pos)
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
    raise error(f"varint longer than {max_bytes} bytes", position=pos - 1)


def read_varint(buf, pos: int, end: int, error: type[CorruptInputError] = CorruptInputError) -> tuple[int, int]:
    """Zig-zag int32 varint (record fields)."""
    u, pos = read_uvarint(buf, pos, end, 5, error)
    if u > 0xFFFFFFFF:
        raise error("varint does not fit in 32 bits", position=pos - 1)
    return (u >> 1) ^ -(u & 1), pos


def read_varlong(buf, pos: int, end: int, error: type[CorruptInputError] = CorruptInputError) -> tuple[int, int]:
    """Zig-zag int64 varlong (record timestamp delta)."""
    u, pos = read_uvarint(buf, pos, end, 10, error)
    if u > 0xFFFFFFFFFFFFFFFF:
        raise error("varlong does not fit in 64 bits", position=pos - 1)
    return (u >> 1) ^ -(u & 1), pos


def encode_uvarint(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def encode_varint(value: int) -> bytes:
    return encode_uvarint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def encode_varlong(value: int) -> bytes:
    return encode_uvarint(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def _fixed(st: struct.Struct, buf, pos: int, end: int, error: type[CorruptInputError], what: str) -> tuple[int, int]:
    if pos + st.size > end:
        raise error(f"{what} runs past the end of its buffer", position=pos)
    return st.unpack_from(buf, pos)[0], pos + st.size


def read_int8(buf, pos: int, end: int, error: type[CorruptInputError] = CorruptInputError) -> tuple[int, int]:
    return _fixed(_INT8, buf, pos, end, error, "int8")


def read_int16(buf, pos: int, end: int, error: type[CorruptInputError] = CorruptInputError) -> tuple[int, int]:
    return _fixed(_INT16, buf, pos, end, error, "int16")


def read_int32(buf, pos: int, end: int, error: type[CorruptInputError] = CorruptInputError) -> tuple[int, int]:
    return _fixed(_INT32, buf, pos, end, error, "int32")


def read_uint32(buf, pos: int, end: int, error: type[CorruptInputError] = CorruptInputError) -> tuple[int, int]:
    return _fixed(_UINT32, buf, pos, end, error, "uint32")


def read_int64(buf, pos: int, end: int, error: type[CorruptInputError] = CorruptInputError) -> tuple[int, int]:
    return _fixed(_INT64, buf, pos, end, error, "int64")


def read_bytes(
    buf, pos: int, end: int, length: int, error: type[CorruptInputError] = CorruptInputError
) -> tuple[bytes, int]:
    if length < 0 or pos + length > end:
        raise error(f"field of {length} bytes runs past the end of its buffer", position=pos)
    return bytes(buf[pos : pos + length]), pos + length


def read_string16(
    buf, pos: int, end: int, error: type[CorruptInputError] = CorruptInputError
) -> tuple[str | None, int]:
    """Non-flexible nullable string: int16 length (-1 = null) + UTF-8."""
    length, pos = read_int16(buf, pos, end, error)
    if length == -1:
        return None, pos
    if length < 0:
        raise error(f"negative string length {length}", position=pos - 2)
    raw, pos = read_bytes(buf, pos, end, length, error)
    return _utf8(raw, pos - length, error), pos


def read_compact_string(
    buf, pos: int, end: int, error: type[CorruptInputError] = CorruptInputError
) -> tuple[str | None, int]:
    """Flexible nullable string: uvarint(len + 1) (0 = null) + UTF-8."""
    n, pos = read_uvarint(buf, pos, end, 5, error)
    if n == 0:
        return None, pos
    raw, pos = read_bytes(buf, pos, end, n - 1, error)
    return _utf8(raw, pos - (n - 1), error), pos


def read_compact_array_len(
    buf, pos: int, end: int, error: type[CorruptInputError] = CorruptInputError
) -> tuple[int, int]:
    """Flexible array length: uvarint(count + 1), 0 = null (returned as -1)."""
    n, pos = read_uvarint(buf, pos, end, 5, error)
    return n - 1, pos


def read_tagged_fields(
    buf, pos: int, end: int, error: type[CorruptInputError] = CorruptInputError
) -> tuple[list[tuple[int, bytes]], int]:
    """A tagged-field section: uvarint count, then (uvarint tag, uvarint size, data)."""
    count, pos = read_uvarint(buf, pos, end, 5, error)
    if count > end - pos:
        raise error(f"tagged field count {count} exceeds remaining bytes", position=pos)
    fields: list[tuple[int, bytes]] = []
    for _ in range(count):
        tag, pos = read_uvarint(buf, pos, end, 5, error)
        size, pos = read_uvarint(buf, pos, end, 5, error)
        data, pos = read_bytes(buf, pos, end, size, error)
        fields.append((tag, data))
    return fields, pos


def _utf8(raw: bytes, pos: int, error: type[CorruptInputError]) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"invalid UTF-8 in string: {exc.reason}", position=pos + exc.start) from None
