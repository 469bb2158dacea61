"""``kafka-forensics export``: the disks as Parquet tables, for Spark SQL or pandas (docs/export.md).

Always on Spark: one job reads the disks once for the scan and the state report (only reduced
per-replica results reach the driver, as for every command), a second makes the ``batches``
table on the executors, where Spark writes it; the driver's tables follow. Nothing is written
next to the evidence: ``--out`` may not lie inside an input, and a non-empty ``--out`` is only
replaced with ``--overwrite`` when it holds nothing but a previous export, identified by its
``_export.json`` (only the table directories it lists are removed, and only if they hold nothing
but Spark's Parquet files).
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import replace
from typing import Dict, List, Optional, Sequence

import typer

from forensics import __version__
from forensics.cli.boundary import EXIT_STRICT, EXIT_USAGE, command_line, error_boundary, fail
from forensics.cli.as_of import write_clock
from forensics.cli.evidence import (
    MANIFEST,
    ManifestRun,
    check_outside_evidence,
    inside,
    require_parent_dir,
)
from forensics.cli.options import CLUSTER_ID, CONF, MASTER, discover_inputs, make_engine, write_engine_stats
from forensics.cli.progress import byte_progress
from forensics.cli.state_cmd import PARTITIONS, PROGRESS, STRICT
from forensics.pipeline import export_rows as tables
from forensics.pipeline.engine import EngineName
from forensics.pipeline.export_rows import TABLES
from forensics.render.terminal_text import term
from forensics.report.export import (
    all_findings,
    contexts,
    coordinator_rows,
    finding_rows,
    partition_rows,
    producer_state_rows,
    transaction_rows,
)

EXPORT_JSON = "_export.json"  # what was exported, from what, with the manifest's digest
EXPORT_FORMAT = "kafka-forensics-export"
_TABLE_NAMES = frozenset(t.name for t in TABLES)
# what Spark's Parquet writer leaves in a table directory: part files, _SUCCESS, their .crc files
_SPARK_FILE = re.compile(r"\.?(?:part-[\w.-]+|_SUCCESS)(?:\.crc)?\Z")

# -- the output directory -------------------------------------------------------------------------


def check_out(out: str, inputs: Sequence[str], overwrite: bool, manifest: Optional[str] = None) -> None:
    """Refuse an output directory in or around the evidence, or one holding anything but a previous
    export (and that only with ``--overwrite``)."""
    check_outside_evidence(out, inputs, "--out")
    if manifest is not None and inside(manifest, out):
        raise fail(f"--manifest {manifest}: lies inside --out {out}, which an export replaces; write it beside "
                   "the export", EXIT_USAGE)
    for given in inputs:
        if os.path.lexists(given) and inside(given, out):
            raise fail(f"--out {out}: holds the evidence ({given}); write the export elsewhere", EXIT_USAGE)
    if os.path.lexists(out) and not os.path.isdir(out):
        raise fail(f"--out {out}: exists and is not a directory", EXIT_USAGE)
    require_parent_dir(out, "--out")
    entries = sorted(os.listdir(out)) if os.path.isdir(out) else []
    if entries and not overwrite:
        raise fail(f"--out {out}: not empty (give --overwrite to replace a previous export)", EXIT_USAGE)
    if entries:
        previous_export(out)


def previous_export(out: str) -> List[str]:
    """The files of the previous export in ``out``, in the order to remove them (the tables its
    ``_export.json`` lists, then ``_export.json``); refuses (exit 2) anything it cannot identify
    as one: no readable ``_export.json`` of ours, an entry it does not list, a table directory
    holding anything but Spark's Parquet output."""
    summary = os.path.join(out, EXPORT_JSON)
    try:
        with open(summary, "rb") as fh:
            doc = json.loads(fh.read(1 << 20).decode("utf-8"))
        listed = doc["tables"] if doc.get("format") == EXPORT_FORMAT else None
        tables = sorted(n for n, t in listed.items() if n in _TABLE_NAMES and t.get("path") == n)
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        held = ", ".join(sorted(os.listdir(out))[:3])
        raise fail(f"--out {out}: holds no previous export (no {EXPORT_JSON} of one, which an interrupted export "
                   f"does not leave either; it holds {held}): choose an empty or new directory, or empty it yourself",
                   EXIT_USAGE) from None
    foreign = [e for e in sorted(os.listdir(out)) if e != EXPORT_JSON and e not in tables]
    files = []
    for name in tables:
        table = os.path.join(out, name)
        if not os.path.lexists(table):
            continue
        inside_table = sorted(os.listdir(table)) if os.path.isdir(table) and not os.path.islink(table) else None
        if inside_table is None:
            foreign.append(name)
            continue
        odd = [f for f in inside_table if not (_SPARK_FILE.match(f) and os.path.isfile(os.path.join(table, f))
                                               and not os.path.islink(os.path.join(table, f)))]
        foreign += [os.path.join(name, f) for f in odd]
        files += [os.path.join(table, f) for f in inside_table] + [table]
    if foreign:
        raise fail(f"--out {out}: holds files the previous export did not write ({term(', '.join(foreign[:3]))}): "
                   "choose an empty or new directory", EXIT_USAGE)
    return files + [summary]


