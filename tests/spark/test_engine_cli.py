"""``--engine``, ``--master`` and ``--conf`` as a user meets them, in real processes: the defaults
per command, Spark's console noise kept out of our output, the fallback when Java is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.pipeline.engine import spark_available
from tests.engine_lines import as_engine, spark_line, split_engine_line
from tests.spark.cluster import processes_mentioning
from tests.machine_output import rows_of

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
DISK = str(REPO / "fixtures" / "example-disk")
CLI = [sys.executable, "-m", "forensics"]


def _env(tmp_path: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_ENGINE"}
    env["KAFKA_FORENSICS_STATS"] = str(tmp_path / "stats.json")
    scratch = tmp_path / "scratch"  # Spark's scratch dir, and a failed start's kept log, stay in the test's tmp
    scratch.mkdir(exist_ok=True)
    env["TMPDIR"] = str(scratch)
    env.update(extra)
    return env


def _run(args, env, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(CLI + args, capture_output=True, text=True, env=env, cwd=cwd or REPO, timeout=600)


def _stats(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "stats.json").read_text())


@pytest.fixture(scope="module")
def local_find_hanging(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("local")
    return _run(["find-hanging", DISK, "--format", "json", "--engine", "local"], _env(tmp))


def test_whole_disk_commands_default_to_spark_quietly(tmp_path: Path, local_find_hanging) -> None:
    ok, why = spark_available()
    if not ok:
        pytest.skip(why)
    done = _run(["find-hanging", DISK, "--format", "json", "--master", "local[2]"], _env(tmp_path))
    stats = _stats(tmp_path)
    assert stats["engine"] == "spark" and stats["master"] == "local[2]"
    assert done.returncode == local_find_hanging.returncode == 1
    assert done.stdout == local_find_hanging.stdout  # nothing from the JVM (its warnings go to stdout)
    # nothing from Spark, log4j or the JVM: the same stderr as the in-process engine, but for the engine's line
    assert done.stderr == as_engine(local_find_hanging.stderr, spark_line("local[2]")), done.stderr
    assert not list(Path(DISK).rglob("*spark*")) and not list(Path(DISK).rglob("metastore_db"))


def test_a_new_jvm_archive_stays_out_of_our_output(tmp_path: Path, local_find_hanging) -> None:
    """The first run with an empty cache makes the class-data-sharing archive at JVM exit, when the
    JVM writes warnings to its stdout: they must not land in ours."""
    ok, why = spark_available()
    if not ok:
        pytest.skip(why)
    env = _env(tmp_path, XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = _run(["find-hanging", DISK, "--format", "json", "--master", "local[1]"], env)
    assert done.returncode == 1
    assert done.stdout == local_find_hanging.stdout
    assert done.stderr == as_engine(local_find_hanging.stderr, spark_line("local[1]"))
    # the driver JVM writes the archive before our process exits: no JVM outlives the command
    assert not processes_mentioning(str(tmp_path / "cache")), "a JVM outlived the command"
    assert sorted(p.suffix for p in (tmp_path / "cache" / "kafka-forensics").iterdir()) == [".jsa", ".ok"]


def test_lookups_default_to_local(tmp_path: Path) -> None:
    done = _run(["describe-producers", DISK, "--topic", "orders", "--partition", "0", "--format", "json"],
                _env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert _stats(tmp_path)["engine"] == "local"
    assert split_engine_line(done.stderr)[0] == "kafka-forensics: engine local (in-process): the default of this command"


def test_without_java_spark_asked_for_is_refused_in_one_line(tmp_path: Path) -> None:
    """Spark asked for by name where no Java runs: one line saying what is missing, exit 6 (never 1 or 7, the
    verdicts' codes), nothing read; auto runs in-process and says why."""
    env = _env(tmp_path, PATH=str(Path(sys.executable).parent), JAVA_HOME=str(tmp_path / "no-java"))
    done = _run(["find-hanging", DISK, "--format", "json", "--engine", "spark"], env)
    assert (done.returncode, done.stdout) == (6, "")
    [line] = done.stderr.splitlines()
    assert line.startswith("kafka-forensics: --engine spark needs Spark, which cannot run here: no Java runtime found")
    assert line.endswith("; --engine local runs in this process")


def test_conf_needs_key_value(tmp_path: Path) -> None:
    done = _run(["scan", DISK, "--conf", "spark.executor.memory"], _env(tmp_path))
    assert done.returncode == 2
    assert "--conf 'spark.executor.memory': give KEY=VALUE" in done.stderr


def test_conf_reaches_spark(tmp_path: Path) -> None:
    ok, why = spark_available()
    if not ok:
        pytest.skip(why)
    real = str(REPO / "fixtures" / "real" / "kraft-tv2" / "disk")  # 137 replicas: many more than tasks
    tasks: dict = {}
    for slots in (1, 3):
        done = _run(["scan", real, "--format", "json", "--master", "local[1]", "--conf",
                     f"spark.default.parallelism={slots}"], _env(tmp_path))
        assert done.returncode == 0, done.stderr
        stats = _stats(tmp_path)
        assert stats["master"] == "local[1]"
        tasks[slots] = stats["slots"]
    assert tasks == {1: 1, 3: 3}  # the setting reached Spark


def test_a_bad_master_is_one_clear_line(tmp_path: Path) -> None:
    ok, why = spark_available()
    if not ok:
        pytest.skip(why)
    done = _run(["list", DISK, "--master", "nonsense://x"], _env(tmp_path))
    assert done.returncode != 0 and done.returncode != 70, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0] == spark_line("nonsense://x"), done.stderr
    assert lines[1].startswith("kafka-forensics: Spark did not start"), done.stderr
    assert "Traceback" not in done.stderr


