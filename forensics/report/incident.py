"""The incident report's model: what ``kafka-forensics report`` shows, as typed frozen data.

:func:`build_incident` is pure: a :class:`~forensics.report.state.StateReport`, the verdicts and
the as-of time in, an :class:`Incident` out. Everything that needs Kafka's rules is decided here
(which replica speaks for a partition, what pins the LSO, which transactions belong to a
transactional id, what a coordinator state means); :mod:`forensics.render.html_report` only lays
it out. Times stay epoch milliseconds. The pictures it feeds: **LSO lag** per partition (likely
leader's replica; ``lag_ms`` = newest batch timestamp minus the first timestamp of the transaction
holding the LSO, ``age_ms`` = as-of minus it) and a **timeline** per transactional id (its
coordinator records in one lane, beside one lane per partition with its transactions: first data
offset and time, marker offset, time and outcome, or open; also partitions the coordinator named
where it wrote nothing, or that are not among the inputs).
"""

from __future__ import annotations

from collections import Counter
from typing import Any
from collections.abc import Iterable, Sequence

from forensics import __version__
from forensics.analysis.clock import AsOf
from forensics.analysis.coordinator import TransactionIdView
from forensics.analysis.filters import Filters
from forensics.analysis.hanging import Verdict
from forensics.analysis.verdict_kinds import Arming
from forensics.analysis.producers import PartitionView
from forensics.findings import Finding, dedupe, level_counts, total
from forensics.model import TopicPartition
from forensics.report.hanging import (
    COMMAND_FORMS,
    leader_views,
    selected_replicas,
)
from forensics.report.incident_model import (
    ABORT,
    COMMIT,
    DEAD,
    HANGING,
    IDLE,
    OPEN,
    PREPARE,
    UNKNOWN,
    CommandLine,
    CoordinatorEvent,
    Field,
    FieldGroup,
    Incident,
    Lane,
    LsoLag,
    OpenTransaction,
    Selection,
    SpanEvent,
    Summary,
    Timeline,
)
from forensics.columns import ELSEWHERE, FACT
from forensics.report.incident_labels import FACTS, GROUP_LABELS, label
from forensics.report.rows import HangingRow
from forensics.report.scan import ScanReport, total_log_bytes, without_producer_state
from forensics.report.state import StateReport
from forensics.state.coordinator import HistoryEntry
from forensics.state.producer import TransactionSpan

_STATE_TONES = {"Empty": IDLE, "Ongoing": OPEN, "PrepareCommit": PREPARE, "PrepareAbort": PREPARE,
                "PrepareEpochFence": PREPARE, "CompleteCommit": COMMIT, "CompleteAbort": ABORT, "Dead": DEAD,
                "<tombstone>": DEAD}
MAX_TIMELINES = 100
MAX_SPANS_PER_LANE = 100  # closed transactions kept per lane (the newest); open ones are always kept
MAX_COORDINATOR_EVENTS = 200
MAX_FINDINGS = 500

def build_incident(report: StateReport, verdicts: Sequence[Verdict], as_of: AsOf, *, as_of_source: str, inputs: Sequence[str],
                   manifest: tuple[str, str] | None = None, scan: ScanReport | None = None,
                   rows: Sequence[HangingRow], max_timelines: int = MAX_TIMELINES,
                   max_findings: int = MAX_FINDINGS, brokers: str | None = None,
                   selection: Filters = Filters(), whole: Sequence[Verdict] = (),
                   warnings: Sequence[str] = ()) -> Incident:
    """The incident model. ``rows``: one row per verdict, in the verdicts' order (a
    :class:`~forensics.report.rows.HangingRow` as :func:`forensics.render.reasons.worded_row` builds it,
    its columns shown as declared);
    ``manifest``: (path, sha256) of the evidence manifest. ``selection`` (its topic, partition and broker
    id): only those partitions are shown (``verdicts`` are theirs), and what the rest holds is counted:
    ``whole`` are the verdicts of every partition, as without a selection; ``warnings``: what weakens every
    verdict, in words (:func:`forensics.render.evidence_text.evidence_lines`)."""
    if len(rows) != len(verdicts):
        raise ValueError(f"{len(rows)} rows for {len(verdicts)} verdicts")
    views = leader_views(report, selection.topic, selection.partition, selection.broker_id)
    replicas = selected_replicas(report, selection)
    findings = dedupe(report.findings(replicas if selection.narrows_partitions else None))
    transactions = sorted((_transaction(v, r) for v, r in zip(verdicts, rows, strict=True)),
                          key=lambda t: (not t.abortable, t.topic, t.partition, t.start_offset, t.producer_id))
    timelines, omitted, unrelated = _timelines(report, views, verdicts, max_timelines, selection)
    return Incident(
        __version__, tuple(inputs), manifest[0] if manifest else None, manifest[1] if manifest else None,
        as_of.time_ms, as_of_source, _summary(report, views, len(replicas), verdicts, findings, scan,
                                                 selection.narrows_partitions),
        _lso_lags(views, verdicts, as_of.time_ms), tuple(transactions), timelines, omitted,
        tuple(findings[:max_findings]), max(0, len(findings) - max_findings), tuple(warnings),
        as_of, brokers,
        _selection(report, views, verdicts, whole, total(findings), unrelated, selection)
        if selection.narrows_partitions
        else None)


