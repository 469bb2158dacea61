"""``find-hanging`` and ``abort-commands``: verdicts on every open transaction, offline."""

from __future__ import annotations

import sys

import typer

from forensics.cli.as_of import write_clock
from forensics.cli.boundary import EXIT_FOUND, EXIT_OK, EXIT_UNDECIDED, EXIT_USAGE, error_boundary, fail
from forensics.cli.console import StderrListener, after_run, write_findings, write_note, write_warning
from forensics.cli.options import (
    AS_OF,
    BOOTSTRAP_REQUIRED,
    BROKER,
    BROKER_VERSION,
    CLUSTER_ID,
    COMMAND_CONFIG,
    CONF,
    JOBS,
    COPY_START,
    ENGINE,
    FORMAT,
    MANIFEST,
    MASTER,
    PARTITION,
    PARTITIONS,
    PATHS,
    PROGRESS,
    QUIET,
    TIMEOUT,
    REDACT,
    TOPIC,
    WIDE,
    RowFormat,
    engine_choice,
    evidence_of,
    given_broker_version,
    parse_time,
)
from forensics.render.broker_version_text import version_label
from forensics.render.clock_text import as_of_text
from forensics.render.evidence_text import no_all_clear_text
from forensics.render.machine_format import FIND_HANGING
from forensics.render.rows import render_rows
from forensics.render.selection_text import selection_options, selection_words
from forensics.render.shell_text import has_hidden, visible
from forensics.render.kafka_text import HANGING_TEXT
from forensics.render.state_render import HANGING_TABLE
from forensics.render.state_screens import hanging_screen, no_hanging_line
from forensics.render.terminal_text import term
from forensics.report.hanging import Outcome
from forensics.runs.context import EngineName
from forensics.runs.hanging import (
    AbortRequest,
    FindHangingRequest,
    VerdictRequest,
    VerdictRun,
    abort_commands,
    find_hanging,
)

OUTCOME_EXIT = {Outcome.CLEAR: EXIT_OK, Outcome.HANGING: EXIT_FOUND, Outcome.UNDECIDED: EXIT_UNDECIDED}


def verdict_request(paths, as_of, minutes, partitions, cluster_id, broker_version, manifest, engine, master, conf,
                    topic=None, partition=None, broker_id=None, copy_start=None, jobs=None) -> VerdictRequest:
    """The options every verdict command shares, parsed (``--broker-version`` and ``--as-of`` checked
    before anything is read)."""
    version = given_broker_version(broker_version)
    return VerdictRequest(evidence_of(paths, cluster_id, manifest), engine_choice(engine, master, conf, jobs=jobs),
                          parse_time(as_of), minutes * 60_000, topic, partition, broker_id, partitions, version,
                          copy_start=parse_time(copy_start))


def write_run_diagnostics(run: VerdictRun, as_of_line: bool = True) -> None:
    """After the output: the as-of lines, what could not be read, what weakens every verdict."""
    write_clock(run.as_of, as_of_line=as_of_line)
    write_findings(run.evidence)
    for warning in run.warnings:
        write_warning(f"WARNING: {term(warning)}")  # the lines name evidence paths


