"""Is there a Java runtime Spark can start? (``JAVA_HOME`` first, then ``PATH``; Spark 4 needs 17+.)
A leaf module: the engine asks it before choosing Spark, the Spark session before starting one."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache
from typing import Optional, Tuple

MIN_JAVA = 17  # Spark 4 runs on Java 17 and later


def _java_major(version_output: str) -> Optional[int]:
    """``openjdk version "17.0.15"`` -> 17; ``java version "1.8.0_392"`` -> 8."""
    m = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if m is None:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


@lru_cache(maxsize=1)
def java_runtime() -> Optional[str]:
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


def spark_available() -> Tuple[bool, str]:
    """Whether ``--engine spark`` can run here, and why not."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False, "PySpark is not installed"
    if java_runtime() is None:
        return False, f"no Java runtime found (Spark needs Java {MIN_JAVA} or later: install one or set JAVA_HOME)"
    return True, ""
