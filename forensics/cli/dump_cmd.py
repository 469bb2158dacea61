"""``kafka-forensics dump``: Kafka 4.1 ``kafka-dump-log.sh``-compatible dumps, read-only (the run is
:mod:`forensics.runs.dump`'s)."""

from __future__ import annotations

import sys
from enum import Enum
from typing import List, Optional

import typer

from forensics.cli.boundary import EXIT_STRICT, EXIT_USAGE, command_line, error_boundary, fail
from forensics.cli.console import StderrListener, after_run
from forensics.cli.evidence import MANIFEST
from forensics.cli.options import ENGINE_LOCAL
from forensics.pipeline.engine import EngineName
from forensics.render.terminal_text import for_terminal
from forensics.report.dump import INT32_MAX, DumpOptions
from forensics.runs.dump import DumpRequest, dump


class DumpFormat(str, Enum):
    text = "text"
    json = "json"


def dump_cli(
    files: Optional[List[str]] = typer.Argument(None, help="Files to dump (.log .index .timeindex .txnindex .snapshot .checkpoint)."),
    files_opt: Optional[str] = typer.Option(None, "--files", help="Comma-separated files, as kafka-dump-log.sh takes them."),
    deep_iteration: bool = typer.Option(False, "--deep-iteration", help="Print every record, not only batches."),
    print_data_log: bool = typer.Option(False, "--print-data-log", help="Print keys and payloads (implies --deep-iteration)."),
    transaction_log_decoder: bool = typer.Option(False, "--transaction-log-decoder", help="Decode __transaction_state records."),
    offsets_decoder: bool = typer.Option(False, "--offsets-decoder", help="Decode __consumer_offsets records."),
    cluster_metadata_decoder: bool = typer.Option(False, "--cluster-metadata-decoder", help="Decode KRaft __cluster_metadata records."),
    skip_record_metadata: bool = typer.Option(False, "--skip-record-metadata", help="Print only keys and payloads of records."),
    max_bytes: int = typer.Option(INT32_MAX, "--max-bytes", min=1, help="Read at most this many bytes of each log."),
    fmt: DumpFormat = typer.Option(DumpFormat.text, "--format", help="text (kafka-dump-log lines) or json (one object per line)."),
    strict: bool = typer.Option(False, "--strict", help="Exit 5 when any finding was reported."),
    manifest: Optional[str] = MANIFEST,
    engine: EngineName = ENGINE_LOCAL,
) -> None:
    """Dump segment, index, snapshot and KRaft checkpoint files like kafka-dump-log.sh does.

    Damage never stops the dump: findings (torn tails, zero fill, CRC mismatches, corrupt
    regions) go to stderr with path and byte position and decoding resumes after them.
    """
    paths = list(files or []) + [p for p in (files_opt or "").split(",") if p]
    if not paths:
        raise fail("dump needs at least one file (arguments or --files a,b)", EXIT_USAGE)
    decoders = [n for n, on in (("transaction-log", transaction_log_decoder), ("offsets", offsets_decoder),
                                ("cluster-metadata", cluster_metadata_decoder)) if on]
    if len(decoders) > 1:
        raise fail("choose at most one of the record decoders", EXIT_USAGE)
    options = DumpOptions(deep_iteration=deep_iteration, print_data_log=print_data_log,
                          decoder=decoders[0] if decoders else None, skip_record_metadata=skip_record_metadata,
                          max_bytes=max_bytes)
    if engine is EngineName.spark:
        typer.echo("kafka-forensics: note: dump streams each file in order in this process; --engine spark "
                   "applies to the whole-disk commands", err=True)
    with error_boundary():
        done = dump(DumpRequest(tuple(paths), options, manifest, tuple(command_line())),
                    lambda rows: _show(rows, fmt, options.skip_record_metadata), StderrListener(progress=False))
        ref = after_run(done.manifest)
        if ref is not None and fmt is DumpFormat.json:  # the dump streams: its digest comes last
            import json

            sys.stdout.write(json.dumps({"type": "manifest", **ref}) + "\n")
        sys.stdout.flush()
    if done.failed:
        raise typer.Exit(done.failed)
    if strict and done.findings:
        raise typer.Exit(EXIT_STRICT)


def _show(rows, fmt: DumpFormat, skip_record_metadata: bool) -> int:
    """Render one file's rows to stdout (findings to stderr in text); the number of findings."""
    if fmt is DumpFormat.json:
        from forensics.render.dump_json import render_dump_json

        return render_dump_json(rows, sys.stdout)
    from forensics.render.dump_text import render_dump_text

    # to a terminal, control characters from the records are shown escaped; to a file or pipe, Kafka's bytes
    return render_dump_text(rows, for_terminal(sys.stdout), sys.stderr, skip_record_metadata)
