"""``kafka-forensics export``: the disks as Parquet tables, for Spark SQL or pandas (docs/export.md; the
run is :mod:`forensics.runs.export`'s)."""

from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from forensics.cli.as_of import write_clock
from forensics.cli.boundary import EXIT_STRICT, error_boundary
from forensics.cli.console import StderrListener, after_run, write_findings
from forensics.cli.options import (
    CLUSTER_ID,
    CONF,
    MANIFEST,
    MASTER,
    PARTITIONS,
    PATHS,
    PROGRESS,
    STRICT,
    _parse_conf,
    evidence_of,
)
from forensics.findings import EVIDENCE_KINDS
from forensics.runs.export import ExportRequest, _clear, check_out, export, previous_export


def export_cli(
    paths: List[str] = PATHS,
    out: str = typer.Option(..., "--out", metavar="DIR", help="Directory for the tables (new or empty; never "
                            "inside the evidence). On a cluster: a path every executor can write at."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the previous export in DIR, named by its "
                                   "_export.json (DIR may hold nothing else)."),
    partitions: Optional[int] = PARTITIONS, strict: bool = STRICT, progress: bool = PROGRESS,
    manifest: Optional[str] = MANIFEST, cluster_id: Optional[str] = CLUSTER_ID, master: Optional[str] = MASTER,
    conf: Optional[List[str]] = CONF,
) -> None:
    """Parquet tables (batches, transactions, producer_states, partitions, coordinator_records, findings) for
    Spark SQL or pandas. Always runs on Spark (--master, default local[*,4]); needs Java 17+."""
    with error_boundary():
        req = ExportRequest(evidence_of(paths, cluster_id, manifest), out, overwrite, partitions, master,
                            _parse_conf(conf))
        done = export(req, StderrListener(progress))
        after_run(done.manifest, done.stats)
        write_clock(done.as_of, as_of_line=False, set_aside=False)  # set-aside times are findings
        for name, n in done.counts.items():
            sys.stdout.write(f"{name:<20} {n:>10} rows  {os.path.join(out, name)}\n")
        sys.stdout.flush()
        write_findings(f for f in done.findings if f.kind in EVIDENCE_KINDS)
    if strict and done.findings:
        raise typer.Exit(EXIT_STRICT)


__all__ = ["_clear", "check_out", "export_cli", "previous_export"]
