"""Several brokers' disks: a marker lost on the new leader after an unclean election (KAFKA-7408).

Built from the real Kafka 4.1 files: broker 1 holds b-txn-aborts-0 as written (b-tx-fenced, pid 5,
commits offsets 29..31 with COMMIT @32); broker 2 holds the same log without its last 78-byte
batch (the COMMIT marker) and became leader at epoch 1 from offset 32, as an unclean election
would leave it. The coordinator (``__transaction_state-49``) says CompleteCommit. Both brokers stopped
cleanly afterwards (``.kafka_cleanshutdown``): the copies are final (see analysis/quiescence.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401
from fixtures.generator import RecordSpec, encode_v2_batch
from forensics.analysis.replicas import compare_replicas
from forensics.cli.app import app
from forensics.runs.rebuild import load_state
from tests.machine_output import rows_of

DISK = Path(__file__).resolve().parents[2] / "fixtures" / "real" / "kraft-tv2" / "disk"
PART = "b-txn-aborts-0"


def _broker(root: Path, node: int) -> Path:
    d = root / f"broker-{node}"
    d.mkdir()
    (d / "meta.properties").write_text(f"node.id={node}\nversion=1\ncluster.id=TW9-1HLgQpieFawninaYyg\n")
    (d / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":%d}' % (10 + node))  # both stopped cleanly
    for name in (PART, "__transaction_state-49"):
        shutil.copytree(DISK / name, d / name)
    return d


def make_two_brokers(root: Path) -> Path:
    _broker(root, 1)
    b2 = _broker(root, 2)
    log = b2 / PART / "00000000000000000000.log"
    data = log.read_bytes()
    log.write_bytes(data[:-78])  # the COMMIT marker of pid 5 at offset 32 is gone
    (b2 / PART / "00000000000000000033.snapshot").unlink()  # the broker deletes snapshots past its log end
    (b2 / PART / "00000000000000000000.timeindex").write_bytes(b"")  # its only entry names the marker's offset
    (b2 / PART / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n1 32\n")
    return root


def test_marker_lost_on_the_leader_is_hanging_with_the_other_replica_as_evidence(tmp_path):
    root = make_two_brokers(tmp_path)
    r = CliRunner().invoke(app, ["find-hanging", str(root), "--format", "json", "--no-progress"])
    assert r.exit_code == 1, r.output
    [row] = rows_of(r.stdout)
    assert (row["topic"], row["partition"], row["producerId"], row["startOffset"], row["brokerId"]) == (PART[:-2], 0,
                                                                                                       5, 29, 2)
    assert row["verdict"] == "hanging" and "CompleteCommit" in row["reason"]
    assert "KAFKA-7408" in row["reason"] and "broker 1 holds its COMMIT marker at offset 32" in row["reason"]
    assert row["abortArgs"][-4:] == ["--producer-epoch", "2", "--coordinator-epoch", "0"]


def test_behind_is_not_divergent_but_a_different_batch_at_the_marker_offset_is(tmp_path):
    root = make_two_brokers(tmp_path)
    rep = load_state([str(root)], topic=PART[:-2], partition=0)
    views = rep.replicas(PART[:-2], 0)
    assert sorted((v.inputs.broker_id, v.log_end_offset) for v in views) == [(1, 33), (2, 32)]
    assert compare_replicas(views) == []  # broker 2 only lacks the tail: behind, not divergent
    # the new leader went on writing: a plain batch at offset 32, where broker 1 has the COMMIT marker
    log = root / "broker-2" / PART / "00000000000000000000.log"
    log.write_bytes(log.read_bytes() + encode_v2_batch(32, [RecordSpec(key=b"k", value=b"v")],
                                                       partition_leader_epoch=1))
    views = load_state([str(root)], topic=PART[:-2], partition=0).replicas(PART[:-2], 0)
    found = compare_replicas(views)
    assert {f.kind.value for f in found} == {"replica_divergence"}
    marker = [f for f in found if "COMMIT marker of producer 5 at offset 32" in f.message]
    assert marker and marker[0].path.endswith("broker-1/b-txn-aborts-0/00000000000000000000.log")
    [differs] = [f.message for f in found if "producer 5 differs" in f.message]  # same log end, different entries
    # in describe-producers' words, field by field (issue 24: it was two Python reprs)
    assert differs.startswith("b-txn-aborts-0: producer 5 differs between broker 1 and broker 2 at the same log "
                              "end 33: "), differs
    assert "ProducerState(" not in differs and "None" not in differs and " on broker 1, " in differs
