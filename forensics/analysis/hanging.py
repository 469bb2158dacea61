"""Hanging-transaction verdicts: every open transaction cross-referenced with the coordinators.

Kafka's ``find-hanging`` (``TransactionsCommand.FindHangingTransactionsCommand``) judges by age and
asks the live coordinator; offline the coordinator's own log decides. For each open transaction of a
partition replica (producer id, first offset, entry epoch E, coordinator epoch C, lastTimestamp):

* ``hanging``: the coordinator's own metadata proves no marker will come (no record for the
  producer id, the id expired, the id's producer id rotated, the id in Empty/CompleteX, or the
  partition not in its partition set); reasons name the known patterns (KAFKA-9144, KAFKA-7408).
  The only verdict whose abort is armed;
* ``ongoing``: Ongoing with the partition in its set: the coordinator will finish or time it out;
  ``overdue`` (a state of ongoing) when more than a minute past its own timeout: the coordinator
  should have aborted it, yet its records still hold it Ongoing (not proven hanging);
* ``stuck-coordinator``: PrepareCommit/PrepareAbort with the partition in its set: markers that
  never arrived (never abort a PrepareCommit: it would break atomicity);
* ``fenced-coordinator``: the partition holds, for this producer, a coordinator epoch above the
  coordinator's own (an earlier abort given a too-high ``--coordinator-epoch``): the partition
  refuses the real coordinator's markers (``ProducerStateManager`` checks the coordinator epoch);
* ``unverifiable``: the evidence cannot decide: no coordinator data, or the records the verdict
  rests on are damaged or incomplete (see :mod:`forensics.analysis.evidence_gaps`).

Each kind and the rules it carries (armed or not, needs a person, advice): :mod:`forensics.analysis.verdict_kinds`.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable, Sequence

from forensics.analysis.contradictions import (contradictions, fold_disagreement, other_producers_disagreement,
                                              replica_disagreement, replica_epoch_disagreement)
from forensics.analysis.coordinator import CoordinatorView, TransactionIdView
from forensics.analysis.evidence_gaps import EvidenceCheck, Gap, describe
from forensics.analysis.producers import PartitionView
from forensics.analysis.replicas import markers_elsewhere
from forensics.analysis.settling import TOO_RECENT_ADVICE, settling_gaps
from forensics.analysis.verdict_kinds import Arming, VerdictKind
from forensics.codec.txnlog import TransactionStatus as S
from forensics.model import Provenance, TopicPartition, first_few
from forensics.state.coordinator import Decision, TransactionMetadata
from forensics.state.producer import ProducerState, TransactionSpan

DEFAULT_MAX_TRANSACTION_TIMEOUT_MS = 15 * 60_000
OVERDUE_GRACE_MS = 60_000  # the coordinator aborts timed-out transactions every 10 s by default
TimeText = Callable[[int], str]  # an epoch-ms time as the reasons show it (render/time_text.py makes it)
TORN_OR_LOST = ("a torn or partial copy and a marker really lost look alike on disk: only the live cluster "
                "tells them apart (the guard in abort-commands compares with describe-producers)")


@dataclass(frozen=True, slots=True)
class Verdict:
    """One open transaction and what the coordinators say about it."""

    view: PartitionView
    entry: ProducerState
    start_offset: int
    span: TransactionSpan | None
    verdict: VerdictKind
    reason: str
    transactional_id: str | None
    id_view: TransactionIdView | None
    duration_ms: int | None  # as-of minus the entry's lastTimestamp
    past_age_gate: bool
    patterns: tuple[str, ...] = ()  # KAFKA-9144, KAFKA-7408, ...
    gaps: tuple[Gap, ...] = ()  # incomplete evidence that kept a hanging verdict from being proven
    overdue_ms: int | None = None  # overdue: how long past its own timeout (as of)
    decision: Decision | None = None  # what the coordinator last decided for the id

    @property
    def abortable(self) -> bool:
        """Proven hanging: its kind's abort is armed (:attr:`Arming.PROVEN`)."""
        return self.verdict.arming is Arming.PROVEN

    @property
    def needs_person(self) -> bool:
        """Not proven, but a person must look (find-hanging's exit 7), as its kind says."""
        return self.verdict.needs_person

    @property
    def needs_attention(self) -> bool:
        """Proven hanging or needing a person: what ``find-hanging`` shows without ``--all`` (everything but
        a transaction the coordinator will still finish in time)."""
        return self.abortable or self.needs_person

    @property
    def advice(self) -> tuple[str, ...]:
        """Operator guidance (:mod:`forensics.analysis.advice`, as the kind names it); ``()`` when none."""
        return self.verdict.advice(self)

    @property
    def coordinator_partition(self) -> int | None:
        return self.id_view.partition if self.id_view is not None else None


