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

from forensics.dataclass_fast import dataclass
from collections.abc import Sequence

from forensics.analysis.contradictions import (contradictions, fold_disagreement, other_producers_disagreement,
                                              replica_disagreement, replica_epoch_disagreement)
from forensics.analysis import reasons as r
from forensics.analysis.advice import Advice
from forensics.analysis.coordinator import CoordinatorView, TransactionIdView
from forensics.analysis.evidence_gaps import EvidenceCheck, log_damage
from forensics.analysis.gap_facts import DamageMeans, Gap, NotBrokersOwn, Part
from forensics.analysis.producers import PartitionView
from forensics.analysis.replicas import markers_elsewhere
from forensics.analysis.settling import settling_gaps
from forensics.analysis.verdict_kinds import Arming, VerdictKind
from forensics.codec.txnlog import TransactionStatus as S
from forensics.model import TopicPartition
from forensics.state.coordinator import Decision, RecordRef, TransactionMetadata
from forensics.state.producer import ProducerState, TransactionSpan

DEFAULT_MAX_TRANSACTION_TIMEOUT_MS = 15 * 60_000
OVERDUE_GRACE_MS = 60_000  # the coordinator aborts timed-out transactions every 10 s by default


@dataclass(frozen=True, slots=True)
class Verdict:
    """One open transaction and what the coordinators say about it."""

    view: PartitionView
    entry: ProducerState
    start_offset: int
    span: TransactionSpan | None
    verdict: VerdictKind
    reason: r.Reason  # written out by forensics.render.reasons
    transactional_id: str | None
    id_view: TransactionIdView | None
    duration_ms: int | None  # as-of minus the entry's lastTimestamp
    past_age_gate: bool
    patterns: tuple[r.Pattern, ...] = ()  # KAFKA-9144, KAFKA-7408, ...
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
    def advice(self) -> tuple[Advice, ...]:
        """Operator guidance as facts (:mod:`forensics.analysis.advice`, as the kind names it; its words:
        :mod:`forensics.render.advice_text`); ``()`` when none."""
        return self.verdict.advice(self)

    @property
    def coordinator_partition(self) -> int | None:
        return self.id_view.partition if self.id_view is not None else None


def _kafka_9144(view: PartitionView, pid: int, start: int, epoch: int) -> r.Kafka9144 | None:
    """A marker at a higher epoch before this transaction's data: the partition had forgotten the
    fencing epoch (early producer-state expiry) and accepted a zombie's write."""
    for s in view.history.spans.get(pid, ()):
        if s.marker_offset is not None and s.marker_offset < start and s.marker_epoch is not None \
                and s.marker_epoch > epoch:
            return r.Kafka9144(s.outcome, s.marker_offset, s.marker_epoch, start, epoch)
    return None


def _data_epoch(e: ProducerState, span: TransactionSpan | None) -> int:
    """The epoch of the open transaction's own data (its first batch's), else the entry's."""
    return span.data_epochs[0] if span is not None and span.data_epochs else e.producer_epoch


def _kafka_7408(view: PartitionView, start: int, replicas: Sequence[PartitionView]) -> r.LeaderChange | None:
    """A leader change after the transaction's first offset, on a partition with other replicas: a marker
    may have been lost by truncation. Not where nothing shows another replica (a single node's restart
    bumps the leader epoch too, with no truncation), nor at the log start (DeleteRecords and retention
    rewrite the checkpoint's first entry there: ``LeaderEpochFileCache.truncateFromStart``)."""
    if not any(r.inputs.path != view.inputs.path for r in replicas):
        return None
    later = [e for e in view.inputs.leader_epochs if e.start_offset > start and e.start_offset != view.log_start_offset]
    if later:
        return r.LeaderChange(later[0].epoch, later[0].start_offset)
    return None


def _missing_partitions(coord: CoordinatorView) -> list[int]:
    return [p for p in range(coord.partition_count) if p not in coord.partitions]


def _fenced(view: PartitionView, e: ProducerState, v: TransactionIdView) -> r.Fenced | None:
    """The partition's entry holds a coordinator epoch above the coordinator's own: the real
    coordinator's markers are refused here (``ProducerAppendInfo.checkCoordinatorEpoch``)."""
    if v.coordinator_epoch < 0 or e.coordinator_epoch <= v.coordinator_epoch:
        return None
    marker = next((s for s in reversed(view.history.spans.get(e.producer_id, ()))
                   if s.coordinator_epoch == e.coordinator_epoch and s.marker_offset is not None), None)
    return r.Fenced(view.topic_partition, e.coordinator_epoch, e.producer_id, marker.outcome if marker else None,
                    marker.marker_offset if marker else None, v.coordinator_epoch, v.partition, v.coordinator)


