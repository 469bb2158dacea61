"""Can Spark run here: is PySpark installed, is there a Java runtime it can start? (``JAVA_HOME``
first, then ``PATH``; Spark 4 needs 17+.) A leaf module: the engine asks it before choosing Spark,
the Spark session before starting one. It looks for PySpark without importing it: pyspark and py4j
are imported only when a Spark session starts (:mod:`forensics.pipeline.spark_session`), so that
every other command runs the same, as fast, where they are not installed."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from functools import lru_cache

from forensics.errors import ForensicsError
from forensics.exit_codes import EXIT_SPARK

MIN_JAVA = 17  # Spark 4 runs on Java 17 and later
NO_PYSPARK = "PySpark is not installed (install it with: pip install pyspark)"


def _java_major(version_output: str) -> int | None:
    """``openjdk version "17.0.15"`` -> 17; ``java version "1.8.0_392"`` -> 8."""
    m = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if m is None:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


@lru_cache(maxsize=1)
def java_runtime() -> str | None:
    """The ``java`` Spark would start (``JAVA_HOME`` first, then ``PATH``), if it runs and is recent
    enough."""
    home = os.environ.get("JAVA_HOME")
    candidates = [os.path.join(home, "bin", "java")] if home else []
    found = shutil.which("java")
    if found:
        candidates.append(found)
    for java in candidates:
        try:
            done = subprocess.run([java, "-version"], capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        major = _java_major(done.stderr.decode("utf-8", "replace") + done.stdout.decode("utf-8", "replace"))
        if done.returncode == 0 and major is not None and major >= MIN_JAVA:
            return java
    return None


def pyspark_installed() -> bool:
    """Whether ``import pyspark`` would find it (and py4j, which it needs), without importing them."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in ("pyspark", "py4j"))
    except (ImportError, ValueError):  # a broken installation
        return False


def spark_available() -> tuple[bool, str]:
    """Whether ``--engine spark`` can run here, and why not (what is missing, and how to get it)."""
    no_java = f"no Java runtime found (Spark needs Java {MIN_JAVA} or later: install one or set JAVA_HOME)"
    if not pyspark_installed():
        return False, NO_PYSPARK + ("" if java_runtime() is not None else f", and {no_java}")
    if java_runtime() is None:
        return False, no_java
    return True, ""


class SparkMissing(ForensicsError):
    """Spark was asked for (``--engine spark``, ``--master``, ``--conf``) where PySpark is not installed."""

    exit_code = EXIT_SPARK
