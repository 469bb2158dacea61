"""Evidence that contradicts itself never arms an abort and never hides an open transaction
(analysis/contradictions.py): snapshots of another moment or partition, edited snapshots, coordinator
records a coordinator never writes, an open transaction whose own batches disagree."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401
from fixtures.diskgen.files import SnapshotEntrySpec, encode_producer_snapshot
from fixtures.diskgen.records import RecordSpec, encode_v2_batch
from fixtures.diskgen.txnlog import encode_txn_log_key, encode_txn_log_value
from forensics.cli.app import app
from forensics.codec.snapshot import decode_snapshot
from tests.machine_output import rows_of

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
runner = CliRunner()


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "disk"
    shutil.copytree(EXAMPLE, root)
    return root / "broker-1"


def _rows(broker: Path):
    r = runner.invoke(app, ["find-hanging", str(broker.parent), "--format", "json", "--no-progress", "--all"])
    return r.exit_code, rows_of(r.stdout)


def _script(broker: Path) -> str:
    r = runner.invoke(app, ["abort-commands", str(broker.parent), "--bootstrap-server", "k:9092", "--no-progress",
                            "--arm-unverifiable"])
    return r.stdout


def _armed(script: str):
    return [ln for ln in script.splitlines() if ln.startswith("kafka-")]


def _set_checkpoint(broker: Path, topic: str, partition: int, offset: int) -> None:
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        _set(broker, name, topic, partition, offset)


def test_the_undamaged_disk_arms_its_abort(tmp_path):
    code, rows = _rows(_copy(tmp_path))
    assert (code, [(r["topic"], r["partition"], r["verdict"]) for r in rows]) == (1, [("orders", 0, "hanging")])


def test_another_partitions_snapshot_keeps_the_transaction_a_row(tmp_path):
    broker = _copy(tmp_path)
    shutil.copyfile(broker / "orders-1" / "00000000000000000015.snapshot",
                    broker / "orders-0" / "00000000000000000016.snapshot")
    code, rows = _rows(broker)
    [row] = [r for r in rows if (r["topic"], r["partition"], r["producerId"]) == ("orders", 0, 2002)]
    assert (code, row["verdict"], row["armed"], row["startOffset"]) == (7, "unverifiable", False, 6)
    assert "the producer state of orders-0 contradicts itself for producer 2002" in row["reason"]
    assert "00000000000000000016.snapshot" in row["reason"]
    assert not _armed(_script(broker))


def test_an_edited_snapshot_entry_never_arms_its_epoch(tmp_path):
    broker = _copy(tmp_path)
    path = broker / "orders-0" / "00000000000000000016.snapshot"
    snap = decode_snapshot(path.read_bytes())
    entries = [SnapshotEntrySpec(e.producer_id, 7 if e.producer_id == 2002 else e.producer_epoch,
                                 e.batch_metadata.last_seq if e.batch_metadata else -1,
                                 e.batch_metadata.last_offset if e.batch_metadata else -1,
                                 e.batch_metadata.offset_delta if e.batch_metadata else 0, e.last_timestamp,
                                 e.coordinator_epoch,
                                 -1 if e.current_txn_first_offset is None else e.current_txn_first_offset)
               for e in snap.entries]
    path.write_bytes(encode_producer_snapshot(entries))  # CRC made anew: the edit is not damage
    code, rows = _rows(broker)
    [row] = [r for r in rows if (r["topic"], r["partition"]) == ("orders", 0)]
    assert (code, row["verdict"], row["armed"], row["producerEpoch"]) == (7, "unverifiable", False, 7)
    assert "gives producer epoch 7 and coordinator epoch" in row["reason"] and "full history of its segments 1 and" in row["reason"]
    assert not _armed(_script(broker))


def _append_txn_record(broker: Path, partition: int, offset: int, tid: str, status: int, partitions, ts: int) -> None:
    log = broker / f"__transaction_state-{partition}" / "00000000000000000000.log"
    value = encode_txn_log_value(2002, 1, 30000, status, partitions, ts, 1767225606000)
    batch = encode_v2_batch(offset, [RecordSpec(key=encode_txn_log_key(tid), value=value)],
                            partition_leader_epoch=1, base_timestamp=ts)
    log.write_bytes(log.read_bytes() + batch)
    _set_checkpoint(broker, "__transaction_state", partition, offset + 1)


def test_a_reappended_prepare_commit_is_no_stuck_verdict_and_no_abort(tmp_path):
    """CompleteCommit, then PrepareCommit again (a record re-appended): not a transition a coordinator
    makes; the newest record is not its last word."""
    broker = _copy(tmp_path)
    _append_txn_record(broker, 0, 4, "reporting-app", 2, [("orders", 0)], 1767225608000)
    code, rows = _rows(broker)
    [row] = [r for r in rows if (r["topic"], r["partition"]) == ("orders", 0)]
    assert (code, row["verdict"], row["armed"], row["abortArgs"]) == (7, "unverifiable", False, None)
    assert ("the coordinator's records of 'reporting-app' contradict each other: CompleteCommit -> PrepareCommit is "
            "not a valid transition at offset 4 of __transaction_state-0") in row["reason"]
    assert row["abortForms"] is None  # PrepareCommit: never an abort, not even commented
    assert not _armed(_script(broker))


def test_an_empty_after_prepare_commit_does_not_arm(tmp_path):
    """PrepareCommit then Empty at the same epoch: the later record wins for a fold, but a coordinator never
    writes it; the transaction it decided to commit must not become an armed abort."""
    broker = _copy(tmp_path)
    _append_txn_record(broker, 0, 4, "reporting-app", 2, [("orders", 0)], 1767225608000)  # PrepareCommit
    _append_txn_record(broker, 0, 5, "reporting-app", 0, None, 1767225609000)  # Empty
    code, rows = _rows(broker)
    [row] = [r for r in rows if (r["topic"], r["partition"]) == ("orders", 0)]
    assert (code, row["verdict"], row["armed"]) == (7, "unverifiable", False)
    assert "CompleteCommit -> PrepareCommit is not a valid transition" in row["reason"]
    assert not _armed(_script(broker))


def test_a_batch_of_another_epoch_inside_the_open_transaction(tmp_path):
    broker = _copy(tmp_path)
    log = broker / "orders-0" / "00000000000000000015.log"
    dup = encode_v2_batch(16, [RecordSpec(key=b"k", value=b"v")], producer_id=2002, producer_epoch=0, base_sequence=2,
                          transactional=True, partition_leader_epoch=2, base_timestamp=1767225612000)
    log.write_bytes(log.read_bytes() + dup)
    _set_checkpoint(broker, "orders", 0, 17)
    (broker / "orders-0" / "00000000000000000016.snapshot").unlink()
    code, rows = _rows(broker)
    [row] = [r for r in rows if (r["topic"], r["partition"]) == ("orders", 0)]
    assert (code, row["verdict"], row["armed"]) == (7, "unverifiable", False)
    assert "holds batches of producer epochs 1, 0" in row["reason"] and "the open transaction from offset 6 (" in row["reason"]
    assert not _armed(_script(broker))


def test_open_data_above_the_high_watermark_does_not_arm(tmp_path):
    broker = _copy(tmp_path)
    log = broker / "orders-0" / "00000000000000000015.log"
    more = encode_v2_batch(16, [RecordSpec(key=b"k", value=b"v")], producer_id=2002, producer_epoch=1, base_sequence=2,
                           transactional=True, partition_leader_epoch=2, base_timestamp=1767225612000)
    log.write_bytes(log.read_bytes() + more)
    (broker / "orders-0" / "00000000000000000016.snapshot").unlink()
    code, rows = _rows(broker)
    [row] = [r for r in rows if (r["topic"], r["partition"]) == ("orders", 0)]
    assert (code, row["verdict"], row["armed"]) == (7, "unverifiable", False)
    assert "reaches offset 16, at or above the high watermark 16" in row["reason"]


def _ongoing(tmp_path: Path) -> Path:
    from fixtures.hanging_scenarios import build

    return build("ongoing", tmp_path / "ongoing") / "broker-1"


def _set(broker: Path, name: str, topic: str, partition: int, offset: int) -> None:
    path = broker / name
    lines = [f"{topic} {partition} {offset}" if ln.startswith(f"{topic} {partition} ") else ln
             for ln in path.read_text().splitlines()]
    path.write_text("\n".join(lines) + "\n")


def test_an_ongoing_transaction_whose_copy_is_torn_is_no_all_clear(tmp_path):
    """'ongoing' needs no one only on whole records: a clean copy whose live-0 log ends below its high watermark,
    or whose recovery point a clean stop would not leave, or whose coordinator partition ends below its own
    high watermark, is unverifiable (exit 7) and says which file."""
    broker = _ongoing(tmp_path)
    code, rows = _rows(broker)
    assert (code, [(r["partition"], r["verdict"]) for r in rows]) == (0, [(0, "ongoing")])
    for name, topic, partition, offset, said in (
            ("replication-offset-checkpoint", "live", 0, 5, "below its high watermark 5"),
            ("recovery-point-offset-checkpoint", "live", 0, 2, "past its recovery point 2"),
            ("replication-offset-checkpoint", "__transaction_state", 0, 3, "__transaction_state-0 ends at offset 2, "
                                                                           "below its high watermark 3")):
        case = _ongoing(tmp_path / f"{name}-{topic}")
        _set(case, name, topic, partition, offset)
        code, rows = _rows(case)
        assert (code, [(r["partition"], r["verdict"]) for r in rows]) == (7, [(0, "unverifiable")]), (name, rows)
        assert said in rows[0]["reason"], rows[0]["reason"]


def test_metadata_records_kafka_refuses_leave_no_all_clear(tmp_path):
    """A PartitionChangeRecord that PartitionRegistration.merge refuses (three replicas, one directory) is not
    applied, and the image is then not the broker's: no all-clear is proven (exit 7, one evidence line)."""
    from forensics.codec.metadata_schemas import METADATA_MESSAGES
    from forensics.codec.schema_encode import encode_message
    from tests.analysis.evidence_disks import _topic_ids, append_metadata

    broker = _ongoing(tmp_path)
    topic_id = _topic_ids(broker)["live"]
    change = bytes([1, 5, 0]) + encode_message(METADATA_MESSAGES[5], 0, {
        "partitionId": 0, "topicId": topic_id, "replicas": [1, 2, 3], "isr": [1], "leader": 1})
    append_metadata(broker, [change])
    r = runner.invoke(app, ["find-hanging", str(broker.parent), "--format", "json", "--no-progress"])
    assert r.exit_code == 7, r.stderr
    assert "__cluster_metadata log read is incomplete" in r.stderr and "replay refuses" in r.stderr, r.stderr


