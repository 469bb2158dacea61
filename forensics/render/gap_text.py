"""The words of the gaps in the evidence (:mod:`forensics.analysis.gap_facts`): each fact as the part of a
verdict's reason, the ``evidence.gaps[].text`` of its row and the run's warning about torn logs print it.
Times are written by :func:`~forensics.render.time_text.stamp`, with their age at the as-of time."""

from __future__ import annotations

from collections.abc import Sequence

from forensics.analysis import gap_facts as f
from forensics.analysis.evidence_model import TornLog
from forensics.findings import FindingKind
from forensics.model import first_few
from forensics.render.coverage_text import joined, uncovered_text
from forensics.render.time_text import stamp

_SHOWN_DAMAGE = 3  # damaged places of one log named; the rest are counted
_SHOWN_COORDINATORS = 3  # __transaction_state partitions named by a settling gap or as lacking their copy
_SHOWN_TORN = 3  # torn logs named by the run's warning


def _file_name(path: str | None) -> str:
    return (path or "?").rsplit("/", 1)[-1]


def _minutes(ms: int) -> str:
    return f"{ms / 60_000:g} min"


def _copied(at: int | None, as_of: int | None) -> str:
    return f"copied no earlier than {stamp(at, as_of)}" if at is not None else "copied at a moment nothing on it tells"


def settling_text(s: f.Settling, as_of: int | None = None) -> str:
    """A settling gap's text: what was copied too soon after what."""
    if isinstance(s, f.MarkerMayBeLater):
        return (f"{s.partition} was {_copied(s.copied_ms, as_of)}, less than {_minutes(s.window_ms)} after the "
                f"coordinator's newest record for {s.transactional_id!r} ({s.state_name} at "
                f"{stamp(s.decided_ms, as_of)}): its marker may have landed after this copy")
    names = first_few([f"__transaction_state-{p}" for p in s.partitions], _SHOWN_COORDINATORS)
    what = "the coordinator's record of it" if s.known_id else "a coordinator record of this producer"
    return (f"{names} {'was' if len(s.partitions) == 1 else 'were'} {_copied(s.copied_ms, as_of)}, less than "
            f"{_minutes(s.window_ms)} after this transaction's newest data ({stamp(s.data_ms, as_of)}): {what} "
            "may be newer than this copy")


def _end_text(e: f.EndFact) -> str:
    if isinstance(e, f.BelowHighWatermark):
        return f"below its high watermark {e.high_watermark}"
    if isinstance(e, f.BelowRecoveryPoint):
        return f"below its recovery point {e.recovery_point}"
    if isinstance(e, f.PastRecoveryPoint):
        return (f"past its recovery point {e.recovery_point} although its broker stopped cleanly (a clean stop "
                "checkpoints every log's end): a stale checkpoint or a log of another moment")
    if isinstance(e, f.PastHighWatermark):
        return (f"past its high watermark {e.high_watermark} (replication-offset-checkpoint) although its broker "
                "stopped cleanly and holds its only replica (a sole replica's high watermark is its log end, "
                "checkpointed at a clean stop): a stale checkpoint or a log of another moment")
    if isinstance(e, f.BelowLogStart):
        return f"below its log start offset {e.log_start} (log-start-offset-checkpoint)"
    if isinstance(e, f.EpochPastEnd):
        return f"below the start of its leader epoch {e.epoch} at offset {e.start_offset} (leader-epoch-checkpoint)"
    if isinstance(e, f.IndexPastEnd):
        return f"below offset {e.offset}, which its {e.index} {_file_name(e.index_path)} names"
    if isinstance(e, f.EpochBehindMetadata):
        return (f"its leader-epoch-checkpoint ends at leader epoch {e.last_epoch}, although __cluster_metadata makes "
                f"its broker the leader at epoch {e.led_at} and the broker stopped cleanly (a leader records its epoch "
                "when elected, Partition.makeLeader): a stale or edited checkpoint, or a log of another moment")
    return f"below its producer snapshot {e.offset:020d}.snapshot"


def _open_text(first: int | None) -> str:
    return f"open since offset {first}" if first is not None else "no open transaction"


