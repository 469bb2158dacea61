"""Offline ``describe-producers``, ``list`` and ``describe``: rows shaped like ``kafka-transactions.sh``.

:func:`assemble_state` turns what the executor read (for the plan of :func:`state_scope`) into a
:class:`StateReport` (the run, :func:`forensics.runs.rebuild.load_state`, reads); the ``*_rows``
functions turn that into row dicts whose keys are the lowerCamelCase column names (JSON as is; the
table and CSV renderers print them in column order).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from forensics.dataclass_fast import dataclass
from typing import TypedDict
from re import Pattern
from collections.abc import Callable, Iterable, Mapping, Sequence

from forensics.analysis.clock import AsOf, RecordTime, TimeKind, incident_clock, newest_per_file
from forensics.analysis.coordinator import (
    CoordinatorView,
    FoldedReplica,
    TransactionIdView,
    fold_replica,
    rebuild_coordinator,
    stored_ids,
)
from forensics.analysis.filters import Filters
from forensics.analysis.producers import PartitionView, rebuild_partition
from forensics.analysis.replicas import compare_replicas, replica_rank
from forensics.codec.txnlog import transaction_partition_for
from forensics.columns import ABSENT
from forensics.errors import InputError
from forensics.findings import (
    EVIDENCE_KINDS,
    Finding,
    FindingKind,
    Severity,
    dedupe,
    not_kafka_segment,
)
from forensics.layout import Inventory, LogDir, PartitionDir
from forensics.layout.evidence import input_file_times
from forensics.model import CLUSTER_METADATA_TOPIC
from forensics.pipeline.assemble import (
    EMPTY_RESULT,
    is_txn_state,
    live_partitions,
    partition_inputs,
    txn_state_inputs,
)
from forensics.pipeline.export_rows import PartitionRow
from forensics.pipeline.merge import ReplicaResult
from forensics.pipeline.plan import Scope
from forensics.report.rows import DescribeRow, HistoryRow, ProducerRow, SpanRow, TransactionRow
from forensics.state.coordinator import HistoryEntry, KeepHistory
from forensics.state.inputs import SegmentSummary, TxnStateInputs
from forensics.state.producer import TransactionSpan

DEFAULT_TXN_STATE_PARTITIONS = 50  # transaction.state.log.num.partitions


@dataclass(frozen=True, slots=True)
class StateReport:
    inventory: Inventory
    partitions: tuple[PartitionView, ...]
    coordinator: CoordinatorView
    notes: tuple[Finding, ...] = ()  # about the inputs as a whole (e.g. single files the state ignores)
    metadata: tuple[SegmentSummary, ...] = ()  # newest __cluster_metadata segment of each replica (the clock)

    def findings(self, partitions: Sequence[PartitionView] | None = None) -> list[Finding]:
        """Every finding; ``partitions``: only those data partition replicas' (and their comparison), with
        every finding that is not about a data partition (inputs, log dirs, coordinators)."""
        chosen = self.partitions if partitions is None else partitions
        out = list(self.inventory.findings) + list(self.notes)
        for d in self.inventory.log_dirs:
            out.extend(d.findings)
        for p in chosen:
            out.extend(p.findings)
        out.extend(self.coordinator.findings)
        out.extend(compare_replicas(chosen))
        return out

    def with_evidence(self, findings: Iterable[Finding]) -> list[Finding]:
        """:meth:`evidence_findings`, then ``findings`` (a command's own), each once."""
        return without_whole_file_regions(dedupe(self.evidence_findings() + list(findings)))

    def evidence_findings(self) -> list[Finding]:
        """What every command must show about the evidence it read, once each (see
        :data:`~forensics.findings.EVIDENCE_KINDS`): inputs that are not Kafka or cannot be read (the
        gap they leave), disks claiming one broker id, damaged bytes, a ``__transaction_state``
        partition count that does not fit the disk. Partitions the command did not read (``list``
        reads no data partition) are left to ``scan``."""
        out: list[Finding] = list(self.notes) + list(self.inventory.findings)
        for d in self.inventory.log_dirs:
            out.extend(d.findings)
        for v in self.partitions:  # the data partitions read (with their layout findings)
            out.extend(_as_read(v.findings, ((s.findings, s.size, s.batches) for s in v.inputs.segments)))
        out.extend(self.coordinator.findings)  # already as read (see load_state)
        kept = [f for f in out if f.kind in EVIDENCE_KINDS]
        return without_whole_file_regions(dedupe(kept))

    def replicas(self, topic: str, partition: int) -> list[PartitionView]:
        return [p for p in self.partitions if p.topic_partition == (topic, partition)]


def _as_read(findings: Sequence[Finding], segments: Iterable[tuple[Sequence[Finding], int, int]]) -> list[Finding]:
    """``findings`` with the damage of a segment in which no batch frames (its segments given as
    (findings, size, valid batches)) reported as not Kafka."""
    replaced: dict[Finding, Finding] = {}
    for seg_findings, size, batches in segments:
        for old, new in zip(seg_findings, not_kafka_segment(seg_findings, size, batches)):
            if new is not old:
                replaced[old] = new
    return [replaced.get(f, f) for f in findings]


def without_whole_file_regions(findings: list[Finding]) -> list[Finding]:
    """Drop the corrupt region a NOT_KAFKA finding of the same file and bytes replaces."""
    whole = {(f.path, f.position, f.end_position) for f in findings if f.kind is FindingKind.NOT_KAFKA}
    return [f for f in findings
            if f.kind is not FindingKind.CORRUPT_REGION or (f.path, f.position, f.end_position) not in whole]


def _selector(topic: str | None, partition: int | None, broker_id: int | None
              ) -> Callable[[LogDir | None, PartitionDir], bool]:
    chosen = Filters(topic, partition, broker_id)

    def selected(log_dir: LogDir | None, p: PartitionDir) -> bool:
        return chosen.selects(p.topic, p.partition, log_dir.broker_id if log_dir is not None else None)
    return selected


def _without_events(view: PartitionView) -> PartitionView:
    """The view without its inputs' producer events: the folds have consumed them, nothing after the
    rebuild reads them, and a driver holding every partition need not keep them."""
    segments = tuple(s._replace(events=()) for s in view.inputs.segments)
    return replace(view, inputs=replace(view.inputs, segments=segments))


def state_scope(topic: str | None = None, partition: int | None = None, broker_id: int | None = None,
                data: bool = True) -> Scope:
    """What a state rebuild reads: the coordinator partitions, the newest ``__cluster_metadata`` segment
    (the clock) and, with ``data``, the data partitions matching the filters."""
    return Scope(data=data, coordinator=True, select=_selector(topic, partition, broker_id), metadata_tail=True)


Folded = PartitionView | FoldedReplica | TxnStateInputs | ReplicaResult
"""What :class:`StateFolder` makes of a replica's results, by its topic: a data partition in scope a
:class:`PartitionView`; a ``__transaction_state`` replica a :class:`FoldedReplica` (its partition's only copy)
or its :class:`TxnStateInputs`; ``__cluster_metadata`` and anything else its :class:`ReplicaResult` as read
(the clock reads the metadata's segment summaries)."""


def _folded_wrong(key: str, made: Folded, wanted: str) -> TypeError:
    return TypeError(f"{key}: the state folder made a {type(made).__name__}, not a {wanted}")


class StateFolder:
    """What :func:`assemble_state` makes of one replica's results: a data partition's
    :class:`PartitionView` (its events dropped), a ``__transaction_state`` replica folded at once when
    it is the partition's only copy (else its inputs, folded once the replica to trust is chosen), the
    rest as read. Given to the executor (``consume``), it runs as each replica's units finish, so that
    what was read is never held whole beside what is kept.

    ``keep_history``: the ids whose coordinator history is kept (None: all); ``lean``: the data
    partitions keep the transactions of their open producers only (see
    :func:`~forensics.analysis.producers.rebuild_partition`).

    A function of the replica alone (it reads what it was made with, changes nothing, returns what
    pickles): the in-process pool folds a replica read whole in the worker that read it
    (:func:`~forensics.pipeline.executor.in_worker`), so that the driver only assembles."""

    in_worker = True

    def __init__(self, inv: Inventory, scope: Scope, keep_history: KeepHistory = None, lean: bool = False) -> None:
        self.scope, self.keep_history, self.lean = scope, keep_history, lean
        live = list(live_partitions(inv))
        self._where = {p.path: (log_dir, p) for log_dir, p in live}
        self._copies = Counter(p.topic_partition for _, p in live)

    def __call__(self, key: str, r: ReplicaResult) -> Folded:
        if key not in self._where:
            return r
        log_dir, p = self._where[key]
        if p.topic == CLUSTER_METADATA_TOPIC:
            return r
        if is_txn_state(p):
            inputs = txn_state_inputs(log_dir, p, r)
            alone = self._copies[p.topic_partition] == 1
            return fold_replica(inputs, self.keep_history) if alone else inputs
        if self.scope.data and self.scope.selects(log_dir, p):
            alone = self.lean and self._copies[p.topic_partition] == 1  # another replica may need its markers
            return _without_events(rebuild_partition(partition_inputs(log_dir, p, r), lean=alone))
        return r


def assemble_state(inv: Inventory, results: Mapping[str, Folded], scope: Scope,
                   partition_count: int | None = None, folder: StateFolder | None = None,
                   metadata_count: int | None = None) -> StateReport:
    """Producer state (data partitions in ``scope``) and coordinator metadata, from what the executor
    read for ``plan(inv, scope)``: each replica's results as read, or as ``folder`` (the one given to
    the executor) made them already. ``partition_count``: ``__transaction_state``'s, as given
    (``--transaction-state-partitions``); ``metadata_count``: as ``__cluster_metadata`` says it."""
    folder = folder if folder is not None else StateFolder(inv, scope)
    notes = loose_file_notes(inv)
    views: list[PartitionView] = []
    txn: list[TxnStateInputs | FoldedReplica] = []
    metadata: list[SegmentSummary] = []
    for log_dir, p in live_partitions(inv):
        r = results.get(p.path, EMPTY_RESULT)
        folded = folder(p.path, r) if isinstance(r, ReplicaResult) else r
        if p.topic == CLUSTER_METADATA_TOPIC:
            if not isinstance(folded, ReplicaResult):
                raise _folded_wrong(p.path, folded, "ReplicaResult")
            metadata.extend(folded.summaries)
        elif is_txn_state(p):
            if not isinstance(folded, (TxnStateInputs, FoldedReplica)):
                raise _folded_wrong(p.path, folded, "TxnStateInputs or FoldedReplica")
            txn.append(folded)
        elif scope.data and scope.selects(log_dir, p):
            if not isinstance(folded, PartitionView):
                raise _folded_wrong(p.path, folded, "PartitionView")
            views.append(folded)
    views.sort(key=lambda v: (v.topic_partition.topic, v.topic_partition.partition,
                              -1 if v.inputs.broker_id is None else v.inputs.broker_id, v.inputs.path))
    count, count_findings, source = _partition_count(txn, partition_count, metadata_count)
    coordinator = rebuild_coordinator(txn, count or None, folder.keep_history, source)
    read = _as_read(coordinator.findings, ((s.findings, s.size, 0 if s.next_offset is None else 1)
                                           for c in coordinator.partitions.values() for s in c.inputs.segments))
    coordinator = replace(coordinator, findings=tuple(dedupe(count_findings + read)))
    return StateReport(inv, tuple(views), coordinator, notes, tuple(metadata))


def loose_file_notes(inv: Inventory) -> tuple[Finding, ...]:
    """Producer and coordinator state live in partition directories: single files given alone are
    an input error, next to directories a finding (scan and dump read them)."""
    if not inv.loose_files:
        return ()
    first = inv.loose_files[0].path
    if not inv.log_dirs and not inv.partitions:
        raise InputError("a file where a log dir or partition dir is expected (this command rebuilds state from "
                         "partition directories; scan and dump read single files)", path=first)
    return tuple(Finding(FindingKind.NOT_KAFKA, "a single file, not a log dir or partition dir: ignored here "
                         "(scan and dump read single files)", path=f.path, severity=Severity.WARNING)
                 for f in inv.loose_files)


# -- the __transaction_state partition count -----------------------------------------------------


GIVEN_COUNT = "--transaction-state-partitions"
METADATA_COUNT = "__cluster_metadata"


def _partition_count(replicas: Sequence[TxnStateInputs | FoldedReplica], given: int | None, metadata: int | None) -> tuple[int, list[Finding], str]:
    """The ``__transaction_state`` partition count, what the disk says against it, and where it comes from:
    as given, else as ``__cluster_metadata`` says (both proven), else inferred from what is present ("")."""
    if given is not None:
        count, found = txn_partition_count(replicas, given)
        if metadata is not None and metadata != given:
            found.append(Finding(FindingKind.TXN_PARTITION_COUNT, f"--transaction-state-partitions {given}, but "
                                 f"__cluster_metadata gives __transaction_state {metadata} partitions"))
        return count, found, GIVEN_COUNT
    if metadata is not None:
        count, found = txn_partition_count(replicas, metadata, source=METADATA_COUNT)
        return count, found, METADATA_COUNT
    count, found = txn_partition_count(replicas)
    return count, found, ""


def _misplaced(stored: set[tuple[str, int]], n: int) -> int:
    return sum(transaction_partition_for(tid, n) != part for tid, part in stored)


def txn_partition_count(replicas: Sequence[TxnStateInputs | FoldedReplica], given: int | None = None,
                        source: str = "--transaction-state-partitions") -> tuple[int, list[Finding]]:
    """The partition count of ``__transaction_state`` (0: no partition among the inputs) and what
    the disk says against it.

    Not given: the highest partition found + 1, unless the transactional ids stored on the disk do
    not all sit where ``abs(hash) % that`` puts them but do for Kafka's default of 50 (a broker
    holding a few partitions of 50): then 50, with a finding, so that the partitions not among the
    inputs make verdicts unverifiable instead of wrong. Given: a count below the highest partition
    found, or one that misplaces ids the inferred count places, is a finding."""
    found = {r.partition for r in replicas if r.partition >= 0}
    if not found:
        return given or 0, []
    low = max(found) + 1
    stored = {(tid, r.partition) for r in replicas for tid in stored_ids(r)}
    fit = next((n for n in dict.fromkeys((low, max(low, DEFAULT_TXN_STATE_PARTITIONS)))
                if stored and not _misplaced(stored, n)), None)
    path = next(r.path for r in replicas if r.partition == low - 1)
    if given is None:
        if fit is None or fit == low:
            return low, []
        return fit, [Finding(FindingKind.TXN_PARTITION_COUNT, f"partition count taken as {fit} (Kafka's default): "
                             f"all {len(stored)} stored transactional ids sit where abs(hash) % {fit} puts them, not "
                             f"% {low} (highest partition found + 1); {fit - len(found)} partitions are not among the "
                             "inputs; give --transaction-state-partitions if the cluster used another count",
                             severity=Severity.INFO)]
    hint = f"; the stored transactional ids all fit {fit} partitions" if fit is not None else ""
    said = f"--transaction-state-partitions {given}" if source == GIVEN_COUNT else \
        f"{source} gives __transaction_state {given} partitions"
    if low > given:
        return given, [Finding(FindingKind.TXN_PARTITION_COUNT, f"{said}, but the "
                               f"inputs hold __transaction_state-{low - 1}: the count is at least {low}{hint}", path)]
    wrong = _misplaced(stored, given)
    if wrong and fit is not None:
        return given, [Finding(FindingKind.TXN_PARTITION_COUNT, f"{said}: {wrong} of "
                               f"{len(stored)} stored transactional ids are not where abs(hash) % {given} puts them, "
                               f"but all are where abs(hash) % {fit} does: the count given is probably wrong")]
    return given, []


def newest_input_time(report: StateReport) -> AsOf:
    """The as-of time of a state report (see analysis/clock.py): its newest record time, checked
    against the inputs' file times. Call it on one cluster's report."""
    return incident_clock(clock_records(report), input_file_times(report.inventory))


def clock_records(report: StateReport) -> list[RecordTime]:
    """Every file's newest record time: batch max timestamps of the data partitions read, of
    ``__transaction_state`` and of ``__cluster_metadata``, the coordinator values' txnLastUpdateTimestamp
    and the producer snapshots' lastTimestamp."""
    txn = [seg for cp in report.coordinator.partitions.values() for seg in cp.inputs.segments]
    segments = [(s.max_timestamp, s.path) for v in report.partitions for s in v.inputs.segments]
    segments += [(s.max_timestamp, s.path) for s in txn] + [(s.max_timestamp, s.path) for s in report.metadata]
    updates = ((t, path) for cp in report.coordinator.partitions.values() for path, t in cp.state.newest_update.items())
    snapshots = ((e.last_timestamp, r.path) for v in report.partitions for r in v.inputs.snapshots
                 if r.snapshot is not None and r.snapshot.crc_valid for e in r.snapshot.entries)
    return (newest_per_file(segments) + newest_per_file(updates, TimeKind.TXN_LAST_UPDATE)
            + newest_per_file(snapshots, TimeKind.PRODUCER_LAST))


def preferred_replica(replicas: Sequence[PartitionView]) -> PartitionView | None:
    """The replica a leader would most likely be: highest leader epoch, then longest log."""
    if not replicas:
        return None
    return max(replicas, key=lambda v: replica_rank(v.inputs.leader_epoch, v.log_end_offset, v.inputs.broker_id))


# -- describe-producers --------------------------------------------------------------------------


def _span_row(s: TransactionSpan) -> SpanRow:
    return SpanRow(
        first_offset=s.first_offset, last_data_offset=s.last_data_offset, marker_offset=s.marker_offset,
        outcome=s.outcome or "OPEN", data_epochs=list(s.data_epochs), marker_epoch=s.marker_epoch,
        coordinator_epoch=s.coordinator_epoch, batches=s.batches, records=s.records, bytes=s.bytes,
        first_timestamp=s.first_timestamp, last_timestamp=s.last_timestamp, marker_timestamp=s.marker_timestamp,
        from_snapshot=s.from_snapshot)


def producer_rows(view: PartitionView) -> list[ProducerRow]:
    tp = view.topic_partition
    rows = []
    for pid, e in view.entries.items():
        spans = view.history.spans.get(pid, ()) or view.broker.spans.get(pid, ())
        rows.append(ProducerRow(
            topic=tp.topic, partition=tp.partition, producer_id=pid, producer_epoch=e.producer_epoch,
            latest_coordinator_epoch=e.latest_coordinator_epoch, last_sequence=e.last_sequence,
            last_timestamp=e.last_timestamp, current_transaction_start_offset=e.current_txn_first_offset,
            broker_id=view.inputs.broker_id, last_offset=e.last_offset if e.last_offset >= 0 else None,
            transactions=[_span_row(s) for s in spans]))
    return rows


def describe_producers_rows(rep: StateReport, topic: str, partition: int) -> list[ProducerRow]:
    view = preferred_replica(rep.replicas(topic, partition))
    return producer_rows(view) if view is not None else []


def partition_row(v: PartitionView) -> PartitionRow:
    """A data partition replica's figures (export's ``partitions`` table has them as they are here)."""
    tp = v.topic_partition
    return PartitionRow(
        replica_path=v.inputs.path, log_dir=v.inputs.log_dir or None, broker_id=v.inputs.broker_id, topic=tp.topic,
        partition=tp.partition, log_start_offset=v.log_start_offset, log_end_offset=v.log_end_offset,
        high_watermark=v.high_watermark if v.high_watermark_known else None,
        first_unstable_offset=v.first_unstable_offset, last_stable_offset=v.last_stable_offset,
        leader_epoch=v.inputs.leader_epoch, open_transactions=len(v.open_transactions), producers=len(v.entries),
        max_timestamp=v.max_timestamp, snapshot_path=v.snapshot_used.path if v.snapshot_used is not None else None)


def partition_state_rows(rep: StateReport) -> list[PartitionRow]:
    return [partition_row(v) for v in rep.partitions]


# -- list / describe -----------------------------------------------------------------------------


def _history_row(h: HistoryEntry) -> HistoryRow:
    v = h.value  # None: a tombstone, whose row has no value columns
    return HistoryRow(
        offset=h.offset, timestamp=h.timestamp, coordinator_epoch=h.leader_epoch, transaction_state=h.state_name,
        path=h.at.path, position=h.at.position, producer_id=v.producer_id if v else ABSENT,
        producer_epoch=v.producer_epoch if v else ABSENT,
        transaction_timeout_ms=v.transaction_timeout_ms if v else ABSENT,
        topic_partitions=[f"{t.topic}-{p}" for t in (v.partitions or ()) for p in t.partition_ids] if v else ABSENT,
        last_update_time_ms=v.last_update_timestamp_ms if v else ABSENT,
        start_time_ms=v.start_timestamp_ms if v else ABSENT, value_version=v.version if v else ABSENT)


class _TransactionColumns(TypedDict):
    """The columns list and describe both show of an id, by field name (both rows take them as keywords)."""

    transactional_id: str
    coordinator: int | None
    producer_id: int | None
    producer_epoch: int | None
    transaction_state: str
    transaction_timeout_ms: int | None
    current_transaction_start_time_ms: int | None
    topic_partitions: list[str]
    last_update_time_ms: int | None
    coordinator_epoch: int
    transaction_state_partition: int


def _transaction_columns(v: TransactionIdView) -> _TransactionColumns:
    m = v.metadata
    return _TransactionColumns(transactional_id=v.transactional_id, coordinator=v.coordinator,
                producer_id=m.producer_id if m else None, producer_epoch=m.producer_epoch if m else None,
                transaction_state=v.state_name, transaction_timeout_ms=m.timeout_ms if m else None,
                current_transaction_start_time_ms=m.start_ms if m and m.start_ms >= 0 else None,
                topic_partitions=[str(tp) for tp in m.partitions] if m else [],
                last_update_time_ms=m.last_update_ms if m else v.tombstone.timestamp if v.tombstone else None,
                coordinator_epoch=v.coordinator_epoch, transaction_state_partition=v.partition)


def transaction_row(v: TransactionIdView) -> TransactionRow:
    return TransactionRow(**_transaction_columns(v))


def list_rows(rep: StateReport, state: str | None = None, *, duration_ms: int | None = None,
              now_ms: int | None = None, id_pattern: Pattern[str] | None = None) -> list[TransactionRow]:
    """The ids ``list`` shows: those the coordinators hold (expired ids only with ``state`` Dead), then
    Kafka 4.1's filters as its coordinator applies them (TransactionStateManager.listTransactionStates):
    ``duration_ms`` >= 0, only ids whose transaction started more than that before ``now_ms`` (an id
    whose transaction start time is -1, that never began one, passes); ``id_pattern``, only the ids it
    matches whole."""
    rows = []
    for v in rep.coordinator.ids.values():
        if v.metadata is None and state != "Dead":
            continue  # expired (tombstoned) ids are gone from the coordinator, as Kafka's list shows
        if state is not None and v.state_name != state:
            continue
        if duration_ms is not None and duration_ms >= 0 and not _running_longer(v, duration_ms, now_ms):
            continue
        if id_pattern is not None and id_pattern.fullmatch(v.transactional_id) is None:
            continue
        rows.append(transaction_row(v))
    return rows


def _running_longer(v: TransactionIdView, duration_ms: int, now_ms: int | None) -> bool:
    """Kafka's ``now - txnStartTimestamp > filterDurationMs`` (an expired id has no metadata: Kafka
    never lists it)."""
    return v.metadata is not None and now_ms is not None and now_ms - v.metadata.start_ms > duration_ms


def describe_rows(rep: StateReport, transactional_id: str, as_of: int | None = None) -> list[DescribeRow]:
    v = rep.coordinator.ids.get(transactional_id)
    if v is None:
        return []
    cols = _transaction_columns(v)
    start = cols["current_transaction_start_time_ms"]
    return [DescribeRow(**cols, transaction_duration_ms=as_of - start if as_of is not None and start is not None else None,
                        history=[_history_row(h) for h in v.history])]
