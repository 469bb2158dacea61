"""``__cluster_metadata`` records folded into a :class:`~forensics.state.cluster_image.ClusterImage`.

Each record is applied as Kafka's ``MetadataDelta.replay`` applies it (``org.apache.kafka.image``):
``ClusterDelta`` (RegisterBroker replaces a broker's registration, UnregisterBroker removes it,
Fence/Unfence and BrokerRegistrationChange need the registered broker epoch; new log dirs replace
the old ones), ``TopicsDelta`` / ``TopicDelta`` (TopicRecord, PartitionRecord, PartitionChangeRecord
merged by ``PartitionRegistration.merge``, RemoveTopicRecord drops the topic with its partitions,
ClearElrRecord empties the ELR), ``FeaturesDelta``, ``ProducerIdsDelta`` and controller registrations.
Records of other types (configs, ACLs, quotas, ...) are counted, not kept.

Pure and total: where Kafka's replay throws (a PartitionChangeRecord for a topic id the image does not
hold, a fence at an epoch that is not the broker's, directories that do not match the replicas, ...)
the record is not applied and a ``metadata_replay`` finding names it with its file and byte position;
a record that did not decode is a ``corrupt_metadata_record`` finding. One deviation: a feature set
to level 0 stays in :attr:`ClusterImage.features` with level 0 (``FeaturesDelta`` drops it; its
finalized level reads 0 either way), so what the log said stays visible.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from types import MappingProxyType
from typing import Any, NamedTuple

from forensics.codec.java_reader import uuid_from_string
from forensics.codec.metadata_records import MetadataRecord
from forensics.codec.metadata_typed import (
    NO_LEADER_CHANGE,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationRecord,
    ClearElrRecord,
    ControllerRegistrationRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnregisterBrokerRecord,
    apply_partition_change,
    partition_registration,
)
from forensics.findings import Finding, FindingKind
from forensics.state.cluster_image import (
    BrokerRegistration,
    ClusterImage,
    ControllerRegistration,
    PartitionState,
    TopicState,
)


class MetadataEntry(NamedTuple):
    """One record of the metadata log (or of a snapshot) as read, decoded or not."""

    offset: int | None  # its log offset; None for a record of a snapshot or of bootstrap.checkpoint
    timestamp: int  # its batch's timestamp (epoch ms)
    record: MetadataRecord | None  # None: it did not decode (``error`` says why)
    path: str | None = None
    position: int | None = None  # byte position of its batch in ``path``
    error: str | None = None


class _Refused(Exception):
    """Kafka's replay would throw: the record is not applied."""


def _uuid_order(directory_id: str) -> tuple[int, int, str]:
    """``Uuid.compareTo``: most then least significant bits, as signed longs."""
    try:
        raw = uuid_from_string(directory_id)
    except ValueError:
        return (2**63, 2**63, directory_id)
    return (int.from_bytes(raw[:8], "big", signed=True), int.from_bytes(raw[8:], "big", signed=True), directory_id)


class _Topic:
    __slots__ = ("name", "topic_id", "partitions")

    def __init__(self, name: str, topic_id: str) -> None:
        self.name, self.topic_id = name, topic_id
        self.partitions: dict[int, PartitionState] = {}


