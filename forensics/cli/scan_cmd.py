"""``kafka-forensics scan``: inventory of broker disks (header-only, read-only)."""

from __future__ import annotations

import sys
from enum import Enum

import typer

from forensics.cli.as_of import write_clock
from forensics.cli.boundary import EXIT_STRICT, error_boundary
from forensics.cli.console import StderrListener, after_run
from forensics.cli.options import (
    AS_OF,
    BROKER,
    BROKER_VERSION,
    CLUSTER_ID,
    CONF,
    JOBS,
    ENGINE,
    MANIFEST,
    MASTER,
    PARTITION,
    PATHS,
    PROGRESS,
    QUIET,
    STRICT,
    TOPIC,
    WIDE,
    engine_choice,
    evidence_of,
    format_option,
    given_broker_version,
    parse_time,
)
from forensics.render.scan_render import render_scan_json, render_scan_table
from forensics.runs.context import EngineName
from forensics.runs.scan import ScanRequest, scan


class ScanFormat(str, Enum):
    table = "table"
    json = "json"


def scan_cli(
    paths: list[str] = PATHS, fmt: ScanFormat = format_option(ScanFormat), strict: bool = STRICT,
    progress: bool = PROGRESS, quiet: bool = QUIET,
    as_of: str | None = AS_OF, manifest: str | None = MANIFEST, cluster_id: str | None = CLUSTER_ID,
    broker_version: str | None = BROKER_VERSION,
    topic: str | None = TOPIC, partition: int | None = PARTITION, broker_id: int | None = BROKER,
    wide: bool = WIDE,
    internal: bool = typer.Option(False, "--internal", help="Table: also the partitions of internal topics with "
                                  "no LSO lag, open transaction or finding (hidden by default)."),
    engine: EngineName | None = ENGINE, master: str | None = MASTER, conf: list[str] | None = CONF,
    jobs: int | None = JOBS,
) -> None:
    """Inventory: brokers and log dirs, partitions, segments, bytes, batches, offsets, formats, codecs, findings."""
    with error_boundary():
        req = ScanRequest(evidence_of(paths, cluster_id, manifest), engine_choice(engine, master, conf, jobs=jobs),
                          parse_time(as_of), given_broker_version(broker_version), topic, partition, broker_id)
        done = scan(req, StderrListener(progress))
        ref = after_run(done.manifest, done.stats)
        if fmt is ScanFormat.json:
            render_scan_json(done.report, sys.stdout, ref, done.version, done.evidence_gaps)
        else:
            render_scan_table(done.report, sys.stdout, done.version, wide=wide, internal=internal or topic is not None,
                              evidence=done.evidence_gaps)
        sys.stdout.flush()
        write_clock(done.report.as_of, as_of_line=False, set_aside=False)  # the set-aside times are scan findings
    if strict and done.report.all_findings():
        raise typer.Exit(EXIT_STRICT)
