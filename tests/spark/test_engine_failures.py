"""A failed task under the default master (``local[*,4]``) is retried and the output is unchanged;
a job that truly fails still exits 6 in one line naming Spark's log.

The CLI runs as a subprocess; the ``task_gate`` fixture (conftest.py) holds its tasks at their first
work unit, so the kill lands while the job is certainly running, and reads Spark's event log to
prove what Spark did. The standalone-cluster counterpart (a lost executor) is in
test_standalone_cluster.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.pipeline.engine import spark_available
from forensics.pipeline.spark_session import DEFAULT_MASTER, TASK_ATTEMPTS
from tests.engine_lines import as_engine, spark_line, split_engine_line

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
DISK = "fixtures/example-disk"  # relative: every run prints the same paths
CLI = [sys.executable, "-m", "forensics"]
COMMAND = ["find-hanging", DISK, "--format", "json", "--no-progress"]


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_ENGINE"}
    env["KAFKA_FORENSICS_STATS"] = str(tmp_path / "stats.json")
    scratch = tmp_path / "scratch"  # Spark's scratch dir (and a failed run's kept log) stay here
    scratch.mkdir(exist_ok=True)
    env["TMPDIR"] = str(scratch)
    return env


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> subprocess.CompletedProcess:
    tmp = tmp_path_factory.mktemp("local")
    return subprocess.run(CLI + COMMAND + ["--engine", "local"], cwd=REPO, env=_env(tmp),
                          capture_output=True, timeout=120, check=False)


@pytest.fixture(autouse=True)
def _needs_spark() -> None:
    ok, why = spark_available()
    if not ok:
        pytest.skip(why)


def _start(task_gate, tmp_path: Path, master) -> subprocess.Popen:
    args = CLI + COMMAND + ["--engine", "spark", *task_gate.conf()]
    if master is not None:
        args += ["--master", master]
    return subprocess.Popen(args, cwd=REPO, env=task_gate.env(_env(tmp_path)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(proc: subprocess.Popen) -> subprocess.CompletedProcess:
    """Waits for the CLI (killing it if it overruns) and returns its exit code and output."""
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _kept_log(err: str) -> Path:
    """The one line of a failed run (after the engine's) names Spark's log, which it keeps; the test removes it."""
    engine, err = split_engine_line(err)
    assert engine.startswith("kafka-forensics: engine spark ("), engine
    assert err.count("\n") == 1 and err.startswith("kafka-forensics: Spark job failed: "), err
    assert "Traceback" not in err
    log = Path(err.strip().rsplit("Spark's log: ", 1)[-1].rstrip(")"))
    assert log.is_file(), err
    return log


def _attempts(ends: list, partition: int) -> list:
    """(attempt, reason) of every finished attempt of one task, from the event log."""
    return sorted((e["Task Info"]["Attempt"], e["Task End Reason"]["Reason"]) for e in ends
                  if e["Task Info"]["Partition ID"] == partition)


@pytest.mark.parametrize("master", [None, "local[2]"], ids=["default-master", "local-2"])
def test_a_python_worker_killed_mid_task(task_gate, tmp_path: Path, local_run, master) -> None:
    """Under the default master the task is tried again and the output is the local engine's. Under
    ``local[2]`` (Spark's local mode: a task is tried once) the same kill fails the run: proof that
    the kill hits the job, and that the retry is what saves it."""
    scratch = tmp_path / "scratch"
    proc = _start(task_gate, tmp_path, master)
    try:
        victim = task_gate.wait_held(proc)[0]
        assert victim.attempt == 0 and proc.poll() is None  # the job runs; its task waits at the gate
        assert victim.pid in task_gate.processes()  # tagged: the leftover check below means something
        task_gate.kill(victim.pid)
        task_gate.open()
    finally:
        done = _finish(proc)

    ends = task_gate.task_ends(victim.stage)
    attempts = _attempts(ends, victim.partition)
    crash = [e["Task End Reason"] for e in ends if e["Task End Reason"]["Reason"] != "Success"]
    assert len(crash) == 1 and "Python worker exited unexpectedly" in crash[0]["Description"], crash
    if master is None:
        assert done.returncode == local_run.returncode == 1, done.stderr.decode(errors="replace")
        assert done.stdout == local_run.stdout
        assert done.stderr.decode() == as_engine(local_run.stderr.decode(), spark_line(DEFAULT_MASTER, "--engine spark"))
        assert attempts == [(0, "ExceptionFailure"), (1, "Success")]
        # the retry ran the work again (it passed the gate's hook), and every task of the job succeeded
        assert (victim.stage, victim.partition, 1) in {(h.stage, h.partition, h.attempt) for h in task_gate.held()}
        succeeded = {e["Task Info"]["Partition ID"] for e in ends if e["Task End Reason"]["Reason"] == "Success"}
        assert succeeded == {e["Task Info"]["Partition ID"] for e in ends}
        assert json.loads((tmp_path / "stats.json").read_text())["master"] == DEFAULT_MASTER
        assert list(scratch.iterdir()) == []
    else:
        line = done.stderr.decode()
        assert done.returncode == 6 and done.stdout == b"", line
        log = _kept_log(line)
        assert "failed 1 times" in line and "Python worker exited unexpectedly (crashed)" in line, line
        assert attempts == [(0, "ExceptionFailure")]
        assert [p.name for p in scratch.iterdir()] == [log.parent.name]
        log.unlink()
        log.parent.rmdir()
    assert task_gate.wait_no_processes() == {}


def test_a_deterministic_failure_is_tried_then_exits_6_in_one_line(task_gate, tmp_path: Path) -> None:
    """A task that fails every time (here: raises) fails the run after TASK_ATTEMPTS attempts, with
    the documented exit code and one line naming Spark's log."""
    task_gate.fail_every_task()
    scratch = tmp_path / "scratch"
    done = _finish(_start(task_gate, tmp_path, None))
    line = done.stderr.decode()
    assert done.returncode == 6 and done.stdout == b"", line
    log = _kept_log(line)
    assert "RuntimeError: injected failure" in line, line
    held = task_gate.held()
    assert held, "no task ran"
    ends = task_gate.task_ends(held[0].stage)
    assert _attempts(ends, held[0].partition) == [(n, "ExceptionFailure") for n in range(TASK_ATTEMPTS)]
    assert [p.name for p in scratch.iterdir()] == [log.parent.name]
    log.unlink()
    log.parent.rmdir()
    assert task_gate.wait_no_processes() == {}
