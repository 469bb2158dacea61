"""A partition replica's producer state, rebuilt two ways and cross-checked.

* **broker-equivalent**: the newest usable ``.snapshot`` with offset in (logStartOffset, LEO], then the
  batches from its offset on (``UnifiedLog.rebuildProducerState``), stopping where the broker's reader would
  stop (the first invalid batch); no expiry filtering. This is what the broker held: ``describe-producers``.
* **history**: every decodable batch of every segment from an empty state.

Where they disagree, a ``state_divergence`` (or ``unknown_producer_history``) finding says how. Also: first
unstable offset and LSO (``UnifiedLog.lastStableOffset``), data above the high watermark, and the aborted
transactions implied by markers checked against the ``.txnindex`` files.
"""

from __future__ import annotations

from dataclasses import replace
from forensics.dataclass_fast import dataclass
from typing import NamedTuple
from collections.abc import Iterable, Sequence

from forensics.findings import Finding, FindingKind, FindingRuns
from forensics.model import CONSUMER_OFFSETS_TOPIC, TopicPartition
from forensics.state.events import Marker, ProducerEvent
from forensics.state.inputs import (
    AbortedTxnEntry,
    PartitionInputs,
    SegmentEvents,
    SnapshotRead,
)
from forensics.state.producer import (
    CompletedTxn,
    ProducerFold,
    ProducerState,
    ProducerStateBuilder,
    TransactionSpan,
)

# Topics whose batches the coordinators write (offset commits, share-group state) without sequence numbers
# a duplicate check could hold them to.
COORDINATOR_WRITTEN_TOPICS = frozenset({CONSUMER_OFFSETS_TOPIC, "__share_group_state"})

_COMPARED = ("producer_epoch", "coordinator_epoch", "last_sequence", "last_offset", "last_timestamp",
             "current_txn_first_offset")


@dataclass(frozen=True, slots=True)
class PartitionView:
    inputs: PartitionInputs
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    high_watermark_known: bool
    broker: ProducerFold  # snapshot + replay: what the broker held
    history: ProducerFold  # full pass over every segment
    snapshot_used: SnapshotRead | None
    first_unstable_offset: int | None
    last_stable_offset: int
    max_timestamp: int | None
    findings: tuple[Finding, ...]  # everything: reading damage, snapshots, state anomalies
    state_findings: tuple[Finding, ...] = ()  # only what the rebuild itself found (not segment damage)
    # an older producer snapshot plus the replay after it: a second witness of the producers whose batches
    # are gone from the log (retention), which the full history cannot check
    witness: ProducerFold | None = None
    witness_snapshot: str | None = None
    witness_offset: int = -1  # the older snapshot's offset

    @property
    def topic_partition(self) -> TopicPartition:
        return self.inputs.topic_partition

    @property
    def entries(self) -> dict[int, ProducerState]:
        return self.broker.entries

    @property
    def open_transactions(self) -> dict[int, int]:
        return self.broker.ongoing

    def open_span(self, producer_id: int) -> TransactionSpan | None:
        """The producer's open transaction as seen by the full history (which saw its first batch),
        else by the broker-equivalent fold (opened in a snapshot)."""
        for spans in (self.history.spans.get(producer_id, ()), self.broker.spans.get(producer_id, ())):
            for s in spans:
                if s.is_open:
                    return s
        return None


def _log_end(inputs: PartitionInputs) -> int:
    ends = [s.next_offset for s in inputs.segments if s.next_offset is not None]
    if ends:
        return max(ends)
    return inputs.segments[-1].base_offset if inputs.segments else 0


def _broker_events(segments: Sequence[SegmentEvents], start: int) -> Iterable[tuple[str, ProducerEvent]]:
    """Events from offset ``start`` on, up to the first invalid batch (where Kafka's reader stops)."""
    for seg in segments:
        stop = seg.first_invalid_position
        for ev in seg.events:
            if stop is not None and ev.position >= stop:
                return
            last = ev.offset if isinstance(ev, Marker) else ev.last_offset
            if last >= start:
                yield seg.path, ev
        if stop is not None:
            return


