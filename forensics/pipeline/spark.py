"""The Spark executor: the same work units and merge, run by PySpark on ``local[*]`` or a cluster.

Spark receives only :class:`WorkUnit` tuples (paths and byte ranges), never file contents: each
task opens its files itself, read-only, so the disks must sit where every executor can read them
at the same path. A replica up to a slice (64 MiB) is read by one task, which merges and finalizes
it; the units of a larger replica are spread over tasks and their parts merged on the driver with
the same associative :func:`merge`. Only these reduced per-replica results travel to the driver
(no shuffle), which runs the same cross-reference code as the local engine.

Spark's console noise (its log4j output, the JVM's warnings, the stage progress bar) goes to a log
file in a private temporary directory; our own progress bar follows Spark's progress through an
accumulator of bytes read. Scratch space (``spark.local.dir``, warehouse) lives in that same
temporary directory, never next to the evidence.
"""

from __future__ import annotations

import atexit
import os
import pickle
import shutil
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from functools import reduce
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from forensics.errors import ForensicsError
from forensics.pipeline.engine import java_runtime
from forensics.pipeline.jvm_cache import cds_option
from forensics.pipeline.merge import (
    ReplicaParts,
    ReplicaResult,
    finalize,
    merge,
    merge_all,
    part_of,
)
from forensics.pipeline.plan import WorkUnit
from forensics.pipeline.units import run_unit

