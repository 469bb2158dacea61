"""Choosing the executor: ``local`` (in-process) or ``spark`` (PySpark), over the same units.

Both take a list of :class:`~forensics.pipeline.plan.WorkUnit` and return the finalized results
per replica; nothing after that depends on which one ran.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Callable, Dict, Optional, Protocol, Sequence, Tuple

from forensics.model import Progress
from forensics.pipeline.merge import ReplicaResult
from forensics.pipeline.plan import WorkUnit



class EngineName(str, Enum):
    local = "local"
    spark = "spark"


class Executor(Protocol):
    name: str

    def run(self, units: Sequence[WorkUnit], progress: Optional[Progress] = None) -> Dict[str, ReplicaResult]:
        ...


def engine_stats(engine: str, master: Optional[str], units: Sequence[WorkUnit], tasks: int, slots: int,
                 started: float, bytes_to_driver: int = 0, startup_seconds: float = 0.0) -> Dict[str, object]:
    """What an executor did, with the same keys for both (``KAFKA_FORENSICS_STATS``, benchmarks).
    ``started``: ``time.perf_counter()`` when the job began."""
    return {"engine": engine, "master": master, "units": len(units), "tasks": tasks, "slots": slots,
            "bytesToDriver": bytes_to_driver, "startupSeconds": round(startup_seconds, 3),
            "runSeconds": round(time.perf_counter() - started, 3), "inputBytes": sum(u.size for u in units)}


@dataclass(frozen=True)
class EngineSpec:
    name: EngineName = EngineName.local
    master: Optional[str] = None  # None: local[*,4] (or what spark-submit configured)
    conf: Tuple[Tuple[str, str], ...] = ()


MIN_JAVA = 17  # Spark 4 runs on Java 17 and later


def _java_major(version_output: str) -> Optional[int]:
    """``openjdk version "17.0.15"`` -> 17; ``java version "1.8.0_392"`` -> 8."""
    m = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if m is None:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


@lru_cache(maxsize=1)
def java_runtime() -> Optional[str]:
    """The ``java`` Spark would start (``JAVA_HOME`` first, then ``PATH``), if it runs and is recent
    enough."""
    home = os.environ.get("JAVA_HOME")
    candidates = [os.path.join(home, "bin", "java")] if home else []
    found = shutil.which("java")
    if found:
        candidates.append(found)
    for java in candidates:
        try:
            done = subprocess.run([java, "-version"], capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        major = _java_major(done.stderr.decode("utf-8", "replace") + done.stdout.decode("utf-8", "replace"))
        if done.returncode == 0 and major is not None and major >= MIN_JAVA:
            return java
    return None


def spark_available() -> Tuple[bool, str]:
    """Whether ``--engine spark`` can run here, and why not."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False, "PySpark is not installed"
    if java_runtime() is None:
        return False, f"no Java runtime found (Spark needs Java {MIN_JAVA} or later: install one or set JAVA_HOME)"
    return True, ""


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
