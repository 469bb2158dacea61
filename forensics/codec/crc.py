"""Checksums (Kafka's ``Crc32C``, ``LegacyRecord.computeChecksum``): CRC-32C for v2 batches and producer
snapshots, CRC-32 (IEEE) for legacy messages.

``crc32c`` is the C accelerator's where it is built (:mod:`forensics.speedups`; CPU instructions where
the CPU has them), else the ``crc32c`` package's (hardware accelerated; that package reads its own
version through ``importlib.metadata`` when imported, a few hundredths of a second that a short
command would spend for nothing when the accelerator has the same CRC); a table-driven pure-Python
fallback keeps the tool working where neither can be installed.
"""

from __future__ import annotations

import zlib

from forensics.speedups import native

if native is not None:
    _native_crc32c = native.crc32c

    def crc32c(data) -> int:
        return _native_crc32c(data)

    ACCELERATED = True
else:
    try:  # pragma: no cover - exercised implicitly wherever the package is installed
        from crc32c import crc32c as _hw_crc32c

        def crc32c(data) -> int:
            return _hw_crc32c(data)

        ACCELERATED = True
    except ImportError:  # pragma: no cover
        ACCELERATED = False

        def crc32c(data) -> int:
            return crc32c_pure(data)


def _make_table() -> list:
    poly = 0x82F63B78
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _make_table()


def crc32c_pure(data) -> int:
    """Reference CRC-32C (Castagnoli), reflected polynomial 0x82F63B78."""
    crc = 0xFFFFFFFF
    table = _TABLE
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def crc32(data) -> int:
    """CRC-32 (IEEE / zlib), unsigned."""
    return zlib.crc32(data) & 0xFFFFFFFF
