"""Run one frame through every decoder (consuming iterators), for the fuzz contract test and the
standalone fuzz harness: only ForensicsError subclasses may escape."""

from __future__ import annotations

from forensics.codec import control, legacy
from forensics.codec.batch import crc_ok, decode_header, iter_records
from forensics.errors import ForensicsError


def decode_frame(buf, pos: int, magic: int) -> None:
    if magic == 2:
        h = decode_header(buf, pos)
        crc_ok(buf, pos, h)
        for rec in iter_records(buf, pos, h):
            if h.is_control:
                try:
                    control.decode_end_txn_marker(control.decode_control_key(rec.key), rec.value)
                except ForensicsError:
                    pass
    else:
        for _ in legacy.iter_deep(legacy.decode_entry(buf, pos)):
            pass
