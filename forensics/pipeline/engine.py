"""Choosing the executor: ``local`` (in-process) or ``spark`` (PySpark), over the same units.

Both take a list of :class:`~forensics.pipeline.plan.WorkUnit` and return the finalized results
per replica; nothing after that depends on which one ran.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import Enum
from typing import Callable, Dict, Optional, Protocol, Sequence, Tuple

from forensics.model import Progress
from forensics.pipeline.java import MIN_JAVA, _java_major, java_runtime, spark_available  # noqa: F401
from forensics.pipeline.merge import ReplicaResult
from forensics.pipeline.plan import WorkUnit
from forensics.pipeline.stats import engine_stats  # noqa: F401  (re-exported)



class EngineName(str, Enum):
    local = "local"
    spark = "spark"


class Executor(Protocol):
    name: str

    def run(self, units: Sequence[WorkUnit], progress: Optional[Progress] = None) -> Dict[str, ReplicaResult]:
        ...


@dataclass(frozen=True)
class EngineSpec:
    name: EngineName = EngineName.local
    master: Optional[str] = None  # None: local[*,4] (or what spark-submit configured)
    conf: Tuple[Tuple[str, str], ...] = ()


def make_executor(spec: EngineSpec, warn: Callable[[str], None]) -> Executor:
    """The executor for ``spec``; Spark without Java falls back to local, saying so in one line."""
    from forensics.pipeline.local import LocalExecutor

    if spec.name is EngineName.local:
        return LocalExecutor()
    ok, why = spark_available()
    if not ok:
        warn(f"{why}; running with --engine local instead")
        return LocalExecutor()
    from forensics.pipeline.spark import SparkExecutor

    return SparkExecutor(spec.master, spec.conf)


def shutdown(interrupted: bool = False) -> None:
    """Stop the Spark session and its JVM if this process started one (the CLI calls it before it
    exits, so that a Ctrl-C during the stop is handled like any other; ``interrupted``: after a
    Ctrl-C, the JVM is killed rather than waited for). Re-raises KeyboardInterrupt."""
    session = sys.modules.get("forensics.pipeline.spark_session")
    if session is not None:
        session.SESSION.close(interrupted)
