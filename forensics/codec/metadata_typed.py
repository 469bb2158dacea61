"""Typed ``__cluster_metadata`` records and the rules Kafka applies to them.

The typed records of the types a cluster image is folded from (``metadata/src/main/resources/common/
metadata/*.json``), made from the fields :mod:`forensics.codec.metadata_records` decoded
(:func:`typed_record`); :func:`partition_registration` and :func:`apply_partition_change` are
Kafka's ``PartitionRegistration`` (the state a ``PartitionRecord`` creates, and ``merge`` of a
``PartitionChangeRecord``: epochs, directories, ELR); :func:`reserved_directory` names
``DirectoryId``'s reserved ids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from forensics.dataclass_fast import dataclass
from typing import Any, NamedTuple

from forensics.codec.java_reader import uuid_from_string

Ids = tuple[int, ...]
NO_LEADER = -1  # PartitionRecord.leader / PartitionChangeRecord.leader: the partition has no leader
NO_LEADER_CHANGE = -2  # PartitionChangeRecord.leader: the record does not change the leader

# org.apache.kafka.common.DirectoryId: reserved directory ids (most significant bits 0, least < 100)
DIRECTORY_MIGRATING = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid(0, 0): replica of a record from before directories (KIP-858)
DIRECTORY_UNASSIGNED = "AAAAAAAAAAAAAAAAAAAAAQ"  # Uuid(0, 1): not yet placed in a log dir
DIRECTORY_LOST = "AAAAAAAAAAAAAAAAAAAAAg"  # Uuid(0, 2): its log dir went offline
_DIRECTORY_NAMES = {DIRECTORY_MIGRATING: "MIGRATING", DIRECTORY_UNASSIGNED: "UNASSIGNED", DIRECTORY_LOST: "LOST"}


def reserved_directory(directory_id: str) -> str | None:
    """``DirectoryId.reserved``: the name of a reserved directory id (``MIGRATING``, ``UNASSIGNED``,
    ``LOST``, or ``RESERVED(n)`` for the other ids below 100), None for a real log dir's id."""
    name = _DIRECTORY_NAMES.get(directory_id)
    if name is not None:
        return name
    try:
        raw = uuid_from_string(directory_id)
    except ValueError:
        return None
    low = int.from_bytes(raw[8:], "big", signed=True)
    return f"RESERVED({low})" if raw[:8] == bytes(8) and 0 <= low < 100 else None


class Endpoint(NamedTuple):
    """A listener of a broker or controller registration (``BrokerEndpoint``, ``ControllerEndpoint``)."""

    name: str
    host: str
    port: int
    security_protocol: int  # SecurityProtocol id: 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL


class FeatureRange(NamedTuple):
    """A feature's supported range in a registration (``BrokerFeature``, ``ControllerFeature``)."""

    name: str
    min_supported: int
    max_supported: int


@dataclass(frozen=True)
class PartitionRecord:
    """A ``PartitionRecord`` as written, or (from :func:`partition_registration` and
    :func:`apply_partition_change`) a partition's registration as Kafka's ``PartitionRegistration``
    holds it: there ``directories`` has one directory id per replica (``MIGRATING`` for records
    written before KIP-858) and the ELR lists are never None."""

    topic_id: str
    partition_id: int
    replicas: Ids
    isr: Ids
    leader: int
    leader_epoch: int
    partition_epoch: int
    directories: tuple[str, ...] = ()  # v1+: the directory id of each replica, in replica order
    removing_replicas: Ids = ()
    adding_replicas: Ids = ()
    leader_recovery_state: int = 0  # 0 RECOVERED, 1 RECOVERING (after an unclean election)
    elr: Ids | None = None  # v2+ eligibleLeaderReplicas (KIP-966); None: not in the record
    last_known_elr: Ids | None = None  # v2+ lastKnownElr


@dataclass(frozen=True)
class PartitionChangeRecord:
    """Only changed fields are set: ``leader`` is -2 when unchanged, lists are None,
    ``leader_recovery_state`` is -1.

    The record carries no leader epoch: apply it to the partition's previous state
    with :func:`apply_partition_change` to get the new epochs.
    """

    topic_id: str
    partition_id: int
    leader: int
    isr: Ids | None
    replicas: Ids | None
    directories: tuple[str, ...] | None = None  # v1+
    removing_replicas: Ids | None = None
    adding_replicas: Ids | None = None
    leader_recovery_state: int = -1
    elr: Ids | None = None  # v2+
    last_known_elr: Ids | None = None  # v2+

    @property
    def leader_changed(self) -> bool:
        """True when the record sets a leader (even the same one): the epoch bumps."""
        return self.leader != NO_LEADER_CHANGE


