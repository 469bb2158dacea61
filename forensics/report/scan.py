"""The ``scan`` report: an inventory of everything on the given disks.

Per segment a header-only pass (61 bytes a batch, CRC verified, record bodies untouched) gives
batches, records, offset range, message formats and codecs; per partition those roll up with the
layout's checkpoints (log start offset, high watermark, topic id); every finding is kept.
"""

from __future__ import annotations

from dataclasses import field, replace
from forensics.dataclass_fast import dataclass
from collections.abc import Mapping, Sequence

from forensics.analysis.clock import AsOf, AsOfBasis, given, incident_clock, newest_per_file
from forensics.analysis.filters import Filters
from forensics.analysis.hanging import DEFAULT_MAX_TRANSACTION_TIMEOUT_MS
from forensics.analysis.producers import rebuild_partition
from forensics.columns import (
    COUNT, EXACT_SIZE, LOG_DIR, NAME, NO_KEY, OFFSETS, OPEN, SET, SIZE, YES_NO, Cell, JsonRow, column, derived)
from forensics.findings import Finding, FindingKind, not_kafka_segment, total
from forensics.layout import Inventory, LogDir, PartitionDir, PartitionStatus
from forensics.layout.evidence import input_file_times
from forensics.model import CLUSTER_METADATA_TOPIC, CONSUMER_OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from forensics.pipeline.assemble import EMPTY_RESULT, partition_inputs
from forensics.pipeline.merge import ReplicaResult
from forensics.pipeline.plan import Scope
from forensics.state.inputs import SegmentSummary

_NO_PRODUCER_STATE = (TRANSACTION_STATE_TOPIC, CLUSTER_METADATA_TOPIC)  # coordinator / KRaft logs
LATE_TRANSACTION_BUFFER_MS = 300_000  # ProducerStateManager.LATE_TRANSACTION_BUFFER_MS
INTERNAL_TOPICS = (CONSUMER_OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, CLUSTER_METADATA_TOPIC)


