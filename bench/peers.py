"""The other implementations of the decode benchmark (``bench/decode.py``), same contract as
``bench/ours.py`` (same tuples back, same fields touched):

* ``bare``: the floor for a Python loop: ``mmap`` + one ``struct.unpack_from`` of the 61-byte v2
  header per batch (+ ``crc32c.crc32c`` over a memoryview slice). v2 only, no damage handling,
  headers and CRC only.
* ``kafka-python``: ``kafka.record.memory_records.MemoryRecords`` (pure Python; CRC-32C through the
  ``crc32c`` C package when installed). It accepts any buffer that supports ``struct.unpack_from``
  and ``memoryview``, so it gets the mmap'd file, opened outside the timed region.
* ``aiokafka``: ``aiokafka.record.memory_records.MemoryRecords``, the Cython classes of
  ``aiokafka.record._crecords`` unless ``AIOKAFKA_NO_EXTENSIONS`` is set (``describe`` says which).
  Its constructor only accepts ``bytes``: the file is read into memory outside the timed region,
  so its peak private memory includes the whole file.

Each implementation is a class of static methods: ``load(path)`` (untimed preparation),
``describe()``, and the measurements it supports (``header_scan``, ``crc_scan``,
``decode_records``) taking what ``load`` returned. Header and CRC scans run on v2 segments only.
"""

from __future__ import annotations

import mmap
import struct

from crc32c import crc32c

_HEADER = struct.Struct(">qiibIhiqqqhii")
_TRANSACTIONAL = 0x10


def map_file(path: str) -> mmap.mmap:
    """The whole file, mapped read-only."""
    with open(path, "rb") as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def read_file(path: str) -> bytes:
    """The whole file as ``bytes``."""
    with open(path, "rb") as f:
        return f.read()


def _decode_all(memory_records) -> tuple:
    """Every record of every batch of a kafka-python / aiokafka ``MemoryRecords`` (same API)."""
    n = 0
    last = ts = -1
    key = value = headers = None
    while memory_records.has_next():
        for r in memory_records.next_batch():
            last = r.offset
            ts = r.timestamp
            key = r.key
            value = r.value
            headers = r.headers
            n += 1
    return n, last, ts, (key, value, headers)


class Bare:
    """mmap + struct.unpack_from (+ crc32c): the floor a Python loop can reach."""

    name = "bare"
    note = "mmap + struct.unpack_from loop (+ crc32c over a memoryview slice)"

    @staticmethod
    def load(path: str) -> str:
        """Nothing to prepare: the loop maps the file inside the timed region, as ours does."""
        return path

    @staticmethod
    def describe() -> str:
        """What the floor uses."""
        return f"mmap + struct.unpack_from('>qiibIhiqqqhii'), crc32c {crc32c.__module__}.crc32c (C)"

    @staticmethod
    def header_scan(path: str) -> tuple:
        """One unpack of the 61-byte header per batch."""
        batches = records = txn = 0
        base = last = pid = -1
        unpack = _HEADER.unpack_from
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            pos, end = 0, len(buf) - _HEADER.size
            while pos <= end:
                base, length, _, _, _, attributes, last_delta, _, _, pid, _, _, count = unpack(buf, pos)
                last = base + last_delta
                records += count
                txn += (attributes & _TRANSACTIONAL) != 0
                batches += 1
                pos += 12 + length
        return batches, records, base, last, pid, txn

    @staticmethod
    def crc_scan(path: str) -> tuple:
        """The header unpack plus crc32c of bytes @21..end of the batch."""
        batches = records = txn = ok = 0
        base = last = pid = -1
        unpack = _HEADER.unpack_from
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            view = memoryview(buf)
            pos, end = 0, len(buf) - _HEADER.size
            while pos <= end:
                base, length, _, _, crc, attributes, last_delta, _, _, pid, _, _, count = unpack(buf, pos)
                last = base + last_delta
                records += count
                txn += (attributes & _TRANSACTIONAL) != 0
                ok += crc32c(view[pos + 21 : pos + 12 + length]) == crc
                batches += 1
                pos += 12 + length
            view.release()
        return batches, records, base, last, pid, txn, ok


