"""A class-data-sharing archive for the driver JVM: Spark's start-up in about half the time.

Starting the embedded Spark loads thousands of classes from Spark's jars, most of the few seconds
a ``--engine spark`` run spends before its first task. The JVM can dump the classes a run loaded
into an archive (``-XX:ArchiveClassesAtExit``, JDK 13+) and map that archive at the next start
(``-XX:SharedArchiveFile``). The archive lives in the user's cache directory
(``$XDG_CACHE_HOME/kafka-forensics`` or ``~/.cache/kafka-forensics``), never near the evidence,
and is named after the Java runtime and PySpark version it was made with. The JVM validates an
archive before use and starts normally (slower) when it is missing, stale or damaged, so a bad
archive can cost time but never change a result. ``KAFKA_FORENSICS_SPARK_CDS=0`` turns this off.
"""

from __future__ import annotations

import hashlib
import os
from typing import Optional


def _cache_dir() -> Optional[str]:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "kafka-forensics")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK) else None


def _archive_name(java: str) -> str:
    import pyspark

    real = os.path.realpath(java)
    try:
        stamp = str(os.stat(real).st_mtime_ns)
    except OSError:
        stamp = ""
    key = "|".join((real, stamp, pyspark.__version__, os.path.dirname(pyspark.__file__)))
    return f"spark-driver-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"


def cds_option(java: Optional[str]) -> str:
    """The JVM option that uses the archive, or creates it at exit when there is none yet."""
    if java is None or os.environ.get("KAFKA_FORENSICS_SPARK_CDS", "1") == "0":
        return ""
    cache = _cache_dir()
    if cache is None:
        return ""
    archive = os.path.join(cache, _archive_name(java))
    if os.path.isfile(archive) and os.path.getsize(archive) > 0:
        return f"-XX:SharedArchiveFile={archive}"
    return f"-XX:ArchiveClassesAtExit={archive}"
