"""The project's side of the decode benchmark: every call ``bench/decode.py`` makes into
``forensics`` goes through this module, one function per measurement.

The decoding APIs are being changed for speed; when they change, adapt the bodies here and
nothing else. Contract (the peers in ``bench/peers.py`` return the same tuples, and
``bench/decode.py`` checks that every implementation agrees):

* ``header_scan(path) -> (batches, records, base_offset, last_offset, producer_id,
  transactional_batches)``: visit every batch and read base offset, last offset, producer id,
  record count and the transactional flag (attributes); never touch record bodies. Offsets and
  producer id returned are the last batch's.
* ``crc_scan(path) -> (same..., crc_ok)``: the same plus the batch checksum (a batch whose
  checksum fails counts as checked, not as ``crc_ok``).
* ``decode_records(path) -> (records, last_offset, last_timestamp, last_record)``: decode every
  record of every batch (decompressing as needed; legacy magic 0/1 entries too, wrappers deep)
  and touch offset, timestamp, key, value and headers of each.
* ``describe() -> str``: which implementation is in use (printed by the benchmark).

Today: ``FrameScanner(..., headers=True)`` (v2 headers in ``Frame.header``) for the scans,
``FrameScanner.record_tuples()`` for the decode (``iter_records``, ``decode_entry`` / ``iter_deep``
for ``ours-records``), on a ``MappedFile``.

Each takes the path of a ``.log`` segment and opens it itself (inside the timed region).
"""

from __future__ import annotations

import importlib
import os

from forensics.codec import crc as _crc
from forensics.codec.batch import iter_records
from forensics.codec.legacy import decode_entry, iter_deep
from forensics.io.files import MappedFile
from forensics.io.frames import FrameScanner


def describe() -> str:
    """Which code ours runs: where ``forensics`` is imported from, whether a compiled
    ``forensics._speedups`` imports, and the CRC-32C function behind ``forensics.codec.crc``.
    (Say here which fast paths the functions below take once they use them.)"""
    import forensics

    try:
        importlib.import_module("forensics._speedups")
        native = "compiled forensics._speedups importable"
    except ImportError:
        native = "no compiled forensics._speedups"
    crc = getattr(_crc.crc32c, "__module__", "?")
    return f"forensics from {os.path.dirname(forensics.__file__)}; {native}; CRC-32C from {crc}"


def header_scan(path: str) -> tuple:
    """Batch headers only: frames without CRC check, each v2 header decoded by the scanner
    (``headers=True``, as the product's segment reads do since f77d83f)."""
    batches = records = txn = 0
    base = last = pid = -1
    with MappedFile(path) as f:
        for frame in FrameScanner(f.data, path, verify_crc=False, headers=True):
            batches += 1
            base = frame.base_offset
            last = frame.last_offset
            h = frame.header
            if h is not None:  # v2
                pid = h.producer_id
                records += h.records_count
                txn += h.is_transactional
            else:  # legacy entries have no producer id and hold one message (or one wrapper)
                records += 1
    return batches, records, base, last, pid, txn


def crc_scan(path: str) -> tuple:
    """Batch headers plus the checksum of every batch (``Frame.crc_ok``)."""
    batches = records = txn = ok = 0
    base = last = pid = -1
    with MappedFile(path) as f:
        for frame in FrameScanner(f.data, path, verify_crc=True, headers=True):
            batches += 1
            base = frame.base_offset
            last = frame.last_offset
            ok += frame.crc_ok is True
            h = frame.header
            if h is not None:
                pid = h.producer_id
                records += h.records_count
                txn += h.is_transactional
            else:
                records += 1
    return batches, records, base, last, pid, txn, ok


def decode_records(path: str) -> tuple:
    """Every record of every batch: offset, timestamp, key, value, headers, through the bulk API
    (``FrameScanner.record_tuples``: every record of the segment projected to exactly those five
    fields, as tuples, v2 batches and legacy entries deep; the loop unpacks each one). The same
    five objects per record as the peers make."""
    n = 0
    last = ts = -1
    key = value = headers = None
    with MappedFile(path) as f:
        for last, ts, key, value, headers in FrameScanner(f.data, path, verify_crc=False).record_tuples():
            n += 1
    return n, last, ts, (key, value, headers)


class FullRecords:
    """``ours`` through the per-record API: a ``Record`` (or ``LegacyRecord``) NamedTuple per
    record, every field made, the five fields read by attribute as the peers' loops do."""

    describe = staticmethod(describe)

    @staticmethod
    def decode_records(path: str) -> tuple:
        """``iter_records`` / ``iter_deep``, fields read by attribute."""
        n = 0
        last = ts = -1
        key = value = headers = None
        with MappedFile(path) as f:
            buf = f.data
            for frame in FrameScanner(buf, path, verify_crc=False, headers=True):
                v2 = frame.header is not None
                if v2:
                    records = iter_records(buf, frame.position, frame.header)
                else:  # legacy: the entry itself, or a wrapper's inner messages; no headers
                    records = iter_deep(decode_entry(buf, frame.position, frame.end))
                for r in records:
                    last = r.offset
                    ts = r.timestamp
                    key = r.key
                    value = r.value
                    headers = r.headers if v2 else ()
                    n += 1
        return n, last, ts, (key, value, headers)
