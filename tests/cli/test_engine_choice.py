"""The default engine (``--engine auto``): in-process below the crossover of the cost model (per workload
and core count; at any size where Spark is never faster), Spark from it on or whenever --master/--conf
says how to run it; a forced name as given; one line on stderr, every run."""

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


EXPORT = EngineSpec(EngineName.auto, workload=engine.Workload.export)
HUGE = 1 << 50  # 1 PiB of log data


def test_reading_commands_stay_in_process_on_one_machine_at_any_size() -> None:
    """Spark local[N] costs more per byte than the pool of N processes and starts a JVM first: by the
    model (engine.IN_PROCESS, engine.SPARK) it is faster at no size on any number of cores."""
    for cores in (2, 4, 8, 16, 64, 256):
        assert engine.spark_from_bytes(engine.Workload.read, cores) is None
        assert choose_engine(AUTO, HUGE, cores=cores, spark_ok=_spark_ok)[:2] == (EngineName.local, Why.one_machine)
    assert choose_engine(AUTO, HUGE, cores=1, spark_ok=_spark_ok)[:2] == (EngineName.local, Why.one_core)


def test_export_on_spark_from_its_crossover_which_falls_with_cores() -> None:
    """export's `batches` pass runs in one process in-process, on Spark's executors: from 8 cores on,
    Spark pays off on large disks, sooner the more cores."""
    at = {cores: engine.spark_from_bytes(engine.Workload.export, cores) for cores in (2, 4, 8, 16, 32)}
    assert at[2] is None and at[4] is None
    assert 4 << 30 < at[32] < at[16] < at[8] < 16 << 30, at
    for cores in (8, 16):
        t = at[cores]
        assert choose_engine(EXPORT, t - 1, cores=cores, spark_ok=_spark_ok)[:2] == (EngineName.local, Why.small)
        assert choose_engine(EXPORT, t, cores=cores, spark_ok=_spark_ok)[:2] == (EngineName.spark, Why.large)
        assert choose_engine(EXPORT, t, cores=cores, spark_ok=_no_java)[:3] == (EngineName.local, Why.no_spark,
                                                                               "no Java runtime found (test)")
    assert choose_engine(EXPORT, HUGE, cores=2, spark_ok=_spark_ok)[:2] == (EngineName.local, Why.one_machine)


def test_the_model_is_the_wall_time_of_each_engine() -> None:
    """The crossover is where the two lines meet."""
    for cores in (8, 16):
        gib = engine.spark_from_bytes(engine.Workload.export, cores) / (1 << 30)
        ours, spark = engine.IN_PROCESS[engine.Workload.export], engine.SPARK[engine.Workload.export]
        assert abs(ours.wall(gib, cores) - spark.wall(gib, cores)) < 1e-6
        assert ours.wall(gib * 0.9, cores) < spark.wall(gib * 0.9, cores)


def test_master_or_conf_mean_spark_and_a_forced_name_wins() -> None:
    tiny = 10
    assert choose_engine(EngineSpec(EngineName.auto, "local[1]"), tiny, cores=1)[:2] == (EngineName.spark, Why.master)
    assert choose_engine(EngineSpec(EngineName.auto, conf=(("a", "b"),)), tiny)[:2] == (EngineName.spark, Why.conf)
    big = HUGE
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
    assert said == [f"kafka-forensics: engine local (in-process): {size} of logs; Spark is not faster on one "
                    "machine"], lines
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
    monkeypatch.setattr(engine, "spark_from_bytes", lambda workload, cores: 1024)
    monkeypatch.setattr(engine, "spark_available", _no_java)
    monkeypatch.setattr(engine, "available_cores", lambda: 2)
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
        line = f"kafka-forensics: engine local (2 processes): {size} of logs; Spark is not faster on one machine"
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

