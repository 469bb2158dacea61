"""What the evidence should hold, compared with what it holds: the coverage of the evidence model.

What should exist comes from the disk itself:

* **KRaft** (a ``__cluster_metadata`` log among the inputs): the cluster image replayed to its newest
  record (:mod:`forensics.state.cluster_image`): the registered brokers and their log dirs (directory
  ids), every topic's partitions with replicas, leader and the log dir each replica is assigned to,
  ``__transaction_state``'s partition count;
* **ZooKeeper-era disks** (no metadata log): what each log dir's own checkpoints list
  (``replication-offset-checkpoint``, ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``
  name every partition the broker hosts there). The cluster's other brokers and the partitions' leaders
  live in ZooKeeper: nothing on a broker's disk names them, which the evidence line says.

What is present are the live partition dirs of the log dirs given, with their broker id and directory id.
A partition is **covered** when its leader's copy is present (on a ZooKeeper-era disk: every replica the
checkpoints list); otherwise a verdict on it rests on a copy that may lack the newest records, and an
all-clear of a scope holding it is not proven.
"""

from __future__ import annotations

from dataclasses import field
from enum import Enum
from forensics.dataclass_fast import dataclass
from typing import Any, NamedTuple
from collections.abc import Mapping, Sequence

from forensics.analysis.filters import Filters
from forensics.model import CLUSTER_METADATA_TOPIC, TRANSACTION_STATE_TOPIC, TopicPartition


class PresentCopy(NamedTuple):
    """One live partition dir among the inputs."""

    topic_partition: TopicPartition
    broker_id: int | None
    directory_id: str | None  # its log dir's meta.properties directory.id
    path: str
    log_dir: str | None  # the log dir holding it (None: given on its own)


class PresentLogDir(NamedTuple):
    path: str
    broker_id: int | None
    directory_id: str | None
    listed: tuple[TopicPartition, ...]  # the partitions its checkpoints name


class UncoveredWhy(Enum):
    """Why a partition's copy that matters is not among the inputs."""

    LEADER_COPY_MISSING = "leader_copy_missing"  # KRaft: its (last) leader's copy is not given
    NO_LEADER = "no_leader"  # KRaft: it has no leader, now or before
    LISTED_NOT_GIVEN = "listed_not_given"  # ZooKeeper-era: a log dir's checkpoints list it, its dir is not given


@dataclass(frozen=True, slots=True)
class Uncovered:
    """One partition whose copy that matters is not among the inputs (its words:
    :func:`forensics.render.coverage_text.uncovered_text`)."""

    topic_partition: TopicPartition
    why: UncoveredWhy
    leader: int | None  # the broker whose copy is missing (None: unknown)
    held: tuple[int | None, ...] = ()  # KRaft: the brokers whose copies are among the inputs (ascending, None last)
    directory_id: str | None = None  # KRaft: the log dir the leader's replica is assigned to (None or "": not named)
    log_dir: str = ""  # LISTED_NOT_GIVEN: the log dir whose checkpoints list it


class MissingBroker(NamedTuple):
    broker_id: int
    leads: tuple[TopicPartition, ...]  # the partitions it leads (led last, when they have no leader now)


class MissingLogDir(NamedTuple):
    broker_id: int
    directory_id: str
    partitions: tuple[TopicPartition, ...]  # assigned to it


class CoverageSource(Enum):
    """What tells what the evidence should hold."""

    METADATA = "__cluster_metadata"  # KRaft: the cluster image
    CHECKPOINTS = "checkpoints"  # ZooKeeper-era: each log dir's checkpoints
    NOTHING = ""  # no log dir among the inputs


