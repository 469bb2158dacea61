"""Fixtures for tests that need Spark: a real standalone cluster on 127.0.0.1.

``standalone_cluster`` (session scope) starts one master and one worker (2 cores, 1g)
from the PySpark wheel's own jars, waits until the worker is registered, yields the
master URL ``spark://127.0.0.1:<port>`` and kills both daemons' process groups at the
end. ``standalone_cluster_handle`` is the same cluster as a :class:`StandaloneCluster`
(``.status()``, ``.completed_apps()``, ``.app_dirs()`` look inside it). Logs and work
dirs live in a pytest tmp dir. Without a Java runtime >= 17 the tests that use it are
skipped, saying why.

``spark_env`` gives the environment for subprocesses that run Spark.

``task_gate`` (a :class:`TaskGate`) is for failure tests: it holds the tasks of a CLI run on
Spark at their first work unit until the test opens it (so a kill lands while the job certainly
runs), finds the run's processes (executor JVMs, Python workers) by a tag in their environment,
reads the run's event log, and at teardown checks that none of the run's processes is left.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

try:  # tests/spark as a package (tests/spark/__init__.py) or as a plain rootdir folder
    from .cluster import StandaloneCluster, start_for_test
    from .cluster import spark_env as _spark_env
except ImportError:
    from cluster import StandaloneCluster, start_for_test  # type: ignore[no-redef]
    from cluster import spark_env as _spark_env  # type: ignore[no-redef]


@pytest.fixture(scope="session")
def spark_env():
    """A function: ``spark_env(extra=None) -> dict`` of environment variables for Spark
    subprocesses (PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP=127.0.0.1, SPARK_HOME,
    JAVA_HOME, ...)."""
    return _spark_env


@pytest.fixture(scope="session")
def standalone_cluster_handle(tmp_path_factory):
    """The running :class:`StandaloneCluster` (master URL, JSON API, worker work dir)."""
    cluster = start_for_test(StandaloneCluster(tmp_path_factory.mktemp("spark-standalone")))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def standalone_cluster(standalone_cluster_handle) -> str:
    """The master URL, ``spark://127.0.0.1:<port>``, of a running master with one worker."""
    return standalone_cluster_handle.master_url


# --------------------------------------------------------------------------- failures

_GATE_HOOK = '''\
"""Test hook written by tests/spark/conftest.py (TaskGate). On PYTHONPATH of Spark's Python workers
only (spark.executorEnv.PYTHONPATH): every task waits at its first work unit until the test opens
the gate, after leaving a mark held_<pid>_<stage>_<partition>_<attempt>."""
import os

_GATE = os.environ.get("KF_TEST_GATE")
if _GATE:
    import time

    import forensics.pipeline.units as _units

    _run_unit = _units.run_unit

    def run_unit(unit):
        from pyspark import TaskContext

        ctx = TaskContext.get()
        where = (ctx.stageId(), ctx.partitionId(), ctx.attemptNumber()) if ctx else (-1, -1, -1)
        mark = os.path.join(_GATE, "held_%d_%d_%d_%d" % ((os.getpid(),) + where))
        if not os.path.exists(mark):
            open(mark, "w").close()
        if os.path.exists(os.path.join(_GATE, "fail")):
            raise RuntimeError("injected failure")
        deadline = time.monotonic() + 300
        while not os.path.exists(os.path.join(_GATE, "open")):
            if time.monotonic() > deadline:
                raise RuntimeError("the test never opened the gate")
            time.sleep(0.02)
        return _run_unit(unit)

    _units.run_unit = run_unit
'''


@dataclass(frozen=True)
class Held:
    """A task that reached the gate: its Python worker's pid, stage, partition and attempt number."""

    pid: int
    stage: int
    partition: int
    attempt: int


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def process_gone(pid: int) -> bool:
    """No such process any more, or a zombie (dead, its parent has not reaped it yet)."""
    stat = _read(f"/proc/{pid}/stat")
    return not stat or stat[stat.rfind(b")") + 2:].startswith(b"Z")


