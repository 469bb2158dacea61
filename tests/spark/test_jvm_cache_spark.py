"""The class-data-sharing cache of the driver JVM with a real JVM (issue 15, item 11): the first run
writes the archive before it returns (no JVM outlives the command), two first runs at once leave one
whole archive, and a damaged archive costs one warning line, never the run.

Before this, a truncated archive in the cache made the JVM die with SIGBUS and every later Spark
run exit 6 ("Spark did not start") until someone deleted it, and the archiving JVM lived on for
minutes after the command had returned.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from forensics.pipeline import jvm_cache
from forensics.pipeline.engine import spark_available
from tests.engine_lines import as_engine, spark_line, without_engine_line
from tests.spark.cluster import processes_mentioning

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
DISK = str(REPO / "fixtures" / "example-disk")
CLI = [sys.executable, "-m", "forensics"]
ARGS = ["find-hanging", DISK, "--format", "json", "--master", "local[1]", "--no-progress"]
SPARK = spark_line("local[1]")


def _spark_or_skip() -> None:
    ok, why = spark_available()
    if not ok:
        pytest.skip(why)


def _env(tmp_path: Path, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("KAFKA_FORENSICS_ENGINE", "KAFKA_FORENSICS_SPARK_CDS")}
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    env.update(TMPDIR=str(scratch), XDG_CACHE_HOME=str(cache))
    return env


def _archives(cache: Path) -> list[str]:
    return sorted(os.listdir(cache / "kafka-forensics"))


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> subprocess.CompletedProcess:
    tmp = tmp_path_factory.mktemp("local")
    env = _env(tmp, tmp / "cache")
    return subprocess.run(CLI + ["find-hanging", DISK, "--format", "json", "--engine", "local"], capture_output=True,
                          text=True, env=env, timeout=600)


class FirstRuns(NamedTuple):
    cache: Path
    done: list[tuple[int, str, str]]  # exit code, stdout, stderr of each
    left: list[int]  # processes mentioning the cache right after both returned


@pytest.fixture(scope="module")
def first_runs(tmp_path_factory, local_run) -> FirstRuns:
    """Two first runs at once on an empty cache."""
    _spark_or_skip()
    tmp = tmp_path_factory.mktemp("first")
    cache = tmp / "cache"
    env = _env(tmp, cache)
    runs = [subprocess.Popen(CLI + ARGS, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(2)]
    outputs = [p.communicate(timeout=900) for p in runs]
    left = processes_mentioning(str(cache))
    return FirstRuns(cache, [(p.returncode, out, err) for p, (out, err) in zip(runs, outputs)], left)


@pytest.fixture
def archive(first_runs: FirstRuns) -> Path:
    """The cache the first runs made (its archive and record)."""
    return first_runs.cache


def test_two_first_runs_leave_one_whole_archive_and_no_jvm(first_runs: FirstRuns, local_run) -> None:
    cache, done, left = first_runs
    for code, out, err in done:
        assert (code, out, err) == (local_run.returncode, local_run.stdout, as_engine(local_run.stderr, SPARK))
    assert left == [], "a JVM outlived the command"
    names = _archives(cache)
    assert len(names) == 2 and names[0].endswith(".jsa") and names[1] == names[0] + ".ok", names  # no temp files
    size = (cache / "kafka-forensics" / names[0]).stat().st_size
    assert (cache / "kafka-forensics" / names[1]).read_text() == f"{size}\n"


def test_a_truncated_archive_is_set_aside_before_the_jvm_sees_it(archive: Path, tmp_path: Path, local_run) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(archive, cache)
    jsa = next((cache / "kafka-forensics").glob("*.jsa"))
    jsa.chmod(0o644)  # the JVM writes it read-only
    size = jsa.stat().st_size
    with open(jsa, "r+b") as fh:
        fh.truncate(size // 3)
    done = subprocess.run(CLI + ARGS, capture_output=True, text=True, env=_env(tmp_path, cache), timeout=900)
    assert (done.returncode, done.stdout, done.stderr) == (local_run.returncode, local_run.stdout,
                                                           as_engine(local_run.stderr, SPARK))
    assert jvm_cache.valid(str(jsa)) and jsa.stat().st_size > size // 3  # made again, whole
    assert not processes_mentioning(str(cache))


def test_an_archive_the_jvm_dies_on_costs_one_warning_and_a_start_without_it(archive: Path, tmp_path: Path,
                                                                            local_run) -> None:
    """An archive that passes the check (its record forged to the truncated size) and kills the
    JVM (SIGBUS): removed, one warning naming it, the run completes without it."""
    cache = tmp_path / "cache"
    shutil.copytree(archive, cache)
    jsa = next((cache / "kafka-forensics").glob("*.jsa"))
    jsa.chmod(0o644)  # the JVM writes it read-only
    with open(jsa, "r+b") as fh:
        fh.truncate(jsa.stat().st_size // 3)
    Path(f"{jsa}.ok").write_text(f"{jsa.stat().st_size}\n")
    env = {**_env(tmp_path, cache), "KAFKA_FORENSICS_SPARK_CDS": "1"}
    done = subprocess.run(CLI + ARGS, capture_output=True, text=True, env=env, timeout=900)
    assert (done.returncode, done.stdout) == (local_run.returncode, local_run.stdout), done.stderr
    assert done.stderr == (SPARK + f"\nkafka-forensics: warning: Spark's start-up cache {jsa} made the JVM fail; removed "
                           "it, starting without it\n" + without_engine_line(local_run.stderr))
    assert not jsa.exists() and not Path(f"{jsa}.ok").exists()
    assert not processes_mentioning(str(cache))
