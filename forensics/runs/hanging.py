"""find-hanging, abort-commands and the incident report: verdicts on every open transaction, offline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING
from forensics.dataclass_fast import dataclass

from forensics.analysis.broker_version import BrokerVersionRange, Version
from forensics.analysis.clock import AsOf
from forensics.analysis.evidence_model import EvidenceModel, NoAllClear
from forensics.analysis.filters import Filters
from forensics.analysis.hanging import DEFAULT_MAX_TRANSACTION_TIMEOUT_MS, Verdict
from forensics.analysis.quiescence import ChangedFile
from forensics.findings import Finding
from forensics.layout import Inventory
from forensics.layout.evidence import changed_segments
from forensics.model import TRANSACTION_STATE_TOPIC
from forensics.pipeline.cluster_metadata import EVIDENCE_RECORD_TYPES, read_cluster_image
from forensics.pipeline.plan import plan
from forensics.pipeline.stats import EngineStats
from forensics.pipeline.witnesses import batch_crc, epoch_mismatch, index_reach
from forensics.render.broker_version_text import version_label
from forensics.render.evidence_text import evidence_lines
from forensics.render.reasons import worded_row
from forensics.render.clock_text import as_of_source
from forensics.report.evidence_facts import evidence_model_of
from forensics.report.hanging import (
    BOOTSTRAP_PLACEHOLDER,
    HangingRow,
    Outcome,
    find_hanging as verdicts_of,
    log_dir_brokers,
    outcome_of,
)
from forensics.report.state import (
    StateFolder,
    StateReport,
    assemble_state,
    loose_file_notes,
    newest_input_time,
    state_scope,
)
from forensics.runs.broker_version import broker_version_of
from forensics.runs.context import EngineChoice, Evidence, Listener, Opened, Quiet, open_evidence
from forensics.runs.manifest import ManifestWritten
from forensics.runs.rebuild import previews

if TYPE_CHECKING:  # (the incident model is loaded by the report alone: incident_report)
    from forensics.report.incident_model import Incident


@dataclass(frozen=True)
class VerdictRequest:
    """What every verdict run needs: the evidence, the engine, the analysis time (None: the incident
    clock), the age gate, the filters, the ``__transaction_state`` partition count and the brokers'
    release (None: what the disks show)."""

    evidence: Evidence
    engine: EngineChoice = EngineChoice()
    as_of: int | None = None
    max_timeout_ms: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MS
    topic: str | None = None
    partition: int | None = None
    broker_id: int | None = None
    partition_count: int | None = None
    broker_version: Version | None = None
    copy_start: int | None = None  # when the copy began (--copy-start): no partition was copied before it

    @property
    def selection(self) -> Filters:
        """The partitions the run judges: ``topic``, ``partition``, ``broker_id``."""
        return Filters(self.topic, self.partition, self.broker_id)


@dataclass(frozen=True)
class VerdictRun:
    """What every verdict run returns besides its rows."""

    as_of: AsOf
    version: BrokerVersionRange
    evidence: tuple[Finding, ...]  # what could not be read, or not as Kafka wrote it
    warnings: tuple[str, ...]  # what weakens every verdict (no coordinator among the inputs)
    manifest: ManifestWritten | None
    stats: EngineStats | None  # what the engine did (None: no job ran)


def _verdicts(command: str, req: VerdictRequest, listener: Listener, lean: bool = True):
    """Open the evidence, rebuild the state (the data partitions the filters select), judge every open
    transaction as of the request's time. ``lean``: keep only what the verdicts read (no coordinator
    history, the transactions of open producers only); the report, which draws timelines, keeps all."""
    opened = open_evidence(command, req.evidence, req.engine, listener, req.selection)
    loose_file_notes(opened.inventory)
    scope = state_scope(data=True)
    folder = StateFolder(opened.inventory, scope, keep_history=_NO_HISTORY if lean else None, lean=lean)
    results = opened.run_units(plan(opened.inventory, scope), "rebuilding state", listener, folder)
    image = read_cluster_image(opened.inventory, record_types=EVIDENCE_RECORD_TYPES)
    rep = assemble_state(opened.inventory, results, scope, req.partition_count, folder,
                         image.partition_count(TRANSACTION_STATE_TOPIC))
    changed = [ChangedFile(*c) for c in changed_segments(opened.inventory)]
    model = evidence_model_of(rep, newest_input_time(rep), req.max_timeout_ms, changed, req.copy_start, image)
    verdicts, when = verdicts_of(rep, as_of=req.as_of, topic=req.topic, partition=req.partition,
                                 broker_id=req.broker_id, max_timeout_ms=req.max_timeout_ms,
                                 evidence=model, reach=index_reach,
                                 crc=batch_crc, epochs=epoch_mismatch)
    version = broker_version_of(rep.inventory, state=rep, given=req.broker_version)
    return opened, rep, verdicts, when, version, model


def _NO_HISTORY(transactional_id: str) -> bool:
    return False


def _finish(opened: Opened, rep: StateReport, when: AsOf, version: BrokerVersionRange,
            model: EvidenceModel) -> VerdictRun:
    written = opened.manifest.finish(when.time_ms, as_of_source(when))
    warnings = tuple(evidence_lines(model, log_dir_brokers(rep)))
    return VerdictRun(when, version, tuple(rep.evidence_findings()), warnings, written,
                      opened.stats)


# -- find-hanging ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FindHangingRequest:
    verdicts: VerdictRequest
    show_all: bool = False  # every open transaction, ongoing ones in time too
    previews: bool = False  # what each abort would discard (reads the transactions' batches)
    redact: bool = False  # the previews hide record keys


@dataclass(frozen=True)
class FindHangingResult:
    rows: tuple[HangingRow, ...]
    hidden: tuple[Verdict, ...]  # open transactions needing no one, left out without show_all
    outcome: Outcome
    run: VerdictRun
    unproven: NoAllClear | None = None  # why nothing hanging is no all-clear: what the evidence lacks


def find_hanging(req: FindHangingRequest, listener: Listener = Quiet()) -> FindHangingResult:
    """Hanging transactions: open on a partition, forgotten by the coordinator."""
    opened, rep, verdicts, when, version, model = _verdicts("find-hanging", req.verdicts, listener)
    listed = [v for v in verdicts if req.show_all or v.needs_attention]  # --all: ongoing ones in time too
    made = [worded_row(v, when, version=version, as_of=when) for v in listed]
    if req.previews:
        made = with_previews(listed, made, opened.inventory, req.redact)
    run = _finish(opened, rep, when, version, model)
    hidden = tuple(v for v in verdicts if not v.needs_attention)
    outcome, unproven = outcome_of(verdicts), None
    if outcome is Outcome.CLEAR:
        unproven = model.unproven_all_clear(req.verdicts.selection)
        outcome = Outcome.UNDECIDED if unproven else outcome
    return FindHangingResult(tuple(made), hidden, outcome, run, unproven)


def with_previews(verdicts: Sequence[Verdict], rows: Sequence[HangingRow], inventory: Inventory,
                  redact: bool) -> list[HangingRow]:
    """``rows`` (those of ``verdicts``, in their order), each one with abort forms with what its abort
    discards (read from ``inventory`` once, in the order of those rows)."""
    wanted = [i for i, r in enumerate(rows) if r.abort_forms]
    out = list(rows)
    for i, preview in zip(wanted, previews([verdicts[i] for i in wanted], inventory, redact), strict=True):
        out[i] = replace(rows[i], abort_preview=preview)
    return out


# -- the runs that write kafka-transactions.sh commands ------------------------------------------


@dataclass(frozen=True)
class CommandsRequest:
    """What every run that writes ``kafka-transactions.sh`` commands is given: its verdicts' request, the
    brokers and client config written into each command, and whether the abort previews hide record keys."""

    verdicts: VerdictRequest
    bootstrap: str = BOOTSTRAP_PLACEHOLDER
    command_config: str | None = None
    redact: bool = False

    def rows(self, verdicts, inventory: Inventory, version: BrokerVersionRange, when: AsOf,
             arm_unverifiable: bool = False) -> list[HangingRow]:
        """The rows of ``verdicts`` with their commands (armed or not) and what each abort discards, their
        reasons' times aged from ``when``."""

        rows = [worded_row(v, when, bootstrap=self.bootstrap, command_config=self.command_config,
                           arm_unverifiable=arm_unverifiable, version=version) for v in verdicts]
        return with_previews(verdicts, rows, inventory, self.redact)


