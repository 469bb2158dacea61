"""Lines of the text files a broker writes (checkpoints, ``partition.metadata``, ``meta.properties``,
``quorum-state``), read the way Kafka's readers read them.

Lines end at ``\\n``, ``\\r`` or ``\\r\\n`` (Java ``BufferedReader.readLine``); the text is UTF-8 (bad
bytes are an error with their byte position); whitespace splitting uses Java's ASCII ``\\s`` class
with ``String.split`` semantics (a leading separator yields an empty first field, trailing empty
fields are dropped); integers follow ``Integer.parseInt``/``Long.parseLong``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from forensics.codec.primitives import INT32_MAX, INT32_MIN
from forensics.errors import CorruptCheckpointError

Content = bytes | bytearray | memoryview | str

LINE_END = re.compile(rb"\r\n|\r|\n")
JAVA_WS = re.compile(r"[ \t\n\x0b\f\r]+")  # java.util.regex \s (ASCII only)
JAVA_INT = re.compile(r"[+-]?[0-9]+\Z")


class Line(NamedTuple):
    number: int  # 1-based
    position: int  # byte offset of the first byte of the line
    text: str


def corrupt(path: str | None, position: int | None, message: str) -> CorruptCheckpointError:
    return CorruptCheckpointError(message, path=path, position=position)


def as_bytes(data: Content) -> bytes:
    return data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)


def decode_text(raw: bytes, path: str | None, base: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise corrupt(path, base + e.start, f"not valid UTF-8 ({e.reason})") from None


def text_lines(data: Content, path: str | None) -> Iterator[Line]:
    """Yield lines as ``BufferedReader.readLine`` would, with their byte positions."""
    raw = as_bytes(data)
    pos = 0
    number = 0
    while pos < len(raw):
        number += 1
        m = LINE_END.search(raw, pos)
        end = m.start() if m else len(raw)
        yield Line(number, pos, decode_text(raw[pos:end], path, pos))
        pos = m.end() if m else len(raw)


def java_split(pattern: re.Pattern[str], text: str) -> list[str]:
    parts = pattern.split(text)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def java_int(text: str, lo: int, hi: int) -> int | None:
    """``Integer.parseInt``/``Long.parseLong`` (ASCII digits, optional sign, in range)."""
    if not JAVA_INT.match(text):
        return None
    value = int(text)
    return value if lo <= value <= hi else None


def line_int(line: Line, path: str | None, what: str) -> int:
    value = java_int(line.text, INT32_MIN, INT32_MAX)
    if value is None:
        raise corrupt(path, line.position, f"line {line.number}: malformed {what} {line.text[:80]!r}")
    return value
