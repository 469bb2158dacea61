"""``find-hanging`` and ``abort-commands``: verdicts on every open transaction, offline."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from forensics.analysis.filters import Filters
from forensics.cli.boundary import EXIT_FOUND, EXIT_OK, EXIT_UNDECIDED, EXIT_USAGE, error_boundary, fail
from forensics.cli.as_of import as_of_text, write_clock
from forensics.cli.evidence import MANIFEST, ManifestRun
from forensics.cli.options import (
    AS_OF,
    BROKER_VERSION,
    CLUSTER_ID,
    CONF,
    ENGINE_SPARK,
    MASTER,
    given_broker_version,
    parse_time,
)
from forensics.cli.state_cmd import (
    PARTITIONS,
    PATHS,
    PROGRESS,
    RowFormat,
    _finish,
    _load,
)
from forensics.pipeline.engine import EngineName
from forensics.render.terminal_text import term
from forensics.render.time_text import stamp
from forensics.report.hanging import Outcome, evidence_warnings, outcome_of

OUTCOME_EXIT = {Outcome.CLEAR: EXIT_OK, Outcome.HANGING: EXIT_FOUND, Outcome.UNDECIDED: EXIT_UNDECIDED}


def _verdicts(paths, as_of, topic, partition, broker_id, minutes, partitions, progress, engine, run, cluster_id=None,
              broker_version=None):
    """The state, the verdicts, the as-of time and the brokers' version range (``--broker-version``,
    checked before anything is read, else what the disks show: report/broker_version.py)."""
    from forensics.report.broker_version import broker_version_of
    from forensics.report.hanging import find_hanging

    given = given_broker_version(broker_version)
    rep = _load(paths, progress, *engine, run, Filters(topic, partition, broker_id), cluster_id,
                partition_count=partitions)
    verdicts, when = find_hanging(rep, as_of=parse_time(as_of), topic=topic, partition=partition,
                                  broker_id=broker_id, max_timeout_ms=minutes * 60_000, time_text=stamp)
    return rep, verdicts, when, broker_version_of(rep.inventory, state=rep, given=given)


def _report_evidence(rep) -> None:
    """What could not be read, or not as Kafka wrote it: one line each on stderr."""
    for f in rep.evidence_findings():
        sys.stderr.write(term(f.one_line()) + "\n")


TIMEOUT = typer.Option(15, "--max-transaction-timeout", min=0, help="Age gate in minutes (as Kafka's tool); "
                       "decides only where no coordinator data can.")
TOPIC = typer.Option(None, "--topic", help="Only this topic.")
PARTITION = typer.Option(None, "--partition", min=0, help="Only this partition (with --topic).")
BROKER = typer.Option(None, "--broker-id", help="Only replicas on this broker.")


def find_hanging_cli(
    paths: List[str] = PATHS, as_of: Optional[str] = AS_OF, minutes: int = TIMEOUT,
    topic: Optional[str] = TOPIC, partition: Optional[int] = PARTITION, broker_id: Optional[int] = BROKER,
    show_all: bool = typer.Option(False, "--all", help="Every open transaction with its verdict."),
    redact: bool = typer.Option(False, "--redact", help="JSON: hide record keys in the abort preview."),
    partitions: Optional[int] = PARTITIONS,
    fmt: RowFormat = typer.Option(RowFormat.table, "--format", help="table, json or csv."),
    progress: bool = PROGRESS, manifest: Optional[str] = MANIFEST, cluster_id: Optional[str] = CLUSTER_ID,
    broker_version: Optional[str] = BROKER_VERSION,
    engine: EngineName = ENGINE_SPARK, master: Optional[str] = MASTER, conf: Optional[List[str]] = CONF,
) -> None:
    """Hanging transactions: open on a partition, forgotten by the coordinator. Exit 1 when any hangs."""
    from forensics.render.rows import render_rows
    from forensics.render.state_render import HANGING_BELOW, HANGING_HEADERS, HANGING_TABLE
    from forensics.report.hanging import hanging_rows
    from forensics.report.preview import add_previews

    with error_boundary():
        run = ManifestRun(manifest, "find-hanging", paths, engine.value)
        rep, verdicts, when, version = _verdicts(paths, as_of, topic, partition, broker_id, minutes, partitions,
                                                 progress, (engine, master, conf), run, cluster_id, broker_version)
        pairs = hanging_rows(verdicts, show_all, when, version=version)
        if fmt is RowFormat.json:  # what each abort would discard (reads the transactions' batches)
            add_previews(pairs, rep.inventory, redact)
        rows = [row for row, _ in pairs]
        render_rows(fmt.value, rows, HANGING_TABLE, sys.stdout, headers=HANGING_HEADERS, manifest=_finish(run, when),
                    below=HANGING_BELOW)
        sys.stdout.flush()
        write_clock(when)
        _report_evidence(rep)
        for warning in evidence_warnings(rep):
            sys.stderr.write(f"WARNING: {warning}\n")
        hidden = [v for v in verdicts if not v.needs_attention]
        if hidden and not show_all:
            kinds = ", ".join(sorted({v.verdict for v in hidden}))
            sys.stderr.write(f"{len(hidden)} other open transaction(s) ({kinds}): see --all\n")
        outcome = outcome_of(verdicts)
        if outcome is Outcome.UNDECIDED:
            sys.stderr.write("nothing is proven hanging, but the open transaction(s) above need a person (see each "
                             "reason): exit 7\n")
    raise typer.Exit(OUTCOME_EXIT[outcome])


def abort_commands_cli(
    paths: List[str] = PATHS,
    bootstrap: str = typer.Option(..., "--bootstrap-server", help="HOST:PORT written into the commands."),
    command_config: Optional[str] = typer.Option(None, "--command-config", help="Client config file for the tool."),
    as_of: Optional[str] = AS_OF, minutes: int = TIMEOUT, topic: Optional[str] = TOPIC,
    partition: Optional[int] = PARTITION, broker_id: Optional[int] = BROKER,
    partitions: Optional[int] = PARTITIONS, progress: bool = PROGRESS, manifest: Optional[str] = MANIFEST,
    redact: bool = typer.Option(False, "--redact", help="Hide record keys in the abort preview."),
    cluster_id: Optional[str] = CLUSTER_ID, broker_version: Optional[str] = BROKER_VERSION,
    arm_unverifiable: bool = typer.Option(False, "--arm-unverifiable", help="Also arm the aborts of unverifiable "
                                          "transactions older than --max-transaction-timeout (default: commented)."),
    engine: EngineName = ENGINE_SPARK, master: Optional[str] = MASTER, conf: Optional[List[str]] = CONF,
) -> None:
    """A reviewable shell script of kafka-transactions.sh abort lines for the hanging transactions.
    Never runs anything."""
    from forensics.render.abort_script import render_abort_script
    from forensics.render.shell_text import has_hidden, visible
    from forensics.report.hanging import hanging_row
    from forensics.report.preview import add_previews

    for name, value in (("--bootstrap-server", bootstrap), ("--command-config", command_config)):
        if value is not None and has_hidden(value):  # written into the script's commands: never raw
            raise fail(f"{name}: a control character in '{visible(value)}'", EXIT_USAGE)

    with error_boundary():
        run = ManifestRun(manifest, "abort-commands", paths, engine.value)
        rep, verdicts, when, version = _verdicts(paths, as_of, topic, partition, broker_id, minutes, partitions,
                                                 progress, (engine, master, conf), run, cluster_id, broker_version)
        pairs = [(hanging_row(v, bootstrap, command_config, arm_unverifiable, version), v) for v in verdicts
                 if v.needs_attention]
        add_previews(pairs, rep.inventory, redact)
        rows = [row for row, _ in pairs]
        ref = _finish(run, when)
        render_abort_script(rows, sys.stdout, as_of=as_of_text(when), inputs=paths, manifest=ref,
                            bootstrap=bootstrap, command_config=command_config,
                            warnings=evidence_warnings(rep), brokers=version.label)
        sys.stdout.flush()
        write_clock(when, as_of_line=False)
        _report_evidence(rep)