def _replays_everything(segments: Sequence[SegmentEvents]) -> bool:
    """Whether the broker-equivalent replay from offset 0 (no snapshot) meets every event: no
    invalid batch stops it and no offset lies below 0."""
    return all(seg.first_invalid_position is None for seg in segments) and all(
        (ev.offset if isinstance(ev, Marker) else ev.last_offset) >= 0 for seg in segments for ev in seg.events)


def _choose_snapshot(inputs: PartitionInputs, log_start: int, leo: int,
                     findings: list[Finding]) -> SnapshotRead | None:
    """``truncateAndReload``: newest snapshot in (logStart, LEO] whose CRC and schema are good."""
    for snap in sorted(inputs.snapshots, key=lambda s: s.offset, reverse=True):
        if not log_start < snap.offset <= leo:
            findings.append(Finding(FindingKind.SNAPSHOT_SKIPPED, f"snapshot offset {snap.offset} is outside "
                                    f"(logStartOffset {log_start}, log end {leo}]: the broker deletes it",
                                    snap.path, first_offset=snap.offset))
            continue
        if snap.snapshot is None or not snap.snapshot.crc_valid:
            findings.append(Finding(FindingKind.SNAPSHOT_SKIPPED, "unusable snapshot (see corrupt_snapshot): the "
                                    "broker deletes it and tries the next older one", snap.path,
                                    first_offset=snap.offset))
            continue
        return snap
    return None


def _older_witness(inputs: PartitionInputs, used: SnapshotRead | None, log_start: int, history: ProducerFold,
                   sequenced: bool) -> SnapshotRead | None:
    """The newest good snapshot older than ``used`` (at or above the log start), when ``used`` holds a producer
    the full history does not know: the one other record of that producer's state."""
    if used is None or used.snapshot is None or all(e.producer_id in history.entries for e in used.snapshot.entries):
        return None
    older = [s for s in inputs.snapshots if log_start <= s.offset < used.offset and s.snapshot is not None
             and s.snapshot.crc_valid]
    return max(older, key=lambda s: s.offset) if older else None


def _compare(broker: ProducerFold, history: ProducerFold, path: str) -> list[Finding]:
    out = []
    for pid, b in broker.entries.items():
        h = history.entries.get(pid)
        if h is None:
            out.append(Finding(FindingKind.UNKNOWN_PRODUCER_HISTORY,
                               f"producer {pid} is known only from the snapshot (its batches are gone: retention "
                               "or compaction); its state cannot be checked against the log", path))
            continue
        diffs = [f"{name} {getattr(b, name)} (snapshot + replay) vs {getattr(h, name)} (full history)"
                 for name in _COMPARED if getattr(b, name) != getattr(h, name)]
        if diffs:
            out.append(Finding(FindingKind.STATE_DIVERGENCE, f"producer {pid}: " + "; ".join(diffs), path))
    for pid in history.entries.keys() - broker.entries.keys():
        out.append(Finding(FindingKind.STATE_DIVERGENCE, f"producer {pid} appears in the full history but not in "
                           "the broker-equivalent state (snapshot + replay)", path))
    return out