@dataclass(frozen=True, slots=True)
class PartitionSummary(JsonRow):
    """A partition replica as scan shows it: its JSON object (in field order) and its cells in scan's
    Partitions table declared with its fields (:mod:`forensics.columns`)."""

    log_dir: str = field(metadata=column(json=NO_KEY))
    broker_id: int | None = field(metadata=column(table=Cell(1, "Broker", drop=1), wide=Cell(1, "Broker")))
    path: str
    topic: str | None = field(metadata=column(  # the table names the partition: topic-N, else its directory's
        table=Cell(2, "Partition", NAME, fold=True), wide=Cell(2, "Partition", NAME, fold=True)))
    partition: int | None
    status: str
    topic_id: str | None = field(metadata=column(wide=Cell(3, "TopicId")))
    log_start_offset: int | None = field(metadata=column(table=Cell(3, "LogStart", drop=2), wide=Cell(9, "LogStart")))
    high_watermark: int | None = field(metadata=column(table=Cell(4, "HW"), wide=Cell(10, "HW")))
    last_stable_offset: int | None = field(  # None: not computed (no transactional data, or internal log)
        default=None, metadata=column(table=Cell(5, "LSO"), wide=Cell(11, "LSO")))
    open_transactions: int = field(default=0, metadata=column(  # with the oldest's age
        table=Cell(7, "OpenTxns", OPEN), wide=Cell(13, "OpenTxns", OPEN)))
    max_active_txn_duration_ms: int | None = field(  # as-of minus oldest_open_txn_start
        default=None, metadata=column(json="maxActiveTransactionDurationMs"))
    late_transaction: bool = False  # ``ProducerStateManager.hasLateTransaction``, against the as-of time
    segments: tuple[SegmentSummary, ...] = field(default=(), metadata=column(wide=Cell(4, "Segments", COUNT)))
    findings: tuple[Finding, ...] = field(default=(), metadata=column(json=NO_KEY))  # JSON: reported_findings
    state_findings: tuple[Finding, ...] = field(  # producer-state anomalies (``ProducerAppendInfo``)
        default=(), metadata=column(json=NO_KEY))
    oldest_open_txn_start: int | None = field(  # first data timestamp of the oldest open transaction
        default=None, metadata=column(json=NO_KEY))
    oldest_open_txn_last_timestamp: int | None = field(  # its producer entry's lastTimestamp
        default=None, metadata=column(json=NO_KEY))

    @derived(after="last_stable_offset", table=Cell(6, "LSOLag"), wide=Cell(12, "LSOLag"))
    def last_stable_offset_lag(self) -> int | None:
        if self.high_watermark is None or self.last_stable_offset is None:
            return None
        return self.high_watermark - self.last_stable_offset

    @derived(after="late_transaction", wide=Cell(5, "Bytes", EXACT_SIZE))
    def bytes(self) -> int:
        return sum(s.size for s in self.segments)

    @derived(after="bytes", wide=Cell(6, "Batches"))
    def batches(self) -> int:
        return sum(s.batches for s in self.segments)

    @derived(after="batches", wide=Cell(7, "Records"))
    def records(self) -> int:
        return sum(s.records for s in self.segments)

    @derived(after="records", wide=Cell(8, "Offsets", OFFSETS))
    def first_offset(self) -> int | None:
        return min((s.first_offset for s in self.segments if s.first_offset is not None), default=None)

    @derived(after="first_offset")
    def last_offset(self) -> int | None:
        return max((s.last_offset for s in self.segments if s.last_offset is not None), default=None)

    @derived(after="last_offset", wide=Cell(14, "Magic", SET))
    def magics(self) -> frozenset[int]:
        return frozenset().union(*(s.magics for s in self.segments))

    @derived(after="magics", wide=Cell(15, "Codecs", SET))
    def codecs(self) -> frozenset[str]:
        return frozenset().union(*(s.codecs for s in self.segments))

    @derived(after="findings", json="findings")
    def reported_findings(self) -> tuple[Finding, ...]:
        """Its own findings and its producer state's (its segments' are theirs)."""
        return self.findings + self.state_findings

    def all_findings(self) -> tuple[Finding, ...]:
        return self.findings + tuple(f for s in self.segments for f in s.findings) + self.state_findings

    @derived(after="reported_findings", json=NO_KEY, table=Cell(8, "Findings"), wide=Cell(16, "Findings"))
    def finding_total(self) -> int:
        """Its findings, its segments' and its producer state's, counted (an aggregate as the many it stands for)."""
        return total(self.all_findings())


@dataclass(frozen=True, slots=True)
class LogDirSummary(JsonRow):
    """A log dir as scan shows it: its JSON object (in field order) and its cells in scan's Log directories
    table declared with its fields (:mod:`forensics.columns`)."""

    path: str = field(metadata=column(table=Cell(2, "LogDir", LOG_DIR, fold=True, path=True),
                                      wide=Cell(4, "LogDir", LOG_DIR, fold=True, path=True)))
    broker_id: int | None = field(metadata=column(table=Cell(1, "Broker"), wide=Cell(1, "Broker")))
    cluster_id: str | None = field(metadata=column(wide=Cell(2, "Cluster")))
    directory_id: str | None = field(metadata=column(wide=Cell(3, "DirectoryId")))
    clean_shutdown: bool = field(metadata=column(table=Cell(3, "CleanShutdown", YES_NO, drop=1),
                                                 wide=Cell(5, "CleanShutdown", YES_NO)))
    partitions: tuple[PartitionSummary, ...] = field(metadata=column(table=Cell(4, "Partitions", COUNT),
                                                                     wide=Cell(6, "Partitions", COUNT)))
    findings: tuple[Finding, ...] = ()

    @derived(after="findings", json=NO_KEY, table=Cell(5, "Bytes", SIZE, drop=2), wide=Cell(7, "Bytes", EXACT_SIZE))
    def bytes(self) -> int:
        return sum(p.bytes for p in self.partitions)

    @derived(after="clean_shutdown", table=Cell(6, "LateTxnPartitions"), wide=Cell(8, "LateTxnPartitions"))
    def partitions_with_late_transactions(self) -> int:
        """Kafka's PartitionsWithLateTransactionsCount for this broker, as of the report's time."""
        return sum(p.late_transaction for p in self.partitions)

    @derived(after="bytes", json=NO_KEY, table=Cell(7, "Findings"), wide=Cell(9, "Findings"))
    def finding_total(self) -> int:
        """Its own findings and its partitions', counted."""
        return sum(p.finding_total for p in self.partitions) + total(self.findings)


