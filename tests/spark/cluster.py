"""A real Spark standalone cluster (one master, one or more workers) on 127.0.0.1, for tests
and for ``bench/engines.py --standalone``.

Everything comes from the PySpark wheel: its ``bin/spark-class`` launches
``org.apache.spark.deploy.master.Master`` and ``org.apache.spark.deploy.worker.Worker``
from its bundled jars, with ``SPARK_HOME`` set to the ``pyspark`` package directory.
(The wheel has no ``sbin/start-master.sh``; ``spark-class`` runs the daemons in the
foreground, which is what a test wants anyway.)

Logs, the worker's work dir (one ``app-*`` directory per application, holding each
executor's stdout/stderr) and Spark's scratch dirs all go under a directory the caller
gives, a pytest tmp dir, never the repository. Each daemon is started in its own process
group; :meth:`StandaloneCluster.stop` kills the whole group, which includes the executor
JVMs the worker spawned. (PySpark's Python daemons put themselves in a group of their own;
they and their workers end when their executor JVM's pipe to them closes.)

Run ``python tests/spark/cluster.py`` to start a cluster, run a tiny PySpark job on it
and stop it again.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HOST = "127.0.0.1"
MIN_JAVA = 17  # Spark 4 runs on Java 17 or newer


# --------------------------------------------------------------------------- Java

@dataclass(frozen=True)
class JavaRuntime:
    java: str          # path of the java binary
    home: str          # its java.home, usable as JAVA_HOME
    major: int         # feature version: 8, 11, 17, 21, ...


def _probe_java(java: str) -> JavaRuntime | None:
    """Ask one java binary for its home and version; None if it cannot run."""
    try:
        out = subprocess.run(
            [java, "-XshowSettings:properties", "-version"],
            capture_output=True, text=True, timeout=60, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    props: dict[str, str] = {}
    for line in (out.stderr + out.stdout).splitlines():
        key, sep, value = line.strip().partition(" = ")
        if sep:
            props.setdefault(key, value)
    spec = props.get("java.specification.version", "")
    if spec.startswith("1."):           # Java 8 and older say 1.8, 1.7, ...
        spec = spec[2:]
    try:
        major = int(spec.split(".")[0])
    except ValueError:
        return None
    return JavaRuntime(java=java, home=props.get("java.home", ""), major=major)


def find_java() -> JavaRuntime | None:
    """The Java runtime Spark's launch scripts would use: $JAVA_HOME/bin/java, else PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if os.access(candidate, os.X_OK):
            runtime = _probe_java(str(candidate))
            # spark-class trusts JAVA_HOME when it is set; report its java.home
            return runtime and JavaRuntime(runtime.java, home, runtime.major)
    on_path = shutil.which("java")
    return _probe_java(on_path) if on_path else None


def java_problem() -> str | None:
    """Why a Spark JVM cannot start here (for a skip reason), or None if it can."""
    runtime = find_java()
    if runtime is None:
        return ("no Java runtime found (JAVA_HOME/bin/java or java on PATH); Spark needs "
                f"Java >= {MIN_JAVA} (.ci/run installs openjdk-17-jre-headless)")
    if runtime.major < MIN_JAVA:
        return (f"Java {runtime.major} at {runtime.java} is too old; Spark needs "
                f"Java >= {MIN_JAVA} (.ci/run installs openjdk-17-jre-headless)")
    return None


# --------------------------------------------------------------------------- environment

def pyspark_home() -> Path:
    """The installed pyspark package directory: SPARK_HOME for its bin/ scripts and jars/."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def spark_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for subprocesses that run Spark (the CLI, spark-class, spark-submit).

    Executors run Python with this interpreter (which has kafka-forensics installed),
    everything binds to 127.0.0.1, and SPARK_HOME / JAVA_HOME point at what this test
    run uses.
    """
    env = dict(os.environ)
    env.update({
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": HOST,
        "SPARK_LOCAL_HOSTNAME": HOST,
        "SPARK_HOME": str(pyspark_home()),
        "PYTHONUNBUFFERED": "1",
    })
    runtime = find_java()
    if runtime is not None and runtime.home:
        env["JAVA_HOME"] = runtime.home
    if extra:
        env.update(extra)
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


# --------------------------------------------------------------------------- cluster

class ClusterError(RuntimeError):
    pass