def _txn_index_check(completed: Sequence[CompletedTxn], index: Sequence[AbortedTxnEntry], path: str,
                     log_start: int) -> tuple[Finding, ...]:
    """Aborted transactions implied by ABORT markers vs the ``.txnindex`` entries (aggregated per
    producer: a lost or foreign index yields a few findings and a count)."""
    implied = {(c.producer_id, c.first_offset, c.last_offset): c for c in completed if c.is_aborted}
    indexed = {(e.producer_id, e.first_offset, e.last_offset): e for e in index}
    out = FindingRuns()
    for key, c in implied.items():
        e = indexed.get(key)
        if e is None:
            out.add(Finding(FindingKind.TXN_INDEX_MISMATCH, f"ABORT marker of producer {c.producer_id} at offset "
                            f"{c.last_offset} (transaction from {c.first_offset}) has no .txnindex entry", path,
                            first_offset=c.first_offset, last_offset=c.last_offset), f"producer {c.producer_id}")
        elif e.last_stable_offset != c.last_stable_offset:
            out.add(Finding(FindingKind.TXN_INDEX_MISMATCH, f"producer {c.producer_id}: .txnindex lastStableOffset "
                            f"{e.last_stable_offset}, the replay computes {c.last_stable_offset}", e.path,
                            e.position, e.position + 34, c.first_offset, c.last_offset), f"producer {c.producer_id}")
    for key, e in indexed.items():
        if key not in implied and e.last_offset >= log_start:
            out.add(Finding(FindingKind.TXN_INDEX_MISMATCH, f".txnindex entry for producer {e.producer_id} "
                            f"(offsets {e.first_offset}-{e.last_offset}) matches no ABORT marker in the log",
                            e.path, e.position, e.position + 34, e.first_offset, e.last_offset),
                    f"producer {e.producer_id}")
    return out.findings()


def _batch_start(segments: Sequence[SegmentEvents], offset: int) -> int | None:
    """The base offset of the batch holding ``offset``, where the producer events tell it (a run of batches
    tells its first and its last batch's base offsets); None elsewhere (a plain batch, a run's middle)."""
    for seg in segments:
        for ev in seg.events:
            if isinstance(ev, Marker) or not ev.base_offset <= offset <= ev.last_offset:
                continue
            if ev.last_base_offset is None:
                return ev.base_offset
            return ev.last_base_offset if offset >= ev.last_base_offset else None
    return None


def _stable_offsets(broker: ProducerFold, history: ProducerFold, log_start: int, hw: int,
                    segments: Sequence[SegmentEvents] = ()) -> tuple[int | None, int]:
    """First unstable offset and LSO (``UnifiedLog.lastStableOffset``): open
    transactions, and completed ones whose marker is not below the HW (``unreplicatedTxns``; a
    snapshot does not keep those, so they come from the full history). Below the log start the first
    unstable offset is moved up to it (``UnifiedLog.maybeIncrementFirstUnstableOffset``), and made an
    offset of the log by ``maybeConvertToOffsetMetadata``: a log start inside a batch gives that batch's
    base offset, below the log start. A real Kafka 4.1 broker answers so: DeleteRecords to 7 inside an open
    transaction's batch 5..8 leaves the read_committed end offset at 5, before and after a restart
    (fixtures/live/RECIPE.md, delete-records)."""
    candidates = list(broker.ongoing.values())
    candidates += [c.first_offset for c in history.completed if c.last_offset >= hw]
    if not candidates:
        return None, hw
    fuo = min(candidates)
    if fuo < log_start:
        held = _batch_start(segments, log_start)
        fuo = held if held is not None else log_start
    return fuo, fuo if fuo < hw else hw


def _open_producers(broker: ProducerFold, history: ProducerFold, inputs: PartitionInputs) -> frozenset[int]:
    """Producers with an open transaction: in either fold, or in a producer snapshot (the verdicts read
    those producers' transactions, entries and markers, and no other's)."""
    snapshot_open = (e.producer_id for s in inputs.snapshots if s.snapshot is not None for e in s.snapshot.entries
                     if e.current_txn_first_offset is not None)
    return frozenset(broker.ongoing).union(history.ongoing, snapshot_open)


class StateDisagreement(NamedTuple):
    """The state the broker loads (``loaded``) against another reading of one producer (``other``: the full
    history, else the older snapshot's witness for a producer the history lacks)."""

    loaded: ProducerState | None
    other: ProducerState | None
    loaded_open: int | None  # the open transaction's first offset by each reading (None: none open)
    other_open: int | None
    by_witness: bool


