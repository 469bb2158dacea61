"""``describe-producers``, ``list``, ``describe``: kafka-transactions.sh's views, rebuilt offline."""

from __future__ import annotations

import sys

import typer

from forensics.analysis.filters import STATE_NAMES
from forensics.cli.as_of import write_clock
from forensics.cli.boundary import EXIT_STRICT, EXIT_USAGE, error_boundary, fail
from forensics.cli.console import StderrListener, after_run, write_findings, write_note
from forensics.cli.options import (
    AS_OF,
    CLUSTER_ID,
    BROKER,
    CONF,
    JOBS,
    ENGINE,
    FORMAT,
    MANIFEST,
    MASTER,
    PARTITION_REQUIRED,
    PARTITIONS,
    PATHS,
    PROGRESS,
    QUIET,
    STRICT,
    TOPIC_REQUIRED,
    WIDE,
    RowFormat,
    engine_choice,
    evidence_of,
    parse_time,
)
from forensics.render.machine_format import DESCRIBE, DESCRIBE_PRODUCERS, LIST
from forensics.render.rows import render_rows
from forensics.render.kafka_text import DESCRIBE_TEXT, LIST_TEXT, PRODUCERS_TEXT
from forensics.render.state_render import DESCRIBE_TABLE, LIST_TABLE, PRODUCER_TABLE
from forensics.render.state_screens import describe_screen, list_screen, producers_screen
from forensics.render.terminal_text import term
from forensics.runs.context import EngineName
from forensics.runs.state import (
    DescribeRequest,
    ListRequest,
    ProducersRequest,
    describe_id,
    describe_producers,
    list_ids,
)


def _strict(findings, strict: bool) -> None:
    write_findings(findings)
    if strict and findings:
        raise typer.Exit(EXIT_STRICT)


def describe_producers_cli(
    paths: list[str] = PATHS,
    topic: str = TOPIC_REQUIRED, partition: int = PARTITION_REQUIRED, broker_id: int | None = BROKER,
    timeline: bool = typer.Option(False, "--timeline", help="Table format: also print each producer's transactions "
                                  "(JSON and JSONL always hold them)."),
    fmt: RowFormat = FORMAT, wide: bool = WIDE, strict: bool = STRICT, progress: bool = PROGRESS, quiet: bool = QUIET,
    manifest: str | None = MANIFEST, cluster_id: str | None = CLUSTER_ID,
    engine: EngineName | None = ENGINE, master: str | None = MASTER, conf: list[str] | None = CONF,
    jobs: int | None = JOBS,
) -> None:
    """Producer state of one partition replica, as the broker held it (snapshot + replay)."""
    if timeline and fmt in (RowFormat.text, RowFormat.csv):
        raise fail(f"--timeline: the table format only; --format {fmt.value} prints the producers alone "
                   "(json and jsonl hold each producer's transactions)", EXIT_USAGE)
    with error_boundary():
        req = ProducersRequest(evidence_of(paths, cluster_id, manifest), topic, partition, broker_id,
                               engine_choice(engine, master, conf, EngineName.local, jobs))
        done = describe_producers(req, StderrListener(progress))
        ref = after_run(done.manifest, done.stats)
        asked = f"{topic}-{partition}" + ("" if broker_id is None else f" on broker {broker_id}")
        render_rows(fmt.value, DESCRIBE_PRODUCERS, done.rows, PRODUCER_TABLE, sys.stdout, text=PRODUCERS_TEXT,
                    manifest=ref, screen=lambda rows, out: producers_screen(rows, out, wide, timeline, asked))
        sys.stdout.flush()
        _strict(done.findings, strict)


def list_cli(
    paths: list[str] = PATHS,
    state: str | None = typer.Option(None, "--state", metavar="STATE", help="Only transactional ids in this state (any case): "
                                        + ", ".join(STATE_NAMES) + "."),
    duration_filter: int | None = typer.Option(
        None, "--duration-filter", metavar="MS", help="As Kafka 4.1's list: if < 0, every transactional id; "
        "otherwise only those whose transaction started more than MS milliseconds before --as-of (the last "
        "transaction's start for an id not Ongoing; an id that never began one always passes, as in Kafka)."),
    id_pattern: str | None = typer.Option(
        None, "--transactional-id-pattern", metavar="REGEX", help="As Kafka 4.1's list: only the transactional "
        "ids this regular expression matches whole (Kafka's coordinator uses RE2 and Matcher.matches(); here "
        "Python's re.fullmatch)."),
    as_of: str | None = AS_OF,
    partitions: int | None = PARTITIONS, fmt: RowFormat = FORMAT, wide: bool = WIDE, strict: bool = STRICT,
    progress: bool = PROGRESS, quiet: bool = QUIET, manifest: str | None = MANIFEST, cluster_id: str | None = CLUSTER_ID,
    engine: EngineName | None = ENGINE, master: str | None = MASTER, conf: list[str] | None = CONF,
    jobs: int | None = JOBS,
) -> None:
    """Every transactional id the coordinators hold (expired ids only with --state Dead)."""
    with error_boundary():
        req = ListRequest(evidence_of(paths, cluster_id, manifest), state, partitions,
                          engine_choice(engine, master, conf, jobs=jobs), duration_filter, id_pattern, parse_time(as_of))
        done = list_ids(req, StderrListener(progress))
        ref = after_run(done.manifest, done.stats)
        empty = done.note or "no transactional id in the coordinators' logs (__transaction_state)"
        render_rows(fmt.value, LIST, done.rows, LIST_TABLE, sys.stdout, text=LIST_TEXT, manifest=ref,
                    screen=lambda rows, out: list_screen(rows, out, wide, empty))
        sys.stdout.flush()
        if duration_filter is not None and duration_filter >= 0:
            write_clock(done.as_of)  # the "now" the durations were measured to
        if done.note is not None and not (fmt is RowFormat.table and not done.rows):  # else the table's line
            write_note(term(done.note))
        _strict(done.findings, strict)


def describe_cli(
    paths: list[str] = PATHS,
    transactional_id: str = typer.Option(..., "--transactional-id", metavar="ID", help="The transactional id."),
    as_of: str | None = AS_OF, partitions: int | None = PARTITIONS, fmt: RowFormat = FORMAT, wide: bool = WIDE,
    strict: bool = STRICT,
    progress: bool = PROGRESS, quiet: bool = QUIET, manifest: str | None = MANIFEST, cluster_id: str | None = CLUSTER_ID,
    engine: EngineName | None = ENGINE, master: str | None = MASTER, conf: list[str] | None = CONF,
    jobs: int | None = JOBS,
) -> None:
    """One transactional id: the coordinator's metadata, then every record of its history."""
    with error_boundary():
        req = DescribeRequest(evidence_of(paths, cluster_id, manifest), transactional_id, parse_time(as_of), partitions,
                              engine_choice(engine, master, conf, EngineName.local, jobs))
        done = describe_id(req, StderrListener(progress))
        ref = after_run(done.manifest, done.stats)
        render_rows(fmt.value, DESCRIBE, done.rows, DESCRIBE_TABLE, sys.stdout, text=DESCRIBE_TEXT, manifest=ref,
                    screen=lambda rows, out: describe_screen(rows, out, wide))
        sys.stdout.flush()
        write_clock(done.as_of, as_of_line=False)
        _strict(done.findings, strict)