def test_java_versions_below_17_do_not_count() -> None:
    from forensics.pipeline.java import _java_major

    assert _java_major('openjdk version "17.0.15" 2025-04-15') == 17
    assert _java_major('openjdk version "21" 2023-09-19') == 21
    assert _java_major('java version "1.8.0_392"') == 8
    assert _java_major('openjdk version "11.0.2"') == 11
    assert _java_major("no version here") is None


def test_relative_paths_resolve_on_executors_as_on_the_driver(tmp_path: Path, local_find_hanging) -> None:
    ok, why = spark_available()
    if not ok:
        pytest.skip(why)
    done = _run(["find-hanging", "example-disk", "--format", "json", "--master", "local[2]"], _env(tmp_path),
                cwd=REPO / "fixtures")
    assert done.returncode == 1, done.stderr
    assert rows_of(done.stdout)[0]["producerId"] == rows_of(local_find_hanging.stdout)[0]["producerId"]


def test_a_failed_job_keeps_the_log_it_names(tmp_path: Path) -> None:
    ok, why = spark_available()
    if not ok:
        pytest.skip(why)
    done = _run(["list", DISK, "--master", "nonsense://x"], _env(tmp_path))
    log = done.stderr.strip().rsplit("Spark's log: ", 1)[-1].rstrip(")")
    assert Path(log).is_file(), done.stderr
    Path(log).unlink()
    Path(log).parent.rmdir()


@pytest.mark.parametrize("delay", [0.3, 2.0, 5.0, 8.0])
def test_ctrl_c_exits_130_in_one_line_and_leaves_nothing(tmp_path: Path, delay: float) -> None:
    ok, why = spark_available()
    if not ok:
        pytest.skip(why)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = _env(tmp_path, TMPDIR=str(scratch))
    proc = subprocess.Popen(CLI + ["find-hanging", DISK, "--format", "json", "--master", "local[1]"], cwd=REPO,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import time

    time.sleep(delay)
    proc.send_signal(2)  # SIGINT, as Ctrl-C
    out, err = proc.communicate(timeout=120)
    if proc.returncode == 1:  # finished before the signal: nothing to check on this machine
        pytest.skip("the run ended before Ctrl-C")
    # wherever the signal lands (start-up, job, output, Spark's stop), one line and exit 130; any
    # output written before it is whole
    # -2: Python re-raises SIGINT on itself when a KeyboardInterrupt ended it; a shell shows 130 for both
    assert proc.returncode in (130, -2), err
    # the one line about the interrupt is last; before it only the incident clock's note ("as of ..." and
    # what it says of the file times) and, once the job started, the engine's line may stand
    lines = err.splitlines()
    assert lines[-1] == "kafka-forensics: interrupted", err
    assert all(line.startswith(("as of ", "file times ")) or line == spark_line("local[1]") for line in lines[:-1]), err
    assert "Traceback" not in err and "internal error" not in err
    assert out == "" or json.loads(out)
    time.sleep(2)  # the JVM exits when our process closes its pipe
    assert [p.name for p in scratch.iterdir()] == []