# -- summary ----------------------------------------------------------------------------------------


def _counts(items: Iterable[str]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(Counter(items).items()))


def _needing_a_person(verdicts: Sequence[Verdict]) -> tuple[int, int, int]:
    """How many are proven hanging, unverifiable (armed only on request), and stuck, fenced or overdue."""
    unverifiable = [v.verdict.arming is Arming.ON_REQUEST for v in verdicts]
    return (sum(v.abortable for v in verdicts), sum(unverifiable),
            sum(v.needs_person and not u and not v.abortable for v, u in zip(verdicts, unverifiable, strict=True)))


def _summary(report: StateReport, views: Sequence[PartitionView], replicas: int, verdicts: Sequence[Verdict],
             findings: Sequence[Finding], scan: ScanReport | None, narrowed: bool = False) -> Summary:
    inv, coord = report.inventory, report.coordinator
    parts = [p for d in scan.log_dirs for p in d.partitions] if scan is not None else []
    hanging, unverifiable, attention = _needing_a_person(verdicts)
    return Summary(
        brokers=tuple(d.broker_id for d in inv.log_dirs), log_dirs=len(inv.log_dirs),
        topics=len({v.topic_partition.topic for v in views}), partitions=len(views),
        replicas=replicas, txn_state_partitions=len(coord.partitions),
        txn_state_partition_count=coord.partition_count, transactional_ids=len(coord.ids),
        open_transactions=len(verdicts), hanging=hanging, unverifiable=unverifiable, attention=attention,
        verdicts=_counts(v.verdict.value for v in verdicts), findings=total(findings),
        findings_by_severity=tuple(sorted(level_counts(findings).items())), log_bytes=total_log_bytes(inv),
        segments=sum(len(p.segments) for p in parts) if scan is not None else None,
        batches=sum(p.batches for p in parts) if scan is not None else None,
        records=sum(p.records for p in parts) if scan is not None else None,
        not_counted=() if narrowed else without_producer_state(inv))


def _judged(v: Verdict) -> tuple[TopicPartition, int | None, int, int]:
    """Which open transaction a verdict is on, on which broker's replica."""
    return v.view.topic_partition, v.view.inputs.broker_id, v.entry.producer_id, v.start_offset


def _selection(report: StateReport, views: Sequence[PartitionView], verdicts: Sequence[Verdict],
               whole: Sequence[Verdict], shown_findings: int, unrelated: int, selection: Filters) -> Selection:
    """What a selection leaves out: partitions, topics, the open transactions of the report of every
    partition (``whole``) that this one does not judge (on other partitions, or, with a broker id, on
    another broker's replica), the findings on the replicas left out, the transactional ids that never
    wrote to it."""
    shown = {v.topic_partition for v in views}
    left = {v.topic_partition for v in report.partitions} - shown
    judged = {_judged(v) for v in verdicts}
    others = [v for v in whole if _judged(v) not in judged]
    hanging, unverifiable, attention = _needing_a_person(others)
    return Selection(selection.topic, selection.partition, selection.broker_id, len(left),
                     len({tp.topic for tp in left} - {tp.topic for tp in shown}), len(others), hanging, unverifiable,
                     attention, max(0, total(dedupe(report.findings())) - shown_findings), unrelated)


