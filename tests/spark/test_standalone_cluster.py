"""find-hanging on a real Spark standalone cluster gives what the local engine gives, also when
an executor JVM or a Python worker is killed in the middle of the job.

The fixture (conftest.py) starts a master and a worker on 127.0.0.1 from the PySpark
wheel; the CLI runs as a subprocess with ``--master spark://127.0.0.1:<port>``, exactly
as a user would start it against a cluster, and with ``--engine local``. For the kills,
``task_gate`` (conftest.py) holds the job's tasks until the victim is dead, and reads
Spark's event log.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.engine_lines import as_engine, spark_line

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
DISK = "fixtures/example-disk"   # relative: both runs print the same paths


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("kafka-forensics")
    if script.exists():
        return [str(script)]
    found = shutil.which("kafka-forensics")
    return [found] if found else [sys.executable, "-m", "forensics"]


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([*_cli(), *args], cwd=REPO, env=env, capture_output=True,
                          timeout=180, check=False)


def _show(proc: subprocess.CompletedProcess) -> str:
    return (f"exit {proc.returncode}\n--- stdout\n{proc.stdout.decode(errors='replace')[-3000:]}"
            f"\n--- stderr\n{proc.stderr.decode(errors='replace')[-3000:]}")


def _task_ends(event_logs: list[Path]) -> list[dict]:
    """The SparkListenerTaskEnd events in an application's (uncompressed) event log files."""
    events = []
    for path in event_logs:
        for line in path.read_text(errors="replace").splitlines():
            if '"SparkListenerTaskEnd"' in line:
                events.append(json.loads(line))
    return events


def test_find_hanging_on_standalone_cluster_matches_local(
        standalone_cluster, standalone_cluster_handle, spark_env, tmp_path):
    cluster = standalone_cluster_handle
    apps_before = {a["id"] for a in cluster.completed_apps()}
    dirs_before = set(cluster.app_dirs())
    events = tmp_path / "events"
    events.mkdir()
    common = ["find-hanging", DISK, "--format", "json", "--no-progress"]

    on_spark = _run([*common, "--engine", "spark", "--master", standalone_cluster,
                     # the driver's event log shows where tasks ran (executor logs may be quiet)
                     "--conf", "spark.eventLog.enabled=true",
                     "--conf", f"spark.eventLog.dir={events.as_uri()}",
                     "--conf", "spark.eventLog.compress=false"], spark_env())
    local = _run([*common, "--engine", "local"], spark_env())

    # the example disk has one hanging transaction (orders-0, producer 2002): exit 1
    assert local.returncode == 1, _show(local)
    assert on_spark.returncode == local.returncode, _show(on_spark)
    assert on_spark.stdout == local.stdout, (
        "JSON differs between --engine spark (standalone) and --engine local\n"
        + _show(on_spark) + "\n" + _show(local))

    # The run really went through the cluster: the master saw one new application finish,
    deadline = time.monotonic() + 20
    new_apps: list[dict] = []
    while time.monotonic() < deadline:
        new_apps = [a for a in cluster.completed_apps() if a["id"] not in apps_before]
        if new_apps:
            break
        time.sleep(0.25)
    assert len(new_apps) == 1, ("expected one new completed application on the master "
                                f"{standalone_cluster}: {cluster.status()}\n" + _show(on_spark))
    app = new_apps[0]
    assert app["state"] == "FINISHED", app

    # the worker launched an executor for it,
    new_dirs = [d for d in cluster.app_dirs() if d not in dirs_before]
    assert [d.name for d in new_dirs] == [app["id"]], (new_dirs, app)
    assert sorted(new_dirs[0].glob("*/stderr")), f"no executor directory under {new_dirs[0]}"

    # and that executor, not the driver, ran the tasks, all successfully.
    # (Spark 4 writes a rolling log, eventlog_v2_<app>/events_<n>_<app>; 3.5 a single <app> file)
    logs = sorted(p for p in events.rglob("*") if p.is_file() and app["id"] in p.name)
    assert logs, f"no event log for {app['id']} in {events}: {sorted(events.rglob('*'))}"
    ends = _task_ends(logs)
    assert ends, f"{logs} record no finished task"
    assert {e["Task Info"]["Executor ID"] for e in ends} - {"driver"}, ends[0]["Task Info"]
    assert all(e["Task End Reason"]["Reason"] == "Success" for e in ends), [
        e["Task End Reason"] for e in ends if e["Task End Reason"]["Reason"] != "Success"]


