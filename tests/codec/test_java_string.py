"""Keys and payloads as Kafka's ``StringDecoder`` prints them: ``new String(bytes, UTF_8)``, whose
replacement of malformed UTF-8 is not Python's ``errors="replace"`` (an encoded surrogate is one
U+FFFD in Java, three in Python). ``java_string`` is the reference; the C writer of the dump's
lines (csrc/dump_text.c, text_string) must write the same text. The expected values were taken
from JDK 17 (764,026 sequences: every 1- and 2-byte one, 3- and 4-byte ones over every lead byte,
random ones up to 10 bytes; all agreed); tests/report/test_dump_vs_kafka_jvm.py checks them
against Kafka's tool again.
"""

from __future__ import annotations

import itertools
import random

import pytest

from forensics.codec.java_reader import java_string
from forensics.speedups import native

JAVA = {b"\xed\xa0\x80x": "\ufffdx", b"\xed\xa0A": "\ufffdA", b"\xed\xbf\xbf": "\ufffd", b"\xc0\xaf": "\ufffd\ufffd",
        b"\xe2\x82": "\ufffd", b"\xe2\x82A": "\ufffdA", b"\xf4\x90\x80\x80": "\ufffd" * 4, b"\xf0\x9f\x98": "\ufffd",
        b"\xf0\x9f\x98A": "\ufffdA", b"\xf0\x9fA": "\ufffdA", b"\xe0\x80\x80": "\ufffd" * 3,
        b"\xf8\x88\x80\x80\x80": "\ufffd" * 5, b"\xf1\x80A\x80": "\ufffdA\ufffd", b"\xf5\x80\x80\x80": "\ufffd" * 4,
        b"\xf0\x9f\x98\x80\xf0": "\U0001f600\ufffd", "\u20ac\U0001f600".encode(): "\u20ac\U0001f600",
        b"ok\xffok": "ok\ufffdok", b"\xe1\x80": "\ufffd", b"\x80\x80": "\ufffd\ufffd", b"": ""}


@pytest.mark.parametrize("raw", list(JAVA), ids=lambda b: b.hex() or "empty")
def test_java_string_replaces_as_java_does(raw: bytes) -> None:
    assert java_string(raw) == JAVA[raw]


def _sequences():
    pieces = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5,
              0xFF]
    yield from (bytes(p) for p in itertools.product(range(0x80, 0x100), range(256)))
    yield from (bytes(p) for p in itertools.product(range(0xE0, 0x100), pieces, pieces))
    rnd = random.Random(7)
    for _ in range(5000):
        yield bytes(rnd.choice(pieces) for _ in range(rnd.randint(1, 9)))


@pytest.mark.skipif(native is None, reason="the C accelerator is not built (or KAFKA_FORENSICS_PURE)")
def test_the_c_writer_replaces_as_java_string() -> None:
    """The payload of a legacy record line goes through text_string, as every key and payload."""
    for raw in _sequences():
        line = native.legacy_lines([(0, 0, 0, 1, 0, 0, None, raw, True, None)], "CreateTime", True, True)
        assert line == f" payload: {java_string(raw)}\n", raw
