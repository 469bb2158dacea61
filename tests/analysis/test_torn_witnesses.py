"""The torn-copy test uses every witness (analysis/evidence_gaps.py): a log cut exactly at a batch boundary,
with its checkpoints lowered to match (a high watermark one write behind, after a crash or on a live copy),
is still caught by what its indexes, leader epochs, snapshots and log start say it held."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401
from forensics.cli.app import app
from tests.machine_output import rows_of

DISK = Path(__file__).resolve().parents[2] / "fixtures" / "real" / "kraft-tv2" / "disk"
PART = "a-txn-orders-0"  # producer 2 commits 44..46, COMMIT marker @47 (the last 78 bytes of the log)
AS_OF = "1795211460338"
runner = CliRunner()


def _cut(tmp_path: Path) -> Path:
    root = tmp_path / "disk"
    shutil.copytree(DISK, root)
    log = root / PART / "00000000000000000000.log"
    log.write_bytes(log.read_bytes()[:-78])  # the marker gone, on a batch boundary: no damage to see
    (root / PART / "00000000000000000048.snapshot").unlink()
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        path = root / name
        path.write_text(path.read_text().replace("a-txn-orders 0 48", "a-txn-orders 0 47"))
    return root


def _row(root: Path):
    r = runner.invoke(app, ["find-hanging", str(root), "--format", "json", "--no-progress", "--as-of", AS_OF])
    rows = [x for x in rows_of(r.stdout) if (x["topic"], x["partition"]) == ("a-txn-orders", 0)]
    return r.exit_code, rows


def test_the_time_index_names_the_cut_marker(tmp_path):
    code, [row] = _row(_cut(tmp_path))
    assert (code, row["producerId"], row["startOffset"], row["verdict"], row["armed"]) == (7, 2, 44, "unverifiable",
                                                                                          False)
    assert ("the log of a-txn-orders-0 ends at offset 47, below offset 47, which its time index "
            "00000000000000000000.timeindex names") in row["reason"]


def test_without_any_witness_it_is_hanging(tmp_path):
    """Only the live cluster tells a marker lost from a marker cut once every witness agrees with the cut."""
    root = _cut(tmp_path)
    (root / PART / "00000000000000000000.timeindex").write_bytes(b"")
    code, [row] = _row(root)
    assert (code, row["verdict"]) == (1, "hanging")


@pytest.mark.parametrize("witness, text", [
    ("leader-epoch", "below the start of its leader epoch 1 at offset 48 (leader-epoch-checkpoint)"),
    ("log-start", "below its log start offset 48 (log-start-offset-checkpoint)"),
])
def test_other_witnesses(tmp_path, witness, text):
    root = _cut(tmp_path)
    (root / PART / "00000000000000000000.timeindex").write_bytes(b"")
    if witness == "leader-epoch":
        (root / PART / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n1 48\n")
    else:
        (root / "log-start-offset-checkpoint").write_text("0\n1\na-txn-orders 0 48\n")
    code, [row] = _row(root)
    assert (code, row["verdict"], row["armed"]) == (7, "unverifiable", False)
    assert text in row["reason"]