def _kafka_9144(view: PartitionView, pid: int, start: int, epoch: int) -> str | None:
    """A marker at a higher epoch before this transaction's data: the partition had forgotten the
    fencing epoch (early producer-state expiry) and accepted a zombie's write."""
    for s in view.history.spans.get(pid, ()):
        if s.marker_offset is not None and s.marker_offset < start and s.marker_epoch is not None \
                and s.marker_epoch > epoch:
            return (f"KAFKA-9144 pattern: {s.outcome} marker at offset {s.marker_offset} carried epoch "
                    f"{s.marker_epoch}, yet this transaction's data at offset {start} has epoch {epoch}")
    return None


def _data_epoch(e: ProducerState, span: TransactionSpan | None) -> int:
    """The epoch of the open transaction's own data (its first batch's), else the entry's."""
    return span.data_epochs[0] if span is not None and span.data_epochs else e.producer_epoch


def _kafka_7408(view: PartitionView, start: int, replicas: Sequence[PartitionView]) -> str | None:
    """A leader change after the transaction's first offset, on a partition with other replicas: a marker
    may have been lost by truncation. Not where nothing shows another replica (a single node's restart
    bumps the leader epoch too, with no truncation), nor at the log start (DeleteRecords and retention
    rewrite the checkpoint's first entry there: ``LeaderEpochFileCache.truncateFromStart``)."""
    if not any(r.inputs.path != view.inputs.path for r in replicas):
        return None
    later = [e for e in view.inputs.leader_epochs if e.start_offset > start and e.start_offset != view.log_start_offset]
    if later:
        e = later[0]
        return (f"leader epoch {e.epoch} began at offset {e.start_offset}, after this transaction started: if "
                "its marker was lost there (truncation, unclean election: KAFKA-7408) another replica may hold it")
    return None


def _missing_partitions(coord: CoordinatorView) -> list[int]:
    return [p for p in range(coord.partition_count) if p not in coord.partitions]


def _fenced(view: PartitionView, e: ProducerState, v: TransactionIdView) -> str | None:
    """The partition's entry holds a coordinator epoch above the coordinator's own: the real
    coordinator's markers are refused here (``ProducerAppendInfo.checkCoordinatorEpoch``)."""
    if v.coordinator_epoch < 0 or e.coordinator_epoch <= v.coordinator_epoch:
        return None
    marker = next((s for s in reversed(view.history.spans.get(e.producer_id, ()))
                   if s.coordinator_epoch == e.coordinator_epoch and s.marker_offset is not None), None)
    where = f" (its {marker.outcome} marker at offset {marker.marker_offset})" if marker else ""
    return (f"{view.topic_partition} holds coordinator epoch {e.coordinator_epoch} for producer {e.producer_id}"
            f"{where}, above the coordinator's own epoch {v.coordinator_epoch} (__transaction_state-{v.partition}"
            f", broker {v.coordinator}): the partition refuses the real coordinator's markers "
            "(TRANSACTION_COORDINATOR_FENCED), as after an abort given a too-high --coordinator-epoch; or this "
            f"copy of __transaction_state-{v.partition} lacks its newest leader epoch")


