"""One cluster at a time: the inputs grouped by cluster, one chosen, copies of one broker told apart.

Brokers of different clusters are never replicas of each other, and two copies of one broker's
disk are not two replicas. :func:`select_cluster` makes the inventory a command analyses hold one
cluster and one copy of each broker's log dir:

* **Which cluster.** A log dir belongs to the ``cluster.id`` of its ``meta.properties`` (else the
  ``clusterId`` of its KRaft ``quorum-state``). A partition dir or file given on its own belongs
  to the cluster of the log dir it sits in (its parent's ``meta.properties``; a file's
  grandparent's), when that log dir has one. Anything still without a cluster id (ZooKeeper-era
  disks copied without ``meta.properties``, pre-0.10.1 brokers, bare partition dirs) joins the
  cluster whose log dirs hold the same topic ids (``partition.metadata``: a topic id names one
  topic of one cluster); without a shared topic id it is assumed to be of the only cluster among
  the inputs, unless one of its topics carries another id than the cluster's topic of that name;
  otherwise it is of an unknown cluster. Each inference is a ``no_cluster_id`` finding. When no
  input names a cluster at all, everything is one group and nothing is said.
* **Several clusters** are refused (:class:`~forensics.errors.UsageError`, exit 2) with one line
  naming each cluster and its log dirs, unless ``--cluster-id`` picks one; what is left out is
  said in one note. Inputs of an unknown cluster are analysed by giving them on their own.
* **Copies of one broker.** Log dirs of one cluster that claim the same broker id and hold the
  same live partitions (a disk copied twice, at different times) are copies, not JBOD dirs: the
  newer is used, i.e. the one whose checkpoints are ahead on every shared partition (leader
  epoch, then high watermark, then recovery point, then log end: the last segment's base offset
  and the log bytes), and one note says which and why. Copies that are each ahead on some
  partition are refused: which one is the evidence is the investigator's call.

Only file names and the small text files discovery read are used; a partition dir's or file's
parent ``meta.properties`` is read the same way (read-only, a few hundred bytes).
"""

from __future__ import annotations

import dataclasses
import os
from forensics.dataclass_fast import dataclass
from collections.abc import Sequence

from forensics.codec import broker_files as bf
from forensics.errors import UsageError
from forensics.findings import Finding, FindingKind, Severity
from forensics.layout.checks import duplicate_brokers
from forensics.layout.names import PartitionStatus
from forensics.layout.partition_dir import read_text_file
from forensics.layout.inventory import Inventory, LogDir, LooseFile, PartitionDir
from forensics.model import CLUSTER_METADATA_TOPIC, first_few

SHOWN = 3  # log dirs named per cluster in a message


@dataclass(frozen=True)
class Selection:
    """The inventory to analyse (one cluster, one copy per broker) and what was left out."""

    inventory: Inventory
    cluster_id: str | None  # None: the inputs name no cluster
    notes: tuple[str, ...]  # one line each, for stderr


# -- which cluster ---------------------------------------------------------------------------------


def _log_dir_cluster(d: LogDir) -> str | None:
    if d.cluster_id is not None:
        return d.cluster_id
    for p in d.partitions:
        if p.quorum_state is not None and p.quorum_state.cluster_id:
            return p.quorum_state.cluster_id
    return None


def _parent_cluster(path: str, levels: int, read: dict[str, str | None]) -> str | None:
    """``cluster.id`` of the log dir ``levels`` directories above ``path``, if it has a meta.properties
    (``read``: the answers so far, by log dir: each is read once)."""
    parent = os.path.abspath(path)
    for _ in range(levels):
        parent = os.path.dirname(parent)
    if parent not in read:
        meta_path = os.path.join(parent, "meta.properties")
        meta = read_text_file(meta_path, bf.parse_meta_properties, []) if os.path.isfile(meta_path) else None
        read[parent] = meta.cluster_id if meta is not None else None
    return read[parent]


def _topic_ids(partitions: Sequence[PartitionDir]) -> dict[str, str]:
    """topic name -> topic id (live and future copies; the KRaft metadata log's fixed id excluded)."""
    return {p.topic: p.topic_id for p in partitions
            if p.topic and p.topic_id and p.topic != CLUSTER_METADATA_TOPIC
            and p.status in (PartitionStatus.LIVE, PartitionStatus.FUTURE)}


@dataclass
class _Item:
    """A log dir, a partition dir given alone or a file given alone, with its cluster."""

    path: str
    kind: str  # "log dir", "partition dir", "file"
    cluster: str | None
    topics: dict[str, str]  # topic name -> topic id
    log_dir: LogDir | None = None
    partition: PartitionDir | None = None
    loose: LooseFile | None = None


def _items(inv: Inventory) -> list[_Item]:
    items = [_Item(d.path, "log dir", _log_dir_cluster(d), _topic_ids(d.partitions), log_dir=d)
             for d in inv.log_dirs]
    read: dict[str, str | None] = {}
    items += [_Item(p.path, "partition dir", _parent_cluster(p.path, 1, read), _topic_ids([p]), partition=p)
              for p in inv.partitions]
    items += [_Item(f.path, "file", _parent_cluster(f.path, 2, read), {}, loose=f) for f in inv.loose_files]
    return items