@dataclass
class StandaloneCluster:
    """One master and ``workers`` workers (``cores`` and ``memory`` each), started by :meth:`start`,
    killed by :meth:`stop`. The workers share one work dir (executor ids are unique per application)."""

    base_dir: Path
    cores: int = 2
    memory: str = "1g"
    workers: int = 1
    start_timeout: float = 90.0

    master_port: int = 0
    master_webui_port: int = 0
    worker_webui_port: int = 0
    _procs: list[subprocess.Popen] = field(default_factory=list, repr=False)
    _logs: list = field(default_factory=list, repr=False)

    # paths ---------------------------------------------------------------
    @property
    def log_dir(self) -> Path:
        return self.base_dir / "logs"

    @property
    def work_dir(self) -> Path:
        """The worker's work dir: one app-<id>/<executor>/{stdout,stderr} per application."""
        return self.base_dir / "work"

    @property
    def local_dir(self) -> Path:
        return self.base_dir / "local"

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.master_port}"

    @property
    def webui_url(self) -> str:
        return f"http://{HOST}:{self.master_webui_port}"

    # master's JSON API ---------------------------------------------------
    def status(self, timeout: float = 5.0) -> dict:
        """The master web UI's /json/ document (workers, aliveworkers, activeapps, completedapps)."""
        with urllib.request.urlopen(f"{self.webui_url}/json/", timeout=timeout) as resp:
            return json.load(resp)

    def alive_workers(self, status: dict) -> int:
        if "aliveworkers" in status:
            return int(status["aliveworkers"])
        return sum(1 for w in status.get("workers", []) if w.get("state") == "ALIVE")

    def completed_apps(self) -> list[dict]:
        return list(self.status().get("completedapps", []))

    def app_dirs(self) -> list[Path]:
        return sorted(self.work_dir.glob("app-*")) if self.work_dir.is_dir() else []

    # lifecycle -----------------------------------------------------------
    def _env(self) -> dict[str, str]:
        conf_dir = self.base_dir / "conf"   # empty: no spark-env.sh / spark-defaults.conf leak in
        conf_dir.mkdir(parents=True, exist_ok=True)
        return spark_env({
            "SPARK_CONF_DIR": str(conf_dir),
            "SPARK_LOG_DIR": str(self.log_dir),
            "SPARK_WORKER_DIR": str(self.work_dir),
            "SPARK_LOCAL_DIRS": str(self.local_dir),
            # The master must bind exactly the ports we poll (no silent port+1 retries), and
            # its REST submission server (fixed port 6066) would collide between test runs.
            "SPARK_MASTER_OPTS": "-Dspark.port.maxRetries=0 -Dspark.master.rest.enabled=false",
            # master and worker do little work: C1 only and the serial GC start them faster
            # (applications and their executors keep Spark's defaults)
            "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        })

    def _spawn(self, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen:
        log = open(self.log_dir / f"{name}.log", "ab")  # noqa: SIM115 (closed in stop())
        self._logs.append(log)
        proc = subprocess.Popen(
            [str(pyspark_home() / "bin" / "spark-class"), *args],
            cwd=self.base_dir, env=env, stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,           # own process group, killed as a whole
        )
        self._procs.append(proc)
        return proc

    def log_tail(self, name: str, lines: int = 40) -> str:
        path = self.log_dir / f"{name}.log"
        if not path.exists():
            return f"({path} missing)"
        text = path.read_text(errors="replace").splitlines()
        return f"--- {path} (last {lines} lines)\n" + "\n".join(text[-lines:])

    def _wait(self, what: str, proc: subprocess.Popen, name: str, ready, deadline: float) -> None:
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise ClusterError(f"{name} exited with {proc.returncode} before {what}\n"
                                   + self.log_tail(name))
            try:
                if ready(self.status(timeout=2.0)):
                    return
            except (OSError, ValueError, urllib.error.URLError) as exc:
                last_error = exc
            time.sleep(0.25)
        raise ClusterError(f"timed out waiting for {what} (last error: {last_error})\n"
                           + self.log_tail("master")
                           + ("" if name == "master" else "\n" + self.log_tail(name)))

    def start(self) -> StandaloneCluster:
        problem = java_problem()
        if problem:
            raise ClusterError(problem)
        for d in (self.log_dir, self.work_dir, self.local_dir):
            d.mkdir(parents=True, exist_ok=True)
        env = self._env()
        deadline = time.monotonic() + self.start_timeout

        # A free port can be taken between free_port() and the JVM binding it: retry.
        for attempt in range(3):
            self.master_port, self.master_webui_port = free_port(), free_port()
            master = self._spawn("master", [
                "org.apache.spark.deploy.master.Master",
                "--host", HOST,
                "--port", str(self.master_port),
                "--webui-port", str(self.master_webui_port),
            ], env)
            try:
                self._wait("the master's web UI", master, "master",
                           lambda s: s.get("status") == "ALIVE", deadline)
                break
            except ClusterError:
                self.stop()
                if attempt == 2 or time.monotonic() >= deadline:
                    raise

        try:
            for n in range(1, self.workers + 1):
                name = self.worker_name(n)
                self.worker_webui_port = free_port()   # the last worker's
                worker = self._spawn(name, [
                    "org.apache.spark.deploy.worker.Worker", self.master_url,
                    "--host", HOST,
                    "--cores", str(self.cores),
                    "--memory", self.memory,
                    "--work-dir", str(self.work_dir),
                    "--webui-port", str(self.worker_webui_port),
                ], env)
                self._wait(f"{name} to register with the master", worker, name,
                           lambda s, n=n: self.alive_workers(s) >= n, deadline)
        except BaseException:
            self.stop()
            raise
        return self

    @staticmethod
    def worker_name(n: int) -> str:
        """The log name of the n-th worker (1-based): ``worker``, ``worker-2``, ..."""
        return "worker" if n == 1 else f"worker-{n}"

    def daemon_pids(self) -> list[int]:
        """The pids of the running daemons (master, workers): each leads a session of its own, which
        the executor JVMs and Python workers it starts stay in."""
        return [proc.pid for proc in self._procs if proc.poll() is None]

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM each daemon's process group (worker first), SIGKILL what is left, then anything
        still in the daemons' sessions (PySpark's Python daemons move to process groups of their own)."""
        procs, self._procs = list(reversed(self._procs)), []
        sessions = {proc.pid for proc in procs}
        for proc in procs:
            _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            # the group may outlive its leader (executor JVMs, Python workers): kill it all
            _signal_group(proc, signal.SIGKILL)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for pid in session_members(sessions):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for log in self._logs:
            log.close()
        self._logs = []

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def start_for_test(cluster: StandaloneCluster) -> StandaloneCluster:
    """``cluster`` started, for a pytest fixture: skipped, saying why, where it cannot run here (no
    POSIX shell, no pyspark, no Java >= 17); failed, with the daemons' logs, where it does not start."""
    import pytest

    if os.name != "posix":
        pytest.skip("the standalone cluster runs spark-class, a POSIX shell script")
    pytest.importorskip("pyspark", reason="pyspark is not installed")
    problem = java_problem()
    if problem:
        pytest.skip(problem)
    try:
        return cluster.start()
    except ClusterError as exc:
        pytest.fail(f"could not start the Spark standalone cluster: {exc}", pytrace=False)


def session_members(sessions: set[int]) -> list[int]:
    """Pids of the live processes whose session id is one of ``sessions`` (Linux /proc)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if fields and fields[0] != b"Z" and int(fields[3]) in sessions:
            found.append(int(entry))
    return found


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    # start_new_session=True made the child a session and group leader: pgid == pid
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# --------------------------------------------------------------------------- self-check

_TINY_JOB = """
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master(sys.argv[1]).appName("tiny-sum")
         .config("spark.pyspark.python", sys.executable)
         .config("spark.ui.enabled", "false").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
print("sum", spark.sparkContext.parallelize(range(1, 101), 4).sum())
spark.stop()
"""


def main() -> int:
    import tempfile

    problem = java_problem()
    if problem:
        print(f"skip: {problem}")
        return 0
    with tempfile.TemporaryDirectory(prefix="spark-standalone-") as tmp:
        started = time.monotonic()
        with StandaloneCluster(Path(tmp)) as cluster:
            print(f"cluster up in {time.monotonic() - started:.1f}s: {cluster.master_url} "
                  f"(ui {cluster.webui_url}), alive workers: "
                  f"{cluster.alive_workers(cluster.status())}")
            job = subprocess.run([sys.executable, "-c", _TINY_JOB, cluster.master_url],
                                 env=spark_env(), capture_output=True, text=True, timeout=180)
            print(f"tiny job exit {job.returncode}, stdout: {job.stdout.strip()!r}")
            if job.returncode:
                print(job.stderr[-3000:])
            for _ in range(40):
                apps = cluster.completed_apps()
                if apps:
                    break
                time.sleep(0.25)
            print("completed apps:", [(a["id"], a["name"], a["state"]) for a in apps])
            print("worker app dirs:", [p.name for p in cluster.app_dirs()])
        print(f"stopped; total {time.monotonic() - started:.1f}s")
        return job.returncode


if __name__ == "__main__":
    sys.exit(main())


def processes_mentioning(text: str) -> list[int]:
    """Pids whose command line contains ``text`` (Linux /proc): e.g. a JVM that names a cache dir."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if text.encode() in fh.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found
