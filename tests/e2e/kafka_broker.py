"""A real Apache Kafka 4.1.0 KRaft broker on 127.0.0.1, for tests (``../shared/kafka``, read-only).

One node (``process.roles=broker,controller``) on two free loopback ports, formatted with
``--release-version 3.9-IV0`` (the classic transaction protocol, transaction.version 0) unless told
otherwise. Its data dir, ``LOG_DIR`` (server/controller logs, GC log) and config live in a directory
the caller gives (a pytest tmp dir): nothing is written inside the distribution.

:meth:`Broker.stop` sends SIGTERM to the broker's own pid (clean shutdown) and waits; SIGKILL only
when it does not end in time. :meth:`Broker.close` is idempotent and is what fixtures call in their
``finally``; the JVM is also asked to die with this process (``PR_SET_PDEATHSIG``), so an interrupted
test run leaves no broker behind.

Every ``bin/`` tool run through :meth:`Broker.tool_env` gets the same ``LOG_DIR``, a small heap and JVM
options that start faster.
"""

from __future__ import annotations

import base64
import ctypes
import functools
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.spark.cluster import find_java

REPO = Path(__file__).resolve().parents[2]
# ``../shared`` beside the checkout; KF_KAFKA_HOME names another place (a worktree under /work/wt/NAME has
# no ../shared of its own)
KAFKA_HOME = Path(os.environ.get("KF_KAFKA_HOME") or REPO.parent / "shared" / "kafka" / "kafka_2.13-4.1.0")
HOST = "127.0.0.1"
MIN_JAVA = 17  # Kafka 4.x brokers and tools
HEAP = "-Xms128m -Xmx384m"
# C1 only and the serial collector: a third less CPU per JVM start (tools live ~2 s, the broker minutes)
JVM_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"
STARTED = "Kafka Server started"


@functools.cache
def broker_problem() -> str | None:
    """Why a real broker cannot run here (a skip reason), or None."""
    if not (KAFKA_HOME / "bin" / "kafka-server-start.sh").is_file():
        return f"no Kafka 4.1.0 distribution at {KAFKA_HOME} (see ../shared/kafka/README.md)"
    runtime = find_java()
    if runtime is None:
        return f"no Java runtime (JAVA_HOME/bin/java or java on PATH); Kafka 4.1 needs Java >= {MIN_JAVA}"
    if runtime.major < MIN_JAVA:
        return f"Java {runtime.major} at {runtime.java} is too old; Kafka 4.1 needs Java >= {MIN_JAVA}"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5):
            return True
    except OSError:
        return False


class Broker:
    """A single-node KRaft cluster whose files all live under ``work``."""

    def __init__(self, work: Path, release_version: str | None = "3.9-IV0",
                 extra: dict[str, str] | None = None) -> None:
        self.work = Path(work)
        self.data = self.work / "data"
        self.logs = self.work / "logs"
        self.config = self.work / "server.properties"
        self.port, self.controller_port = free_port(), free_port()
        self.release_version = release_version
        self.extra = dict(extra or {})
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    def bin(self, tool: str) -> str:
        return str(KAFKA_HOME / "bin" / tool)

    def tool_env(self, extra_path: str | None = None) -> dict[str, str]:
        env = dict(os.environ, LOG_DIR=str(self.logs), KAFKA_HEAP_OPTS=HEAP, KAFKA_JVM_PERFORMANCE_OPTS=JVM_OPTS)
        runtime = find_java()
        if runtime is not None and runtime.home:
            env["JAVA_HOME"] = runtime.home
        path = [str(KAFKA_HOME / "bin")] + ([extra_path] if extra_path else [])
        env["PATH"] = os.pathsep.join(path + [env.get("PATH", "")])
        return env

    def _properties(self) -> str:
        props = {
            "process.roles": "broker,controller", "node.id": "1",
            "controller.quorum.voters": f"1@{HOST}:{self.controller_port}",
            "listeners": f"PLAINTEXT://{HOST}:{self.port},CONTROLLER://{HOST}:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://{HOST}:{self.port}",
            "controller.listener.names": "CONTROLLER", "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.data), "num.partitions": "1", "auto.create.topics.enable": "false",
            "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1", "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "log.index.size.max.bytes": "16384",  # preallocated indexes stay small in copies
        }
        props.update(self.extra)
        return "".join(f"{k}={v}\n" for k, v in props.items())

    def format(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        self.logs.mkdir(exist_ok=True)
        self.config.write_text(self._properties())
        env = self.tool_env()
        # what ``kafka-storage.sh random-uuid`` prints (Kafka's Uuid.randomUuid: 16 random bytes, URL-safe
        # base64 without padding, never starting with '-'), without a JVM start of its own
        cluster_id = "-"
        while cluster_id.startswith("-"):
            cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        cmd = [self.bin("kafka-storage.sh"), "format", "-t", cluster_id, "-c", str(self.config)]
        if self.release_version:
            cmd += ["--release-version", self.release_version]
        subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, timeout=120)

    def start(self, timeout: float = 90.0) -> None:
        assert self.proc is None, "broker already running"
        self.starts += 1
        out = open(self.logs / f"console-{self.starts}.out", "wb")
        try:
            self.proc = subprocess.Popen([self.bin("kafka-server-start.sh"), str(self.config)], env=self.tool_env(),
                                         stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True, preexec_fn=_die_with_parent)
        finally:
            out.close()
        deadline = time.monotonic() + timeout
        console = self.logs / f"console-{self.starts}.out"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"broker exited with {self.proc.returncode}: {self._tail(console)}")
            if STARTED in console.read_text(errors="replace") and _port_open(self.port):
                return
            time.sleep(0.2)
        self.close()
        raise RuntimeError(f"broker not started after {timeout:.0f} s: {self._tail(console)}")

    @staticmethod
    def _tail(path: Path) -> str:
        try:
            return " | ".join(path.read_text(errors="replace").splitlines()[-5:])
        except OSError:
            return "(no console output)"

    def stop(self, timeout: float = 60.0) -> int:
        """Clean shutdown (SIGTERM to the broker's pid); SIGKILL after ``timeout``. Returns the exit code."""
        proc, self.proc = self.proc, None
        if proc is None:
            return 0
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                return proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
        return proc.wait(30)

    def close(self) -> None:
        """Stop if running; never raises (for ``finally`` blocks)."""
        try:
            self.stop()
        except Exception as exc:  # pragma: no cover - cleanup must go on
            sys.stderr.write(f"broker cleanup: {exc}\n")

    def run_tool(self, args: list[str], timeout: float = 120.0, **kw) -> subprocess.CompletedProcess:
        """``bin/<args[0]>`` with the broker's LOG_DIR and a small heap."""
        return subprocess.run([self.bin(args[0])] + list(args[1:]), env=self.tool_env(), capture_output=True,
                              text=True, timeout=timeout, **kw)