def _classify_with_id(view: PartitionView, e: ProducerState, v: TransactionIdView, time_text: TimeText = str
                      ) -> tuple[VerdictKind, str]:
    m = v.metadata
    tp = view.topic_partition
    fenced = _fenced(view, e, v)
    if fenced is not None:
        return VerdictKind.FENCED, fenced
    if m is None:
        t = v.tombstone
        return VerdictKind.HANGING, (f"transactional id {v.transactional_id!r} expired: tombstone at offset "
                         f"{t.offset if t else '?'} of __transaction_state-{v.partition}")
    if m.producer_id != e.producer_id:
        return VerdictKind.HANGING, (f"producer id rotated: {v.transactional_id!r} now uses producer id {m.producer_id} "
                         f"(epoch {m.producer_epoch})")
    state = m.state
    if state in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        return VerdictKind.HANGING, (f"coordinator has {v.transactional_id!r} in {m.state_name} (epoch {m.producer_epoch}): "
                         "no transaction in flight, no marker will come")
    if tp not in m.partitions:
        return VerdictKind.HANGING, (f"{tp} is not in the partition set of {v.transactional_id!r} ({m.state_name}: "
                         f"{', '.join(map(str, m.partitions)) or 'none'})")
    if state == S.ONGOING:
        if m.producer_epoch < e.producer_epoch:
            return VerdictKind.STUCK, (f"Ongoing at epoch {m.producer_epoch}, below the partition's epoch {e.producer_epoch}: "
                           "the coordinator's markers would be rejected")
        return VerdictKind.ONGOING, (f"Ongoing with {tp} in its set since {time_text(m.start_ms)}: the coordinator will commit, abort or "
                         f"time it out ({m.timeout_ms} ms)")
    if state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        what = "COMMIT" if state == S.PREPARE_COMMIT else "ABORT"
        return VerdictKind.STUCK, (f"{m.state_name} with {tp} still pending: the {what} marker never arrived"
                       + (" (do NOT abort: the coordinator decided to commit)" if what == "COMMIT" else ""))
    return VerdictKind.HANGING, f"coordinator has {v.transactional_id!r} in {m.state_name}"


def _classify(view: PartitionView, e: ProducerState, coord: CoordinatorView | None, time_text: TimeText = str
              ) -> tuple[VerdictKind, str, TransactionIdView | None]:
    pid = e.producer_id
    if coord is None or not coord.partitions:
        return VerdictKind.UNVERIFIABLE, ("no __transaction_state in the inputs: the coordinator may still complete this "
                              "transaction; judged by age alone, as Kafka's find-hanging does"), None
    current = coord.ids_for_producer(pid) or coord.ever_used_producer(pid)
    if current:
        v = current[0]
        verdict, reason = _classify_with_id(view, e, v, time_text)
        return verdict, reason, v
    missing = _missing_partitions(coord)
    if missing:
        return VerdictKind.UNVERIFIABLE, (f"no coordinator record for producer id {pid}, but __transaction_state partitions "
                              f"{_numbers(missing)} are not among the inputs: the coordinator may still complete "
                              "this transaction"), None
    if not coord.count_source:
        n = coord.partition_count
        return VerdictKind.UNVERIFIABLE, (f"no coordinator record for producer id {pid} in the {n} __transaction_state partitions "
                              f"read (0-{n - 1}), but nothing on the disk gives their count (no __cluster_metadata "
                              "among the inputs): a higher-numbered partition may hold it; give "
                              "--transaction-state-partitions N (kafka-topics.sh --describe --topic "
                              "__transaction_state, or the brokers' transaction.state.log.num.partitions)"), None
    return VerdictKind.HANGING, f"no coordinator record for producer id {pid} in any __transaction_state partition", None


def _numbers(values: Sequence[int], limit: int = 10) -> str:
    return first_few([str(v) for v in values], limit)


def _lost_marker(view: PartitionView, replicas: Sequence[PartitionView], pid: int, start: int) -> str | None:
    found = markers_elsewhere(replicas, view, pid, start)
    if not found:
        return None
    m = found[0]
    return (f"marker lost on this replica (KAFKA-7408): broker {m.broker_id} holds its {m.outcome} marker at offset "
            f"{m.offset} (epoch {m.epoch}, coordinatorEpoch {m.coordinator_epoch}) in {m.path} @ byte {m.position}")


