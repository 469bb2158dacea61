"""The words of a verdict: its reason (:mod:`forensics.analysis.reasons`) as the line find-hanging,
abort-commands and the report print, and its evidence as the JSON object of a row's ``evidence``.
Times are written by :func:`~forensics.render.time_text.stamp`, with their age at the as-of time."""

from __future__ import annotations

from typing import Any

from forensics.analysis import reasons as r
from forensics.analysis.broker_version import BrokerVersionRange
from forensics.analysis.clock import AsOf
from forensics.analysis.gap_facts import Gap
from forensics.analysis.hanging import Verdict, VerdictEvidence, evidence_of
from forensics.columns import ABSENT
from forensics.model import first_few
from forensics.render.advice_text import advice_lines
from forensics.render.armed_text import not_armed_text
from forensics.render.gap_text import gap_text, log_damage_text, part_text
from forensics.render.time_text import stamp
from forensics.render.clock_text import as_of_source
from forensics.report.hanging import BOOTSTRAP_PLACEHOLDER, StatedAsOf, hanging_row, not_armed
from forensics.report.rows import (
    BatchPlace, CoordinatorRecordEvidence, GapEvidence, HangingRow, OpenTransactionEvidence, RowEvidence)

_SHOWN_MISSING = 10  # __transaction_state partitions named as missing from the inputs
# the tails of an unproven reason (analysis/reasons.Unproven): a hanging verdict resting on damaged records, and
# one the settling rule kept from being judged
TORN_OR_LOST = ("a torn or partial copy and a marker really lost look alike on disk: only the live cluster "
                "tells them apart (the guard in abort-commands compares with describe-producers)")
TOO_RECENT_ADVICE = ("too recent to judge from this copy: judge it on the live cluster (kafka-transactions.sh "
                     "find-hanging, describe-producers) or on a copy taken after the brokers stopped cleanly, or give "
                     "--copy-start when the copy began later than the disk shows")


def _classified(c: r.Classified, as_of: int | None) -> str:
    if isinstance(c, r.Fenced):
        where = f" (its {c.marker_outcome} marker at offset {c.marker_offset})" if c.marker_outcome is not None else ""
        return (f"{c.partition} holds coordinator epoch {c.coordinator_epoch} for producer {c.producer_id}"
                f"{where}, above the coordinator's own epoch {c.coordinator_own_epoch} (__transaction_state-"
                f"{c.transaction_state_partition}, broker {c.coordinator}): the partition refuses the real "
                "coordinator's markers (TRANSACTION_COORDINATOR_FENCED), as after an abort given a too-high "
                f"--coordinator-epoch; or this copy of __transaction_state-{c.transaction_state_partition} lacks its "
                "newest leader epoch")
    if isinstance(c, r.IdExpired):
        return (f"transactional id {c.transactional_id!r} expired: tombstone at offset "
                f"{c.tombstone_offset if c.tombstone_offset is not None else '?'} of "
                f"__transaction_state-{c.transaction_state_partition}")
    if isinstance(c, r.ProducerIdRotated):
        return (f"producer id rotated: {c.transactional_id!r} now uses producer id {c.producer_id} "
                f"(epoch {c.producer_epoch})")
    if isinstance(c, r.NothingInFlight):
        return (f"coordinator has {c.transactional_id!r} in {c.state_name} (epoch {c.producer_epoch}): "
                "no transaction in flight, no marker will come")
    if isinstance(c, r.NotInPartitionSet):
        return (f"{c.partition} is not in the partition set of {c.transactional_id!r} ({c.state_name}: "
                f"{', '.join(map(str, c.partitions)) or 'none'})")
    if isinstance(c, r.OngoingBelowEpoch):
        return (f"Ongoing at epoch {c.coordinator_epoch}, below the partition's epoch {c.partition_epoch}: "
                "the coordinator's markers would be rejected")
    if isinstance(c, r.Ongoing):
        return (f"Ongoing with {c.partition} in its set since {stamp(c.start_ms, as_of)}: the coordinator will "
                f"commit, abort or time it out ({c.timeout_ms} ms)")
    if isinstance(c, r.Prepared):
        what = "COMMIT" if c.commit else "ABORT"
        return (f"{c.state_name} with {c.partition} still pending: the {what} marker never arrived"
                + (" (do NOT abort: the coordinator decided to commit)" if c.commit else ""))
    if isinstance(c, r.InState):
        return f"coordinator has {c.transactional_id!r} in {c.state_name}"
    if isinstance(c, r.NoCoordinator):
        return ("no __transaction_state in the inputs: the coordinator may still complete this "
                "transaction; judged by age alone, as Kafka's find-hanging does")
    if isinstance(c, r.CoordinatorPartitionsMissing):
        return (f"no coordinator record for producer id {c.producer_id}, but __transaction_state partitions "
                f"{first_few([str(p) for p in c.missing], _SHOWN_MISSING)} are not among the inputs: the "
                "coordinator may still complete this transaction")
    if isinstance(c, r.PartitionCountUnknown):
        n = c.partition_count
        return (f"no coordinator record for producer id {c.producer_id} in the {n} __transaction_state partitions "
                f"read (0-{n - 1}), but nothing on the disk gives their count (no __cluster_metadata "
                "among the inputs): a higher-numbered partition may hold it; give "
                "--transaction-state-partitions N (kafka-topics.sh --describe --topic "
                "__transaction_state, or the brokers' transaction.state.log.num.partitions)")
    return f"no coordinator record for producer id {c.producer_id} in any __transaction_state partition"


