"""Control records and the end-transaction marker (spec §7).

Mirrors ``clients/.../record/ControlRecordType.java`` and ``EndTransactionMarker.java``:
key = int16 version (>= 0; unknown versions read as v0) + int16 type; an ABORT/COMMIT
value = int16 version (>= 0; only the first 6 bytes are read) + int32 coordinatorEpoch.
"""

from __future__ import annotations

import struct
from enum import IntEnum
from typing import NamedTuple, Optional

from forensics.errors import CorruptRecordError

_KEY = struct.Struct(">hh")
_MARKER = struct.Struct(">hi")
CONTROL_KEY_SIZE = _KEY.size  # 4
END_TXN_MARKER_VALUE_SIZE = _MARKER.size  # 6


class ControlRecordType(IntEnum):
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


class ControlKey(NamedTuple):
    version: int
    type_id: int

    @property
    def type(self) -> Optional[ControlRecordType]:
        try:
            return ControlRecordType(self.type_id)
        except ValueError:
            return None

    @property
    def type_name(self) -> str:
        t = self.type
        return t.name if t is not None else "UNKNOWN"


class EndTransactionMarker(NamedTuple):
    control_type: ControlRecordType  # ABORT or COMMIT
    version: int
    coordinator_epoch: int

    @property
    def is_commit(self) -> bool:
        return self.control_type == ControlRecordType.COMMIT


def decode_control_key(key: Optional[bytes]) -> ControlKey:
    if key is None or len(key) < CONTROL_KEY_SIZE:
        size = -1 if key is None else len(key)
        raise CorruptRecordError(
            f"invalid control record key: must have at least {CONTROL_KEY_SIZE} bytes, found {size}"
        )
    version, type_id = _KEY.unpack_from(key, 0)
    if version < 0:
        raise CorruptRecordError(f"invalid negative control record key version {version}")
    return ControlKey(version, type_id)


def decode_end_txn_marker(key: ControlKey, value: Optional[bytes]) -> EndTransactionMarker:
    t = key.type
    if t not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        raise CorruptRecordError(f"control record type {key.type_id} is not an end-transaction marker")
    if value is None or len(value) < END_TXN_MARKER_VALUE_SIZE:
        size = -1 if value is None else len(value)
        raise CorruptRecordError(
            f"invalid end-transaction marker value: must have at least {END_TXN_MARKER_VALUE_SIZE} bytes, found {size}"
        )
    version, coordinator_epoch = _MARKER.unpack_from(value, 0)
    if version < 0:
        raise CorruptRecordError(f"invalid negative end-transaction marker version {version}")
    return EndTransactionMarker(t, version, coordinator_epoch)


def encode_end_txn_marker(commit: bool, coordinator_epoch: int) -> tuple:
    """(key, value) bytes of an end-transaction marker record, as Kafka writes them."""
    return (
        _KEY.pack(0, ControlRecordType.COMMIT if commit else ControlRecordType.ABORT),
        _MARKER.pack(0, coordinator_epoch),
    )
