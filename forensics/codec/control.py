"""Control records: the end-transaction marker and KRaft's control messages, decoded here only.

Mirrors ``clients/.../record/ControlRecordType.java``, ``EndTransactionMarker.java`` and
``ControlRecordUtils.java``: key = int16 version (>= 0; unknown versions read as v0) + int16 type;
an ABORT/COMMIT value = int16 version (>= 0; only the first 6 bytes are read) + int32
coordinatorEpoch; the KRaft types (LEADER_CHANGE .. KRAFT_VOTERS) hold a message of
``clients/src/main/resources/common/message`` (``LeaderChangeMessage``, ``SnapshotHeaderRecord``,
``SnapshotFooterRecord``, ``KRaftVersionRecord``, ``VotersRecord``). A control batch holds one
control record: the broker reads its first (``ProducerAppendInfo.append``), and so does
:func:`read_control_batch`.
"""

from __future__ import annotations

import struct
from enum import IntEnum
from typing import Any, NamedTuple

from forensics.codec import batch as v2
from forensics.codec.java_reader import JavaReader, SchemaReadError
from forensics.codec.schema import F, Message, S, parse_versions, read_message
from forensics.codec.schema_json import write_json
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
    def type(self) -> ControlRecordType | None:
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


def _versioned(layout: struct.Struct, data: bytes | None, what: str, name: str) -> tuple[int, int]:
    """(version, field) of a control record's key or value: at least ``layout.size`` bytes, a
    version that is not negative (``ControlRecordType.parseTypeId``, ``EndTransactionMarker.deserialize``)."""
    if data is None or len(data) < layout.size:
        size = -1 if data is None else len(data)
        raise CorruptRecordError(f"invalid {what}: must have at least {layout.size} bytes, found {size}")
    version, field = layout.unpack_from(data, 0)
    if version < 0:
        raise CorruptRecordError(f"invalid negative {name} version {version}")
    return version, field


def decode_control_key(key: bytes | None) -> ControlKey:
    return ControlKey(*_versioned(_KEY, key, "control record key", "control record key"))


def decode_end_txn_marker(key: ControlKey, value: bytes | None) -> EndTransactionMarker:
    t = key.type
    if t not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        raise CorruptRecordError(f"control record type {key.type_id} is not an end-transaction marker")
    version, coordinator_epoch = _versioned(_MARKER, value, "end-transaction marker value", "end-transaction marker")
    return EndTransactionMarker(t, version, coordinator_epoch)


def read_control(key: bytes | None, value: bytes | None) -> tuple[ControlKey, EndTransactionMarker | None]:
    """The key of a control record and, for ABORT/COMMIT, its end-transaction marker (the value of
    the other control types is not read). Raises CorruptRecordError."""
    ckey = decode_control_key(key)
    if ckey.type in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        return ckey, decode_end_txn_marker(ckey, value)
    return ckey, None


class ControlBatchRecord(NamedTuple):
    """The control record of a control batch, as the producer state reads it."""

    offset: int
    key: ControlKey
    marker: EndTransactionMarker | None  # ABORT/COMMIT only


def read_control_batch(buf, pos: int, header: v2.BatchHeader) -> ControlBatchRecord | None:
    """The first record of the control batch at ``pos`` (None when it holds none: the broker ignores
    it). Raises CorruptBatchError when the record or its key (or marker) does not decode."""
    for rec in v2.iter_records(buf, pos, header):
        ckey, marker = read_control(rec.key, rec.value)
        return ControlBatchRecord(rec.offset, ckey, marker)
    return None


def encode_end_txn_marker(commit: bool, coordinator_epoch: int) -> tuple:
    """(key, value) bytes of an end-transaction marker record, as Kafka writes them."""
    return (
        _KEY.pack(0, ControlRecordType.COMMIT if commit else ControlRecordType.ABORT),
        _MARKER.pack(0, coordinator_epoch),
    )


# -- KRaft control messages ---------------------------------------------------------------------------
# read at version 0, rendered at the version stored in their own "version" field (as DumpLogSegments)

