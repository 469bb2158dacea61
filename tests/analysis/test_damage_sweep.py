"""Damage never arms an abort (issue: safe by default on evidence as it arrives).

The real Kafka 4.1.0 disks hold nothing hanging (``d-tx-ongoing`` is Ongoing, every other transaction
completed), so on a damaged copy no abort may be armed, and the open transaction the producer snapshot
shows must stay a row. The exact cases below are those an investigator reported; the sweep damages
every transaction-bearing log one way after another (see ``damage_sweep.py``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
from forensics.cli.app import app
from tests.analysis.damage_sweep import copy_disk, sweep
from tests.machine_output import rows_of

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real"
EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "example-disk"
AS_OF = {"kraft-tv2": 1795211459934, "kraft-rv3.9-tv0": 1795211736934}  # ~10 s after each newest record
KEY_FILES = ("__transaction_state-43/", "d-txn-ongoing-", "a-txn-orders-0/")  # the reported cases
runner = CliRunner()


# The fast tier sweeps the reported files of kraft-tv2 (the disk of the exact reported cases above); the
# same sweep of the same files on kraft-rv3.9-tv0 (the same workload, an older protocol) is in the slow tier.
@pytest.fixture(scope="module", params=[pytest.param(r, marks=pytest.mark.slow) if r == "kraft-rv3.9-tv0" else r
                                        for r in sorted(AS_OF)])
def disk(request, tmp_path_factory):
    return request.param, copy_disk(REAL / request.param / "disk", tmp_path_factory.mktemp(request.param) / "d")


def _hanging(root: Path, as_of: int):
    r = runner.invoke(app, ["find-hanging", str(root), "--all", "--format", "json", "--no-progress",
                            "--as-of", str(as_of)])
    return r.exit_code, rows_of(r.stdout), r.stderr


def _damaged(tmp_path: Path, run: str, rel: str, change) -> Path:
    root = copy_disk(REAL / run / "disk", tmp_path / "d")
    change(root / rel)
    return root


def _truncate(size: int):
    def cut(p: Path) -> None:
        p.write_bytes(p.read_bytes()[:size])
    return cut


def _flip_last(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[-1] ^= 0xFF
    p.write_bytes(bytes(data))


COORDINATOR = "__transaction_state-43/00000000000000000000.log"  # d-tx-ongoing's coordinator


@pytest.mark.parametrize("change, gap", [
    (lambda p: p.write_bytes(bytes(p.stat().st_size)), "is damaged at byte 0 of 00000000000000000000.log"),
    (_flip_last, "is damaged at byte 534 of 00000000000000000000.log (crc_mismatch) and ends at offset 4"),
    (_truncate(600), "is damaged at byte 534 of 00000000000000000000.log (truncated_tail) and ends at offset 4, "
                     "below its high watermark 5"),
    (_truncate(534), "ends at offset 4, below its high watermark 5, below its recovery point 5, below offset 4, "
                     "which its time index 00000000000000000000.timeindex names and below its producer snapshot "
                     "00000000000000000005.snapshot"),
    (lambda p: p.unlink(), "ends at offset 0, below its high watermark 5"),
], ids=["zero-fill", "flipped-byte", "torn-600", "cut-534", "removed"])
def test_a_damaged_coordinator_log_leaves_the_ongoing_transaction_unarmed(tmp_path, change, gap):
    root = _damaged(tmp_path, "kraft-tv2", COORDINATOR, change)
    code, rows, err = _hanging(root, AS_OF["kraft-tv2"])
    assert code == 7, err
    ongoing = [r for r in rows if r["topic"] == "d-txn-ongoing"]
    assert [(r["partition"], r["producerId"], r["startOffset"]) for r in ongoing] == [(0, 20, 2), (1, 20, 2)]
    for r in ongoing:
        assert (r["verdict"], r["armed"], r["abortArgs"]) == ("unverifiable", False, None), r
        assert f"the log of __transaction_state-43 {gap}" in r["reason"], r["reason"]
        assert r["reason"].endswith("a torn or partial copy and a marker really lost look alike on disk: only the "
                                    "live cluster tells them apart (the guard in abort-commands compares with "
                                    "describe-producers)")
        assert r["notArmedBecause"].startswith("the records it rests on are damaged or incomplete")
    script = runner.invoke(app, ["abort-commands", str(root), "--bootstrap-server", "k:9092", "--no-progress",
                                 "--as-of", str(AS_OF["kraft-tv2"]), "--arm-unverifiable"])
    assert not [ln for ln in script.stdout.splitlines() if ln.startswith("kafka-")], script.stdout
    assert "# NOT ARMED (unverifiable): the records it rests on are damaged or incomplete" in script.stdout


def test_a_committed_transaction_cut_from_its_log_is_not_armed(tmp_path):
    root = _damaged(tmp_path, "kraft-tv2", "a-txn-orders-0/00000000000000000000.log", _truncate(3553))
    code, rows, _ = _hanging(root, AS_OF["kraft-tv2"])
    [row] = [r for r in rows if r["topic"] == "a-txn-orders"]
    assert (code, row["partition"], row["producerId"], row["startOffset"]) == (7, 0, 1, 28)
    assert (row["verdict"], row["armed"]) == ("unverifiable", False)
    assert row["reason"].startswith("not proven: coordinator has 'a-tx-producer-2' in CompleteCommit (epoch 0): no "
                                    "transaction in flight, no marker will come; but the log of a-txn-orders-0 is "
                                    "damaged at byte 3506 of 00000000000000000000.log (truncated_tail) and ends at "
                                    "offset 31, below its high watermark 48")
    assert "this transaction's marker may be missing from the copy" in row["reason"]


def test_an_open_transaction_whose_log_is_gone_stays_a_row(tmp_path):
    root = _damaged(tmp_path, "kraft-tv2", "d-txn-ongoing-0/00000000000000000000.log", _truncate(0))
    code, rows, _ = _hanging(root, AS_OF["kraft-tv2"])
    [row] = [r for r in rows if (r["topic"], r["partition"]) == ("d-txn-ongoing", 0)]
    assert (code, row["producerId"], row["startOffset"], row["verdict"], row["armed"]) == (7, 20, 2, "unverifiable",
                                                                                          False)
    assert row["reason"].startswith("open since offset 2 in the producer snapshot 00000000000000000005.snapshot, "
                                    "but the log read does not show it; the log of d-txn-ongoing-0 ends at offset 0")
    assert row["reason"].endswith("the coordinator: Ongoing with d-txn-ongoing-0 in its set since "
                                  "2026-11-20T21:50:47.934Z (1795211447934; 12.000 s before as-of): "
                                  "the coordinator will commit, abort or time it out (110000 ms)")


def test_the_sweep_sees_an_armed_abort_when_there_is_one(tmp_path):
    """Control: on the example disk (one proven hanging transaction) the sweep's detector counts it."""
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root)
    result = sweep(root, 1767229200000, only=lambda rel: rel.startswith("broker-1/payments-0/"))
    assert result.runs > 0 and result.armed and all("orders-0 producer 2002 from 6" in a for a in result.armed)


