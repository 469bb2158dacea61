"""DeleteRecords and restarts as the broker sees them: the abort preview counts only what lies above the log
start, the LSO is clamped to the log start (``UnifiedLog.updateFirstUnstableOffset``), and the KAFKA-7408 hint
appears only where another replica exists, never for a single node's restart or a checkpoint rewritten at the
log start."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401
from forensics.cli.app import app
from tests.machine_output import rows_of

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
runner = CliRunner()


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLE, tmp_path / "disk")
    return tmp_path / "disk" / "broker-1"


def _row(root: Path):
    r = runner.invoke(app, ["find-hanging", str(root), "--format", "json", "--no-progress"])
    [row] = [x for x in rows_of(r.stdout) if (x["topic"], x["partition"]) == ("orders", 0)]
    return r.exit_code, row


def _log_start(broker: Path, offset: int) -> None:
    (broker / "log-start-offset-checkpoint").write_text(f"0\n1\norders 0 {offset}\n")


def test_a_log_start_inside_the_transaction(tmp_path):
    broker = _copy(tmp_path)
    _log_start(broker, 7)  # DeleteRecords to offset 7: the transaction's first record (6) is gone
    (broker / "orders-0" / "leader-epoch-checkpoint").write_text("0\n1\n2 7\n")  # truncateFromStart
    code, row = _row(broker.parent)
    p = row["abortPreview"]
    assert (p["firstOffset"], p["lastOffset"], p["batches"], p["records"]) == (7, 7, 1, 1)
    assert p["keys"] == ["k19"]  # offset 6 held k18: below the log start, not discarded by an abort
    # the log start 7 lies in the batch 6..7: the LSO is that batch's base offset, below the log start, as a real
    # Kafka 4.1 broker answers (fixtures/live/RECIPE.md, delete-records: log start 7 in batch 5..8, LSO 5)
    assert row["evidence"]["lastStableOffset"] == 6
    assert (code, row["verdict"]) == (1, "hanging") and "KAFKA-7408" not in row["reason"]


def test_a_log_start_past_the_transaction(tmp_path):
    broker = _copy(tmp_path)
    _log_start(broker, 9)
    code, row = _row(broker.parent)
    p = row["abortPreview"]
    assert (p["firstOffset"], p["batches"], p["records"], p["lastOffset"]) == (9, 0, 0, None)
    assert row["evidence"]["lastStableOffset"] == 9
    script = runner.invoke(app, ["abort-commands", str(broker.parent), "--bootstrap-server", "k:9092",
                                 "--no-progress"]).stdout
    assert "# the abort discards no data: none of this producer's batches from offset 9 on remains" in " ".join(
        script.split())
    assert "DISCARDS" not in script


def test_a_single_nodes_restart_is_no_kafka_7408(tmp_path):
    broker = _copy(tmp_path)
    # restarted at the log end (16), after the transaction from 6 began; nothing written since (an entry the
    # batches below it contradicted would be a contradiction of its own)
    (broker / "orders-0" / "leader-epoch-checkpoint").write_text("0\n2\n2 0\n4 16\n")
    _, row = _row(broker.parent)
    assert row["verdict"] == "hanging" and "KAFKA-7408" not in row["reason"]


def test_a_leader_change_with_another_replica_is_a_kafka_7408_hint(tmp_path):
    broker = _copy(tmp_path)
    (broker / "orders-0" / "leader-epoch-checkpoint").write_text("0\n2\n2 0\n4 16\n")
    other = tmp_path / "disk" / "broker-2"
    other.mkdir()
    shutil.copytree(EXAMPLE / "broker-1" / "orders-0", other / "orders-0")
    meta = (broker / "meta.properties").read_text().replace("node.id=1", "node.id=2")
    (other / "meta.properties").write_text(meta.replace("directory.id=", "directory.id=x"))
    _, row = _row(broker.parent)
    assert row["brokerId"] == 1 and "leader epoch 4 began at offset 16" in row["reason"]
    assert "KAFKA-7408" in row["reason"]
