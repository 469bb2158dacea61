"""The evidence manifest (``--manifest FILE``) and ``verify-manifest``.

Every command that reads disks writes the manifest; the digests in it are checked here against
hashlib run on the files directly, the set of files against a walk of the example disk's log dirs,
and the digest that JSON reports embed against the manifest file's own bytes. verify-manifest is
run on untouched evidence (exit 0), on a copy with one byte changed, one file gone and one file with
a new modification time (exit 1, each named), and on evidence moved elsewhere (``--base``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest

import forensics.cli.dump_cmd  # noqa: F401  (registers the commands on the app)
from tests.machine_output import document, rows_of
import forensics.cli.evidence  # noqa: F401
import forensics.cli.hanging_cmd  # noqa: F401
import forensics.cli.scan_cmd  # noqa: F401
import forensics.cli.state_cmd  # noqa: F401
from tests.cli.test_cli import (
    run_cli as invoke,  # (args, cwd) -> (exit code, stdout, stderr)
)

REPO = Path(__file__).resolve().parents[2]
DISK = REPO / "fixtures" / "example-disk"
SEGMENT = "broker-1/orders-0/00000000000000000000.log"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (and ``root``), by absolute path: "dir" or "file" (os.walk)."""
    out = {str(root): "dir"}
    for top, dirs, files in os.walk(root):
        out.update({os.path.join(top, d): "dir" for d in dirs})
        out.update({os.path.join(top, f): "file" for f in files})
    return out


def log_dir_files(root: Path) -> dict[str, Path]:
    """Every regular file under ``root``, by absolute path."""
    return {p: Path(p) for p, kind in tree(root).items() if kind == "file"}


@pytest.fixture()
def disk(tmp_path: Path) -> Path:
    copy = tmp_path / "evidence"
    shutil.copytree(DISK, copy)
    return copy