def state_disagreement(broker: ProducerFold, history: ProducerFold, witness: ProducerFold | None,
                       witness_offset: int, pid: int, log_from: int | None = None) -> StateDisagreement | None:
    """How the readings of producer ``pid`` disagree: about its open transaction, its epochs, or its last batch
    (offset and sequence: the full history replays the very batches the loaded state saw last). None: they
    agree, or no other reading knows the producer: its batches are gone, nothing to check against; with
    ``log_from`` (the offset the log's batches start at, and its cleaner's checkpoint: compaction keeps each
    producer's last batch), a last batch the loaded state places at or above it is no gone batch, and on a
    log that starts at 0 uncleaned no batch is gone at all."""
    b, other, by_witness = broker.entries.get(pid), history, False
    if pid not in other.entries and witness is not None:
        other, by_witness = witness, True
    h = other.entries.get(pid)
    found = StateDisagreement(b, h, broker.ongoing.get(pid), other.ongoing.get(pid), by_witness)
    if h is None:  # the witness lacks a producer the loaded state has open from before the witness's offset
        if by_witness:
            return found if found.loaded_open is not None and found.loaded_open < witness_offset else None
        return found if b is not None and log_from is not None and (b.last_offset >= log_from or log_from == 0) else None
    if b is None or found.loaded_open != found.other_open:
        return found
    same = (b.producer_epoch, b.coordinator_epoch, b.last_offset, b.last_sequence) == (
        h.producer_epoch, h.coordinator_epoch, h.last_offset, h.last_sequence)
    return None if same else found


def batches_from(inputs: PartitionInputs) -> int | None:
    """Where the log's batches start (the cleaner's checkpoint where it is higher), None: no segment."""
    if not inputs.segments:
        return None
    return max(inputs.segments[0].base_offset, inputs.cleaner_offset or 0)


def disagreeing_producers(broker: ProducerFold, history: ProducerFold, witness: ProducerFold | None,
                          witness_offset: int, log_from: int | None, limit: int = 2
                          ) -> tuple[tuple[int, StateDisagreement], ...]:
    """The first ``limit`` producers (by id) whose readings disagree, with how (:func:`state_disagreement`). A producer
    the loaded state lacks while the history holds it closed is none: producer ids expire
    (``producer.id.expiration.ms``), an open transaction's never."""
    out: list[tuple[int, StateDisagreement]] = []
    for pid in sorted(broker.entries.keys() | history.entries.keys()):
        if pid not in broker.entries and pid not in history.ongoing:
            continue
        found = state_disagreement(broker, history, witness, witness_offset, pid, log_from)
        if found is not None:
            out.append((pid, found))
            if len(out) == limit:
                break
    return tuple(out)


def repeated_producers(snap: SnapshotRead | None) -> tuple[int, ...]:
    """Producer ids a snapshot lists more than once: ``ProducerStateManager`` writes one entry per producer of
    its map, so a repeat is an edit (the broker would load the last one)."""
    if snap is None or snap.snapshot is None:
        return ()
    seen: dict[int, int] = {}
    for e in snap.snapshot.entries:
        seen[e.producer_id] = seen.get(e.producer_id, 0) + 1
    return tuple(sorted(pid for pid, n in seen.items() if n > 1))


def _lean(fold: ProducerFold, keep: frozenset[int]) -> ProducerFold:
    """``fold`` with the entries and transactions of the producers in ``keep`` only, and no completed
    transactions (read by the rebuild alone)."""
    return replace(fold, spans={pid: s for pid, s in fold.spans.items() if pid in keep}, completed=(),
                   entries={pid: e for pid, e in fold.entries.items() if pid in keep})


def _lean_snapshot(r: SnapshotRead, keep: frozenset[int]) -> SnapshotRead:
    """A snapshot read with the entries of the producers in ``keep`` only, and its newest entry (the
    incident clock reads each file's newest ``lastTimestamp``)."""
    snap = r.snapshot
    if snap is None or not snap.entries:
        return r
    newest = max(snap.entries, key=lambda e: e.last_timestamp)
    kept = tuple(e for e in snap.entries if e.producer_id in keep or e is newest)
    return r._replace(snapshot=replace(snap, entries=kept))


