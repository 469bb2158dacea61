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
from forensics.dataclass_fast import dataclass
from typing import Any, NamedTuple
from collections.abc import Mapping, Sequence

from forensics.analysis.filters import Filters
from forensics.model import CLUSTER_METADATA_TOPIC, TRANSACTION_STATE_TOPIC, TopicPartition, first_few

SHOWN = 3  # partitions named per missing piece


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


class Uncovered(NamedTuple):
    """One partition whose copy that matters is not among the inputs."""

    topic_partition: TopicPartition
    text: str  # "its leader's copy (broker 3, log dir 1aB...) is not among the inputs; broker 2's is"
    leader: int | None  # the broker whose copy is missing (None: unknown)


class MissingBroker(NamedTuple):
    broker_id: int
    leads: tuple[TopicPartition, ...]  # the partitions it leads (led last, when they have no leader now)


class MissingLogDir(NamedTuple):
    broker_id: int
    directory_id: str
    partitions: tuple[TopicPartition, ...]  # assigned to it


@dataclass(frozen=True)
class Coverage:
    """The evidence against what the disk says should be there."""

    source: str  # "__cluster_metadata" (KRaft), "checkpoints" (ZooKeeper-era), "" (nothing tells)
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


def names(tps: Sequence[TopicPartition]) -> str:
    """The first few partitions, and how many more."""
    return first_few([str(tp) for tp in tps], SHOWN)


def joined(parts: Sequence[str]) -> str:
    """``a, b and c``."""
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def _dir_text(directory_id: str | None) -> str:
    return f", log dir {directory_id}" if directory_id else ""


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
        where = _dir_text(p.directory_of(leader)) if leader >= 0 else ""
        held = sorted({c.broker_id for c in here}, key=lambda b: (b is None, b))
        others = joined([f"broker {b}'s" for b in held]) if held else "no replica's"
        if leader >= 0:
            text = f"its leader's copy (broker {leader}{where}) is not among the inputs; {others} {'are' if len(held) > 1 else 'is'}"
        else:
            text = f"it has no leader, and {others} {'copies are' if len(held) > 1 else 'copy is'} among the inputs"
        uncovered[tp] = Uncovered(tp, text, leader if leader >= 0 else None)
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
    return Coverage("__cluster_metadata", tuple(sorted(image.brokers)), tuple(present_brokers), tuple(missing_brokers),
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
            who = f"broker {d.broker_id}" if d.broker_id is not None else d.path
            uncovered.setdefault(tp, Uncovered(tp, f"{who}'s checkpoints list it, but its partition dir is not among "
                                               f"the inputs ({d.path}): that copy may be the leader's", d.broker_id))
    brokers = tuple(sorted({d.broker_id for d in log_dirs if d.broker_id is not None}))
    return Coverage("checkpoints" if log_dirs else "", (), brokers, (), (), uncovered, None)


def describe(c: Coverage) -> list[str]:
    """The lines every output gives about the coverage: what is missing, or what nothing on the disk tells."""
    out = []
    for b in c.missing_brokers:
        what = f"leader of {len(b.leads)} partition(s), of which {names(list(b.leads))}" if b.leads else "it leads nothing"
        out.append(f"evidence: broker {b.broker_id} is registered in __cluster_metadata but none of its log dirs is "
                   f"among the inputs ({what})")
    for m in c.missing_log_dirs:
        out.append(f"evidence: broker {m.broker_id}'s log dir {m.directory_id} is registered but not among the inputs "
                   f"({len(m.partitions)} partition(s) assigned to it, of which {names(list(m.partitions))})"
                   if m.partitions else f"evidence: broker {m.broker_id}'s log dir {m.directory_id} is registered but "
                   "not among the inputs (no partition is assigned to it)")
    counted = {tp for b in c.missing_brokers for tp in b.leads} | {tp for m in c.missing_log_dirs for tp in m.partitions}
    rest = [u for tp, u in c.uncovered.items() if tp not in counted]
    if rest:
        out.append(f"evidence: {len(rest)} partition(s) without the copy that matters among the inputs, of which "
                   + "; ".join(f"{u.topic_partition}: {u.text}" for u in rest[:SHOWN]))
    if c.metadata_incomplete:
        out.append("evidence: the __cluster_metadata log read is incomplete (damaged, records missing, or records "
                   "that do not decode or that Kafka's replay refuses: see its findings): what it says should exist "
                   "may be out of date, so no all-clear is proven")
    if c.metadata_copies_missing:
        out.append(f"evidence: metadata log dir(s) {', '.join(c.metadata_copies_missing[:SHOWN])} given without "
                   "their __cluster_metadata-0 (their bootstrap.checkpoint makes them the metadata dir): the copy "
                   "read may lag the one left out, so no all-clear is proven; add it")
    if c.metadata_missing:
        out.append(f"evidence: KRaft broker log dir(s) {', '.join(c.metadata_missing[:SHOWN])} given, but the log dir "
                   "holding __cluster_metadata is missing: nothing names the broker's other log dirs, the cluster's "
                   "brokers, the partitions' leaders or __transaction_state's partition count, so no all-clear is "
                   "proven; add the metadata log dir (metadata.log.dir, else the first of log.dirs)")
    elif c.source == "checkpoints":
        out.append("evidence: no __cluster_metadata among the inputs (a ZooKeeper-era disk, or its metadata log dir "
                   "left out): the cluster's other brokers and the partitions' leaders are not on these disks; "
                   f"brokers {', '.join(map(str, c.brokers_present)) or 'none'} judged as given")
    return out

