"""scan of a file it does not read (issue 24): an index, a snapshot, a checkpoint or any other state file
given alone exits 3 and names its directory, as meta.properties and non-Kafka files do; it never says
"Findings: none" about nothing read. Given beside what scan reads, such files are listed, not passed
over in silence."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
from forensics.cli.app import app

BROKER = Path(__file__).resolve().parents[2] / "fixtures" / "example-disk" / "broker-1"
PART = BROKER / "orders-0"
DUMPED = ["orders-0/00000000000000000000.index", "orders-0/00000000000000000000.timeindex",
          "orders-0/00000000000000000009.txnindex", "orders-0/00000000000000000009.snapshot"]
TEXT = ["orders-0/leader-epoch-checkpoint", "orders-0/partition.metadata", "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint", ".kafka_cleanshutdown", "__cluster_metadata-0/quorum-state"]


def _scan(*args: object) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, ["scan", *map(str, args), "--no-progress", "--engine", "local"],
                           env={"COLUMNS": "100"})
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("name", DUMPED + TEXT)
def test_a_state_file_alone_is_refused(name):
    path = BROKER / name
    assert path.is_file(), path
    code, out, err = _scan(path)
    assert (code, out) == (3, ""), (code, out, err)
    line = " ".join(err.split())
    assert line.startswith(f"kafka-forensics: {path}: scan reads log dirs, partition dirs and .log segments, "
                           f"not this file alone: give its directory ({path.parent})"), line
    assert ("`kafka-forensics dump` decodes it" in line) is (name in DUMPED)


def test_beside_a_segment_they_are_named():
    snap, ckpt = PART / "00000000000000000009.snapshot", PART / "leader-epoch-checkpoint"
    code, out, _ = _scan(PART / "00000000000000000000.log", snap, ckpt)
    assert code == 0
    text = " ".join(out.split())
    assert f"Not read by scan (it reads log dirs, partition dirs and .log segments; `kafka-forensics dump` " \
           f"decodes indexes and snapshots): {snap}, {ckpt}" in text
