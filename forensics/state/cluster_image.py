"""The cluster as its KRaft metadata log describes it: a frozen :class:`ClusterImage`.

What should exist, by the cluster's own account: the registered brokers with their log dirs
(directory ids), the topics with their partitions (replicas, ISR, leader, epochs and the log dir each
replica is assigned to), the finalized features and the producer id block. It is the fold of decoded
``__cluster_metadata`` records in log order (:mod:`forensics.state.cluster_replay`, as Kafka's
``MetadataDelta`` replays them into a ``MetadataImage``); :mod:`forensics.pipeline.cluster_metadata`
reads them from the disk and fills in where they came from.

Questions the image answers (all pure, nothing read):

* which partitions should exist: :meth:`ClusterImage.partitions` (optionally of one topic), or
  :meth:`ClusterImage.replicas_on` for one broker (and one of its log dirs);
* who leads P and with which log dir: ``image.partition(topic, p).leader`` and ``.leader_directory``
  (``.last_leader``: the newest leader the log named, when the partition has none now, e.g. after a
  controlled shutdown);
* how many partitions ``__transaction_state`` has: :meth:`ClusterImage.partition_count`;
* which brokers and log dirs are registered: :attr:`ClusterImage.brokers`,
  :meth:`ClusterImage.log_dirs`.
"""

from __future__ import annotations

from dataclasses import field
from forensics.dataclass_fast import dataclass
from types import MappingProxyType
from typing import NamedTuple
from collections.abc import Iterator, Mapping

from forensics.codec.metadata_typed import Endpoint, FeatureRange, Ids, PartitionRecord, reserved_directory
from forensics.findings import Finding
from forensics.model import TopicPartition

_NO_BROKERS: Mapping[int, BrokerRegistration] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """``BrokerRegistration``: a broker as its newest ``RegisterBrokerRecord`` and the changes after
    it describe it. ``log_dirs`` in Kafka's order (sorted by ``Uuid.compareTo``)."""

    broker_id: int
    epoch: int
    incarnation_id: str
    log_dirs: tuple[str, ...]
    fenced: bool
    in_controlled_shutdown: bool
    rack: str | None = None
    listeners: tuple[Endpoint, ...] = ()
    supported_features: tuple[FeatureRange, ...] = ()
    is_migrating_zk_broker: bool = False
    registered_offset: int | None = None  # log offset of its RegisterBrokerRecord (None: from a snapshot)

    def supported(self, feature: str) -> FeatureRange | None:
        """The range of ``feature`` the broker's software supports, as it registered (None: not named)."""
        return next((f for f in self.supported_features if f.name == feature), None)


@dataclass(frozen=True, slots=True)
class ControllerRegistration:
    """``ControllerRegistration`` (``RegisterControllerRecord``, KIP-919)."""

    controller_id: int
    incarnation_id: str
    listeners: tuple[Endpoint, ...] = ()
    supported_features: tuple[FeatureRange, ...] = ()


@dataclass(frozen=True, slots=True)
class PartitionState:
    """One partition: Kafka's ``PartitionRegistration`` (:attr:`registration`) and its topic's name,
    plus two facts of its history the image keeps: the newest leader the log named (``last_leader``,
    -1: never one) with that leader's epoch, and the offset of the record that last changed it."""

    topic: str
    registration: PartitionRecord
    last_leader: int = -1
    last_leader_epoch: int = -1
    changed_offset: int | None = None  # None: from a snapshot

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.registration.partition_id)

    @property
    def partition(self) -> int:
        return self.registration.partition_id

    @property
    def topic_id(self) -> str:
        return self.registration.topic_id

    @property
    def replicas(self) -> Ids:
        return self.registration.replicas

    @property
    def isr(self) -> Ids:
        return self.registration.isr

    @property
    def leader(self) -> int:
        """The leader's broker id, -1 when the partition has none."""
        return self.registration.leader

    @property
    def leader_epoch(self) -> int:
        return self.registration.leader_epoch

    @property
    def partition_epoch(self) -> int:
        return self.registration.partition_epoch

    @property
    def directories(self) -> tuple[str, ...]:
        """The directory id each replica is assigned to, in replica order (see :meth:`directory_name`)."""
        return self.registration.directories

    @property
    def elr(self) -> Ids:
        return self.registration.elr or ()

    @property
    def last_known_elr(self) -> Ids:
        return self.registration.last_known_elr or ()

    def directory_of(self, broker_id: int) -> str | None:
        """The directory id ``broker_id``'s replica is assigned to (None: not a replica)."""
        for replica, directory in zip(self.replicas, self.directories):
            if replica == broker_id:
                return directory
        return None

    @property
    def leader_directory(self) -> str | None:
        """The log dir of the leader's replica (of the last leader when there is none now)."""
        return self.directory_of(self.leader if self.leader >= 0 else self.last_leader)

    @staticmethod
    def directory_name(directory_id: str) -> str | None:
        """``MIGRATING`` / ``UNASSIGNED`` / ``LOST`` (``DirectoryId``'s reserved ids), None for a log dir."""
        return reserved_directory(directory_id)


