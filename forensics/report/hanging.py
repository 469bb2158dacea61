"""``find-hanging`` and ``abort-commands``: verdicts as rows, abort arguments by the safe rule.

The as-of time is never the analysing machine's clock: it is the newest timestamp on the inputs
(batch timestamps of every partition, ``__cluster_metadata`` and ``__transaction_state`` included,
and the times of the checkpoint and clean-shutdown files) unless the caller gives one.

Abort arguments (docs/stuck-lso.md, "5. The abort commands, and the safety rule"): ``--producer-epoch`` = the
leader replica's entry epoch, ``--coordinator-epoch`` = max(that entry's coordinator epoch, 0); never the
coordinator's (possibly higher) epoch, never an inflated coordinator epoch.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple
from types import MappingProxyType
from collections.abc import Mapping, Sequence

from forensics.analysis.broker_version import BrokerVersionRange
from forensics.analysis.clock import AsOf, given
from forensics.analysis.evidence_gaps import BatchCrc, EpochCheck, EvidenceCheck, Reach
from forensics.analysis.filters import Filters
from forensics.analysis.hanging import DEFAULT_MAX_TRANSACTION_TIMEOUT_MS, Verdict, classify
from forensics.analysis.verdict_kinds import Arming, Offer
from forensics.analysis.evidence_model import EvidenceModel
from forensics.analysis.producers import PartitionView
from forensics.analysis.replicas import group_replicas
from forensics.codec.txnlog import TransactionStatus as S
from forensics.layout.names import is_legal_topic
from forensics.model import TopicPartition
from forensics.state.coordinator import Decision
from forensics.columns import ABSENT
from forensics.report.preview import AbortPreview
from forensics.report.rows import HangingRow, RowEvidence
from forensics.report.state import StateReport, newest_input_time, preferred_replica

BOOTSTRAP_PLACEHOLDER = "<bootstrap-server>"
# Which brokers each command form works on (Kafka's ``TransactionsCommand``), by the row key holding it.
COMMAND_FORMS = {
    "abortArgs": "kafka-transactions.sh, legacy form: any broker >= 0.11 with message format v2, run with a 3.x "
                 "(3.0-3.9) tool; a 4.x tool no longer speaks WriteTxnMarkers v0 and needs brokers >= 2.8",
    "abortArgsStartOffset": "kafka-transactions.sh --start-offset form: brokers >= 3.0 (the tool looks the producer "
                            "up with DescribeProducers)",
    "kafkaPythonArgs": "kafka-python admin CLI (pip install kafka-python; 3.x sends WriteTxnMarkers v1+ only): "
                       "brokers >= 2.8; the coordinator epoch is always given: its default -1 is rejected once the "
                       "broker holds one for the producer",
}


START_OFFSET_FROM = (3, 0)  # brokers answering DescribeProducers for the --start-offset form


def active_form(version: BrokerVersionRange | None) -> str:
    """The abort form a script arms: ``--start-offset`` where every broker is known to be 3.0 or newer (the
    tool then looks the producer up live), else the legacy form with the disk's values."""
    known = version.at_least(START_OFFSET_FROM) if version is not None else None
    return "abortArgsStartOffset" if known else "abortArgs"


def leader_views(report: StateReport, topic: str | None = None, partition: int | None = None,
                 broker_id: int | None = None,
                 leaders: Mapping[TopicPartition, tuple[int, int]] = MappingProxyType({})):
    """One replica per partition: the one on ``broker_id`` if given, else the leader ``leaders`` names
    (``__cluster_metadata``'s: (broker, leader epoch)) where it is among them and no replica holds a newer
    leader epoch (then the metadata read is the older record), else the likely leader."""
    groups: dict[tuple[str, int], list] = {}
    for v in selected_replicas(report, Filters(topic, partition, broker_id)):
        groups.setdefault((v.topic_partition.topic, v.topic_partition.partition), []).append(v)
    out = []
    for _, g in sorted(groups.items()):
        leader, epoch = leaders.get(g[0].topic_partition, (None, -1))
        newest = max((v.inputs.leader_epoch for v in g if v.inputs.leader_epoch is not None), default=-1)
        named = [v for v in g if leader is not None and v.inputs.broker_id == leader and epoch >= newest]
        out.append(preferred_replica(named or g))
    return out


def selected_replicas(report: StateReport, selection: Filters) -> list[PartitionView]:
    """The data partition replicas ``selection``'s topic, partition and broker id select."""
    return [v for v in report.partitions
            if selection.selects(v.topic_partition.topic, v.topic_partition.partition, v.inputs.broker_id)]


