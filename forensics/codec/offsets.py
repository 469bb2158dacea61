"""``__consumer_offsets`` records: typed decoding and Kafka 4.1 ``--offsets-decoder`` text.

Record layout (``CoordinatorRecordSerde``)::

    key   = int16 record_type, then the key message (non-flexible, read at version
            ``record_type`` -- the 4.x key specs have a single version so this never
            changes the layout)
    value = int16 value_version, then the value message read at that version;
            a null value is a tombstone (printed ``<DELETE>``)

Record types handled (``GroupCoordinatorRecordSerde`` / 4.x ``CoordinatorRecordType``):
0 legacy offset commit, 1 offset commit, 2 classic group metadata, 3..8 consumer-group
(KIP-848) records. Other types are reported the way Kafka reports types it does not
know (``Unknown record type N at offset O, skipping.``) -- see KNOWN GAPS below.

Text API (what ``kafka-dump-log.sh --offsets-decoder`` prints after ``headerKeys: [..]``):

* :func:`format_offsets_record` ``(key, value, offset) -> (key_text, payload_text)``
  where ``payload_text`` is None when Kafka prints no `` payload:`` part (the
  unknown-type and error cases). A record without a key raises
  :class:`~forensics.errors.CorruptRecordError` (Kafka's parser throws and the tool
  aborts).
* :func:`format_offsets_key` / :func:`format_offsets_value`: the two halves (the key
  text alone cannot show an error caused by the value; prefer the function above).
* :func:`format_offsets_line_suffix`: `` key: ... payload: ...`` exactly as appended to
  the record line.

Typed API: :func:`decode_offsets_record` (strict; raises
:class:`CorruptCoordinatorRecordError`), :func:`decode_offset_commit`,
:func:`decode_group_metadata`.

KNOWN GAPS (Kafka 4.1 sources were not available; schemas come from the 2024-10 trunk):
share-group (9..15) and streams-group record types are not decoded; tagged fields
added to the consumer-group values after 2024-10 are skipped silently (Kafka 4.1 would
print them when non-default); the legacy type-0 value is assumed to accept only
version 0.
"""

from __future__ import annotations

import struct as _struct
from forensics.dataclass_fast import dataclass
from typing import Any

from forensics.codec.java_reader import JavaReader, SchemaReadError
from forensics.codec.offsets_schemas import (
    CONSUMER_PROTOCOL_ASSIGNMENT,
    CONSUMER_PROTOCOL_SUBSCRIPTION,
    CONSUMER_PROTOCOL_TYPE,
    RECORD_TYPE_NAMES,
    RECORDS,
    record_schemas,
)
from forensics.codec.schema import Message, read_message
from forensics.codec.schema_json import RawJson, json_string, write_json
from forensics.errors import CorruptInputError, CorruptRecordError

__all__ = [
    "CorruptCoordinatorRecordError",
    "UnknownCoordinatorRecordTypeError",
    "CoordinatorRecord",
    "OffsetCommit",
    "GroupMetadata",
    "GroupMember",
    "decode_offsets_record",
    "decode_offset_commit",
    "decode_group_metadata",
    "format_offsets_record",
    "format_offsets_key",
    "format_offsets_value",
    "format_offsets_line_suffix",
    "RECORD_TYPE_NAMES",
]


class CorruptCoordinatorRecordError(CorruptInputError):
    """A ``__consumer_offsets`` key or value that Kafka could not deserialize.

    ``kafka_message`` is the text Kafka's ``getMessage()`` would give (the part after
    ``Error at offset O, skipping. ``).
    """

    def __init__(self, kafka_message: str, *, position: int | None = None, offset: int | None = None) -> None:
        super().__init__(kafka_message, position=position, offset=offset)
        self.kafka_message = kafka_message


class UnknownCoordinatorRecordTypeError(CorruptCoordinatorRecordError):
    """The key's record type is not one this decoder (or Kafka) knows."""

    def __init__(self, record_type: int, *, offset: int | None = None) -> None:
        super().__init__(f"Found an unknown record type {record_type}", position=0, offset=offset)
        self.record_type = record_type


# --------------------------------------------------------------------------- decoding


@dataclass(frozen=True)
class CoordinatorRecord:
    """One deserialized ``__consumer_offsets`` record."""

    record_type: int
    key_name: str
    key: dict[str, Any]
    value_version: int | None  # None for a tombstone
    value: dict[str, Any] | None

    @property
    def is_tombstone(self) -> bool:
        return self.value is None