def _classify_with_id(view: PartitionView, e: ProducerState, v: TransactionIdView) -> tuple[VerdictKind, r.Classified]:
    m = v.metadata
    tp = view.topic_partition
    fenced = _fenced(view, e, v)
    if fenced is not None:
        return VerdictKind.FENCED, fenced
    if m is None:
        t = v.tombstone
        return VerdictKind.HANGING, r.IdExpired(v.transactional_id, t.offset if t else None, v.partition)
    if m.producer_id != e.producer_id:
        return VerdictKind.HANGING, r.ProducerIdRotated(v.transactional_id, m.producer_id, m.producer_epoch)
    state = m.state
    if state in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        return VerdictKind.HANGING, r.NothingInFlight(v.transactional_id, m.state_name, m.producer_epoch)
    if tp not in m.partitions:
        return VerdictKind.HANGING, r.NotInPartitionSet(tp, v.transactional_id, m.state_name, tuple(m.partitions))
    if state == S.ONGOING:
        if m.producer_epoch < e.producer_epoch:
            return VerdictKind.STUCK, r.OngoingBelowEpoch(m.producer_epoch, e.producer_epoch)
        return VerdictKind.ONGOING, r.Ongoing(tp, m.start_ms, m.timeout_ms)
    if state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        return VerdictKind.STUCK, r.Prepared(m.state_name, tp, state == S.PREPARE_COMMIT)
    return VerdictKind.HANGING, r.InState(v.transactional_id, m.state_name)


def _classify(view: PartitionView, e: ProducerState, coord: CoordinatorView | None
              ) -> tuple[VerdictKind, r.Classified, TransactionIdView | None]:
    pid = e.producer_id
    if coord is None or not coord.partitions:
        return VerdictKind.UNVERIFIABLE, r.NoCoordinator(), None
    current = coord.ids_for_producer(pid) or coord.ever_used_producer(pid)
    if current:
        v = current[0]
        verdict, reason = _classify_with_id(view, e, v)
        return verdict, reason, v
    missing = _missing_partitions(coord)
    if missing:
        return VerdictKind.UNVERIFIABLE, r.CoordinatorPartitionsMissing(pid, tuple(missing)), None
    if not coord.count_source:
        return VerdictKind.UNVERIFIABLE, r.PartitionCountUnknown(pid, coord.partition_count), None
    return VerdictKind.HANGING, r.NoCoordinatorRecord(pid), None


def _lost_marker(view: PartitionView, replicas: Sequence[PartitionView], pid: int, start: int
                 ) -> r.MarkerElsewhere | None:
    found = markers_elsewhere(replicas, view, pid, start)
    if not found:
        return None
    m = found[0]
    return r.MarkerElsewhere(m.broker_id, m.outcome, m.offset, m.epoch, m.coordinator_epoch, m.path, m.position)


