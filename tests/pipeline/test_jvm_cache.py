"""The driver JVM's class-data-sharing archive: made once in the user's cache by one process,
published whole, checked before every use, bounded in number. (The JVM itself, a truncated
archive and concurrent first runs: tests/spark/test_jvm_cache_spark.py.)"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from forensics.pipeline import jvm_cache
from forensics.pipeline.jvm_cache import cds_option, plan, prune, publish, valid

ARCHIVE = jvm_cache.DYNAMIC_MAGIC[0] + b"\x00" * 4092  # what a JVM writes starts with the magic


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(jvm_cache.ENV, raising=False)
    return tmp_path / "kafka-forensics"


def _dump(p: jvm_cache.CdsPlan, data: bytes = ARCHIVE) -> None:
    """What the JVM does at exit with -XX:ArchiveClassesAtExit."""
    assert p.option == f"-XX:ArchiveClassesAtExit={p.temp}"
    Path(p.temp).write_bytes(data)


def test_first_run_dumps_to_its_own_file_which_is_published_whole(cache: Path) -> None:
    first = plan("/usr/bin/java")
    assert first.temp == f"{first.archive}.tmp-{os.getpid()}" and not first.using
    assert first.archive.startswith(str(cache) + os.sep)
    _dump(first)
    assert publish(first, 0)
    name = os.path.basename(first.archive)
    assert sorted(os.listdir(cache)) == [name, name + ".ok"]
    assert (cache / (os.path.basename(first.archive) + ".ok")).read_text() == f"{len(ARCHIVE)}\n"
    later = plan("/usr/bin/java")
    assert later == jvm_cache.CdsPlan(f"-XX:SharedArchiveFile={first.archive}", first.archive, using=True)
    other = plan(str(cache.parent / "another-java"))
    assert other.temp is not None and other.archive != first.archive


@pytest.mark.parametrize("status, data", [(1, ARCHIVE), (0, b""), (0, b"not an archive"), (None, ARCHIVE)])
def test_a_failed_or_foreign_dump_is_not_published(cache: Path, status, data) -> None:
    p = plan("/usr/bin/java")
    _dump(p, data)
    assert not publish(p, status)
    assert os.listdir(cache) == []  # the temporary file went too
    assert plan("/usr/bin/java").temp is not None


def test_a_truncated_or_replaced_archive_is_never_used_and_goes(cache: Path) -> None:
    p = plan("/usr/bin/java")
    _dump(p)
    publish(p, 0)
    with open(p.archive, "r+b") as fh:  # as a full disk or a killed copy leaves it
        fh.truncate(len(ARCHIVE) // 2)
    assert not valid(p.archive)
    again = plan("/usr/bin/java")
    assert not again.using and again.temp is not None
    assert not os.path.exists(p.archive) and not os.path.exists(p.archive + ".ok")
    Path(p.archive).write_bytes(ARCHIVE)  # an archive nobody published (no record): never used
    assert not valid(p.archive) and not plan("/usr/bin/java").using


def test_two_first_runs_never_write_the_same_path(cache: Path, monkeypatch) -> None:
    a = plan("/usr/bin/java")
    other = os.getppid()  # another live process, as a second run is
    monkeypatch.setattr(os, "getpid", lambda: other)
    b = plan("/usr/bin/java")
    assert a.archive == b.archive and a.temp != b.temp
    _dump(a)
    _dump(b, ARCHIVE + b"\x00" * 4096)  # two JVMs' archives differ in size
    assert publish(a, 0) and not publish(b, 0)  # the first whole one stays: never replaced under its record
    assert valid(a.archive) and Path(a.archive).read_bytes() == ARCHIVE
    assert Path(a.archive + ".ok").read_text() == f"{len(ARCHIVE)}\n" and not os.path.exists(b.temp)


def test_the_cache_keeps_the_most_recently_used_archives_and_no_dead_temporaries(cache: Path) -> None:
    cache.mkdir()
    names = [f"spark-driver-{i:016x}.jsa" for i in range(4)]
    for i, name in enumerate(names):
        (cache / name).write_bytes(ARCHIVE)
        (cache / (name + ".ok")).write_text(f"{len(ARCHIVE)}\n")
        os.utime(cache / name, (time.time() - 100 * (4 - i),) * 2)
    (cache / "spark-driver-dead.jsa.tmp-999999999").write_bytes(b"half")  # a run that died
    (cache / f"spark-driver-live.jsa.tmp-{os.getpid()}").write_bytes(b"busy")  # a run still going
    (cache / "notes.txt").write_text("not ours")
    removed = prune(str(cache))
    assert sorted(removed) == sorted(names[:2] + ["spark-driver-dead.jsa.tmp-999999999"])
    assert sorted(os.listdir(cache)) == sorted([n for name in names[2:] for n in (name, name + ".ok")]
                                               + [f"spark-driver-live.jsa.tmp-{os.getpid()}", "notes.txt"])


def test_off_without_java_when_disabled_or_unwritable(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cds_option(None) == ""
    monkeypatch.setenv(jvm_cache.ENV, "0")
    assert cds_option("/usr/bin/java") == ""
    monkeypatch.delenv(jvm_cache.ENV)
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert cds_option("/usr/bin/java") == ""
    assert not os.path.isdir(blocked / "kafka-forensics")