class KafkaPython:
    """kafka-python's record classes, on the mmap'd file."""

    name = "kafka-python"
    note = "gets the mmap (mapped outside the timed region)"

    @staticmethod
    def load(path: str) -> mmap.mmap:
        """Import the decoder and map the file (untimed)."""
        import kafka.record.memory_records  # noqa: F401  (imported here, not in the timed region)

        return map_file(path)

    @staticmethod
    def describe() -> str:
        """kafka-python's version, record classes and CRC-32C function."""
        import kafka
        from kafka.record import util
        from kafka.record.memory_records import MemoryRecords

        crc = util.calc_crc32c.__defaults__[0]
        native = crc.__module__.split(".")[0] == "crc32c"  # else kafka.record._crc32c, pure Python
        crc_impl = f"{crc.__module__}.{crc.__name__} ({'C' if native else 'pure Python'})"
        return f"kafka-python {kafka.__version__}: {MemoryRecords.__module__}.MemoryRecords (pure Python), CRC-32C via {crc_impl}"

    @staticmethod
    def header_scan(buf) -> tuple:
        """``next_batch()`` per batch and its header properties."""
        from kafka.record.memory_records import MemoryRecords

        batches = records = txn = 0
        base = last = pid = -1
        mr = MemoryRecords(buf)
        while mr.has_next():
            b = mr.next_batch()
            base = b.base_offset
            last = b.last_offset
            pid = b.producer_id
            records += b.records_count
            txn += b.is_transactional
            batches += 1
        return batches, records, base, last, pid, txn

    @staticmethod
    def crc_scan(buf) -> tuple:
        """The header scan plus ``validate_crc()``."""
        from kafka.record.memory_records import MemoryRecords

        batches = records = txn = ok = 0
        base = last = pid = -1
        mr = MemoryRecords(buf)
        while mr.has_next():
            b = mr.next_batch()
            base = b.base_offset
            last = b.last_offset
            pid = b.producer_id
            records += b.records_count
            txn += b.is_transactional
            ok += b.validate_crc()
            batches += 1
        return batches, records, base, last, pid, txn, ok

    @staticmethod
    def decode_records(buf) -> tuple:
        """Every record of every batch."""
        from kafka.record.memory_records import MemoryRecords

        return _decode_all(MemoryRecords(buf))


class AioKafka:
    """aiokafka's record classes (Cython when its extensions are built), on bytes."""

    name = "aiokafka"
    note = "needs bytes: the file is read into memory outside the timed region (counts in its memory)"

    @staticmethod
    def load(path: str) -> bytes:
        """Import the decoder and read the whole file into ``bytes`` (untimed)."""
        import aiokafka.record.memory_records  # noqa: F401  (imported here, not in the timed region)

        return read_file(path)

    @staticmethod
    def describe() -> str:
        """aiokafka's version and whether its MemoryRecords is the Cython class."""
        import aiokafka
        from aiokafka.record.memory_records import MemoryRecords
        from aiokafka.util import NO_EXTENSIONS

        native = MemoryRecords.__module__.startswith("aiokafka.record._crecords") and not NO_EXTENSIONS
        kind = "Cython C extension" if native else "PURE PYTHON fallback (AIOKAFKA_NO_EXTENSIONS set or no build)"
        return f"aiokafka {aiokafka.__version__}: {MemoryRecords.__module__}.MemoryRecords, {kind}"

    @staticmethod
    def header_scan(data: bytes) -> tuple:
        """``next_batch()`` per batch and its header properties."""
        from aiokafka.record.memory_records import MemoryRecords

        batches = records = txn = 0
        base = last = pid = -1
        mr = MemoryRecords(data)
        while mr.has_next():
            b = mr.next_batch()
            base = b.base_offset
            delta = b.last_offset_delta
            last = base + delta
            pid = b.producer_id
            records += delta + 1  # the count field is not exposed; equal to it unless compacted
            txn += b.is_transactional
            batches += 1
        return batches, records, base, last, pid, txn

    @staticmethod
    def crc_scan(data: bytes) -> tuple:
        """The header scan plus ``validate_crc()``."""
        from aiokafka.record.memory_records import MemoryRecords

        batches = records = txn = ok = 0
        base = last = pid = -1
        mr = MemoryRecords(data)
        while mr.has_next():
            b = mr.next_batch()
            base = b.base_offset
            delta = b.last_offset_delta
            last = base + delta
            pid = b.producer_id
            records += delta + 1
            txn += b.is_transactional
            ok += b.validate_crc()
            batches += 1
        return batches, records, base, last, pid, txn, ok

    @staticmethod
    def decode_records(data: bytes) -> tuple:
        """Every record of every batch."""
        from aiokafka.record.memory_records import MemoryRecords

        return _decode_all(MemoryRecords(data))
