"""export: the disks as Parquet tables, for Spark SQL, pandas or DuckDB (docs/export.md).

On the engine the other whole-disk commands would use (``--engine auto``: in-process below the Spark
threshold, Spark from there on or with ``--master``/``--conf``): one job reads the disks once for the
scan and the state report (only reduced per-replica results reach the driver, as for every command),
a second pass makes the ``batches`` table segment by segment (on Spark, on the executors, where Spark
writes it; in-process, with pyarrow, a row group at a time); the driver's tables follow. Both write
the same columns and values, each in its own layout (``pipeline/export``, ``pipeline/export_local``).
Nothing is written next to the evidence: ``out`` may not lie inside an input, and a non-empty
``out`` is only replaced with ``overwrite`` when it holds nothing but a previous export, identified
by its ``_export.json`` (only the table directories it lists are removed, and only if they hold
nothing but the files that export's engine writes: the files it lists, or Spark's Parquet output).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from forensics.dataclass_fast import dataclass
from collections.abc import Sequence

from forensics import __version__
from forensics.analysis.clock import AsOf
from forensics.errors import UsageError
from forensics.findings import Finding
from forensics.layout.evidence import check_outside_evidence, require_parent_dir
from forensics.layout.evidence import is_within as inside
from forensics.pipeline import export_rows as tables
from forensics.pipeline.engine import EngineName, Reuse, Workload
from forensics.pipeline.executor import as_read
from forensics.pipeline.export_rows import SCHEMA_VERSION, SEGMENT_KINDS, TABLES
from forensics.pipeline.plan import Scope, plan
from forensics.render.terminal_text import term
from forensics.render.clock_text import as_of_source
from forensics.report.export import (
    all_findings,
    contexts,
    coordinator_rows,
    finding_rows,
    partition_rows,
    producer_state_rows,
    transaction_rows,
)
from forensics.report.scan import without_producer_state
from forensics.pipeline.stats import EngineStats
from forensics.runs.context import EngineChoice, Evidence, Listener, Opened, Quiet, open_evidence
from forensics.runs.manifest import ManifestWritten
from forensics.runs.rebuild import load_state, scan

EXPORT_JSON = "_export.json"  # what was exported, from what, with the manifest's digest
EXPORT_FORMAT = "kafka-forensics-export"
FORMAT_VERSION = 2  # of _export.json: 2 added "engine", "schemaVersion" and each table's "files"
_TABLE_NAMES = frozenset(t.name for t in TABLES)
# what Spark's Parquet writer leaves in a table directory: part files, _SUCCESS, their .crc files
_SPARK_FILE = re.compile(r"\.?(?:part-[\w.-]+|_SUCCESS)(?:\.crc)?\Z")

# -- the output directory -------------------------------------------------------------------------


def check_out(out: str, inputs: Sequence[str], overwrite: bool, manifest: str | None = None) -> None:
    """Refuse an output directory in or around the evidence, or one holding anything but a previous
    export (and that only with ``--overwrite``)."""
    check_outside_evidence(out, inputs, "--out")
    if manifest is not None and inside(manifest, out):
        raise UsageError(f"--manifest {manifest}: lies inside --out {out}, which an export replaces; write it beside "
                   "the export")
    for given in inputs:
        if os.path.lexists(given) and inside(given, out):
            raise UsageError(f"--out {out}: holds the evidence ({given}); write the export elsewhere")
    if os.path.lexists(out) and not os.path.isdir(out):
        raise UsageError(f"--out {out}: exists and is not a directory")
    require_parent_dir(out, "--out")
    entries = sorted(os.listdir(out)) if os.path.isdir(out) else []
    if entries and not overwrite:
        raise UsageError(f"--out {out}: not empty (give --overwrite to replace a previous export)")
    if entries:
        previous_export(out)


def previous_export(out: str) -> list[str]:
    """The files of the previous export in ``out``, in the order to remove them (the tables its
    ``_export.json`` lists, then ``_export.json``); refuses (exit 2) anything it cannot identify
    as one: no readable ``_export.json`` of ours, an entry it does not list, a table directory
    holding anything but what that export's engine writes there (the files ``_export.json`` lists
    for the table; for a Spark export, or one from before ``formatVersion`` 2, Spark's Parquet
    output)."""
    summary = os.path.join(out, EXPORT_JSON)
    try:
        with open(summary, "rb") as fh:
            doc = json.loads(fh.read(1 << 20).decode("utf-8"))
        if doc.get("format") != EXPORT_FORMAT:
            raise ValueError("not an export's summary")  # refused below, as any file that is not one
        listed = doc["tables"]
        tables = {n: _written_by(doc, t) for n, t in sorted(listed.items()) if n in _TABLE_NAMES and t.get("path") == n}
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        held = ", ".join(sorted(os.listdir(out))[:3])
        raise UsageError(f"--out {out}: holds no previous export (no {EXPORT_JSON} of one, which an interrupted "
                         f"export does not leave either; it holds {held}): choose an empty or new directory, or "
                         "empty it yourself") from None
    foreign = [e for e in sorted(os.listdir(out)) if e != EXPORT_JSON and e not in tables]
    files = []
    for name, written in tables.items():
        table = os.path.join(out, name)
        if not os.path.lexists(table):
            continue
        inside_table = sorted(os.listdir(table)) if os.path.isdir(table) and not os.path.islink(table) else None
        if inside_table is None:
            foreign.append(name)
            continue
        odd = [f for f in inside_table if not (written(f) and os.path.isfile(os.path.join(table, f))
                                               and not os.path.islink(os.path.join(table, f)))]
        foreign += [os.path.join(name, f) for f in odd]
        files += [os.path.join(table, f) for f in inside_table] + [table]
    if foreign:
        raise UsageError(f"--out {out}: holds files the previous export did not write ({term(', '.join(foreign[:3]))}): "
                   "choose an empty or new directory")
    return files + [summary]


def _written_by(doc: dict, table: dict):
    """Whether a file name in a table directory is one the export of ``doc`` wrote there: a file it
    lists for the table, or, on Spark (and before ``_export.json`` said the engine), Spark's output."""
    listed = table.get("files", [])
    if not isinstance(listed, list) or not all(isinstance(f, str) for f in listed):
        raise TypeError("files")
    names = frozenset(listed)
    spark = doc.get("engine", EngineName.spark.value) == EngineName.spark.value
    return lambda f: f in names or (spark and _SPARK_FILE.match(f) is not None)


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


