"""Where the records a verdict rests on may be incomplete.

A verdict of ``hanging`` says that a marker will never come. It rests on two sets of records: the
coordinator's (the ``__transaction_state`` partition that holds, or would hold, the transactional
id) and the data partition's tail after the open transaction (where its marker would be). When
either carries damage, cannot be read, or ends below what the broker's own files say it held, the
records that would contradict the verdict may simply be missing from the copy:

* damage findings (torn tail, zero fill, CRC mismatch, corrupt region or batch, unreadable file,
  a segment that is not Kafka);
* on a log dir that says it stopped cleanly, the log ends past its recovery point (a clean stop
  checkpoints every log's end: a stale checkpoint, or a log of another moment), or past the high
  watermark of a partition whose only replica it is (``Partition.maybeIncrementLeaderHW``: a sole
  replica's high watermark is its log end, and ``ReplicaManager.shutdown`` checkpoints it);
* the log ends below the high watermark (``replication-offset-checkpoint``) or the recovery point
  (``recovery-point-offset-checkpoint``) of its log dir: the broker had written offsets up to there
  (``UnifiedLog`` never checkpoints either past its log end);
* a producer-state snapshot named past the log end (``ProducerStateManager`` names a snapshot by the
  log end offset when it is taken, and deletes those above the log end when the log is truncated);
* the log ends below its log start offset (``log-start-offset-checkpoint``), below the start of a leader
  epoch (``leader-epoch-checkpoint``: an epoch starts at the log end of its election), or below an offset
  its last segment's offset or time index names (``LogSegment.append`` indexes offsets the log holds).

A torn copy and a marker really lost look alike on disk; only the live cluster tells them apart.

Each gap holds a fact of :mod:`forensics.analysis.gap_facts` (what is missing and where: paths, offsets,
epochs); :mod:`forensics.render.gap_text` writes the words.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import NamedTuple
from collections.abc import Callable, Iterable, Sequence

from forensics.analysis.coordinator import CoordinatorPartitionView, CoordinatorView, TransactionIdView
from forensics.analysis.producers import COORDINATOR_WRITTEN_TOPICS, PartitionView
from forensics.analysis.coverage import Coverage
from forensics.analysis import gap_facts as gf
from forensics.analysis.gap_facts import Gap, GapKind, LogDamage
from forensics.analysis.quiescence import Quiescence
from forensics.codec.checkpoints import EpochEntry
from forensics.codec.txnlog import transaction_partition_for
from forensics.findings import Finding, FindingKind
from forensics.layout import Inventory, LogDir, PartitionDir
from forensics.model import TRANSACTION_STATE_TOPIC, TopicPartition
from forensics.state.producer import TransactionSpan

DAMAGE_KINDS = frozenset({
    FindingKind.TRUNCATED_TAIL, FindingKind.ZERO_FILL, FindingKind.CORRUPT_REGION, FindingKind.CRC_MISMATCH,
    FindingKind.CORRUPT_BATCH, FindingKind.UNSUPPORTED_MAGIC, FindingKind.UNSUPPORTED_CODEC,
    FindingKind.CORRUPT_TRANSACTION_LOG, FindingKind.UNREADABLE_FILE, FindingKind.NOT_KAFKA,
    FindingKind.OFFSET_REGRESSION, FindingKind.BATCH_BEFORE_BASE,
})
_REPEATS = 16  # earlier transactions whose first batch an open one's is compared with
# what a partition dir's index files say its log reached: (next offset, index path, "offset index"), the
# runs' reader (pipeline/witnesses.index_reach) handed in, so that this floor opens no file
Reach = Callable[[PartitionDir], tuple[int, str, str] | None]
BatchCrc = Callable[[str, int], int | None]  # (segment path, byte) -> the CRC of the v2 batch there
# (segment paths, leader-epoch-checkpoint entries, log start) -> the first batch the entries contradict:
# (offset, its leader epoch, the entries' epoch or None, path, byte) (pipeline/witnesses.epoch_mismatch)
EpochCheck = Callable[[Sequence[str], Sequence[EpochEntry], int], tuple[int, int, int | None, str, int] | None]


class LogExtent(NamedTuple):
    """What one replica's log holds and what the broker's files say it held."""

    label: str  # "__transaction_state-43", "orders-0"
    path: str  # the partition dir
    log_end: int  # next offset after the last valid batch read
    high_watermark: int | None
    recovery_point: int | None
    snapshot_offsets: tuple[int, ...]
    segments: tuple[str, ...]  # segment paths in base-offset order
    findings: tuple[Finding, ...]  # what reading its files found
    clean_shutdown: bool = False  # its log dir holds .kafka_cleanshutdown
    log_start: int | None = None  # log-start-offset-checkpoint
    leader_epochs: tuple[EpochEntry, ...] = ()  # leader-epoch-checkpoint
    reach: tuple[int, str, str] | None = None  # (next offset, index path, what) its indexes name
    sole_replica: bool = False  # __cluster_metadata gives the partition this one replica
    led_at: int | None = None  # the leader epoch at which __cluster_metadata makes this replica's broker its leader


def end_gaps(log: LogExtent) -> list[Gap]:
    """The log ends below what the broker's own files say it held."""
    out = []
    if log.high_watermark is not None and log.log_end < log.high_watermark:
        out.append(Gap(GapKind.BELOW_HIGH_WATERMARK, gf.BelowHighWatermark(log.high_watermark), log.path,
                       log_end=log.log_end, partition_dir=log.path))
    if log.recovery_point is not None and log.log_end < log.recovery_point:
        out.append(Gap(GapKind.BELOW_RECOVERY_POINT, gf.BelowRecoveryPoint(log.recovery_point), log.path,
                       log_end=log.log_end, partition_dir=log.path))
    if log.clean_shutdown and log.recovery_point is not None and log.log_end > log.recovery_point:
        out.append(Gap(GapKind.PAST_RECOVERY_POINT, gf.PastRecoveryPoint(log.recovery_point), log.path, log_end=log.log_end,
                       partition_dir=log.path))
    if log.clean_shutdown and log.sole_replica and log.high_watermark is not None and log.log_end > log.high_watermark:
        out.append(Gap(GapKind.PAST_HIGH_WATERMARK, gf.PastHighWatermark(log.high_watermark), log.path, log_end=log.log_end,
                       partition_dir=log.path))
    if log.log_start is not None and log.log_end < log.log_start:
        out.append(Gap(GapKind.BELOW_LOG_START, gf.BelowLogStart(log.log_start), log.path, log_end=log.log_end,
                       partition_dir=log.path))
    epochs = [e for e in log.leader_epochs if e.start_offset > log.log_end]
    if epochs:
        out.append(Gap(GapKind.EPOCH_PAST_END, gf.EpochPastEnd(epochs[-1].epoch, epochs[-1].start_offset), log.path,
                       log_end=log.log_end, partition_dir=log.path))
    if log.reach is not None and log.log_end < log.reach[0]:
        out.append(Gap(GapKind.INDEX_PAST_END, gf.IndexPastEnd(log.reach[0] - 1, log.reach[2], log.reach[1]), log.reach[1],
                       log_end=log.log_end, partition_dir=log.path))
    last = log.leader_epochs[-1].epoch if log.leader_epochs else None
    if log.clean_shutdown and log.led_at is not None and last is not None and last < log.led_at:
        out.append(Gap(GapKind.EPOCH_BEHIND_METADATA, gf.EpochBehindMetadata(last, log.led_at), log.path, log_end=log.log_end,
                       partition_dir=log.path))
    beyond = [o for o in log.snapshot_offsets if o > log.log_end]
    if beyond:
        out.append(Gap(GapKind.SNAPSHOT_PAST_END, gf.SnapshotPastEnd(max(beyond)), log.path, log_end=log.log_end,
                       partition_dir=log.path))
    return out