def _unproven(verdict: VerdictKind, reason: str, view: PartitionView, e: ProducerState, span: TransactionSpan | None,
              v: TransactionIdView | None, coord: CoordinatorView | None, check: EvidenceCheck | None,
              time_text: TimeText, replicas: Sequence[PartitionView] = (),
              others: Sequence[tuple[int | None, Gap]] = ()) -> tuple[str, tuple[Gap, ...]]:
    """``reason`` and the gaps that keep a verdict from being proven, or ``()``: records that contradict
    each other, damaged or incomplete records (any verdict: "ongoing" needs no one only when the records
    saying so are whole); files copied too soon after what would have changed them (hanging, stuck).
    ``others``: :func:`other_producers_disagreement` of the partition."""
    found = [replica_disagreement(view, replicas, e.producer_id), replica_epoch_disagreement(view, replicas),
             next((g for pid, g in others if pid != e.producer_id), None)]
    if check is not None:
        found += [check.repeated_batch(view, e.producer_id, span), check.epoch_contradiction(view)]
    gaps: list[Gap] = list(contradictions(view, e.producer_id, span, v)) + [g for g in found if g is not None]
    parts: list[str] = [g.text for g in gaps]
    torn: list[Gap] = []  # damaged or incomplete records
    if check is not None:
        data = check.data(view, span)
        if verdict is not VerdictKind.HANGING:  # what it rests on: the log and what its checkpoints say (an index is rebuilt)
            data = tuple(g for g in data if g.log_end is not None or g.path.endswith(".log"))
        if data:
            parts.append(describe(str(view.topic_partition), data) + (
                ": this transaction's marker may be missing from the copy" if verdict is VerdictKind.HANGING else
                ": the copy may not hold what the broker last wrote of this transaction"))
            torn.extend(data)
        if verdict is VerdictKind.HANGING or v is not None:
            wanted = None if v is None else sorted({v.partition, v.expected_partition})
            contradicting = check.coordinator_epoch_contradictions(wanted)
            parts.extend(g.text + ": the id's records there are not proven to be the broker's own" for g in contradicting)
            gaps.extend(contradicting)
            for label, missing in check.coordinator(wanted):
                parts.append(describe(label, missing) + (": the id's newest record may be missing" if v is not None
                                                         else ": the record of this producer id may be missing"))
                torn.extend(missing)
    gaps.extend(torn)
    if check is not None:
        foreign = check.misplaced(v) if v is not None or verdict is VerdictKind.HANGING else ()
        parts.extend(g.text for g in foreign)
        gaps.extend(foreign)
    if verdict in (VerdictKind.HANGING, VerdictKind.STUCK, VerdictKind.FENCED) and check is not None:
        missing = check.copies_missing(view.topic_partition, v if verdict is not VerdictKind.FENCED else None, verdict is VerdictKind.HANGING)
        parts.extend(g.text for g in missing)
        gaps.extend(missing)
    recent: tuple[Gap, ...] = ()
    if verdict in (VerdictKind.HANGING, VerdictKind.STUCK) and check is not None:
        recent = settling_gaps(verdict is VerdictKind.HANGING, view, e, span, v, coord, check.quiescence, time_text)
    parts.extend(g.text for g in recent)
    gaps.extend(recent)
    if not gaps:
        return reason, ()
    tail = ([TORN_OR_LOST] if torn and verdict is VerdictKind.HANGING else []) + ([TOO_RECENT_ADVICE] if recent else [])
    head = reason if reason.startswith("not proven: ") else f"not proven: {reason}"
    return f"{head}; but {'; '.join(parts)}" + "".join(f"; {t}" for t in tail), tuple(gaps)


def _overdue(verdict: VerdictKind, v: TransactionIdView | None, as_of: int | None) -> int | None:
    """How long an Ongoing transaction is past its own timeout, when that is more than the grace."""
    m = v.metadata if v is not None else None
    if verdict is not VerdictKind.ONGOING or m is None or as_of is None or m.start_ms < 0:
        return None
    late = as_of - (m.start_ms + m.timeout_ms)
    return late if late > OVERDUE_GRACE_MS else None


def _overdue_reason(view: PartitionView, m: TransactionMetadata, time_text: TimeText) -> str:
    return (f"Ongoing with {view.topic_partition} in its set since {time_text(m.start_ms)}, past its own timeout "
            f"({m.timeout_ms} ms) since {time_text(m.start_ms + m.timeout_ms)}: the coordinator should have aborted "
            "it, yet its records still hold it Ongoing, so no marker is proven missing")


