"""Dump rows as the text lines of Kafka 4.1's ``kafka-dump-log.sh`` (spec §12).

Data lines go to ``out`` exactly as Kafka prints them so the two outputs can be diffed: keys,
payloads and file names as they are, control characters included (as Kafka's tool, which prints
them as UTF-8); ``--format json`` escapes them. Findings are diagnostics and go to ``err`` as one
line each, shown through :func:`~forensics.render.terminal_text.term`.
"""

from __future__ import annotations

from typing import Iterable, Optional, TextIO

from forensics.codec.compression import codec_name
from forensics.render.terminal_text import term
from forensics.report.decoders import string_text
from forensics.report.events import (
    BatchRow,
    DataRecords,
    EntryRow,
    FileStart,
    FindingRow,
    KraftSnapshotStart,
    LogStart,
    NoteRow,
    RecordRow,
    TrailingBytes,
)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def batch_line(row: BatchRow) -> str:
    frame, h = row.frame, row.header
    if frame.magic >= 2:
        horizon = h.delete_horizon_ms
        dh = "OptionalLong.empty" if horizon is None else f"OptionalLong[{horizon}]"
        return (
            f"baseOffset: {h.base_offset} lastOffset: {h.last_offset} count: {h.records_count} "
            f"baseSequence: {h.base_sequence} lastSequence: {h.last_sequence} producerId: {h.producer_id} "
            f"producerEpoch: {h.producer_epoch} partitionLeaderEpoch: {h.partition_leader_epoch} "
            f"isTransactional: {_bool(h.is_transactional)} isControl: {_bool(h.is_control)} deleteHorizonMs: {dh} "
            f"position: {frame.position} {h.timestamp_type}: {h.max_timestamp} size: {h.size} magic: {h.magic} "
            f"compresscodec: {codec_name(h.codec)} crc: {h.crc} isvalid: {_bool(frame.crc_ok is not False)}"
        )
    return (
        f"offset: {h.offset} position: {frame.position} {h.timestamp_type}: {h.timestamp} size: {h.total_size} "
        f"magic: {h.magic} compresscodec: {codec_name(h.codec)} crc: {h.crc} isvalid: {_bool(h.is_valid)}"
    )


def record_line(row: RecordRow, skip_metadata: bool = False) -> str:
    batch, text = row.batch, row.text
    return _line(row.record, batch.header.timestamp_type, batch.frame.magic, text.control, text.key, text.payload,
                 skip_metadata)


def data_record_lines(row: DataRecords, skip_metadata: bool = False) -> str:
    """The lines of a batch's data records, joined (one write per batch)."""
    ts_label, magic = row.batch.header.timestamp_type, row.batch.frame.magic
    if row.print_contents:
        lines = [_line(r, ts_label, magic, None, string_text(r.key), string_text(r.value), skip_metadata)
                 for r in row.records]
    else:
        lines = [_line(r, ts_label, magic, None, None, None, skip_metadata) for r in row.records]
    lines.append("")
    return "\n".join(lines)


def _line(r, ts_label: str, magic: int, control: Optional[str], key_text: Optional[str],
          payload_text: Optional[str], skip_metadata: bool) -> str:
    line = ""
    prefix = "| "
    if not skip_metadata:
        key, value = r.key, r.value
        line = (
            f"| offset: {r.offset} {ts_label}: {r.timestamp} "
            f"keySize: {-1 if key is None else len(key)} valueSize: {-1 if value is None else len(value)}"
        )
        if magic >= 2:
            keys = ",".join([h.key for h in r.headers]) if r.headers else ""
            line += f" sequence: {r.sequence} headerKeys: [{keys}]"
        else:
            line += f" isValid: {_bool(r.is_valid)} crc: {r.crc}}}"
        if control is not None:
            line += " " + control
        prefix = " "
    if key_text is not None:
        line += f"{prefix}key: {key_text}"
    if payload_text is not None:
        line += f" payload: {payload_text}"
    return line


def _as_java(path: str) -> str:
    """A file name as Kafka's tool prints it: as it is (control characters too: the dump is
    Kafka's, byte for byte), but bytes that are not UTF-8 as U+FFFD, as Java decodes them."""
    return path if path.isascii() else path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def render_dump_text(rows: Iterable, out: TextIO, err: TextIO, skip_metadata: bool = False) -> int:
    """Write rows; returns the number of findings written to ``err``."""
    findings = 0
    write = out.write
    for row in rows:
        t = type(row)
        if t is DataRecords:
            write(data_record_lines(row, skip_metadata))
        elif t is RecordRow:
            write(record_line(row, skip_metadata) + "\n")
        elif t is BatchRow:
            write(batch_line(row) + "\n")
        elif t is EntryRow:
            write(row.text + "\n")
        elif t is NoteRow:
            write(_as_java(row.text) + "\n")
        elif t is FileStart:
            write(f"Dumping {_as_java(row.path)}\n")
        elif t is LogStart:
            write(f"Log starting offset: {row.base_offset}\n")
        elif t is KraftSnapshotStart:
            if row.bootstrap:
                write("KRaft bootstrap snapshot\n")
            else:
                write(f"Snapshot end offset: {row.end_offset}, epoch: {row.epoch}\n")
        elif t is TrailingBytes:
            write(f"Found {row.count} invalid bytes at the end of {_as_java(row.file_name)}\n")
        elif t is FindingRow:
            findings += 1
            out.flush()
            err.write(term(row.finding.one_line()) + "\n")
            err.flush()
    return findings
