"""The Spark session behind ``--engine spark``: one per process, started quietly and warmed.

Spark's console noise (its log4j output, the JVM's warnings, the stage progress bar) goes to a log
file in a private temporary directory, removed at exit unless a failure message names it. Scratch
space (``spark.local.dir``, warehouse, ``java.io.tmpdir``) lives in that same directory, never next
to the evidence. The driver JVM maps a class-data-sharing archive when there is a valid one
(:mod:`forensics.pipeline.jvm_cache`); a JVM that dies mapping it costs one warning and a start
without it. At :meth:`_Session.close` the driver JVM this process started is ended and waited
for (a JVM dumping a new archive at exit takes a while): none outlives the command. Loading this
module imports neither pyspark nor py4j and registers nothing; :func:`process_session` makes the process's
one session (``PROCESS.spark``) when the first job asks for it, and registers the exit hook that
closes it (should the CLI not have, see :func:`forensics.pipeline.engine.shutdown`).
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from forensics.errors import ForensicsError
from forensics.exit_codes import EXIT_SPARK
from forensics.pipeline import jvm_cache
from forensics.pipeline.java import java_runtime
from forensics.process_state import PROCESS

if TYPE_CHECKING:  # (imported when a session starts: see above)
    from pyspark.sql import SparkSession

Conf = tuple[tuple[str, str], ...]
# A failed task is tried this many times before the job fails: Spark's own default on a cluster
# (spark.task.maxFailures). Local mode ignores that setting and fails the job at the first failed
# task, unless the master says otherwise (local[N,F]): the default master does, so a Python worker
# killed under it (by the OOM killer, say) costs a retry, not the run. A master given with --master
# is taken as it is.
TASK_ATTEMPTS = 4
DEFAULT_MASTER = f"local[*,{TASK_ATTEMPTS}]"

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

    exit_code = EXIT_SPARK


def under_spark_submit() -> bool:
    """Started by ``spark-submit``: the session (master and settings) is already configured."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


class _Session:
    """One SparkSession per process (Spark allows one SparkContext), remade when master or conf change."""

    def __init__(self) -> None:
        self.key: tuple | None = None
        self.session: SparkSession | None = None
        self.workdir: str | None = None
        self.startup_seconds = 0.0
        self._children_before: set[int] = set()
        self.keep_log = False  # after a failure: the message points at the log, which must stay
        self.cds = jvm_cache.OFF  # what the driver JVM this process started does with the archive

    def get(self, master: str | None, conf: Conf, warm: Callable[[object], None] = lambda sc: None):
        """The session for ``master`` and ``conf``; ``warm(sparkContext)`` runs once, as part of
        the start-up."""
        key = (master, conf)
        if self.session is not None and self.key == key:
            return self.session
        self.stop()
        started = time.perf_counter()
        self.workdir = workdir = tempfile.mkdtemp(prefix="kafka-forensics-spark-")
        self._children_before = _children()
        self.session = session = self._start(master, conf, workdir)
        self.key = key
        warm(session.sparkContext)
        _yield_to_workers(session.sparkContext)
        self.startup_seconds = time.perf_counter() - started
        return session

    def _start(self, master: str | None, conf: Conf, workdir: str) -> SparkSession:
        """Build the session; a driver JVM that crashes while it maps the cached archive (a damaged
        one: truncated archives are refused before, see :mod:`~forensics.pipeline.jvm_cache`)
        costs the archive, one warning line on stderr and a second start without it. A start that
        fails otherwise (a bad master) leaves the archive alone."""
        from pyspark import SparkContext

        fresh_jvm = SparkContext._gateway is None and not under_spark_submit()
        if fresh_jvm:
            self.cds = jvm_cache.plan(java_runtime())
        try:
            return _build(master, conf, workdir, self.cds.option if fresh_jvm else "")
        except Exception as exc:  # noqa: BLE001 - Py4J/JVM failures arrive as many types
            failure = exc
        if fresh_jvm and self.cds.using and self.cds.archive is not None and self._jvm_crashed():
            jvm_cache.discard(self.cds.archive)
            sys.stderr.write(f"kafka-forensics: warning: Spark's start-up cache {self.cds.archive} made the JVM "
                             "fail; removed it, starting without it\n")
            self.cds = jvm_cache.OFF
            _end_started_processes(self._children_before, grace=2.0)
            try:
                return _build(master, conf, workdir, "")
            except Exception as exc:  # noqa: BLE001
                failure = exc
        text = str(failure).strip()
        raise self.failed(f"Spark did not start ({type(failure).__name__}: {text.splitlines()[0] if text else ''})"
                          ) from None

    def _jvm_crashed(self) -> bool:
        """Did a JVM of this session crash (SIGBUS, SIGSEGV: it leaves its hs_err_pid file in the
        scratch directory), rather than refuse to start (a bad master, say)?"""
        try:
            return any(name.startswith("hs_err_pid") for name in os.listdir(self.workdir or ""))
        except OSError:
            return False

    @property
    def log_file(self) -> str:
        return os.path.join(self.workdir or tempfile.gettempdir(), "spark.log")

    def cancel(self) -> None:
        """Cancel the running jobs (Ctrl-C); the session stops at exit."""
        if self.session is not None:
            try:
                self.session.sparkContext.cancelAllJobs()
            except Exception:  # noqa: BLE001 - interrupted: the exit stops the JVM anyway
                pass

    def stop(self) -> None:
        """Stop the session and remove its scratch directory. Ctrl-C while Spark stops gracefully
        ends its JVM instead; the stop always completes, so nothing is left behind."""
        stopping, self.session = self.session, None
        interrupted = False
        if stopping is not None:
            try:
                stopping.stop()
            except Exception:  # noqa: BLE001 - shutting down; nothing useful to report
                pass
            except KeyboardInterrupt:
                interrupted = True
        if self.workdir is not None and (stopping is None or interrupted):
            # the start was interrupted or failed (Spark may be starting still), or the stop was
            _end_started_processes(self._children_before, grace=2.0 if interrupted else 5.0)
        if self.workdir is not None:
            if self.keep_log:
                for name in os.listdir(self.workdir):  # the log, and a crashed JVM's report
                    if name != "spark.log" and not name.startswith("hs_err_pid"):
                        shutil.rmtree(os.path.join(self.workdir, name), ignore_errors=True)
                        if os.path.isfile(os.path.join(self.workdir, name)):
                            os.remove(os.path.join(self.workdir, name))
            else:
                shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
        if interrupted:
            raise KeyboardInterrupt

    def close(self, interrupted: bool = False) -> None:
        """At exit: stop the session, then end the driver JVM this process started and wait for it
        (when it dumps a new class-data-sharing archive, until that is written; then publish it),
        so that no JVM outlives the command. After Ctrl-C (``interrupted``, or one while stopping
        or waiting) the JVM is killed instead, and its half-written archive removed."""
        status: int | None = None
        try:
            try:
                self.stop()
            except KeyboardInterrupt:
                interrupted = True
                raise
            finally:
                status = _end_driver_jvm(kill=interrupted)
        finally:
            if self.cds.temp is not None:
                jvm_cache.publish(self.cds, status)
            self.cds = jvm_cache.OFF

    def failed(self, message: str) -> SparkError:
        """A SparkError naming the log, which is then kept after exit."""
        self.keep_log = True
        return SparkError(f"{message} (Spark's log: {self.log_file})")


