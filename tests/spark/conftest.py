"""Fixtures for tests that need Spark: a real standalone cluster on 127.0.0.1.

``standalone_cluster`` (session scope) starts one master and one worker (2 cores, 1g)
from the PySpark wheel's own jars, waits until the worker is registered, yields the
master URL ``spark://127.0.0.1:<port>`` and kills both daemons' process groups at the
end. ``standalone_cluster_handle`` is the same cluster as a :class:`StandaloneCluster`
(``.status()``, ``.completed_apps()``, ``.app_dirs()`` look inside it). Logs and work
dirs live in a pytest tmp dir. Without a Java runtime >= 17 the tests that use it are
skipped, saying why.

``spark_env`` gives the environment for subprocesses that run Spark.
"""

from __future__ import annotations

import os

import pytest

try:  # tests/spark as a package (tests/spark/__init__.py) or as a plain rootdir folder
    from .cluster import ClusterError, StandaloneCluster, java_problem
    from .cluster import spark_env as _spark_env
except ImportError:
    from cluster import ClusterError, StandaloneCluster, java_problem  # type: ignore[no-redef]
    from cluster import spark_env as _spark_env  # type: ignore[no-redef]


@pytest.fixture(scope="session")
def spark_env():
    """A function: ``spark_env(extra=None) -> dict`` of environment variables for Spark
    subprocesses (PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP=127.0.0.1, SPARK_HOME,
    JAVA_HOME, ...)."""
    return _spark_env


@pytest.fixture(scope="session")
def standalone_cluster_handle(tmp_path_factory):
    """The running :class:`StandaloneCluster` (master URL, JSON API, worker work dir)."""
    if os.name != "posix":
        pytest.skip("the standalone-cluster fixture runs spark-class, a POSIX shell script")
    pytest.importorskip("pyspark", reason="pyspark is not installed")
    problem = java_problem()
    if problem:
        pytest.skip(problem)
    cluster = StandaloneCluster(tmp_path_factory.mktemp("spark-standalone"))
    try:
        cluster.start()
    except ClusterError as exc:
        pytest.fail(f"could not start the Spark standalone cluster: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def standalone_cluster(standalone_cluster_handle) -> str:
    """The master URL, ``spark://127.0.0.1:<port>``, of a running master with one worker."""
    return standalone_cluster_handle.master_url
