"""The Spark executor: the same work units and merge, run by PySpark on ``local[*,4]`` or a cluster.

Spark receives only :class:`WorkUnit` tuples (paths and byte ranges), never file contents: each
task opens its files itself, read-only, so the disks must sit where every executor can read them
at the same path. A replica up to a slice (64 MiB) is read by one task, which merges and finalizes
it; the units of a larger replica are spread over tasks and their parts merged on the driver with
the same associative :func:`merge`. Only these reduced per-replica results travel to the driver
(no shuffle), which runs the same cross-reference code as the local engine.

A task only reads and returns a value, so Spark may run it again: a task whose Python worker or
executor died is retried (on a cluster by Spark's default, locally by the default master
``local[*,4]``) with the same result; accumulator updates count only the attempt that succeeded.

The session (quiet, scratch in a temp dir, warmed) is :mod:`forensics.pipeline.spark_session`;
our own progress bar follows Spark's progress through an accumulator of bytes read.
"""

from __future__ import annotations

import os
import pickle
import threading
import time
from typing import NamedTuple, TypeVar
from collections.abc import Callable, Iterator, Sequence

from forensics.model import Progress
from forensics.pipeline.executor import R, Executor
from forensics.pipeline.stats import EngineStats, engine_stats
from forensics.pipeline.merge import (
    ReplicaParts,
    ReplicaResult,
    finalize,
    merge_all,
    part_of,
)
from forensics.pipeline.plan import WorkUnit
from forensics.pipeline.spark_session import Conf, SparkError, process_session
from forensics.pipeline.units import run_unit

_SLICE_BYTES = 64 << 20  # aim for tasks of about this many bytes (balance, progress)

T = TypeVar("T")


class Item(NamedTuple):
    """What one task slot gets: a whole small replica, or one unit of a large replica."""

    units: tuple[WorkUnit, ...]
    size: int
    whole: bool  # every unit of its replica: the task finalizes it


def items(units: Sequence[WorkUnit], slice_bytes: int = _SLICE_BYTES) -> list[Item]:
    """Small replicas stay whole (finalized in their task, no shuffle); a replica larger than a
    slice is cut into its units, read in parallel and merged afterwards."""
    groups: dict[str, list[WorkUnit]] = {}
    for u in units:
        groups.setdefault(u.key, []).append(u)
    out: list[Item] = []
    for group in groups.values():
        size = sum(u.size for u in group)
        if size <= slice_bytes:
            out.append(Item(tuple(group), size, True))
        else:
            out.extend(Item((u,), u.size, False) for u in group)
    return out


def _warm_workers(sc) -> None:
    """Start the Python workers, import the units and run the task function once per slot on no
    work, as part of the session's start-up (so that the first job's time is its own work)."""
    slots = max(1, sc.defaultParallelism)
    done, sent = sc.accumulator(0), sc.accumulator(0)
    sc.parallelize([[]] * slots, slots).mapPartitions(_task(done, sent, os.getcwd())).collect()


