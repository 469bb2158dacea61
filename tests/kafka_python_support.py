"""Shared test support around kafka-python, our independent encoder.

* an ``xxhash.xxh32`` stand-in: kafka-python's old-Kafka LZ4 encoder (magic 0) wants the
  ``xxhash`` package, which is not a dependency; the hash here comes from the C lz4 library (the
  content checksum of an LZ4 frame is XXH32 with seed 0 of the plaintext), independent of our code;
* seed batches written by kafka-python's builders for every codec and magic, plus the 78-byte
  COMMIT marker, used by the fuzz contract tests and the standalone fuzz harness.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager

import lz4.frame

COMMIT_MARKER = bytes.fromhex(
    "000000000000002a000000420000000302 40d514e9 0030 00000000 0000018bcfe56800 0000018bcfe56800"
    "00000000000003e8 0005 ffffffff 00000001 20 00 00 00 08 00000001 0c 000000000007 00".replace(" ", "")
)


class XXH32:
    """``xxhash.xxh32`` look-alike (seed 0 only)."""

    def __init__(self, data=b"", seed: int = 0) -> None:
        if seed != 0:
            raise NotImplementedError("stand-in supports seed 0 only")
        frame = lz4.frame.compress(bytes(data), content_checksum=True, store_size=False)
        self._h = struct.unpack("<I", frame[-4:])[0]

    def intdigest(self) -> int:
        return self._h

    def digest(self) -> bytes:  # xxhash's digest() is big-endian
        return struct.pack(">I", self._h)

    def hexdigest(self) -> str:
        return f"{self._h:08x}"


class XXHashModule:
    xxh32 = XXH32


def xxh32_independent(data: bytes) -> int:
    return XXH32(data).intdigest()


@contextmanager
def kafka_python_xxhash() -> Iterator[None]:
    """Give kafka.codec an xxhash module for the duration (only if it has none)."""
    import kafka.codec

    saved = kafka.codec.xxhash
    if saved is None:
        kafka.codec.xxhash = XXHashModule()
    try:
        yield
    finally:
        kafka.codec.xxhash = saved


def v2_seed(codec: int, transactional: bool, base_offset: int) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=transactional,
                                  producer_id=9 if transactional else -1, producer_epoch=1 if transactional else -1,
                                  base_sequence=5 if transactional else -1, batch_size=1 << 20)
    for i in range(4):
        b.append(i, 1_700_000_000_000 + i, None if i == 1 else b"k%d" % i,
                 None if i == 2 else b"value %d " % i * 8, [("h", b"v"), ("n", None)] if i == 0 else [])
    out = bytearray(b.build())
    struct.pack_into(">q", out, 0, base_offset)
    return bytes(out)


def legacy_seed(magic: int, codec: int, offset: int) -> bytes:
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    with kafka_python_xxhash():
        b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
        for i in range(3):
            b.append(i, 1_700_000_000_000 + i, b"k%d" % i if i else None, b"legacy value %d " % i * 6)
        out = bytearray(b.build())
    if codec:
        struct.pack_into(">q", out, 0, offset)
    return bytes(out)


def build_seeds() -> list[bytes]:
    """Valid batches of every codec and magic (v2 plain and transactional), plus the marker."""
    return (
        [v2_seed(c, t, 100 + 10 * c) for c in range(5) for t in (False, True)]
        + [legacy_seed(m, c, 50 + c) for m in (0, 1) for c in range(4)]
        + [COMMIT_MARKER]
    )
