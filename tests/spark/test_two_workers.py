"""find-hanging and scan on a real standalone cluster of two one-core workers on 127.0.0.1 print what
the in-process engine prints, and say on stderr that they ran on that master.

The cluster (a master and two workers from the PySpark wheel, see cluster.py) is this module's own,
started once and stopped at the end, with every process left in its daemons' sessions (executor
JVMs, PySpark's Python daemons and workers) checked gone. The CLI runs as a user would run it:
``--master spark://127.0.0.1:<port>`` and no ``--engine``, so the default engine picks Spark because
a master was given.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.engine_lines import as_engine, spark_line
from tests.spark.cluster import StandaloneCluster, session_members, spark_env, start_for_test
from tests.spark.test_standalone_cluster import DISK, _run, _show

pytestmark = pytest.mark.spark

EXIT = {"find-hanging": 1, "scan": 0}  # the example disk: one hanging transaction (orders-0), nothing damaged


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    cluster = start_for_test(StandaloneCluster(tmp_path_factory.mktemp("two-workers"), cores=1, memory="1g",
                                               workers=2))
    sessions = set(cluster.daemon_pids())
    try:
        yield cluster
    finally:
        cluster.stop()
    assert len(sessions) == 3 and session_members(sessions) == [], "a process of the cluster outlived it"


def _new_app(cluster: StandaloneCluster, before: set) -> dict:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        new = [a for a in cluster.completed_apps() if a["id"] not in before]
        if new:
            assert len(new) == 1, new
            return new[0]
        time.sleep(0.25)
    raise AssertionError(f"no new completed application on the master: {cluster.status()}")


@pytest.mark.parametrize("command", ["find-hanging", "scan"])
def test_two_worker_cluster_matches_in_process(two_workers, tmp_path: Path, command: str) -> None:
    status = two_workers.status()
    assert two_workers.alive_workers(status) == 2 and sum(w["cores"] for w in status["workers"]) == 2, status
    before = {a["id"] for a in two_workers.completed_apps()}
    common = [command, DISK, "--format", "json", "--no-progress"]
    env = spark_env({"KAFKA_FORENSICS_STATS": str(tmp_path / "stats.json")})
    env.pop("KAFKA_FORENSICS_ENGINE", None)  # the default engine: --master given picks Spark

    on_cluster = _run([*common, "--master", two_workers.master_url], env)
    stats = json.loads((tmp_path / "stats.json").read_text())
    local = _run([*common, "--engine", "local"], env)

    assert local.returncode == EXIT[command], _show(local)
    assert on_cluster.returncode == local.returncode, _show(on_cluster)
    assert on_cluster.stdout == local.stdout, (f"{command} JSON differs between the cluster and --engine local\n"
                                               + _show(on_cluster) + "\n" + _show(local))
    said = spark_line(two_workers.master_url)  # engine spark (spark://127.0.0.1:<port>): --master given
    assert on_cluster.stderr.decode() == as_engine(local.stderr.decode(), said), _show(on_cluster)
    assert (stats["engine"], stats["master"]) == ("spark", two_workers.master_url), stats

    # the application got an executor on each worker (one core each)
    app = _new_app(two_workers, before)
    assert app["state"] == "FINISHED", app
    executors = sorted(p.name for p in (two_workers.work_dir / app["id"]).iterdir())
    assert executors == ["0", "1"], executors
