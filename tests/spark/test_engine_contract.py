"""The contract between the two executors: ``--engine local`` (in one process, ``--jobs 1``, and over
two worker processes, ``--jobs 2``) and ``--engine spark`` (a real local Spark session, ``local[2]``)
give byte-identical output on every fixture disk and on the real Kafka 4.1 disks, for every
whole-disk command and the lookups (the pure-Python path: tests/pipeline/test_pool.py); and the executors' merged
per-replica results are equal, including when segments are split into byte ranges."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fixtures import hanging_scenarios, scenarios
from forensics.analysis.producers import rebuild_partition
from forensics.cli import hanging_cmd, scan_cmd, state_cmd  # noqa: F401  (registers the commands)
from forensics.cli.app import app
from forensics.layout.discovery import discover
from forensics.pipeline.assemble import (
    EMPTY_RESULT,
    is_txn_state,
    live_partitions,
    partition_inputs,
)
from forensics.pipeline.local import LocalExecutor
from forensics.pipeline.plan import Scope, plan
from tests.engine_lines import as_engine, spark_line
from tests.machine_output import rows_of

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "real-kafka" / "4.1.0"
MASTER = "local[2]"
runner = CliRunner()


def _spark_or_skip():
    from forensics.pipeline.engine import spark_available

    ok, why = spark_available()
    if not ok:
        pytest.skip(why)


@pytest.fixture(scope="module")
def disks(tmp_path_factory) -> dict[str, Path]:
    out: dict[str, Path] = {"example-disk": REPO / "fixtures" / "example-disk"}
    for run in ("kraft-tv2", "kraft-rv3.9-tv0"):
        out[f"real/{run}"] = REPO / "fixtures" / "real" / run / "disk"
        if (SHARED / run / "data").is_dir():
            out[f"shared/{run}"] = SHARED / run / "data"
    base = tmp_path_factory.mktemp("contract")
    for name in scenarios.SCENARIOS:
        out[f"scenario/{name}"] = scenarios.build(name, base / "s" / name)
    for name in hanging_scenarios.SCENARIOS:
        out[f"hanging/{name}"] = hanging_scenarios.build(name, base / "h" / name)
    return out


def _disk_names() -> list[str]:
    names = ["example-disk", "real/kraft-tv2", "real/kraft-rv3.9-tv0", "shared/kraft-tv2", "shared/kraft-rv3.9-tv0"]
    names += [f"scenario/{n}" for n in scenarios.SCENARIOS]
    names += [f"hanging/{n}" for n in hanging_scenarios.SCENARIOS]
    return names


def _invoke(args: list[str], engine: str) -> tuple[int, str, str]:
    extra = ["--engine", engine] + (["--master", MASTER] if engine == "spark" else [])
    result = runner.invoke(app, args + extra)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _lookups(root: Path) -> list[list[str]]:
    """describe-producers of every data partition with producers, describe of every transactional id
    (capped, to keep the suite short on the real disks)."""
    code, out, _ = _invoke(["list", str(root), "--format", "json", "--no-progress"], "local")
    ids = [row["transactionalId"] for row in rows_of(out)][:4] if code == 0 else []
    code, out, _ = _invoke(["find-hanging", str(root), "--all", "--format", "json", "--no-progress"], "local")
    tps = sorted({(v["topic"], v["partition"]) for v in rows_of(out)})[:4] if out.strip() else []
    cmds = [["describe", str(root), "--transactional-id", t, "--format", "json", "--no-progress"] for t in ids]
    cmds += [["describe-producers", str(root), "--topic", t, "--partition", str(p), "--format", "json",
              "--no-progress"] for t, p in tps]
    return cmds


def _commands(root: Path) -> list[list[str]]:
    r = str(root)
    return [
        ["scan", r, "--format", "json", "--no-progress"],
        ["list", r, "--format", "json", "--no-progress"],
        ["find-hanging", r, "--all", "--format", "json", "--no-progress"],
        ["find-hanging", r, "--format", "csv", "--no-progress"],
        ["abort-commands", r, "--bootstrap-server", "broker-1:9092", "--no-progress"],
    ] + _lookups(root)


@pytest.mark.parametrize("name", _disk_names())
def test_both_engines_print_the_same_bytes(name: str, disks: dict[str, Path]) -> None:
    _spark_or_skip()
    if name not in disks:
        pytest.skip(f"{name}: needs /work/shared/real-kafka")
    for args in _commands(disks[name]):
        local = _invoke(args + ["--jobs", "1"], "local")
        spark = _invoke(args, "spark")
        assert local[0] in (0, 1, 7) and local[1].strip(), f"{args}: exit {local[0]} on the local engine: {local[2]}"
        code, out, err = _invoke(args + ["--jobs", "2"], "local")  # over two worker processes (tasks of a unit)
        one_line = err.replace("engine local (2 processes): ", "engine local (in-process): ", 1)
        assert (code, out, one_line) == local, f"{name}: {' '.join(args[:1])} differs between --jobs 1 and --jobs 2"
        said = spark_line(MASTER, "--engine spark")  # the one line that differs, when the engine ran
        expected = (local[0], local[1], as_engine(local[2], said) if "kafka-forensics: engine " in local[2] else local[2])
        assert spark == expected, f"{name}: {' '.join(args[:1])} differs between engines"


def _results(executor, root: Path, split_bytes: int):
    inventory = discover([str(root)])
    scope = Scope(stats=True, data=True, coordinator=True, non_live=True, split_bytes=split_bytes)
    return executor.run(plan(inventory, scope))


def _outcome(results, root: Path):
    """What the analysis makes of the results: every replica's rebuilt state (runs may be cut
    differently at range seams; the folds must not notice), header statistics, coordinator records."""
    out = {}
    for log_dir, p in live_partitions(discover([str(root)])):
        r = results.get(p.path, EMPTY_RESULT)
        out[p.path] = (r.summaries, r.txnlog, r.snapshots, r.txn_entries, r.txn_findings)
        if not is_txn_state(p):
            view = rebuild_partition(partition_inputs(log_dir, p, r))
            # ``events`` counts the fold's inputs (runs), a representation detail
            view = replace(view, inputs=None, broker=replace(view.broker, events=0),
                           history=replace(view.history, events=0))
            out[p.path] += (view, [(s.path, s.next_offset, s.batches, s.max_timestamp)
                                                          for s in r.events])
    return out


def _damaged_copy(root: Path, tmp_path: Path) -> Path:
    """A copy of the real disk where the largest segment has a flipped byte in its middle: the range
    holding it frames with findings, so the segment is read again whole."""
    copy = tmp_path / "disk"
    shutil.copytree(root, copy)
    largest = max(copy.rglob("*.log"), key=lambda p: p.stat().st_size)
    data = bytearray(largest.read_bytes())
    data[len(data) // 2] ^= 0xFF
    largest.write_bytes(bytes(data))
    return copy


@pytest.mark.parametrize("name", ["real/kraft-tv2", "real/kraft-rv3.9-tv0", "damaged"])
def test_split_segments_give_the_results_of_whole_ones_on_both_engines(name: str, disks: dict[str, Path],
                                                                      tmp_path: Path) -> None:
    _spark_or_skip()
    from forensics.pipeline.spark import SparkExecutor

    root = disks[name] if name != "damaged" else _damaged_copy(disks["real/kraft-tv2"], tmp_path)
    whole = _results(LocalExecutor(), root, 1 << 40)
    units = plan(discover([str(root)]), Scope(stats=True, split_bytes=4096))
    assert any(not u.whole for u in units), "the fixture has no segment large enough to split"
    split = _results(LocalExecutor(), root, 4096)
    assert _outcome(split, root) == _outcome(whole, root)
    if name == "damaged":
        assert any(s.findings for r in whole.values() for s in r.summaries)
    assert _results(SparkExecutor(MASTER), root, 4096) == split
    # every replica cut into its units, spread over tasks, parts merged on the driver
    assert _results(SparkExecutor(MASTER, slice_bytes=1), root, 4096) == split
    assert _results(SparkExecutor(MASTER), root, 1 << 40) == whole


def test_spark_returns_engine_statistics(disks: dict[str, Path]) -> None:
    _spark_or_skip()
    from forensics.pipeline.spark import SparkExecutor

    ex = SparkExecutor(MASTER)
    inventory = discover([str(disks["real/kraft-tv2"])])
    units = plan(inventory, Scope(stats=True, non_live=True))
    seen: list[int] = []
    results = ex.run(units, seen.append)  # the progress bar's callback: bytes read, as tasks finish
    assert results
    assert sum(seen) == sum(u.size for u in units) == ex.stats.input_bytes > 0
    assert ex.stats.engine == "spark" and ex.stats.master == MASTER
    assert 0 < ex.stats.tasks <= ex.stats.units
    assert ex.stats.bytes_to_driver > 0