RET_SNAPSHOT = "broker-1/ret-0/00000000000000000006.snapshot"

# Named regressions from the evidence sweep (tests/analysis/evidence_sweep.py): one mutation each, the
# exit code and the evidence the answer must name. Each armed an abort or read as all clear before.
SWEPT = [
    ("hanging/tv2", "record at offset 7 re-appended at 11", 7, "producer epoch 2 after 3 for producer id 800"),
    ("hanging/tv2", "record at offset 8 re-appended at 11", 7, "PrepareCommit of another transaction than the "
     "Ongoing one before it (partitions {tv2-1} started at 1767225601400, not {tv2-0, tv2-1}"),
    ("live/restart", "__transaction_state-3/00000000000000000000.log in place of __transaction_state-0/"
     "00000000000000000000.log", 7, "__transaction_state-0 holds records of ids that hash to other partitions"),
    ("hanging/expired-id", "broker-1/aux-0/00000000000000000000.log in place of broker-1/exp-0/00000000000000000000"
     ".log", 7, "the log of exp-0 ends at offset 2, past its recovery point 1"),
    ("real/kraft-tv2 x3 brokers", "broker-2/d-txn-ongoing-0 left out", 7,
     "its leader's copy (broker 2"),
    ("real/kraft-tv2 x3 brokers", "broker-1/d-txn-ongoing-0/00000000000000000000.log: a batch of producer 20 at "
     "epoch 1 inside its open transaction (from 2) at 5", 7, "the replicas of one transaction disagree"),
    ("real/kraft-tv2 x3 brokers", "broker-2/__cluster_metadata-0 left out", 7,
     "given without their __cluster_metadata-0"),
    ("real/kraft-tv2", "d-txn-ongoing-0/leader-epoch-checkpoint: last entry 0 0 -> 0 1", 7,
     "where its leader-epoch-checkpoint gives no epoch"),
    ("real/kraft-tv2", "d-txn-ongoing-0/leader-epoch-checkpoint: entry 1 4 added (below the last batch)", 7,
     "carries leader epoch 0, where its leader-epoch-checkpoint gives epoch 1"),
    # the coordinator partition's own checkpoints, compared with its batches (an ongoing verdict rests on them too)
    ("real/kraft-tv2", "__transaction_state-43/leader-epoch-checkpoint: last entry 0 0 -> 0 1", 7,
     "of __transaction_state-43 ("),
    ("real/kraft-rv3.9-tv0", "__transaction_state-43/leader-epoch-checkpoint: entry 1 4 added (below the last batch)",
     7, "carries leader epoch 0, where its leader-epoch-checkpoint gives epoch 1"),
    ("real/kraft-tv2", "replication-offset-checkpoint: __transaction_state-43 5 -> 4", 7,
     "past its high watermark 4 (replication-offset-checkpoint) although its broker stopped cleanly"),
    # the snapshot against the history for the partition's other producers: no verdict on it rests on it whole
    ("state/interleaved", "broker-1/mixed-0/00000000000000000016.snapshot: producer 8000 epoch +1", 7,
     "contradicts itself for producer 8000"),
    ("state/interleaved", "broker-1/mixed-0/00000000000000000016.snapshot: producer 8001 producer id +1000", 7,
     "holds its last batch at offset 12, but the log, which holds offsets 0 to 15, has no batch of it"),
    ("state/interleaved", "broker-1/mixed-0/00000000000000000016.snapshot holding the state below offset 14", 7,
     "gives its last batch at offset"),
    ("live/restart", "rs-0/00000000000000000013.snapshot: producer 0 producer id +1000", 7,
     "lists producer 1000 more than once"),
    # a leader records its epoch when elected: a clean stop's checkpoint ends at the epoch the metadata gives
    ("live/restart", "__transaction_state-3/leader-epoch-checkpoint: last entry 2 2 removed", 7,
     "ends at leader epoch 0, although __cluster_metadata makes its broker the leader at epoch 2"),
    # the replicas' leader-epoch evidence the choice of the copy read rests on
    ("hanging/unclean-election", "broker-1/ue-0/leader-epoch-checkpoint: entry 1 4 added (a new leader at the log end)",
     7, "starts leader epoch 1 at offset 3, that of the copy read"),
    ("hanging/unclean-election", "broker-1/ue-0/leader-epoch-checkpoint: entry 1 3 added (below the last batch)", 7,
     "carries leader epoch 0, where its leader-epoch-checkpoint gives epoch 1"),
    # a transition Kafka allows, in a record no coordinator writes (TransactionMetadata.completeTransitionTo)
    ("real/kraft-rv3.9-tv0", "__transaction_state-43/00000000000000000000.log: record at offset 4 duplicated at 5", 7,
     "the same record as the one before it"),
    ("real/kraft-rv3.9-tv0", "__transaction_state-43/00000000000000000000.log: record at offset 1 re-appended at 5",
     7, "txnLastUpdateTimestamp 1795211725759 before the previous record's"),
    # the group coordinator's offset commit batches carry no sequence numbers: the copy's CRC tells it
    ("real/kraft-tv2", "__consumer_offsets-42/00000000000000000000.log: batch 5 (producer 17 epoch 0) copied to 10, "
     "checkpoints follow", 7, "holds the same records as the first batch of producer 17's transaction at offset 5"),
    # retention left no batch of the open transaction: the older snapshot is the other witness
    ("hanging/retention", f"{RET_SNAPSHOT}: producer 1000 epoch +1", 7,
     "gives producer epoch 1 and coordinator epoch -1, the older producer snapshot"),
    ("hanging/retention", f"{RET_SNAPSHOT}: producer 1000 producer id +1000", 7, "but the older producer snapshot"),
    ("hanging/retention", f"{RET_SNAPSHOT}: producer 1000 currentTxnFirstOffset cleared", 7,
     "open since offset 0 in the older producer snapshot"),
]