def test_the_memo_changes_no_verdict(disk):
    """The sweep's memo (what a run reads of the files its mutation left unchanged, made once): every run of
    the damage to d-tx-ongoing's partitions gives the same verdicts, reasons and rows made both ways."""
    run, root = disk
    fresh: list = []
    memoized: list = []
    a = sweep(root, AS_OF[run], only=lambda rel: rel.startswith("d-txn-ongoing-"), memo=False, runs=fresh)
    b = sweep(root, AS_OF[run], only=lambda rel: rel.startswith("d-txn-ongoing-"), runs=memoized)
    assert a.runs >= 20 and memoized == fresh and (a.armed, a.vanished, a.unverifiable) == (b.armed, b.vanished,
                                                                                          b.unverifiable)


def test_damage_to_the_reported_files_arms_nothing(disk):
    run, root = disk
    result = sweep(root, AS_OF[run], only=lambda rel: rel.startswith(KEY_FILES))
    assert result.runs >= 50 and result.unverifiable >= 10  # the damage reached verdicts
    assert result.armed == [] and result.vanished == []


@pytest.mark.slow
def test_damage_anywhere_arms_nothing(disk):
    """Every transaction-bearing log of the disk, every mutation: ~550 runs per disk."""
    run, root = disk
    result = sweep(root, AS_OF[run])
    assert result.runs >= 500 and result.unverifiable >= 100
    assert result.armed == [] and result.vanished == []
