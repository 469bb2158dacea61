"""Dump rows for the files beside a segment: ``.index``, ``.timeindex``, ``.txnindex``, ``.snapshot``.

Entry lines are Kafka 4.1's; where Kafka's tool prints nothing or crashes (zero-filled index
of an empty segment, bad snapshot CRC, unsupported txn index version) we print what is there
and add a finding.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from forensics.codec import indexes, snapshot
from forensics.codec.zeros import Holes
from forensics.errors import CorruptSnapshotError, ForensicsError, InputError
from forensics.findings import Finding, FindingKind, Severity
from forensics.io.files import WHOLE_FILE_LIMIT, FileTooLarge, MappedFile
from forensics.io.segment import SegmentWalk
from forensics.report.dump_rows import (
    INDEX_ENTRY, SNAPSHOT_ENTRY, TIMEINDEX_ENTRY, TXNINDEX_ENTRY, DumpRow, EntryRow, FindingRow, NoteRow)


def dump_aux(path: str, kind: str) -> Iterator[DumpRow]:
    with MappedFile(path) as mf:
        if kind == "snapshot":
            if mf.size > WHOLE_FILE_LIMIT:  # decoded whole (its CRC covers it all), as the unit reader does
                raise FileTooLarge(path, mf.size, WHOLE_FILE_LIMIT)
            yield from _snapshot(mf.data, path)
            return
        if kind == "txnindex":
            yield from _txn_index(mf.data, path, mf.holes)
            return
        base = _base_offset(path)
        if kind == "index":
            yield from _offset_index(mf.data, path, base, mf.holes)
        else:
            yield from _time_index(mf.data, path, base, mf.holes)


def _base_offset(path: str) -> int:
    head = os.path.basename(path).split(".")[0]
    if not head.isdigit():
        raise InputError("an index file name must start with its segment's base offset", path=path)
    return int(head)


def _index_tail_findings(scan: indexes.IndexScan[indexes.E], path: str, entry_size: int) -> Iterator[DumpRow]:
    if scan.all_zero:
        yield FindingRow(Finding(
            FindingKind.INDEX_ZERO_TAIL,
            "index is entirely zero-filled (preallocated index of an empty segment after an unclean stop); "
            "kafka-dump-log.sh crashes on it", path, 0, scan.entry_count * entry_size))
    elif scan.zero_tail_start is not None:
        yield FindingRow(Finding(
            FindingKind.INDEX_ZERO_TAIL,
            "zero-filled preallocated tail (the broker stopped without trimming the active index)",
            path, scan.zero_tail_start, scan.entry_count * entry_size))
    elif scan.stop_position is not None:
        yield FindingRow(Finding(
            FindingKind.CORRUPT_INDEX, "entries after a zero relative offset are not zero: index is damaged",
            path, scan.stop_position, scan.entry_count * entry_size))
    if scan.trailing_bytes:
        end = scan.entry_count * entry_size
        yield FindingRow(Finding(FindingKind.CORRUPT_INDEX, f"{scan.trailing_bytes} bytes of a partial entry",
                                 path, end, end + scan.trailing_bytes))


def _offset_index(buf, path: str, base: int, holes: Holes) -> Iterator[DumpRow]:
    scan = indexes.scan_offset_index(buf, base, holes)
    if scan.entry_count == 0:
        yield NoteRow(text=f"{path} is empty.")
    for entry in scan.entries:
        yield EntryRow(kind=INDEX_ENTRY.tag, entry=entry, text=indexes.format_offset_position(entry))
    yield from _index_tail_findings(scan, path, indexes.OFFSET_INDEX_ENTRY.size)
    if not scan.all_zero:
        yield from _check_against_log(scan, path)


def _check_against_log(scan: indexes.OffsetIndexScan, path: str) -> Iterator[DumpRow]:
    """Kafka's mismatch check: the batch at each entry's position should end at the entry's offset."""
    log_path = os.path.join(os.path.dirname(path), os.path.basename(path).split(".")[0] + ".log")
    if not os.path.isfile(log_path):
        yield FindingRow(Finding(FindingKind.ORPHAN_INDEX, "no .log beside this index; entries not checked", path))
        return
    try:
        with SegmentWalk(log_path) as log:
            for i, entry in enumerate(scan.entries):
                frame = log.frame_at(entry.position)
                if frame is None:
                    yield FindingRow(Finding(
                        FindingKind.CORRUPT_INDEX, f"entry for offset {entry.offset} points to byte {entry.position} "
                        f"where {log_path} holds no batch", path, i * 8, i * 8 + 8, entry.offset))
                elif frame.last_offset != entry.offset:
                    yield FindingRow(Finding(
                        FindingKind.CORRUPT_INDEX, f"index offset {entry.offset} but the batch at byte {entry.position} "
                        f"ends at offset {frame.last_offset} (normal for follower appends)", path, i * 8, i * 8 + 8,
                        entry.offset, severity=Severity.INFO))
    except ForensicsError as exc:
        yield FindingRow(Finding(FindingKind.UNREADABLE_FILE, f"cannot check index against its log: {exc.message}",
                                 log_path))


def _time_index(buf, path: str, base: int, holes: Holes) -> Iterator[DumpRow]:
    scan = indexes.scan_time_index(buf, base, holes)
    for entry in scan.entries:
        yield EntryRow(kind=TIMEINDEX_ENTRY.tag, entry=entry, text=indexes.format_timestamp_offset(entry))
    yield from _index_tail_findings(scan, path, indexes.TIME_INDEX_ENTRY.size)


def _txn_index(buf, path: str, holes: Holes) -> Iterator[DumpRow]:
    scan = indexes.scan_txn_index(buf, holes)
    for entry in scan.entries:
        yield EntryRow(kind=TXNINDEX_ENTRY.tag, entry=entry, text=indexes.format_aborted_txn(entry))
    for finding in indexes.txn_index_findings(scan, path, len(buf)):
        yield FindingRow(finding)


def _snapshot(buf, path: str) -> Iterator[DumpRow]:
    problem: CorruptSnapshotError | None = None
    try:
        snap = snapshot.decode_snapshot(buf)
    except CorruptSnapshotError as exc:
        problem = exc
        try:
            snap = snapshot.decode_snapshot(buf, verify_crc=False)
        except CorruptSnapshotError:
            snap = None
    if snap is not None:
        for entry in snap.entries:
            yield EntryRow(kind=SNAPSHOT_ENTRY.tag, entry=entry, text=snapshot.format_snapshot_entry(entry))
    if problem is not None:
        shown = "entries shown above are unverified" if snap is not None else "no entry could be decoded"
        yield FindingRow(Finding(FindingKind.CORRUPT_SNAPSHOT, f"{problem.message} ({shown}; the broker would "
                                 "delete this snapshot and rebuild from the log)", path, problem.position or 0, len(buf)))