def _default_to_migrating(directories: tuple[str, ...], replicas: int) -> tuple[str, ...]:
    """``PartitionRegistration.defaultToMigrating``: no directories, or only MIGRATING ones, read as
    MIGRATING for every replica."""
    if all(d == DIRECTORY_MIGRATING for d in directories):
        return (DIRECTORY_MIGRATING,) * replicas
    return directories


def _checked(replicas: Ids, directories: tuple[str, ...]) -> tuple[str, ...]:
    """``PartitionRegistration``'s constructor: one directory per replica (or none)."""
    if directories and len(directories) != len(replicas):
        raise ValueError(f"{len(directories)} directories for {len(replicas)} replicas")
    return directories


def _recovery_state(state: int) -> int:
    """``LeaderRecoveryState.of``."""
    if state not in (0, 1):
        raise ValueError(f"unknown leader recovery state {state}")
    return state


def partition_registration(record: PartitionRecord) -> PartitionRecord:
    """``new PartitionRegistration(PartitionRecord)``: the partition state a ``PartitionRecord``
    creates. Raises ValueError where Kafka throws (directories that do not match the replicas)."""
    if record.directories and len(record.directories) != len(record.replicas):
        raise ValueError(f"{len(record.directories)} directories for {len(record.replicas)} replicas")
    return replace(record, directories=_default_to_migrating(record.directories, len(record.replicas)),
                   leader_recovery_state=_recovery_state(record.leader_recovery_state),
                   elr=record.elr or (), last_known_elr=record.last_known_elr or ())


def apply_partition_change(prev: PartitionRecord, change: PartitionChangeRecord) -> PartitionRecord:
    """``PartitionRegistration.merge``: the partition state after ``change``.

    The leader epoch increments whenever the change sets a leader (``leader != -2``),
    the partition epoch on every change; unset fields keep their previous value; directories
    follow ``defaultToMigrating``. Raises ValueError where Kafka throws (another partition,
    directories that do not match the replicas, an unknown leader recovery state).
    """
    if (prev.topic_id, prev.partition_id) != (change.topic_id, change.partition_id):
        raise ValueError("partition change applied to another partition")
    replicas = prev.replicas if change.replicas is None else change.replicas
    if change.directories is None:
        directories = prev.directories
    else:
        if change.replicas is not None and change.directories and len(change.directories) != len(change.replicas):
            raise ValueError(f"{len(change.directories)} directories for {len(change.replicas)} replicas")
        directories = change.directories
    if change.leader == NO_LEADER_CHANGE:
        leader, leader_epoch = prev.leader, prev.leader_epoch
    else:
        leader, leader_epoch = change.leader, prev.leader_epoch + 1
    recovery = prev.leader_recovery_state if change.leader_recovery_state == -1 else change.leader_recovery_state
    return PartitionRecord(
        topic_id=prev.topic_id,
        partition_id=prev.partition_id,
        replicas=replicas,
        isr=prev.isr if change.isr is None else change.isr,
        leader=leader,
        leader_epoch=leader_epoch,
        partition_epoch=prev.partition_epoch + 1,
        directories=_checked(replicas, _default_to_migrating(directories, len(replicas))),
        removing_replicas=prev.removing_replicas if change.removing_replicas is None else change.removing_replicas,
        adding_replicas=prev.adding_replicas if change.adding_replicas is None else change.adding_replicas,
        leader_recovery_state=_recovery_state(recovery),
        elr=(prev.elr or ()) if change.elr is None else change.elr,
        last_known_elr=(prev.last_known_elr or ()) if change.last_known_elr is None else change.last_known_elr,
    )


@dataclass(frozen=True)
class TopicRecord:
    name: str
    topic_id: str


@dataclass(frozen=True)
class RemoveTopicRecord:
    topic_id: str


@dataclass(frozen=True)
class ClearElrRecord:
    """Clear the ELR of every partition of ``topic_name`` ("": of every topic)."""

    topic_name: str


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
    """A ``RegisterBrokerRecord``."""

    broker_id: int
    broker_epoch: int
    incarnation_id: str
    fenced: bool
    log_dirs: tuple[str, ...] = ()  # v3+: the directory id of each online log dir (KIP-858)
    rack: str | None = None
    in_controlled_shutdown: bool = False  # v1+
    is_migrating_zk_broker: bool = False  # v2+
    listeners: tuple[Endpoint, ...] = ()
    features: tuple[FeatureRange, ...] = ()  # what the broker's software supports