def _disagreement_text(g: f.FoldDisagreement) -> str:
    d = g.disagreement
    against = (f"the older producer snapshot {g.older_snapshot} plus the replay" if g.older_snapshot is not None
               else "the full history of its segments")
    source = f"the producer snapshot {g.snapshot} plus the replay" if g.snapshot else "the replay the broker would make"
    if d.other is None and d.loaded_open is None and d.loaded is not None:
        what = (f"{source} holds its last batch at offset {d.loaded.last_offset}, but the log, which holds offsets "
                f"{g.log_first if g.log_first is not None else '?'} to {g.log_end - 1}, has no batch of it")
    elif d.other is None:
        what = f"{source} says {_open_text(d.loaded_open)}, but {against} has no entry for it"
    elif d.loaded is None:
        what = f"{source} has no entry for it, {against} {_open_text(d.other_open)}"
    elif d.loaded_open != d.other_open:
        what = f"{source} says {_open_text(d.loaded_open)}, {against} {_open_text(d.other_open)}"
    elif (d.loaded.producer_epoch, d.loaded.coordinator_epoch) != (d.other.producer_epoch, d.other.coordinator_epoch):
        what = (f"{source} gives producer epoch {d.loaded.producer_epoch} and coordinator epoch "
                f"{d.loaded.coordinator_epoch}, {against} {d.other.producer_epoch} and {d.other.coordinator_epoch}")
    else:
        what = (f"{source} gives its last batch at offset {d.loaded.last_offset} with sequence "
                f"{d.loaded.last_sequence}, {against} at {d.other.last_offset} with {d.other.last_sequence}")
    return (f"the producer state of {g.partition} contradicts itself for producer {g.producer_id}: {what} (a snapshot "
            "of another moment or partition, or an edited one)")


def _replica_text(r: f.Replica) -> str:
    return f"broker {r.broker_id}" + (f" ({r.path})" if r.path is not None else "")


def _epochs_text(epochs: Sequence[int]) -> str:
    return ", ".join(map(str, epochs)) or "?"


def _contradiction_text(c: f.Contradiction) -> str:
    if isinstance(c, f.EpochMismatch):
        said = f"epoch {c.expected}" if c.expected is not None else "no epoch (no entry starts at or below it)"
        return (f"the batch holding offset {c.offset} of {c.label} ({c.path} @ byte {c.position}) carries leader "
                f"epoch {c.epoch}, where its leader-epoch-checkpoint gives {said}: an edited or stale checkpoint, or "
                "a log of another moment")
    if isinstance(c, f.RepeatedBatch):
        return (f"the open transaction's first batch ({c.path} @ byte {c.position}) holds the same records as the "
                f"first batch of producer {c.producer_id}'s transaction at offset {c.first_offset} ({c.other_path} @ "
                f"byte {c.other_position}, CRC {c.crc:#010x}): a copy of a batch, not a new transaction")
    if isinstance(c, f.FoldDisagreement):
        return _disagreement_text(c)
    if isinstance(c, f.RepeatedProducer):
        return (f"the producer snapshot {c.snapshot} of {c.partition} lists producer {c.producer_id} more than once "
                "(a broker writes one entry per producer): an edited snapshot")
    if isinstance(c, f.SnapshotWithoutData):
        return (f"the producer snapshot {c.snapshot} says producer {c.producer_id} has a transaction open on "
                f"{c.partition} since offset {c.first_offset}, but no batch of producer {c.producer_id} is in the log, "
                f"which holds offsets {c.log_first} to {c.log_end - 1} (a snapshot of another partition or an edited "
                "one)")
    if isinstance(c, f.CoordinatorRecordsContradict):
        return (f"the coordinator's records of {c.transactional_id!r} contradict each other: {c.problem} at offset "
                f"{c.offset} of __transaction_state-{c.partition} ({c.path} @ byte {c.position}), so its newest "
                "record is not proven to be the coordinator's last word")
    if isinstance(c, f.MixedEpochs):
        return (f"the open transaction from offset {c.first_offset} ({c.path} @ byte {c.position}) holds batches of "
                f"producer epochs {', '.join(map(str, c.epochs))} (one transaction has one epoch: a batch duplicated, "
                "renumbered or of another producer)")
    if isinstance(c, f.RepeatedSequence):
        return (f"the open transaction from offset {c.first_offset} holds a batch repeating sequence numbers its "
                f"producer already wrote at that epoch ({c.path} @ byte {c.position}): a duplicated, renumbered or "
                "replayed batch (a leader that knows the producer refuses it; a late retry after the producer's "
                "state expired looks the same on disk)")
    if isinstance(c, f.AboveHighWatermark):
        return (f"the open transaction's data reaches offset {c.last_offset}, at or above the high watermark "
                f"{c.high_watermark} (replication-offset-checkpoint of {c.log_dir}): never acknowledged, not what "
                "holds the LSO")
    if isinstance(c, f.ReplicaEpochs):
        return (f"{_replica_text(c.replica)}'s leader-epoch-checkpoint of {c.partition} ({c.replica_dir}) starts "
                f"leader epoch {c.epoch} at offset {c.start_offset}, that of the copy read ({c.copy_dir}) at "
                f"{c.copy_start_offset}: one leader writes each epoch and its followers copy it, so one of them is "
                "edited, stale or of another moment")
    return (f"{_replica_text(c.replica)}'s copy of {c.partition} ({c.replica_dir}) holds producer {c.producer_id}'s "
            f"open transaction since offset {c.first_offset} with batches of producer epochs {_epochs_text(c.epochs)}, "
            f"the copy read since offset {c.copy_first_offset} with {_epochs_text(c.copy_epochs)}: the replicas of "
            "one transaction disagree")


