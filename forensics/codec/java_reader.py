"""Kafka's ``ByteBufferAccessor`` as the generated message classes use it, with Java's own failures.

Every failure raises :class:`SchemaReadError` whose ``java_class`` / ``java_message`` are what the
Java code would have thrown (``BufferUnderflowException`` has no message); callers that reproduce
Kafka's "Error at offset ..." texts build them from these. Strings decode like ``new String(bytes,
UTF_8)``; a UUID prints as ``Uuid.toString`` does. The schema-driven reading itself is in
:mod:`forensics.codec.schema`.
"""

from __future__ import annotations

import base64
import struct as _struct
from typing import Any

from forensics.errors import CorruptInputError

BUFFER_UNDERFLOW = "java.nio.BufferUnderflowException"
RUNTIME = "java.lang.RuntimeException"
ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"
NEGATIVE_ARRAY_SIZE = "java.lang.NegativeArraySizeException"
UNSUPPORTED_VERSION = "org.apache.kafka.common.errors.UnsupportedVersionException"


class SchemaReadError(CorruptInputError):
    """Bytes that the generated Kafka class would have rejected.

    ``java_class``/``java_message`` describe the exception Kafka would have thrown.
    """

    def __init__(self, java_class: str, java_message: str | None, *, position: int | None = None) -> None:
        super().__init__(java_message if java_message is not None else java_class, position=position)
        self.java_class = java_class
        self.java_message = java_message

    def java_to_string(self) -> str:
        """``Throwable.toString()``: class name, then ``": message"`` when there is one."""
        if self.java_message is None:
            return self.java_class
        return f"{self.java_class}: {self.java_message}"


def i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - 0x100000000 if v & 0x80000000 else v


def java_string(raw: bytes) -> str:
    """``new String(raw, StandardCharsets.UTF_8)``: malformed input becomes U+FFFD, one for each
    malformed sequence as Java's decoder delimits them (:func:`_java_malformed`), which is not
    always Python's ``errors="replace"`` (an encoded surrogate ``ED A0 80`` is one U+FFFD in Java,
    three in Python). Well-formed UTF-8 decodes the same in both."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start
    data = memoryview(raw)
    parts = [str(data[:start], "utf-8"), "\ufffd"]
    pos = start + _java_malformed(data, start)
    while pos < len(data):
        try:
            parts.append(str(data[pos:], "utf-8"))
            break
        except UnicodeDecodeError as exc:
            bad = pos + exc.start
        parts += [str(data[pos:bad], "utf-8"), "\ufffd"]
        pos = bad + _java_malformed(data, bad)
    return "".join(parts)


def _continuation(b: int) -> bool:
    return b & 0xC0 == 0x80


def _java_malformed(b, i: int) -> int:
    """How many bytes, from ``b[i]`` where no well-formed sequence starts, Java's UTF-8 decoder
    (``String(byte[], UTF_8)``, JDK 17) replaces with one U+FFFD: the lead byte alone, or with the
    continuation bytes it accepts before the one that breaks the sequence; a 3-byte form that
    decodes to a surrogate whole; a sequence cut by the end of the input with what is left."""
    n, b1 = len(b), b[i]
    if 0xE0 <= b1 <= 0xEF:
        if i + 1 < n and ((b1 == 0xE0 and b[i + 1] & 0xE0 == 0x80) or not _continuation(b[i + 1])):
            return 1  # an overlong form or no continuation
        if i + 2 >= n:
            return n - i
        return 2 if not _continuation(b[i + 2]) else 3  # 3: a surrogate (U+D800-U+DFFF) encoded
    if 0xF0 <= b1 <= 0xF7:
        if b1 > 0xF4 or (i + 1 < n and ((b1 == 0xF0 and not 0x90 <= b[i + 1] <= 0xBF)
                                        or (b1 == 0xF4 and b[i + 1] & 0xF0 != 0x80) or not _continuation(b[i + 1]))):
            return 1  # beyond U+10FFFF, an overlong form or no continuation
        if i + 2 < n and not _continuation(b[i + 2]):
            return 2
        return 3 if i + 3 < n else n - i
    return 1  # a continuation byte, C0, C1, F8-FF, or a 2-byte lead without its continuation


class JavaReader:
    """Mirrors ``ByteBufferAccessor`` over ``buf[pos:end]``."""

    def __init__(self, buf: bytes, pos: int = 0, end: int | None = None) -> None:
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
                return i32(result | (b << (7 * i)))
            result |= (b & 0x7F) << (7 * i)
        b = self.read_byte()  # 5th byte, signed, shifted by 28 in an int
        result = i32(result | ((b << 28) & 0xFFFFFFFF))
        if b < 0:
            raise SchemaReadError(
                ILLEGAL_ARGUMENT,
                "Varint is too long, the most significant bit in the 5th byte is set, "
                f"converted value: {result & 0xFFFFFFFF:x}",
                position=start,
            )
        return result


def uuid_to_string(raw: bytes) -> str:
    """``Uuid.toString()``: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def uuid_from_string(text: str) -> bytes:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"not a 16-byte uuid: {text!r}")
    return raw
