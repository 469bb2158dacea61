"""``describe-producers``, ``list``, ``describe``: kafka-transactions.sh's views, rebuilt offline."""

from __future__ import annotations

import sys
from enum import Enum
from typing import List, Optional, Sequence

import typer

from forensics.analysis.clock import given
from forensics.analysis.filters import STATE_NAMES, Filters, canonical_state, check_filters, states_present
from forensics.cli.boundary import EXIT_INPUT, EXIT_STRICT, error_boundary, fail
from forensics.cli.as_of import write_clock
from forensics.cli.evidence import MANIFEST, ManifestRun
from forensics.cli.options import (
    AS_OF,
    CLUSTER_ID,
    CONF,
    ENGINE_LOCAL,
    ENGINE_SPARK,
    MASTER,
    discover_inputs,
    make_engine,
    parse_time,
    write_engine_stats,
)
from forensics.cli.progress import byte_progress
from forensics.pipeline.engine import EngineName
from forensics.render.terminal_text import term



class RowFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


PATHS = typer.Argument(..., help="Log dirs, a folder of several brokers' log dirs, or partition dirs.")
FORMAT = typer.Option(RowFormat.table, "--format", help="table (as kafka-transactions.sh), json or csv.")
PARTITIONS = typer.Option(None, "--transaction-state-partitions", min=1,
                          help="Partition count of __transaction_state (default: as many as found).")
STRICT = typer.Option(False, "--strict", help="Exit 5 when any finding was reported.")
PROGRESS = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr (only on a terminal).")


def _report_findings(findings: Sequence, strict: bool) -> None:
    for f in findings:
        sys.stderr.write(term(f.one_line()) + "\n")
    if strict and findings:
        raise typer.Exit(EXIT_STRICT)


def _finish(run: ManifestRun, clock) -> Optional[dict]:
    """Write the manifest (if asked for) with the report's as-of time; its reference for JSON output."""
    ref = run.finish(clock.time_ms, clock.source)
    return ref.as_json() if ref is not None else None


def _load(paths: List[str], progress: bool, engine: EngineName, master: Optional[str], conf: Optional[List[str]],
          run: ManifestRun, filters: Optional[Filters] = None, cluster_id: Optional[str] = None, **kw):
    """Discover the inputs (one cluster), check the filters against them (before anything is read),
    rebuild the state."""
    from forensics.report.scan import total_log_bytes
    from forensics.report.state import load_state

    inventory = discover_inputs(paths, cluster_id)
    if filters is not None:
        check_filters(inventory, filters)
    executor = make_engine(engine, master, conf)
    run.record_inventory(inventory, executor.name)
    with byte_progress(total_log_bytes(inventory), f"rebuilding state ({executor.name})", enabled=progress) as advance:
        report = load_state(paths, progress=advance, inventory=inventory, executor=executor, **kw)
    write_engine_stats(executor)
    return report


def describe_producers_cli(
    paths: List[str] = PATHS,
    topic: str = typer.Option(..., "--topic", help="Topic of the partition."),
    partition: int = typer.Option(..., "--partition", min=0, help="Partition number."),
    broker_id: Optional[int] = typer.Option(None, "--broker-id", help="Replica on this broker (default: the "
                                            "likely leader: highest leader epoch, then longest log)."),
    timeline: bool = typer.Option(False, "--timeline", help="Table format: also print each producer's transactions."),
    fmt: RowFormat = FORMAT, strict: bool = STRICT, progress: bool = PROGRESS, manifest: Optional[str] = MANIFEST,
    cluster_id: Optional[str] = CLUSTER_ID,
    engine: EngineName = ENGINE_LOCAL, master: Optional[str] = MASTER, conf: Optional[List[str]] = CONF,
) -> None:
    """Producer state of one partition replica, as the broker held it (snapshot + replay)."""
    from forensics.render.rows import render_rows
    from forensics.render.state_render import PRODUCER_TABLE, producer_timeline_tables
    from forensics.report.state import (
        newest_input_time,
        preferred_replica,
        producer_rows,
    )

    with error_boundary():
        run = ManifestRun(manifest, "describe-producers", paths, engine.value)
        rep = _load(paths, progress, engine, master, conf, run, Filters(topic, partition, broker_id), cluster_id,
                    topic=topic, partition=partition, broker_id=broker_id, data=True)
        view = preferred_replica(rep.replicas(topic, partition))
        if view is None:
            where = f" on broker {broker_id}" if broker_id is not None else ""
            raise fail(f"no replica of {topic}-{partition}{where} among the inputs", EXIT_INPUT)
        rows = producer_rows(view)
        ref = _finish(run, newest_input_time(rep))
        render_rows(fmt.value, rows, PRODUCER_TABLE, sys.stdout,
                    producer_timeline_tables if timeline else lambda rows: [], manifest=ref)
        sys.stdout.flush()
        _report_findings(view.findings, strict)


