"""The facts of the evidence model, gathered from a state rebuild and the layout: how each log dir was
left (:mod:`forensics.analysis.quiescence`), when each partition was copied at the earliest, and what is
there against what the disk says should be (:mod:`forensics.analysis.coverage`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from collections.abc import Sequence

from forensics.analysis.clock import AsOf, FileTimes
from forensics.analysis.contradictions import replica_epoch_disagreement
from forensics.analysis.evidence_gaps import EvidenceExtents, end_gaps, epoch_gap, log_damage, misplaced_records
from forensics.analysis.gap_facts import Gap, LogDamage
from forensics.analysis.evidence_model import EvidenceModel, TornLog
from forensics.analysis.coverage import Coverage, PresentCopy, PresentLogDir, from_checkpoints, from_image
from forensics.analysis.quiescence import ChangedFile, LogDirFacts, Quiescence, assess, earliest_copy
from forensics.layout import Inventory
from forensics.layout.evidence import modification_times
from forensics.model import CLUSTER_METADATA_TOPIC, TRANSACTION_STATE_TOPIC, TopicPartition
from forensics.analysis.producers import PartitionView
from forensics.pipeline.assemble import live_partitions
from forensics.pipeline.witnesses import epoch_mismatch
from forensics.report.state import StateReport


def quiescence_of(report: StateReport, clock: AsOf, window_ms: int, changed: Sequence[ChangedFile] = (),
                  copy_start_ms: int | None = None, image: Any = None) -> Quiescence:
    """The quiescence of a state report's evidence; ``clock``: the incident clock of the same inputs (whether
    the file times are real), ``changed``: the files that changed while the run read them, ``image``: the
    KRaft cluster image (each broker's newest registration)."""
    dir_of: dict[str, str] = {}
    newest: dict[str, int | None] = {}
    for v in report.partitions:
        i = v.inputs
        dir_of[i.path] = i.log_dir
        snaps = [e.last_timestamp for r in i.snapshots if r.snapshot is not None for e in r.snapshot.entries]
        newest[i.path] = max([t for t in (v.max_timestamp, *snaps) if t is not None], default=None)
    for cp in report.coordinator.partitions.values():
        ti = cp.inputs
        dir_of[ti.path] = ti.log_dir
        times = [s.max_timestamp for s in ti.segments if s.max_timestamp is not None]
        newest[ti.path] = max(times + list(cp.state.newest_update.values()), default=None)
    brokers = image.brokers if image is not None and image.origin in ("snapshot", "log") else {}
    facts = [LogDirFacts(d.path, d.broker_id, d.had_clean_shutdown, d.lock_pid,
                         d.clean_shutdown.broker_epoch if d.clean_shutdown is not None else None,
                         brokers[d.broker_id].epoch if d.broker_id in brokers else None)
             for d in report.inventory.log_dirs]
    loose = [p.path for p in report.inventory.partitions]
    q = assess(facts, loose, changed, {}, dir_of, window_ms)
    if q.proven:
        return q  # every partition is final: no copy time is needed
    trust = clock.file_times is FileTimes.AGREE
    files = {p.path: [s.log for s in p.segments if s.log] + [s.path for s in p.snapshots]
             for _, p in report.inventory.all_partitions()} if trust else {}
    copied = {}
    for path in newest:
        mtimes = [t for t, _ in modification_times(files.get(path, ()))]
        at = earliest_copy(newest[path], mtimes, clock.time_ms, trust, copy_start_ms)
        if at is not None:
            copied[path] = at
    return replace(q, copied_by=copied)


def coverage_of(inventory: Inventory, image: Any = None) -> Coverage:
    """What ``inventory`` holds against what should exist: by the KRaft cluster ``image``
    (``forensics.state.cluster_image.ClusterImage``) where it holds records, else by the log dirs'
    checkpoints; a KRaft broker's log dirs without any ``__cluster_metadata`` among the inputs are named
    (its metadata log dir was left out: nothing then names its other log dirs or the cluster's brokers)."""
    log_dirs = [PresentLogDir(d.path, d.broker_id, d.directory_id,
                              tuple(sorted(set(d.recovery_points) | set(d.high_watermarks) | set(d.log_start_offsets))))
                for d in inventory.log_dirs]
    copies = [PresentCopy(p.topic_partition, d.broker_id if d is not None else None,
                          d.directory_id if d is not None else None, p.path, d.path if d is not None else None)
              for d, p in live_partitions(inventory) if p.topic_partition is not None]
    has_metadata = any(p.topic == CLUSTER_METADATA_TOPIC for _, p in inventory.all_partitions())
    kraft = [d.path for d in inventory.log_dirs if d.meta is not None and d.meta.version == 1]
    if image is not None and image.origin in ("snapshot", "log"):  # a metadata log was read (not bootstrap only)
        holding = {d.path for d, p in inventory.all_partitions()
                   if d is not None and p.topic_partition is not None and p.topic_partition.topic == CLUSTER_METADATA_TOPIC}
        lacking = tuple(d.path for d in inventory.log_dirs if d.bootstrap_checkpoint and d.path not in holding)
        # records Kafka's replay refuses (or that do not decode) leave an image that is not the broker's
        return replace(from_image(image, log_dirs, copies), metadata_incomplete=not image.complete or image.unapplied > 0,
                       metadata_copies_missing=lacking)
    base = from_checkpoints(log_dirs, copies)
    return replace(base, metadata_missing=tuple(kraft) if kraft and not has_metadata else ())


def torn_logs(report: StateReport, coverage: Coverage) -> tuple[TornLog, ...]:
    """The partitions whose log (the copy verdicts read: the likely leader's) ends below what its own
    checkpoints, leader epochs and snapshots say it held, and the coordinator partitions that do or that
    hold other partitions' records."""
    from forensics.report.hanging import leader_views

    extents = EvidenceExtents(report.inventory, coverage=coverage)
    groups: dict[TopicPartition, list[PartitionView]] = {}
    for r in report.partitions:
        groups.setdefault(r.topic_partition, []).append(r)
    out = []
    for v in leader_views(report, leaders=coverage.leaders):
        gaps = end_gaps(extents.of_view(v))
        parts: list[LogDamage | Gap] = [log_damage(str(v.topic_partition), gaps)] if gaps else []
        disagreeing = _replicas_disagree(v, groups.get(v.topic_partition, []))
        if disagreeing is not None:
            parts.append(disagreeing)
        if parts:
            out.append(TornLog(v.topic_partition, tuple(parts)))
    coordinator = report.coordinator
    misplaced = misplaced_records(coordinator)
    for part, cp in sorted(coordinator.partitions.items()):
        extent = extents.of_coordinator(part, cp, with_findings=False)
        gaps = end_gaps(extent)
        said = ([log_damage(extent.label, gaps)] if gaps else []) + ([misplaced[part]] if part in misplaced else [])
        if said:
            out.append(TornLog(TopicPartition(TRANSACTION_STATE_TOPIC, part), tuple(said)))
    return tuple(out)


def _replicas_disagree(view: PartitionView, replicas: Sequence[PartitionView]) -> Gap | None:
    """The leader-epoch evidence the choice of ``view`` among ``replicas`` rests on, where it contradicts itself:
    replicas starting one epoch at different offsets, or (when another replica holds an open transaction the
    copy read does not: the choice decides the verdict) the copy read's batches against its checkpoint."""
    if len(replicas) < 2:
        return None
    found = replica_epoch_disagreement(view, replicas)
    if found is None and any(set(o.open_transactions) - set(view.open_transactions) for o in replicas):
        i = view.inputs
        found = epoch_gap(epoch_mismatch, str(view.topic_partition), i.path, [s.path for s in i.segments],
                          i.leader_epochs, view.log_start_offset)
    return found


def evidence_model_of(report: StateReport, clock: AsOf, window_ms: int, changed: Sequence[ChangedFile] = (),
                      copy_start_ms: int | None = None, image: Any = None) -> EvidenceModel:
    """The evidence model of a state rebuild (see :mod:`forensics.analysis.evidence_model`)."""
    coverage = coverage_of(report.inventory, image)
    return EvidenceModel(quiescence_of(report, clock, window_ms, changed, copy_start_ms, image), coverage,
                         torn_logs(report, coverage), no_coordinator=not report.coordinator.partitions)