def _read_version(buf: bytes, name: str) -> tuple[int, int]:
    if len(buf) < 2:
        raise CorruptCoordinatorRecordError(f"Could not read version from {name}'s buffer.", position=0)
    return _struct.unpack_from(">h", buf, 0)[0], 2


def _read_part(msg: Message, buf: bytes, version: int, name: str) -> dict[str, Any]:
    try:
        return read_message(msg, JavaReader(buf, 2), version)
    except SchemaReadError as exc:
        inner = exc.java_message if exc.java_message is not None else "null"
        raise CorruptCoordinatorRecordError(
            f"Could not read record with version {version} from {name}'s buffer due to: {inner}.",
            position=exc.position,
        ) from None


def decode_offsets_record(key: bytes | None, value: bytes | None) -> CoordinatorRecord:
    """Deserialize like ``GroupCoordinatorRecordSerde.deserialize`` (Kafka 4.1).

    Raises :class:`UnknownCoordinatorRecordTypeError` for record types not handled,
    :class:`CorruptCoordinatorRecordError` for anything Kafka would reject and
    :class:`CorruptRecordError` for a record without a key.
    """
    if key is None:
        raise CorruptRecordError("offsets record has no key")
    key = bytes(key)
    record_type, _ = _read_version(key, "key")
    schemas = record_schemas(record_type)
    if schemas is None:
        raise UnknownCoordinatorRecordTypeError(record_type)
    key_msg, value_msg = schemas
    key_data = _read_part(key_msg, key, record_type, "key")
    if value is None:
        return CoordinatorRecord(record_type, key_msg.name, key_data, None, None)
    value = bytes(value)
    value_version, _ = _read_version(value, "value")
    if value_version < value_msg.lowest or value_version > value_msg.highest:
        raise CorruptCoordinatorRecordError(
            f"Found an unknown record version {value_version} for {record_type} type", position=0
        )
    value_data = _read_part(value_msg, value, value_version, "value")
    return CoordinatorRecord(record_type, key_msg.name, key_data, value_version, value_data)


@dataclass(frozen=True)
class OffsetCommit:
    """A committed offset (record types 0 and 1). ``offset`` etc. are None for a
    tombstone (the commit was deleted/expired)."""

    group: str
    topic: str
    partition: int
    value_version: int | None
    offset: int | None
    leader_epoch: int | None  # -1 when not recorded
    metadata: str | None
    commit_timestamp: int | None
    expire_timestamp: int | None  # only value version 1 carries it; else -1

    @property
    def is_tombstone(self) -> bool:
        return self.value_version is None


def decode_offset_commit(key: bytes | None, value: bytes | None) -> OffsetCommit | None:
    """Typed offset commit, or None when the key is another (or an unknown) record type.

    Corrupt keys/values raise :class:`CorruptCoordinatorRecordError`.
    """
    try:
        rec = decode_offsets_record(key, value)
    except UnknownCoordinatorRecordTypeError:
        return None
    if rec.record_type not in (0, 1):
        return None
    k, v = rec.key, rec.value
    if v is None:
        return OffsetCommit(k["group"], k["topic"], k["partition"], None, None, None, None, None, None)
    return OffsetCommit(
        group=k["group"],
        topic=k["topic"],
        partition=k["partition"],
        value_version=rec.value_version,
        offset=v["offset"],
        leader_epoch=v["leaderEpoch"],
        metadata=v["metadata"],
        commit_timestamp=v["commitTimestamp"],
        expire_timestamp=v["expireTimestamp"],
    )


@dataclass(frozen=True)
class GroupMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupMetadata:
    """A classic group's state (record type 2); fields are None for a tombstone."""

    group: str
    value_version: int | None
    protocol_type: str | None
    generation: int | None
    protocol: str | None
    leader: str | None
    current_state_timestamp: int | None
    members: tuple[GroupMember, ...]

    @property
    def is_tombstone(self) -> bool:
        return self.value_version is None


