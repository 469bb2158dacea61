"""``__cluster_metadata`` (KRaft) records: typed decoding and Kafka 4.1
``--cluster-metadata-decoder`` text, plus the text of control records.

Data record value layout (``AbstractApiMessageSerde``)::

    uvarint frame_version (must be 1), uvarint api_key, uvarint version, message

Text API:

* :func:`format_metadata_record` ``(value, offset) -> str``: the text after
  `` payload: `` -- ``{"type":"PARTITION_RECORD","version":2,"data":{...}}`` or Kafka's
  ``Error at O, skipping. <message>`` (sic: no "offset" word in this parser).
  Metadata records have no key in the dump (the key is never printed).
* :func:`format_control_record` ``(control_type, key, value) -> str``: the text after
  ``headerKeys: [..] `` for a record of a control batch, e.g.
  ``LeaderChange: {"version":0,"leaderId":1,...}``, ``endTxnMarker: COMMIT
  coordinatorEpoch: 0``, ``SnapshotHeader {...}``, ``controlType: UNKNOWN(9)``. Kafka's
  tool aborts on a malformed control record, so this raises
  :class:`~forensics.errors.CorruptRecordError` instead of returning text.

Typed API: :func:`decode_metadata_record` (strict, raises
:class:`CorruptMetadataRecordError`) returning :class:`MetadataRecord` whose
:attr:`MetadataRecord.typed` gives :class:`PartitionRecord`,
:class:`PartitionChangeRecord`, :class:`TopicRecord`, :class:`ProducerIdsRecord`,
:class:`FeatureLevelRecord`, :class:`BrokerRegistrationRecord` or
:class:`BrokerRegistrationChangeRecord`; :func:`apply_partition_change` replays a
partition change onto a :class:`PartitionRecord` (leader/partition epochs);
:func:`decode_control_record` for control records.

KNOWN GAPS: schemas come from the 2024-10 trunk plus ``ClearElrRecord`` (api key 28,
reconstructed from a real 4.1 log); fields or records added later (4.1 and after) are
either skipped (unknown tagged fields) or reported as unknown metadata ids.
"""

from __future__ import annotations

import struct as _struct
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple, Union

from forensics.codec.schema import (
    F,
    JavaReader,
    Message,
    S,
    SchemaReadError,
    json_string,
    parse_versions,
    read_message,
    write_json,
)
from forensics.errors import CorruptInputError, CorruptRecordError

__all__ = [
    "CorruptMetadataRecordError",
    "MetadataRecord",
    "PartitionRecord",
    "PartitionChangeRecord",
    "apply_partition_change",
    "TopicRecord",
    "ProducerIdsRecord",
    "FeatureLevelRecord",
    "BrokerRegistrationRecord",
    "BrokerRegistrationChangeRecord",
    "ControlRecord",
    "CONTROL_TYPE_NAMES",
    "METADATA_RECORD_TYPES",
    "decode_metadata_record",
    "format_metadata_record",
    "format_metadata_value",
    "parse_control_type",
    "decode_control_record",
    "format_control_record",
]


class CorruptMetadataRecordError(CorruptInputError):
    """A metadata record value Kafka's ``MetadataRecordSerde`` would reject.

    ``kafka_message`` is the exception message Kafka prints after ``skipping. ``.
    """

    def __init__(self, kafka_message: str, *, position: Optional[int] = None, offset: Optional[int] = None) -> None:
        super().__init__(kafka_message, position=position, offset=offset)
        self.kafka_message = kafka_message


# --------------------------------------------------------------------------- schemas
# metadata/src/main/resources/common/metadata/*.json (apiKey = record type id).


def _m(api_key: int, name: str, valid: str, fields, common=()) -> Message:
    return Message(name, parse_versions(valid), parse_versions("0+"), list(fields), api_key=api_key, common=common)


def _endpoint_struct(name: str):
    return S(
        name,
        [F("name", "string"), F("host", "string"), F("port", "uint16"), F("securityProtocol", "int16")],
    )


def _feature_struct(name: str):
    return S(name, [F("name", "string"), F("minSupportedVersion", "int16"), F("maxSupportedVersion", "int16")])


