"""The default engine (``--engine auto``): in-process below the measured crossover, Spark from it on or
whenever --master/--conf says how to run it; a forced name as given; one line on stderr, every run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
import forensics.cli.report_cmd  # noqa: F401
import forensics.cli.scan_cmd  # noqa: F401
import forensics.cli.state_cmd  # noqa: F401
from forensics.cli.app import app
from forensics.pipeline import engine
from forensics.pipeline.engine import EngineName, EngineSpec, Why, choose_engine

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
runner = CliRunner()
AUTO = EngineSpec(EngineName.auto)


def _spark_ok():
    return True, ""


def _no_java():
    return False, "no Java runtime found (test)"


def test_auto_by_size_around_the_crossover() -> None:
    at = engine.SPARK_FROM_BYTES
    assert choose_engine(AUTO, at - 1, cores=2, spark_ok=_spark_ok)[:2] == (EngineName.local, Why.small)
    assert choose_engine(AUTO, at, cores=2, spark_ok=_spark_ok)[:2] == (EngineName.spark, Why.large)
    assert choose_engine(AUTO, at, cores=2, spark_ok=_no_java)[:3] == (EngineName.local, Why.no_spark,
                                                                        "no Java runtime found (test)")
    assert choose_engine(AUTO, 100 * at, cores=1, spark_ok=_spark_ok)[:2] == (EngineName.local, Why.one_core)


def test_master_or_conf_mean_spark_and_a_forced_name_wins() -> None:
    tiny = 10
    assert choose_engine(EngineSpec(EngineName.auto, "local[1]"), tiny, cores=1)[:2] == (EngineName.spark, Why.master)
    assert choose_engine(EngineSpec(EngineName.auto, conf=(("a", "b"),)), tiny)[:2] == (EngineName.spark, Why.conf)
    big = 100 * engine.SPARK_FROM_BYTES
    forced = choose_engine(EngineSpec(EngineName.local, "local[2]", given="--engine local"), big, cores=8,
                           spark_ok=_spark_ok)
    assert forced[:3] == (EngineName.local, Why.given, "--engine local")
    assert choose_engine(EngineSpec(EngineName.spark), 0, cores=1)[:3] == (EngineName.spark, Why.given,
                                                                            "--engine spark")


def _log_bytes(root: Path) -> int:
    """The segments' bytes, counted here without the tool: every ``.log`` file under the disk."""
    return sum(p.stat().st_size for p in root.rglob("*.log"))


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def _stderr_lines(*args: str, **env) -> list:
    r = runner.invoke(app, [*args, str(EXAMPLE), "--no-progress"], env={"KAFKA_FORENSICS_ENGINE": None, **env})
    assert r.exit_code in (0, 1), r.stderr
    return r.stderr.splitlines()


@pytest.mark.parametrize("command", [("scan", "--format", "json"), ("find-hanging", "--format", "json"),
                                     ("list", "--format", "json"), ("abort-commands", "--bootstrap-server", "localhost:9092"),
                                     ("report", "--out", "{tmp}/report.html")])
def test_every_run_says_which_engine_and_why_once(command, tmp_path: Path) -> None:
    size = _kib(_log_bytes(EXAMPLE))
    lines = _stderr_lines(*(a.replace("{tmp}", str(tmp_path)) for a in command))
    said = [line for line in lines if line.startswith("kafka-forensics: engine ")]
    assert said == [f"kafka-forensics: engine local (in-process): {size} of logs, below the 16.0 GiB Spark "
                    "threshold"], lines
    assert len(said[0]) <= 100  # one line that fits 100 columns


def test_the_line_says_how_a_forced_engine_was_given() -> None:
    said = _stderr_lines("find-hanging", "--format", "json", "--engine", "local")
    assert said[0] == "kafka-forensics: engine local (in-process): --engine local"
    said = _stderr_lines("find-hanging", "--format", "json", KAFKA_FORENSICS_ENGINE="local")
    assert said[0] == "kafka-forensics: engine local (in-process): KAFKA_FORENSICS_ENGINE=local"
    said = _stderr_lines("describe-producers", "--topic", "orders", "--partition", "0")
    assert said[0] == "kafka-forensics: engine local (in-process): the default of this command"
    said = _stderr_lines("scan", "--format", "json", "--engine", "local", "--master", "local[2]")
    assert said[:2] == ["kafka-forensics: warning: --master/--conf apply to --engine spark only",
                        "kafka-forensics: engine local (in-process): --engine local"]


def test_above_the_crossover_without_java_runs_in_process_and_says_why(monkeypatch) -> None:
    monkeypatch.setattr(engine, "SPARK_FROM_BYTES", 1024)
    monkeypatch.setattr(engine, "spark_available", _no_java)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    size = _kib(_log_bytes(EXAMPLE))
    said = _stderr_lines("find-hanging", "--format", "json")
    assert said[0] == (f"kafka-forensics: engine local (in-process): {size} of logs, at least the 1.0 KiB Spark "
                       "threshold, but Spark cannot run here: no Java runtime found (test)")


def test_refused_inputs_get_their_one_line_without_the_engines(tmp_path: Path) -> None:
    """The line comes when the engine starts: a path refused before any work is read stays one line."""
    r = runner.invoke(app, ["find-hanging", str(tmp_path / "missing"), "--no-progress"],
                      env={"KAFKA_FORENSICS_ENGINE": None})
    assert r.exit_code == 3 and r.stderr == f"kafka-forensics: {tmp_path / 'missing'}: no such file or directory\n"


def test_the_line_says_how_many_processes_read() -> None:
    """In-process on small inputs by default; ``--jobs N`` (or its variable) asks for N processes
    whatever the size, and the line says so, still in 100 columns; ``--jobs 1`` is this process."""
    size = _kib(_log_bytes(EXAMPLE))
    for args, env in ((("--jobs", "2"), {}), ((), {"KAFKA_FORENSICS_JOBS": "2"})):
        said = _stderr_lines("scan", "--format", "json", *args, **env)
        line = f"kafka-forensics: engine local (2 processes): {size} of logs, below the 16.0 GiB Spark threshold"
        assert said[0] == line and len(line) <= 100
    said = _stderr_lines("scan", "--format", "json", "--jobs", "1", KAFKA_FORENSICS_JOBS="2")
    assert said[0].startswith("kafka-forensics: engine local (in-process): ")
    r = runner.invoke(app, ["scan", str(EXAMPLE), "--jobs", "0"])
    assert r.exit_code == 2 and "--jobs" in r.stderr


def test_jobs_default_to_the_cores_this_process_may_use(monkeypatch) -> None:
    from forensics.pipeline.local import LocalExecutor

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    told = engine.make_executor(EngineSpec(EngineName.local), lambda text: None)
    assert isinstance(told._executor, LocalExecutor) and told._executor.jobs == 3 and not told._executor.forced
    told = engine.make_executor(EngineSpec(EngineName.local, jobs=5), lambda text: None)
    assert told._executor.jobs == 5 and told._executor.forced