def balance(work: Sequence[Item], slots: int, slice_bytes: int = _SLICE_BYTES) -> list[list[Item]]:
    """Bins of decreasing size (guided self-scheduling): each takes about half of what remains
    divided by the slots, down to ``slice_bytes`` / 4. Spark launches them in order on whichever
    core is free, so the big ones start first and the last ones are small: the cores finish
    together even though bytes cost differently (a transactional partition costs more per byte
    than a plain one). Few bins matter too: every task costs the JVM scheduling work on the same
    cores as the Python workers."""
    todo = sorted(work, key=lambda i: (-i.size, i.units[0].key, i.units[0].path, i.units[0].start))
    remaining = sum(i.size for i in todo)
    floor = max(1, slice_bytes // 4)
    bins: list[list[Item]] = []
    lo, hi = 0, len(todo)  # todo[lo:hi] is still to place, largest first
    while lo < hi:
        target = max(remaining // (2 * max(1, slots)), floor)
        bin_, load = [todo[lo]], todo[lo].size
        lo += 1
        while lo < hi and load + todo[lo].size <= target:
            bin_.append(todo[lo])
            load += todo[lo].size
            lo += 1
        while lo < hi and load + todo[hi - 1].size <= target:  # top up with the smallest
            hi -= 1
            bin_.append(todo[hi])
            load += todo[hi].size
        bins.append(bin_)
        remaining -= load
    return bins


class ExecutorCannotReadError(SparkError):
    """A file the driver listed is not there on an executor: the disks are not shared."""


def _check_visible(u: WorkUnit, cwd: str) -> None:
    if not os.path.exists(u.path):
        import socket

        raise ExecutorCannotReadError(
            f"executor on {socket.gethostname()} cannot see {os.path.join(cwd, u.path)}, which the driver "
            "read: the disks must be mounted at the same path on every executor")


def _task(done, sent, cwd: str):
    """The function each task runs: the driver's working directory first (relative paths resolve as
    on the driver), then its items. A file the driver saw but this executor cannot is an error, not
    a finding: the evidence is not mounted at the same path on every node. Whole replicas leave
    finalized; units of large replicas leave as parts, merged on the driver."""
    def run_bin(bin_items: Iterator[list[Item]]):
        if os.path.isdir(cwd):
            os.chdir(cwd)
        for bin_ in bin_items:
            for item in bin_:
                parts = []
                for u in item.units:
                    _check_visible(u, cwd)
                    parts.append(part_of(run_unit(u)))
                    done.add(u.size)
                merged = merge_all(parts)
                value = finalize(merged) if item.whole else merged
                # pickled here, once: the size is exactly what travels to the driver
                blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
                sent.add(len(blob))
                yield item.whole, item.units[0].key, blob
    return run_bin


_STAGE_FAILURE = "Job aborted due to stage failure: "
_PYTHON_FAILURE = "An exception was thrown from the Python worker"


def job_error(exc: BaseException) -> str:
    """The useful line of a failed job: our own error raised on an executor; else why the stage
    failed (how many attempts, the last one's error); else the exception ending a Python worker's
    traceback; else Spark's first line."""
    text = str(exc)
    marker = "ExecutorCannotReadError: "
    if marker in text:
        return text[text.index(marker) + len(marker):].splitlines()[0]
    if _STAGE_FAILURE in text:
        line = text[text.index(_STAGE_FAILURE) + len(_STAGE_FAILURE):].splitlines()[0]
        return line.split(" Consider setting ")[0][:300]  # drop Spark's advice on Python tracebacks
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if lines and lines[0].startswith(_PYTHON_FAILURE):
        return lines[-1][:300]
    return (lines[0] if lines else type(exc).__name__)[:300]


def _assemble(collected: list[tuple], consume: Callable[[str, ReplicaResult], R]) -> dict[str, R]:
    """Finalized replicas as they are; the parts of large replicas merged (associatively, in any
    order) and finalized here. With ``consume``, each replica is unpickled, handed over and dropped
    in turn (``collected`` is emptied as it goes), never all at once."""
    results: dict[str, R] = {}
    parts: dict[str, list[ReplicaParts]] = {}
    for i, (whole, key, blob) in enumerate(collected):
        collected[i] = None  # type: ignore[call-overload]  # dropped once read (the list empties as it goes)
        value = pickle.loads(blob)
        del blob
        if whole:
            results[key] = consume(key, value)
        else:
            parts.setdefault(key, []).append(value)
        del value
    for key in list(parts):
        value = finalize(merge_all(parts.pop(key)))
        results[key] = consume(key, value)
    return results


class SparkExecutor(Executor):
    name = "spark"

    def __init__(self, master: str | None = None, conf: Conf = (), slice_bytes: int = _SLICE_BYTES) -> None:
        self.master = master
        self.conf = conf
        self.slice_bytes = slice_bytes
        self.stats: EngineStats | None = None  # the last job's

    def run_each(self, units: Sequence[WorkUnit], progress: Progress | None,
                 consume: Callable[[str, ReplicaResult], R]) -> dict[str, R]:
        spark = process_session()
        sc = spark.get(self.master, self.conf, _warm_workers).sparkContext
        started = time.perf_counter()
        done, sent = sc.accumulator(0), sc.accumulator(0)
        bins = balance(items(units, self.slice_bytes), sc.defaultParallelism, self.slice_bytes)
        results: dict[str, R] = {}
        if bins:
            rdd = sc.parallelize(bins, len(bins)).mapPartitions(_task(done, sent, os.getcwd()))
            results = _assemble(list(self._collect(rdd, done, progress)), consume)
        self.stats = engine_stats("spark", sc.master, units, len(bins), sc.defaultParallelism, started,
                                  sent.value, spark.startup_seconds)
        return results

    def _collect(self, rdd, done, progress: Progress | None):
        return run_job(rdd.collect, done, progress)


def run_job(action: Callable[[], T], done, progress: Progress | None) -> T:
    """Run a Spark action in a thread, reporting ``done`` (an accumulator of bytes read) as it grows;
    Ctrl-C cancels the job (then the CLI says "interrupted"); a failed job is one line naming
    Spark's log."""
    value: list[T] = []  # the action's result, or
    error: list[BaseException] = []  # what it raised

    def work() -> None:
        try:
            value.append(action())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            error.append(exc)

    worker = threading.Thread(target=work, name="kafka-forensics-spark-job", daemon=True)
    worker.start()
    reported = 0
    try:
        while worker.is_alive():
            worker.join(0.2)
            if progress is not None and done.value > reported:
                progress(done.value - reported)
                reported = done.value
    except KeyboardInterrupt:
        process_session().cancel()
        raise
    if progress is not None and done.value > reported:
        progress(done.value - reported)
    if error:
        raise process_session().failed(f"Spark job failed: {job_error(error[0])}") from None
    return value[0]
