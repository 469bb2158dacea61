"""The guard that keeps the fast tier fast (``tests/process_guard.py``): what counts as starting a JVM or
a browser, and a pytest run in which an unmarked test that starts one fails while a marked one passes
(a stand-in ``java`` / ``chromium`` script, so no JVM or browser really starts)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.process_guard import classify

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("argv, env, kind", [
    (["/usr/lib/jvm/java-17/bin/java", "-cp", "x", "Main"], None, "jvm"),
    (["java", "-version"], None, None),  # a probe
    (["/opt/spark/bin/spark-submit", "pyspark-shell"], None, "jvm"),
    (["/opt/kafka/bin/kafka-dump-log.sh", "--files", "x.log"], None, "jvm"),
    (["sh", "-c", "exec java -jar broker.jar"], None, "jvm"),
    (["/usr/lib/chromium/chromium", "--headless"], None, "browser"),
    (["unshare", "--net", "/usr/lib/chromium/chromium", "--headless"], None, "browser"),
    ([sys.executable, "-m", "forensics", "scan", "d"], {"KAFKA_FORENSICS_ENGINE": "local"}, None),
    ([sys.executable, "-m", "forensics", "scan", "d"], {}, "jvm"),  # whole-disk commands default to Spark
    ([sys.executable, "-m", "forensics", "dump", "x.log"], {}, None),
    (["kafka-forensics", "scan", "d", "--engine", "spark"], {"KAFKA_FORENSICS_ENGINE": "local"}, "jvm"),
    (["kafka-forensics", "scan", "d", "--engine=local"], {}, None),
    (["kafka-forensics", "export", "d", "--out", "o"], {"KAFKA_FORENSICS_ENGINE": "local"}, None),  # pyarrow
    (["kafka-forensics", "export", "d", "--out", "o"], {}, "jvm"),  # auto: Spark on a large disk
    (["kafka-forensics", "export", "d", "--out", "o", "--master", "local[2]"], {"KAFKA_FORENSICS_ENGINE": "local"},
     "jvm"),
    (["git", "status"], None, None),
])
def test_classify(argv, env, kind) -> None:
    assert classify(argv, env) == kind


GUARDED = '''
import subprocess
import pytest

def test_unmarked_jvm():
    subprocess.run(["{bin}/java", "-jar", "x.jar"], check=True)

@pytest.mark.jvm
def test_marked_jvm():
    subprocess.run(["{bin}/java", "-jar", "x.jar"], check=True)

def test_unmarked_probe():
    subprocess.run(["{bin}/java", "-version"], check=True)

@pytest.mark.spark
def test_spark_may_start_a_jvm():
    subprocess.run(["{bin}/java", "-jar", "x.jar"], check=True)

def test_unmarked_browser():
    subprocess.run(["{bin}/chromium", "--headless"], check=True)

@pytest.mark.browser
def test_marked_browser():
    subprocess.run(["{bin}/chromium", "--headless"], check=True)

@pytest.mark.jvm
def test_jvm_marker_is_not_a_browser_marker():
    subprocess.run(["{bin}/chromium", "--headless"], check=True)
'''


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA",
                           "-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path),
                           "--confcutdir", str(tmp_path), *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_an_unmarked_test_that_starts_a_jvm_or_a_browser_fails(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("java", "chromium"):
        (bin_dir / name).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / name).chmod(0o755)
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_configure  # noqa: F401\n")
    (tmp_path / "test_guarded.py").write_text(GUARDED.format(bin=bin_dir))
    done = _pytest(tmp_path, "test_guarded.py")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    errors = sorted(line.split("::")[1].split()[0] for line in out.splitlines() if line.startswith("ERROR "))
    assert errors == ["test_jvm_marker_is_not_a_browser_marker", "test_unmarked_browser", "test_unmarked_jvm"], out
    assert "test_unmarked_jvm started a JVM without @pytest.mark.spark or @pytest.mark.jvm" in out
    assert "7 passed, 3 errors" in out
    # the fast tier leaves out every test marked jvm, spark or browser (each counts as slow)
    fast = _pytest(tmp_path, "test_guarded.py", "-m", "not slow")
    assert "3 passed, 4 deselected, 2 errors" in fast.stdout, fast.stdout
