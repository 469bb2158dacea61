"""``kafka-forensics scan``: inventory of broker disks (header-only, read-only)."""

from __future__ import annotations

import sys
from enum import Enum
from typing import List, Optional

import typer

from forensics.analysis.filters import Filters, check_filters
from forensics.cli.boundary import EXIT_STRICT, error_boundary
from forensics.cli.as_of import write_clock
from forensics.cli.evidence import MANIFEST, ManifestRun
from forensics.cli.options import (
    AS_OF,
    BROKER_VERSION,
    CLUSTER_ID,
    CONF,
    ENGINE_SPARK,
    MASTER,
    discover_inputs,
    given_broker_version,
    make_engine,
    parse_time,
    write_engine_stats,
)
from forensics.cli.progress import byte_progress
from forensics.pipeline.engine import EngineName


class ScanFormat(str, Enum):
    table = "table"
    json = "json"


def scan_cli(
    paths: List[str] = typer.Argument(..., help="Log dirs, a folder of several brokers' log dirs, partition dirs or files."),
    fmt: ScanFormat = typer.Option(ScanFormat.table, "--format", help="table or json."),
    strict: bool = typer.Option(False, "--strict", help="Exit 5 when any finding was reported."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr (only on a terminal)."),
    as_of: Optional[str] = AS_OF, manifest: Optional[str] = MANIFEST, cluster_id: Optional[str] = CLUSTER_ID,
    broker_version: Optional[str] = BROKER_VERSION,
    topic: Optional[str] = typer.Option(None, "--topic", help="Only this topic."),
    partition: Optional[int] = typer.Option(None, "--partition", min=0, help="Only this partition (with --topic)."),
    broker_id: Optional[int] = typer.Option(None, "--broker-id", help="Only replicas on this broker."),
    wide: bool = typer.Option(False, "--wide", help="Table: every column (topic ids, segments, bytes, batches, "
                              "records, offsets, formats, codecs), as wide as they need."),
    internal: bool = typer.Option(False, "--internal", help="Table: also the partitions of internal topics with "
                                  "no LSO lag, open transaction or finding (hidden by default)."),
    engine: EngineName = ENGINE_SPARK, master: Optional[str] = MASTER, conf: Optional[List[str]] = CONF,
) -> None:
    """Inventory: brokers and log dirs, partitions, segments, bytes, batches, offsets, formats, codecs, findings."""
    from forensics.report.broker_version import broker_version_of
    from forensics.report.scan import scan, selected, total_log_bytes

    with error_boundary():
        given = given_broker_version(broker_version)
        run = ManifestRun(manifest, "scan", paths, engine.value)
        inventory = discover_inputs(paths, cluster_id)
        check_filters(inventory, Filters(topic, partition, broker_id))
        executor = make_engine(engine, master, conf)
        run.record_inventory(inventory, executor.name)
        with byte_progress(total_log_bytes(inventory), f"scanning ({executor.name})", enabled=progress) as advance:
            report = scan(paths, advance, inventory=inventory, as_of=parse_time(as_of), executor=executor)
        write_engine_stats(executor)
        report = selected(report, topic, partition, broker_id)
        version = broker_version_of(inventory, scan=report, given=given)
        ref = run.finish(report.as_of.time_ms, report.as_of.source)
        if fmt is ScanFormat.json:
            from forensics.render.scan_render import render_scan_json

            render_scan_json(report, sys.stdout, ref.as_json() if ref is not None else None, version)
        else:
            from forensics.render.scan_render import render_scan_table

            render_scan_table(report, sys.stdout, version, wide=wide, internal=internal or topic is not None)
        sys.stdout.flush()
        write_clock(report.as_of, as_of_line=False, set_aside=False)  # the set-aside times are scan findings
    if strict and report.all_findings():
        raise typer.Exit(EXIT_STRICT)
