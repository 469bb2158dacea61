"""Options shared by several commands (the inputs, the analysis time, the cluster, the engine, the
filters, the formats) and what they become in a run's request."""

from __future__ import annotations

from datetime import datetime, timezone
from enum import Enum
from typing import List, Optional, Tuple

import typer

try:  # typer 0.2x carries its own copy of click
    from typer._click.core import ParameterSource
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover  (older typer runs on click itself)
    from click import get_current_context
    from click.core import ParameterSource

from forensics.cli.boundary import EXIT_USAGE, command_line, fail
from forensics.runs.context import EngineChoice, EngineName, Evidence

AS_OF = typer.Option(None, "--as-of", help="Analysis time (epoch ms or ISO-8601). Default: the newest timestamp "
                     "on the inputs, never this machine's clock.")


def parse_time(text: Optional[str]) -> Optional[int]:
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

BROKER_VERSION = typer.Option(None, "--broker-version", metavar="X.Y", help="The brokers' Kafka release (e.g. 3.9 "
                              "or 4.1.0), instead of the range the disks show (meta.properties, metadata.version, "
                              "files only some releases write).")


def given_broker_version(text: Optional[str]):
    """``--broker-version`` as (major, minor), checked before anything is read (exit 2 if malformed)."""
    from forensics.analysis.broker_version import parse_version

    return parse_version(text) if text is not None else None


# -- the cluster -----------------------------------------------------------------------------------

CLUSTER_ID = typer.Option(None, "--cluster-id", metavar="ID", help="Analyse only this cluster's log dirs (needed "
                          "when the inputs hold several clusters: they are never replicas of each other).")




# -- the execution engine ------------------------------------------------------------------------

_ENGINE_HELP = ("auto: local below the size of log data from which Spark was measured faster (docs/performance.md), "
                "spark from there on or when --master/--conf is given. local: in-process, no JVM. spark: PySpark, "
                "on --master (default local[*,4], every core of this machine). Without a Java runtime, spark falls "
                "back to local with a warning. Every run says on stderr which engine ran and why.")
ENGINE_ENV = "KAFKA_FORENSICS_ENGINE"  # overrides every command's default engine
ENGINE_AUTO = typer.Option(EngineName.auto, "--engine", envvar=ENGINE_ENV, show_envvar=True,
                           help=_ENGINE_HELP + " Default here: auto.")
ENGINE_LOCAL = typer.Option(EngineName.local, "--engine", envvar=ENGINE_ENV, show_envvar=True,
                            help=_ENGINE_HELP + " Default here: local (a lookup reads little).")
MASTER = typer.Option(None, "--master", metavar="URL", help="Spark master: local[N], local[*], local[N,F], spark://HOST:PORT, "
                      "yarn, k8s://... (default local[*,4]: a failed task is tried up to 4 times; under spark-submit, the master it was given).")
CONF = typer.Option(None, "--conf", metavar="KEY=VALUE", help="A Spark setting, e.g. spark.executor.memory=4g "
                    "(repeatable).")


def _parse_conf(items: Optional[List[str]]) -> Tuple[Tuple[str, str], ...]:
    out = []
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise fail(f"--conf {item!r}: give KEY=VALUE, e.g. spark.executor.memory=4g", EXIT_USAGE)
        out.append((key.strip(), value))
    return tuple(out)


def _given(engine: EngineName) -> str:
    """How a forced engine name was given: on the command line, in the environment, or by the command."""
    context = get_current_context(silent=True)
    where = context.get_parameter_source("engine") if context is not None else None
    if where is ParameterSource.ENVIRONMENT:
        return f"{ENGINE_ENV}={engine.value}"
    if where is ParameterSource.COMMANDLINE:
        return f"--engine {engine.value}"
    return "the default of this command"


def engine_choice(engine: EngineName, master: Optional[str], conf: Optional[List[str]]) -> EngineChoice:
    return EngineChoice(engine, master, _parse_conf(conf), _given(engine))


def evidence_of(paths: List[str], cluster_id: Optional[str] = None, manifest: Optional[str] = None) -> Evidence:
    """The inputs of a run, with the manifest wish and this command line (which the manifest records)."""
    return Evidence(tuple(paths), cluster_id, manifest, tuple(command_line()))


# -- the inputs, filters and formats of the state and verdict commands ------------------------------


class RowFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


PATHS = typer.Argument(..., help="Log dirs, a folder of several brokers' log dirs, or partition dirs.")
FORMAT = typer.Option(RowFormat.table, "--format", help="table (as kafka-transactions.sh), json or csv.")
PARTITIONS = typer.Option(None, "--transaction-state-partitions", min=1,
                          help="Partition count of __transaction_state (default: as many as found).")
STRICT = typer.Option(False, "--strict", help="Exit 5 when any finding was reported.")
PROGRESS = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr (only on a terminal).")
TIMEOUT = typer.Option(15, "--max-transaction-timeout", min=0, help="Age gate in minutes (as Kafka's tool); "
                       "decides only where no coordinator data can.")
TOPIC = typer.Option(None, "--topic", help="Only this topic.")
PARTITION = typer.Option(None, "--partition", min=0, help="Only this partition (with --topic).")
BROKER = typer.Option(None, "--broker-id", help="Only replicas on this broker.")