class ClusterReplay:
    """The fold: :meth:`apply` each entry in log order (snapshot records first), then :meth:`image`."""

    def __init__(self) -> None:
        self.brokers: dict[int, BrokerRegistration] = {}
        self.controllers: dict[int, ControllerRegistration] = {}
        self.topics: dict[str, _Topic] = {}  # by topic id, in creation order
        self.features: dict[str, int] = {}
        self.next_producer_id: int | None = None
        self.newest_offset: int | None = None
        self.newest_timestamp: int | None = None
        self.records = 0
        self.unapplied = 0  # records that did not decode or were refused
        self.findings: list[Finding] = []

    # -- the fold ---------------------------------------------------------------------------------------

    def apply(self, entry: MetadataEntry) -> None:
        self.records += 1
        if entry.offset is not None:
            self.newest_offset = entry.offset
        self.newest_timestamp = entry.timestamp
        rec = entry.record
        if rec is None:
            self.unapplied += 1
            self._finding(FindingKind.CORRUPT_METADATA_RECORD, entry,
                          f"metadata record at {_where(entry)} does not decode: {entry.error}; skipped")
            return
        typed = rec.typed
        handler = _HANDLERS.get(type(typed))
        if handler is None:
            return
        try:
            remark = handler(self, typed, entry.offset)
        except _Refused as exc:
            self.unapplied += 1
            self._finding(FindingKind.METADATA_REPLAY, entry, f"{rec.type_name} at {_where(entry)}: {exc}; not applied")
            return
        if remark:  # applied, as Kafka does, but worth a look
            self._finding(FindingKind.METADATA_REPLAY, entry, f"{rec.type_name} at {_where(entry)}: {remark}")

    def mark(self, offset: int, timestamp: int) -> None:
        """The image now stands at ``offset`` (a snapshot's end offset - 1) and ``timestamp``."""
        self.newest_offset, self.newest_timestamp = offset, timestamp

    def note(self, finding: Finding) -> None:
        self.findings.append(finding)

    def _finding(self, kind: FindingKind, entry: MetadataEntry, message: str) -> None:
        self.findings.append(Finding(kind, message, entry.path, entry.position, None, entry.offset, entry.offset))

    # -- ClusterDelta -----------------------------------------------------------------------------------

    def _register(self, r: BrokerRegistrationRecord, offset: int | None) -> None:
        self.brokers[r.broker_id] = BrokerRegistration(
            r.broker_id, r.broker_epoch, r.incarnation_id, tuple(sorted(r.log_dirs, key=_uuid_order)), r.fenced,
            r.in_controlled_shutdown, r.rack, r.listeners, r.features, r.is_migrating_zk_broker, offset)

    def _unregister(self, r: UnregisterBrokerRecord, offset: int | None) -> None:
        self.brokers.pop(r.broker_id, None)

    def _broker(self, broker_id: int, epoch: int, action: str) -> BrokerRegistration:
        """``ClusterDelta.getBrokerOrThrow``."""
        b = self.brokers.get(broker_id)
        if b is None:
            raise _Refused(f"cannot {action} broker {broker_id}: it is not registered")
        if b.epoch != epoch:
            raise _Refused(f"cannot {action} broker {broker_id} at epoch {epoch}: its registered epoch is {b.epoch}")
        return b

    def _fence(self, r: FenceBrokerRecord, offset: int | None) -> None:
        b = self._broker(r.broker_id, r.broker_epoch, "fence" if r.fence else "unfence")
        self.brokers[r.broker_id] = replace(b, fenced=r.fence)

    def _change_broker(self, r: BrokerRegistrationChangeRecord, offset: int | None) -> None:
        b = self._broker(r.broker_id, r.broker_epoch, "change")
        if r.fenced not in (-1, 0, 1):  # BrokerRegistrationFencingChange
            raise _Refused(f"unknown value for fenced: {r.fenced}")
        if r.in_controlled_shutdown not in (0, 1):  # BrokerRegistrationInControlledShutdownChange
            raise _Refused(f"unknown value for inControlledShutdown: {r.in_controlled_shutdown}")
        self.brokers[r.broker_id] = replace(
            b, fenced=b.fenced if r.fenced == 0 else r.fenced == 1,
            in_controlled_shutdown=b.in_controlled_shutdown or r.in_controlled_shutdown == 1,
            log_dirs=tuple(sorted(r.log_dirs, key=_uuid_order)) if r.log_dirs else b.log_dirs)

    def _controller(self, r: ControllerRegistrationRecord, offset: int | None) -> None:
        self.controllers[r.controller_id] = ControllerRegistration(r.controller_id, r.incarnation_id, r.listeners,
                                                                   r.features)

    # -- TopicsDelta ------------------------------------------------------------------------------------

    def _topic(self, r: TopicRecord, offset: int | None) -> str | None:
        old = self.topics.pop(r.topic_id, None)
        other = next((t for t in self.topics.values() if t.name == r.name), None)
        self.topics[r.topic_id] = _Topic(r.name, r.topic_id)
        if old is not None:  # TopicsDelta.replay(TopicRecord): a fresh topic image, the old partitions gone
            return (f"topic id {r.topic_id} ({old.name!r}) already exists: replaced by an empty topic {r.name!r}, "
                    f"its {len(old.partitions)} partitions dropped (as Kafka's TopicsDelta does)")
        if other is not None:
            return f"topic {r.name!r} already has topic id {other.topic_id}: the name now stands for {r.topic_id}"
        return None

    def _known(self, topic_id: str) -> _Topic:
        t = self.topics.get(topic_id)
        if t is None:
            raise _Refused(f"topic id {topic_id} is not in the image")
        return t

    def _put(self, t: _Topic, reg: PartitionRecord, offset: int | None) -> None:
        old = t.partitions.get(reg.partition_id)
        last, last_epoch = (old.last_leader, old.last_leader_epoch) if old is not None else (-1, -1)
        if reg.leader >= 0:
            last, last_epoch = reg.leader, reg.leader_epoch
        t.partitions[reg.partition_id] = PartitionState(t.name, reg, last, last_epoch, offset)

    def _partition(self, r: PartitionRecord, offset: int | None) -> None:
        t = self._known(r.topic_id)
        try:
            reg = partition_registration(r)
        except ValueError as exc:
            raise _Refused(f"partition {r.partition_id}: {exc}") from None
        self._put(t, reg, offset)

    def _partition_change(self, r: PartitionChangeRecord, offset: int | None) -> None:
        t = self._known(r.topic_id)
        old = t.partitions.get(r.partition_id)
        if old is None:
            raise _Refused(f"partition {r.partition_id} of {t.name!r} ({r.topic_id}) is not in the image")
        try:
            reg = apply_partition_change(old.registration, r)
        except ValueError as exc:
            raise _Refused(f"partition {t.name}-{r.partition_id}: {exc}") from None
        self._put(t, reg, offset)

    def _remove_topic(self, r: RemoveTopicRecord, offset: int | None) -> None:
        self._known(r.topic_id)
        del self.topics[r.topic_id]

    def _clear_elr(self, r: ClearElrRecord, offset: int | None) -> None:
        """``TopicsDelta.replay(ClearElrRecord)``: a merge with empty ELRs where a partition has one."""
        if r.topic_name:
            topics = [t for t in self.topics.values() if t.name == r.topic_name]
            if not topics:
                raise _Refused(f"no topic named {r.topic_name!r}")
        else:
            topics = list(self.topics.values())
        for t in topics:
            for p in list(t.partitions.values()):
                if p.elr or p.last_known_elr:
                    clear = PartitionChangeRecord(t.topic_id, p.partition, NO_LEADER_CHANGE, None, None,
                                                  elr=(), last_known_elr=())
                    self._put(t, apply_partition_change(p.registration, clear), offset)

    # -- FeaturesDelta, ProducerIdsDelta ------------------------------------------------------------------

    def _feature(self, r: FeatureLevelRecord, offset: int | None) -> None:
        self.features[r.name] = r.feature_level

    def _producer_ids(self, r: ProducerIdsRecord, offset: int | None) -> None:
        self.next_producer_id = r.next_producer_id

    # -- the image ----------------------------------------------------------------------------------------

    def image(self, **provenance) -> ClusterImage:
        """The frozen image of what was folded; ``provenance``: :class:`ClusterImage`'s ``complete``,
        ``origin``, ``files``, ``copy``, ``copies`` (the reader's)."""
        topics: dict[str, TopicState] = {}
        for t in self.topics.values():  # a name taken twice: the newer topic (TopicsImage.topicsByName)
            topics[t.name] = TopicState(t.name, t.topic_id, MappingProxyType(dict(sorted(t.partitions.items()))))
        return ClusterImage(
            brokers=MappingProxyType(dict(sorted(self.brokers.items()))),
            controllers=MappingProxyType(dict(sorted(self.controllers.items()))),
            topics=MappingProxyType(dict(sorted(topics.items()))),
            features=MappingProxyType(dict(sorted(self.features.items()))),
            next_producer_id=self.next_producer_id,
            newest_offset=self.newest_offset,
            newest_timestamp=self.newest_timestamp,
            records=self.records,
            unapplied=self.unapplied,
            findings=tuple(self.findings),
            **provenance,
        )


