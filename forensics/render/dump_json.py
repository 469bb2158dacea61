"""Dump rows as JSON lines: a header line (``"type": "header"``, the output's name and version:
:data:`~forensics.render.machine_format.DUMP`), then one object per file start, batch, record, index
entry or finding."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import Any, TextIO

from forensics.codec.batch import BatchHeader, Record
from forensics.codec.compression import codec_name
from forensics.render.machine_format import DUMP
from forensics.render.terminal_text import json_text
from forensics.report.dump import expand_rows
from forensics.report.dump_rows import (
    BatchRow,
    EntryRow,
    FileStart,
    FindingRow,
    KraftSnapshotStart,
    LogStart,
    NoteRow,
    RecordRow,
    TrailingBytes,
)


def _bytes(data: bytes | None) -> str | None:
    """Bytes as UTF-8 text when they are valid UTF-8, else as base64 with a prefix."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(data).decode("ascii")


def batch_obj(row: BatchRow) -> dict[str, Any]:
    f, h = row.frame, row.header
    if isinstance(h, BatchHeader):  # a v2 batch (magic 2); a legacy entry's header is its LegacyRecord
        return {
            "type": "batch", "position": f.position, "size": f.size, "magic": h.magic,
            "baseOffset": h.base_offset, "lastOffset": h.last_offset, "count": h.records_count,
            "baseSequence": h.base_sequence, "lastSequence": h.last_sequence,
            "producerId": h.producer_id, "producerEpoch": h.producer_epoch,
            "partitionLeaderEpoch": h.partition_leader_epoch, "isTransactional": h.is_transactional,
            "isControl": h.is_control, "deleteHorizonMs": h.delete_horizon_ms,
            "timestampType": h.timestamp_type, "baseTimestamp": h.base_timestamp, "maxTimestamp": h.max_timestamp,
            "compression": codec_name(h.codec), "crc": h.crc, "isValid": f.crc_ok is not False,
        }
    return {
        "type": "batch", "position": f.position, "size": f.size, "magic": h.magic, "offset": h.offset,
        "timestampType": h.timestamp_type, "timestamp": h.timestamp, "compression": codec_name(h.codec),
        "crc": h.crc, "isValid": h.is_valid,
    }


def record_obj(row: RecordRow) -> dict[str, Any]:
    r = row.record
    obj: dict[str, Any] = {
        "type": "record", "batchPosition": row.batch.frame.position, "offset": r.offset,
        "timestamp": r.timestamp, "keySize": r.key_size, "valueSize": r.value_size,
    }
    if isinstance(r, Record):  # of a v2 batch (magic 2); a legacy entry's records are LegacyRecords
        obj["sequence"] = r.sequence
        obj["headers"] = [{"key": h.key, "value": _bytes(h.value)} for h in r.headers]
    else:
        obj["crc"] = r.crc
        obj["isValid"] = r.is_valid
    if row.text.control is not None:
        obj["control"] = row.text.control
    if row.text.key is not None:
        obj["key"] = row.text.key
    if row.text.payload is not None:
        obj["payload"] = row.text.payload
    return obj


def _entry_obj(row: EntryRow) -> dict[str, Any]:
    entry = row.entry
    data = entry._asdict() if hasattr(entry, "_asdict") else {
        k: getattr(entry, k) for k in getattr(entry, "__slots__", ()) if not k.startswith("_")
    }
    return {"type": row.kind, **{k: (v.name if hasattr(v, "name") else v) for k, v in data.items()}}


def row_obj(row) -> dict[str, Any]:
    t = type(row)
    if t is RecordRow:
        return record_obj(row)
    if t is BatchRow:
        return batch_obj(row)
    if t is EntryRow:
        return _entry_obj(row)
    if t is FileStart:
        return {"type": "file", "path": row.path, "kind": row.kind}
    if t is LogStart:
        return {"type": "log_start", "baseOffset": row.base_offset}
    if t is KraftSnapshotStart:
        return {"type": "kraft_snapshot", "endOffset": row.end_offset, "epoch": row.epoch, "bootstrap": row.bootstrap}
    if t is NoteRow:
        return {"type": "note", "text": row.text}
    if t is TrailingBytes:
        return {"type": "trailing_bytes", "count": row.byte_count, "file": row.file_name}
    if t is FindingRow:
        return {"type": "finding", **row.finding.as_json()}
    raise TypeError(f"unknown dump row {t.__name__}")


def header_line() -> str:
    """The stream's first line: ``{"type": "header", "format": "kafka-forensics-dump", "formatVersion": N}``."""
    return json.dumps({"type": "header", **DUMP.header()}) + "\n"


def render_dump_json(rows: Iterable, out: TextIO) -> int:
    findings = 0
    for row in expand_rows(rows):
        if type(row) is FindingRow:
            findings += 1
        out.write(json_text(json.dumps(row_obj(row), ensure_ascii=False, default=str)) + "\n")
    return findings