def rebuild_partition(inputs: PartitionInputs, lean: bool = False) -> PartitionView:
    """The replica's state. ``lean`` (verdicts on a partition no other replica compares with): once
    the rebuild's own checks ran, the folds and the snapshots keep the entries and transactions of the
    producers with an open transaction only (all the verdicts read); describe-producers, export and
    the report keep all."""
    read_findings: list[Finding] = list(inputs.findings)
    for seg in inputs.segments:
        read_findings.extend(seg.findings)
    findings: list[Finding] = []
    for read in inputs.snapshots:
        findings.extend(read.findings)
    leo = _log_end(inputs)
    first_base = inputs.segments[0].base_offset if inputs.segments else 0
    log_start = inputs.log_start_offset if inputs.log_start_offset is not None else first_base
    hw_known = inputs.high_watermark is not None
    hw = inputs.high_watermark if inputs.high_watermark is not None else leo
    snap = _choose_snapshot(inputs, log_start, leo, findings)
    has_events = any(seg.events for seg in inputs.segments)
    if snap is None and has_events:
        findings.append(Finding(FindingKind.NO_SNAPSHOT, "no usable producer snapshot: the broker-equivalent state "
                                "is rebuilt from the first segment (producers whose batches were all deleted are "
                                "unknown)", inputs.path))
    sequenced = inputs.topic_partition.topic not in COORDINATOR_WRITTEN_TOPICS
    full = ProducerStateBuilder(cleaner_offset=inputs.cleaner_offset, sequenced=sequenced)
    for seg in inputs.segments:
        full.apply_all(seg.path, seg.events)
    history = full.finish()
    if snap is None and _replays_everything(inputs.segments):
        broker = history  # the same events from the same empty state: the same fold, made once
    else:
        builder = ProducerStateBuilder(snap.snapshot.entries if snap is not None and snap.snapshot else (),
                                       sequenced=sequenced)
        for path, ev in _broker_events(inputs.segments, snap.offset if snap is not None else 0):
            builder.apply(path, ev)
        broker = builder.finish()
    witness, witness_snapshot, witness_offset = None, None, -1
    older = _older_witness(inputs, snap, log_start, history, sequenced)
    if older is not None:
        assert older.snapshot is not None  # _older_witness picks a snapshot that decoded
        again = ProducerStateBuilder(older.snapshot.entries, sequenced=sequenced)
        for path, ev in _broker_events(inputs.segments, older.offset):
            again.apply(path, ev)
        witness, witness_snapshot, witness_offset = again.finish(), older.path, older.offset
    findings.extend(history.findings)
    findings.extend(_compare(broker, history, inputs.path))
    findings.extend(_txn_index_check(history.completed, inputs.txn_index, inputs.path, log_start))
    if hw_known and leo > hw:
        findings.append(Finding(FindingKind.ABOVE_HIGH_WATERMARK, f"offsets {hw}..{leo - 1} lie above the high "
                                f"watermark {hw} (not yet replicated when the copy was taken)", inputs.path,
                                first_offset=hw, last_offset=leo - 1))
    fuo, lso = _stable_offsets(broker, history, log_start, hw, inputs.segments)
    if lean:
        keep = _open_producers(broker, history, inputs).union(
            (pid for pid, _ in disagreeing_producers(broker, history, witness, witness_offset, batches_from(inputs))),
            repeated_producers(snap))  # what the verdicts read
        trimmed = _lean(broker, keep)
        history = trimmed if history is broker else _lean(history, keep)
        witness = _lean(witness, keep) if witness is not None else None
        broker = trimmed
        snapshots = {id(r): _lean_snapshot(r, keep) for r in inputs.snapshots}
        inputs = replace(inputs, snapshots=tuple(snapshots[id(r)] for r in inputs.snapshots))
        snap = snapshots[id(snap)] if snap is not None else None
    max_ts = max((s.max_timestamp for s in inputs.segments if s.max_timestamp is not None), default=None)
    return PartitionView(inputs, log_start, leo, hw, hw_known, broker, history, snap, fuo, lso, max_ts,
                         tuple(read_findings + findings), tuple(findings), witness, witness_snapshot,
                         witness_offset)