@dataclass(frozen=True, slots=True)
class TopicState:
    name: str
    topic_id: str
    partitions: Mapping[int, PartitionState]  # by partition id, sorted

    @property
    def partition_count(self) -> int:
        return len(self.partitions)


class MetadataFile(NamedTuple):
    """One file the image was read from, and which of its records were folded."""

    path: str
    role: str  # "bootstrap" (bootstrap.checkpoint), "snapshot" (<end>-<epoch>.checkpoint) or "segment" (.log)
    records: int  # records folded from it
    first_offset: int | None = None  # log offsets of the first and last record folded (segments only)
    last_offset: int | None = None


class MetadataCopy(NamedTuple):
    """One ``__cluster_metadata-0`` replica among the inputs: its dir and how far its log reaches."""

    path: str
    epoch: int  # leader epoch of its newest batch (of its newest snapshot when no log follows; -1: nothing)
    end_offset: int  # offset after its newest record (0: nothing)


@dataclass(frozen=True, slots=True)
class ClusterImage:
    """The cluster after the newest record folded (``newest_offset``, ``newest_timestamp``).

    ``origin`` says where the fold began: ``"snapshot"`` (a KRaft snapshot, then the log after its end
    offset), ``"log"`` (the log from offset 0), ``"bootstrap"`` (``bootstrap.checkpoint``, no log) or
    ``""`` (nothing read). ``complete`` is False when records of that history are missing or could not
    be read (a ``metadata_incomplete`` finding says which); ``findings`` also hold the records that did
    not decode or that Kafka's replay refuses. ``copy`` is the replica read, ``copies`` all of them.
    """

    brokers: Mapping[int, BrokerRegistration] = field(default_factory=lambda: _NO_BROKERS)
    controllers: Mapping[int, ControllerRegistration] = field(default_factory=lambda: MappingProxyType({}))
    topics: Mapping[str, TopicState] = field(default_factory=lambda: MappingProxyType({}))  # by name, sorted
    features: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))  # finalized levels
    next_producer_id: int | None = None  # ProducerIdsRecord: ids below it are handed out
    newest_offset: int | None = None  # log offset of the newest record folded (snapshot: its end offset - 1)
    newest_timestamp: int | None = None  # its batch's timestamp, epoch ms (snapshot: lastContainedLogTimestamp)
    records: int = 0  # records folded
    unapplied: int = 0  # of those, records that did not decode or that Kafka's replay refuses
    findings: tuple[Finding, ...] = ()
    complete: bool = True
    origin: str = ""
    files: tuple[MetadataFile, ...] = ()
    copy: MetadataCopy | None = None
    copies: tuple[MetadataCopy, ...] = ()

    @property
    def empty(self) -> bool:
        return self.records == 0

    @property
    def metadata_version(self) -> int | None:
        return self.features.get("metadata.version")

    def feature(self, name: str) -> int:
        """The finalized level of ``name``; 0 when none is (as ``kafka-features.sh describe`` prints it)."""
        return self.features.get(name, 0)

    def topic_by_id(self, topic_id: str) -> TopicState | None:
        return next((t for t in self.topics.values() if t.topic_id == topic_id), None)

    def partition(self, topic: str, partition: int) -> PartitionState | None:
        t = self.topics.get(topic)
        return None if t is None else t.partitions.get(partition)

    def partition_count(self, topic: str) -> int | None:
        """How many partitions ``topic`` has (None: no such topic in the image)."""
        t = self.topics.get(topic)
        return None if t is None else t.partition_count

    def partitions(self, topic: str | None = None) -> Iterator[PartitionState]:
        """Every partition that should exist (of ``topic``), by topic name then partition."""
        for t in self.topics.values() if topic is None else [self.topics[topic]] if topic in self.topics else []:
            yield from t.partitions.values()

    def replicas_on(self, broker_id: int, directory_id: str | None = None) -> Iterator[PartitionState]:
        """The partitions with a replica on ``broker_id`` (assigned to ``directory_id``, when given)."""
        for p in self.partitions():
            d = p.directory_of(broker_id)
            if d is not None and (directory_id is None or d == directory_id):
                yield p

    def led_by(self, broker_id: int) -> Iterator[PartitionState]:
        """The partitions ``broker_id`` leads (or led last, when they have no leader now)."""
        for p in self.partitions():
            if (p.leader if p.leader >= 0 else p.last_leader) == broker_id:
                yield p

    def log_dirs(self) -> tuple[tuple[int, str], ...]:
        """(broker id, directory id) of every registered log dir."""
        return tuple((b.broker_id, d) for b in self.brokers.values() for d in b.log_dirs)


__all__ = [
    "BrokerRegistration", "ClusterImage", "ControllerRegistration", "MetadataCopy", "MetadataFile",
    "PartitionState", "TopicState",
]
