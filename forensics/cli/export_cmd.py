"""``kafka-forensics export``: the disks as Parquet tables, for Spark SQL, pandas or DuckDB (docs/export.md;
the run is :mod:`forensics.runs.export`'s)."""

from __future__ import annotations

import os
import sys

import typer

from forensics.cli.as_of import write_clock
from forensics.cli.boundary import EXIT_STRICT, error_boundary
from forensics.cli.console import StderrListener, after_run, write_findings, write_note
from forensics.cli.options import (
    CLUSTER_ID,
    CONF,
    JOBS,
    ENGINE_ENV,
    MANIFEST,
    MASTER,
    PARTITIONS,
    PATHS,
    PROGRESS,
    QUIET,
    STRICT,
    PANEL_ENGINE,
    engine_choice,
    evidence_of,
)
from forensics.findings import EVIDENCE_KINDS
from forensics.render.counts import not_counted
from forensics.runs.context import EngineName
from forensics.runs.export import ExportRequest, export

# --engine as every command has it (name, choices, environment variable), with what it means here: where
# the tables are written, and so their layout (cli/options.py, VARIES, says why the help differs)
ENGINE = typer.Option(
    None, "--engine", metavar="auto|local|spark", case_sensitive=False, envvar=ENGINE_ENV, show_envvar=True,
    rich_help_panel=PANEL_ENGINE, help="Where the tables are written. auto (the default): in this process below "
    "the size of log data from which Spark was measured faster (docs/performance.md), on Spark from there on or "
    "when --master/--conf is given. local: in this process with pyarrow, no JVM, one file per table "
    "(DIR/TABLE/part-0.parquet). spark: PySpark on --master, Spark's part files; without a Java runtime it falls "
    "back to local with a warning. Same columns and values either way (docs/export.md). Every run says on stderr "
    "which engine ran and why.")


def export_cli(
    paths: list[str] = PATHS,
    out: str = typer.Option(..., "--out", metavar="DIR", help="Directory for the tables (new or empty; never "
                            "inside the evidence). On a cluster: a path every executor can write at."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the previous export in DIR, named by its "
                                   "_export.json (DIR may hold nothing else)."),
    partitions: int | None = PARTITIONS, strict: bool = STRICT, progress: bool = PROGRESS, quiet: bool = QUIET,
    manifest: str | None = MANIFEST, cluster_id: str | None = CLUSTER_ID,
    engine: EngineName | None = ENGINE, master: str | None = MASTER, conf: list[str] | None = CONF,
    jobs: int | None = JOBS,
) -> None:
    """Parquet tables (batches, transactions, producer_states, partitions, coordinator_records, findings) for
    Spark SQL, pandas or DuckDB: in this process with pyarrow, on Spark for large disks or --master."""
    with error_boundary():
        req = ExportRequest(evidence_of(paths, cluster_id, manifest), out, overwrite, partitions,
                            engine_choice(engine, master, conf, jobs=jobs))
        done = export(req, StderrListener(progress))
        after_run(done.manifest, done.stats)
        write_clock(done.as_of, as_of_line=False, set_aside=False)  # set-aside times are findings
        for name, n in done.counts.items():
            sys.stdout.write(f"{name:<20} {n:>10} rows  {os.path.join(out, name)}\n")
        sys.stdout.flush()
        if done.not_counted:  # said once: scan's partition counts hold them
            write_note(f"kafka-forensics: partitions: one row per replica of a data partition; "
                       f"{not_counted(done.not_counted)}; __transaction_state's records are in coordinator_records")
        write_findings(f for f in done.findings if f.kind in EVIDENCE_KINDS)
    if strict and done.findings:
        raise typer.Exit(EXIT_STRICT)


__all__ = ["export_cli"]