def find_hanging_cli(
    paths: list[str] = PATHS, as_of: str | None = AS_OF, copy_start: str | None = COPY_START,
    minutes: int = TIMEOUT, topic: str | None = TOPIC, partition: int | None = PARTITION, broker_id: int | None = BROKER,
    show_all: bool = typer.Option(False, "--all", help="Every open transaction with its verdict."),
    redact: bool = REDACT, partitions: int | None = PARTITIONS, fmt: RowFormat = FORMAT, wide: bool = WIDE,
    progress: bool = PROGRESS, quiet: bool = QUIET, manifest: str | None = MANIFEST, cluster_id: str | None = CLUSTER_ID,
    broker_version: str | None = BROKER_VERSION,
    engine: EngineName | None = ENGINE, master: str | None = MASTER, conf: list[str] | None = CONF,
    jobs: int | None = JOBS,
) -> None:
    """Hanging transactions: open on a partition, forgotten by the coordinator. Exit 1 when any hangs."""
    with error_boundary():
        req = verdict_request(paths, as_of, minutes, partitions, cluster_id, broker_version, manifest, engine, master,
                              conf, topic, partition, broker_id, copy_start, jobs)
        found = find_hanging(FindHangingRequest(req, show_all, previews=fmt in (RowFormat.json, RowFormat.jsonl), redact=redact),
                             StderrListener(progress))
        ref = after_run(found.run.manifest, found.run.stats)
        hidden = [] if show_all else [v.verdict for v in found.hidden]
        empty = no_hanging_line(hidden, show_all, found.unproven is not None)
        render_rows(fmt.value, FIND_HANGING, found.rows, HANGING_TABLE, sys.stdout, text=HANGING_TEXT, manifest=ref,
                    screen=lambda rows, out: hanging_screen(rows, out, wide, empty))
        sys.stdout.flush()
        write_run_diagnostics(found.run)
        said = fmt is RowFormat.table and not found.rows  # the table's one line named them
        if found.hidden and not show_all and not said:
            kinds = ", ".join(sorted({v.verdict for v in found.hidden}))
            write_note(f"{len(found.hidden)} other open transaction(s) ({kinds}): see --all")
        if found.unproven:
            write_note(f"nothing is proven hanging, but this is no all-clear: {no_all_clear_text(found.unproven)} (see the evidence "
                       "lines above): exit 7")
        elif found.outcome is Outcome.UNDECIDED:
            write_note("nothing is proven hanging, but the open transaction(s) above need a person (see each "
                       "reason): exit 7")
        if req.topic is not None or req.broker_id is not None:
            write_note(f"only {term(selection_words(req))} ({term(selection_options(req))}): no verdict on the "
                       "other partitions, whatever the exit code; without these options find-hanging judges them all")
    raise typer.Exit(OUTCOME_EXIT[found.outcome])


def abort_commands_cli(
    paths: list[str] = PATHS,
    bootstrap: str = BOOTSTRAP_REQUIRED, command_config: str | None = COMMAND_CONFIG,
    as_of: str | None = AS_OF, copy_start: str | None = COPY_START, minutes: int = TIMEOUT,
    topic: str | None = TOPIC, partition: int | None = PARTITION, broker_id: int | None = BROKER,
    partitions: int | None = PARTITIONS, progress: bool = PROGRESS, quiet: bool = QUIET, manifest: str | None = MANIFEST,
    redact: bool = REDACT, cluster_id: str | None = CLUSTER_ID, broker_version: str | None = BROKER_VERSION,
    arm_unverifiable: bool = typer.Option(False, "--arm-unverifiable", help="Also arm the aborts of unverifiable "
                                          "transactions older than --max-transaction-timeout (default: commented)."),
    engine: EngineName | None = ENGINE, master: str | None = MASTER, conf: list[str] | None = CONF,
    jobs: int | None = JOBS,
) -> None:
    """A reviewable shell script of kafka-transactions.sh abort lines for the hanging transactions.
    Never runs anything."""
    from forensics.render.abort_script import render_abort_script

    for name, value in (("--bootstrap-server", bootstrap), ("--command-config", command_config)):
        if value is not None and has_hidden(value):  # written into the script's commands: never raw
            raise fail(f"{name}: a control character in '{visible(value)}'", EXIT_USAGE)

    with error_boundary():
        req = verdict_request(paths, as_of, minutes, partitions, cluster_id, broker_version, manifest, engine, master,
                              conf, topic, partition, broker_id, copy_start, jobs)
        done = abort_commands(AbortRequest(req, bootstrap, command_config, redact, arm_unverifiable),
                              StderrListener(progress))
        ref = after_run(done.run.manifest, done.run.stats)
        render_abort_script(done.rows, sys.stdout, as_of=as_of_text(done.run.as_of), inputs=paths, manifest=ref,
                            bootstrap=bootstrap, command_config=command_config, warnings=list(done.run.warnings),
                            brokers=version_label(done.run.version),
                            selection=req.selection if req.selection.narrows_partitions else None)
        sys.stdout.flush()
        write_clock(done.run.as_of, as_of_line=False)
        write_findings(done.run.evidence)
