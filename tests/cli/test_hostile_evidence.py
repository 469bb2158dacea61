"""Evidence that attacks the investigator's machine (issue 15, items 5-10): nothing outside the
evidence is read, no special file is opened blocking, sparse holes are never read, names that are
not UTF-8 are carried, the manifest proves the whole tree, and no output lands inside the evidence.

Every attack runs as a real process with a time limit, so a hang fails the test instead of
stalling the suite, on a copy of ``fixtures/example-disk`` or ``fixtures/real``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.proc_status import status_kib

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk" / "broker-1"
REAL = REPO / "fixtures" / "real" / "kraft-tv2" / "disk"
SEG = "00000000000000000000"
LOCAL = ("--engine", "local", "--no-progress")


def run(*args, cwd: Path, timeout: float = 60) -> tuple[int, str, str]:
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


def in_process(*args) -> tuple[int, str, str]:
    """The tool through typer's CliRunner, for commands that must refuse before doing anything."""
    from typer.testing import CliRunner

    import forensics.cli.export_cmd  # noqa: F401  (registers the commands)
    import forensics.cli.report_cmd  # noqa: F401
    import forensics.cli.scan_cmd  # noqa: F401
    from forensics.cli.app import app

    result = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


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


def run_measured(*args, cwd: Path, timeout: float) -> tuple[int, str, float]:
    """(exit code, stderr, peak resident memory of the process in MiB); a hang fails the test."""
    import time

    env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_DEBUG"}
    err_path = cwd / "stderr.txt"
    with open(err_path, "wb") as err, open(os.devnull, "wb") as out:
        p = subprocess.Popen([sys.executable, "-m", "forensics", *map(str, args)], cwd=cwd, env=env, stdout=out,
                             stderr=err)
        deadline = time.monotonic() + timeout
        peak_kib = 0
        while True:
            peak_kib = max(peak_kib, status_kib(p.pid, "VmHWM"))
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                p.wait()
                pytest.fail(f"{' '.join(map(str, args))} ran more than {timeout} s")
            time.sleep(0.01)
    p.returncode = os.waitstatus_to_exitcode(status)
    # Linux carries the parent's high-water mark into a child's ru_maxrss across fork and exec: late in a
    # long test session (a pytest of 300 MiB) that is the parent's size, not the command's. The process's
    # own VmHWM, sampled while it runs, is its peak; ru_maxrss only where /proc does not tell.
    return p.returncode, err_path.read_text(errors="backslashreplace"), (peak_kib or usage.ru_maxrss) / 1024



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
    # exit 7: zeros where orders-0's next segment should be leave its open transaction to a person, as the
    # same zeros written densely do
    assert code == 7 and rss < 300, (err, rss)
    entry = [f for f in json.loads(manifest.read_text())["entries"] if f["path"] == str(sparse_disk)]
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
    # the manifest records the links as links and hashed nothing outside the evidence
    entries = json.loads(manifest.read_text())["entries"]
    assert {e["absolutePath"]: e.get("target") for e in entries if e["type"] == "symlink"} == {
        str(link): target for link, target in links.items()}
    for e in entries:
        assert e["absolutePath"] == str(disk) or e["absolutePath"].startswith(str(disk) + os.sep), e
        if e["type"] == "file":
            assert os.path.realpath(e["absolutePath"]).startswith(str(disk) + os.sep), e


def test_a_symlink_given_as_input_is_followed(disk: Path, tmp_path: Path) -> None:
    link = tmp_path / "case"
    os.symlink(disk, link)
    code, out, err = run("list", link, *LOCAL, cwd=tmp_path)
    assert code == 0 and "reporting-app" in out, err
    code, _, err = run("list", disk, *LOCAL, cwd=tmp_path)
    assert "outside_evidence" not in err


# -- the manifest proves the whole tree ----------------------------------------------------------------


def manifest_of(disk: Path, tmp_path: Path) -> Path:
    target = tmp_path / "m.json"
    code, _, err = run("scan", disk, *LOCAL, "--manifest", target, cwd=tmp_path)
    assert code == 0, err
    return target


def verify(manifest: Path, tmp_path: Path, *extra) -> tuple[int, list, str]:
    code, out, err = run("verify-manifest", manifest, *extra, cwd=tmp_path, timeout=60)
    return code, [line for line in out.splitlines() if not line.startswith("OK ")], err