def _clear(out: str) -> None:
    """Remove the previous export that :func:`previous_export` identifies (nothing else)."""
    if os.path.isdir(out) and os.listdir(out):
        for path in previous_export(out):
            if os.path.isdir(path):
                os.rmdir(path)
            else:
                os.unlink(path)
    os.makedirs(out, exist_ok=True)


# -- the command ----------------------------------------------------------------------------------


def _analyse(paths: List[str], inventory, executor, partitions: Optional[int], progress: bool):
    """One Spark job for everything the scan and the state report need; both built from its results."""
    from forensics.pipeline.export import Reuse
    from forensics.pipeline.plan import Scope, plan
    from forensics.report.scan import scan, total_log_bytes
    from forensics.report.state import load_state

    scope = Scope(stats=True, data=True, coordinator=True, non_live=True)
    with byte_progress(total_log_bytes(inventory), "reading (spark)", enabled=progress) as advance:
        results = executor.run(plan(inventory, scope), advance)
    write_engine_stats(executor)
    reuse = Reuse(results)
    scanned = scan(paths, inventory=inventory, executor=reuse)
    # single files given on the command line are in the scan and in batches; the state ignores them
    state = load_state(paths, inventory=replace(inventory, loose_files=()), executor=reuse,
                       partition_count=partitions)
    return scanned, state


def _write(out: str, inventory, state, findings, executor, progress: bool) -> Dict[str, int]:
    from forensics.pipeline.export import SEGMENT_KINDS, ParquetWriter
    from forensics.pipeline.plan import Scope, plan

    whole = Scope(stats=True, data=True, coordinator=True, non_live=True, split_bytes=1 << 62)
    segments = [u for u in plan(inventory, whole) if u.kind in SEGMENT_KINDS]
    _clear(out)
    writer = ParquetWriter(out, executor.master, executor.conf)
    counts: Dict[str, int] = {}
    with byte_progress(sum(u.size for u in segments), "writing batches (spark)", enabled=progress) as advance:
        counts["batches"] = writer.write_batches(segments, contexts(inventory), advance)
    for table, rows in ((tables.TRANSACTIONS, transaction_rows(state)),
                        (tables.PRODUCER_STATES, producer_state_rows(state)),
                        (tables.PARTITIONS, partition_rows(state)),
                        (tables.COORDINATOR_RECORDS, coordinator_rows(state)),
                        (tables.FINDINGS, finding_rows(findings))):
        counts[table.name] = writer.write_table(table, rows)
    return counts


def _summary(out: str, paths: Sequence[str], counts: Dict[str, int], as_of, ref) -> None:
    doc = {"format": EXPORT_FORMAT, "formatVersion": 1, "toolVersion": __version__,
           "commandLine": command_line(), "inputs": list(paths), "asOfMs": as_of.time_ms, "asOfSource": as_of.source,
           "manifest": ref.as_json() if ref is not None else None,
           "tables": {name: {"path": name, "rows": n} for name, n in counts.items()}}
    with open(os.path.join(out, EXPORT_JSON), "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2)
        fh.write("\n")


def export_cli(
    paths: List[str] = typer.Argument(..., help="Log dirs, a folder of several brokers' log dirs, partition dirs "
                                      "or files."),
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
    from forensics.findings import EVIDENCE_KINDS
    from forensics.pipeline.engine import spark_available
    from forensics.pipeline.spark_session import SparkError

    with error_boundary():
        check_out(out, paths, overwrite, manifest)
        ok, why = spark_available()
        if not ok:
            raise SparkError(f"export writes its tables through Spark, which cannot run here: {why}")
        run = ManifestRun(manifest, "export", paths, EngineName.spark.value)
        inventory = discover_inputs(paths, cluster_id)
        executor = make_engine(EngineName.spark, master, conf)
        run.record_inventory(inventory, executor.name)
        scanned, state = _analyse(paths, inventory, executor, partitions, progress)
        findings = all_findings(scanned, state)
        counts = _write(out, inventory, state, findings, executor, progress)
        ref = run.finish(scanned.as_of.time_ms, scanned.as_of.source)
        _summary(out, paths, counts, scanned.as_of, ref)
        write_clock(scanned.as_of, as_of_line=False, set_aside=False)  # set-aside times are findings
        for name, n in counts.items():
            sys.stdout.write(f"{name:<20} {n:>10} rows  {os.path.join(out, name)}\n")
        sys.stdout.flush()
        for f in findings:
            if f.kind in EVIDENCE_KINDS:
                sys.stderr.write(term(f.one_line()) + "\n")
    if strict and findings:
        raise typer.Exit(EXIT_STRICT)


__all__ = ["check_out", "export_cli", "previous_export"]
