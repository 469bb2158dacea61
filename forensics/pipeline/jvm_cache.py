"""A class-data-sharing archive for the driver JVM: Spark's start-up in about half the time.

Starting the embedded Spark loads thousands of classes from Spark's jars, most of the few seconds
a ``--engine spark`` run spends before its first task. The JVM can dump the classes a run loaded
into an archive (``-XX:ArchiveClassesAtExit``, JDK 13+) and map that archive at the next start
(``-XX:SharedArchiveFile``). The archive lives in the user's cache directory
(``$XDG_CACHE_HOME/kafka-forensics`` or ``~/.cache/kafka-forensics``), never near the evidence,
and is named after the Java runtime and PySpark version it was made with.
``KAFKA_FORENSICS_SPARK_CDS=0`` turns this off. The cache is treated as untrusted:

- **Validated before use.** An archive is used only beside its record (``<archive>.ok``: the
  size it was published with) and only if its size still matches and it starts with the JVM's
  dynamic-archive magic: a truncated archive (which the JVM maps and dies on with SIGBUS) is never
  handed to the JVM. Whatever else is wrong with it, a JVM that fails to start while mapping it
  makes the session discard it, say so in one line and start again without it
  (:mod:`forensics.pipeline.spark_session`).
- **Written by one process, atomically.** A run that finds no archive lets its JVM dump to a
  temporary file of its own (``<archive>.tmp-<pid>``); once that JVM has exited (the session waits
  for it: no JVM outlives the command) the file is checked and linked into place unless another
  run's archive is already there (the first whole one wins), then its record written. Two first
  runs never write the same path; a reader never sees half an archive.
- **Bounded.** At most :data:`MAX_ARCHIVES` archives are kept (the most recently used); the
  temporary files of runs that died are removed.
"""

from __future__ import annotations

import hashlib
import os
from forensics.dataclass_fast import dataclass

ENV = "KAFKA_FORENSICS_SPARK_CDS"
MAX_ARCHIVES = 2  # one per Java runtime and PySpark install; each is 110-170 MB
PREFIX, SUFFIX = "spark-driver-", ".jsa"
RECORD = ".ok"  # beside the archive: the size it was published with
_TMP = ".tmp-"
# the first four bytes of a JDK dynamic archive (CDS_DYNAMIC_ARCHIVE_MAGIC 0xf00baba8, in the
# machine's byte order)
DYNAMIC_MAGIC = ((0xF00BABA8).to_bytes(4, "little"), (0xF00BABA8).to_bytes(4, "big"))


@dataclass(frozen=True)
class CdsPlan:
    """What this run's driver JVM does with the archive: ``option`` (the JVM option, ``""`` for
    none); ``archive`` (its path); ``using`` (it maps the archive) or ``temp`` (the file it dumps
    to at exit, to be published)."""

    option: str = ""
    archive: str | None = None
    using: bool = False
    temp: str | None = None


OFF = CdsPlan()


def _cache_dir() -> str | None:
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
    return f"{PREFIX}{hashlib.sha256(key.encode()).hexdigest()[:16]}{SUFFIX}"


def plan(java: str | None) -> CdsPlan:
    """Map the archive when there is a valid one, else dump one at exit to a file of our own."""
    if java is None or os.environ.get(ENV, "1") == "0":
        return OFF
    cache = _cache_dir()
    if cache is None:
        return OFF
    archive = os.path.join(cache, _archive_name(java))
    if valid(archive):
        try:
            os.utime(archive)  # most recently used: the last one pruning removes
        except OSError:
            pass
        return CdsPlan(f"-XX:SharedArchiveFile={archive}", archive, using=True)
    discard(archive)  # a leftover without its record, or one that no longer matches it
    temp = f"{archive}{_TMP}{os.getpid()}"
    return CdsPlan(f"-XX:ArchiveClassesAtExit={temp}", archive, temp=temp)


def cds_option(java: str | None) -> str:
    """The JVM option of :func:`plan` alone."""
    return plan(java).option


def valid(archive: str) -> bool:
    """Published by us (its record names its size), still that size, and a dynamic archive."""
    try:
        with open(archive + RECORD, "rb") as fh:
            recorded = int(fh.read(64).decode("ascii").strip())
        with open(archive, "rb") as fh:
            return os.fstat(fh.fileno()).st_size == recorded and fh.read(4) in DYNAMIC_MAGIC
    except (OSError, ValueError, UnicodeDecodeError):
        return False


def publish(p: CdsPlan, jvm_status: int | None) -> bool:
    """After the JVM that dumped ``p.temp`` has exited: move the archive into place if it is
    whole (the JVM exited normally, the file is a dynamic archive) and no other run published
    first, write its record and prune the cache. Whatever fails, the temporary file goes."""
    if p.temp is None or p.archive is None:
        return False
    try:
        with open(p.temp, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            whole = jvm_status == 0 and fh.read(4) in DYNAMIC_MAGIC
        if whole:
            # a link never replaces: when two first runs end together, the first whole archive stays and
            # its record is the only one written (a replace let the second archive land under the
            # first one's record)
            os.link(p.temp, p.archive)
            _remove(p.temp)
            _write_record(p.archive, size)
            prune(os.path.dirname(p.archive))
            return True
    except OSError:
        pass
    _remove(p.temp)
    return False


def _write_record(archive: str, size: int) -> None:
    tmp = f"{archive}{RECORD}{_TMP}{os.getpid()}"
    with open(tmp, "w", encoding="ascii") as fh:
        fh.write(f"{size}\n")
    os.replace(tmp, archive + RECORD)


def discard(archive: str) -> None:
    """Remove an archive and its record (the record first: a half-removed pair is never valid)."""
    _remove(archive + RECORD)
    _remove(archive)


def prune(cache: str, keep: int = MAX_ARCHIVES) -> list[str]:
    """Keep the ``keep`` most recently used archives; remove the others and the temporary files
    of runs no longer alive. Returns what was removed."""
    try:
        names = os.listdir(cache)
    except OSError:
        return []
    removed = []
    for name in names:
        if name.startswith(PREFIX) and _TMP in name and not _alive(name.rsplit(_TMP, 1)[1]):
            _remove(os.path.join(cache, name))
            removed.append(name)
    archives = [os.path.join(cache, n) for n in names if n.startswith(PREFIX) and n.endswith(SUFFIX)]
    archives.sort(key=_mtime, reverse=True)
    for old in archives[keep:]:
        discard(old)
        removed.append(os.path.basename(old))
    return removed


def _alive(pid_text: str) -> bool:
    try:
        os.kill(int(pid_text), 0)
    except ValueError:
        return False
    except ProcessLookupError:
        return False
    except OSError:  # exists, not ours to signal
        return True
    return True


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


__all__ = ["CdsPlan", "ENV", "MAX_ARCHIVES", "OFF", "cds_option", "discard", "plan", "prune", "publish", "valid"]
