"""``__cluster_metadata`` (KRaft) records: typed decoding and Kafka 4.1's
``--cluster-metadata-decoder`` text (control records are :mod:`forensics.codec.control`'s).

Data record value layout (``AbstractApiMessageSerde``)::

    uvarint frame_version (must be 1), uvarint api_key, uvarint version, message

Text API: :func:`format_metadata_record` ``(value, offset) -> str``: the text after
`` payload: `` -- ``{"type":"PARTITION_RECORD","version":2,"data":{...}}`` or Kafka's
``Error at O, skipping. <message>`` (sic: no "offset" word in this parser). Metadata records
have no key in the dump (the key is never printed).

Typed API: :func:`decode_metadata_record` (strict, raises
:class:`CorruptMetadataRecordError`) returning :class:`MetadataRecord` whose
:attr:`MetadataRecord.typed` gives :class:`PartitionRecord`,
:class:`PartitionChangeRecord`, :class:`TopicRecord`, :class:`ProducerIdsRecord`,
:class:`FeatureLevelRecord`, :class:`BrokerRegistrationRecord` or
:class:`BrokerRegistrationChangeRecord`; :func:`apply_partition_change` replays a
partition change onto a :class:`PartitionRecord` (leader/partition epochs).

KNOWN GAPS: the schemas (:mod:`forensics.codec.metadata_schemas`) come from the 2024-10 trunk
plus ``ClearElrRecord`` (api key 28, reconstructed from a real 4.1 log); fields or records added
later (4.1 and after) are either skipped (unknown tagged fields) or reported as unknown metadata
ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple, Union

from forensics.codec.metadata_schemas import METADATA_MESSAGES, METADATA_RECORD_TYPES
from forensics.codec.java_reader import JavaReader, SchemaReadError
from forensics.codec.schema import read_message
from forensics.codec.schema_json import json_string, write_json
from forensics.errors import CorruptInputError

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
    "METADATA_MESSAGES",
    "METADATA_RECORD_TYPES",
    "decode_metadata_record",
    "format_metadata_record",
]


class CorruptMetadataRecordError(CorruptInputError):
    """A metadata record value Kafka's ``MetadataRecordSerde`` would reject.

    ``kafka_message`` is the exception message Kafka prints after ``skipping. ``.
    """

    def __init__(self, kafka_message: str, *, position: Optional[int] = None, offset: Optional[int] = None) -> None:
        super().__init__(kafka_message, position=position, offset=offset)
        self.kafka_message = kafka_message


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

