"""``report``: the incident report, one self-contained HTML file (see docs/report.md)."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from forensics.cli.boundary import error_boundary
from forensics.cli.evidence import (
    MANIFEST,
    ManifestRun,
    check_outside_evidence,
    require_parent_dir,
    write_atomically,
)
from forensics.cli.as_of import as_of_text, write_clock
from forensics.cli.hanging_cmd import TIMEOUT, _report_evidence, _verdicts
from forensics.cli.options import (
    AS_OF,
    BROKER_VERSION,
    CLUSTER_ID,
    CONF,
    ENGINE_SPARK,
    MASTER,
)
from forensics.cli.state_cmd import PARTITIONS, PATHS, PROGRESS
from forensics.pipeline.engine import EngineName
from forensics.render.terminal_text import term


def _write(target: str, text: str) -> int:
    """Write the page atomically (a reader never sees half of it); its size in bytes."""
    data = text.encode("utf-8", errors="backslashreplace")
    write_atomically(target, data, "the report")
    return len(data)


def report_cli(
    paths: List[str] = PATHS,
    out: str = typer.Option(..., "--out", metavar="FILE", help="The HTML file to write (outside the evidence)."),
    as_of: Optional[str] = AS_OF, minutes: int = TIMEOUT, partitions: Optional[int] = PARTITIONS,
    bootstrap: str = typer.Option("<bootstrap-server>", "--bootstrap-server", metavar="HOST:PORT",
                                  help="Written into the proposed commands."),
    command_config: Optional[str] = typer.Option(None, "--command-config", help="Client config file for the tool, "
                                                 "written into the kafka-transactions.sh commands."),
    redact: bool = typer.Option(False, "--redact", help="Hide record keys in the abort preview."),
    progress: bool = PROGRESS, manifest: Optional[str] = MANIFEST, cluster_id: Optional[str] = CLUSTER_ID,
    broker_version: Optional[str] = BROKER_VERSION,
    engine: EngineName = ENGINE_SPARK, master: Optional[str] = MASTER, conf: Optional[List[str]] = CONF,
) -> None:
    """Incident report: inputs and manifest digest, summary, every open transaction with its verdict,
    evidence and proposed commands, LSO lag per partition and a timeline per transactional id, in one
    self-contained HTML file (no script, no network). Exit 0 also when something hangs (find-hanging
    is the command that gates scripts)."""
    from forensics.render.html_report import html_report
    from forensics.report.hanging import hanging_row
    from forensics.report.incident import build_incident
    from forensics.report.preview import add_previews

    check_outside_evidence(out, paths, "--out")
    require_parent_dir(out, "--out")
    with error_boundary():
        run = ManifestRun(manifest, "report", paths, engine.value)
        rep, verdicts, when, version = _verdicts(paths, as_of, None, None, None, minutes, partitions, progress,
                                                 (engine, master, conf), run, cluster_id, broker_version)
        ref = run.finish(when.time_ms, when.source)
        pairs = [(hanging_row(v, bootstrap, command_config, version=version), v) for v in verdicts]
        add_previews(pairs, rep.inventory, redact)
        rows = [r for r, _ in pairs]
        incident = build_incident(rep, verdicts, when, inputs=paths, rows=rows,
                                  manifest=(ref.path, ref.sha256) if ref is not None else None,
                                  brokers=version.label)
        size = _write(out, html_report(incident))
        s = incident.summary
        sys.stderr.write(f"report: {out} ({size} bytes): {s.hanging} hanging, {s.unverifiable} unverifiable, "
                         f"{s.open_transactions} open transaction(s), {s.findings} finding(s); "
                         f"as of {term(as_of_text(when))}\n")
        write_clock(when, as_of_line=False)
        _report_evidence(rep)