# a record's type -> the method that folds it (its parameter is that type: Any, as a dict cannot pair them)
_HANDLERS: dict[type, Callable[[ClusterReplay, Any, int | None], str | None]] = {
    BrokerRegistrationRecord: ClusterReplay._register,
    UnregisterBrokerRecord: ClusterReplay._unregister,
    FenceBrokerRecord: ClusterReplay._fence,
    BrokerRegistrationChangeRecord: ClusterReplay._change_broker,
    ControllerRegistrationRecord: ClusterReplay._controller,
    TopicRecord: ClusterReplay._topic,
    PartitionRecord: ClusterReplay._partition,
    PartitionChangeRecord: ClusterReplay._partition_change,
    RemoveTopicRecord: ClusterReplay._remove_topic,
    ClearElrRecord: ClusterReplay._clear_elr,
    FeatureLevelRecord: ClusterReplay._feature,
    ProducerIdsRecord: ClusterReplay._producer_ids,
}


def _where(entry: MetadataEntry) -> str:
    return f"offset {entry.offset}" if entry.offset is not None else "a snapshot record"


def fold_cluster_metadata(entries: Iterable[MetadataEntry]) -> ClusterImage:
    """The image of ``entries`` folded in order (snapshot records first, then the log after it)."""
    replay = ClusterReplay()
    for entry in entries:
        replay.apply(entry)
    return replay.image()


__all__ = ["ClusterReplay", "MetadataEntry", "fold_cluster_metadata"]