def test_verify_names_every_added_removed_renamed_and_retyped_entry(disk: Path, tmp_path: Path) -> None:
    manifest = manifest_of(disk, tmp_path)
    digest = hashlib.sha256(manifest.read_bytes()).hexdigest()
    entries = len(json.loads(manifest.read_text())["entries"])
    segment = disk / "orders-0" / f"{SEG}.log"
    added = disk / "orders-0" / "00000000000000000099.log"  # an added segment changes the analysis
    shutil.copy(segment, added)
    (disk / "orders-7").mkdir()  # a partition dir
    (disk / "notes.txt").write_bytes(b"x")  # a root file
    index = disk / "orders-1" / f"{SEG}.timeindex"
    index.rename(disk / "orders-1" / "old.timeindex")
    metadata = disk / "payments-0" / "partition.metadata"
    metadata.unlink()
    os.mkfifo(metadata)  # opening it would block
    code, lines, _ = verify(manifest, tmp_path)
    assert code == 1
    sha = hashlib.sha256(segment.read_bytes()).hexdigest()
    assert lines == [
        f"DIFFERENT: 5 difference(s); manifest sha256 {digest}: {entries} entries recorded",  # 3 added: not counted
        f"ADDED         {disk / 'notes.txt'}  a file the manifest does not list (sha256 "
        f"{hashlib.sha256(b'x').hexdigest()})",
        f"ADDED         {added}  a file the manifest does not list (sha256 {sha})",
        f"RENAMED       {disk / 'orders-1' / 'old.timeindex'}  was {index} (same sha256 "
        f"{hashlib.sha256((disk / 'orders-1' / 'old.timeindex').read_bytes()).hexdigest()})",
        f"ADDED         {disk / 'orders-7'}  a directory the manifest does not list",
        f"TYPE-CHANGED  {metadata}  was a file, now a FIFO: not opened",
    ]


def test_an_edited_manifest_fails_its_own_digest_and_summary(disk: Path, tmp_path: Path) -> None:
    manifest = manifest_of(disk, tmp_path)
    doc = json.loads(manifest.read_text())
    gone = disk / "orders-0" / f"{SEG}.index"
    size = gone.stat().st_size
    doc["entries"] = [e for e in doc["entries"] if e["absolutePath"] != str(gone)]  # drop an entry ...
    gone.unlink()  # ... and its file: this verified clean before
    manifest.write_text(json.dumps(doc, indent=2))
    code, lines, _ = verify(manifest, tmp_path)
    assert code == 1
    assert lines[0].startswith("DIFFERENT: ")  # the verdict first, then only the differences
    assert lines[1].startswith(f"MANIFEST  {manifest}  its content does not match its own digest (computed ")
    assert lines[1].endswith(f"recorded {doc['manifestDigest']['value']}): it was edited after it was written")
    assert lines[2:4] == [
        f"MANIFEST  {manifest}  summary.files is {doc['summary']['files']} but the entries listed make "
        f"{doc['summary']['files'] - 1}",
        f"MANIFEST  {manifest}  summary.bytes is {doc['summary']['bytes']} but the entries listed make "
        f"{doc['summary']['bytes'] - size}",
    ]


def test_verify_never_reads_outside_the_manifest_inputs(disk: Path, tmp_path: Path) -> None:
    manifest = manifest_of(disk, tmp_path)
    doc = json.loads(manifest.read_text())
    doc["entries"].append({"path": "/proc/kmsg", "absolutePath": "/proc/kmsg", "kind": "partition file",
                           "type": "file", "size": 0, "mtimeNs": 0, "sha256": "0" * 64})
    manifest.write_text(json.dumps(doc))
    code, lines, _ = verify(manifest, tmp_path)  # reading /proc/kmsg would block (and eat the kernel log)
    assert code == 1 and "OUTSIDE   /proc/kmsg  not under the manifest's inputs: not read" in lines
    doc["inputs"] = ["/proc"]  # a forged input: nothing on a kernel file system is entered
    manifest.write_text(json.dumps(doc))
    code, lines, _ = verify(manifest, tmp_path)
    assert code == 1 and any(line.startswith("MISSING") and "/proc/kmsg" in line for line in lines)