def _analyse(paths: Sequence[str], opened: Opened, partitions: int | None, listener: Listener):
    """One job for everything the scan and the state report need; both built from its results."""
    inventory = opened.inventory
    scope = Scope(stats=True, data=True, coordinator=True, non_live=True)
    reuse = Reuse(opened.run_units(plan(inventory, scope), "reading", listener, as_read), opened.executor.name)
    scanned = scan(paths, inventory=inventory, executor=reuse)
    # single files given on the command line are in the scan and in batches; the state ignores them
    state = load_state(paths, inventory=replace(inventory, loose_files=()), executor=reuse,
                       partition_count=partitions)
    return scanned, state


def _writer(out: str, executor):
    """The Parquet writer of the engine that runs: Spark's (the session the analysis job started) or
    pyarrow's in this process (which refuses at once, before anything is read, where pyarrow is missing)."""
    if executor.name == EngineName.spark.value:
        from forensics.pipeline.export import ParquetWriter

        return ParquetWriter(out, executor.master, executor.conf)
    from forensics.pipeline.export_local import LocalParquet

    return LocalParquet(out)


def _write(out: str, inventory, state, findings, writer, listener: Listener) -> dict[str, tuple[int, list[str]]]:
    """Every table: its row count and the files that hold it (in its directory)."""
    whole = Scope(stats=True, data=True, coordinator=True, non_live=True, split_bytes=1 << 62)
    segments = [u for u in plan(inventory, whole) if u.kind in SEGMENT_KINDS]
    _clear(out)
    counts: dict[str, int] = {}
    with listener.progress(sum(u.size for u in segments), f"writing batches ({writer.engine})") as advance:
        counts["batches"] = writer.write_batches(segments, contexts(inventory), advance)
    for table, rows in ((tables.TRANSACTIONS, transaction_rows(state)),
                        (tables.PRODUCER_STATES, producer_state_rows(state)),
                        (tables.PARTITIONS, partition_rows(state)),
                        (tables.COORDINATOR_RECORDS, coordinator_rows(state)),
                        (tables.FINDINGS, finding_rows(findings))):
        counts[table.name] = writer.write_table(table, rows)
    return {t.name: (counts[t.name], writer.files(t)) for t in TABLES}


def _summary(out: str, paths: Sequence[str], written: dict[str, tuple[int, list[str]]], engine: str, as_of, ref,
             command_line) -> None:
    doc = {"format": EXPORT_FORMAT, "formatVersion": FORMAT_VERSION, "toolVersion": __version__,
           "engine": engine, "schemaVersion": SCHEMA_VERSION,
           "commandLine": list(command_line), "inputs": list(paths), "asOfMs": as_of.time_ms, "asOfSource": as_of_source(as_of),
           "manifest": ref.as_json() if ref is not None else None,
           "tables": {name: {"path": name, "rows": n, "files": files} for name, (n, files) in written.items()}}
    with open(os.path.join(out, EXPORT_JSON), "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2)
        fh.write("\n")


@dataclass(frozen=True)
class ExportRequest:
    evidence: Evidence
    out: str
    overwrite: bool = False
    partition_count: int | None = None
    engine: EngineChoice = EngineChoice(EngineName.auto)  # auto: as the other whole-disk commands choose


@dataclass(frozen=True)
class ExportResult:
    counts: dict[str, int]  # rows per table, in the order written
    as_of: AsOf
    findings: tuple[Finding, ...]  # what the scan and the state rebuild found, once each
    manifest: ManifestWritten | None
    stats: EngineStats | None  # what the engine did (None: no job ran)
    engine: str = EngineName.local.value  # the engine that wrote the tables: local or spark
    not_counted: tuple[tuple[str, int], ...] = ()  # internal partitions with no row in ``partitions``, by topic


def export(req: ExportRequest, listener: Listener = Quiet()) -> ExportResult:
    """Write the Parquet tables to ``req.out`` (refusing one in the evidence, or one holding anything but
    a previous export)."""
    paths = req.evidence.paths
    check_out(req.out, paths, req.overwrite, req.evidence.manifest)
    # auto: by export's own crossover (its `batches` pass runs in one process in-process, on Spark's executors)
    opened = open_evidence("export", req.evidence, replace(req.engine, workload=Workload.export), listener)
    writer = _writer(req.out, opened.executor)
    scanned, state = _analyse(list(paths), opened, req.partition_count, listener)
    findings = all_findings(scanned, state)
    written = _write(req.out, opened.inventory, state, findings, writer, listener)
    done = opened.manifest.finish(scanned.as_of.time_ms, as_of_source(scanned.as_of))
    _summary(req.out, paths, written, writer.engine, scanned.as_of, done.ref if done is not None else None,
             req.evidence.command_line)
    return ExportResult({name: n for name, (n, _) in written.items()}, scanned.as_of, tuple(findings), done,
                        opened.stats, writer.engine, without_producer_state(opened.inventory))