COMMANDS = {
    "scan": ["scan", "{disk}", "--format", "json"],
    "find-hanging": ["find-hanging", "{disk}", "--format", "json"],
    "abort-commands": ["abort-commands", "{disk}", "--bootstrap-server", "b:9092"],
    "list": ["list", "{disk}", "--format", "json"],
    "describe": ["describe", "{disk}", "--transactional-id", "reporting-app", "--format", "json"],
    "describe-producers": ["describe-producers", "{disk}", "--topic", "orders", "--partition", "0", "--format", "json"],
    "dump": ["dump", "{disk}/" + SEGMENT, "--format", "json"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_disk_command_writes_a_manifest_that_verifies(command: str, disk: Path, tmp_path: Path) -> None:
    target = tmp_path / "manifest.json"
    args = [a.format(disk=disk) for a in COMMANDS[command]] + ["--manifest", str(target)]
    code, out, err = invoke(args, tmp_path)
    assert code in (0, 1), err
    data = target.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    m = json.loads(data)
    assert m["manifestVersion"] == 2 and m["run"]["command"] == command
    assert m["run"]["commandLine"][0] == "kafka-forensics"
    assert m["run"]["startedMs"] <= m["run"]["endedMs"]
    assert f"manifest: {target} (sha256 {digest}" in err
    # each digest is the file's own, and size and mtime are the file's
    files = [f for f in m["entries"] if f["type"] == "file"]
    for f in files:
        p = Path(f["absolutePath"])
        assert f["sha256"] == sha256(p), p
        assert (f["size"], f["mtimeNs"]) == (p.stat().st_size, p.stat().st_mtime_ns), p
    recorded = {f["absolutePath"]: f["type"] for f in m["entries"]}
    if command == "dump":
        assert recorded == {str(disk / SEGMENT): "file"}
        assert json.loads(out.splitlines()[-1]) == {"type": "manifest", "path": str(target), "sha256": digest}
    else:  # the whole tree under the input: every file and directory, with its type
        assert recorded == tree(disk)
        assert m["summary"]["files"] == len(files) and m["summary"]["bytes"] == sum(
            f.stat().st_size for f in log_dir_files(disk).values())
        assert m["summary"]["directories"] == sum(1 for t in recorded.values() if t == "dir")
        if command == "abort-commands":
            assert f"# evidence manifest: {target} (sha256 {digest})" in out
        else:
            assert json.loads(out)["manifest"] == {"path": str(target), "sha256": digest}
    code, out, err = invoke(["verify-manifest", str(target)], tmp_path)
    assert code == 0, out + err
    assert out.splitlines() == [f"OK: all match; manifest sha256 {digest}: {len(recorded)} "
                                  f"{'entry' if len(recorded) == 1 else 'entries'} recorded"]
    code, out, err = invoke(["verify-manifest", str(target), "--verbose"], tmp_path)
    assert code == 0 and len(out.splitlines()) == len(recorded) + 1
    assert all(line.startswith("OK ") for line in out.splitlines()[1:])


def test_as_of_and_engine_are_recorded(disk: Path, tmp_path: Path) -> None:
    target = tmp_path / "m.json"
    code, _, err = invoke(["find-hanging", str(disk), "--as-of", "2026-11-20T23:30:00Z", "--manifest", str(target)],
                          tmp_path)
    assert code == 1
    m = json.loads(target.read_text())
    assert m["asOf"] == {"timeMs": 1795217400000, "time": "2026-11-20T23:30:00.000Z", "source": "--as-of"}
    assert m["run"]["engine"] == "local"
    assert m["inputs"] == [str(disk)]


def test_the_command_line_is_recorded_as_given(disk: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    target = tmp_path / "m.json"
    args = ["list", "evidence", "--engine", "local", "--format", "csv", "--manifest", "m.json"]
    proc = subprocess.run([sys.executable, "-m", "forensics", *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    m = json.loads(target.read_text())
    assert m["run"]["commandLine"] == ["kafka-forensics", *args]
    assert m["run"]["workingDirectory"] == str(tmp_path)
    assert {f["path"] for f in m["entries"]} == {os.path.relpath(p, tmp_path) for p in tree(disk)}


def test_without_manifest_json_reports_keep_their_shape(disk: Path, tmp_path: Path) -> None:
    code, out, _ = invoke(["find-hanging", str(disk), "--format", "json"], tmp_path)
    assert code == 1 and "manifest" not in document(out) and isinstance(rows_of(out), list)
    code, out, _ = invoke(["scan", str(disk), "--format", "json"], tmp_path)
    assert code == 0 and "manifest" not in json.loads(out)


def test_verify_reports_every_difference(disk: Path, tmp_path: Path) -> None:
    target = tmp_path / "m.json"
    assert invoke(["scan", str(disk), "--manifest", str(target)], tmp_path)[0] == 0
    segment = disk / SEGMENT
    raw = bytearray(segment.read_bytes())
    raw[100] ^= 0x01
    st = segment.stat()
    segment.write_bytes(bytes(raw))
    os.utime(segment, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and time: only the hash tells
    gone = disk / "broker-1" / "orders-0" / "00000000000000000000.index"
    gone.unlink()
    touched = disk / "broker-1" / "meta.properties"
    was = touched.stat().st_mtime_ns
    os.utime(touched, ns=(touched.stat().st_atime_ns, was + 1_000_000_123))
    code, out, err = invoke(["verify-manifest", str(target)], tmp_path)
    assert code == 1, out + err
    assert out.splitlines()[0].startswith("DIFFERENT: 3 difference(s); manifest sha256 ")
    lines = {line.split()[1]: line for line in out.splitlines()[1:]}
    assert lines[str(segment)].startswith("CHANGED") and f"(recorded {sha256(DISK / SEGMENT)})" in lines[str(segment)]
    assert "size" not in lines[str(segment)]
    assert lines[str(gone)].startswith("MISSING")
    def utc(ns):  # ISO-8601 UTC to the nanosecond, as the JSON's mtime and verify-manifest write it
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 10**9)) + f".{ns % 10**9:09d}Z"

    assert lines[str(touched)].startswith("CHANGED") and lines[str(touched)].endswith(
        f"  modification time {utc(was + 1_000_000_123)} (recorded {utc(was)})")
    assert [e["mtime"] for e in json.loads(target.read_text())["entries"] if e["absolutePath"] == str(touched)] \
        == [utc(was)]
    assert "sha256" not in lines[str(touched)].split("  ", 2)[2]
    assert set(lines) == {str(segment), str(gone), str(touched)}  # only the differences
    code, out, err = invoke(["verify-manifest", str(target), "--verbose"], tmp_path)
    others = [line for line in out.splitlines()[1:] if line.split()[1] not in (str(segment), str(gone), str(touched))]
    assert others and all(line.startswith("OK") for line in others)
    code, out, _ = invoke(["verify-manifest", str(target), "--format", "json"], tmp_path)
    assert code == 1 and json.loads(out)["differences"] == 3


def test_a_changed_size_reads_as_every_screen_writes_sizes(disk: Path, tmp_path: Path) -> None:
    """issue 24: one size formatter, verify-manifest included: ``214.5 KiB (219,613 bytes)``."""
    target = tmp_path / "m.json"
    assert invoke(["scan", str(disk), "--manifest", str(target)], tmp_path)[0] == 0
    segment = disk / SEGMENT
    was = segment.stat().st_size
    with open(segment, "ab") as f:
        f.write(b"\0" * 2048)
    code, out, _ = invoke(["verify-manifest", str(target)], tmp_path)
    assert code == 1
    line = next(line for line in out.splitlines() if str(segment) in line)

    def exact(n: int) -> str:
        return f"{n:,} bytes" if n < 1024 else f"{n / 1024:.1f} KiB ({n:,} bytes)"

    assert f"; size {exact(was + 2048)}, recorded {exact(was)}; modification time " in line, line


def test_verify_with_base_follows_moved_evidence(tmp_path: Path) -> None:
    work = tmp_path / "case"
    shutil.copytree(DISK, work / "disk")
    target = tmp_path / "m.json"
    assert invoke(["list", "disk", "--manifest", str(target)], work)[0] == 0  # relative input path
    moved = tmp_path / "mounted"
    work.rename(moved)
    code, out, _ = invoke(["verify-manifest", str(target)], tmp_path)
    assert code == 1 and "MISSING" in out
    code, out, _ = invoke(["verify-manifest", str(target), "--base", str(moved), "--verbose"], tmp_path)
    assert code == 0, out
    assert out.splitlines()[1].split()[1].startswith(str(moved / "disk"))


def test_manifest_inside_the_evidence_is_refused(disk: Path, tmp_path: Path) -> None:
    before = sorted(str(p) for p in disk.rglob("*"))
    target = disk / "broker-1" / "manifest.json"
    code, out, err = invoke(["scan", str(disk), "--manifest", str(target)], tmp_path)
    assert code == 2 and out == ""
    assert err.strip() == f"kafka-forensics: --manifest {target}: lies inside the evidence ({disk}); write it elsewhere"
    assert sorted(str(p) for p in disk.rglob("*")) == before


def test_manifest_in_a_missing_directory_is_one_line(disk: Path, tmp_path: Path) -> None:
    code, _, err = invoke(["scan", str(disk), "--manifest", str(tmp_path / "nope" / "m.json")], tmp_path)
    assert code == 3 and err.count("\n") == 1 and "does not exist" in err


@pytest.mark.parametrize("content, code, message", [
    (b"{not json", 4, "not JSON"),
    (b'{"manifestVersion": 1, "files": [{"path": 3}]}', 4, "field 'path' is missing or not a str"),
    (b'[1, 2]', 4, "not a kafka-forensics evidence manifest"),
])
def test_a_bad_manifest_is_one_clear_line(tmp_path: Path, content: bytes, code: int, message: str) -> None:
    target = tmp_path / "m.json"
    target.write_bytes(content)
    got, out, err = invoke(["verify-manifest", str(target)], tmp_path)
    assert got == code and out == "" and err.count("\n") == 1 and message in err and str(target) in err


def test_verify_a_missing_manifest_is_exit_3(tmp_path: Path) -> None:
    got, _, err = invoke(["verify-manifest", str(tmp_path / "none.json")], tmp_path)
    assert got == 3 and "no such file" in err