# -- LSO lag ----------------------------------------------------------------------------------------


def _all_spans(view: PartitionView, pid: int) -> tuple[TransactionSpan, ...]:
    """The producer's transactions on this replica: the full history's, else the broker-equivalent
    fold's (a producer known only from a snapshot)."""
    return view.history.spans.get(pid, ()) or view.broker.spans.get(pid, ())


def pinning_span(view: PartitionView) -> TransactionSpan | None:
    """The transaction that holds the LSO back: the open (or not yet replicated) one with the lowest
    first offset, as ``UnifiedLog.lastStableOffset`` picks it."""
    if view.first_unstable_offset is None or view.first_unstable_offset >= view.high_watermark:
        return None
    candidates = [s for pid in view.open_transactions for s in (view.open_span(pid),) if s is not None]
    candidates += [s for spans in view.history.spans.values() for s in spans
                   if s.marker_offset is not None and s.marker_offset >= view.high_watermark]
    return min(candidates, key=lambda s: s.first_offset, default=None)


def _lso_lags(views: Sequence[PartitionView], verdicts: Sequence[Verdict], as_of: int | None
              ) -> tuple[LsoLag, ...]:
    open_txns = Counter(v.view.topic_partition for v in verdicts)
    hanging = {(v.view.topic_partition, v.entry.producer_id) for v in verdicts if v.abortable}
    return tuple(_lso_lag(view, hanging, as_of, open_txns[view.topic_partition]) for view in views)


def _lso_lag(view: PartitionView, hanging: set[tuple[TopicPartition, int]], as_of: int | None,
             open_txns: int) -> LsoLag:
    tp = view.topic_partition
    span = pinning_span(view)
    since = span.first_timestamp if span is not None else None
    lagging = view.high_watermark > view.last_stable_offset
    hangs = span is not None and (tp, span.producer_id) in hanging
    return LsoLag(
        tp.topic, tp.partition, view.inputs.broker_id, view.log_start_offset, view.last_stable_offset,
        view.high_watermark, view.high_watermark_known, view.log_end_offset,
        span.producer_id if span is not None else None, view.first_unstable_offset if span is not None else None,
        since, view.max_timestamp - since if since is not None and view.max_timestamp is not None else None,
        as_of - since if since is not None and as_of is not None else None,
        HANGING if hangs else OPEN if lagging else IDLE, open_txns)


# -- open transactions ------------------------------------------------------------------------------


def _field(path: str, value: Any) -> list[Field]:
    """One labelled field (forensics.report.incident_labels); none for a missing value that says nothing."""
    lab = label(path)
    if value is None and lab.skip_none:
        return []
    if isinstance(value, (list, tuple)):
        return [Field(path, tuple(value), lab.text, lab.kind, lab.empty)]
    kind = lab.kind if not isinstance(value, bool) else ""
    return [Field(path, value, lab.text, kind, lab.none)]


