"""Evidence that contradicts itself about one open transaction: never a verdict to act on.

A verdict is only as good as the records it rests on agreeing with each other. Three contradictions
make an open transaction ``unverifiable``, with the records named by file and byte position:

* **the two rebuilds disagree**: the newest producer snapshot plus the replay after it (what the broker
  loads, ``UnifiedLog.rebuildProducerState``) and the full history of every segment differ about the
  producer's open transaction (open or not, since which offset) or its epochs, the values an abort is
  given: a snapshot of another moment, another partition's snapshot, or an edited one;
* **the coordinator's records contradict each other**: a transition Kafka's ``TransactionState`` does
  not allow (``validPreviousStates``: a re-appended older record, PrepareCommit then Empty at the same
  epoch) or a status it cannot load; the newest record then is not the coordinator's last word;
* **the transaction's own data contradicts itself**: batches of several producer epochs inside one
  transaction (a leader refuses a lower epoch, ``ProducerAppendInfo``; a duplicated or renumbered batch
  shows as one), or data above the high watermark (never acknowledged: not what consumers wait on).
  A lower epoch at the transaction's *first* batch is KAFKA-9144's signature, not a contradiction.

Each contradiction is a :class:`~forensics.analysis.gap_facts.Gap` of kind ``contradiction`` holding its fact
(:mod:`forensics.analysis.gap_facts`: the files, byte positions, offsets, epochs and broker ids that disagree);
:mod:`forensics.render.gap_text` writes the words.
"""

from __future__ import annotations

from collections.abc import Sequence

from forensics.analysis.coordinator import TransactionIdView
from forensics.analysis import gap_facts as gf
from forensics.analysis.gap_facts import Gap, GapKind
from forensics.analysis.replicas import replica_of
from forensics.analysis.producers import (PartitionView, StateDisagreement, batches_from, disagreeing_producers,
                                         repeated_producers, state_disagreement)
from forensics.state.producer import TransactionSpan



def fold_disagreement(view: PartitionView, pid: int) -> Gap | None:
    """Snapshot + replay against the full history, for one producer (None: they agree, or the history
    does not know the producer: its batches are gone, nothing to check against)."""
    d = state_disagreement(view.broker, view.history, view.witness, view.witness_offset, pid)
    return _disagreement_gap(view, pid, d) if d is not None else None


def _disagreement_gap(view: PartitionView, pid: int, d: StateDisagreement) -> Gap:
    snap = view.snapshot_used.path if view.snapshot_used is not None else None
    segments = view.inputs.segments
    fact = gf.FoldDisagreement(view.topic_partition, pid, snap, str(view.witness_snapshot) if d.by_witness else None,
                               d, segments[0].base_offset if segments else None, view.log_end_offset)
    return Gap(GapKind.CONTRADICTION, fact, snap or view.inputs.path, partition_dir=view.inputs.path)


def other_producers_disagreement(view: PartitionView) -> tuple[tuple[int | None, Gap], ...]:
    """(producer, :func:`fold_disagreement`) of the first two producers of the partition whose readings
    disagree (``producers.disagreeing_producers``): a loaded state that contradicts the full history for any
    producer is not the broker's own (another moment's or partition's snapshot, or an edited one), so no
    verdict on the partition rests on it whole. First, (None, gap) when the snapshot used lists a producer
    twice (``producers.repeated_producers``)."""
    start = batches_from(view.inputs)
    out: list[tuple[int | None, Gap]] = []
    repeated = repeated_producers(view.snapshot_used)
    if repeated and view.snapshot_used is not None:
        path = view.snapshot_used.path
        fact = gf.RepeatedProducer(path, view.topic_partition, repeated[0])
        out.append((None, Gap(GapKind.CONTRADICTION, fact, path, partition_dir=view.inputs.path)))
    for pid, d in disagreeing_producers(view.broker, view.history, view.witness, view.witness_offset, start):
        out.append((pid, _disagreement_gap(view, pid, d)))
    return tuple(out)


def snapshot_without_data(view: PartitionView, pid: int) -> Gap | None:
    """The state the broker loads holds an open transaction the log should hold the data of (its first offset
    at or past the log's first offset) but the log has no batch of that producer at all: a snapshot of another
    partition or an edited one (retention or compaction leave no such thing: the data below the log start is
    gone with the snapshot's first offset)."""
    first = view.broker.ongoing.get(pid)
    segments = view.inputs.segments
    if first is None or pid in view.history.entries or not segments or first < segments[0].base_offset:
        return None
    snap = view.snapshot_used.path if view.snapshot_used is not None else view.inputs.path
    fact = gf.SnapshotWithoutData(snap, pid, view.topic_partition, first, segments[0].base_offset, view.log_end_offset)
    return Gap(GapKind.CONTRADICTION, fact, snap, partition_dir=view.inputs.path)


