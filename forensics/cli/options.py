"""Options shared by several commands (the inputs, the analysis time, the cluster, the engine, the
filters, the formats) and what they become in a run's request.

Each option is defined here once and means the same on every command that takes it: the same name,
value name (metavar), type, default and help (tests/cli/test_options.py walks every command and
holds them to it; the few rightful differences are in :data:`VARIES`, each with its reason). Every
value an option takes is named by its metavar, never shown as a type, and flags take none. Choices
are taken in any case (``--format JSON``, ``--engine Spark``), as Kafka's tools take their enums.
The help lists the options in sections: the command's own, then ``Evidence`` (what is read and
how it is recorded) and ``Engine`` (where the work runs); see docs/cli.md, "Options shared by
commands"."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from enum import Enum
from typing import TYPE_CHECKING

import typer

from forensics.cli.boundary import EXIT_USAGE, command_line, fail
from forensics.cli.click_api import ParameterSource, get_current_context
from forensics.cli.console import set_quiet

if TYPE_CHECKING:  # the runs' vocabulary, loaded by the commands that make a run of a whole disk (not dump)
    from forensics.runs.context import EngineChoice, EngineName, Evidence

PANEL_EVIDENCE = "Evidence"  # the help section of the options about what is read and how it is recorded
PANEL_ENGINE = "Engine"  # the help section of --engine, --master, --conf, --jobs

AS_OF = typer.Option(None, "--as-of", metavar="TIME", rich_help_panel=PANEL_EVIDENCE,
                     help="Analysis time: epoch ms or ISO-8601 (e.g. 2026-01-01T01:00:00Z). Default: the newest "
                     "timestamp on the inputs, never this machine's clock.")

COPY_START = typer.Option(None, "--copy-start", metavar="TIME", rich_help_panel=PANEL_EVIDENCE,
                          help="When the copy of the disks began (epoch ms or ISO-8601), if known: on a copy of a "
                          "running broker, no partition was copied before it (see docs/stuck-lso.md).")


def parse_time(text: str | None) -> int | None:
    """Epoch milliseconds, or an ISO-8601 time (UTC unless it says otherwise)."""
    if text is None:
        return None
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise fail(f"--as-of {text!r}: give epoch milliseconds or an ISO-8601 time such as 2026-11-20T21:50:00Z",
                   EXIT_USAGE) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return int(t.timestamp() * 1000)


# -- the broker version ----------------------------------------------------------------------------

BROKER_VERSION = typer.Option(None, "--broker-version", metavar="X.Y", rich_help_panel=PANEL_EVIDENCE,
                              help="The brokers' Kafka release (e.g. 3.9 or 4.1.0), instead of the range the disks "
                              "show (meta.properties, metadata.version, files only some releases write).")


def given_broker_version(text: str | None):
    """``--broker-version`` as (major, minor), checked before anything is read (exit 2 if malformed)."""
    from forensics.analysis.broker_version import parse_version

    return parse_version(text) if text is not None else None


# -- the cluster -----------------------------------------------------------------------------------

CLUSTER_ID = typer.Option(None, "--cluster-id", metavar="ID", rich_help_panel=PANEL_EVIDENCE,
                          help="Analyse only this cluster's log dirs (needed when the inputs hold several clusters: "
                          "they are never replicas of each other).")




# -- the execution engine ------------------------------------------------------------------------

ENGINE_ENV = "KAFKA_FORENSICS_ENGINE"  # overrides every command's default engine
ENGINE = typer.Option(
    None, "--engine", metavar="auto|local|spark", case_sensitive=False, envvar=ENGINE_ENV, show_envvar=True,
    rich_help_panel=PANEL_ENGINE, help="Where the work runs. auto: local below the size of log data from which "
    "Spark was measured faster (docs/performance.md), spark from there on or when --master/--conf is given. local: "
    "in this process, no JVM. spark: PySpark on --master; without PySpark or a Java runtime it is refused in one "
    "line (exit 6). Default: auto where whole disks are read (scan, list, find-hanging, abort-commands, report), local "
    "for one partition or one id (describe-producers, describe). Every run says on stderr which engine ran and why.")
MASTER = typer.Option(None, "--master", metavar="URL", rich_help_panel=PANEL_ENGINE, help="Spark master: local[N], "
                      "local[*], local[N,F], spark://HOST:PORT, yarn, k8s://... (default local[*,4]: every core "
                      "of this machine, a failed task tried up to 4 times; under spark-submit, the master it was "
                      "given).")
CONF = typer.Option(None, "--conf", metavar="KEY=VALUE", rich_help_panel=PANEL_ENGINE, help="A Spark setting, e.g. "
                    "spark.executor.memory=4g (repeatable).")


JOBS_ENV = "KAFKA_FORENSICS_JOBS"
JOBS = typer.Option(None, "--jobs", metavar="N", min=1, envvar=JOBS_ENV, show_envvar=True,
                    rich_help_panel=PANEL_ENGINE, help="Processes the in-process engine reads with. Default: one "
                    "per core, and this process alone on small inputs (docs/performance.md). 1: this process "
                    "alone.")


def _parse_conf(items: list[str] | None) -> tuple[tuple[str, str], ...]:
    out = []
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise fail(f"--conf {item!r}: give KEY=VALUE, e.g. spark.executor.memory=4g", EXIT_USAGE)
        out.append((key.strip(), value))
    return tuple(out)


def _given(engine: EngineName | None) -> str:
    """How the engine name was given: on the command line, in the environment, or by the command."""
    context = get_current_context(silent=True)
    where = context.get_parameter_source("engine") if context is not None else None
    if engine is not None and where is ParameterSource.ENVIRONMENT:
        return f"{ENGINE_ENV}={engine.value}"
    if engine is not None and where is ParameterSource.COMMANDLINE:
        return f"--engine {engine.value}"
    return "the default of this command"


def engine_choice(engine: EngineName | None, master: str | None, conf: list[str] | None,
                  default: EngineName | None = None, jobs: int | None = None) -> EngineChoice:
    """``--engine`` (the command's ``default`` when not given, else auto), ``--master``, ``--conf``,
    ``--jobs``."""
    from forensics.runs.context import EngineChoice, EngineName

    chosen = engine if engine is not None else default if default is not None else EngineName.auto
    return EngineChoice(chosen, master, _parse_conf(conf), _given(engine), jobs)


def evidence_of(paths: list[str], cluster_id: str | None = None, manifest: str | None = None) -> Evidence:
    """The inputs of a run, with the manifest wish and this command line (which the manifest records)."""
    from forensics.runs.context import Evidence

    line = command_line()
    _refuse_flag_values(paths, line)
    return Evidence(tuple(paths), cluster_id, manifest, tuple(line))


def _refuse_flag_values(paths: list[str], line: list[str]) -> None:
    """``--all true``: click takes ``true`` as a path. Where no such path exists and the word follows a
    flag, say that flags take no value rather than "true: no such file or directory"."""
    for before, word in zip(line, line[1:]):
        if word in paths and word.lower() in _FLAG_WORDS and before.startswith("--") and "=" not in before \
                and not os.path.lexists(word):
            raise fail(f"{before} is a flag and takes no value: write {before} alone (\"{word}\" is not a path)",
                       EXIT_USAGE)


_FLAG_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})


# -- the inputs ----------------------------------------------------------------------------------

PATHS = typer.Argument(..., metavar="PATH", help="Copies of broker log dirs: log dirs, a folder of several "
                       "brokers' log dirs, or partition dirs (scan and export read single files too).")
MANIFEST = typer.Option(None, "--manifest", metavar="FILE", rich_help_panel=PANEL_EVIDENCE, help="Write an evidence "
                        "manifest to FILE: tool version, command line, times, and size, modification time and "
                        "SHA-256 of every input file (check it later with verify-manifest). JSON reports embed its "
                        "digest.")
PARTITIONS = typer.Option(None, "--transaction-state-partitions", metavar="N", min=1, rich_help_panel=PANEL_EVIDENCE,
                          help="Partition count of __transaction_state (default: as many as found).")

# -- the filters ---------------------------------------------------------------------------------

_TOPIC_HELP = "Only this topic (its name as on disk)."
_PARTITION_HELP = "Only this partition of --topic."
TOPIC = typer.Option(None, "--topic", metavar="TOPIC", help=_TOPIC_HELP)
PARTITION = typer.Option(None, "--partition", metavar="N", min=0, help=_PARTITION_HELP)
TOPIC_REQUIRED = typer.Option(..., "--topic", metavar="TOPIC", help=_TOPIC_HELP)
PARTITION_REQUIRED = typer.Option(..., "--partition", metavar="N", min=0, help=_PARTITION_HELP)
BROKER = typer.Option(None, "--broker-id", metavar="ID", help="Only the replicas on this broker (describe-producers "
                      "without it: the likely leader's, highest leader epoch, then longest log).")
TIMEOUT = typer.Option(15, "--max-transaction-timeout", metavar="MINUTES", min=0, help="Age gate in minutes, as "
                       "Kafka's tool takes it: decides only where no coordinator data can.")

# -- what a command prints and how it ends ---------------------------------------------------------

RENDERERS = {  # --format NAME: one meaning for each name, on every command that offers it
    "table": "columns for people",
    "text": "lines, as Kafka's own tool prints them where it has one",
    "json": "one JSON document",
    "jsonl": "one JSON object per line",
    "csv": "a header line, then one line per row",
}
JSON_STREAM = "json: the same lines as jsonl (a dump streams)"  # dump's json, kept for the scripts that use it


def format_help(*names: str, stream: bool = False) -> str:
    """The help of ``--format`` offering ``names`` (the first is the default)."""
    text = "; ".join(f"{n} ({RENDERERS[n]})" for n in names)
    return f"{text}{'; ' + JSON_STREAM if stream else ''}. Any case. Default: {names[0]}."


def format_option(kind: type[Enum], stream: bool = False):
    """``--format`` with the members of ``kind`` (an Enum of renderer names, the default first);
    ``stream``: ``json`` is the old name of ``jsonl`` there and not listed."""
    names = [m.value for m in kind if not (stream and m.value == "json")]
    return typer.Option(next(iter(kind)), "--format", metavar="|".join(names), case_sensitive=False,
                        show_default=False, help=format_help(*names, stream=stream))


class RowFormat(str, Enum):
    table = "table"
    text = "text"  # kafka-transactions.sh's table, its columns only (render/kafka_text), to diff with Kafka's tool
    json = "json"
    jsonl = "jsonl"
    csv = "csv"


FORMAT = format_option(RowFormat)
STRICT = typer.Option(False, "--strict", help="Exit 5 when any finding was reported (on stderr), after the output.")
WIDE = typer.Option(False, "--wide", help="Table: every column, each as wide as it needs (default: the columns "
                    "read first, fitted to the screen; long texts folded).")
PROGRESS = typer.Option(True, "--progress/--no-progress", show_default=False, help="A progress bar on stderr "
                        "(shown only on a terminal). Default: --progress.")
QUIET = typer.Option(False, "--quiet", "-q", callback=set_quiet, help="Only results and errors: stdout as without "
                     "it; on stderr only warnings, findings and errors (no engine line, as-of lines, hints, "
                     "summaries or progress bar).")

# -- the kafka-transactions.sh commands written out ------------------------------------------------

BOOTSTRAP_HELP = ("The brokers kafka-transactions.sh connects to, written into each command (required where the "
                  "commands form a script to run: abort-commands; the report shows '<bootstrap-server>' without "
                  "it).")
BOOTSTRAP_REQUIRED = typer.Option(..., "--bootstrap-server", metavar="HOST:PORT", help=BOOTSTRAP_HELP)
BOOTSTRAP = typer.Option(None, "--bootstrap-server", metavar="HOST:PORT", help=BOOTSTRAP_HELP)
BOOTSTRAP_PLACEHOLDER = "<bootstrap-server>"
COMMAND_CONFIG = typer.Option(None, "--command-config", metavar="FILE", help="Client config file (TLS, SASL), "
                              "written into each kafka-transactions.sh command as --command-config FILE.")
REDACT = typer.Option(False, "--redact", help="Hide record keys in the abort preview (what each abort would "
                      "discard; find-hanging shows it with --format json or jsonl).")

# Where one option rightly differs between the commands that take it, and why (every other shared
# option is one definition above; tests/cli/test_options.py holds them to it).
VARIES: dict[str, dict[str, str]] = {
    "--format": {
        "choices": "each command offers the renderers it has (RENDERERS: one meaning per name)",
        "default": "text where the output is lines (dump, verify-manifest), else table",
        "help": "it lists the renderers the command offers, each with its one meaning (format_help)",
        "metavar": "it lists the renderers the command offers",
    },
    "--out": {
        "metavar": "report writes one HTML FILE, export a DIR of tables",
        "help": "report writes one HTML FILE, export a DIR of tables",
    },
    "--overwrite": {
        "help": "report replaces one HTML file, export a directory holding a previous export (only that: its "
                "_export.json names what it may remove)",
    },
    "--bootstrap-server": {
        "required": "abort-commands writes a script to run, which needs the brokers; the report only shows the "
                    "commands (with '<bootstrap-server>' to fill in without it)",
    },
    "--engine": {
        "help": "export's engine also writes the tables, each engine in its own layout of files (docs/export.md), "
                "so its help says where and how; the name, choices, default and environment variable are the same",
    },
    "--topic": {"required": "describe-producers shows one partition, as kafka-transactions.sh describe-producers"},
    "--partition": {"required": "describe-producers shows one partition, as kafka-transactions.sh describe-producers"},
}