def pattern_text(p: r.Pattern) -> str:
    """A pattern a hang shows (KAFKA-9144, KAFKA-7408)."""
    if isinstance(p, r.Kafka9144):
        return (f"KAFKA-9144 pattern: {p.outcome} marker at offset {p.marker_offset} carried epoch "
                f"{p.marker_epoch}, yet this transaction's data at offset {p.start_offset} has epoch {p.epoch}")
    if isinstance(p, r.LeaderChange):
        return (f"leader epoch {p.epoch} began at offset {p.start_offset}, after this transaction started: if "
                "its marker was lost there (truncation, unclean election: KAFKA-7408) another replica may hold it")
    return (f"marker lost on this replica (KAFKA-7408): broker {p.broker_id} holds its {p.outcome} marker at offset "
            f"{p.offset} (epoch {p.epoch}, coordinatorEpoch {p.coordinator_epoch}) in {p.path} @ byte {p.position}")


def reason_text(reason: r.Reason, as_of: int | None = None) -> str:
    """A verdict's reason as its row prints it; ``as_of``: the as-of time the times are aged from."""
    if isinstance(reason, r.Patterned):
        return _classified(reason.reason, as_of) + "".join(f"; {pattern_text(p)}" for p in reason.patterns)
    if isinstance(reason, r.Unproven):
        parts = [part_text(p, as_of) for p in reason.parts]
        tail = ([TORN_OR_LOST] if reason.torn_or_lost else []) + ([TOO_RECENT_ADVICE] if reason.too_recent else [])
        return (f"not proven: {reason_text(reason.reason, as_of)}; but {'; '.join(parts)}"
                + "".join(f"; {t}" for t in tail))
    if isinstance(reason, r.Overdue):
        return (f"Ongoing with {reason.partition} in its set since {stamp(reason.start_ms, as_of)}, past its own "
                f"timeout ({reason.timeout_ms} ms) since {stamp(reason.start_ms + reason.timeout_ms, as_of)}: the "
                "coordinator should have aborted it, yet its records still hold it Ongoing, so no marker is proven "
                "missing")
    if isinstance(reason, r.SnapshotOnly):
        damage = f"; {log_damage_text(reason.damage, as_of)}" if reason.damage is not None else ""
        return (f"open since offset {reason.first_offset} in the producer snapshot {reason.snapshot_file}, but the "
                f"log read does not show it{damage}: what holds the LSO there cannot be read; the coordinator: "
                f"{_classified(reason.coordinator, as_of)}")
    if isinstance(reason, r.HistoryOnly):
        where = ("the full history of the segments" if reason.older_snapshot is None else
                 f"the older producer snapshot {reason.older_snapshot} plus the replay")
        return (f"open since offset {reason.first_offset} in {where}, but not in the state the broker "
                f"loads: {gap_text(reason.disagreement, as_of) if reason.disagreement is not None else 'the readings disagree'}; "
                f"the coordinator: {_classified(reason.coordinator, as_of)}")
    return _classified(reason, as_of)