_METADATA_LIST = [
    _m(0, "RegisterBrokerRecord", "0-3", [
        F("brokerId", "int32"),
        F("isMigratingZkBroker", "bool", "2+", default="false"),
        F("incarnationId", "uuid"),
        F("brokerEpoch", "int64"),
        F("endPoints", "[]struct", struct=_endpoint_struct("BrokerEndpoint")),
        F("features", "[]struct", struct=_feature_struct("BrokerFeature")),
        F("rack", "string", nullable="0+"),
        F("fenced", "bool", default="true"),
        F("inControlledShutdown", "bool", "1+", default="false"),
        F("logDirs", "[]uuid", "3+", tagged="3+", tag=0),
    ]),
    _m(1, "UnregisterBrokerRecord", "0", [F("brokerId", "int32"), F("brokerEpoch", "int64")]),
    _m(2, "TopicRecord", "0", [F("name", "string"), F("topicId", "uuid")]),
    _m(3, "PartitionRecord", "0-2", [
        F("partitionId", "int32", default="-1"),
        F("topicId", "uuid"),
        F("replicas", "[]int32"),
        F("isr", "[]int32"),
        F("removingReplicas", "[]int32"),
        F("addingReplicas", "[]int32"),
        F("leader", "int32", default="-1"),
        F("leaderRecoveryState", "int8", default="0", tagged="0+", tag=0),
        F("leaderEpoch", "int32", default="-1"),
        F("partitionEpoch", "int32", default="-1"),
        F("directories", "[]uuid", "1+"),
        F("eligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tagged="2+", tag=1, default="null"),
        F("lastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=2, default="null"),
    ]),
    _m(4, "ConfigRecord", "0", [
        F("resourceType", "int8"),
        F("resourceName", "string"),
        F("name", "string"),
        F("value", "string", nullable="0+"),
    ]),
    _m(5, "PartitionChangeRecord", "0-2", [
        F("partitionId", "int32", default="-1"),
        F("topicId", "uuid"),
        F("isr", "[]int32", nullable="0+", tagged="0+", tag=0, default="null"),
        F("leader", "int32", tagged="0+", tag=1, default="-2"),
        F("replicas", "[]int32", nullable="0+", tagged="0+", tag=2, default="null"),
        F("removingReplicas", "[]int32", nullable="0+", tagged="0+", tag=3, default="null"),
        F("addingReplicas", "[]int32", nullable="0+", tagged="0+", tag=4, default="null"),
        F("leaderRecoveryState", "int8", tagged="0+", tag=5, default="-1"),
        F("directories", "[]uuid", "1+", nullable="1+", tagged="1+", tag=8, default="null"),
        F("eligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tagged="2+", tag=6, default="null"),
        F("lastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=7, default="null"),
    ]),
    _m(7, "FenceBrokerRecord", "0", [F("id", "int32"), F("epoch", "int64")]),
    _m(8, "UnfenceBrokerRecord", "0", [F("id", "int32"), F("epoch", "int64")]),
    _m(9, "RemoveTopicRecord", "0", [F("topicId", "uuid")]),
    _m(10, "DelegationTokenRecord", "0", [
        F("owner", "string"),
        F("requester", "string"),
        F("renewers", "[]string"),
        F("issueTimestamp", "int64"),
        F("maxTimestamp", "int64"),
        F("expirationTimestamp", "int64"),
        F("tokenId", "string"),
    ]),
    _m(11, "UserScramCredentialRecord", "0", [
        F("name", "string"),
        F("mechanism", "int8"),
        F("salt", "bytes"),
        F("storedKey", "bytes"),
        F("serverKey", "bytes"),
        F("iterations", "int32"),
    ]),
    _m(12, "FeatureLevelRecord", "0", [F("name", "string"), F("featureLevel", "int16")]),
    _m(14, "ClientQuotaRecord", "0", [
        F("entity", "[]struct", struct=S("EntityData", [
            F("entityType", "string"),
            F("entityName", "string", nullable="0+"),
        ])),
        F("key", "string"),
        F("value", "float64"),
        F("remove", "bool"),
    ]),
    _m(15, "ProducerIdsRecord", "0", [
        F("brokerId", "int32"),
        F("brokerEpoch", "int64", default="-1"),
        F("nextProducerId", "int64"),
    ]),
    _m(17, "BrokerRegistrationChangeRecord", "0-2", [
        F("brokerId", "int32"),
        F("brokerEpoch", "int64"),
        F("fenced", "int8", tagged="0+", tag=0),
        F("inControlledShutdown", "int8", "1+", tagged="1+", tag=1),
        F("logDirs", "[]uuid", "2+", tagged="2+", tag=2),
    ]),
    _m(18, "AccessControlEntryRecord", "0", [
        F("id", "uuid"),
        F("resourceType", "int8"),
        F("resourceName", "string"),
        F("patternType", "int8"),
        F("principal", "string"),
        F("host", "string"),
        F("operation", "int8"),
        F("permissionType", "int8"),
    ]),
    _m(19, "RemoveAccessControlEntryRecord", "0", [F("id", "uuid")]),
    _m(20, "NoOpRecord", "0", []),
    _m(21, "ZkMigrationStateRecord", "0", [F("zkMigrationState", "int8")]),
    _m(22, "RemoveUserScramCredentialRecord", "0", [F("name", "string"), F("mechanism", "int8")]),
    _m(23, "BeginTransactionRecord", "0", [
        F("name", "string", nullable="0+", tagged="0+", tag=0, default="null"),
    ]),
    _m(24, "EndTransactionRecord", "0", []),
    _m(25, "AbortTransactionRecord", "0", [
        F("reason", "string", nullable="0+", tagged="0+", tag=0, default="null"),
    ]),
    _m(26, "RemoveDelegationTokenRecord", "0", [F("tokenId", "string")]),
    _m(27, "RegisterControllerRecord", "0", [
        F("controllerId", "int32"),
        F("incarnationId", "uuid"),
        F("zkMigrationReady", "bool"),
        F("endPoints", "[]struct", struct=_endpoint_struct("ControllerEndpoint")),
        F("features", "[]struct", struct=_feature_struct("ControllerFeature")),
    ]),
    # Not in the 2024-10 trunk; layout reconstructed from a Kafka 4.1 log (a plain
    # compact string then the tag section). Nullability is an assumption (not nullable).
    _m(28, "ClearElrRecord", "0", [F("topicName", "string")]),
]


def _snake_upper(name: str) -> str:
    """``MessageGenerator.toSnakeCase(name).toUpperCase()``."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0:
            out.append("_")
        out.append(ch.upper())
    return "".join(out)


METADATA_MESSAGES: Dict[int, Message] = {m.api_key: m for m in _METADATA_LIST}
METADATA_RECORD_TYPES: Dict[int, str] = {k: _snake_upper(m.name) for k, m in METADATA_MESSAGES.items()}

# clients/src/main/resources/common/message: control record values (read at version 0,
# rendered at the version stored in their own "version" field).
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

CONTROL_TYPE_NAMES: Dict[int, str] = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}

# control type -> (message, dump label, label separator)
_CONTROL_MESSAGES: Dict[int, Tuple[Message, str]] = {
    2: (LEADER_CHANGE_MESSAGE, "LeaderChange: "),
    3: (SNAPSHOT_HEADER_RECORD, "SnapshotHeader "),
    4: (SNAPSHOT_FOOTER_RECORD, "SnapshotFooter "),
    5: (KRAFT_VERSION_RECORD, "KRaftVersion "),
    6: (VOTERS_RECORD, "KRaftVoters "),
}


# --------------------------------------------------------------------------- typed records


@dataclass(frozen=True)
class PartitionRecord:
    topic_id: str
    partition_id: int
    replicas: Tuple[int, ...]
    isr: Tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int


@dataclass(frozen=True)
class PartitionChangeRecord:
    """Only changed fields are set: ``leader`` is -2 when unchanged, lists are None.

    The record carries no leader epoch: apply it to the partition's previous state
    with :func:`apply_partition_change` to get the new epochs.
    """

    topic_id: str
    partition_id: int
    leader: int
    isr: Optional[Tuple[int, ...]]
    replicas: Optional[Tuple[int, ...]]

    @property
    def leader_changed(self) -> bool:
        """True when the record sets a leader (even the same one): the epoch bumps."""
        return self.leader != NO_LEADER_CHANGE


NO_LEADER_CHANGE = -2


def apply_partition_change(prev: PartitionRecord, change: PartitionChangeRecord) -> PartitionRecord:
    """``PartitionRegistration.merge``: the partition state after ``change``.

    The leader epoch increments whenever the change sets a leader (``leader != -2``),
    the partition epoch on every change; unset lists keep their previous value.
    """
    if (prev.topic_id, prev.partition_id) != (change.topic_id, change.partition_id):
        raise ValueError("partition change applied to another partition")
    if change.leader == NO_LEADER_CHANGE:
        leader, leader_epoch = prev.leader, prev.leader_epoch
    else:
        leader, leader_epoch = change.leader, prev.leader_epoch + 1
    return PartitionRecord(
        topic_id=prev.topic_id,
        partition_id=prev.partition_id,
        replicas=prev.replicas if change.replicas is None else change.replicas,
        isr=prev.isr if change.isr is None else change.isr,
        leader=leader,
        leader_epoch=leader_epoch,
        partition_epoch=prev.partition_epoch + 1,
    )


@dataclass(frozen=True)
class TopicRecord:
    name: str
    topic_id: str


@dataclass(frozen=True)
class ProducerIdsRecord:
    """A block of producer ids handed to ``broker_id``: ids below ``next_producer_id``
    are allocated."""

    broker_id: int
    broker_epoch: int
    next_producer_id: int


@dataclass(frozen=True)
class FeatureLevelRecord:
    name: str
    feature_level: int


@dataclass(frozen=True)
class BrokerRegistrationRecord:
    broker_id: int
    broker_epoch: int
    incarnation_id: str
    fenced: bool


@dataclass(frozen=True)
class BrokerRegistrationChangeRecord:
    broker_id: int
    broker_epoch: int
    fenced: int  # -1 unfenced, 1 fenced, 0 unchanged
    in_controlled_shutdown: int


TypedMetadata = Union[
    PartitionRecord, PartitionChangeRecord, TopicRecord, ProducerIdsRecord, FeatureLevelRecord,
    BrokerRegistrationRecord, BrokerRegistrationChangeRecord,
]


@dataclass(frozen=True)
class MetadataRecord:
    api_key: int
    type_name: str  # e.g. PARTITION_RECORD
    version: int
    data: Dict[str, Any]

    @property
    def typed(self) -> Optional[TypedMetadata]:
        d = self.data
        k = self.api_key
        if k == 3:
            return PartitionRecord(
                d["topicId"], d["partitionId"], tuple(d["replicas"]), tuple(d["isr"]),
                d["leader"], d["leaderEpoch"], d["partitionEpoch"],
            )
        if k == 5:
            return PartitionChangeRecord(
                d["topicId"], d["partitionId"], d["leader"],
                None if d["isr"] is None else tuple(d["isr"]),
                None if d["replicas"] is None else tuple(d["replicas"]),
            )
        if k == 2:
            return TopicRecord(d["name"], d["topicId"])
        if k == 15:
            return ProducerIdsRecord(d["brokerId"], d["brokerEpoch"], d["nextProducerId"])
        if k == 12:
            return FeatureLevelRecord(d["name"], d["featureLevel"])
        if k == 0:
            return BrokerRegistrationRecord(d["brokerId"], d["brokerEpoch"], d["incarnationId"], d["fenced"])
        if k == 17:
            return BrokerRegistrationChangeRecord(
                d["brokerId"], d["brokerEpoch"], d["fenced"], d["inControlledShutdown"]
            )
        return None


# --------------------------------------------------------------------------- decoding


def _read_short_uvarint(r: JavaReader, entity: str) -> int:
    """``AbstractApiMessageSerde.unsignedIntToShort``."""
    try:
        val = r.read_unsigned_varint()
    except SchemaReadError:
        raise CorruptMetadataRecordError(f"Error while reading {entity}", position=r.pos) from None
    if val > 0x7FFF:
        raise CorruptMetadataRecordError(f"Value for {entity} was too large.", position=r.pos)
    val &= 0xFFFF
    return val - 0x10000 if val & 0x8000 else val


def decode_metadata_record(value: Optional[bytes]) -> MetadataRecord:
    """Deserialize like ``MetadataRecordSerde.read`` (frame, api key, version, message,
    no trailing bytes). Raises :class:`CorruptMetadataRecordError`."""
    if value is None:
        raise CorruptMetadataRecordError("Error while reading frame version", position=0)
    buf = bytes(value)
    r = JavaReader(buf)
    frame = _read_short_uvarint(r, "frame version")
    if frame == 0:
        raise CorruptMetadataRecordError(
            "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview "
            "release of KRaft in 2.8 to newer versions are not supported.",
            position=0,
        )
    if frame != 1:
        raise CorruptMetadataRecordError(
            f"Could not deserialize metadata record due to unknown frame version {frame}"
            "(only frame version 1 is supported)",
            position=0,
        )
    api_key = _read_short_uvarint(r, "type")
    version = _read_short_uvarint(r, "version")
    msg = METADATA_MESSAGES.get(api_key)
    if msg is None:
        raise CorruptMetadataRecordError(
            f"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}",
            position=0,
        )
    try:
        data = read_message(msg, r, version)
    except SchemaReadError as exc:
        raise CorruptMetadataRecordError(
            f"Failed to deserialize record with type {api_key}", position=exc.position
        ) from None
    if r.remaining() > 0:
        raise CorruptMetadataRecordError(
            f"Found {r.remaining()} byte(s) of garbage after {api_key}", position=r.pos
        )
    return MetadataRecord(api_key, METADATA_RECORD_TYPES[api_key], version, data)


def format_metadata_record(value: Optional[bytes], offset: int) -> str:
    """``ClusterMetadataLogMessageParser``: the text after `` payload: ``."""
    try:
        rec = decode_metadata_record(value)
        msg = METADATA_MESSAGES[rec.api_key]
        return (
            '{"type":' + json_string(rec.type_name) + ',"version":' + str(rec.version)
            + ',"data":' + write_json(msg, rec.data, rec.version) + "}"
        )
    except CorruptMetadataRecordError as exc:
        return f"Error at {offset}, skipping. {exc.kafka_message}"
    except SchemaReadError as exc:  # JSON refused: cannot happen for read data
        return f"Error at {offset}, skipping. {exc.java_message}"


format_metadata_value = format_metadata_record  # alias used by forensics.report.decoders


# --------------------------------------------------------------------------- control records


def parse_control_type(key: Optional[bytes]) -> int:
    """``ControlRecordType.parseTypeId``: the int16 type of a control record key."""
    if key is None:
        raise CorruptRecordError("control record has no key", position=0)
    if len(key) < 4:
        raise CorruptRecordError(
            "Invalid value size found for end control record key. Must have at least 4 bytes, "
            f"but found only {len(key)}",
            position=0,
        )
    version, type_id = _struct.unpack_from(">hh", key, 0)
    if version < 0:
        raise CorruptRecordError(
            f"Invalid version found for control record: {version}. May indicate data corruption", position=0
        )
    return type_id


@dataclass(frozen=True)
class ControlRecord:
    control_type: int
    type_name: str  # ABORT, COMMIT, LEADER_CHANGE, ..., UNKNOWN
    coordinator_epoch: Optional[int] = None  # ABORT/COMMIT markers
    data: Optional[Dict[str, Any]] = None  # KRaft control messages


def decode_control_record(key: Optional[bytes], value: Optional[bytes]) -> ControlRecord:
    """Decode a control record like DumpLogSegments does; raises CorruptRecordError."""
    type_id = parse_control_type(key)
    name = CONTROL_TYPE_NAMES.get(type_id, "UNKNOWN")
    if type_id in (0, 1):
        if value is None:
            raise CorruptRecordError("end transaction marker has no value", position=0)
        if len(value) < 6:
            raise CorruptRecordError(
                "Invalid value size found for end transaction marker. Must have at least 6 bytes, "
                f"but found only {len(value)}",
                position=0,
            )
        version, epoch = _struct.unpack_from(">hi", value, 0)
        if version < 0:
            raise CorruptRecordError(
                f"Invalid version found for end transaction marker: {version}. May indicate data corruption",
                position=0,
            )
        return ControlRecord(type_id, name, coordinator_epoch=epoch)
    entry = _CONTROL_MESSAGES.get(type_id)
    if entry is None:
        return ControlRecord(type_id, "UNKNOWN")
    msg = entry[0]
    if value is None:
        raise CorruptRecordError(f"{name} control record has no value", position=0)
    try:
        data = read_message(msg, JavaReader(bytes(value)), 0)
    except SchemaReadError as exc:
        raise CorruptRecordError(f"cannot read {msg.name}: {exc.java_to_string()}", position=exc.position) from None
    return ControlRecord(type_id, name, data=data)


def format_control_record(control_type: Optional[int], key: Optional[bytes], value: Optional[bytes]) -> str:
    """Text DumpLogSegments prints after ``headerKeys: [..] `` for a control record.

    ``control_type`` is the type the caller already parsed from the key (or None); it
    must agree with the key. Raises :class:`CorruptRecordError` where Kafka's tool
    would abort.
    """
    rec = decode_control_record(key, value)
    if control_type is not None and control_type != rec.control_type:
        raise CorruptRecordError(
            f"control type {control_type} does not match the record key's type {rec.control_type}", position=0
        )
    if rec.control_type in (0, 1):
        return f"endTxnMarker: {rec.type_name} coordinatorEpoch: {rec.coordinator_epoch}"
    entry = _CONTROL_MESSAGES.get(rec.control_type)
    if entry is None or rec.data is None:
        return f"controlType: UNKNOWN({rec.control_type})"
    msg, label = entry
    try:
        text = write_json(msg, rec.data, rec.data["version"])
    except SchemaReadError as exc:
        raise CorruptRecordError(f"cannot render {msg.name}: {exc.java_to_string()}", position=0) from None
    return label + text
