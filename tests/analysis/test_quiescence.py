"""Copies of running (or crashed) brokers: quiescence and the settling window (analysis/quiescence.py,
analysis/settling.py, docs/stuck-lso.md "Copies of running brokers")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401
from forensics.analysis.quiescence import (
    ChangedFile,
    LogDirFacts,
    Unsettled,
    UnsettledKind,
    assess,
    earliest_copy,
)
from forensics.cli.app import app
from forensics.io.files import lock_holder
from forensics.layout.discovery import discover
from tests.machine_output import rows_of

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
DECISION_MS = 1767225607250  # reporting-app's CompleteCommit on the example disk
runner = CliRunner()


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "disk"
    shutil.copytree(EXAMPLE, root)
    return root


def _hanging(root: Path, *args: str):
    r = runner.invoke(app, ["find-hanging", str(root), "--format", "json", "--no-progress", *args])
    return r.exit_code, rows_of(r.stdout), r.stderr


def test_a_copy_without_clean_shutdown_withholds_a_recent_verdict(tmp_path):
    root = _copy(tmp_path)
    (root / "broker-1" / ".kafka_cleanshutdown").unlink()
    code, [row], err = _hanging(root)
    assert (code, row["verdict"], row["armed"], row["abortArgs"]) == (7, "unverifiable", False, None)
    assert "orders-0 was copied no earlier than 2026-01-01T00:00:13.000Z" in row["reason"]
    assert "less than 15 min after the coordinator's newest record for 'reporting-app' (CompleteCommit" in row["reason"]
    assert "__transaction_state-0 was copied no earlier than" in row["reason"]
    assert row["reason"].endswith("or give --copy-start when the copy began later than the disk shows")
    assert row["notArmedBecause"].startswith("too recent to judge from this copy")
    assert {g["kind"] for g in row["evidence"]["gaps"]} == {"too_recent"}
    assert "WARNING: evidence: not one quiescent moment: broker 1's log dir" in " ".join(err.split())
    script = runner.invoke(app, ["abort-commands", str(root), "--bootstrap-server", "k:9092", "--no-progress",
                                 "--arm-unverifiable"])
    assert not [ln for ln in script.stdout.splitlines() if ln.startswith("kafka-")], script.stdout
    assert "# WARNING: evidence: not one quiescent moment" in script.stdout


def test_copy_start_a_window_after_the_decision_proves_it_again(tmp_path):
    root = _copy(tmp_path)
    (root / "broker-1" / ".kafka_cleanshutdown").unlink()
    after = str(DECISION_MS + 15 * 60_000)
    code, [row], _ = _hanging(root, "--copy-start", after)
    assert (code, row["verdict"], row["armed"]) == (1, "hanging", True)
    code, [row], _ = _hanging(root, "--copy-start", str(DECISION_MS + 15 * 60_000 - 1))
    assert (code, row["verdict"]) == (7, "unverifiable")
    # a wider window asks for more: --max-transaction-timeout is the window
    code, [row], _ = _hanging(root, "--copy-start", after, "--max-transaction-timeout", "16")
    assert row["verdict"] == "unverifiable" and "less than 16 min after" in row["reason"]


def test_a_held_lock_is_a_running_broker(tmp_path):
    root = _copy(tmp_path)
    lock = root / "broker-1" / ".lock"
    lock.write_bytes(b"")
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'r+'); "
                               "fcntl.lockf(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
                               str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = os.stat(lock)
        assert lock_holder(str(lock)) == holder.pid
        [d] = discover([str(root)]).log_dirs
        assert d.lock_pid == holder.pid
        code, [row], err = _hanging(root)
        assert (code, row["verdict"]) == (7, "unverifiable")
        assert f"its .lock is held by a running process (pid {holder.pid})" in " ".join(err.split())
        after = os.stat(lock)
        assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)  # nothing written
    finally:
        holder.kill()
        holder.wait()
    assert lock_holder(str(lock)) == 0


def test_quiescence_facts():
    clean = LogDirFacts("/d/1", 1, True, 0)
    q = assess([clean], [], [], {}, {"/d/1/t-0": "/d/1"}, 60_000)
    assert q.proven and q.final("/d/1/t-0") and q.settled_after("/d/1/t-0", 10**15)
    dirty = [LogDirFacts("/d/1", 1, False, 4242), LogDirFacts("/d/2", 2, True, None)]
    changed = [ChangedFile("/d/2/t-1/00000000000000000000.log", 10, 20)]
    q = assess(dirty, ["/loose/t-2"], changed, {"/d/1/t-0": 100_000}, {"/d/1/t-0": "/d/1", "/d/2/t-1": "/d/2"}, 60_000)
    assert [u.kind for u in q.unsettled] == [UnsettledKind.LOCK_HELD, UnsettledKind.NO_CLEAN_SHUTDOWN,
                                             UnsettledKind.CHANGED_WHILE_READ, "no_log_dir"]
    assert not q.final("/d/1/t-0") and not q.final("/d/2/t-1")
    assert q.settled_after("/d/1/t-0", 40_000) and not q.settled_after("/d/1/t-0", 40_001)
    assert not q.settled_after("/d/1/t-0", -1)  # no time: nothing to settle against
    assert not q.settled_after("/d/2/t-1", 0)  # no copy time known: never settled
    assert q.unsettled == (Unsettled(UnsettledKind.LOCK_HELD, "/d/1", lock_pid=4242),
                           Unsettled(UnsettledKind.NO_CLEAN_SHUTDOWN, "/d/1"),
                           Unsettled(UnsettledKind.CHANGED_WHILE_READ, "/d/2", changed=tuple(changed)),
                           Unsettled(UnsettledKind.NO_LOG_DIR, "/loose/t-2"))


def test_partition_dirs_given_alone_are_named_once():
    """issue 24: "/p/t-0 given without its log dir (/p/t-0)" read as if /p/t-0 were its own log dir."""
    [one] = assess([], ["/p/t-0"], [], {}, {}, 60_000).unsettled
    assert one == Unsettled(UnsettledKind.NO_LOG_DIR, "/p/t-0")
    [three] = assess([], ["/p/t-0", "/p/t-1", "/q/u-0"], [], {}, {}, 60_000).unsettled
    assert three == Unsettled(UnsettledKind.NO_LOG_DIR, "/p/t-0", others=("/p/t-1", "/q/u-0"))


def test_a_clean_shutdown_file_of_another_run_is_no_quiescence(tmp_path):
    """The example disk's .kafka_cleanshutdown records brokerEpoch 12, the epoch of broker 1's newest
    registration: one of an earlier stop (or a metadata copy older than the stop) proves nothing."""
    code, [row], err = _hanging(_copy(tmp_path))
    assert (code, row["verdict"], row["armed"]) == (1, "hanging", True) and "quiescent" not in err
    for epoch, why in ((11, "the broker registered again after that stop"), (13, "the metadata copy is older than that stop")):
        root = _copy(tmp_path / str(epoch))
        (root / "broker-1" / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":%d}' % epoch)
        code, [row], err = _hanging(root)
        assert (code, row["verdict"], row["armed"]) == (7, "unverifiable", False), row["reason"]
        said = " ".join(err.split())
        assert (f"has a .kafka_cleanshutdown of broker epoch {epoch}, but the newest registration of broker 1 in "
                f"__cluster_metadata has epoch 12: {why}") in said, said
    empty = LogDirFacts("/d/1", 1, True, 0, None, 12)  # <= 3.6 writes an empty file: nothing to compare
    assert assess([empty], [], [], {}, {}, 60_000).proven
    stale = assess([LogDirFacts("/d/1", 1, True, 0, 11, 12)], [], [], {}, {}, 60_000)
    assert stale.unsettled == (Unsettled(UnsettledKind.STALE_CLEAN_SHUTDOWN, "/d/1", broker_id=1, shutdown_epoch=11,
                                         registered_epoch=12),) and not stale.quiet_dirs


def test_earliest_copy():
    assert earliest_copy(100, [500], 400, True) == 400  # a file time, never past the as-of time
    assert earliest_copy(100, [500], 400, False) == 100  # file times of a later copy: the newest record
    assert earliest_copy(100, [50], 400, True, copy_start_ms=300) == 300
    assert earliest_copy(None, [], None, False) is None


def test_a_stale_recovery_point_on_a_clean_log_dir_is_a_gap(tmp_path):
    root = _copy(tmp_path)
    cp = root / "broker-1" / "recovery-point-offset-checkpoint"
    lines = cp.read_text().splitlines()
    lines = [ln.replace("orders 0 16", "orders 0 9") for ln in lines]
    assert "orders 0 9" in lines
    cp.write_text("\n".join(lines) + "\n")
    code, [row], _ = _hanging(root)
    assert (code, row["verdict"], row["armed"]) == (7, "unverifiable", False)
    assert "ends at offset 16, past its recovery point 9 although its broker stopped cleanly" in row["reason"]
