"""``kafka-forensics dump``: Kafka 4.1 ``kafka-dump-log.sh``-compatible dumps, read-only (the run is
:mod:`forensics.runs.dump`'s)."""

from __future__ import annotations

import sys
from enum import Enum

import typer

from forensics.cli.boundary import EXIT_STRICT, EXIT_USAGE, command_line, error_boundary, fail
from forensics.cli.console import StderrListener, after_run
from forensics.cli.options import MANIFEST, QUIET, STRICT, format_option
from forensics.render.terminal_text import for_terminal
from forensics.report.dump import INT32_MAX, DumpOptions
from forensics.runs.dump import DumpRequest, dump


class DumpFormat(str, Enum):
    text = "text"
    jsonl = "jsonl"
    json = "json"  # the name scripts gave jsonl before it had its own: the same lines


def dump_cli(
    files: list[str] | None = typer.Argument(None, metavar="FILE", help="Files to dump (.log .index "
                                                ".timeindex .txnindex .snapshot .checkpoint)."),
    files_opt: str | None = typer.Option(None, "--files", metavar="FILE,FILE", help="Comma-separated files, as "
                                            "kafka-dump-log.sh takes them."),
    deep_iteration: bool = typer.Option(False, "--deep-iteration", help="Print every record, not only batches."),
    print_data_log: bool = typer.Option(False, "--print-data-log", help="Print keys and payloads (implies --deep-iteration)."),
    transaction_log_decoder: bool = typer.Option(False, "--transaction-log-decoder", help="Decode __transaction_state records."),
    offsets_decoder: bool = typer.Option(False, "--offsets-decoder", help="Decode __consumer_offsets records."),
    cluster_metadata_decoder: bool = typer.Option(False, "--cluster-metadata-decoder", help="Decode KRaft __cluster_metadata records."),
    skip_record_metadata: bool = typer.Option(False, "--skip-record-metadata", help="Print only keys and payloads of records."),
    max_bytes: int = typer.Option(INT32_MAX, "--max-bytes", metavar="BYTES", min=1,
                                  help="Read at most this many bytes of each log."),
    fmt: DumpFormat = format_option(DumpFormat, stream=True), strict: bool = STRICT,
    manifest: str | None = MANIFEST, quiet: bool = QUIET,
) -> None:
    """Dump segment, index, snapshot and KRaft checkpoint files like kafka-dump-log.sh does.

    Damage never stops the dump: findings (torn tails, zero fill, CRC mismatches, corrupt
    regions) go to stderr with path and byte position and decoding resumes after them. A dump
    streams each file in order in this process: it takes no --engine.
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
                          max_bytes=max_bytes, batch_runs=fmt is DumpFormat.text)
    started: list[bool] = []  # the header line written (JSONL: before the first file's lines)

    def show(rows) -> int:
        if fmt is not DumpFormat.text and not started:
            started.append(True)
            _write_header()
        return _show(rows, fmt, options.skip_record_metadata)

    with error_boundary():
        done = dump(DumpRequest(tuple(paths), options, manifest, tuple(command_line())), show,
                    StderrListener(progress=False, notes_are_errors=True))
        ref = after_run(done.manifest)
        if ref is not None and fmt is not DumpFormat.text:  # the dump streams: its digest comes last
            import json

            if not started:
                _write_header()
            sys.stdout.write(json.dumps({"type": "manifest", **ref}) + "\n")
        sys.stdout.flush()
    if done.failed:
        raise typer.Exit(done.failed)
    if strict and done.findings:
        raise typer.Exit(EXIT_STRICT)


def _write_header() -> None:
    from forensics.render.dump_json import header_line

    sys.stdout.write(header_line())


def _show(rows, fmt: DumpFormat, skip_record_metadata: bool) -> int:
    """Render one file's rows to stdout (findings to stderr in text); the number of findings."""
    if fmt is not DumpFormat.text:
        from forensics.render.dump_json import render_dump_json

        return render_dump_json(rows, sys.stdout)
    from forensics.render.dump_text import render_dump_text

    # to a terminal, control characters from the records are shown escaped; to a file or pipe, Kafka's bytes
    return render_dump_text(rows, for_terminal(sys.stdout), sys.stderr, skip_record_metadata)