def _snapshot_only(view: PartitionView) -> list[tuple[ProducerState, int, str]]:
    """Open transactions the newest producer snapshot shows that the log read no longer does (its data
    damaged, cut or missing) and that no marker seen closes: (entry, first offset, snapshot path). The
    snapshot is the broker's own record of what holds the LSO, so such a transaction stays a row."""
    snaps = [s for s in view.inputs.snapshots if s.snapshot is not None]
    if not snaps:
        return []
    newest = max(snaps, key=lambda s: s.offset)
    assert newest.snapshot is not None  # snaps: those that decoded only
    out = []
    for s in newest.snapshot.entries:
        first = s.current_txn_first_offset
        if first is None or s.producer_id in view.open_transactions:
            continue
        if any(t.first_offset == first and not t.is_open for t in view.history.spans.get(s.producer_id, ())):
            continue
        b = s.batch_metadata
        entry = ProducerState(s.producer_id, s.producer_epoch, s.coordinator_epoch, b.last_seq if b else -1,
                              b.last_offset if b else -1, b.offset_delta if b else 0, s.last_timestamp, first)
        out.append((entry, first, newest.path))
    return out


def _lost_from_log(view: PartitionView, coord: CoordinatorView | None, check: EvidenceCheck | None,
                   time_text: TimeText = str) -> list[tuple[ProducerState, int, VerdictKind, str, TransactionIdView | None, tuple[Gap, ...]]]:
    """(entry, first offset, verdict, reason, id view, gaps) of the snapshot-only open transactions:
    unverifiable whatever the coordinator says, since the records that would decide are gone."""
    out = []
    for entry, first, path in _snapshot_only(view):
        _, said, v = _classify(view, entry, coord, time_text)
        gaps = check.data(view, None) if check is not None else ()
        damage = f"; {describe(str(view.topic_partition), gaps)}" if gaps else ""
        reason = (f"open since offset {first} in the producer snapshot {path.rsplit('/', 1)[-1]}, but the log read "
                  f"does not show it{damage}: what holds the LSO there cannot be read; the coordinator: {said}")
        out.append((entry, first, VerdictKind.UNVERIFIABLE, reason, v, tuple(gaps)))
    return out


def _history_only(view: PartitionView, coord: CoordinatorView | None, time_text: TimeText = str
                  ) -> list[tuple[ProducerState, int, VerdictKind, str, TransactionIdView | None, tuple[Gap, ...]]]:
    """Open transactions the full history of the segments shows that the state the broker loads (the
    snapshot plus the replay) does not: the readings contradict each other, so the transaction stays a row,
    unverifiable whatever the coordinator says."""
    out: list[tuple[ProducerState, int, VerdictKind, str, TransactionIdView | None, tuple[Gap, ...]]] = []
    shown = set(view.open_transactions) | {e.producer_id for e, _, _ in _snapshot_only(view)}
    witness = view.witness  # an older snapshot + replay: the producers whose batches are gone from the log
    seen = [(pid, first, view.history) for pid, first in view.history.ongoing.items()] + (
        [(pid, first, witness) for pid, first in witness.ongoing.items() if pid not in view.history.entries]
        if witness is not None else [])
    for pid, first, fold in seen:
        if pid in shown:
            continue
        entry = fold.entries[pid]
        _, said, v = _classify(view, entry, coord, time_text)
        gap = fold_disagreement(view, pid)
        gaps: tuple[Gap, ...] = (gap,) if gap is not None else ()
        where = ("the full history of the segments" if fold is view.history else
                 f"the older producer snapshot {view.witness_snapshot} plus the replay")
        reason = (f"open since offset {first} in {where}, but not in the state the broker "
                  f"loads: {gap.text if gap is not None else 'the readings disagree'}; the coordinator: {said}")
        out.append((entry, first, VerdictKind.UNVERIFIABLE, reason, v, gaps))
    return out