@dataclass(frozen=True)
class Coverage:
    """The evidence against what the disk says should be there."""

    source: CoverageSource
    brokers_expected: tuple[int, ...]
    brokers_present: tuple[int, ...]
    missing_brokers: tuple[MissingBroker, ...]
    missing_log_dirs: tuple[MissingLogDir, ...]
    uncovered: Mapping[TopicPartition, Uncovered]
    txn_partition_count: int | None  # what the disk says (None: nothing on it does)
    metadata_missing: tuple[str, ...] = ()  # KRaft log dirs given without any __cluster_metadata
    metadata_incomplete: bool = False  # the metadata log read lacks records (damage, a gap: its findings say)
    # metadata log dirs (bootstrap.checkpoint) given without their own __cluster_metadata-0, where another
    # copy was read: that copy may lag the one left out
    metadata_copies_missing: tuple[str, ...] = ()
    # (leader, its leader epoch) as __cluster_metadata names them (the last leader where none is now)
    leaders: Mapping[TopicPartition, tuple[int, int]] = field(default_factory=dict)
    # the partitions __cluster_metadata gives one replica: their high watermark is their log end
    sole_replicas: frozenset[TopicPartition] = frozenset()

    @property
    def complete(self) -> bool:
        return not (self.uncovered or self.missing_brokers or self.missing_log_dirs or self.metadata_missing
                    or self.metadata_incomplete or self.metadata_copies_missing)

    def gap(self, tp: TopicPartition) -> Uncovered | None:
        """Why verdicts on ``tp`` rest on an incomplete copy (None: its copy that matters is here)."""
        return self.uncovered.get(tp)

    def uncovered_in(self, selection: Filters) -> list[Uncovered]:
        """The uncovered partitions ``selection`` judges (its topic and partition; a broker id selects
        replicas, not partitions: every partition counts then)."""
        return [u for tp, u in self.uncovered.items() if selection.selects(tp.topic, tp.partition, None)]


def from_image(image: Any, log_dirs: Sequence[PresentLogDir], copies: Sequence[PresentCopy]) -> Coverage:
    """The coverage by a KRaft cluster image (``forensics.state.cluster_image.ClusterImage``)."""
    present_brokers = sorted({d.broker_id for d in log_dirs if d.broker_id is not None})
    by_tp: dict[TopicPartition, list[PresentCopy]] = {}
    for c in copies:
        by_tp.setdefault(c.topic_partition, []).append(c)
    uncovered: dict[TopicPartition, Uncovered] = {}
    for p in image.partitions():
        tp = p.topic_partition
        if tp.topic == CLUSTER_METADATA_TOPIC:
            continue
        leader = p.leader if p.leader >= 0 else p.last_leader
        here = by_tp.get(tp, [])
        if leader >= 0 and any(c.broker_id == leader for c in here):
            continue
        if not here and leader < 0 and not p.replicas:
            continue
        held = tuple(sorted({c.broker_id for c in here}, key=lambda b: (b is None, b)))
        if leader >= 0:
            uncovered[tp] = Uncovered(tp, UncoveredWhy.LEADER_COPY_MISSING, leader, held, p.directory_of(leader))
        else:
            uncovered[tp] = Uncovered(tp, UncoveredWhy.NO_LEADER, None, held)
    missing_brokers = []
    for b in sorted(image.brokers):
        if b not in present_brokers:
            leads = tuple(p.topic_partition for p in image.led_by(b))
            missing_brokers.append(MissingBroker(b, leads))
    missing_dirs = []
    present_dirs = {(d.broker_id, d.directory_id) for d in log_dirs}
    for broker, directory in image.log_dirs():
        if broker in present_brokers and (broker, directory) not in present_dirs:
            parts = tuple(p.topic_partition for p in image.replicas_on(broker, directory))
            missing_dirs.append(MissingLogDir(broker, directory, parts))
    leaders = {p.topic_partition: (p.leader, p.registration.leader_epoch) if p.leader >= 0 else
               (p.last_leader, p.last_leader_epoch) for p in image.partitions() if p.leader >= 0 or p.last_leader >= 0}
    return Coverage(CoverageSource.METADATA, tuple(sorted(image.brokers)), tuple(present_brokers), tuple(missing_brokers),
                    tuple(missing_dirs), uncovered, image.partition_count(TRANSACTION_STATE_TOPIC), leaders=leaders,
                    sole_replicas=frozenset(p.topic_partition for p in image.partitions() if len(p.replicas) == 1))


def from_checkpoints(log_dirs: Sequence[PresentLogDir], copies: Sequence[PresentCopy]) -> Coverage:
    """The coverage by what each log dir's checkpoints list (ZooKeeper-era disks)."""
    present: set[tuple[TopicPartition, str | None]] = {(c.topic_partition, c.log_dir) for c in copies}
    uncovered: dict[TopicPartition, Uncovered] = {}
    for d in log_dirs:
        for tp in d.listed:
            if (tp, d.path) in present or tp.topic == CLUSTER_METADATA_TOPIC:
                continue
            uncovered.setdefault(tp, Uncovered(tp, UncoveredWhy.LISTED_NOT_GIVEN, d.broker_id, log_dir=d.path))
    brokers = tuple(sorted({d.broker_id for d in log_dirs if d.broker_id is not None}))
    return Coverage(CoverageSource.CHECKPOINTS if log_dirs else CoverageSource.NOTHING, (), brokers, (), (), uncovered, None)
