"""Checks across the whole inventory, once every input has been walked.

* truncated ``-delete``/``-stray`` topic names resolved through the topic id;
* two log dirs claiming one broker id: a copy of one disk (same ``directory.id``), two clusters
  (different ``cluster.id``), or two disks holding the same partitions (older brokers have no
  ``directory.id``; a broker's own JBOD log dirs never share a live partition). Such log dirs stay
  apart everywhere (by path); the finding says why two replicas carry the same broker id. The
  commands first keep one cluster and one copy of each broker (:mod:`forensics.layout.clusters`),
  so what reaches them is two partial copies of one disk;
* unreadable segment files: the offsets that cannot be analysed;
* inputs with no Kafka content at all: an :class:`~forensics.errors.InputError`, not a report on
  nothing.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from forensics.errors import InputError
from forensics.findings import Finding, FindingKind
from forensics.layout.names import PartitionStatus
from forensics.layout.inventory import LogDir, PartitionDir, SegmentFiles
from forensics.model import first_few

NO_KAFKA = "no Kafka log directory, partition directory or file found"


# --------------------------------------------------------------------------- topic names


def resolve_truncated_topics(partitions: Sequence[PartitionDir]) -> dict[str, str]:
    """topic id -> topic name, from directories whose names are never truncated."""
    names: dict[str, str] = {}
    for p in partitions:
        if p.topic_id and p.name_topic and p.status in (PartitionStatus.LIVE, PartitionStatus.FUTURE):
            names.setdefault(p.topic_id, p.name_topic)
    return names


def with_topic(p: PartitionDir, names: dict[str, str]) -> PartitionDir:
    if p.status not in (PartitionStatus.DELETE, PartitionStatus.STRAY) or not p.topic_id:
        return p
    full = names.get(p.topic_id)
    if full is None or full == p.topic or not full.startswith(p.name_topic or ""):
        return p
    return dataclasses.replace(p, topic=full)


# --------------------------------------------------------------------------- one broker id, several disks


def _live(d: LogDir) -> set[tuple[str, int]]:
    return {(p.topic, p.partition) for p in d.partitions
            if p.status is PartitionStatus.LIVE and p.topic is not None and p.partition is not None}


def _names(tps: set[tuple[str, int]], limit: int = 3) -> str:
    return first_few([f"{t}-{p}" for t, p in sorted(tps)], limit)


def _same_broker_id(node: int, dirs: Sequence[LogDir]) -> Finding | None:
    """One finding for log dirs that share a broker id but are not one broker's JBOD dirs."""
    clusters = sorted({d.cluster_id for d in dirs if d.cluster_id is not None})
    first, others = dirs[0], ", ".join(d.path for d in dirs[1:])
    if len(clusters) > 1:
        return Finding(FindingKind.DUPLICATE_BROKER,
                       f"broker id {node} is claimed by log dirs of {len(clusters)} clusters "
                       f"({', '.join(clusters)}): {first.path} and {others}; they are analysed as separate "
                       "replicas, told apart by log dir", path=first.path)
    shared: set[tuple[str, int]] = set()
    for i, a in enumerate(dirs):
        for b in dirs[i + 1:]:
            shared |= _live(a) & _live(b)
    if not shared:
        return None  # JBOD: one broker's log dirs hold disjoint partitions
    return Finding(FindingKind.DUPLICATE_BROKER,
                   f"broker id {node} is claimed by {len(dirs)} log dirs holding the same partitions "
                   f"({_names(shared)}): {first.path} and {others} (a copy of one disk, a rebuilt broker, or "
                   "two brokers configured with the same broker.id); they are analysed as separate replicas, "
                   "told apart by log dir", path=first.path)


def duplicate_brokers(log_dirs: Sequence[LogDir]) -> list[Finding]:
    """Same node id AND same directory id in two log dirs = a copy of one disk (or a cloned
    disk). Same node id with different directory ids is JBOD and fine, unless the log dirs hold
    the same live partitions or belong to different clusters (then, or without directory ids,
    they are two disks claiming one broker id)."""
    by_node: dict[int, list[LogDir]] = {}
    for d in log_dirs:
        if d.broker_id is not None:
            by_node.setdefault(d.broker_id, []).append(d)
    findings = []
    for node, dirs in by_node.items():
        if len(dirs) < 2:
            continue
        copies: dict[str, list[LogDir]] = {}
        for d in dirs:
            if d.directory_id is not None:
                copies.setdefault(d.directory_id, []).append(d)
        copied = False
        for dir_id, same in copies.items():
            if len(same) > 1:
                copied = True
                others = ", ".join(d.path for d in same[1:])
                findings.append(Finding(FindingKind.DUPLICATE_BROKER,
                                        f"broker {node} directory.id {dir_id} also claimed by {others}",
                                        path=same[0].path))
        if not copied:
            finding = _same_broker_id(node, dirs)
            if finding is not None:
                findings.append(finding)
    return findings


# --------------------------------------------------------------------------- unreadable files


def unreadable_segment_message(segments: Sequence[SegmentFiles], path: str) -> str:
    """What an unreadable file costs the analysis, in offsets where that is known."""
    for i, s in enumerate(segments):
        if s.log == path:
            end = segments[i + 1].base_offset - 1 if i + 1 < len(segments) else None
            gap = f"offsets {s.base_offset}-{end}" if end is not None and end >= s.base_offset else \
                f"offsets {s.base_offset} and later"
            return f"no read permission: this partition's {gap} cannot be analysed"
    if path.endswith(".snapshot"):
        return "no read permission: producer state is rebuilt without this snapshot"
    return "no read permission"


# --------------------------------------------------------------------------- nothing Kafka at all


def require_kafka_content(paths: Sequence[str], findings: Sequence[Finding], max_depth: int) -> None:
    """Raise :class:`InputError` when the inputs held nothing Kafka at all (the caller checks
    that the inventory is empty): an unreadable input says why, otherwise what was searched."""
    given = {os.path.normpath(p) for p in paths}
    for f in findings:
        if f.kind is FindingKind.UNREADABLE_FILE and f.path is not None and os.path.normpath(f.path) in given:
            raise InputError(f.message, path=f.path)
    where = f"within {max_depth} levels" if max_depth else "at the top level"
    unread = [f for f in findings if f.kind is FindingKind.UNREADABLE_FILE]
    why = f"; {len(unread)} path(s) could not be read, e.g. {unread[0].path}: {unread[0].message}" if unread else ""
    if len(paths) == 1:
        raise InputError(f"{NO_KAFKA} {where}{why}", path=paths[0])
    raise InputError(f"{NO_KAFKA} {where} of any input ({', '.join(paths)}){why}")


__all__ = ["NO_KAFKA", "duplicate_brokers", "require_kafka_content", "resolve_truncated_topics",
           "unreadable_segment_message", "with_topic"]
