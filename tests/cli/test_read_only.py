"""The read-only guarantee: every command on an evidence tree without write permission.

The tree (a copy of the example disk: two brokers' log dirs with data, snapshots, indexes,
checkpoints and ``__transaction_state``) gets mode 0444 on files and 0555 on directories. Each
command (``report`` and ``export`` too) runs as a real process whose working directory is inside the tree (where a careless
Spark would put ``spark-warehouse``, ``derby.log`` or ``metastore_db``), under a user that
permissions bind: as root, the process runs without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH, so
any write into the tree would fail. Afterwards the tree must be identical: the same entries,
sizes, modes, modification and change times, and contents. The manifest written by the run
(outside the tree) must verify, and the Spark runs must leave their scratch directory empty.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forensics.cli.app import app
from tests.readonly_support import without_permission_override

REPO = Path(__file__).resolve().parents[2]
DISK = REPO / "fixtures" / "example-disk"
SEGMENT = "broker-1/orders-0/00000000000000000000.log"

Snapshot = dict[str, tuple]


def snapshot(root: Path) -> Snapshot:
    """Every entry under ``root`` (the root too): type, size, mode, mtime, ctime and sha256 of files."""
    out: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [""] + dirnames + filenames:
            p = Path(dirpath, name) if name else Path(dirpath)
            st = os.lstat(p)
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else None
            out[str(p.relative_to(root))] = (stat.S_IFMT(st.st_mode), st.st_size, stat.S_IMODE(st.st_mode),
                                             st.st_mtime_ns, st.st_ctime_ns, digest)
    return out


def make_read_only(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o444)
        os.chmod(dirpath, 0o555)


def make_writable(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o644)


@pytest.fixture()
def evidence(tmp_path: Path):
    root = tmp_path / "evidence"
    shutil.copytree(DISK, root)
    make_read_only(root)
    yield root
    make_writable(root)  # so that pytest can remove it


def _cli(args: list[str], cwd: Path, scratch: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("KAFKA_FORENSICS_DEBUG", "KAFKA_FORENSICS_ENGINE")}
    env["TMPDIR"] = str(scratch)
    cmd = [*without_permission_override(), sys.executable, "-m", "forensics", *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


COMMANDS = [
    ("scan", ["scan", "{disk}", "--format", "json", "--engine", "local"]),
    ("find-hanging", ["find-hanging", "{disk}", "--format", "json", "--engine", "local"]),
    ("abort-commands", ["abort-commands", "{disk}", "--bootstrap-server", "b:9092", "--engine", "local"]),
    ("list", ["list", "{disk}", "--engine", "local"]),
    ("describe", ["describe", "{disk}", "--transactional-id", "reporting-app"]),
    ("describe-producers", ["describe-producers", "{disk}", "--topic", "orders", "--partition", "0"]),
    ("dump", ["dump", "{disk}/" + SEGMENT, "--deep-iteration", "--print-data-log"]),
    ("report", ["report", "{disk}", "--engine", "local", "--out", "{out}/report.html"]),
    ("export", ["export", "{disk}", "--engine", "local", "--out", "{out}/export"]),
    ("dump-all-kinds", ["dump", "{disk}/broker-1/orders-0/00000000000000000000.index",
                        "{disk}/broker-1/orders-0/00000000000000000000.timeindex",
                        "{disk}/broker-1/orders-0/00000000000000000009.txnindex",
                        "{disk}/broker-1/orders-0/00000000000000000009.snapshot"]),
]
SPARK_COMMANDS = [
    ("scan", ["scan", "{disk}", "--format", "json", "--engine", "spark", "--master", "local[2]"]),
    ("find-hanging", ["find-hanging", "{disk}", "--engine", "spark", "--master", "local[2]"]),
    ("export", ["export", "{disk}", "--out", "{out}/export", "--master", "local[2]"]),
]


def _check(args: list[str], evidence: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    before = snapshot(evidence)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    manifest = tmp_path / "manifest.json"
    cwd = evidence / "broker-1"  # inside the evidence: nothing may land here either
    proc = _cli([a.format(disk=evidence, out=tmp_path) for a in args] + ["--manifest", str(manifest)], cwd, scratch)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    assert snapshot(evidence) == before, "the evidence tree changed"
    assert [e for e in json.loads(manifest.read_text())["entries"] if e["type"] == "file"], "the manifest lists no file"
    verify = CliRunner().invoke(app, ["verify-manifest", str(manifest)])  # it only reads: in this process
    assert verify.exit_code == 0, verify.stdout + verify.stderr
    assert list(scratch.iterdir()) == [], f"scratch left behind: {list(scratch.iterdir())}"
    return proc


def test_the_tree_really_refuses_writes(evidence: Path, tmp_path: Path) -> None:
    """The premise: under this test's process settings, writing into the tree fails."""
    probe = subprocess.run([*without_permission_override(), sys.executable, "-c",
                            f"open({str(evidence / 'broker-1' / 'probe')!r}, 'w')"], capture_output=True, text=True)
    assert probe.returncode != 0 and "Permission denied" in probe.stderr
    append = subprocess.run([*without_permission_override(), sys.executable, "-c",
                             f"open({str(evidence / SEGMENT)!r}, 'ab')"], capture_output=True, text=True)
    assert append.returncode != 0 and "Permission denied" in append.stderr


@pytest.mark.parametrize("name, args", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_command_on_a_read_only_tree_changes_nothing(name: str, args: list[str], evidence: Path,
                                                      tmp_path: Path) -> None:
    proc = _check(args, evidence, tmp_path)
    if name == "report":  # the page goes to --out, a line about it to stderr
        assert (tmp_path / "report.html").stat().st_size > 0 and "report: " in proc.stderr
    elif name == "export":  # in-process: the tables go to --out, one line per table to stdout
        assert json.loads((tmp_path / "export" / "_export.json").read_text())["tables"]["batches"]["rows"] > 0
        assert proc.stdout.startswith("batches ")
    else:
        assert proc.stdout, proc.stderr


@pytest.mark.spark
@pytest.mark.parametrize("name, args", SPARK_COMMANDS, ids=[c[0] for c in SPARK_COMMANDS])
def test_spark_on_a_read_only_tree_changes_nothing(name: str, args: list[str], evidence: Path,
                                                    tmp_path: Path) -> None:
    from tests.spark.cluster import java_problem

    problem = java_problem()
    if problem:
        pytest.skip(problem)
    proc = _check(args, evidence, tmp_path)
    if name == "export":
        assert json.loads((tmp_path / "export" / "_export.json").read_text())["tables"]["batches"]["rows"] > 0
    assert "falls back" not in proc.stderr and "warning" not in proc.stderr, proc.stderr
