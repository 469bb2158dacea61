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
:attr:`MetadataRecord.typed` gives the typed record of the types a cluster image is folded from
(:mod:`forensics.codec.metadata_typed`, re-exported here with Kafka's ``PartitionRegistration``
rules :func:`partition_registration` and :func:`apply_partition_change`).

KNOWN GAPS: the schemas (:mod:`forensics.codec.metadata_schemas`) come from the 2024-10 trunk
plus ``ClearElrRecord`` (api key 28, reconstructed from a real 4.1 log); fields or records added
later (4.1 and after) are either skipped (unknown tagged fields) or reported as unknown metadata
ids.
"""

from __future__ import annotations

from forensics.dataclass_fast import dataclass
from typing import Any

from forensics.codec.metadata_schemas import METADATA_MESSAGES, METADATA_RECORD_TYPES
from forensics.codec.metadata_typed import (  # re-exported: the typed records of this decoder
    apply_partition_change,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationRecord,
    ClearElrRecord,
    ControllerRegistrationRecord,
    DIRECTORY_LOST,
    DIRECTORY_MIGRATING,
    DIRECTORY_UNASSIGNED,
    Endpoint,
    FeatureLevelRecord,
    FeatureRange,
    FenceBrokerRecord,
    NO_LEADER,
    NO_LEADER_CHANGE,
    partition_registration,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RemoveTopicRecord,
    reserved_directory,
    TopicRecord,
    typed_record,
    TypedMetadata,
    UnregisterBrokerRecord,
)
from forensics.codec.java_reader import JavaReader, SchemaReadError
from forensics.codec.schema import read_message
from forensics.codec.schema_json import json_string, write_json
from forensics.errors import CorruptInputError

__all__ = [
    "CorruptMetadataRecordError",
    "MetadataRecord",
    "PartitionRecord",
    "PartitionChangeRecord",
    "partition_registration",
    "apply_partition_change",
    "reserved_directory",
    "DIRECTORY_LOST",
    "DIRECTORY_MIGRATING",
    "DIRECTORY_UNASSIGNED",
    "NO_LEADER",
    "NO_LEADER_CHANGE",
    "Endpoint",
    "FeatureRange",
    "TopicRecord",
    "RemoveTopicRecord",
    "ClearElrRecord",
    "ProducerIdsRecord",
    "FeatureLevelRecord",
    "BrokerRegistrationRecord",
    "UnregisterBrokerRecord",
    "FenceBrokerRecord",
    "BrokerRegistrationChangeRecord",
    "ControllerRegistrationRecord",
    "METADATA_MESSAGES",
    "METADATA_RECORD_TYPES",
    "decode_metadata_record",
    "format_metadata_record",
]


class CorruptMetadataRecordError(CorruptInputError):
    """A metadata record value Kafka's ``MetadataRecordSerde`` would reject.

    ``kafka_message`` is the exception message Kafka prints after ``skipping. ``.
    """

    def __init__(self, kafka_message: str, *, position: int | None = None, offset: int | None = None) -> None:
        super().__init__(kafka_message, position=position, offset=offset)
        self.kafka_message = kafka_message


# --------------------------------------------------------------------------- typed records


@dataclass(frozen=True)
class MetadataRecord:
    api_key: int
    type_name: str  # e.g. PARTITION_RECORD
    version: int
    data: dict[str, Any]

    @property
    def typed(self) -> TypedMetadata | None:
        """The typed record, None for the types no fold reads (configs, ACLs, quotas, ...)."""
        return typed_record(self.api_key, self.data)


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


def decode_metadata_record(value: bytes | None) -> MetadataRecord:
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


def format_metadata_record(value: bytes | None, offset: int) -> str:
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