def decode_group_metadata(key: bytes | None, value: bytes | None) -> GroupMetadata | None:
    """Typed classic-group metadata, or None when the key is another record type."""
    try:
        rec = decode_offsets_record(key, value)
    except UnknownCoordinatorRecordTypeError:
        return None
    if rec.record_type != 2:
        return None
    group = rec.key["group"]
    v = rec.value
    if v is None:
        return GroupMetadata(group, None, None, None, None, None, None, ())
    members = tuple(
        GroupMember(
            m["memberId"], m["groupInstanceId"], m["clientId"], m["clientHost"],
            m["rebalanceTimeout"], m["sessionTimeout"], m["subscription"], m["assignment"],
        )
        for m in v["members"]
    )
    return GroupMetadata(
        group, rec.value_version, v["protocolType"], v["generation"], v["protocol"], v["leader"],
        v["currentStateTimestamp"], members,
    )


# --------------------------------------------------------------------------- text


def _embedded_protocol_json(msg: Message, raw: bytes) -> str | None:
    """DumpLogSegments' ``replace``: version-prefixed consumer protocol bytes to JSON,
    or None to keep the base64 bytes (any RuntimeException is swallowed by Kafka)."""
    try:
        r = JavaReader(raw)
        version = r.read_short()
        data = read_message(msg, r, version)
        return write_json(msg, data, version)
    except SchemaReadError:
        return None


def _group_metadata_json(msg: Message, data: dict[str, Any], version: int) -> str:
    if data.get("protocolType") != CONSUMER_PROTOCOL_TYPE:
        return write_json(msg, data, version)
    patched = dict(data)
    members: list[dict[str, Any]] = []
    for m in data.get("members") or []:
        pm = dict(m)
        sub = _embedded_protocol_json(CONSUMER_PROTOCOL_SUBSCRIPTION, m["subscription"])
        if sub is not None:
            pm["subscription"] = RawJson(sub)
        asg = _embedded_protocol_json(CONSUMER_PROTOCOL_ASSIGNMENT, m["assignment"])
        if asg is not None:
            pm["assignment"] = RawJson(asg)
        members.append(pm)
    patched["members"] = members
    return write_json(msg, patched, version)


def format_offsets_record(key: bytes | None, value: bytes | None, offset: int) -> tuple[str, str | None]:
    """``OffsetsMessageParser.parse``: (key text, payload text or None).

    The payload is None exactly when Kafka prints no `` payload:`` part.
    """
    if key is None:
        raise CorruptRecordError(
            f"Failed to decode message at offset {offset} using the specified decoder (message had a missing key)",
            offset=offset,
        )
    try:
        rec = decode_offsets_record(key, value)
        key_msg, value_msg = RECORDS[rec.record_type]
        key_text = '{"type":' + json_string(str(key_msg.api_key)) + ',"data":' + write_json(key_msg, rec.key, 0) + "}"
        if rec.value is None:
            return key_text, "<DELETE>"
        assert rec.value_version is not None
        if rec.record_type == 2:
            data_text = _group_metadata_json(value_msg, rec.value, rec.value_version)
        else:
            data_text = write_json(value_msg, rec.value, rec.value_version)
        value_text = '{"version":' + json_string(str(rec.value_version)) + ',"data":' + data_text + "}"
        return key_text, value_text
    except UnknownCoordinatorRecordTypeError as exc:
        return f"Unknown record type {exc.record_type} at offset {offset}, skipping.", None
    except CorruptCoordinatorRecordError as exc:
        return f"Error at offset {offset}, skipping. {exc.kafka_message}", None
    except SchemaReadError as exc:  # JSON writing refused (cannot happen for read data)
        return f"Error at offset {offset}, skipping. {exc.java_message}", None


def format_offsets_key(key: bytes | None, offset: int) -> str:
    """The key text alone (what Kafka prints after `` key: `` for a tombstone).

    Kafka replaces the whole key text by ``Error at offset ...`` when the *value* is
    unreadable; use :func:`format_offsets_record` when reproducing a dump line."""
    return format_offsets_record(key, None, offset)[0]


def format_offsets_value(key: bytes | None, value: bytes | None, offset: int) -> str | None:
    """The text after `` payload: ``, or None when Kafka prints no payload."""
    return format_offsets_record(key, value, offset)[1]


def format_offsets_line_suffix(key: bytes | None, value: bytes | None, offset: int) -> str:
    """`` key: K payload: V`` exactly as DumpLogSegments appends it to a record line."""
    key_text, value_text = format_offsets_record(key, value, offset)
    out = " key: " + key_text
    if value_text is not None:
        out += " payload: " + value_text
    return out