def test_swept_mutations_are_never_armed_nor_all_clear(tmp_path):
    """Each disk is built, analysed and its mutations listed once, each case applied and undone in turn (as the
    sweep does: the undo gives every byte and mtime back, tests/analysis/test_evidence_sweep.py)."""
    from tests.analysis.evidence_mutations import Workspace, mutations
    from tests.analysis.evidence_sweep import analyse, armed_keys, baseline, make_disk

    cases: dict = {}
    for name, what, code, said in SWEPT:
        cases.setdefault(name, []).append((what, code, said))
    for name, wanted in cases.items():
        disk = make_disk(name, tmp_path / name.replace("/", "_").replace(" ", "_"))
        base = baseline(disk)
        ws = Workspace(disk.root)
        muts = mutations(disk, ws, base.open_rows)
        for what, code, said in wanted:
            found = [m for m in muts if m.what == what or m.what.endswith(": " + what)]
            assert len(found) == 1, (name, what, len(found))
            try:
                found[0].apply(ws)
                run = analyse(disk)
            finally:
                ws.undo()
            shown = " ".join([r.get("reason") or "" for r in run.rows] + list(run.notes))
            assert run.exit_code == code and not (armed_keys(run) - base.armed), (name, what, run.exit_code, shown)
            assert said in shown, (name, what, shown)