def test_names_that_are_not_utf8_are_carried_and_shown_escaped(disk: Path, tmp_path: Path) -> None:
    bad_dir = os.fsdecode(bytes(disk) + b"/caf\xe9-0")
    bad_file = os.fsdecode(bytes(disk) + b"/orders-0/\xff\x1b[2J.txt")
    os.mkdir(bad_dir)
    Path(bad_file).write_bytes(b"y")
    manifest = manifest_of(disk, tmp_path)
    raw = manifest.read_bytes()
    raw.decode("utf-8")  # valid UTF-8 JSON
    by_bytes = {os.fsencode(os.fsdecode(__import__("base64").b64decode(e["absolutePathBytes"]))): e
                for e in json.loads(raw)["entries"] if "absolutePathBytes" in e}
    assert set(by_bytes) == {os.fsencode(bad_dir), os.fsencode(bad_file)}
    assert by_bytes[os.fsencode(bad_file)]["absolutePath"] == f"{disk}/orders-0/\\xff\x1b[2J.txt"
    code, lines, _ = verify(manifest, tmp_path)
    assert code == 0 and lines[0].startswith("OK: all match; manifest sha256 ") and len(lines) == 1
    os.rename(bad_file, disk / "orders-0" / "y.txt")
    code, lines, _ = verify(manifest, tmp_path)
    assert code == 1 and lines[1] == (f"RENAMED  {disk}/orders-0/y.txt  was {disk}/orders-0/\\xff\\x1b[2J.txt "
                                      f"(same sha256 {hashlib.sha256(b'y').hexdigest()})")


# -- no output of ours lands in the evidence ------------------------------------------------------------


def tree_state(root: Path) -> list:
    return sorted((str(p), p.stat().st_mtime_ns) for p in root.rglob("*"))


@pytest.mark.parametrize("where, why", [
    ("orders-0/m.json", "{disk}/orders-0, the directory holding {given}"),  # beside the segment given
    ("orders-1/m.json", "{disk}, the log dir holding {given}"),  # a sibling partition
    ("m.json", "{disk}, the log dir holding {given}"),  # the log dir itself
])
def test_no_manifest_lands_near_a_file_given(disk: Path, tmp_path: Path, where: str, why: str) -> None:
    given = disk / "orders-0" / f"{SEG}.log"
    before = tree_state(disk)
    target = disk / where
    code, out, err = run("dump", given, "--manifest", target, cwd=tmp_path)
    assert (code, out) == (2, "")
    assert err == (f"kafka-forensics: --manifest {target}: lies inside the evidence "
                   f"({why.format(disk=disk, given=given)}); write it elsewhere\n")
    assert tree_state(disk) == before


@pytest.mark.parametrize("command", [
    ("scan", "--manifest"), ("report", "--out"), ("export", "--out")])
def test_no_output_lands_beside_a_partition_dir_given(disk: Path, tmp_path: Path, command) -> None:
    name, option = command
    given = disk / "orders-0"
    target = disk / "payments-0" / "out"
    before = tree_state(disk)
    code, out, err = in_process(name, given, option, target, "--engine", "local")
    assert (code, out) == (2, "")
    assert err == (f"kafka-forensics: {option} {target}: lies inside the evidence ({disk}, the log dir holding "
                   f"{given}); write it elsewhere\n")
    assert tree_state(disk) == before


def test_an_output_beside_the_evidence_is_fine(disk: Path, tmp_path: Path) -> None:
    target = disk.parent / "m.json"  # beside the log dir, not in it
    code, _, err = run("dump", disk / "orders-0" / f"{SEG}.log", "--manifest", target, cwd=tmp_path)
    assert code == 0 and target.exists(), err


def test_every_attack_at_once_on_a_real_kafka_disk(tmp_path: Path) -> None:
    """A copy of a real Kafka 4.1 log dir with a partition dir linked to /proc, a FIFO index, a 100 GiB
    sparse segment and a directory named with a byte that is not UTF-8: find-hanging with a manifest
    finishes in seconds, names each, and the manifest verifies."""
    disk = tmp_path / "real"
    shutil.copytree(REAL, disk)
    os.symlink("/proc", disk / "evil-0")
    os.mkfifo(disk / "d-txn-ongoing-0" / "00000000000000000099.index")
    sparse = disk / "b-txn-aborts-0" / "00000000000000000099.log"
    with open(sparse, "wb") as fh:
        fh.truncate(100 << 30)
    os.mkdir(os.fsdecode(bytes(disk) + b"/caf\xe9-0"))
    manifest = tmp_path / "m.json"
    code, _, err = run("find-hanging", disk, *LOCAL, "--manifest", manifest, cwd=tmp_path, timeout=120)
    assert code in (0, 1), err
    lines = err.splitlines()
    assert outside_line(disk / "evil-0", "/proc") in lines
    assert (f"error: unreadable_file: {disk}/d-txn-ongoing-0/00000000000000000099.index: a FIFO (named pipe), "
            "not a regular file: not opened") in lines
    assert any(line.startswith(f"warning: zero_fill: {sparse}, bytes 0-{100 << 30}: ") for line in lines), err
    code, lines, err = verify(manifest, tmp_path)
    assert code == 0 and lines[0].startswith("OK: all match; manifest sha256 ") and len(lines) == 1, lines