def find_hanging(report: StateReport, *, as_of: int | None = None, topic: str | None = None,
                 partition: int | None = None, broker_id: int | None = None,
                 max_timeout_ms: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
                 evidence: EvidenceModel | None = None, reach: Reach | None = None,
                 crc: BatchCrc | None = None, epochs: EpochCheck | None = None
                 ) -> tuple[list[Verdict], AsOf]:
    """The verdicts (their reasons as facts: :mod:`forensics.analysis.reasons`) and the as-of time;
    ``evidence``:
    how the evidence was left and what it lacks (:func:`forensics.report.evidence_facts.evidence_model_of`;
    None: not judged);
    ``reach``: what a partition's index files say its log held (the torn-copy test's witness); ``crc``: the
    CRC of the batch at a place of a segment (a copied batch's witness); ``epochs``: the first batch a
    partition's leader-epoch-checkpoint contradicts."""
    when = given(as_of) if as_of is not None else newest_input_time(report)
    views = leader_views(report, topic, partition, broker_id, evidence.coverage.leaders if evidence else {})
    coord = report.coordinator if report.coordinator.partitions else None
    check = EvidenceCheck(report.inventory, coord, evidence.quiescence if evidence else None, reach,
                          evidence.coverage if evidence else None, crc, epochs)
    return classify(views, coord, when.time_ms, max_timeout_ms, group_replicas(report.partitions), check), when


def _abort_prefix(v: Verdict, bootstrap: str, command_config: str | None) -> list[str]:
    tp = v.view.topic_partition
    args = ["kafka-transactions.sh", "--bootstrap-server", bootstrap]
    if command_config:
        args += ["--command-config", command_config]
    return args + ["abort", "--topic", tp.topic, "--partition", str(tp.partition)]


def abort_args(v: Verdict, bootstrap: str = BOOTSTRAP_PLACEHOLDER,
               command_config: str | None = None) -> list[str]:
    """Legacy form (any broker >= 0.11 with a 3.x tool; a 4.x tool needs brokers >= 2.8)."""
    e = v.entry
    return _abort_prefix(v, bootstrap, command_config) + [
        "--producer-id", str(e.producer_id), "--producer-epoch", str(e.producer_epoch),
        "--coordinator-epoch", str(e.abort_coordinator_epoch)]


def start_offset_args(v: Verdict, bootstrap: str = BOOTSTRAP_PLACEHOLDER,
                      command_config: str | None = None) -> list[str]:
    """``--start-offset`` form (brokers 3.0+: the tool looks the producer up with DescribeProducers)."""
    return _abort_prefix(v, bootstrap, command_config) + ["--start-offset", str(v.start_offset)]


def kafka_python_args(v: Verdict, bootstrap: str = BOOTSTRAP_PLACEHOLDER) -> list[str]:
    """kafka-python's admin CLI (``python -m kafka.admin``), always with an explicit coordinator epoch:
    its default of -1 is rejected by a broker that already holds a coordinator epoch for the producer."""
    tp, e = v.view.topic_partition, v.entry
    return ["python", "-m", "kafka.admin", "-b", bootstrap, "transactions", "abort", "-t", tp.topic,
            "-p", str(tp.partition), "--producer-id", str(e.producer_id), "--producer-epoch", str(e.producer_epoch),
            "--coordinator-epoch", str(e.abort_coordinator_epoch)]


def log_dir_brokers(report: StateReport) -> dict[str, int | None]:
    """Each log dir's broker id, by path (what the evidence lines name a log dir by)."""
    return {d.path: d.broker_id for d in report.inventory.log_dirs}


def _commit_pending(v: Verdict) -> bool:
    """The coordinator holds the id in PrepareCommit with this partition in its set."""
    m = v.id_view.metadata if v.id_view is not None else None
    return m is not None and m.state == S.PREPARE_COMMIT and v.view.topic_partition in m.partitions


def abort_candidate(v: Verdict) -> bool:
    """An abort is a possible operator action, as the verdict's kind offers it (:class:`Offer`): always
    (hanging, unverifiable), or where the coordinator decided ABORT but its marker never arrived (stuck,
    fenced)."""
    if _commit_pending(v):
        return False  # the coordinator decided to commit this partition's data and still holds it: never abort
    offer = v.verdict.offer
    return offer is Offer.ALWAYS or (offer is Offer.AFTER_ABORT and v.decision is Decision.ABORT)


def is_armed(v: Verdict, arm_unverifiable: bool = False) -> bool:
    """The abort line is active: proven hanging, or unverifiable for want of coordinator data (not damage) and
    past the age gate when the user asked for it with ``--arm-unverifiable``; never for a topic name no broker
    makes."""
    return _armed(v, arm_unverifiable, is_legal_topic(v.view.topic_partition.topic))


