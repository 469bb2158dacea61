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


# -- sparse files: holes are never read ------------------------------------------------------------


def run_measured(*args, cwd: Path, timeout: float) -> Tuple[int, str, float]:
    """(exit code, stderr, peak resident memory of the process in MiB); a hang fails the test."""
    import time

    env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_DEBUG"}
    err_path = cwd / "stderr.txt"
    with open(err_path, "wb") as err, open(os.devnull, "wb") as out:
        p = subprocess.Popen([sys.executable, "-m", "forensics", *map(str, args)], cwd=cwd, env=env, stdout=out,
                             stderr=err)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                p.wait()
                pytest.fail(f"{' '.join(map(str, args))} ran more than {timeout} s")
            time.sleep(0.05)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, err_path.read_text(errors="backslashreplace"), usage.ru_maxrss / 1024


@pytest.fixture()
def sparse_disk(disk: Path) -> Path:
    """The example disk with a 100 GiB segment that is one hole (``truncate -s 100G``)."""
    segment = disk / "orders-0" / "00000000000000000099.log"
    with open(segment, "wb") as fh:
        fh.truncate(100 << 30)
    if os.stat(segment).st_blocks:
        pytest.skip("this file system does not create sparse files")
    return segment


def test_a_100_gib_sparse_segment_costs_seconds_and_flat_memory(sparse_disk: Path, tmp_path: Path) -> None:
    disk = sparse_disk.parent.parent
    size = 100 << 30
    code, err, rss = run_measured("dump", sparse_disk, cwd=tmp_path, timeout=60)
    assert code == 0 and rss < 300, (err, rss)
    assert f"warning: zero_fill: {sparse_disk}, bytes 0-2147483647: 2147483647 zero bytes at the end of the " \
           "segment (preallocation or crash)" in err  # dump reads --max-bytes (2 GiB - 1) by default
    manifest = tmp_path / "m.json"
    code, err, rss = run_measured("find-hanging", disk, *LOCAL, "--manifest", manifest, cwd=tmp_path, timeout=60)
    assert code == 1 and rss < 300, (err, rss)
    entry = [f for f in json.loads(manifest.read_text())["files"] if f["path"] == str(sparse_disk)]
    assert [(e["size"], e["sha256"], len(e["sparseSha256"])) for e in entry] == [(size, None, 64)]
    code, err, rss = run_measured("scan", disk, "--format", "json", *LOCAL, cwd=tmp_path, timeout=60)
    assert code == 0 and rss < 300, (err, rss)
    code, err, rss = run_measured("verify-manifest", manifest, cwd=tmp_path, timeout=60)
    assert code == 0 and rss < 300, (err, rss)


def test_scan_reports_the_hole_as_the_dense_zero_tail(sparse_disk: Path, tmp_path: Path) -> None:
    code, out, err = run("scan", sparse_disk.parent.parent, "--format", "json", *LOCAL, cwd=tmp_path)
    assert code == 0, err
    found = [(f["kind"], f.get("position"), f.get("end_position"), f["message"])
             for f in findings_in(json.loads(out)) if f.get("path") == str(sparse_disk)]
    assert found == [("zero_fill", 0, 100 << 30, f"{100 << 30} zero bytes at the end of the segment (preallocation "
                                                  "or crash)"),
                     ("missing_index", None, None, "segment has no .index / .timeindex (the broker rebuilds it)")]


# -- symlinks: nothing outside the evidence is read ----------------------------------------------------


def outside_links(disk: Path) -> dict:
    """A partition dir linked to /proc (reading /proc/kmsg would hang and eat the host's kernel log),
    one linked to /etc, a segment linked to /etc/passwd, and a partition dir linked to a copy beside
    the log dir (outside the input): none may be followed."""
    links = {disk / "evil-0": "/proc", disk / "etc-0": "/etc",
             disk / "orders-0" / "00000000000000000099.log": "/etc/passwd",
             disk / "payments-1": "../beside/payments-0"}
    shutil.copytree(disk / "payments-0", disk.parent / "beside" / "payments-0")
    for link, target in links.items():
        os.symlink(target, link)
    return links


def outside_line(link: Path, target: str) -> str:
    return f"warning: outside_evidence: {link}: symbolic link to {target}, outside the evidence given: not followed"


def test_symlinks_leaving_the_evidence_are_findings_not_followed(disk: Path, tmp_path: Path) -> None:
    links = outside_links(disk)
    manifest = tmp_path / "m.json"
    code, out, err = run("find-hanging", disk, *LOCAL, "--manifest", manifest, cwd=tmp_path, timeout=60)
    assert code == 1, err
    for link, target in links.items():
        assert outside_line(link, target) in err.splitlines()
    code, out, err = run("scan", disk, "--format", "json", *LOCAL, cwd=tmp_path)
    assert code == 0, err
    partitions = [p["path"] for d in json.loads(out)["logDirs"] for p in d["partitions"]]
    assert partitions and not {str(link) for link in links} & set(partitions)
    assert all(os.path.realpath(p).startswith(str(disk) + os.sep) for p in partitions)
    # the manifest hashed nothing outside the evidence
    for f in json.loads(manifest.read_text())["files"]:
        assert os.path.realpath(f["absolutePath"]).startswith(str(disk) + os.sep), f


def test_a_symlink_given_as_input_is_followed(disk: Path, tmp_path: Path) -> None:
    link = tmp_path / "case"
    os.symlink(disk, link)
    code, out, err = run("list", link, *LOCAL, cwd=tmp_path)
    assert code == 0 and "reporting-app" in out, err
    code, _, err = run("list", disk, *LOCAL, cwd=tmp_path)
    assert "outside_evidence" not in err
