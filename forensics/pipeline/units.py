"""Work units: pure functions of (path, byte range) that read one file and return compact results.

One unit = io + codec for one segment (or snapshot, or txn index): it opens the file read-only,
splits it into frames, decodes only what the state folds need (61-byte headers for data batches,
records only for control batches and ``__transaction_state``), and returns picklable tuples plus
findings. The local executor and the Spark executor call the same functions.
"""

from __future__ import annotations

import struct
from typing import List, Optional, Tuple

from forensics.codec import batch as v2
from forensics.codec.control import (
    ControlRecordType,
    decode_control_key,
    decode_end_txn_marker,
)
from forensics.codec.indexes import (
    ABORTED_TXN_ENTRY,
    scan_txn_index,
    txn_index_findings,
)
from forensics.codec.snapshot import decode_snapshot
from forensics.codec.txnlog import TransactionLogKey, decode_key, decode_value
from forensics.errors import ForensicsError, InputError
from forensics.findings import Finding, FindingKind
from forensics.io.files import MappedFile, read_small_file
from forensics.io.frames import FrameScanner
from forensics.state.coordinator import TxnLogRecord
from forensics.state.events import DataBatch, Marker, ProducerEvent
from forensics.state.inputs import (
    AbortedTxnEntry,
    SegmentEvents,
    SnapshotRead,
    TxnLogSegment,
)

_MAX_TS = struct.Struct(">q")  # maxTimestamp @35 of a v2 batch
_LEGACY_TS = struct.Struct(">q")  # timestamp @18 of a magic-1 entry


def _unreadable(path: str, exc: ForensicsError) -> Finding:
    return Finding(FindingKind.UNREADABLE_FILE, exc.message, path, exc.position)


def _marker(buf, pos: int, h: v2.BatchHeader) -> Optional[Marker]:
    """The end-transaction marker of a control batch, or None for other control records."""
    for rec in v2.iter_records(buf, pos, h):
        key = decode_control_key(rec.key)
        if key.type not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
            return None
        m = decode_end_txn_marker(key, rec.value)
        return Marker(h.producer_id, h.producer_epoch, rec.offset, m.control_type == ControlRecordType.COMMIT,
                      m.coordinator_epoch, h.max_timestamp, pos)
    return None  # a control batch with no record: ignored by the broker


def producer_events(path: str, base_offset: Optional[int] = None) -> SegmentEvents:
    """Producer events of one segment: a header per data batch, the marker of each control batch."""
    try:
        mf = MappedFile(path)
    except InputError as exc:
        return SegmentEvents(path, base_offset or 0, 0, (), 0, None, None, None, (_unreadable(path, exc),))
    with mf:
        buf = mf.data
        scanner = FrameScanner(buf, path, verify_crc=True, base_offset=base_offset)
        events: List[ProducerEvent] = []
        findings: List[Finding] = []
        batches = 0
        next_offset: Optional[int] = None
        max_ts: Optional[int] = None
        for frame in scanner:
            if frame.crc_ok is False:
                continue
            batches += 1
            next_offset = max(next_offset or 0, frame.last_offset + 1)
            if frame.magic != 2:
                ts = _LEGACY_TS.unpack_from(buf, frame.position + 18)[0] if frame.magic == 1 else -1
                max_ts = ts if max_ts is None else max(max_ts, ts)
                continue
            h = v2.decode_header(buf, frame.position)
            max_ts = h.max_timestamp if max_ts is None else max(max_ts, h.max_timestamp)
            if h.producer_id < 0:
                continue
            if not h.is_control:
                events.append(DataBatch(h.producer_id, h.producer_epoch, h.base_offset, h.last_offset,
                                        h.base_sequence, h.last_sequence, h.max_timestamp, h.is_transactional,
                                        h.records_count, h.size, frame.position))
                continue
            try:
                marker = _marker(buf, frame.position, h)
            except ForensicsError as exc:
                findings.append(Finding(FindingKind.CORRUPT_BATCH, f"control batch does not decode: {exc.message}",
                                        path, frame.position, frame.end, h.base_offset, h.last_offset))
                continue
            if marker is not None:
                events.append(marker)
        findings[:0] = scanner.findings
        return SegmentEvents(path, base_offset if base_offset is not None else 0, mf.size, tuple(events), batches,
                             next_offset, max_ts, scanner.first_invalid_position, tuple(findings))