def _armed(v: Verdict, arm_unverifiable: bool, legal_topic: bool) -> bool:
    arming = v.verdict.arming
    return legal_topic and abort_candidate(v) and (arming is Arming.PROVEN or (
        arm_unverifiable and arming is Arming.ON_REQUEST and not v.gaps and v.past_age_gate))


class NotArmed(Enum):
    """Why a row's abort is not armed (its words: :func:`forensics.render.armed_text.not_armed_text`)."""

    COMMIT_PENDING = "commit_pending"  # the coordinator decided to COMMIT and still holds the partition
    ILLEGAL_TOPIC = "illegal_topic"  # the partition dir's topic name is not one Kafka allows
    TOO_RECENT = "too_recent"  # unverifiable: a settling gap (copied too soon after what would change it)
    DAMAGED = "damaged"  # unverifiable: the records it rests on are damaged or incomplete
    YOUNGER_THAN_GATE = "younger_than_gate"  # unverifiable, --arm-unverifiable given: younger than the age gate
    KIND = "kind"  # what its verdict kind says of itself


def not_armed(v: Verdict, arm_unverifiable: bool = False) -> NotArmed | None:
    """``notArmedBecause`` as a fact: why the row's abort is not armed (None when it is)."""
    legal_topic = is_legal_topic(v.view.topic_partition.topic)
    if _armed(v, arm_unverifiable, legal_topic):
        return None
    if _commit_pending(v):
        return NotArmed.COMMIT_PENDING
    if not legal_topic:
        return NotArmed.ILLEGAL_TOPIC
    if v.verdict.arming is Arming.ON_REQUEST:
        if any(g.settling is not None for g in v.gaps):  # a too_recent gap
            return NotArmed.TOO_RECENT
        if v.gaps:
            return NotArmed.DAMAGED
        if arm_unverifiable:
            return NotArmed.YOUNGER_THAN_GATE
    return NotArmed.KIND


class StatedAsOf(NamedTuple):
    """The as-of time a row states (find-hanging): its epoch ms and where it comes from, in words."""

    time_ms: int | None
    source: str


def hanging_row(v: Verdict, bootstrap: str = BOOTSTRAP_PLACEHOLDER, command_config: str | None = None,
                arm_unverifiable: bool = False, version: BrokerVersionRange | None = None, *,
                reason: str, evidence: RowEvidence, advice: list[str], not_armed_because: str | None,
                as_of: StatedAsOf | None = None,
                preview: AbortPreview | None = ABSENT) -> HangingRow:
    """The row of verdict ``v``, with its reason, evidence, advice and why its abort is not armed (of
    :func:`not_armed`) as the caller wrote them (:func:`forensics.render.reasons.worded_row` builds it so);
    ``as_of``: stated in the row (find-hanging);
    ``preview``: what its abort discards (:func:`forensics.report.preview.abort_preview`)."""
    tp = v.view.topic_partition
    e = v.entry
    legal = is_legal_topic(tp.topic)
    armed = _armed(v, arm_unverifiable, legal)
    forms = None
    if abort_candidate(v):
        forms = {"abortArgs": abort_args(v, bootstrap, command_config),
                 "abortArgsStartOffset": start_offset_args(v, bootstrap, command_config),
                 "kafkaPythonArgs": kafka_python_args(v, bootstrap)}
    return HangingRow(
        topic=tp.topic, partition=tp.partition, producer_id=e.producer_id, producer_epoch=e.producer_epoch,
        coordinator_epoch=e.latest_coordinator_epoch, start_offset=v.start_offset, last_timestamp=e.last_timestamp,
        duration_ms=v.duration_ms, verdict=v.verdict.word, reason=reason, transactional_id=v.transactional_id,
        evidence=evidence, broker_id=v.view.inputs.broker_id, last_sequence=e.last_sequence, armed=armed,
        not_armed_because=not_armed_because, abort_forms=forms,
        active_form=active_form(version) if forms else None, advice=advice,
        coordinator_partition=v.coordinator_partition, overdue_ms=v.overdue_ms, verdict_state=v.verdict.value,
        as_of_ms=as_of.time_ms if as_of is not None else ABSENT,
        as_of_source=as_of.source if as_of is not None else ABSENT, abort_preview=preview if forms else ABSENT)


class Outcome(str, Enum):
    """What a run of find-hanging found, as a whole (the command maps it to its exit code)."""

    CLEAR = "clear"  # every open transaction is one its coordinator will finish in time
    HANGING = "hanging"  # at least one transaction is proven hanging
    UNDECIDED = "undecided"  # none proven, but some need a person: unverifiable, stuck, fenced, overdue


def outcome_of(verdicts: Sequence[Verdict]) -> Outcome:
    if any(v.abortable for v in verdicts):
        return Outcome.HANGING
    if any(v.needs_person for v in verdicts):
        return Outcome.UNDECIDED
    return Outcome.CLEAR