class TaskGate:
    """Holds the tasks of a ``kafka-forensics`` run on Spark at their first work unit (a
    ``sitecustomize`` on the Python workers' path wraps :func:`forensics.pipeline.units.run_unit`),
    so a test can kill a worker-side process while the job is certainly running, then
    :meth:`open` the gate. It also tags every process of the run (driver, its JVM, executor JVMs,
    Python workers: ``KF_TEST_RUN`` in their environment) to find them, and to prove none is left,
    and points Spark's event log at its own directory."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "gate"
        self.events_dir = root / "events"
        self.dir.mkdir(parents=True)
        self.events_dir.mkdir()
        (self.dir / "sitecustomize.py").write_text(_GATE_HOOK)
        self.run = uuid.uuid4().hex

    def conf(self) -> list:
        """``--conf`` options for the CLI: the hook on the workers, the tag, the event log."""
        settings = {
            "spark.executorEnv.PYTHONPATH": str(self.dir),
            "spark.executorEnv.KF_TEST_GATE": str(self.dir),
            "spark.executorEnv.KF_TEST_RUN": self.run,
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": self.events_dir.as_uri(),
            "spark.eventLog.compress": "false",
        }
        return [arg for k, v in settings.items() for arg in ("--conf", f"{k}={v}")]

    def env(self, env: dict) -> dict:
        """``env`` with the tag: the CLI's own process and the driver JVM it starts carry it."""
        return {**env, "KF_TEST_RUN": self.run}

    @staticmethod
    def kill(pid: int, timeout: float = 20.0) -> None:
        """SIGKILL ``pid`` (as the kernel's OOM killer would) and wait until it is dead."""
        os.kill(pid, signal.SIGKILL)
        TaskGate.wait_gone([pid], timeout)

    @staticmethod
    def wait_gone(pids, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not all(process_gone(pid) for pid in pids):
            assert time.monotonic() < deadline, f"processes {pids} still alive after {timeout}s"
            time.sleep(0.02)

    def open(self) -> None:
        (self.dir / "open").touch()

    def fail_every_task(self) -> None:
        """From now on every task raises ``RuntimeError: injected failure`` (a deterministic error)."""
        (self.dir / "fail").touch()

    def held(self) -> list:
        found = []
        for mark in self.dir.glob("held_*"):
            found.append(Held(*(int(n) for n in mark.name.split("_")[1:])))
        return sorted(found, key=lambda h: (h.stage, h.partition, h.attempt, h.pid))

    def wait_held(self, proc, timeout: float = 120.0) -> list:
        """The tasks waiting at the gate, once there is at least one; fails if ``proc`` (the CLI)
        ends first or none arrives in time."""
        deadline = time.monotonic() + timeout
        while True:
            held = self.held()
            if held:
                return held
            if proc.poll() is not None:
                _, err = proc.communicate()
                pytest.fail(f"the run ended (exit {proc.returncode}) before any task reached the gate\n"
                            f"{err.decode(errors='replace')[-2000:]}")
            assert time.monotonic() < deadline, f"no task reached the gate in {timeout}s"
            time.sleep(0.05)

    def processes(self) -> dict:
        """pid -> command line of every live process tagged with this run."""
        tag = f"KF_TEST_RUN={self.run}".encode()
        found = {}
        for entry in os.listdir("/proc"):
            if (entry.isdigit() and tag in _read(f"/proc/{entry}/environ").split(b"\0")
                    and not process_gone(int(entry))):
                found[int(entry)] = _read(f"/proc/{entry}/cmdline").replace(b"\0", b" ").decode(errors="replace")
        return found

    def executor_jvms(self) -> dict:
        """Executor id -> pid of this run's live executor JVMs (standalone cluster)."""
        jvms = {}
        for pid, cmd in self.processes().items():
            if "CoarseGrainedExecutorBackend" in cmd:
                args = cmd.split()
                jvms[args[args.index("--executor-id") + 1]] = pid
        return jvms

    def wait_no_processes(self, timeout: float = 30.0) -> dict:
        """Waits until no process of the run is left; returns those still there at the deadline."""
        deadline = time.monotonic() + timeout
        while True:
            left = self.processes()
            if not left or time.monotonic() >= deadline:
                return left
            time.sleep(0.1)

    def events(self) -> list:
        """Every event of the run's (uncompressed, possibly rolling) event log."""
        found = []
        for path in sorted(p for p in self.events_dir.rglob("*") if p.is_file() and not p.name.endswith(".crc")):
            for line in path.read_text(errors="replace").splitlines():
                if line.strip():
                    found.append(json.loads(line))
        return found

    def task_ends(self, stage: int) -> list:
        return [e for e in self.events() if e.get("Event") == "SparkListenerTaskEnd" and e["Stage ID"] == stage]


@pytest.fixture
def task_gate(tmp_path) -> TaskGate:
    """A :class:`TaskGate` under the test's tmp dir. At teardown it opens the gate (a run left
    behind by a failed assertion ends) and checks that no process of the run is left (ending any
    it finds, so that one failure does not leak into the next tests)."""
    gate = TaskGate(tmp_path)
    yield gate
    gate.open()
    left = gate.wait_no_processes()
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, f"processes of the run left behind: {left}"