def _process_parents() -> dict[int, int]:
    """Every process's parent, from Linux ``/proc`` (elsewhere: none found)."""
    parents: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return parents
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                stat = fh.read()
            parents[int(entry)] = int(stat[stat.rfind(")") + 2:].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return parents


def _children() -> set[int]:
    me = os.getpid()
    return {pid for pid, parent in _process_parents().items() if parent == me}


def _started_since(before: set[int]) -> set[int]:
    """The processes started since ``before`` (our children then): our new children (spark-submit's
    shell, later the JVM it becomes) and all their descendants (the launcher JVM it runs first)."""
    parents = _process_parents()
    me = os.getpid()
    found = {pid for pid, parent in parents.items() if parent == me and pid not in before}
    grew = True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in found and pid not in found}
        found |= more
        grew = bool(more)
    return found


def _end_started_processes(before: set[int], grace: float = 5.0) -> None:
    """Spark still starting when we stop (Ctrl-C during start-up) has not yet begun to watch its
    pipe to us: its shell and JVMs would live on and write into the scratch directory after we
    removed it. End them, politely first; the shell may fork again meanwhile, so look again."""
    deadline = time.monotonic() + grace
    sig = signal.SIGTERM
    while True:
        pids = _started_since(before)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        for pid in pids:  # reap our own children; the others are reaped by their parents
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        if time.monotonic() >= deadline:
            sig = signal.SIGKILL
        time.sleep(0.05)


def process_session() -> _Session:
    """This process's Spark session (``PROCESS.spark``, :mod:`forensics.process_state`), made when
    the first job asks for it, with the exit hook that closes it (the CLI closes it before, see
    :func:`forensics.pipeline.engine.shutdown`)."""
    held = PROCESS.spark
    if not isinstance(held, _Session):
        held = PROCESS.spark = _Session()
        atexit.register(held.close)
    return held


JVM_EXIT_SECONDS = 600  # a JVM writing a class-data-sharing archive on a busy machine takes a while