class LogGaps:
    """The gaps of one log, indexed once: its damage in (segment, byte) order and its end gaps."""

    def __init__(self, log: LogExtent) -> None:
        order = {path: i for i, path in enumerate(log.segments)}
        placed, self._elsewhere = [], []
        for found in log.findings:
            if found.kind not in DAMAGE_KINDS or found.path is None:
                continue
            gap = Gap(found.kind, gf.Damage(found.kind, found.path, found.position), found.path, found.position,
                      partition_dir=log.path)
            if found.path in order:
                placed.append(((order[found.path], found.position or 0), gap))
            else:
                self._elsewhere.append(gap)
        placed.sort(key=lambda kg: kg[0])
        self._keys = [k for k, _ in placed]
        self._placed = [g for _, g in placed]
        self._order = order
        self._ends = end_gaps(log)

    def from_(self, after: tuple[str, int] | None = None) -> tuple[Gap, ...]:
        """Every gap; with ``after`` = (segment path, byte), only the damage at or after that point."""
        first = 0
        if after is not None:
            first = bisect_left(self._keys, (self._order.get(after[0], -1), after[1]))
        return tuple(self._placed[first:] + self._elsewhere + self._ends)


def gaps_of(log: LogExtent, after: tuple[str, int] | None = None) -> tuple[Gap, ...]:
    return LogGaps(log).from_(after)