@dataclass(frozen=True)
class UnregisterBrokerRecord:
    broker_id: int
    broker_epoch: int


@dataclass(frozen=True)
class FenceBrokerRecord:
    """A ``FenceBrokerRecord`` (``fence``) or ``UnfenceBrokerRecord``."""

    broker_id: int
    broker_epoch: int
    fence: bool


@dataclass(frozen=True)
class BrokerRegistrationChangeRecord:
    broker_id: int
    broker_epoch: int
    fenced: int  # -1 unfenced, 1 fenced, 0 unchanged
    in_controlled_shutdown: int  # 1 entered controlled shutdown, 0 unchanged
    log_dirs: tuple[str, ...] = ()  # v2+: the new log dirs (empty: unchanged)


@dataclass(frozen=True)
class ControllerRegistrationRecord:
    """A ``RegisterControllerRecord`` (KIP-919)."""

    controller_id: int
    incarnation_id: str
    listeners: tuple[Endpoint, ...] = ()
    features: tuple[FeatureRange, ...] = ()


TypedMetadata = (
    PartitionRecord | PartitionChangeRecord | TopicRecord | RemoveTopicRecord | ClearElrRecord | ProducerIdsRecord
    | FeatureLevelRecord | BrokerRegistrationRecord | UnregisterBrokerRecord | FenceBrokerRecord
    | BrokerRegistrationChangeRecord | ControllerRegistrationRecord
)


def _ids(value: list | None) -> Ids | None:
    return None if value is None else tuple(value)


def _endpoints(items: list) -> tuple[Endpoint, ...]:
    return tuple(Endpoint(e["name"], e["host"], e["port"], e["securityProtocol"]) for e in items)


def _features(items: list) -> tuple[FeatureRange, ...]:
    return tuple(FeatureRange(f["name"], f["minSupportedVersion"], f["maxSupportedVersion"]) for f in items)


# MetadataRecordType api key -> the typed record of its decoded fields
_TYPED: dict[int, Callable[[dict[str, Any]], TypedMetadata]] = {
    0: lambda d: BrokerRegistrationRecord(
        d["brokerId"], d["brokerEpoch"], d["incarnationId"], d["fenced"], tuple(d["logDirs"]), d["rack"],
        d["inControlledShutdown"], d["isMigratingZkBroker"], _endpoints(d["endPoints"]), _features(d["features"])),
    1: lambda d: UnregisterBrokerRecord(d["brokerId"], d["brokerEpoch"]),
    2: lambda d: TopicRecord(d["name"], d["topicId"]),
    3: lambda d: PartitionRecord(
        d["topicId"], d["partitionId"], tuple(d["replicas"]), tuple(d["isr"]), d["leader"], d["leaderEpoch"],
        d["partitionEpoch"], tuple(d["directories"]), tuple(d["removingReplicas"]), tuple(d["addingReplicas"]),
        d["leaderRecoveryState"], _ids(d["eligibleLeaderReplicas"]), _ids(d["lastKnownElr"])),
    5: lambda d: PartitionChangeRecord(
        d["topicId"], d["partitionId"], d["leader"], _ids(d["isr"]), _ids(d["replicas"]),
        None if d["directories"] is None else tuple(d["directories"]), _ids(d["removingReplicas"]),
        _ids(d["addingReplicas"]), d["leaderRecoveryState"], _ids(d["eligibleLeaderReplicas"]),
        _ids(d["lastKnownElr"])),
    7: lambda d: FenceBrokerRecord(d["id"], d["epoch"], True),
    8: lambda d: FenceBrokerRecord(d["id"], d["epoch"], False),
    9: lambda d: RemoveTopicRecord(d["topicId"]),
    12: lambda d: FeatureLevelRecord(d["name"], d["featureLevel"]),
    15: lambda d: ProducerIdsRecord(d["brokerId"], d["brokerEpoch"], d["nextProducerId"]),
    17: lambda d: BrokerRegistrationChangeRecord(
        d["brokerId"], d["brokerEpoch"], d["fenced"], d["inControlledShutdown"], tuple(d["logDirs"])),
    27: lambda d: ControllerRegistrationRecord(
        d["controllerId"], d["incarnationId"], _endpoints(d["endPoints"]), _features(d["features"])),
    28: lambda d: ClearElrRecord(d["topicName"]),
}


def typed_record(api_key: int, data: dict[str, Any]) -> TypedMetadata | None:
    """The typed record of a decoded record of type ``api_key``; None for the types no fold reads
    (configs, ACLs, quotas, ...)."""
    make = _TYPED.get(api_key)
    return None if make is None else make(data)