@dataclass(frozen=True, slots=True)
class ScanReport:
    inputs: tuple[str, ...]
    log_dirs: tuple[LogDirSummary, ...]
    loose_segments: tuple[SegmentSummary, ...]
    findings: tuple[Finding, ...] = ()  # inventory-level findings
    other_loose_files: tuple[str, ...] = field(default=())
    as_of: AsOf = AsOf(None, AsOfBasis.NOT_COMPUTED)

    def all_findings(self) -> list[Finding]:
        out = list(self.findings)
        for d in self.log_dirs:
            out.extend(d.findings)
            for p in d.partitions:
                out.extend(p.all_findings())
        for s in self.loose_segments:
            out.extend(s.findings)
        return out

    def total_bytes(self) -> int:
        return sum(p.bytes for d in self.log_dirs for p in d.partitions) + sum(s.size for s in self.loose_segments)


def _as_read(s: SegmentSummary, unreadable: frozenset[str]) -> SegmentSummary:
    """A segment's findings as reported: a file discovery already named unreadable is not reported a
    second time by its reader; a file in which not one batch frames is not Kafka."""
    findings = tuple(f for f in s.findings if f.kind is not FindingKind.UNREADABLE_FILE or f.path not in unreadable)
    findings = not_kafka_segment(findings, s.size, s.batches)
    return s if findings == s.findings else replace(s, findings=findings)


def _unreadable(findings) -> frozenset[str]:
    return frozenset(f.path for f in findings if f.kind is FindingKind.UNREADABLE_FILE and f.path)


def _partition(log_dir: LogDir, p: PartitionDir, r: ReplicaResult) -> PartitionSummary:
    tp = p.topic_partition
    unreadable = _unreadable(p.findings)
    segments = tuple(_as_read(s, unreadable) for s in r.summaries)
    lso = log_dir.log_start_offsets.get(tp) if tp is not None else None
    if lso is None and p.segments:
        lso = p.segments[0].base_offset
    hw = log_dir.high_watermarks.get(tp) if tp is not None else None
    summary = PartitionSummary(log_dir=log_dir.path, broker_id=log_dir.broker_id, path=p.path, topic=p.topic,
                               partition=p.partition, status=p.status.value, topic_id=p.topic_id, log_start_offset=lso,
                               high_watermark=hw, segments=segments, findings=tuple(p.findings))
    if tp is None or p.topic in _NO_PRODUCER_STATE or p.status is not PartitionStatus.LIVE:
        return summary
    if not p.snapshots and not any(s.transactional_batches or s.control_batches for s in segments):
        return replace(summary, last_stable_offset=hw if hw is not None else _end(segments))
    view = rebuild_partition(partition_inputs(log_dir if log_dir.path else None, p, r))
    start = last_ts = None
    if view.open_transactions:
        pid = next(iter(view.open_transactions))  # ordered by first offset: the oldest first
        last_ts = view.entries[pid].last_timestamp
        span = view.open_span(pid)
        start = span.first_timestamp if span is not None and span.first_timestamp is not None else last_ts
    return replace(summary, last_stable_offset=view.last_stable_offset, open_transactions=len(view.open_transactions),
                   state_findings=view.state_findings, oldest_open_txn_start=start,
                   oldest_open_txn_last_timestamp=last_ts)


