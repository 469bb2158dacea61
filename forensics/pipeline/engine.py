"""Choosing the executor: ``local`` (in-process) or ``spark`` (PySpark), over the same units.

Both take a list of :class:`~forensics.pipeline.plan.WorkUnit` and return the finalized results
per replica; nothing after that depends on which one ran.
"""

from __future__ import annotations

import os
from forensics.dataclass_fast import dataclass
from enum import Enum
from typing import NamedTuple
from collections.abc import Callable, Sequence

from forensics.model import Progress
from forensics.pipeline.java import (  # noqa: F401
    MIN_JAVA,
    SparkMissing,
    java_runtime,
    pyspark_installed,
    spark_available,
)
from forensics.pipeline.executor import R, Executor
from forensics.pipeline.merge import ReplicaResult
from forensics.pipeline.plan import WorkUnit
from forensics.pipeline.stats import EngineStats  # noqa: F401  (re-exported: what a job did)
from forensics.process_state import PROCESS



class EngineName(str, Enum):
    auto = "auto"  # local or spark by the input's size: see choose_engine
    local = "local"
    spark = "spark"


class Reuse(Executor):
    """An executor that returns results computed already: one job reads the disks once for both the
    scan and the state report (the union of what each plans; ``export``), ``name`` the engine's that ran it."""

    def __init__(self, results: dict[str, ReplicaResult], name: str) -> None:
        self.results = results
        self.name = name

    def run_each(self, units: Sequence[WorkUnit], progress: Progress | None,
                 consume: Callable[[str, ReplicaResult], R]) -> dict[str, R]:
        # shared by two reports: each consumes them as read (assemble_state folds what it needs)
        return {key: consume(key, results) for key, results in self.results.items()}


class Why(str, Enum):
    """Why an engine runs (render/engine_text.engine_line says it in words)."""

    given = "given"  # --engine, its environment variable, or the command (EngineSpec.given says which)
    master = "master"  # auto: --master given
    conf = "conf"  # auto: --conf given
    one_machine = "one_machine"  # auto: on this machine Spark is never faster, whatever the size
    small = "small"  # auto: less log data than the Spark threshold of this workload and these cores
    large = "large"  # auto: at least that
    one_core = "one_core"  # auto: one core, where Spark's tasks cannot run side by side
    no_spark = "no_spark"  # auto: large, but Spark cannot run here (Chosen.given says why)


class Workload(str, Enum):
    """What a command runs on its engine, which decides where Spark could be faster."""

    read = "read"  # the work units, then the driver's analysis: every whole-disk command but export
    export = "export"  # the same, then the `batches` table written by the engine (in-process: by one process)


class Cost(NamedTuple):
    """An engine's wall time on an idle machine of N cores for S GiB of log data: ``start +
    (parallel / N + serial) * S`` seconds (what the driver's analysis adds costs both engines the same:
    left out of both)."""

    start: float  # before the first byte is read (Spark: the JVM and the session)
    parallel: float  # seconds per GiB on one core, spread over N (the work units; Spark: its tasks)
    serial: float  # seconds per GiB in one process whatever N (in-process export: the `batches` pass)

    def per_gib(self, cores: int) -> float:
        return self.parallel / max(1, cores) + self.serial

    def wall(self, gib: float, cores: int) -> float:
        return self.start + self.per_gib(cores) * gib


# Measured on this project's 2-core machine in interleaved rounds, the engines' own job and start-up
# times (docs/performance.md, "The default engine", derives each figure): find-hanging of 2 and 6 GiB
# for `read` (in-process --jobs 1 against Spark local[1]: its tasks run the same units in Python
# workers, plus pickling and the JVM, so they cannot cost less per GiB than the pool's), export of
# 2 GiB for `export` (Spark's CPU per GiB taken as spread perfectly over its cores). Each a best case
# for Spark; what both engines do alike (imports, discovery, the driver's analysis) is left out.
IN_PROCESS = {Workload.read: Cost(0.0, 0.37, 0.0), Workload.export: Cost(0.0, 0.38, 1.34)}
SPARK = {Workload.read: Cost(7.8, 0.50, 0.0), Workload.export: Cost(8.2, 6.8, 0.0)}


def spark_from_bytes(workload: Workload, cores: int) -> int | None:
    """The log bytes from which Spark ``local[cores]`` finishes ``workload`` sooner than the
    in-process engine on ``cores`` processes, by the model above; None: at no size (Spark starts
    later and costs no less per GiB on these cores)."""
    ours, spark = IN_PROCESS[workload], SPARK[workload]
    saved_per_gib = ours.per_gib(cores) - spark.per_gib(cores)
    if saved_per_gib <= 0:
        return None
    return int((spark.start - ours.start) / saved_per_gib * (1 << 30))


@dataclass(frozen=True)
class EngineSpec:
    name: EngineName = EngineName.local
    master: str | None = None  # None: local[*,4] (or what spark-submit configured)
    conf: tuple[tuple[str, str], ...] = ()
    given: str = ""  # a forced name: how it was given ("--engine local", "KAFKA_FORENSICS_ENGINE=spark")
    jobs: int | None = None  # in-process worker processes (--jobs); None: one per core, none on small inputs
    workload: Workload = Workload.read


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, as ``taskset`` or a cpuset sets it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover  (not Linux)
        return max(1, os.cpu_count() or 1)


