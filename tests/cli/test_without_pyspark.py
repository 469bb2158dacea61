"""Without PySpark (issue 23, "Spark only when Spark runs"; docs/spark.md, "Without PySpark").

pyspark and py4j are imported only when a Spark session starts, and no exit hook touches them
otherwise. In a real environment without them, every command that does not need Spark prints the
same bytes on stdout and stderr and ends with the same exit status as with them; a command that
needs Spark says in one line what is missing and how to install it, and exits 6 (never 1 or 7,
find-hanging's verdicts).

The environment without them is a virtual environment made in a second and offline: its
site-packages link to every entry of this interpreter's but pyspark's and py4j's, and a ``.pth``
puts this source tree on its path (so it runs the same code, C accelerator included). ``import
pyspark`` fails there as it does on a host where it was never installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forensics.cli.app import app
from forensics.exit_codes import EXIT_SPARK
from forensics.pipeline import engine, java

REPO = Path(__file__).resolve().parents[2]
DISK = "fixtures/example-disk"
SEGMENT = f"{DISK}/broker-1/orders-0/00000000000000000000.log"
NO_PYSPARK = "PySpark is not installed (install it with: pip install pyspark)"

# Commands that need no Spark: the same bytes and exit status with and without PySpark. The session
# runs whole-disk commands with KAFKA_FORENSICS_ENGINE=local (tests/conftest.py); "--engine auto" is
# the default that chooses by size (in-process on this disk).
SAME = [
    ["--version"], ["--help"], ["dump", SEGMENT], ["dump", "--deep-iteration", "--print-data-log", SEGMENT],
    ["scan", DISK], ["scan", DISK, "--engine", "auto", "--format", "json"],
    ["describe", DISK, "--transactional-id", "reporting-app"], ["find-hanging", DISK],
    ["find-hanging", DISK, "--engine", "auto", "--all", "--format", "json"], ["list", DISK, "--engine", "auto"],
    ["describe-producers", DISK, "--topic", "orders", "--partition", "0"],
]


def _left_out(name: str) -> bool:
    low = name.lower()
    return low.startswith(("pyspark", "py4j", "__editable__")) or low.endswith(".pth")


@pytest.fixture(scope="module")
def without_pyspark(tmp_path_factory) -> Path:
    """The python of an environment like this one, but without pyspark and py4j."""
    root = tmp_path_factory.mktemp("no-pyspark") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    python = root / "bin" / "python"
    target = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True, timeout=60).stdout.strip())
    for source in dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]):
        for entry in sorted(Path(source).iterdir()):
            if not _left_out(entry.name) and not (target / entry.name).exists():
                (target / entry.name).symlink_to(entry)
    (target / "kafka_forensics_source.pth").write_text(f"{REPO}\n", encoding="utf-8")
    probe = root / "probe.py"  # does it lack them, and have the rest?
    probe.write_text("import importlib.util, typer, forensics\n"
                     "print([importlib.util.find_spec(n) is None for n in ('pyspark', 'py4j', 'typer')])\n",
                     encoding="utf-8")
    done = subprocess.run([str(python), str(probe)], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.stdout == "[True, True, False]\n", done.stdout + done.stderr
    return python


def _run(python, args: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "forensics", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **env})


@pytest.mark.parametrize("args", SAME, ids=[" ".join(a[:1] + a[2:]).replace(SEGMENT, "SEGMENT") for a in SAME])
def test_commands_without_spark_are_the_same_without_pyspark(without_pyspark: Path, args: list[str]) -> None:
    usual, bare = _run(sys.executable, args), _run(without_pyspark, args)
    assert "Traceback" not in bare.stderr, bare.stderr
    assert (bare.returncode, bare.stdout, bare.stderr) == (usual.returncode, usual.stdout, usual.stderr)
    assert usual.returncode in (0, 1) and usual.stdout  # they really ran (find-hanging: 1, it hangs)


def _refused(done: subprocess.CompletedProcess, asked: str) -> None:
    assert done.returncode == EXIT_SPARK and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1, done.stderr  # one line
    assert done.stderr.startswith(f"kafka-forensics: {asked} needs Spark, which cannot run here: {NO_PYSPARK}"), \
        done.stderr


@pytest.mark.parametrize("args, asked", [
    (["find-hanging", DISK, "--engine", "auto", "--master", "local[2]"], "--master local[2]"),
    (["scan", DISK, "--engine", "auto", "--conf", "spark.ui.enabled=false"], "--conf"),
], ids=["master", "conf"])
def test_what_needs_spark_says_in_one_line_what_is_missing(without_pyspark: Path, args, asked) -> None:
    done = _run(without_pyspark, args)
    _refused(done, asked)
    assert done.stderr.rstrip("\n").endswith("; the same command without --master and --conf runs in this process")


@pytest.mark.spark  # the process guard counts these command lines as Spark runs; no JVM starts (no PySpark)
def test_engine_spark_and_export_without_pyspark(without_pyspark: Path, tmp_path: Path) -> None:
    _refused(_run(without_pyspark, ["find-hanging", DISK, "--engine", "spark"]), "--engine spark")
    _refused(_run(without_pyspark, ["scan", DISK], KAFKA_FORENSICS_ENGINE="spark"), "KAFKA_FORENSICS_ENGINE=spark")
    refused = _run(without_pyspark, ["export", DISK, "--out", str(tmp_path / "spark"), "--engine", "spark"])
    _refused(refused, "--engine spark")
    assert not (tmp_path / "spark").exists()
    done = _run(without_pyspark, ["export", DISK, "--out", str(tmp_path / "out")])  # auto: in-process, pyarrow
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert json.loads((tmp_path / "out" / "_export.json").read_text())["engine"] == "local"


def test_engine_spark_without_pyspark_is_one_line_and_exit_6(monkeypatch) -> None:
    """The same refusal in this process, PySpark made to look absent (the fast tier's view of the
    test above)."""
    monkeypatch.setattr(java, "pyspark_installed", lambda: False)
    monkeypatch.setattr(engine, "pyspark_installed", lambda: False)
    monkeypatch.setattr(java, "java_runtime", lambda: "/usr/bin/java")  # Java is there: only PySpark is missing
    r = CliRunner().invoke(app, ["find-hanging", str(REPO / DISK), "--engine", "spark", "--no-progress"])
    assert r.exit_code == EXIT_SPARK and r.stdout == ""
    assert r.stderr == (f"kafka-forensics: --engine spark needs Spark, which cannot run here: {NO_PYSPARK}; "
                        "--engine local runs in this process\n")


def test_without_pyspark_or_java_the_line_names_both(monkeypatch) -> None:
    monkeypatch.setattr(java, "pyspark_installed", lambda: False)
    monkeypatch.setattr(java, "java_runtime", lambda: None)
    ok, why = java.spark_available()
    assert not ok and why.startswith(NO_PYSPARK + ", and no Java runtime found (Spark needs Java 17")