def _finish(proc: subprocess.Popen) -> subprocess.CompletedProcess:
    """Waits for the CLI (killing it if it overruns) and returns its exit code and output."""
    try:
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _attempts(ends: list[dict], partition: int) -> list[tuple]:
    """(attempt, reason, executor) of every finished attempt of one task, from the event log."""
    return sorted((e["Task Info"]["Attempt"], e["Task End Reason"]["Reason"], e["Task Info"]["Executor ID"])
                  for e in ends if e["Task Info"]["Partition ID"] == partition)


@pytest.mark.parametrize("victim", ["executor-jvm", "python-worker"])
def test_a_worker_process_killed_mid_job_is_retried(
        standalone_cluster, standalone_cluster_handle, spark_env, task_gate, tmp_path, victim):
    """While find-hanging runs on the cluster, its tasks held at their first work unit (task_gate),
    the executor JVM or the Python worker of a task is SIGKILLed: Spark runs the lost task again
    and the output is still byte for byte the local engine's."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    common = ["find-hanging", DISK, "--format", "json", "--no-progress"]
    local = _run([*common, "--engine", "local"], spark_env())
    proc = subprocess.Popen(
        [*_cli(), *common, "--engine", "spark", "--master", standalone_cluster, *task_gate.conf()],
        cwd=REPO, env=task_gate.env(spark_env({"TMPDIR": str(scratch)})),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        held = task_gate.wait_held(proc)
        executors = task_gate.executor_jvms()
        assert len(executors) == 1, executors
        (lost, executor_pid), = executors.items()
        target = held[0]
        assert target.attempt == 0 and proc.poll() is None  # the job runs; its tasks wait at the gate
        # the tag reaches every kind of process of the run: the leftover check below means something
        assert {h.pid for h in held} | {executor_pid} <= set(task_gate.processes())
        if victim == "executor-jvm":
            task_gate.kill(executor_pid)
            # its Python workers, and the tasks they held, die with it
            task_gate.wait_gone([h.pid for h in held])
        else:
            task_gate.kill(target.pid)
        assert proc.poll() is None
        task_gate.open()
    finally:
        done = _finish(proc)

    assert local.returncode == 1, _show(local)
    assert done.returncode == local.returncode, _show(done)
    assert done.stdout == local.stdout, ("JSON differs from --engine local after the kill\n"
                                         + _show(done) + "\n" + _show(local))
    said = spark_line(standalone_cluster, "--engine spark")
    assert done.stderr.decode() == as_engine(local.stderr.decode(), said), _show(done)

    # Spark saw the attempt fail and ran the task again, successfully; every task succeeded.
    events = task_gate.events()
    ends = task_gate.task_ends(target.stage)
    attempts = _attempts(ends, target.partition)
    assert attempts[0][:2] == (0, "ExecutorLostFailure" if victim == "executor-jvm" else "ExceptionFailure"), attempts
    assert attempts[-1][:2] == (1, "Success"), attempts
    failure = next(e["Task End Reason"] for e in ends if e["Task End Reason"]["Reason"] != "Success")
    if victim == "executor-jvm":
        assert failure["Executor ID"] == lost, failure
        assert attempts[-1][2] != lost  # the retry ran on the replacement executor
        removed = [e for e in events if e["Event"] == "SparkListenerExecutorRemoved"]
        assert [e["Executor ID"] for e in removed] == [lost], removed
        assert "code 137" in removed[0]["Removed Reason"], removed  # 128 + SIGKILL: our kill
    else:
        assert "Python worker exited unexpectedly" in failure["Description"], failure
    succeeded = {e["Task Info"]["Partition ID"] for e in ends if e["Task End Reason"]["Reason"] == "Success"}
    assert succeeded == {e["Task Info"]["Partition ID"] for e in ends}
    # the retry did the work again: it went through the hook
    assert (target.stage, target.partition, 1) in {(h.stage, h.partition, h.attempt) for h in task_gate.held()}

    # nothing left: no process of the run (driver JVM, executors, Python workers), no scratch
    assert task_gate.wait_no_processes() == {}
    assert list(scratch.iterdir()) == []
    assert standalone_cluster_handle.alive_workers(standalone_cluster_handle.status()) == 1