def _with_metrics(p: PartitionSummary, as_of: int | None, max_timeout_ms: int) -> PartitionSummary:
    """MaxActiveTransactionDuration and hasLateTransaction (transaction.max.timeout.ms + 5 min), as of."""
    if as_of is None or p.oldest_open_txn_start is None:
        return p
    last = p.oldest_open_txn_last_timestamp
    late = last is not None and as_of - last > max_timeout_ms + LATE_TRANSACTION_BUFFER_MS
    return replace(p, max_active_txn_duration_ms=as_of - p.oldest_open_txn_start, late_transaction=late)


def _end(segments: Sequence[SegmentSummary]) -> int | None:
    last = max((s.last_offset for s in segments if s.last_offset is not None), default=None)
    return last + 1 if last is not None else (segments[-1].base_offset if segments else None)


def _partition_order(p: PartitionDir) -> tuple:
    return (p.topic or "", p.partition if p.partition is not None else -1, p.status.value, p.path)


def total_log_bytes(inventory: Inventory) -> int:
    total = sum(s.log_size or 0 for d in inventory.log_dirs for p in d.partitions for s in p.segments)
    total += sum(s.log_size or 0 for p in inventory.partitions for s in p.segments)
    return total + sum(f.size for f in inventory.loose_files if f.kind.value == "log")


def scan_clock(report: ScanReport, file_times: Sequence[tuple[int, str]]) -> AsOf:
    """The incident clock of a scan (see analysis/clock.py): the newest batch timestamp of every segment
    scanned (``__transaction_state`` and ``__cluster_metadata`` included), checked against the inputs'
    file times."""
    segs = [s for d in report.log_dirs for p in d.partitions for s in p.segments] + list(report.loose_segments)
    return incident_clock(newest_per_file((s.max_timestamp, s.path) for s in segs), file_times)


def assemble_scan(paths: Sequence[str], inv: Inventory, results: Scanned, as_of: int | None = None,
                  max_timeout_ms: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MS) -> ScanReport:
    """The scan report from what the executor read for ``plan(inv, SCAN_SCOPE)`` (each replica's results
    as read, or as a :class:`ScanFolder` given to the executor made them), as of ``as_of`` (default:
    the incident clock; the record times it sets aside are in ``as_of.set_aside``, not yet among the
    findings: the caller adds them, written by :func:`forensics.render.clock_text.set_aside_findings`)."""
    report = _scan(paths, inv, results)
    when = given(as_of) if as_of is not None else scan_clock(report, input_file_times(inv))
    dirs = tuple(replace(d, partitions=tuple(_with_metrics(p, when.time_ms, max_timeout_ms) for p in d.partitions))
                 for d in report.log_dirs)
    return replace(report, log_dirs=dirs, as_of=when)


SCAN_SCOPE = Scope(stats=True, data=True, coordinator=False, non_live=True)
# what the executor read for scan, by replica (or file): as read, or a partition's summary as ScanFolder made it
Scanned = Mapping[str, "ReplicaResult | PartitionSummary"]


class ScanFolder:
    """What :func:`assemble_scan` makes of one partition's results (its :class:`PartitionSummary`, the
    producer state rebuilt and dropped), made as each replica is read: given to the executor
    (``consume``), so that the rebuilds run during the job (over a pool, while the workers read) and
    the driver never holds a partition's events beside the next one's. Other results (files given
    alone) are kept as read; :func:`assemble_scan` takes either. A function of the replica alone: the
    in-process pool runs it in the worker that read the replica whole
    (:func:`~forensics.pipeline.executor.in_worker`)."""

    in_worker = True

    def __init__(self, inv: Inventory) -> None:
        self._where: dict[str, tuple[LogDir, PartitionDir]] = {p.path: (d, p) for d in inv.log_dirs
                                                               for p in d.partitions}
        if inv.partitions:
            bare = _bare()
            self._where.update((p.path, (bare, p)) for p in inv.partitions)

    def __call__(self, key: str, r: ReplicaResult) -> ReplicaResult | PartitionSummary:
        where = self._where.get(key)
        return r if where is None else _partition(where[0], where[1], r)


