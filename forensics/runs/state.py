"""describe-producers, list and describe: kafka-transactions.sh's views, rebuilt offline."""

from __future__ import annotations

import re
from forensics.dataclass_fast import dataclass

from forensics.analysis.clock import AsOf, given
from forensics.analysis.filters import Filters, canonical_state, check_filters, states_present
from forensics.errors import InputError, UsageError
from forensics.findings import Finding
from forensics.pipeline.plan import plan
from forensics.render.time_text import stamp
from forensics.render.clock_text import as_of_source
from forensics.report.state import (
    StateFolder,
    StateReport,
    assemble_state,
    describe_rows,
    list_rows,
    loose_file_notes,
    newest_input_time,
    preferred_replica,
    producer_rows,
    state_scope,
)
from forensics.report.rows import DescribeRow, ProducerRow, TransactionRow
from forensics.pipeline.stats import EngineStats
from forensics.runs.context import EngineChoice, Evidence, Listener, Opened, Quiet, open_evidence
from forensics.runs.manifest import ManifestWritten



def _rebuild(opened: Opened, listener: Listener, partition_count: int | None = None,
             history: str | None = None, **scope) -> StateReport:
    """The state the scope asks for; the coordinator history of the id ``history`` alone (None: of no id:
    only describe prints one)."""
    loose_file_notes(opened.inventory)
    wanted = state_scope(**scope)
    folder = StateFolder(opened.inventory, wanted, keep_history=lambda tid: tid == history)
    results = opened.run_units(plan(opened.inventory, wanted), "rebuilding state", listener, folder)
    return assemble_state(opened.inventory, results, wanted, partition_count, folder)


@dataclass(frozen=True)
class StateResult:
    """Rows of a state view, the as-of time (the incident clock, or the one given), the findings to show,
    the manifest written, the engine's statistics."""

    rows: tuple[ProducerRow | TransactionRow | DescribeRow, ...]  # one kind per command
    as_of: AsOf
    findings: tuple[Finding, ...]
    manifest: ManifestWritten | None
    stats: EngineStats | None  # what the engine did (None: no job ran)
    note: str | None = None  # list filters that matched nothing: what was asked, the states the evidence holds


@dataclass(frozen=True)
class ProducersRequest:
    evidence: Evidence
    topic: str
    partition: int
    broker_id: int | None = None  # None: the likely leader
    engine: EngineChoice = EngineChoice()


def describe_producers(req: ProducersRequest, listener: Listener = Quiet()) -> StateResult:
    """Producer state of one partition replica, as the broker held it (snapshot + replay)."""
    filters = Filters(req.topic, req.partition, req.broker_id)
    opened = open_evidence("describe-producers", req.evidence, req.engine, listener, filters)
    rep = _rebuild(opened, listener, topic=req.topic, partition=req.partition, broker_id=req.broker_id, data=True)
    view = preferred_replica(rep.replicas(req.topic, req.partition))
    if view is None:
        where = f" on broker {req.broker_id}" if req.broker_id is not None else ""
        raise InputError(f"no replica of {req.topic}-{req.partition}{where} among the inputs")
    clock = newest_input_time(rep)
    written = opened.manifest.finish(clock.time_ms, as_of_source(clock))
    return StateResult(tuple(producer_rows(view)), clock, tuple(view.findings), written, opened.stats)


@dataclass(frozen=True)
class ListRequest:
    evidence: Evidence
    state: str | None = None  # only ids in this state (any case)
    partition_count: int | None = None
    engine: EngineChoice = EngineChoice()
    # Kafka 4.1's list filters (kafka-transactions.sh list --duration-filter, --transactional-id-pattern)
    duration_filter_ms: int | None = None  # < 0: every id; else only those running longer, as of as_of
    transactional_id_pattern: str | None = None  # a regular expression each listed id matches whole
    as_of: int | None = None  # the "now" of the duration filter (default: the newest time on the inputs)


def id_pattern(text: str | None) -> re.Pattern | None:
    """``--transactional-id-pattern``, compiled (None or empty: no filter, as Kafka's coordinator takes
    it); a pattern that does not compile is a usage error, checked before anything is read."""
    if not text:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise UsageError(f"--transactional-id-pattern {text!r}: not a regular expression: {exc}") from None


def list_ids(req: ListRequest, listener: Listener = Quiet()) -> StateResult:
    """Every transactional id the coordinators hold (expired ids only with state Dead), filtered as
    Kafka 4.1's ``kafka-transactions.sh list`` filters them."""
    wanted = canonical_state(req.state) if req.state is not None else None
    pattern = id_pattern(req.transactional_id_pattern)
    opened = open_evidence("list", req.evidence, req.engine, listener)
    rep = _rebuild(opened, listener, req.partition_count, data=False)
    clock = given(req.as_of) if req.as_of is not None else newest_input_time(rep)
    if req.duration_filter_ms is not None and req.duration_filter_ms >= 0 and clock.time_ms is None:
        raise UsageError("--duration-filter: the inputs hold no timestamp to measure durations from; give --as-of")
    rows = tuple(list_rows(rep, wanted, duration_ms=req.duration_filter_ms, now_ms=clock.time_ms, id_pattern=pattern))
    written = opened.manifest.finish(clock.time_ms, as_of_source(clock))
    conditions = ([f"is in state {wanted}"] if wanted is not None else []) + \
        ([f"matches {req.transactional_id_pattern!r}"] if pattern is not None else []) + \
        ([f"has run longer than {req.duration_filter_ms} ms as of {stamp(clock.time_ms)}"]
         if req.duration_filter_ms is not None and req.duration_filter_ms >= 0 else [])
    note = None
    if conditions and not rows:
        note = f"no transactional id {' and '.join(conditions)}; states in the evidence: " \
               f"{states_present(rep.coordinator)}"
    findings = tuple(rep.with_evidence(rep.coordinator.findings))
    return StateResult(rows, clock, findings, written, opened.stats, note)


@dataclass(frozen=True)
class DescribeRequest:
    evidence: Evidence
    transactional_id: str
    as_of: int | None = None
    partition_count: int | None = None
    engine: EngineChoice = EngineChoice()


def describe_id(req: DescribeRequest, listener: Listener = Quiet()) -> StateResult:
    """One transactional id: the coordinator's metadata, then every record of its history."""
    opened = open_evidence("describe", req.evidence, req.engine, listener)
    tid = req.transactional_id
    rep = _rebuild(opened, listener, req.partition_count, history=tid, data=False)
    check_filters(rep.inventory, Filters(transactional_id=tid), rep.coordinator)
    clock = given(req.as_of) if req.as_of is not None else newest_input_time(rep)
    rows = tuple(describe_rows(rep, tid, as_of=clock.time_ms))
    written = opened.manifest.finish(clock.time_ms, as_of_source(clock))
    v = rep.coordinator.ids[tid]
    findings = tuple(f for f in rep.coordinator.findings if tid in f.message or f.path == v.first.at.path)
    return StateResult(rows, clock, findings, written, opened.stats)
