"""One cluster at a time: inputs of several clusters are refused unless --cluster-id picks one;
inputs without a cluster.id join a cluster by their topic ids (with a finding); two copies of one
broker's disk are not two replicas: the newer is used and one line says which and why."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
import forensics.cli.scan_cmd  # noqa: F401
from forensics.cli.app import app
from forensics.errors import UsageError
from forensics.findings import FindingKind
from forensics.layout.discovery import discover
from forensics.layout.clusters import select_cluster
from tests.machine_output import rows_of

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"
TV2, TV0 = REAL / "kraft-tv2" / "disk", REAL / "kraft-rv3.9-tv0" / "disk"
TV2_ID, TV0_ID = "TW9-1HLgQpieFawninaYyg", "1gj0DDsrRvC-0i68J5tmBQ"
EXAMPLE = REPO / "fixtures" / "example-disk" / "broker-1"
runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> Path:
    """The two real runs (both node 1, two cluster ids) in one folder, as an investigator gets them
    (copies: a symlink inside the evidence leading out of it is not followed); copied once, only read."""
    root = tmp_path_factory.mktemp("clusters") / "disks"
    root.mkdir()
    shutil.copytree(TV2, root / "kraft-tv2")
    shutil.copytree(TV0, root / "kraft-rv3.9-tv0")
    return root


REFUSED = (f"kafka-forensics: the inputs hold 2 clusters, which are never replicas of each other: {TV0_ID} "
           f"(kraft-rv3.9-tv0), {TV2_ID} (kraft-tv2); analyse one at a time with --cluster-id ID")


@pytest.mark.parametrize("command", [
    ("scan",), ("find-hanging",), ("abort-commands", "--bootstrap-server", "h:9092"), ("list",),
    ("describe", "--transactional-id", "d-tx-ongoing"),
    ("describe-producers", "--topic", "d-txn-ongoing", "--partition", "0"),
])
def test_two_clusters_are_refused_with_one_line(both, command):
    r = run(command[0], both, *command[1:])
    assert r.exit_code == 2, r.output
    assert r.stdout == "" and r.stderr.splitlines() == [REFUSED]


def test_cluster_id_picks_one_and_says_what_is_left_out(both):
    alone = run("find-hanging", TV2, "--all", "--format", "json")
    picked = run("find-hanging", both, "--all", "--format", "json", "--cluster-id", TV2_ID)
    assert picked.exit_code == alone.exit_code == 0
    assert picked.stdout == alone.stdout.replace(str(TV2), str(both / "kraft-tv2"))
    assert picked.stderr.splitlines()[0] == (f"kafka-forensics: cluster {TV2_ID}: left out the inputs of other "
                                             f"clusters: {TV0_ID} (kraft-rv3.9-tv0)")
    scan = json.loads(run("scan", both, "--format", "json", "--cluster-id", TV0_ID).stdout)
    assert [(d["clusterId"], d["path"]) for d in scan["logDirs"]] == [(TV0_ID, str(both / "kraft-rv3.9-tv0"))]
    assert not [f for f in scan["findings"] if f["kind"] == "duplicate_broker"]  # one broker 1 now
    wrong = run("scan", both, "--cluster-id", "nope")
    assert wrong.exit_code == 2
    assert wrong.stderr.splitlines() == [f"kafka-forensics: --cluster-id nope: no such cluster in the evidence; "
                                         f"clusters: {TV0_ID} (kraft-rv3.9-tv0), {TV2_ID} (kraft-tv2)"]


def test_partition_dirs_given_alone_belong_to_their_log_dirs_cluster():
    parts = [TV2 / "d-txn-ongoing-0", TV0 / "d-txn-ongoing-0"]
    with pytest.raises(UsageError) as e:
        select_cluster(discover([str(p) for p in parts]))
    assert f"{TV0_ID} (kraft-rv3.9-tv0/disk/d-txn-ongoing-0)" in str(e.value)
    sel = select_cluster(discover([str(p) for p in parts]), TV0_ID)
    assert [p.path for p in sel.inventory.partitions] == [str(parts[1])]


def _strip_meta(tmp_path: Path, source: Path, name: str) -> Path:
    """A copy of a log dir without its meta.properties (as a ZooKeeper-era copy may come)."""
    copy = tmp_path / name
    shutil.copytree(source, copy)
    os.unlink(copy / "meta.properties")
    return copy


def test_a_log_dir_without_cluster_id_joins_the_cluster_of_its_topic_ids(tmp_path):
    other = tmp_path / "broker-2"  # another broker's disk, copied without meta.properties
    shutil.copytree(TV2 / "d-txn-ongoing-1", other / "d-txn-ongoing-1")
    sel = select_cluster(discover([str(TV2), str(TV0), str(other)]), TV2_ID)
    assert sorted(d.path for d in sel.inventory.log_dirs) == sorted([str(TV2), str(other)])
    (f,) = [f for f in sel.inventory.findings if f.kind is FindingKind.NO_CLUSTER_ID]
    assert f.path == str(other) and f.level.value == "info"
    assert f.message == ("this log dir has no cluster.id (no meta.properties naming one); taken as cluster "
                         f"{TV2_ID}, whose log dirs hold the same topic ids (d-txn-ongoing)")
    # a whole copy of tv2 without meta.properties beside the other cluster: the topic names match, the ids not
    bare = _strip_meta(tmp_path, TV2, "tv2-bare")
    with pytest.raises(UsageError) as e:
        select_cluster(discover([str(TV0), str(bare)]))
    assert str(e.value).startswith(f"the inputs hold 1 clusters and inputs of an unknown cluster, which are never "
                                   f"replicas of each other: {TV0_ID} (")
    sel = select_cluster(discover([str(TV0), str(bare)]), TV0_ID)
    assert [d.path for d in sel.inventory.log_dirs] == [str(TV0)]
    assert sel.notes[0].endswith("left out the inputs of other clusters: unknown cluster (tv2-bare)")
    # alone, nothing names a cluster: one group, nothing said
    sel = select_cluster(discover([str(bare)]))
    assert sel.cluster_id is None and not [f for f in sel.inventory.findings if f.kind is FindingKind.NO_CLUSTER_ID]


def test_a_log_dir_without_cluster_id_or_shared_topic_id_is_assumed_or_unknown(tmp_path):
    zk = tmp_path / "zk-broker-2"
    shutil.copytree(EXAMPLE / "orders-0", zk / "orders-0")
    os.unlink(zk / "orders-0" / "partition.metadata")  # pre-2.8: no topic id
    sel = select_cluster(discover([str(TV2), str(zk)]))
    (f,) = [f for f in sel.inventory.findings if f.kind is FindingKind.NO_CLUSTER_ID]
    assert f.level.value == "warning" and f.message == (
        "this log dir has no cluster.id (no meta.properties naming one) and no topic id that tells; assumed to be "
        f"of cluster {TV2_ID}, the only cluster among the inputs")
    with pytest.raises(UsageError) as e:  # two clusters: it cannot be placed
        select_cluster(discover([str(TV2), str(TV0), str(zk)]))
    assert str(e.value).endswith("unknown cluster (zk-broker-2); analyse one at a time with --cluster-id ID (give "
                                 "inputs of an unknown cluster on their own)")
    sel = select_cluster(discover([str(TV2), str(TV0), str(zk)]), TV0_ID)
    assert sel.notes == (f"cluster {TV0_ID}: left out the inputs of other clusters: {TV2_ID} (kraft-tv2/disk), "
                         "unknown cluster (zk-broker-2)",)


def _older_copy(tmp_path: Path) -> Path:
    """A copy of the example broker taken earlier: orders-0 ends 2 batches sooner, its checkpoints behind."""
    old = tmp_path / "monday" / "broker-1"
    shutil.copytree(EXAMPLE, old)
    hw = old / "replication-offset-checkpoint"
    hw.write_text(hw.read_text().replace("orders 0 16", "orders 0 14"))
    return old


def test_two_copies_of_one_broker_the_newer_is_used(tmp_path):
    new = tmp_path / "tuesday" / "broker-1"
    shutil.copytree(EXAMPLE, new)
    old = _older_copy(tmp_path)
    r = run("find-hanging", tmp_path, "--format", "json")
    alone = run("find-hanging", new, "--format", "json")
    assert r.exit_code == alone.exit_code == 1
    assert r.stdout == alone.stdout
    assert r.stderr.splitlines()[0] == (
        "kafka-forensics: broker 1 of cluster a2Fma2EtZm9yZW5zaWNzLQ is in 2 log dirs holding the same partitions "
        f"(copies of one disk): using {new}, the newer (ahead on 1 of 7 shared partitions, e.g. orders-0 high "
        f"watermark 16 vs 14; not behind on any); left out {old}")
    scan = json.loads(run("scan", tmp_path, "--format", "json").stdout)
    assert [d["path"] for d in scan["logDirs"]] == [str(new)]


def test_identical_copies_the_first_is_used(tmp_path):
    for name in ("a", "b"):
        shutil.copytree(EXAMPLE, tmp_path / name / "broker-1")
    sel = select_cluster(discover([str(tmp_path)]))
    assert [d.path for d in sel.inventory.log_dirs] == [str(tmp_path / "a" / "broker-1")]
    assert sel.notes == ("broker 1 of cluster a2Fma2EtZm9yZW5zaWNzLQ is in 2 log dirs holding the same partitions "
                         f"(copies of one disk): using {tmp_path / 'a' / 'broker-1'} (the copies have the same "
                         f"checkpoints and log sizes); left out {tmp_path / 'b' / 'broker-1'}",)


def test_copies_each_ahead_somewhere_are_refused(tmp_path):
    _older_copy(tmp_path)  # behind on orders-0
    b = tmp_path / "other" / "broker-1"
    shutil.copytree(EXAMPLE, b)
    hw = b / "replication-offset-checkpoint"
    hw.write_text(hw.read_text().replace("payments 0 12", "payments 0 11"))  # behind on payments-0
    r = run("scan", tmp_path)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        "kafka-forensics: broker 1 of cluster a2Fma2EtZm9yZW5zaWNzLQ is in 2 log dirs holding the same partitions "
        "(monday/broker-1, other/broker-1), and none is ahead of the others on all of them: give only the copy to "
        "analyse"]
    assert run("scan", b).exit_code == 0


def test_jbod_dirs_of_one_broker_stay_together(tmp_path):
    """One broker's log dirs hold disjoint partitions: both are analysed, nothing is said."""
    one, two = tmp_path / "d1", tmp_path / "d2"
    shutil.copytree(EXAMPLE, one)
    shutil.copytree(EXAMPLE, two)
    for name in ("orders-0", "orders-1"):
        shutil.rmtree(one / name)
    for name in ("payments-0", "__transaction_state-0", "__transaction_state-1", "__transaction_state-2",
                 "__cluster_metadata-0"):  # the metadata log lives in one log dir
        shutil.rmtree(two / name)
    sel = select_cluster(discover([str(one), str(two)]))
    assert sorted(d.path for d in sel.inventory.log_dirs) == [str(one), str(two)] and sel.notes == ()


SHARED = Path("/work/shared/real-kafka/4.1.0")


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared real Kafka disks are not on this machine")
def test_the_shared_real_runs_copied_side_by_side(tmp_path):
    root = tmp_path / "incident"
    for run_name in ("kraft-tv2", "kraft-rv3.9-tv0"):
        shutil.copytree(SHARED / run_name / "data", root / run_name / "data")
    r = run("find-hanging", root)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"kafka-forensics: the inputs hold 2 clusters, which are never replicas of each other: {TV0_ID} "
        f"(kraft-rv3.9-tv0/data), {TV2_ID} (kraft-tv2/data); analyse one at a time with --cluster-id ID"]
    # as of the broker's stop (a copy's file times are the copy's: d-tx-ongoing would look overdue)
    picked = run("find-hanging", root, "--cluster-id", TV0_ID, "--all", "--format", "json",
                 "--as-of", "2026-11-20T21:55:36.934Z")
    assert picked.exit_code == 0
    assert {(x["topic"], x["partition"], x["verdict"]) for x in rows_of(picked.stdout)} == {
        ("d-txn-ongoing", 0, "ongoing"), ("d-txn-ongoing", 1, "ongoing")}