def classify_partition(view: PartitionView, coord: CoordinatorView | None, as_of: int | None,
                       max_timeout_ms: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
                       replicas: Sequence[PartitionView] = (), check: EvidenceCheck | None = None,
                       time_text: TimeText = str) -> list[Verdict]:
    out = []
    others = other_producers_disagreement(view) if view.open_transactions else ()
    for pid, start in view.open_transactions.items():
        e = view.entries[pid]
        span = view.open_span(pid)
        verdict, reason, v = _classify(view, e, coord, time_text)
        patterns: list[str] = []
        gaps: tuple[Gap, ...] = ()
        if verdict is VerdictKind.HANGING:
            lost = _lost_marker(view, replicas, pid, start)
            patterns = [p for p in (_kafka_9144(view, pid, start, _data_epoch(e, span)), lost or _kafka_7408(view, start, replicas))
                        if p]
            reason = reason + "".join(f"; {p}" for p in patterns)
        reason, gaps = _unproven(verdict, reason, view, e, span, v, coord, check, time_text, replicas, others)
        if gaps:
            verdict = VerdictKind.UNVERIFIABLE
        overdue = _overdue(verdict, v, as_of)
        if overdue is not None and v is not None and v.metadata is not None:
            verdict, reason = VerdictKind.OVERDUE, _overdue_reason(view, v.metadata, time_text)
        duration = as_of - e.last_timestamp if as_of is not None and e.last_timestamp >= 0 else None
        past = duration is not None and duration > max_timeout_ms
        out.append(Verdict(view, e, start, span, verdict, reason, v.transactional_id if v else None, v,
                           duration, past, tuple(patterns), gaps, overdue,
                           v.decision if v is not None else None))
    for e, start, verdict, reason, v, gaps in (_lost_from_log(view, coord, check, time_text)
                                               + _history_only(view, coord, time_text)):
        duration = as_of - e.last_timestamp if as_of is not None and e.last_timestamp >= 0 else None
        out.append(Verdict(view, e, start, None, verdict, reason, v.transactional_id if v else None, v, duration,
                           duration is not None and duration > max_timeout_ms, (), gaps, None,
                           v.decision if v is not None else None))
    return out


def classify(views: Sequence[PartitionView], coord: CoordinatorView | None, as_of: int | None,
             max_timeout_ms: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
             replicas: dict[TopicPartition, list[PartitionView]] | None = None,
             check: EvidenceCheck | None = None, time_text: TimeText = str) -> list[Verdict]:
    """Verdicts for the open transactions of ``views`` (one replica per partition: the leader's);
    ``replicas`` (all replicas by partition) lets a marker found on another replica explain a hang;
    ``check`` names the gaps in the evidence that keep a hang from being proven; ``time_text`` writes
    the times the reasons name (default: the epoch milliseconds)."""
    out: list[Verdict] = []
    for view in views:
        others = (replicas or {}).get(view.topic_partition, ())
        out.extend(classify_partition(view, coord, as_of, max_timeout_ms, others, check, time_text))
    return out


def evidence_of(v: Verdict) -> dict:
    """Files, byte positions, offsets and coordinator records behind a verdict (plain data)."""
    def at(p: Provenance | None) -> dict | None:
        return {"path": p.path, "position": p.position} if p is not None else None

    ev: dict = {"partitionDir": v.view.inputs.path, "brokerId": v.view.inputs.broker_id,
                "firstBatch": at(v.span.start) if v.span else None,
                "snapshot": v.view.snapshot_used.path if v.view.snapshot_used else None,
                "logStartOffset": v.view.log_start_offset, "highWatermark": v.view.high_watermark,
                "lastStableOffset": v.view.last_stable_offset,
                "openTransaction": None if v.span is None else {
                    "firstOffset": v.span.first_offset, "lastDataOffset": v.span.last_data_offset,
                    "batches": v.span.batches, "records": v.span.records, "bytes": v.span.bytes,
                    "epochs": list(v.span.data_epochs), "fromSnapshot": v.span.from_snapshot}}
    if v.id_view is not None:
        last = v.id_view.last
        ev["coordinatorRecord"] = {"partition": v.id_view.partition, "offset": last.offset,
                                   "state": last.state_name, "timestamp": last.timestamp,
                                   "path": last.at.path, "position": last.at.position}
    if v.gaps:
        ev["gaps"] = [g._asdict() for g in v.gaps]
    return ev