def _end_driver_jvm(kill: bool = False) -> int | None:
    """End the Py4J gateway JVM this process launched (not spark-submit's): closing its stdin
    makes it exit (PySpark's ``PythonGatewayServer`` exits at EOF), dumping a pending archive on
    the way; wait for it (``kill``: kill it). Its exit status, or None when there was none."""
    if under_spark_submit() or "pyspark" not in sys.modules:  # pyspark never loaded: no JVM started
        return None
    from pyspark import SparkContext

    proc = getattr(SparkContext._gateway, "proc", None)
    if proc is None:
        return None
    SparkContext._gateway = None
    SparkContext._jvm = None
    try:
        if kill:
            proc.kill()
        else:
            _renice(proc.pid, 0)  # it may have an archive to write: at full priority where we may raise it
            if proc.stdin is not None:
                proc.stdin.close()
        return proc.wait(JVM_EXIT_SECONDS)
    except BaseException:  # Ctrl-C or a JVM that never ends: it goes now
        proc.kill()
        proc.wait()
        raise


def _defaults(workdir: str, cds_option: str = "") -> dict[str, str]:
    """Spark settings of a session; ``cds_option``: the driver JVM's class-data-sharing option
    (only for a JVM this process starts)."""
    log4j = os.path.join(workdir, "log4j2.properties")
    with open(log4j, "w", encoding="utf-8") as fh:
        fh.write(_LOG4J.format(log=os.path.join(workdir, "spark.log")))
    # a JVM that crashes writes hs_err_pid<N>.log into its working directory, which may be the evidence
    crash_log = f"-XX:ErrorFile={os.path.join(workdir, 'hs_err_pid%p.log')}"
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j} -Djava.io.tmpdir={workdir} {crash_log}"
    if cds_option:
        java_opts += " " + cds_option
    return {
        "spark.app.name": "kafka-forensics",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.local.dir": os.path.join(workdir, "local"),
        "spark.sql.warehouse.dir": os.path.join(workdir, "warehouse"),
        "spark.driver.extraJavaOptions": java_opts,
        "spark.executor.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log4j} {crash_log}",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.python.worker.reuse": "true",
    }


@contextmanager
def _console_to(path: str) -> Iterator[None]:
    """Point file descriptors 1 and 2 at ``path`` while the JVM starts: the JVM (whose unified
    logging writes warnings to stdout, even at exit, after our output) and the Python workers it
    forks keep writing there; our own stdout and stderr come back afterwards."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {1: os.dup(1), 2: os.dup(2)}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        for target, copy in saved.items():
            os.dup2(copy, target)
            os.close(copy)
        os.close(fd)


def _build(master: str | None, conf: Conf, workdir: str, cds_option: str = "") -> SparkSession:
    from pyspark.sql import SparkSession

    settings = _defaults(workdir, cds_option)
    settings.update(dict(conf))
    builder = SparkSession.builder
    if master is not None:
        builder = builder.master(master)
    elif not under_spark_submit():
        builder = builder.master(DEFAULT_MASTER)
    for k, v in settings.items():
        builder = builder.config(k, v)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # Py4J logs a traceback (through the root logger) for a call interrupted by Ctrl-C or cut by a
    # dying JVM; the CLI reports both in one line, so those logs are silenced
    for name in ("", "py4j"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    if under_spark_submit():
        return builder.getOrCreate()
    # PySpark installs its own SIGINT handler, which cancels jobs through Py4J from inside the
    # signal handler: that can re-enter a Py4J call in progress and print tracebacks. The handler
    # in place before (the CLI's: KeyboardInterrupt) comes back, and the executor cancels the job.
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    try:
        with _console_to(os.path.join(workdir, "spark.log")):
            session = builder.getOrCreate()
    finally:
        if main:
            signal.signal(signal.SIGINT, previous if callable(previous) else signal.default_int_handler)
    _log_accumulator_errors(session.sparkContext, os.path.join(workdir, "spark.log"))
    return session


def _log_accumulator_errors(sc, log: str) -> None:
    """PySpark's accumulator server prints a traceback on stderr when its connection from the JVM
    breaks (a JVM ended by Ctrl-C while it stops); it goes to Spark's log instead."""
    server = getattr(sc, "_accumulatorServer", None)
    if server is None:
        return

    def to_log(request, client_address) -> None:
        try:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write("accumulator update failed:\n" + traceback.format_exc())
        except OSError:
            pass

    server.handle_error = to_log


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
    if pid is not None:
        _renice(pid, JVM_NICENESS)


def _renice(pid: int, niceness: int) -> None:
    """Every thread of process ``pid`` to this process's niceness plus ``niceness`` (where allowed:
    only root may lower it again)."""
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        tids = [pid]
    target = min(19, os.getpriority(os.PRIO_PROCESS, 0) + niceness)
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, target)
        except OSError:
            pass
