"""Dump rows as the text lines of Kafka 4.1's ``kafka-dump-log.sh`` (``DumpLogSegments``; docs/dump-compatibility.md).

Data lines go to ``out`` exactly as Kafka prints them so the two outputs can be diffed: keys,
payloads and file names as they are, control characters included (as Kafka's tool, which prints
them as UTF-8); ``--format json`` escapes them. Findings are diagnostics and go to ``err`` as one
line each, shown through :func:`~forensics.render.terminal_text.term`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from forensics.codec.batch import (
    COMPRESSION_MASK,
    CONTROL_MASK,
    DELETE_HORIZON_MASK,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    BatchHeader,
    RecordBlock,
)
from forensics.codec.compression import codec_name
from forensics.codec.legacy import CODEC_MASK as LEGACY_CODEC_MASK
from forensics.render.terminal_text import TextOut, term
from forensics.report.decoders import string_text
from forensics.report.dump import frame_rows
from forensics.report.dump_rows import (
    BatchRow,
    BatchRun,
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
from forensics.speedups import native


def _bool(value: int) -> str:  # a flag, or the bit of one
    return "true" if value else "false"


def batch_line(row: BatchRow) -> str:
    frame, h = row.frame, row.header
    if isinstance(h, BatchHeader):  # a v2 batch (magic 2); a legacy entry's header is its LegacyRecord
        if native is not None:  # the same line, written in C (this runs for every batch)
            text = native.batch_line(h, frame.position, frame.crc_ok is not False)
            if text is not None:
                return text
        # the header's fields unpacked once
        (base_offset, batch_length, leader_epoch, magic, crc, attributes, last_delta, base_ts, max_ts, producer_id,
         producer_epoch, base_sequence, count) = h
        dh = f"OptionalLong[{base_ts}]" if attributes & DELETE_HORIZON_MASK else "OptionalLong.empty"
        ts_type = "LogAppendTime" if attributes & TIMESTAMP_TYPE_MASK else "CreateTime"
        return (
            f"baseOffset: {base_offset} lastOffset: {base_offset + last_delta} count: {count} "
            f"baseSequence: {base_sequence} lastSequence: {h.last_sequence} producerId: {producer_id} "
            f"producerEpoch: {producer_epoch} partitionLeaderEpoch: {leader_epoch} "
            f"isTransactional: {_bool(attributes & TRANSACTIONAL_MASK)} isControl: {_bool(attributes & CONTROL_MASK)} "
            f"deleteHorizonMs: {dh} position: {frame.position} {ts_type}: {max_ts} size: {LOG_OVERHEAD + batch_length} "
            f"magic: {magic} compresscodec: {codec_name(attributes & COMPRESSION_MASK)} crc: {crc} "
            f"isvalid: {_bool(frame.crc_ok is not False)}"
        )
    offset, size, crc, magic, attributes, timestamp, _, _, is_valid, _ = h  # a LegacyRecord
    return (
        f"offset: {offset} position: {frame.position} {h.timestamp_type}: {timestamp} size: {LOG_OVERHEAD + size} "
        f"magic: {magic} compresscodec: {codec_name(attributes & LEGACY_CODEC_MASK)} crc: {crc} "
        f"isvalid: {_bool(is_valid)}"
    )


def record_line(row: RecordRow, skip_metadata: bool = False) -> str:
    batch, text = row.batch, row.text
    return _line(row.record, batch.header.timestamp_type, batch.frame.magic, text.control, text.key, text.payload,
                 skip_metadata)


def data_record_lines(row: DataRecords, skip_metadata: bool = False) -> str:
    """The lines of a batch's data records, joined (one write per batch). The C accelerator writes
    the same lines: a RecordBlock's straight from its bytes (``native.record_lines``), legacy
    records from their tuples (``native.legacy_lines``)."""
    ts_label, magic = row.batch.header.timestamp_type, row.batch.frame.magic
    records = row.records
    if native is not None:
        if type(records) is RecordBlock:
            text = native.record_lines(records.data, records.header, ts_label, row.print_contents, skip_metadata)
        elif magic < 2:
            text = native.legacy_lines(records, ts_label, row.print_contents, skip_metadata)
        else:
            text = None
        if text is not None:
            return text
    if row.print_contents:
        lines = [_line(r, ts_label, magic, None, string_text(r.key), string_text(r.value), skip_metadata)
                 for r in row.records]
    else:
        lines = [_line(r, ts_label, magic, None, None, None, skip_metadata) for r in row.records]
    lines.append("")
    return "\n".join(lines)


def _line(r, ts_label: str, magic: int, control: str | None, key_text: str | None,
          payload_text: str | None, skip_metadata: bool) -> str:
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


def render_dump_text(rows: Iterable, out: TextOut, err: TextIO, skip_metadata: bool = False) -> int:
    """Write rows; returns the number of findings written to ``err``."""
    findings = 0
    write = out.write
    for row in rows:
        t = type(row)
        if t is BatchRun:
            findings += _batch_run(row, out, err, skip_metadata)
        elif t is DataRecords:
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
            write(f"Found {row.byte_count} invalid bytes at the end of {_as_java(row.file_name)}\n")
        elif t is FindingRow:
            findings += 1
            out.flush()
            err.write(term(row.finding.one_line()) + "\n")
            err.flush()
    return findings


def _batch_run(run: BatchRun, out: TextOut, err: TextIO, skip_metadata: bool) -> int:
    """The lines of a run of batches: the C accelerator writes those it takes (v2 batches whose
    records all decode: data records, with the transaction-log or offsets decoder their common
    records, end-transaction markers) many at once (``native.dump_batches``); every other frame is
    written from its rows (:func:`frame_rows`), as without runs. Returns the number of findings
    written."""
    frames, n = run.frames, len(run.frames)
    findings = i = 0
    contents = run.print_contents
    while i < n:
        if native is not None:
            text, i, python = native.dump_batches(run.walk.buf, frames, i, contents, skip_metadata, run.decoder)
            out.write(text)
            if not python:
                continue
        findings += render_dump_text(frame_rows(run, i), out, err, skip_metadata)
        i += 1
    return findings