_VOTER = S("Voter", [F("voterId", "int32"), F("voterDirectoryId", "uuid", "1+")])
LEADER_CHANGE_MESSAGE = Message(
    "LeaderChangeMessage",
    parse_versions("0-1"),
    parse_versions("0+"),
    [
        F("version", "int16"),
        F("leaderId", "int32"),
        F("voters", "[]struct", struct=_VOTER),
        F("grantingVoters", "[]struct", struct=_VOTER),
    ],
    common=[_VOTER],
)
SNAPSHOT_HEADER_RECORD = Message(
    "SnapshotHeaderRecord", parse_versions("0"), parse_versions("0+"),
    [F("version", "int16"), F("lastContainedLogTimestamp", "int64")],
)
SNAPSHOT_FOOTER_RECORD = Message(
    "SnapshotFooterRecord", parse_versions("0"), parse_versions("0+"), [F("version", "int16")]
)
KRAFT_VERSION_RECORD = Message(
    "KRaftVersionRecord", parse_versions("0"), parse_versions("0+"),
    [F("version", "int16"), F("kRaftVersion", "int16")],
)
VOTERS_RECORD = Message(
    "VotersRecord",
    parse_versions("0"),
    parse_versions("0+"),
    [
        F("version", "int16"),
        F("voters", "[]struct", struct=S("Voter", [
            F("voterId", "int32"),
            F("voterDirectoryId", "uuid"),
            F("endpoints", "[]struct", struct=S("Endpoint", [
                F("name", "string"), F("host", "string"), F("port", "uint16"),
            ])),
            F("kRaftVersionFeature", "struct", struct=S("KRaftVersionFeature", [
                F("minSupportedVersion", "int16"), F("maxSupportedVersion", "int16"),
            ])),
        ])),
    ],
)

# control type -> (message, the label DumpLogSegments prints before its JSON)
KRAFT_CONTROL_MESSAGES: dict[ControlRecordType, tuple[Message, str]] = {
    ControlRecordType.LEADER_CHANGE: (LEADER_CHANGE_MESSAGE, "LeaderChange: "),
    ControlRecordType.SNAPSHOT_HEADER: (SNAPSHOT_HEADER_RECORD, "SnapshotHeader "),
    ControlRecordType.SNAPSHOT_FOOTER: (SNAPSHOT_FOOTER_RECORD, "SnapshotFooter "),
    ControlRecordType.KRAFT_VERSION: (KRAFT_VERSION_RECORD, "KRaftVersion "),
    ControlRecordType.KRAFT_VOTERS: (VOTERS_RECORD, "KRaftVoters "),
}


class ControlRecord(NamedTuple):
    """A control record decoded whole: its key, and the marker or the KRaft message it holds."""

    key: ControlKey
    marker: EndTransactionMarker | None = None  # ABORT/COMMIT
    data: dict[str, Any] | None = None  # KRaft control messages

    @property
    def type_name(self) -> str:
        return self.key.type_name


def decode_control_record(key: bytes | None, value: bytes | None) -> ControlRecord:
    """A control record as ``DumpLogSegments`` reads it; raises CorruptRecordError (a null value of
    a KRaft message reads as empty)."""
    ckey, marker = read_control(key, value)
    entry = KRAFT_CONTROL_MESSAGES.get(ckey.type) if ckey.type is not None else None
    if entry is None:
        return ControlRecord(ckey, marker)
    msg = entry[0]
    try:
        data = read_message(msg, JavaReader(bytes(value or b"")), 0)
    except SchemaReadError as exc:
        raise CorruptRecordError(f"cannot read {msg.name}: {exc.java_to_string()}", position=exc.position) from None
    return ControlRecord(ckey, data=data)


def format_control_record(key: bytes | None, value: bytes | None) -> str:
    """The text ``DumpLogSegments`` prints for a control record: ``endTxnMarker: COMMIT
    coordinatorEpoch: 0``, ``LeaderChange: {...}``, ``SnapshotHeader {...}``, ...,
    ``controlType: UNKNOWN(9)``. Kafka's tool aborts on a malformed control record: this raises
    CorruptRecordError instead of returning text."""
    rec = decode_control_record(key, value)
    if rec.marker is not None:
        return f"endTxnMarker: {rec.marker.control_type.name} coordinatorEpoch: {rec.marker.coordinator_epoch}"
    entry = KRAFT_CONTROL_MESSAGES.get(rec.key.type) if rec.key.type is not None else None
    if entry is None or rec.data is None:
        return f"controlType: UNKNOWN({rec.key.type_id})"
    msg, label = entry
    try:
        text = write_json(msg, rec.data, rec.data["version"])
    except SchemaReadError as exc:
        raise CorruptRecordError(f"cannot render {msg.name}: {exc.java_to_string()}", position=0) from None
    return label + text
