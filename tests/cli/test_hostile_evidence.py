"""Evidence that attacks the investigator's machine (issue 15, items 5-10): nothing outside the
evidence is read, no special file is opened blocking, sparse holes are never read, names that are
not UTF-8 are carried, the manifest proves the whole tree, and no output lands inside the evidence.

Every attack runs as a real process with a time limit, so a hang fails the test instead of
stalling the suite, on a copy of ``fixtures/example-disk`` or ``fixtures/real``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk" / "broker-1"
REAL = REPO / "fixtures" / "real" / "kraft-tv2" / "disk"
SEG = "00000000000000000000"
LOCAL = ("--engine", "local", "--no-progress")


def run(*args, cwd: Path, timeout: float = 60) -> Tuple[int, str, str]:
    """The tool as a real process; a hang past ``timeout`` seconds fails the test."""
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_DEBUG"}
    try:
        p = subprocess.run([sys.executable, "-m", "forensics", *map(str, args)], cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=timeout, errors="backslashreplace")
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung: {' '.join(map(str, args))} ran more than {timeout} s")
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    return p.returncode, p.stdout, p.stderr


def findings_in(report: Any) -> Iterator[dict]:
    """Every finding object anywhere in a JSON report (scan nests them per log dir and partition)."""
    if isinstance(report, dict):
        if "kind" in report and "severity" in report:
            yield report
        for value in report.values():
            yield from findings_in(value)
    elif isinstance(report, list):
        for value in report:
            yield from findings_in(value)


@pytest.fixture()
def disk(tmp_path: Path) -> Path:
    copy = tmp_path / "evidence" / "broker-1"
    shutil.copytree(EXAMPLE, copy)
    return copy


# -- special files: never opened blocking ------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".log", ".index", ".snapshot"])
def test_dump_refuses_a_fifo_at_once(disk: Path, tmp_path: Path, suffix: str) -> None:
    fifo = disk / "orders-0" / f"00000000000000000099{suffix}"
    os.mkfifo(fifo)
    code, out, err = run("dump", fifo, cwd=tmp_path, timeout=30)
    assert (code, out) == (3, "")
    assert err == f"kafka-forensics: {fifo}: a FIFO (named pipe), not a regular file: not read\n"


def test_a_fifo_named_like_a_segment_is_a_finding(disk: Path, tmp_path: Path) -> None:
    fifo = disk / "orders-0" / "00000000000000000099.log"
    os.mkfifo(fifo)
    code, out, err = run("scan", disk, "--format", "json", *LOCAL, cwd=tmp_path)
    assert code == 0, err
    found = [f for f in findings_in(json.loads(out)) if f.get("path") == str(fifo)]
    assert [(f["kind"], f["message"]) for f in found] == [
        ("unreadable_file", "a FIFO (named pipe), not a regular file: not opened")]