def log_damage(label: str, gaps: Sequence[Gap], means: gf.DamageMeans = gf.DamageMeans.NOTHING) -> LogDamage:
    """The gaps of the log of ``label`` said together (its words: :func:`forensics.render.gap_text.log_damage_text`:
    ``the log of __transaction_state-43 is damaged at byte 534 of 00000000000000000000.log (truncated_tail) and
    ends at offset 4, below its high watermark 5 and its recovery point 5``)."""
    return LogDamage(label, tuple(gaps), means)


def misplaced_records(coordinator: CoordinatorView | None) -> dict[int, Gap]:
    """The coordinator partitions holding records of ids that hash to another partition, with the first one. Not
    with a count the operator gave (``--transaction-state-partitions``): the disk's contradiction of it is a
    finding of its own, and the verdicts follow the count given."""
    out: dict[int, Gap] = {}
    given = coordinator is not None and coordinator.count_source == "--transaction-state-partitions"
    n = coordinator.partition_count if coordinator is not None and not given else 0
    for part, cp in (coordinator.partitions.items() if coordinator is not None and n else ()):
        homes = ((tid, transaction_partition_for(tid, n), s.first) for tid, s in cp.state.summaries.items())
        foreign = [(tid, home, first) for tid, home, first in homes if home != part]
        if foreign:
            first = foreign[0][2]
            fact = gf.Misplaced(part, tuple((tid, home) for tid, home, _ in foreign), first.at.path, first.at.position)
            out[part] = Gap(GapKind.MISPLACED_RECORDS, fact, first.at.path, first.at.position, partition_dir=cp.inputs.path)
    return out


class EvidenceExtents:
    """The :class:`LogExtent` of every partition replica dir read, by path."""

    def __init__(self, inventory: Inventory, reach: Reach | None = None, coverage: Coverage | None = None) -> None:
        self._dirs: dict[str, tuple[LogDir | None, PartitionDir]] = {
            p.path: (d, p) for d, p in inventory.all_partitions()}
        self._reach = reach
        self._sole = coverage.sole_replicas if coverage is not None else frozenset()
        self._leaders = coverage.leaders if coverage is not None else {}

    def of_view(self, view: PartitionView, findings: Iterable[Finding] = ()) -> LogExtent:
        """The extent of a data partition replica as its rebuild read it."""
        i = view.inputs
        return self.extent(str(view.topic_partition), i.path, view.log_end_offset, i.high_watermark,
                           (s.path for s in i.segments), findings)

    def of_coordinator(self, part: int, cp: CoordinatorPartitionView, with_findings: bool = True) -> LogExtent:
        """The extent of the ``__transaction_state-<part>`` replica folded (with its reading's findings)."""
        r = cp.inputs
        base = r.segments[-1].base_offset if r.segments else 0
        end = max((s.next_offset for s in r.segments if s.next_offset is not None), default=base)
        found = list(r.findings) + [f for s in r.segments for f in s.findings] if with_findings else []
        return self.extent(f"{TRANSACTION_STATE_TOPIC}-{part}", r.path, end, r.high_watermark,
                           (s.path for s in r.segments), found)

    def extent(self, label: str, path: str, log_end: int, high_watermark: int | None,
               segments: Iterable[str], findings: Iterable[Finding]) -> LogExtent:
        log_dir, part = self._dirs.get(path, (None, None))
        tp = part.topic_partition if part is not None else None
        recovery = log_dir.recovery_points.get(tp) if log_dir is not None and tp is not None else None
        snapshots = tuple(s.offset for s in part.snapshots) if part is not None else ()
        start = log_dir.log_start_offsets.get(tp) if log_dir is not None and tp is not None else None
        reached = self._reach(part) if self._reach is not None and part is not None else None
        return LogExtent(label, path, log_end, high_watermark, recovery, snapshots, tuple(segments),
                         tuple(findings), log_dir is not None and log_dir.had_clean_shutdown, start,
                         part.leader_epochs if part is not None else (),
                         (*reached,) if reached is not None else None,  # a plain tuple (reach may hand a NamedTuple)
                         tp in self._sole, self._led_at(log_dir, tp))

    def _led_at(self, log_dir: LogDir | None, tp: TopicPartition | None) -> int | None:
        leader, epoch = self._leaders.get(tp, (None, None)) if tp is not None else (None, None)
        return epoch if log_dir is not None and leader is not None and leader == log_dir.broker_id else None