def flatten(value: Any, prefix: str = "") -> list[Field]:
    """A nested JSON-able value as labelled ``Field`` lines keyed by their dotted path; a list of
    scalars is one field, a list of records one group of fields per item (``gaps[0].text``)."""
    if isinstance(value, dict) and value:
        return [f for k, v in value.items() for f in flatten(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, (list, tuple)) and value and any(isinstance(v, (dict, list, tuple)) for v in value):
        return [f for i, v in enumerate(value) for f in flatten(v, f"{prefix}[{i}]")]
    return _field(prefix, None if isinstance(value, dict) else value)


def _commands(row: HangingRow) -> tuple[list[CommandLine], list[FieldGroup]]:
    """The abort forms and any other top-level ``...Args`` list of strings are the command lines;
    every other column that is not shown elsewhere on the card is an extra: a nested record its own
    group, the rest one group at the end, labelled; nothing is dropped (a column the label table does
    not know is humanised)."""
    commands, groups, loose = [], [], []
    forms = row.abort_forms or {}
    for key in sorted(forms, key=lambda k: k != row.active_form):  # the active form first, as the script
        commands.append(CommandLine(key, COMMAND_FORMS.get(key, key), tuple(forms[key])))
    for key, value in row.json_items():
        if label(key).place in (ELSEWHERE, FACT):
            continue
        if key.endswith("Args") and isinstance(value, (list, tuple)) and value and all(isinstance(a, str) for a in value):
            commands.append(CommandLine(key, COMMAND_FORMS.get(key, label(key).text), tuple(value)))
        elif isinstance(value, dict):
            groups.append(FieldGroup(key, GROUP_LABELS.get(key, label(key).text), tuple(flatten(value, key))))
        else:
            loose.extend(flatten(value, key))
    if loose:
        groups.append(FieldGroup("", GROUP_LABELS[""], tuple(loose)))
    return commands, groups


def _facts(row: HangingRow) -> tuple[Field, ...]:
    """The row's own facts, in the label table's order."""
    values = dict(row.json_items())
    return tuple(f for key in FACTS if key in values for f in _field(key, values[key]))


def _transaction(v: Verdict, row: HangingRow) -> OpenTransaction:
    tp, e = v.view.topic_partition, v.entry
    commands, extras = _commands(row)
    return OpenTransaction(
        tp.topic, tp.partition, v.view.inputs.broker_id, e.producer_id, e.producer_epoch,
        e.latest_coordinator_epoch, v.start_offset, v.transactional_id, v.verdict.label,
        row.reason, v.abortable, row.armed, row.not_armed_because, tuple(row.advice),
        e.last_timestamp if e.last_timestamp >= 0 else None, v.duration_ms, v.verdict.tone,
        tuple(flatten(row.evidence.as_json(), "evidence")), tuple(commands), tuple(extras), _facts(row),
        row.active_form if row.abort_forms else None)


# -- timelines --------------------------------------------------------------------------------------


def _producer_ids(v: TransactionIdView) -> tuple[int, ...]:
    pids = {h.value.producer_id for h in v.history if h.value is not None}
    m = v.metadata
    if m is not None:
        pids.update(p for p in (m.producer_id, m.previous_producer_id, m.next_producer_id) if p >= 0)
    return tuple(sorted(p for p in pids if p >= 0))


def _named(h: HistoryEntry) -> tuple[str, ...]:
    """The partitions (``topic-N``) a coordinator record names."""
    v = h.value
    return tuple(f"{t.topic}-{p}" for t in (v.partitions or ()) for p in t.partition_ids) if v is not None else ()


def _coordinator_event(h: HistoryEntry) -> CoordinatorEvent:
    v = h.value
    parts = _named(h)
    return CoordinatorEvent(h.timestamp, h.offset, h.state_name, _STATE_TONES.get(h.state_name, UNKNOWN),
                            v.producer_id if v is not None else None, v.producer_epoch if v is not None else None,
                            h.leader_epoch, parts)


def _span_event(s: TransactionSpan, verdict: Verdict | None) -> SpanEvent:
    tone = ((COMMIT if s.outcome == "COMMIT" else ABORT) if s.outcome is not None
            else verdict.verdict.tone if verdict is not None else OPEN)
    return SpanEvent(s.producer_id, s.first_offset, s.last_data_offset, s.first_timestamp, s.last_timestamp,
                     s.marker_offset, s.marker_timestamp, s.outcome, s.data_epochs,
                     verdict.verdict.label if verdict is not None and s.is_open else None, tone)


def _lane(view: PartitionView, pids: Sequence[int], open_verdicts: dict[tuple[str, int], Verdict]) -> Lane:
    spans = sorted((s for pid in pids for s in _all_spans(view, pid)), key=lambda s: (s.first_offset, s.producer_id))
    closed = [i for i, s in enumerate(spans) if not s.is_open]
    keep = set(closed[-MAX_SPANS_PER_LANE:]) | {i for i, s in enumerate(spans) if s.is_open}
    name = str(view.topic_partition)
    events = tuple(_span_event(s, open_verdicts.get((name, s.producer_id)) if s.is_open else None)
                   for i, s in enumerate(spans) if i in keep)
    return Lane(name, view.inputs.broker_id, True, events, len(spans) - len(events))


def _time_range(coordinator: Sequence[CoordinatorEvent], lanes: Sequence[Lane]) -> tuple[int | None, int | None]:
    times = [c.time_ms for c in coordinator if c.time_ms >= 0]
    times += [t for lane in lanes for s in lane.spans for t in (s.first_time_ms, s.last_time_ms, s.marker_time_ms)
              if t is not None and t >= 0]
    return (min(times), max(times)) if times else (None, None)


def _timeline(title: str, id_view: TransactionIdView | None, pids: tuple[int, ...],
              views: Sequence[PartitionView], verdicts: Sequence[Verdict], lanes_of: _Lanes) -> Timeline:
    open_verdicts = {(str(v.view.topic_partition), v.entry.producer_id): v for v in verdicts}
    history = tuple(_coordinator_event(h) for h in (id_view.history if id_view is not None else ()))
    named = {p for c in history for p in c.partitions}
    lanes = [lane for lane in (_lane(v, pids, open_verdicts) for v in views) if lane.spans or lane.name in named]
    lanes += [Lane(name, None, False, ()) for name in sorted(lanes_of.absent(named))]
    coordinator = history[-MAX_COORDINATOR_EVENTS:]
    start, end = _time_range(coordinator, lanes)
    hangs = any(v.abortable and v.entry.producer_id in pids for v in verdicts)
    return Timeline(title, id_view.transactional_id if id_view is not None else None, pids,
                    id_view.partition if id_view is not None else None, id_view.state_name if id_view else "",
                    coordinator, tuple(lanes), start, end, hangs, len(history) - len(coordinator))


class _Lanes:
    """Which partitions a timeline draws a lane for: those of ``views`` (the selection's), and those a
    coordinator record names that are not among the inputs at all (and fall in the selection)."""

    def __init__(self, report: StateReport, views: Sequence[PartitionView], selection: Filters) -> None:
        self.inputs = {str(v.topic_partition) for v in report.partitions}
        self.shown = {str(v.topic_partition) for v in views}
        self.topic_partition = Filters(selection.topic, selection.partition)  # an absent partition has no broker
        self.pids = {pid for v in views for pid in {*v.history.spans, *v.broker.spans} if _all_spans(v, pid)}

    def absent(self, named: Iterable[str]) -> set[str]:
        """The partitions of ``named`` not among the inputs, in the selection."""
        out = set()
        for name in named:
            topic, _, number = name.rpartition("-")
            if name not in self.inputs and self.topic_partition.selects(topic, int(number), None):
                out.add(name)
        return out

    def any_lane(self, id_view: TransactionIdView) -> bool:
        """Whether the id's timeline draws a lane: a transaction of its producer ids on a partition shown,
        or a coordinator record naming one (or one in the selection not among the inputs)."""
        named = {n for h in id_view.history for n in _named(h)}
        return bool(self.pids.intersection(_producer_ids(id_view)) or named & self.shown or self.absent(named))


def _timelines(report: StateReport, views: Sequence[PartitionView], verdicts: Sequence[Verdict],
               limit: int, selection: Filters = Filters()) -> tuple[tuple[Timeline, ...], int, int]:
    """One per transactional id, and one per producer id of an open transaction that no coordinator
    record names. Those with an abortable transaction come first, then those with any open one, then
    the rest, each by name; only the first ``limit`` are built. With a ``selection``, only those with a
    lane in it (the others counted: the third number)."""
    lanes_of = _Lanes(report, views, selection)
    ids = report.coordinator.ids
    rank: dict[tuple[str, Any], int] = {}
    for v in verdicts:
        key = ("id", v.transactional_id) if v.transactional_id in ids else ("pid", v.entry.producer_id)
        rank[key] = min(rank.get(key, 1), 0 if v.abortable else 1)
    keys = [("id", tid) for tid in ids
            if not selection.narrows_partitions or ("id", tid) in rank or lanes_of.any_lane(ids[tid])]
    unrelated = len(ids) - len(keys)
    keys += [k for k in rank if k[0] == "pid"]
    keys.sort(key=lambda k: (rank.get(k, 2), k[0] == "id", str(k[1]) if k[0] == "id" else f"{k[1]:020d}"))

    def make(key: tuple[str, Any]) -> Timeline:
        if key[0] == "id":
            return _timeline(key[1], ids[key[1]], _producer_ids(ids[key[1]]), views, verdicts, lanes_of)
        return _timeline(f"producer id {key[1]}", None, (key[1],), views, verdicts, lanes_of)

    return tuple(make(k) for k in keys[:limit]), max(0, len(keys) - limit), unrelated