class Chosen(NamedTuple):
    """The engine that runs and why."""

    name: EngineName  # local or spark, never auto
    why: Why
    given: str = ""  # Why.given: how (EngineSpec.given); Why.no_spark: why Spark cannot run
    input_bytes: int = 0
    master: str | None = None  # spark: the master asked for (None: the default one)
    processes: int = 1  # local: the worker processes the job runs on (1: this process alone)
    threshold: int | None = None  # auto: the log bytes from which Spark runs here (None: never)


def choose_engine(spec: EngineSpec, input_bytes: int, cores: int | None = None,
                  spark_ok: Callable[[], tuple[bool, str]] = lambda: spark_available()) -> Chosen:
    """The engine for ``spec`` reading ``input_bytes`` of log data: a forced name as given; ``auto``
    is Spark whenever --master or --conf says how to run it, else in-process on one core or below
    :func:`spark_from_bytes` of the workload on these cores (at any size where it gives none), Spark
    from there on where it can run."""
    if spec.name is not EngineName.auto:
        return Chosen(spec.name, Why.given, spec.given or f"--engine {spec.name.value}", input_bytes, spec.master)
    spark = EngineName.spark
    if spec.master:
        return Chosen(spark, Why.master, "", input_bytes, spec.master)
    if spec.conf:
        return Chosen(spark, Why.conf, "", input_bytes, spec.master)
    n = cores or available_cores()
    if n < 2:
        return Chosen(EngineName.local, Why.one_core, "", input_bytes)
    threshold = spark_from_bytes(spec.workload, n)
    if threshold is None:
        return Chosen(EngineName.local, Why.one_machine, "", input_bytes)
    if input_bytes < threshold:
        return Chosen(EngineName.local, Why.small, "", input_bytes, threshold=threshold)
    ok, why = spark_ok()
    if not ok:
        return Chosen(EngineName.local, Why.no_spark, why, input_bytes, threshold=threshold)
    return Chosen(spark, Why.large, "", input_bytes, spec.master, threshold=threshold)


class _Told(Executor):
    """An executor that tells which engine runs, and why, when its first job starts (not when it is
    made: inputs refused before any work is read get their one line alone)."""

    def __init__(self, executor: Executor, chosen: Chosen, tell: Callable[[Chosen], None]) -> None:
        self._executor, self._tell = executor, tell
        self._chosen: Chosen | None = chosen  # None once told
        self.name = executor.name

    def announce(self, units: Sequence[WorkUnit]) -> None:
        """Tell the engine line for ``units`` now, once (before a progress bar starts: a line written
        while the bar is drawn lands inside its frame)."""
        if self._chosen is not None:
            processes = getattr(self._executor, "processes", None)
            self._tell(self._chosen._replace(processes=processes(units)) if processes is not None else self._chosen)
            self._chosen = None

    def run_each(self, units: Sequence[WorkUnit], progress: Progress | None,
                 consume: Callable[[str, ReplicaResult], R]) -> dict[str, R]:
        self.announce(units)
        return self._executor.run_each(units, progress, consume)

    def __getattr__(self, name: str):  # stats, master, ...: the executor's
        return getattr(self._executor, name)


def make_executor(spec: EngineSpec, warn: Callable[[str], None], input_bytes: int = 0,
                  tell: Callable[[Chosen], None] = lambda chosen: None) -> Executor:
    """The executor for ``spec`` (``auto``: by ``input_bytes``, see :func:`choose_engine`), told to
    ``tell`` as its first job starts; Spark asked for (by name, --master or --conf) where it cannot run
    (no PySpark, no Java) is refused (:class:`SparkMissing`: one line saying what is missing and how to
    install it); ``auto`` runs in-process then, its engine line saying why."""
    from forensics.pipeline.local import LocalExecutor

    chosen = choose_engine(spec, input_bytes)
    if chosen.name is EngineName.local:
        return _Told(LocalExecutor(spec.jobs or available_cores(), forced=spec.jobs is not None), chosen, tell)
    if chosen.why is not Why.large:  # Why.large: choose_engine checked already
        ok, why = spark_available()
        if not ok:  # asked for by name: never run elsewhere than asked
            raise SparkMissing(f"{_asked(chosen)} needs Spark, which cannot run here: {why}; "
                               f"{_in_process(chosen)} runs in this process")
    from forensics.pipeline.spark import SparkExecutor

    return _Told(SparkExecutor(spec.master, spec.conf), chosen, tell)


def _asked(chosen: Chosen) -> str:
    """How Spark was asked for: ``--engine spark`` (or its variable), ``--master URL``, ``--conf``."""
    if chosen.why is Why.master:
        return f"--master {chosen.master}"
    return "--conf" if chosen.why is Why.conf else chosen.given


def _in_process(chosen: Chosen) -> str:
    return "the same command without --master and --conf" if chosen.why in (Why.master, Why.conf) \
        else "--engine local"


def shutdown(interrupted: bool = False) -> None:
    """Stop the Spark session and its JVM if this process started one (the CLI calls it before it
    exits, so that a Ctrl-C during the stop is handled like any other; ``interrupted``: after a
    Ctrl-C, the JVM is killed rather than waited for). Re-raises KeyboardInterrupt."""
    if PROCESS.spark is not None:
        PROCESS.spark.close(interrupted)