Progress = Callable[[int], None]
Conf = Tuple[Tuple[str, str], ...]
DEFAULT_MASTER = "local[*]"
_SLICE_BYTES = 64 << 20  # aim for tasks of about this many bytes (balance, progress)

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
"""


class SparkError(ForensicsError):
    """Spark could not start or a job failed (the message names Spark's log file)."""

    exit_code = 6


def under_spark_submit() -> bool:
    """Started by ``spark-submit``: the session (master and settings) is already configured."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


class _Session:
    """One SparkSession per process (Spark allows one SparkContext), remade when master or conf change."""

    def __init__(self) -> None:
        self.key: Optional[tuple] = None
        self.session = None
        self.workdir: Optional[str] = None
        self.startup_seconds = 0.0
        self.keep_log = False  # after a failure: the message points at the log, which must stay

    def get(self, master: Optional[str], conf: Conf):
        key = (master, conf)
        if self.session is not None and self.key == key:
            return self.session
        self.stop()
        started = time.perf_counter()
        self.workdir = tempfile.mkdtemp(prefix="kafka-forensics-spark-")
        try:
            self.session = _build(master, conf, self.workdir)
        except Exception as exc:  # noqa: BLE001 - Py4J/JVM failures arrive as many types
            text = str(exc).strip()
            raise self.failed(f"Spark did not start ({type(exc).__name__}: {text.splitlines()[0] if text else ''})"
                              ) from None
        self.key = key
        _warm_workers(self.session.sparkContext)
        _yield_to_workers(self.session.sparkContext)
        self.startup_seconds = time.perf_counter() - started
        return self.session

    @property
    def log_file(self) -> str:
        return os.path.join(self.workdir or tempfile.gettempdir(), "spark.log")

    def stop(self) -> None:
        if self.session is not None:
            try:
                self.session.stop()
            except Exception:  # noqa: BLE001 - shutting down; nothing useful to report
                pass
            self.session = None
        if self.workdir is not None:
            if self.keep_log:
                for name in os.listdir(self.workdir):
                    if name != "spark.log":
                        shutil.rmtree(os.path.join(self.workdir, name), ignore_errors=True)
                        if os.path.isfile(os.path.join(self.workdir, name)):
                            os.remove(os.path.join(self.workdir, name))
            else:
                shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def failed(self, message: str) -> SparkError:
        """A SparkError naming the log, which is then kept after exit."""
        self.keep_log = True
        return SparkError(f"{message} (Spark's log: {self.log_file})")


_SESSION = _Session()
atexit.register(_SESSION.stop)


def _defaults(workdir: str) -> Dict[str, str]:
    log4j = os.path.join(workdir, "log4j2.properties")
    with open(log4j, "w", encoding="utf-8") as fh:
        fh.write(_LOG4J.format(log=os.path.join(workdir, "spark.log")))
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j} -Djava.io.tmpdir={workdir}"
    if not under_spark_submit():  # spark-submit has started the driver JVM already
        java_opts += " " + cds_option(java_runtime())
    return {
        "spark.app.name": "kafka-forensics",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.local.dir": os.path.join(workdir, "local"),
        "spark.sql.warehouse.dir": os.path.join(workdir, "warehouse"),
        "spark.driver.extraJavaOptions": java_opts,
        "spark.executor.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log4j}",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.python.worker.reuse": "true",
    }


@contextmanager
def _stderr_to(path: str) -> Iterator[None]:
    """Point file descriptor 2 at ``path`` while the JVM starts: the JVM and the Python workers it
    forks keep writing there; our own stderr comes back afterwards."""
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.dup2(fd, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def _build(master: Optional[str], conf: Conf, workdir: str):
    from pyspark.sql import SparkSession

    settings = _defaults(workdir)
    settings.update(dict(conf))
    builder = SparkSession.builder
    if master is not None:
        builder = builder.master(master)
    elif not under_spark_submit():
        builder = builder.master(DEFAULT_MASTER)
    for k, v in settings.items():
        builder = builder.config(k, v)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if under_spark_submit():
        return builder.getOrCreate()
    with _stderr_to(os.path.join(workdir, "spark.log")):
        return builder.getOrCreate()


class Item(NamedTuple):
    """What one task slot gets: a whole small replica, or one unit of a large replica."""

    units: Tuple[WorkUnit, ...]
    size: int
    whole: bool  # every unit of its replica: the task finalizes it


def items(units: Sequence[WorkUnit], slice_bytes: int = _SLICE_BYTES) -> List[Item]:
    """Small replicas stay whole (finalized in their task, no shuffle); a replica larger than a
    slice is cut into its units, read in parallel and merged afterwards."""
    groups: Dict[str, List[WorkUnit]] = {}
    for u in units:
        groups.setdefault(u.key, []).append(u)
    out: List[Item] = []
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


JVM_NICENESS = 5


def _yield_to_workers(sc) -> None:
    """In local mode the driver JVM only schedules: the Python workers do the reading. On a
    machine with as many busy workers as cores, the JVM's threads (JIT, GC, scheduler) compete with
    them; once the workers are forked (they keep their priority), the JVM's threads step back by a
    few nice levels. Not done under spark-submit or for a cluster master (its JVM is not ours)."""
    if under_spark_submit() or not sc.master.startswith("local"):
        return
    proc = getattr(getattr(sc, "_gateway", None), "proc", None)
    pid = getattr(proc, "pid", None)
    if pid is None:
        return
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        tids = [pid]
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + JVM_NICENESS))
        except OSError:
            pass


def balance(work: Sequence[Item], slots: int, slice_bytes: int = _SLICE_BYTES) -> List[List[Item]]:
    """Bins of decreasing size (guided self-scheduling): each takes about half of what remains
    divided by the slots, down to ``slice_bytes`` / 4. Spark launches them in order on whichever
    core is free, so the big ones start first and the last ones are small: the cores finish
    together even though bytes cost differently (a transactional partition costs more per byte
    than a plain one). Few bins matter too: every task costs the JVM scheduling work on the same
    cores as the Python workers."""
    todo = sorted(work, key=lambda i: (-i.size, i.units[0].key, i.units[0].path, i.units[0].start))
    remaining = sum(i.size for i in todo)
    floor = max(1, slice_bytes // 4)
    bins: List[List[Item]] = []
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
    def run_bin(bin_items: Iterator[List[Item]]):
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


def _job_error(exc: BaseException) -> str:
    """The useful line of a failed job: our own error raised on an executor, else Spark's first line."""
    text = str(exc)
    marker = "ExecutorCannotReadError: "
    if marker in text:
        return text[text.index(marker) + len(marker):].splitlines()[0]
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return first[:300]


def _assemble(collected) -> Dict[str, ReplicaResult]:
    """Finalized replicas as they are; the parts of large replicas merged (associatively, in any
    order) and finalized here."""
    results: Dict[str, ReplicaResult] = {}
    parts: Dict[str, List[ReplicaParts]] = {}
    for whole, key, blob in collected:
        value = pickle.loads(blob)
        if whole:
            results[key] = value
        else:
            parts.setdefault(key, []).append(value)
    for key, pieces in parts.items():
        results[key] = finalize(reduce(merge, pieces))
    return results


class SparkExecutor:
    name = "spark"

    def __init__(self, master: Optional[str] = None, conf: Conf = (), slice_bytes: int = _SLICE_BYTES) -> None:
        self.master = master
        self.conf = conf
        self.slice_bytes = slice_bytes
        self.stats: Dict[str, object] = {}

    def run(self, units: Sequence[WorkUnit], progress: Optional[Progress] = None) -> Dict[str, ReplicaResult]:
        session = _SESSION.get(self.master, self.conf)
        sc = session.sparkContext
        started = time.perf_counter()
        done, sent = sc.accumulator(0), sc.accumulator(0)
        bins = balance(items(units, self.slice_bytes), sc.defaultParallelism, self.slice_bytes)
        results: Dict[str, ReplicaResult] = {}
        if bins:
            rdd = sc.parallelize(bins, len(bins)).mapPartitions(_task(done, sent, os.getcwd()))
            results = _assemble(self._collect(rdd, done, progress))
        self.stats = {"engine": "spark", "master": sc.master, "units": len(units), "tasks": len(bins),
                      "slots": sc.defaultParallelism,
                      "bytesToDriver": sent.value, "startupSeconds": round(_SESSION.startup_seconds, 3),
                      "runSeconds": round(time.perf_counter() - started, 3),
                      "inputBytes": sum(u.size for u in units)}
        return results

    def _collect(self, rdd, done, progress: Optional[Progress]):
        box: Dict[str, object] = {}

        def work() -> None:
            try:
                box["value"] = rdd.collect()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=work, name="kafka-forensics-spark-job", daemon=True)
        worker.start()
        reported = 0
        while worker.is_alive():
            worker.join(0.2)
            if progress is not None and done.value > reported:
                progress(done.value - reported)
                reported = done.value
        if progress is not None and done.value > reported:
            progress(done.value - reported)
        if "error" in box:
            raise _SESSION.failed(f"Spark job failed: {_job_error(box['error'])}") from None
        return box["value"]