def fact_text(fact: f.GapFact, as_of: int | None = None) -> str:
    """The words of one gap's fact."""
    if isinstance(fact, f.Damage):
        if fact.kind is FindingKind.UNREADABLE_FILE:
            return f"cannot be read ({_file_name(fact.path)})"
        where = f"at byte {fact.position} of" if fact.position is not None else "in"
        return f"is damaged {where} {_file_name(fact.path)} ({fact.kind.value})"
    if isinstance(fact, f.MarkerMayBeLater | f.CoordinatorMayBeLater):
        return settling_text(fact, as_of)
    if isinstance(fact, f.Misplaced):
        ids = first_few([f"{tid!r} to {home}" for tid, home in fact.ids], 1)
        return (f"__transaction_state-{fact.partition} holds records of ids that hash to other partitions ({ids}; "
                f"{fact.path} @ byte {fact.position}): a segment of another partition, or a renamed or mixed-up copy, "
                "so it is not proven to hold its own records")
    if isinstance(fact, f.CopyMissing):
        return f"{fact.topic_partition}: {uncovered_text(fact.uncovered)}, which may hold newer records"
    if isinstance(fact, f.CoordinatorCopiesMissing):
        names = first_few([str(t) for t in fact.partitions], _SHOWN_COORDINATORS)
        return (f"{len(fact.partitions)} coordinator partition(s) lack the copy that matters ({names}; "
                f"{uncovered_text(fact.first)}): one may hold this producer's record")
    if isinstance(fact, f.EpochMismatch | f.RepeatedBatch | f.FoldDisagreement | f.RepeatedProducer
                  | f.SnapshotWithoutData | f.CoordinatorRecordsContradict | f.MixedEpochs | f.RepeatedSequence
                  | f.AboveHighWatermark | f.ReplicaEpochs | f.ReplicaTransaction):
        return _contradiction_text(fact)
    return _end_text(fact)


def gap_text(g: f.Gap, as_of: int | None = None) -> str:
    """A gap's text (the row's ``evidence.gaps[].text``, a part of its reason)."""
    return fact_text(g.fact, as_of)


_MEANS = {f.DamageMeans.NOTHING: "",
          f.DamageMeans.MARKER_MAY_BE_MISSING: ": this transaction's marker may be missing from the copy",
          f.DamageMeans.COPY_MAY_NOT_HOLD: ": the copy may not hold what the broker last wrote of this transaction",
          f.DamageMeans.ID_RECORD_MAY_BE_MISSING: ": the id's newest record may be missing",
          f.DamageMeans.PRODUCER_RECORD_MAY_BE_MISSING: ": the record of this producer id may be missing"}


def log_damage_text(d: f.LogDamage, as_of: int | None = None) -> str:
    """``the log of __transaction_state-43 is damaged at byte 534 of 00000000000000000000.log (truncated_tail)
    and ends at offset 4, below its high watermark 5 and its recovery point 5``, and what it means."""
    texts = [(gap_text(g, as_of), g) for g in d.gaps]
    damage = list(dict.fromkeys(t for t, g in texts if g.log_end is None))  # one file unreadable twice: said once
    ends = list({t: (t, g) for t, g in texts if g.log_end is not None}.values())
    parts = damage[:_SHOWN_DAMAGE] + ([f"{len(damage) - _SHOWN_DAMAGE} more damaged places"]
                                      if len(damage) > _SHOWN_DAMAGE else [])
    if ends:
        parts.append(f"ends at offset {ends[0][1].log_end}, {joined([t for t, _ in ends])}")
    return f"the log of {d.label} {joined(parts)}{_MEANS[d.means]}"


def part_text(p: f.Part, as_of: int | None = None) -> str:
    """One part of what keeps a verdict from being proven."""
    if isinstance(p, f.LogDamage):
        return log_damage_text(p, as_of)
    if isinstance(p, f.NotBrokersOwn):
        return gap_text(p.gap, as_of) + ": the id's records there are not proven to be the broker's own"
    return gap_text(p, as_of)


def torn_text(t: TornLog) -> str:
    """What one torn log lacks: ``the log of orders-0 ends at offset 3, below its high watermark 5 (...)``."""
    return "; ".join(part_text(p) for p in t.parts)


def torn_warning(torn: Sequence[TornLog]) -> list[str]:
    """The run's warning about the logs that disagree with what their own files say they held (none: ``[]``)."""
    if not torn:
        return []
    return [f"evidence: {len(torn)} partition(s) whose log disagrees with what their own files say it held, "
            "of which " + first_few([torn_text(t) for t in torn], _SHOWN_TORN, "; ")
            + ": what is missing may hold an open transaction, so no all-clear is proven"]