def gap_row(g: Gap, as_of: int | None = None) -> GapEvidence:
    """A gap as the row's ``evidence.gaps`` lists it, with its words."""
    return GapEvidence(kind=g.kind.value, text=gap_text(g, as_of), path=g.path, position=g.position, log_end=g.log_end,
                       partition_dir=g.partition_dir)


def gap_json(g: Gap, as_of: int | None = None) -> dict[str, Any]:
    """A gap as JSON writes it in the row's ``evidence.gaps``."""
    return gap_row(g, as_of).as_json()


def evidence_row(ev: VerdictEvidence, as_of: int | None = None) -> RowEvidence:
    """Files, byte positions, offsets and coordinator records behind a verdict: the row's ``evidence`` (its
    JSON keys as :class:`~forensics.report.rows.RowEvidence` declares them), the gaps' words written."""
    span, c = ev.span, ev.coordinator_record
    return RowEvidence(
        partition_dir=ev.partition_dir, broker_id=ev.broker_id,
        first_batch=BatchPlace(path=span.start.path, position=span.start.position) if span and span.start else None,
        snapshot=ev.snapshot, log_start_offset=ev.log_start_offset, high_watermark=ev.high_watermark,
        last_stable_offset=ev.last_stable_offset,
        open_transaction=None if span is None else OpenTransactionEvidence(
            first_offset=span.first_offset, last_data_offset=span.last_data_offset, batches=span.batches,
            records=span.records, bytes=span.bytes, epochs=list(span.data_epochs), from_snapshot=span.from_snapshot),
        coordinator_record=ABSENT if c is None else CoordinatorRecordEvidence(
            partition=ev.coordinator_partition, offset=c.offset, state=c.state_name, timestamp=c.timestamp,
            path=c.at.path, position=c.at.position),
        gaps=[gap_row(g, as_of) for g in ev.gaps] if ev.gaps else ABSENT)


def evidence_json(ev: VerdictEvidence, as_of: int | None = None) -> dict[str, Any]:
    """The row's ``evidence`` as JSON writes it."""
    return evidence_row(ev, as_of).as_json()


def worded_row(v: Verdict, when: AsOf, *, bootstrap: str = BOOTSTRAP_PLACEHOLDER, command_config: str | None = None,
               arm_unverifiable: bool = False, version: BrokerVersionRange | None = None,
               as_of: AsOf | None = None) -> HangingRow:
    """The row of verdict ``v`` (:func:`forensics.report.hanging.hanging_row`: its abort commands name
    ``bootstrap`` and ``command_config``; ``as_of``: stated in the row) with its reason, evidence and advice
    written out, their times aged from ``when``."""
    return hanging_row(v, bootstrap, command_config, arm_unverifiable, version,
                       reason=reason_text(v.reason, when.time_ms),
                       evidence=evidence_row(evidence_of(v), when.time_ms), advice=advice_lines(v.advice),
                       not_armed_because=not_armed_text(not_armed(v, arm_unverifiable), v.verdict),
                       as_of=StatedAsOf(as_of.time_ms, as_of_source(as_of)) if as_of is not None else None)
