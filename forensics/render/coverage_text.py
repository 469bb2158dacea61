"""The words of the evidence's coverage (:mod:`forensics.analysis.coverage`): why a partition's copy that matters
is missing, and the lines every output gives about what is missing or what nothing on the disk tells."""

from __future__ import annotations

from collections.abc import Sequence

from forensics.analysis.coverage import Coverage, CoverageSource, Uncovered, UncoveredWhy
from forensics.model import TopicPartition, first_few

SHOWN = 3  # partitions named per missing piece


def names(tps: Sequence[TopicPartition]) -> str:
    """The first few partitions, and how many more."""
    return first_few([str(tp) for tp in tps], SHOWN)


def joined(parts: Sequence[str]) -> str:
    """``a, b and c``."""
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def uncovered_text(u: Uncovered) -> str:
    """``its leader's copy (broker 3, log dir 1aB...) is not among the inputs; broker 2's is``."""
    if u.why is UncoveredWhy.LISTED_NOT_GIVEN:
        who = f"broker {u.leader}" if u.leader is not None else u.log_dir
        return (f"{who}'s checkpoints list it, but its partition dir is not among the inputs ({u.log_dir}): that copy "
                "may be the leader's")
    others = joined([f"broker {b}'s" for b in u.held]) if u.held else "no replica's"
    if u.why is UncoveredWhy.LEADER_COPY_MISSING:
        where = f", log dir {u.directory_id}" if u.directory_id else ""
        return (f"its leader's copy (broker {u.leader}{where}) is not among the inputs; {others} "
                f"{'are' if len(u.held) > 1 else 'is'}")
    return f"it has no leader, and {others} {'copies are' if len(u.held) > 1 else 'copy is'} among the inputs"


def coverage_lines(c: Coverage) -> list[str]:
    """The lines every output gives about the coverage: what is missing, or what nothing on the disk tells."""
    out = []
    for b in c.missing_brokers:
        what = f"leader of {len(b.leads)} partition(s), of which {names(list(b.leads))}" if b.leads else "it leads nothing"
        out.append(f"evidence: broker {b.broker_id} is registered in __cluster_metadata but none of its log dirs is "
                   f"among the inputs ({what})")
    for m in c.missing_log_dirs:
        out.append(f"evidence: broker {m.broker_id}'s log dir {m.directory_id} is registered but not among the inputs "
                   f"({len(m.partitions)} partition(s) assigned to it, of which {names(list(m.partitions))})"
                   if m.partitions else f"evidence: broker {m.broker_id}'s log dir {m.directory_id} is registered but "
                   "not among the inputs (no partition is assigned to it)")
    counted = {tp for b in c.missing_brokers for tp in b.leads} | {tp for m in c.missing_log_dirs for tp in m.partitions}
    rest = [u for tp, u in c.uncovered.items() if tp not in counted]
    if rest:
        out.append(f"evidence: {len(rest)} partition(s) without the copy that matters among the inputs, of which "
                   + "; ".join(f"{u.topic_partition}: {uncovered_text(u)}" for u in rest[:SHOWN]))
    if c.metadata_incomplete:
        out.append("evidence: the __cluster_metadata log read is incomplete (damaged, records missing, or records "
                   "that do not decode or that Kafka's replay refuses: see its findings): what it says should exist "
                   "may be out of date, so no all-clear is proven")
    if c.metadata_copies_missing:
        out.append(f"evidence: metadata log dir(s) {', '.join(c.metadata_copies_missing[:SHOWN])} given without "
                   "their __cluster_metadata-0 (their bootstrap.checkpoint makes them the metadata dir): the copy "
                   "read may lag the one left out, so no all-clear is proven; add it")
    if c.metadata_missing:
        out.append(f"evidence: KRaft broker log dir(s) {', '.join(c.metadata_missing[:SHOWN])} given, but the log dir "
                   "holding __cluster_metadata is missing: nothing names the broker's other log dirs, the cluster's "
                   "brokers, the partitions' leaders or __transaction_state's partition count, so no all-clear is "
                   "proven; add the metadata log dir (metadata.log.dir, else the first of log.dirs)")
    elif c.source is CoverageSource.CHECKPOINTS:
        out.append("evidence: no __cluster_metadata among the inputs (a ZooKeeper-era disk, or its metadata log dir "
                   "left out): the cluster's other brokers and the partitions' leaders are not on these disks; "
                   f"brokers {', '.join(map(str, c.brokers_present)) or 'none'} judged as given")
    return out