def txn_log_records(path: str, base_offset: Optional[int] = None) -> TxnLogSegment:
    """Every ``__transaction_state`` record of one segment, keys and values decoded."""
    try:
        mf = MappedFile(path)
    except InputError as exc:
        return TxnLogSegment(path, base_offset or 0, 0, (), None, None, (_unreadable(path, exc),))
    with mf:
        buf = mf.data
        scanner = FrameScanner(buf, path, verify_crc=True, base_offset=base_offset)
        records: List[TxnLogRecord] = []
        findings: List[Finding] = []
        next_offset: Optional[int] = None
        max_ts: Optional[int] = None
        for frame in scanner:
            if frame.crc_ok is False or frame.magic != 2:
                continue
            next_offset = max(next_offset or 0, frame.last_offset + 1)
            h = v2.decode_header(buf, frame.position)
            max_ts = h.max_timestamp if max_ts is None else max(max_ts, h.max_timestamp)
            if h.is_control:
                continue
            try:
                for rec in v2.iter_records(buf, frame.position, h):
                    _txn_record(rec, h, frame.position, path, records, findings)
            except ForensicsError as exc:
                findings.append(Finding(FindingKind.CORRUPT_BATCH, f"batch records do not decode: {exc.message}",
                                        path, frame.position, frame.end, h.base_offset, h.last_offset))
        findings[:0] = scanner.findings
        return TxnLogSegment(path, base_offset if base_offset is not None else 0, mf.size, tuple(records),
                             next_offset, max_ts, tuple(findings))


def _txn_record(rec, h: v2.BatchHeader, pos: int, path: str, out: List[TxnLogRecord],
                findings: List[Finding]) -> None:
    try:
        key = decode_key(rec.key)
    except ForensicsError as exc:
        findings.append(Finding(FindingKind.CORRUPT_TRANSACTION_LOG, f"record key does not decode: {exc.message}",
                                path, pos, None, rec.offset))
        return
    if not isinstance(key, TransactionLogKey):
        findings.append(Finding(FindingKind.CORRUPT_TRANSACTION_LOG,
                                f"unknown record type {key.version}: skipped, as the coordinator does",
                                path, pos, None, rec.offset))
        return
    try:
        value = decode_value(rec.value)
    except ForensicsError as exc:
        findings.append(Finding(FindingKind.CORRUPT_TRANSACTION_LOG,
                                f"value of {key.transactional_id!r} does not decode: {exc.message}",
                                path, pos, None, rec.offset))
        return
    out.append(TxnLogRecord(key.transactional_id, value, rec.offset, rec.timestamp, h.partition_leader_epoch, pos))


def read_snapshot(path: str, offset: int) -> SnapshotRead:
    """A ``.snapshot`` decoded (CRC checked); damage is a finding, never an exception."""
    try:
        snap = decode_snapshot(read_small_file(path, limit=1 << 30), verify_crc=True)
    except ForensicsError as exc:
        return SnapshotRead(path, offset, None, (Finding(FindingKind.CORRUPT_SNAPSHOT, exc.message, path,
                                                         exc.position),))
    if not snap.crc_valid:
        return SnapshotRead(path, offset, snap, (Finding(
            FindingKind.CORRUPT_SNAPSHOT, f"snapshot CRC mismatch: stored {snap.crc}, computed {snap.computed_crc} "
            "(the broker deletes it and loads an older one)", path, 2),))
    return SnapshotRead(path, offset, snap, ())


def read_txn_index(path: str) -> Tuple[Tuple[AbortedTxnEntry, ...], Tuple[Finding, ...]]:
    """Entries of a ``.txnindex`` with their byte positions; damage becomes findings."""
    try:
        data = read_small_file(path, limit=1 << 30)
    except InputError as exc:
        return (), (_unreadable(path, exc),)
    scan = scan_txn_index(data)
    size = ABORTED_TXN_ENTRY.size
    entries = tuple(AbortedTxnEntry(e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset, path,
                                    i * size) for i, e in enumerate(scan.entries))
    return entries, txn_index_findings(scan, path, len(data))
