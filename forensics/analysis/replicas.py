"""Replicas of one partition compared (several brokers' disks): markers present on one replica and
missing on another (KAFKA-7408: lost to truncation or an unclean election) and producer
state that differs where the logs should agree.

Replicas are told apart by their directory, never by broker id alone: two disks may claim the same
broker id (a copy, a rebuilt broker, two clusters; discovery reports it), and broker id 0 is a
real broker."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from forensics.analysis.producers import PartitionView
from forensics.findings import Finding, FindingKind
from forensics.model import TopicPartition
from forensics.state.producer import ProducerState, TransactionSpan


class MarkerSeen(NamedTuple):
    broker_id: int
    producer_id: int
    offset: int
    outcome: str
    epoch: int
    coordinator_epoch: int
    path: str
    position: int


def replica_rank(leader_epoch: int | None, log_end: int, broker_id: int | None) -> tuple[int, int, int]:
    """Sort key of the replica a leader most likely is: highest leader epoch, then longest log, then
    the lowest broker id (the highest key wins)."""
    return (leader_epoch if leader_epoch is not None else -1, log_end, -(broker_id or 0))


def _or_minus_one(value: int | None) -> int:
    return -1 if value is None else value


def group_replicas(views: Sequence[PartitionView]) -> dict[TopicPartition, list[PartitionView]]:
    groups: dict[TopicPartition, list[PartitionView]] = {}
    for v in views:
        groups.setdefault(v.topic_partition, []).append(v)
    return groups


def _marker_seen(view: PartitionView, s: TransactionSpan) -> MarkerSeen:
    assert s.marker_offset is not None and s.marker_at is not None
    return MarkerSeen(_or_minus_one(view.inputs.broker_id), s.producer_id, s.marker_offset, s.outcome or "",
                      _or_minus_one(s.marker_epoch), _or_minus_one(s.coordinator_epoch), s.marker_at.path,
                      s.marker_at.position)


def _has_marker(s: TransactionSpan) -> bool:
    return s.marker_offset is not None and s.marker_at is not None


def markers_of(view: PartitionView) -> dict[tuple[int, int], MarkerSeen]:
    return {(pid, s.marker_offset): _marker_seen(view, s)
            for pid, spans in view.history.spans.items() for s in spans
            if s.marker_offset is not None and s.marker_at is not None}  # _has_marker, spelled out: the key's offset is an int


def markers_elsewhere(replicas: Sequence[PartitionView], here: PartitionView, producer_id: int,
                      start: int) -> list[MarkerSeen]:
    """Markers for ``producer_id`` at or after ``start`` that other replicas hold and ``here`` lacks.
    Reads only that producer's transactions (called once per open transaction: the cost is the
    producer's history, never the whole partition's)."""
    others = [o for o in replicas if o is not here]
    if not others:
        return []
    mine = {s.marker_offset for s in here.history.spans.get(producer_id, ()) if _has_marker(s)}
    return [_marker_seen(o, s) for o in others for s in o.history.spans.get(producer_id, ())
            if _has_marker(s) and s.marker_offset is not None and s.marker_offset >= start
            and s.marker_offset not in mine]


def replica_of(view: PartitionView, group: Sequence[PartitionView]) -> tuple[int | None, str | None]:
    """The replica's broker, with its directory when another replica of ``group`` claims that broker too (else
    None)."""
    bid = view.inputs.broker_id
    shared = any(o is not view and o.inputs.broker_id == bid for o in group)
    return bid, view.inputs.path if shared else None


def replica_name(view: PartitionView, group: Sequence[PartitionView]) -> str:
    """``broker N``, with the replica's directory when another replica of ``group`` claims N too (a finding's
    message; a gap's words: forensics.render.gap_text)."""
    bid, path = replica_of(view, group)
    return f"broker {bid}" + (f" ({path})" if path is not None else "")


def compare_replicas(views: Sequence[PartitionView]) -> list[Finding]:
    findings: list[Finding] = []
    for tp, group in group_replicas(views).items():
        if len(group) < 2:
            continue
        all_markers = [markers_of(v) for v in group]  # by position: broker ids may repeat
        for i, v in enumerate(group):
            mine = all_markers[i]
            for j, other in enumerate(group):
                if j == i:
                    continue
                for key, m in all_markers[j].items():
                    if key in mine:
                        continue
                    if m.offset < v.log_end_offset:
                        findings.append(Finding(
                            FindingKind.REPLICA_DIVERGENCE,
                            f"{tp}: {m.outcome} marker of producer {m.producer_id} at offset {m.offset} on "
                            f"{replica_name(other, group)} is missing on {replica_name(v, group)}, whose log goes "
                            "past it: the logs diverged (truncation or unclean leader election, KAFKA-7408)",
                            m.path, m.position, None, m.offset))
        findings.extend(_state_differences(tp, group))
    return findings


def _state_differences(tp: TopicPartition, group: Sequence[PartitionView]) -> list[Finding]:
    """Replicas with the same log end should hold the same producer entries."""
    out = []
    by_end: dict[int, list[PartitionView]] = {}
    for v in group:
        by_end.setdefault(v.log_end_offset, []).append(v)
    for end, same in by_end.items():
        first = same[0]
        for other in same[1:]:
            for pid in sorted(first.entries.keys() | other.entries.keys()):
                a, b = first.entries.get(pid), other.entries.get(pid)
                if a != b:
                    one, two = replica_name(first, group), replica_name(other, group)
                    out.append(Finding(FindingKind.REPLICA_DIVERGENCE,
                                       f"{tp}: producer {pid} differs between {one} and {two} at the same log end "
                                       f"{end}: {_entry_difference(a, b, one, two)}", other.inputs.path))
    return out


# the fields of a producer entry two replicas may hold differently, as describe-producers names them
_ENTRY_FIELDS = (("producer_epoch", "ProducerEpoch"), ("coordinator_epoch", "LatestCoordinatorEpoch"),
                 ("last_sequence", "LastSequence"), ("last_offset", "last offset"), ("offset_delta", "offset delta"),
                 ("last_timestamp", "LastTimestamp"), ("current_txn_first_offset", "CurrentTransactionStartOffset"))


def _entry_difference(a: ProducerState | None, b: ProducerState | None, one: str, two: str) -> str:
    """How two replicas' entries of one producer differ, field by field (``LatestCoordinatorEpoch 2 on
    broker 1, -1 on broker 2``), or which holds none; never a Python repr."""
    if a is None or b is None:
        return f"only {two if a is None else one} holds an entry for it"
    return ", ".join(f"{label} {_value(getattr(a, key))} on {one}, {_value(getattr(b, key))} on {two}"
                     for key, label in _ENTRY_FIELDS if getattr(a, key) != getattr(b, key))


def _value(v: int | None) -> str:
    return "none" if v is None else str(v)