def _names(topics: Sequence[str]) -> str:
    return first_few(topics, SHOWN)


def _infer(item: _Item, known: dict[str, dict[str, str]]) -> tuple[str | None, Finding]:
    """The cluster of an item that names none, and the finding that says how it was decided.
    ``known``: cluster id -> (topic name -> topic id) of the items that name their cluster."""
    what = f"this {item.kind} has no cluster.id (no meta.properties naming one)"
    shared = {c: sorted(t for t, i in item.topics.items() if topics.get(t) == i) for c, topics in known.items()}
    shared = {c: ts for c, ts in shared.items() if ts}
    if len(shared) == 1:
        [(cluster, topics)] = shared.items()
        return cluster, Finding(FindingKind.NO_CLUSTER_ID, f"{what}; taken as cluster {cluster}, whose log dirs hold "
                                f"the same topic ids ({_names(topics)})", item.path, severity=Severity.INFO)
    clash = sorted(t for topics in known.values() for t, i in item.topics.items() if t in topics and topics[t] != i)
    if len(known) == 1 and not shared and not clash:
        [cluster] = known
        return cluster, Finding(FindingKind.NO_CLUSTER_ID, f"{what} and no topic id that tells; assumed to be of "
                                f"cluster {cluster}, the only cluster among the inputs", item.path)
    why = (f"its topic ids match log dirs of {len(shared)} clusters" if shared else
           f"topic {clash[0]} has another topic id here than in the cluster of that name" if clash else
           "no topic id it holds tells which of the clusters it is of")
    return None, Finding(FindingKind.NO_CLUSTER_ID, f"{what}; {why}: of an unknown cluster", item.path)


def _assign(items: list[_Item]) -> list[Finding]:
    known: dict[str, dict[str, str]] = {}
    for item in items:
        if item.cluster is not None:
            known.setdefault(item.cluster, {}).update(item.topics)
    if not known:
        return []
    findings = []
    for item in items:
        if item.cluster is None:
            item.cluster, finding = _infer(item, known)
            findings.append(finding)
    return findings


# -- several clusters ------------------------------------------------------------------------------


def _short(paths: Sequence[str], everything: Sequence[str]) -> str:
    """``paths`` by the fewest trailing components that tell each apart from the rest of
    ``everything`` (``kraft-tv2/data``), the first few named."""
    split = {p: os.path.abspath(p).split(os.sep) for p in everything}

    def name(p: str) -> str:
        parts = split[p]
        for n in range(1, len(parts) + 1):
            if not any(o != p and split[o][-n:] == parts[-n:] for o in everything):
                return os.sep.join(parts[-n:])
        return p

    return first_few([name(p) for p in paths], SHOWN)


def _group_text(cluster: str | None, paths: Sequence[str], everything: Sequence[str]) -> str:
    name = cluster if cluster is not None else "unknown cluster"
    return f"{name} ({_short(paths, everything)})"


def _groups(items: Sequence[_Item]) -> dict[str | None, list[_Item]]:
    groups: dict[str | None, list[_Item]] = {}
    for item in items:
        groups.setdefault(item.cluster, []).append(item)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or "")))


def _choose(groups: dict[str | None, list[_Item]], cluster_id: str | None) -> tuple[str | None, list[str]]:
    everything = [i.path for items in groups.values() for i in items]
    listing = ", ".join(_group_text(c, [i.path for i in items], everything) for c, items in groups.items())
    if cluster_id is None:
        if len(groups) == 1:
            return next(iter(groups)), []
        known = sum(c is not None for c in groups)
        raise UsageError(f"the inputs hold {known} clusters{' and inputs of an unknown cluster' if None in groups else ''}"
                         f", which are never replicas of each other: {listing}; analyse one at a time with "
                         "--cluster-id ID" + (" (give inputs of an unknown cluster on their own)" if None in groups
                                             else ""))
    if cluster_id not in groups:
        raise UsageError(f"--cluster-id {cluster_id}: no such cluster in the evidence; clusters: {listing}")
    others = {c: items for c, items in groups.items() if c != cluster_id}
    if not others:
        return cluster_id, []
    left = ", ".join(_group_text(c, [i.path for i in items], everything) for c, items in others.items())
    return cluster_id, [f"cluster {cluster_id}: left out the inputs of other clusters: {left}"]


# -- copies of one broker --------------------------------------------------------------------------


def _live(d: LogDir) -> dict[tuple[str, int], PartitionDir]:
    return {(p.topic, p.partition): p for p in d.partitions
            if p.status is PartitionStatus.LIVE and p.topic is not None and p.partition is not None}