def _unproven(verdict: VerdictKind, reason: r.Classified | r.Patterned, view: PartitionView, e: ProducerState,
              span: TransactionSpan | None, v: TransactionIdView | None, coord: CoordinatorView | None,
              check: EvidenceCheck | None, replicas: Sequence[PartitionView] = (),
              others: Sequence[tuple[int | None, Gap]] = ()) -> tuple[r.Reason, tuple[Gap, ...]]:
    """``reason`` and the gaps that keep a verdict from being proven, or ``()``: records that contradict
    each other, damaged or incomplete records (any verdict: "ongoing" needs no one only when the records
    saying so are whole); files copied too soon after what would have changed them (hanging, stuck).
    ``others``: :func:`other_producers_disagreement` of the partition."""
    found = [replica_disagreement(view, replicas, e.producer_id), replica_epoch_disagreement(view, replicas),
             next((g for pid, g in others if pid != e.producer_id), None)]
    if check is not None:
        found += [check.repeated_batch(view, e.producer_id, span), check.epoch_contradiction(view)]
    gaps: list[Gap] = list(contradictions(view, e.producer_id, span, v)) + [g for g in found if g is not None]
    parts: list[Part] = list(gaps)
    torn: list[Gap] = []  # damaged or incomplete records
    if check is not None:
        data = check.data(view, span)
        if verdict is not VerdictKind.HANGING:  # what it rests on: the log and what its checkpoints say (an index is rebuilt)
            data = tuple(g for g in data if g.log_end is not None or g.path.endswith(".log"))
        if data:
            parts.append(log_damage(str(view.topic_partition), data, DamageMeans.MARKER_MAY_BE_MISSING
                                    if verdict is VerdictKind.HANGING else DamageMeans.COPY_MAY_NOT_HOLD))
            torn.extend(data)
        if verdict is VerdictKind.HANGING or v is not None:
            wanted = None if v is None else sorted({v.partition, v.expected_partition})
            contradicting = check.coordinator_epoch_contradictions(wanted)
            parts.extend(NotBrokersOwn(g) for g in contradicting)
            gaps.extend(contradicting)
            for label, missing in check.coordinator(wanted):
                parts.append(log_damage(label, missing, DamageMeans.ID_RECORD_MAY_BE_MISSING if v is not None
                                        else DamageMeans.PRODUCER_RECORD_MAY_BE_MISSING))
                torn.extend(missing)
    gaps.extend(torn)
    if check is not None:
        foreign = check.misplaced(v) if v is not None or verdict is VerdictKind.HANGING else ()
        parts.extend(foreign)
        gaps.extend(foreign)
    if verdict in (VerdictKind.HANGING, VerdictKind.STUCK, VerdictKind.FENCED) and check is not None:
        missing = check.copies_missing(view.topic_partition, v if verdict is not VerdictKind.FENCED else None, verdict is VerdictKind.HANGING)
        parts.extend(missing)
        gaps.extend(missing)
    recent: tuple[Gap, ...] = ()
    if verdict in (VerdictKind.HANGING, VerdictKind.STUCK) and check is not None:
        recent = settling_gaps(verdict is VerdictKind.HANGING, view, e, span, v, coord, check.quiescence)
    parts.extend(recent)
    gaps.extend(recent)
    if not gaps:
        return reason, ()
    return r.Unproven(reason, tuple(parts), bool(torn) and verdict is VerdictKind.HANGING, bool(recent)), tuple(gaps)


def _overdue(verdict: VerdictKind, v: TransactionIdView | None, as_of: int | None) -> int | None:
    """How long an Ongoing transaction is past its own timeout, when that is more than the grace."""
    m = v.metadata if v is not None else None
    if verdict is not VerdictKind.ONGOING or m is None or as_of is None or m.start_ms < 0:
        return None
    late = as_of - (m.start_ms + m.timeout_ms)
    return late if late > OVERDUE_GRACE_MS else None


def _overdue_reason(view: PartitionView, m: TransactionMetadata) -> r.Overdue:
    return r.Overdue(view.topic_partition, m.start_ms, m.timeout_ms)


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


_Unread = tuple[ProducerState, int, VerdictKind, r.Reason, TransactionIdView | None, tuple[Gap, ...]]


def _lost_from_log(view: PartitionView, coord: CoordinatorView | None, check: EvidenceCheck | None) -> list[_Unread]:
    """(entry, first offset, verdict, reason, id view, gaps) of the snapshot-only open transactions:
    unverifiable whatever the coordinator says, since the records that would decide are gone."""
    out: list[_Unread] = []
    for entry, first, path in _snapshot_only(view):
        _, said, v = _classify(view, entry, coord)
        gaps = check.data(view, None) if check is not None else ()
        damage = log_damage(str(view.topic_partition), gaps) if gaps else None
        reason = r.SnapshotOnly(first, path.rsplit("/", 1)[-1], damage, said)
        out.append((entry, first, VerdictKind.UNVERIFIABLE, reason, v, tuple(gaps)))
    return out


def _history_only(view: PartitionView, coord: CoordinatorView | None) -> list[_Unread]:
    """Open transactions the full history of the segments shows that the state the broker loads (the
    snapshot plus the replay) does not: the readings contradict each other, so the transaction stays a row,
    unverifiable whatever the coordinator says."""
    out: list[_Unread] = []
    shown = set(view.open_transactions) | {e.producer_id for e, _, _ in _snapshot_only(view)}
    witness = view.witness  # an older snapshot + replay: the producers whose batches are gone from the log
    seen = [(pid, first, view.history) for pid, first in view.history.ongoing.items()] + (
        [(pid, first, witness) for pid, first in witness.ongoing.items() if pid not in view.history.entries]
        if witness is not None else [])
    for pid, first, fold in seen:
        if pid in shown:
            continue
        entry = fold.entries[pid]
        _, said, v = _classify(view, entry, coord)
        gap = fold_disagreement(view, pid)
        gaps: tuple[Gap, ...] = (gap,) if gap is not None else ()
        reason = r.HistoryOnly(first, None if fold is view.history else str(view.witness_snapshot),
                               gap, said)
        out.append((entry, first, VerdictKind.UNVERIFIABLE, reason, v, gaps))
    return out


