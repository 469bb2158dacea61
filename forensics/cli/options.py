"""Options shared by several commands: the analysis time, the cluster and the execution engine."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from typing import List, Optional, Tuple

import typer

from forensics.cli.boundary import EXIT_USAGE, fail
from forensics.pipeline.engine import EngineName, EngineSpec, Executor, make_executor
from forensics.render.terminal_text import term

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


def discover_inputs(paths: List[str], cluster_id: Optional[str]):
    """The inventory of the inputs, one cluster and one copy of each broker's log dir (see
    :mod:`forensics.layout.clusters`); what was left out, one line each on stderr."""
    from forensics.layout import discover
    from forensics.layout.clusters import select_cluster

    selection = select_cluster(discover(paths), cluster_id)
    for note in selection.notes:
        typer.echo(f"kafka-forensics: {term(note)}", err=True)
    return selection.inventory


# -- the execution engine ------------------------------------------------------------------------

_ENGINE_HELP = ("local: in-process, no JVM. spark: PySpark, on --master (default local[*,4], every core of "
                "this machine). Without a Java runtime, spark falls back to local with a warning.")
ENGINE_ENV = "KAFKA_FORENSICS_ENGINE"  # overrides every command's default engine
ENGINE_SPARK = typer.Option(EngineName.spark, "--engine", envvar=ENGINE_ENV, show_envvar=True,
                            help=_ENGINE_HELP + " Default here: spark.")
ENGINE_LOCAL = typer.Option(EngineName.local, "--engine", envvar=ENGINE_ENV, show_envvar=True,
                            help=_ENGINE_HELP + " Default here: local.")
MASTER = typer.Option(None, "--master", metavar="URL", help="Spark master: local[N], local[*], local[N,F], spark://HOST:PORT, "
                      "yarn, k8s://... (default local[*,4]: a failed task is tried up to 4 times; under spark-submit, the master it was given).")
CONF = typer.Option(None, "--conf", metavar="KEY=VALUE", help="A Spark setting, e.g. spark.executor.memory=4g "
                    "(repeatable).")
STATS_ENV = "KAFKA_FORENSICS_STATS"  # file to write the engine's statistics to (benchmarks)


def _parse_conf(items: Optional[List[str]]) -> Tuple[Tuple[str, str], ...]:
    out = []
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise fail(f"--conf {item!r}: give KEY=VALUE, e.g. spark.executor.memory=4g", EXIT_USAGE)
        out.append((key.strip(), value))
    return tuple(out)


def make_engine(engine: EngineName, master: Optional[str], conf: Optional[List[str]]) -> Executor:
    """The executor the options ask for (a warning on stderr when Spark cannot run here)."""
    spec = EngineSpec(engine, master, _parse_conf(conf))
    if engine is EngineName.local and (master or conf):
        typer.echo("kafka-forensics: warning: --master/--conf apply to --engine spark only", err=True)
    return make_executor(spec, lambda m: typer.echo(f"kafka-forensics: warning: {m}", err=True))


def write_engine_stats(executor: Executor) -> None:
    """With KAFKA_FORENSICS_STATS=FILE, record what the engine did (units, tasks, bytes to the driver)."""
    target = os.environ.get(STATS_ENV)
    stats = getattr(executor, "stats", None)
    if not target or not stats:
        return
    with open(target, "w", encoding="utf-8") as fh:
        json.dump(stats, fh, indent=2, sort_keys=True)
        fh.write("\n")