def _bare() -> LogDir:
    """The log dir of the partition dirs given directly, outside any log dir."""
    return LogDir(path="", meta=None, clean_shutdown=None)


def _summary(log_dir: LogDir, p: PartitionDir, results: Scanned) -> PartitionSummary:
    r = results.get(p.path, EMPTY_RESULT)
    return _partition(log_dir, p, r) if isinstance(r, ReplicaResult) else r  # (ScanFolder made it already)


def _scan(paths: Sequence[str], inv: Inventory, results: Scanned) -> ScanReport:
    dirs = []
    for d in inv.log_dirs:
        parts = tuple(_summary(d, p, results) for p in sorted(d.partitions, key=_partition_order))
        dirs.append(LogDirSummary(path=d.path, broker_id=d.broker_id, cluster_id=d.cluster_id,
                                  directory_id=d.directory_id, clean_shutdown=d.had_clean_shutdown, partitions=parts,
                                  findings=tuple(d.findings)))
    if inv.partitions:  # partition dirs given directly, outside any log dir
        bare = _bare()
        parts = tuple(_summary(bare, p, results) for p in sorted(inv.partitions, key=_partition_order))
        dirs.append(LogDirSummary(path="", broker_id=None, cluster_id=None, directory_id=None, clean_shutdown=False,
                                  partitions=parts))
    loose, other = [], []
    unreadable = _unreadable(inv.findings)
    for f in inv.loose_files:
        r = results.get(f.path)  # (a file given alone: as read)
        if isinstance(r, ReplicaResult) and r.summaries:
            loose.append(_as_read(r.summaries[0], unreadable))
        else:
            other.append(f.path)
    return ScanReport(tuple(paths), tuple(dirs), tuple(loose), tuple(inv.findings), tuple(other))


def selected(report: ScanReport, topic: str | None = None, partition: int | None = None,
             broker_id: int | None = None) -> ScanReport:
    """The report's partitions of ``topic`` (and ``partition``) on ``broker_id`` (None: any); the
    segment files given alone stay only when no filter is given (they belong to no topic known)."""
    chosen = Filters(topic, partition, broker_id)
    if not chosen.narrows_partitions:
        return report
    dirs = tuple(replace(d, partitions=tuple(p for p in d.partitions if chosen.selects(p.topic, p.partition,
                                                                                       p.broker_id)))
                 for d in report.log_dirs if broker_id is None or d.broker_id == broker_id)
    return replace(report, log_dirs=dirs, loose_segments=())


def without_producer_state(inventory: Inventory) -> tuple[tuple[str, int], ...]:
    """The live partitions (distinct topic-partitions) among the inputs of the internal topics that hold
    no producer state (``__cluster_metadata``, ``__transaction_state``), by topic: those that scan
    counts and the report's and export's partition counts (data partitions, ``__consumer_offsets``
    among them) do not."""
    tps = {p.topic_partition for _, p in inventory.all_partitions()
           if p.status is PartitionStatus.LIVE and p.topic in _NO_PRODUCER_STATE and p.topic_partition is not None}
    return tuple(sorted((t, sum(tp.topic == t for tp in tps)) for t in {tp.topic for tp in tps}))


def quiet_internal(p: PartitionSummary) -> bool:
    """A live partition of an internal topic with nothing to look at: no LSO lag, no open
    transaction, no finding (on a real disk 100 of its 150 partitions are these)."""
    return (p.topic in INTERNAL_TOPICS and p.status == PartitionStatus.LIVE.value and not p.open_transactions
            and not p.last_stable_offset_lag and not p.all_findings())

