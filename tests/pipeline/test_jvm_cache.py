"""The driver JVM's class-data-sharing archive: made once in the user's cache, then reused."""

from __future__ import annotations

import os
from pathlib import Path

from forensics.pipeline.jvm_cache import cds_option


def test_first_run_writes_the_archive_later_runs_map_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("KAFKA_FORENSICS_SPARK_CDS", raising=False)
    first = cds_option("/usr/bin/java")
    assert first.startswith("-XX:ArchiveClassesAtExit=" + str(tmp_path / "kafka-forensics"))
    archive = Path(first.split("=", 1)[1])
    archive.write_bytes(b"x")
    assert cds_option("/usr/bin/java") == f"-XX:SharedArchiveFile={archive}"
    other = cds_option(str(tmp_path / "another-java"))
    assert other.startswith("-XX:ArchiveClassesAtExit=") and other.split("=", 1)[1] != str(archive)


def test_off_without_java_when_disabled_or_unwritable(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cds_option(None) == ""
    monkeypatch.setenv("KAFKA_FORENSICS_SPARK_CDS", "0")
    assert cds_option("/usr/bin/java") == ""
    monkeypatch.delenv("KAFKA_FORENSICS_SPARK_CDS")
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert cds_option("/usr/bin/java") == ""
    assert not os.path.isdir(blocked / "kafka-forensics")
