"""``report``: the incident report, one self-contained HTML file (see docs/report.md)."""

from __future__ import annotations

import os

import typer

from forensics.cli.as_of import write_clock
from forensics.cli.boundary import EXIT_USAGE, error_boundary, fail
from forensics.cli.console import StderrListener, after_run, write_findings, write_note
from forensics.cli.hanging_cmd import verdict_request
from forensics.cli.options import (
    AS_OF,
    BOOTSTRAP,
    BOOTSTRAP_PLACEHOLDER,
    BROKER,
    BROKER_VERSION,
    CLUSTER_ID,
    COMMAND_CONFIG,
    CONF,
    JOBS,
    COPY_START,
    ENGINE,
    MANIFEST,
    MASTER,
    PARTITION,
    PARTITIONS,
    PATHS,
    PROGRESS,
    QUIET,
    REDACT,
    TIMEOUT,
    TOPIC,
)
from forensics.layout.evidence import check_output_path
from forensics.render.clock_text import as_of_text
from forensics.render.html_report import html_report
from forensics.render.selection_text import selection_summary
from forensics.render.size_text import exact_size
from forensics.render.terminal_text import term
from forensics.runs.context import EngineName
from forensics.runs.hanging import ReportRequest, incident_report
from forensics.runs.manifest import write_atomically


def _write(target: str, text: str) -> int:
    """Write the page atomically (a reader never sees half of it); its size in bytes."""
    data = text.encode("utf-8", errors="backslashreplace")
    write_atomically(target, data, "the report")
    return len(data)


def _refuse_existing(out: str, overwrite: bool) -> None:
    """``--out FILE`` names something that exists: refused (exit 2) unless ``--overwrite`` (a file only),
    before anything is read, as export refuses a directory that is not empty."""
    if not os.path.lexists(out):
        return
    if os.path.isdir(out):
        raise fail(f"--out {out}: is a directory; give the HTML file to write", EXIT_USAGE)
    if not overwrite:
        raise fail(f"--out {out}: exists (give --overwrite to replace it)", EXIT_USAGE)


def report_cli(
    paths: list[str] = PATHS,
    out: str = typer.Option(..., "--out", metavar="FILE", help="The HTML file to write (outside the evidence; "
                            "an existing file only with --overwrite)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace FILE if it exists."),
    as_of: str | None = AS_OF, copy_start: str | None = COPY_START, minutes: int = TIMEOUT,
    topic: str | None = TOPIC, partition: int | None = PARTITION, broker_id: int | None = BROKER,
    partitions: int | None = PARTITIONS,
    bootstrap: str | None = BOOTSTRAP, command_config: str | None = COMMAND_CONFIG, redact: bool = REDACT,
    progress: bool = PROGRESS, quiet: bool = QUIET, manifest: str | None = MANIFEST, cluster_id: str | None = CLUSTER_ID,
    broker_version: str | None = BROKER_VERSION,
    engine: EngineName | None = ENGINE, master: str | None = MASTER, conf: list[str] | None = CONF,
    jobs: int | None = JOBS,
) -> None:
    """Incident report: inputs and manifest digest, summary, every open transaction with its verdict,
    evidence and proposed commands, LSO lag per partition and a timeline per transactional id, in one
    self-contained HTML file (no script, no network). Exit 0 also when something hangs (find-hanging
    is the command that gates scripts). With --topic, --partition or --broker-id, only those partitions,
    the page saying so and counting what it left out."""
    with error_boundary():
        check_output_path(out, paths, "--out")
        _refuse_existing(out, overwrite)
        req = verdict_request(paths, as_of, minutes, partitions, cluster_id, broker_version, manifest, engine, master,
                              conf, topic, partition, broker_id, copy_start, jobs)
        done = incident_report(ReportRequest(req, bootstrap or BOOTSTRAP_PLACEHOLDER, command_config, redact),
                               StderrListener(progress))
        after_run(done.run.manifest, done.run.stats)
        size = _write(out, html_report(done.incident))
        s, chosen = done.incident.summary, done.incident.selection
        scope = f" {term(selection_summary(chosen))}" if chosen is not None else ""
        write_note(f"report: {out}, {exact_size(size)}: {s.hanging} hanging, {s.unverifiable} unverifiable, "
                   f"{s.open_transactions} open transaction(s), {s.findings} finding(s){scope}; "
                   f"as of {term(as_of_text(done.run.as_of))}")
        write_clock(done.run.as_of, as_of_line=False)
        write_findings(done.run.evidence)