def _progress(d: LogDir, p: PartitionDir) -> tuple[int, int, int, int, int]:
    """How far a replica got, from its checkpoints and file sizes (compared as a tuple)."""
    tp = p.topic_partition
    epoch = p.leader_epochs[-1].epoch if p.leader_epochs else -1
    last = p.segments[-1].base_offset if p.segments else -1
    size = sum(s.log_size or 0 for s in p.segments)
    if tp is None:
        return (epoch, -1, -1, last, size)
    return (epoch, d.high_watermarks.get(tp, -1), d.recovery_points.get(tp, -1), last, size)


_FIELDS = ("leader epoch", "high watermark", "recovery point", "last segment base offset", "log bytes")


def _ahead(a: LogDir, b: LogDir, shared: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    la, lb = _live(a), _live(b)
    return [tp for tp in shared if _progress(a, la[tp]) > _progress(b, lb[tp])]


def _why(a: LogDir, b: LogDir, tp: tuple[str, int]) -> str:
    pa, pb = _progress(a, _live(a)[tp]), _progress(b, _live(b)[tp])
    i = next(i for i in range(len(pa)) if pa[i] != pb[i])
    return f"{tp[0]}-{tp[1]} {_FIELDS[i]} {pa[i]} vs {pb[i]}"


def _copies(dirs: Sequence[LogDir]) -> list[list[LogDir]]:
    """Groups of log dirs that claim one broker id and share live partitions (connected)."""
    groups: list[list[LogDir]] = []
    by_broker: dict[int, list[LogDir]] = {}
    for d in dirs:
        if d.broker_id is not None:
            by_broker.setdefault(d.broker_id, []).append(d)
    for same in by_broker.values():
        pending = list(same)
        while pending:
            group = [pending.pop(0)]
            frontier = list(group)
            while frontier:
                current = frontier.pop()
                for other in [o for o in pending if _live(o).keys() & _live(current).keys()]:
                    pending.remove(other)
                    group.append(other)
                    frontier.append(other)
            if len(group) > 1:
                groups.append(group)
    return groups


def _newest(group: Sequence[LogDir], cluster: str | None) -> tuple[LogDir, str]:
    """The copy to use and the note saying why; UsageError when no copy is ahead of all others."""
    broker = f"broker {group[0].broker_id}" + (f" of cluster {cluster}" if cluster else "")
    ordered = list(group)  # in the order given: of identical copies, the first is used
    names = _short(sorted(d.path for d in ordered), [d.path for d in ordered])
    for cand in ordered:
        others = [o for o in ordered if o is not cand]
        if all(not _ahead(o, cand, sorted(_live(o).keys() & _live(cand).keys())) for o in others):
            ahead = [(o, _ahead(cand, o, sorted(_live(o).keys() & _live(cand).keys()))) for o in others]
            left = ", ".join(o.path for o in others)
            head = f"{broker} is in {len(group)} log dirs holding the same partitions (copies of one disk)"
            if not any(tps for _, tps in ahead):
                return cand, f"{head}: using {cand.path} (the copies have the same checkpoints and log sizes); " \
                             f"left out {left}"
            o, tps = next((o, tps) for o, tps in ahead if tps)
            shared = len(_live(o).keys() & _live(cand).keys())
            return cand, (f"{head}: using {cand.path}, the newer (ahead on {len(tps)} of {shared} shared partitions, "
                          f"e.g. {_why(cand, o, tps[0])}; not behind on any); left out {left}")
    raise UsageError(f"{broker} is in {len(group)} log dirs holding the same partitions ({names}), and none is "
                     "ahead of the others on all of them: give only the copy to analyse")


# -- the selection ---------------------------------------------------------------------------------


def select_cluster(inv: Inventory, cluster_id: str | None = None) -> Selection:
    """The inventory of one cluster, one copy per broker (see the module docstring)."""
    items = _items(inv)
    findings = _assign(items)
    chosen_cluster, notes = _choose(_groups(items), cluster_id)
    kept = [i for i in items if i.cluster == chosen_cluster]
    dirs = [i.log_dir for i in kept if i.log_dir is not None]
    left: set[str] = set()
    for group in _copies(dirs):
        use, note = _newest(group, chosen_cluster)
        notes.append(note)
        left |= {d.path for d in group if d is not use}
    dirs = [d for d in dirs if d.path not in left]
    kept_paths = {i.path for i in kept} - left
    if len(kept_paths) == len(items) and not findings:
        return Selection(inv, chosen_cluster, tuple(notes))
    inv_findings = tuple(f for f in inv.findings if f.kind is not FindingKind.DUPLICATE_BROKER)
    return Selection(dataclasses.replace(
        inv, log_dirs=tuple(dirs), partitions=tuple(p for p in inv.partitions if p.path in kept_paths),
        loose_files=tuple(f for f in inv.loose_files if f.path in kept_paths),
        findings=inv_findings + tuple(f for f in findings if f.path in kept_paths) + tuple(duplicate_brokers(dirs))),
        chosen_cluster, tuple(notes))


__all__ = ["Selection", "select_cluster"]