def classify_partition(view: PartitionView, coord: CoordinatorView | None, as_of: int | None,
                       max_timeout_ms: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
                       replicas: Sequence[PartitionView] = (), check: EvidenceCheck | None = None) -> list[Verdict]:
    out = []
    others = other_producers_disagreement(view) if view.open_transactions else ()
    for pid, start in view.open_transactions.items():
        e = view.entries[pid]
        span = view.open_span(pid)
        verdict, said, v = _classify(view, e, coord)
        patterns: list[r.Pattern] = []
        gaps: tuple[Gap, ...] = ()
        head: r.Classified | r.Patterned = said
        if verdict is VerdictKind.HANGING:
            lost = _lost_marker(view, replicas, pid, start)
            patterns = [p for p in (_kafka_9144(view, pid, start, _data_epoch(e, span)), lost or _kafka_7408(view, start, replicas))
                        if p]
            head = r.Patterned(said, tuple(patterns)) if patterns else said
        reason, gaps = _unproven(verdict, head, view, e, span, v, coord, check, replicas, others)
        if gaps:
            verdict = VerdictKind.UNVERIFIABLE
        overdue = _overdue(verdict, v, as_of)
        if overdue is not None and v is not None and v.metadata is not None:
            verdict, reason = VerdictKind.OVERDUE, _overdue_reason(view, v.metadata)
        duration = as_of - e.last_timestamp if as_of is not None and e.last_timestamp >= 0 else None
        past = duration is not None and duration > max_timeout_ms
        out.append(Verdict(view, e, start, span, verdict, reason, v.transactional_id if v else None, v,
                           duration, past, tuple(patterns), gaps, overdue,
                           v.decision if v is not None else None))
    for e, start, verdict, reason, v, gaps in _lost_from_log(view, coord, check) + _history_only(view, coord):
        duration = as_of - e.last_timestamp if as_of is not None and e.last_timestamp >= 0 else None
        out.append(Verdict(view, e, start, None, verdict, reason, v.transactional_id if v else None, v, duration,
                           duration is not None and duration > max_timeout_ms, (), gaps, None,
                           v.decision if v is not None else None))
    return out


def classify(views: Sequence[PartitionView], coord: CoordinatorView | None, as_of: int | None,
             max_timeout_ms: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
             replicas: dict[TopicPartition, list[PartitionView]] | None = None,
             check: EvidenceCheck | None = None) -> list[Verdict]:
    """Verdicts for the open transactions of ``views`` (one replica per partition: the leader's);
    ``replicas`` (all replicas by partition) lets a marker found on another replica explain a hang;
    ``check`` names the gaps in the evidence that keep a hang from being proven."""
    out: list[Verdict] = []
    for view in views:
        others = (replicas or {}).get(view.topic_partition, ())
        out.extend(classify_partition(view, coord, as_of, max_timeout_ms, others, check))
    return out


@dataclass(frozen=True, slots=True)
class VerdictEvidence:
    """Files, byte positions, offsets and the coordinator record behind a verdict (a row's ``evidence``, as
    :func:`forensics.render.reasons.evidence_json` writes it)."""

    partition_dir: str
    broker_id: int | None
    span: TransactionSpan | None  # the open transaction: its first batch, offsets, sizes, epochs
    snapshot: str | None  # the producer snapshot the state was loaded from
    log_start_offset: int
    high_watermark: int
    last_stable_offset: int
    coordinator_partition: int | None  # the __transaction_state partition of the id, with its newest record
    coordinator_record: RecordRef | None
    gaps: tuple[Gap, ...]


def evidence_of(v: Verdict) -> VerdictEvidence:
    """What a verdict rests on, as data."""
    view = v.view
    return VerdictEvidence(view.inputs.path, view.inputs.broker_id, v.span,
                           view.snapshot_used.path if view.snapshot_used else None, view.log_start_offset,
                           view.high_watermark, view.last_stable_offset,
                           v.id_view.partition if v.id_view is not None else None,
                           v.id_view.last if v.id_view is not None else None, v.gaps)