def coordinator_contradiction(v: TransactionIdView | None) -> Gap | None:
    """The id's coordinator records hold a transition a coordinator never writes."""
    if v is None or v.summary.illegal is None:
        return None
    bad = v.summary.illegal
    fact = gf.CoordinatorRecordsContradict(v.transactional_id, bad.problem, bad.offset, v.partition, bad.at.path,
                                           bad.at.position)
    return Gap(GapKind.CONTRADICTION, fact, bad.at.path, bad.at.position)


def data_contradictions(view: PartitionView, span: TransactionSpan | None) -> list[Gap]:
    """The open transaction's data against itself and the high watermark."""
    if span is None:
        return []
    out = []
    where = span.start
    path = where.path if where is not None else view.inputs.path
    position = where.position if where is not None else None
    if len(span.data_epochs) > 1:
        out.append(Gap(GapKind.CONTRADICTION, gf.MixedEpochs(span.first_offset, path, position, tuple(span.data_epochs)), path,
                       position, partition_dir=view.inputs.path))
    if span.duplicate_at is not None:
        d = span.duplicate_at
        out.append(Gap(GapKind.CONTRADICTION, gf.RepeatedSequence(span.first_offset, d.path, d.position), d.path, d.position,
                       partition_dir=view.inputs.path))
    last = span.last_data_offset
    if view.high_watermark_known and last is not None and last >= view.high_watermark:
        out.append(Gap(GapKind.CONTRADICTION, gf.AboveHighWatermark(last, view.high_watermark, view.inputs.log_dir), path,
                       position, partition_dir=view.inputs.path))
    return out


def contradictions(view: PartitionView, pid: int, span: TransactionSpan | None,
                   v: TransactionIdView | None) -> tuple[Gap, ...]:
    """Every contradiction about the open transaction of ``pid`` on ``view``."""
    found = [fold_disagreement(view, pid), snapshot_without_data(view, pid), coordinator_contradiction(v)]
    return tuple(g for g in found if g is not None) + tuple(data_contradictions(view, span))


def replica_epoch_disagreement(view: PartitionView, replicas: Sequence[PartitionView]) -> Gap | None:
    """Another replica's ``leader-epoch-checkpoint`` starts a leader epoch at another offset than ``view``'s:
    one leader writes each epoch, and a follower takes its entries from the leader's batches, so replicas
    agree wherever both hold an epoch (but for an entry moved up to the log start, ``truncateFromStart``)."""
    mine = {e.epoch: e.start_offset for e in view.inputs.leader_epochs if e.start_offset != view.log_start_offset}
    for o in replicas:
        if o is view:
            continue
        for e in o.inputs.leader_epochs:
            at = mine.get(e.epoch)
            if at is None or at == e.start_offset or e.start_offset == o.log_start_offset:
                continue
            fact = gf.ReplicaEpochs(gf.Replica(*replica_of(o, replicas)), view.topic_partition, o.inputs.path, e.epoch, e.start_offset,
                                    view.inputs.path, at)
            return Gap(GapKind.CONTRADICTION, fact, o.inputs.path, partition_dir=o.inputs.path)
    return None


def replica_disagreement(view: PartitionView, replicas: Sequence[PartitionView], pid: int) -> Gap | None:
    """Another replica holds the same open transaction differently: open since another offset, or with batches
    of several producer epochs (a follower copies the leader's batches, so both hold one transaction alike). A
    replica where it is closed (a marker the copy read lost) or not yet open (a lagging follower) is no
    contradiction: the reason names the first, the second is the normal lag."""
    first = view.open_transactions.get(pid)
    mine = view.open_span(pid)
    ours = tuple(mine.data_epochs) if mine is not None else ()
    for o in replicas:
        if o is view:
            continue
        theirs = o.open_transactions.get(pid, o.history.ongoing.get(pid))
        if theirs is None:
            continue
        span = o.open_span(pid)
        epochs = tuple(span.data_epochs) if span is not None else ()
        if theirs == first and len(epochs) <= 1 and (not epochs or not ours or epochs == ours):
            continue
        fact = gf.ReplicaTransaction(gf.Replica(*replica_of(o, replicas)), view.topic_partition, o.inputs.path, pid, theirs, epochs,
                                     first, ours)
        return Gap(GapKind.CONTRADICTION, fact, o.inputs.path, partition_dir=o.inputs.path)
    return None
