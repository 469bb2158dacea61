"""The one stderr line of every run that says which engine ran and why."""

from __future__ import annotations

from forensics.pipeline.engine import Chosen, EngineName, Why
from forensics.render.size_text import size


def _master(chosen: Chosen) -> str:
    if chosen.master:
        return chosen.master
    from forensics.pipeline.spark_session import DEFAULT_MASTER, under_spark_submit

    return "the master spark-submit was given" if under_spark_submit() else DEFAULT_MASTER


def engine_line(chosen: Chosen) -> str:
    """``engine local (2 processes): 1.2 MiB of logs; Spark is not faster on one machine`` (without the
    ``kafka-forensics: `` prefix, with which a line of ordinary sizes and masters fits 100 columns;
    paths in ``given`` are the caller's to escape); ``local (2 processes)`` over a pool of workers."""
    if chosen.name is EngineName.local:
        what = "local (in-process)" if chosen.processes < 2 else f"local ({chosen.processes} processes)"
    else:
        what = f"spark ({_master(chosen)})"
    data = f"{size(chosen.input_bytes)} of logs"
    # how it was measured: docs/performance.md, "The default engine"
    threshold = f"the {size(chosen.threshold or 0)} Spark threshold"
    why = {
        Why.given: chosen.given,
        Why.master: "--master given",
        Why.conf: "--conf given",
        Why.one_machine: f"{data}; Spark is not faster on one machine",
        Why.small: f"{data}, below {threshold}",
        Why.large: f"{data}, at least {threshold}",
        Why.one_core: "one core here: Spark's tasks could not run side by side",
        Why.no_spark: f"{data}, at least {threshold}, but Spark cannot run here: {chosen.given}",
    }[chosen.why]
    return f"engine {what}: {why}"