def list_cli(
    paths: List[str] = PATHS,
    state: Optional[str] = typer.Option(None, "--state", help="Only transactional ids in this state (any case): "
                                        + ", ".join(STATE_NAMES) + "."),
    partitions: Optional[int] = PARTITIONS, fmt: RowFormat = FORMAT, strict: bool = STRICT,
    progress: bool = PROGRESS, manifest: Optional[str] = MANIFEST, cluster_id: Optional[str] = CLUSTER_ID,
    engine: EngineName = ENGINE_SPARK, master: Optional[str] = MASTER, conf: Optional[List[str]] = CONF,
) -> None:
    """Every transactional id the coordinators hold (expired ids only with --state Dead)."""
    from forensics.render.rows import render_rows
    from forensics.render.state_render import LIST_FORMATS, LIST_HEADERS, LIST_TABLE
    from forensics.report.state import list_rows, newest_input_time

    with error_boundary():
        wanted = canonical_state(state) if state is not None else None
        run = ManifestRun(manifest, "list", paths, engine.value)
        rep = _load(paths, progress, engine, master, conf, run, cluster_id=cluster_id, data=False,
                    partition_count=partitions)
        rows = list_rows(paths, wanted, report=rep)
        render_rows(fmt.value, rows, LIST_TABLE, sys.stdout, manifest=_finish(run, newest_input_time(rep)),
                    headers=LIST_HEADERS, formats=LIST_FORMATS)
        sys.stdout.flush()
        if wanted is not None and not rows:
            sys.stderr.write(f"no transactional id is in state {wanted}; states in the evidence: "
                             f"{states_present(rep.coordinator)}\n")
        _report_findings(rep.with_evidence(rep.coordinator.findings), strict)


def describe_cli(
    paths: List[str] = PATHS,
    transactional_id: str = typer.Option(..., "--transactional-id", help="The transactional id."),
    as_of: Optional[str] = AS_OF, partitions: Optional[int] = PARTITIONS, fmt: RowFormat = FORMAT, strict: bool = STRICT,
    progress: bool = PROGRESS, manifest: Optional[str] = MANIFEST, cluster_id: Optional[str] = CLUSTER_ID,
    engine: EngineName = ENGINE_LOCAL, master: Optional[str] = MASTER, conf: Optional[List[str]] = CONF,
) -> None:
    """One transactional id: the coordinator's metadata, then every record of its history."""
    from forensics.render.rows import render_rows
    from forensics.render.state_render import DESCRIBE_BELOW, DESCRIBE_TABLE, history_tables
    from forensics.report.state import describe_rows, newest_input_time

    with error_boundary():
        run = ManifestRun(manifest, "describe", paths, engine.value)
        rep = _load(paths, progress, engine, master, conf, run, cluster_id=cluster_id, data=False,
                    partition_count=partitions)
        check_filters(rep.inventory, Filters(transactional_id=transactional_id), rep.coordinator)
        when = parse_time(as_of)
        clock = given(when) if when is not None else newest_input_time(rep)
        rows = describe_rows(paths, transactional_id, as_of=clock.time_ms, report=rep)
        render_rows(fmt.value, rows, DESCRIBE_TABLE, sys.stdout, history_tables, manifest=_finish(run, clock),
                    below=DESCRIBE_BELOW)
        sys.stdout.flush()
        write_clock(clock, as_of_line=False)
        v = rep.coordinator.ids[transactional_id]
        _report_findings([f for f in rep.coordinator.findings if transactional_id in f.message
                          or f.path == v.history[0].at.path], strict)