def epoch_gap(check: EpochCheck, label: str, partition_dir: str, segments: Sequence[str], entries: Sequence[EpochEntry],
              log_start: int) -> Gap | None:
    """The first batch of a log whose partition leader epoch is not the one its ``leader-epoch-checkpoint``
    (``entries``) gives its offset, as a gap (None: they agree, or no entry to compare)."""
    found = check(segments, entries, log_start) if entries else None
    if found is None:
        return None
    offset, epoch, expected, path, position = found
    return Gap(GapKind.CONTRADICTION, gf.EpochMismatch(label, offset, path, position, epoch, expected), path, position,
               partition_dir=partition_dir)


class EvidenceCheck:
    """The gaps in the records that verdicts rest on: a data partition's tail after an open
    transaction, and the coordinator partitions."""

    def __init__(self, inventory: Inventory, coordinator: CoordinatorView | None,
                 quiescence: Quiescence | None = None, reach: Reach | None = None,
                 coverage: Coverage | None = None, crc: BatchCrc | None = None,
                 epochs: EpochCheck | None = None) -> None:
        self.quiescence = quiescence  # when each partition was copied, on evidence not of one quiescent moment
        self.coverage = coverage  # what should be there against what is
        self._extents = EvidenceExtents(inventory, reach, coverage)
        self._crc = crc
        self._epochs = epochs
        self._epoch_gaps: dict[str, Gap | None] = {}  # by partition dir: its batches read once
        self._data: dict[str, LogGaps] = {}  # by partition dir: built once, however many rows it has
        self._coordinator: dict[int, tuple[str, tuple[Gap, ...]]] = {}
        self._coordinator_extents: dict[int, LogExtent] = {}
        self._coordinator_epochs: dict[int, Gap | None] = {}  # by partition: its batches read once, when asked
        self._misplaced = misplaced_records(coordinator)
        for part, cp in (coordinator.partitions.items() if coordinator is not None else ()):
            extent = self._coordinator_extents[part] = self._extents.of_coordinator(part, cp)
            gaps = gaps_of(extent)
            if gaps:
                self._coordinator[part] = (extent.label, gaps)

    def data(self, view: PartitionView, span: TransactionSpan | None) -> tuple[Gap, ...]:
        """Gaps of the data partition from the open transaction's first batch on (everywhere when
        that batch was not seen)."""
        i = view.inputs
        gaps = self._data.get(i.path)
        if gaps is None:
            gaps = self._data[i.path] = LogGaps(self._extents.of_view(view, view.findings))
        start = span.start if span is not None else None
        return gaps.from_((start.path, start.position) if start is not None else None)

    def coordinator(self, partitions: Sequence[int] | None) -> list[tuple[str, tuple[Gap, ...]]]:
        """(label, gaps) of the coordinator partitions given (None: all of them) that have gaps."""
        wanted = sorted(self._coordinator) if partitions is None else [p for p in partitions if p in self._coordinator]
        return [self._coordinator[p] for p in wanted]

    def epoch_contradiction(self, view: PartitionView) -> Gap | None:
        """A batch of the log whose partition leader epoch is not the one its ``leader-epoch-checkpoint``
        gives its offset (None: they agree, or nothing to compare)."""
        i = view.inputs
        if i.path not in self._epoch_gaps:
            self._epoch_gaps[i.path] = self._epoch_gap(str(view.topic_partition), i.path, [s.path for s in i.segments],
                                                       i.leader_epochs, view.log_start_offset)
        return self._epoch_gaps[i.path]

    def coordinator_epoch_contradictions(self, partitions: Sequence[int] | None) -> list[Gap]:
        """:meth:`epoch_contradiction` of the coordinator partitions given (None: all of them)."""
        wanted = sorted(self._coordinator_extents) if partitions is None else partitions
        out = []
        for p in wanted:
            extent = self._coordinator_extents.get(p)
            if extent is None:
                continue
            if p not in self._coordinator_epochs:  # from its log start checkpoint, else from its first batch
                self._coordinator_epochs[p] = self._epoch_gap(extent.label, extent.path, extent.segments,
                                                              extent.leader_epochs, extent.log_start or 0)
            gap = self._coordinator_epochs[p]
            if gap is not None:
                out.append(gap)
        return out

    def _epoch_gap(self, label: str, partition_dir: str, segments: Sequence[str], entries: Sequence[EpochEntry],
                   log_start: int) -> Gap | None:
        return epoch_gap(self._epochs, label, partition_dir, segments, entries, log_start) if self._epochs else None

    def repeated_batch(self, view: PartitionView, pid: int, span: TransactionSpan | None) -> Gap | None:
        """The open transaction's first batch holds the same records (the same CRC) as the first batch of an
        earlier transaction of its producer: a copy. Asked where no sequence number tells a copy apart (the
        coordinators' own batches: ``__consumer_offsets``' transactional offset commits); the last
        ``_REPEATS`` transactions are compared."""
        start = span.start if span is not None else None
        if self._crc is None or start is None or view.topic_partition.topic not in COORDINATOR_WRITTEN_TOPICS:
            return None
        mine = self._crc(start.path, start.position)
        if mine is None:
            return None
        for s in view.history.spans.get(pid, ())[-_REPEATS:]:
            o = s.start
            if o is not None and o != start and self._crc(o.path, o.position) == mine:
                fact = gf.RepeatedBatch(start.path, start.position, pid, s.first_offset, o.path, o.position, mine)
                return Gap(GapKind.CONTRADICTION, fact, start.path, start.position, partition_dir=view.inputs.path)
        return None

    def misplaced(self, v: TransactionIdView | None) -> tuple[Gap, ...]:
        """Coordinator partitions a verdict reads that hold other partitions' records: the id's own and the
        one its record was found in (``v``), or every one (no id found: any may have held its record)."""
        if v is None:
            return tuple(self._misplaced.values())
        return tuple(self._misplaced[p] for p in dict.fromkeys((v.expected_partition, v.partition))
                     if p in self._misplaced)

    def copies_missing(self, tp: TopicPartition, v: TransactionIdView | None, every_coordinator: bool
                       ) -> tuple[Gap, ...]:
        """The copies a verdict on ``tp`` needs that are not among the inputs: ``tp``'s leader's, the id's
        coordinator partition's leader's (``v``), and with ``every_coordinator`` (no id known: any partition
        may hold the producer's record) every coordinator partition's."""
        if self.coverage is None:
            return ()
        wanted = [tp] + ([TopicPartition(TRANSACTION_STATE_TOPIC, v.partition)] if v is not None else [])
        out = []
        for t in dict.fromkeys(wanted):
            u = self.coverage.gap(t)
            if u is not None:
                out.append(Gap(GapKind.COPY_MISSING, gf.CopyMissing(t, u), "", partition_dir=""))
        if v is None and every_coordinator:
            lacking = sorted((t for t in self.coverage.uncovered if t.topic == TRANSACTION_STATE_TOPIC),
                             key=lambda t: t.partition)
            if lacking:
                fact = gf.CoordinatorCopiesMissing(tuple(lacking), self.coverage.uncovered[lacking[0]])
                out.append(Gap(GapKind.COPY_MISSING, fact, "", partition_dir=""))
        return tuple(out)