# -- abort-commands -------------------------------------------------------------------------------


@dataclass(frozen=True)
class AbortRequest(CommandsRequest):
    arm_unverifiable: bool = False  # arm the unverifiable ones that lack only coordinator data


@dataclass(frozen=True)
class AbortResult:
    rows: tuple[HangingRow, ...]
    run: VerdictRun


def abort_commands(req: AbortRequest, listener: Listener = Quiet()) -> AbortResult:
    """The rows of a reviewable abort script: every open transaction, with its commands (armed or not),
    why it is not armed, and what each abort discards."""
    opened, rep, verdicts, when, version, model = _verdicts("abort-commands", req.verdicts, listener)
    rows = req.rows(verdicts, opened.inventory, version, when, req.arm_unverifiable)
    return AbortResult(tuple(rows), _finish(opened, rep, when, version, model))


# -- report ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportRequest(CommandsRequest):
    """The report shows every open transaction of its selection (the verdicts' topic, partition and broker
    id) with its commands, never arming an unverifiable one."""


@dataclass(frozen=True)
class ReportResult:
    incident: Incident
    run: VerdictRun


def incident_report(req: ReportRequest, listener: Listener = Quiet()) -> ReportResult:
    """The incident model: every open transaction with its verdict, evidence and commands, LSO lag per
    partition, a timeline per transactional id (rendered to HTML by the command line). With a topic,
    partition or broker id, only those partitions, and what the rest of the evidence holds counted."""
    from forensics.report.incident import build_incident

    opened, rep, verdicts, when, version, model = _verdicts("report", req.verdicts, listener, lean=False)
    run = _finish(opened, rep, when, version, model)
    rows = req.rows(verdicts, opened.inventory, version, when)
    selection = req.verdicts.selection
    whole = _whole_cluster(rep, req.verdicts, when, model) if selection.narrows_partitions else ()
    written = run.manifest
    incident = build_incident(rep, verdicts, when, as_of_source=as_of_source(when), inputs=req.verdicts.evidence.paths, rows=rows,
                              manifest=(written.ref.path, written.ref.sha256) if written is not None else None,
                              brokers=version_label(version), selection=selection, whole=whole, warnings=run.warnings)
    return ReportResult(incident, run)


def _whole_cluster(rep: StateReport, req: VerdictRequest, when: AsOf, model: EvidenceModel) -> list[Verdict]:
    """The verdicts of every partition as the report without a selection judges them (to count those a
    selection leaves out)."""
    return verdicts_of(rep, as_of=when.time_ms, max_timeout_ms=req.max_timeout_ms, evidence=model, reach=index_reach, crc=batch_crc,
                       epochs=epoch_mismatch)[0]
