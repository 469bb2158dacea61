"""forensics.state.cluster_replay: hand-made ``__cluster_metadata`` record sequences folded as Kafka's
``MetadataDelta`` replays them (RemoveTopic, leader changes, ISR shrink, directory reassignment, records
Kafka's replay refuses). The records are encoded from Kafka's schemas (tests' encoder) and decoded by ours."""

from __future__ import annotations


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensics.codec import metadata_records as mr
from forensics.codec.primitives import encode_uvarint
from forensics.codec.schema_encode import encode_message
from forensics.findings import FindingKind
from forensics.state.cluster_replay import ClusterReplay, MetadataEntry, fold_cluster_metadata
from tests.tiers import examples

T1, T2 = "8lcNX76IRyS8K4uhfPhddw", "mvsN8EDlQeacr-_2H09zaw"
D1, D2, D3 = "lMXTcDlVjZjX-4CQmJ2Liw", "fOQl8zSZqbLdV3OFPMnABA", "hvcu-MyFWqWr7fgh84gL4Q"


def rec(api_key: int, version: int, data: dict) -> mr.MetadataRecord:
    value = encode_uvarint(1) + encode_uvarint(api_key) + encode_uvarint(version) + encode_message(
        mr.METADATA_MESSAGES[api_key], version, data)
    return mr.decode_metadata_record(value)


def topic(name: str, tid: str):
    return rec(2, 0, {"name": name, "topicId": tid})


def partition(tid: str, p: int, replicas, isr, leader: int, dirs=(), epoch: int = 0, version: int = 2, **extra):
    data = {"partitionId": p, "topicId": tid, "replicas": list(replicas), "isr": list(isr), "removingReplicas": [],
            "addingReplicas": [], "leader": leader, "leaderEpoch": epoch, "partitionEpoch": 0,
            "directories": list(dirs), **extra}
    return rec(3, version, data)


def change(tid: str, p: int, version: int = 2, **fields):
    return rec(5, version, {"partitionId": p, "topicId": tid, **fields})


def broker(b: int, epoch: int, dirs=(), fenced: bool = True):
    return rec(0, 3, {"brokerId": b, "incarnationId": "pQbsnDoCT0ONq1G4Bnrj5g", "brokerEpoch": epoch, "endPoints": [
        {"name": "PLAINTEXT", "host": "h", "port": 9092, "securityProtocol": 0}], "features": [
        {"name": "metadata.version", "minSupportedVersion": 7, "maxSupportedVersion": 27}], "rack": "r1",
        "fenced": fenced, "logDirs": list(dirs)})


def fold(*records, start: int = 0):
    return fold_cluster_metadata(MetadataEntry(start + i, 1000 + i, r, "m.log", 100 * i) for i, r in enumerate(records))


def only_finding(image, kind: FindingKind) -> str:
    [f] = image.findings
    assert f.kind is kind
    return f.message


def test_topic_and_partitions_then_leader_change_and_isr_shrink():
    image = fold(topic("orders", T1), partition(T1, 0, [1, 2, 3], [1, 2, 3], 1, [D1, D2, D3]),
                 partition(T1, 1, [2, 3, 1], [2, 3, 1], 2, [D2, D3, D1]),
                 change(T1, 0, isr=[1, 3]),  # ISR shrink: no leader change, the leader epoch stays
                 change(T1, 0, leader=3, isr=[3]))  # leader change: the leader epoch bumps
    p0 = image.partition("orders", 0)
    assert (p0.leader, p0.leader_epoch, p0.partition_epoch, p0.isr) == (3, 1, 2, (3,))
    assert p0.directories == (D1, D2, D3) and p0.leader_directory == D3 and p0.directory_of(1) == D1
    assert p0.changed_offset == 4 and p0.topic_partition == ("orders", 0)
    assert image.partition_count("orders") == 2 and image.partition_count("payments") is None
    assert [p.topic_partition for p in image.replicas_on(2, D2)] == [("orders", 0), ("orders", 1)]
    assert [p.partition for p in image.led_by(2)] == [1]
    assert (image.newest_offset, image.newest_timestamp, image.records, image.findings) == (4, 1004, 5, ())


def test_controlled_shutdown_leaves_no_leader_but_the_last_one_is_kept():
    image = fold(topic("orders", T1), partition(T1, 0, [1], [1], 1, [D1]),
                 change(T1, 0, leader=-1, isr=[], eligibleLeaderReplicas=[1], lastKnownElr=[1]))
    p = image.partition("orders", 0)
    assert (p.leader, p.leader_epoch, p.isr, p.elr, p.last_known_elr) == (-1, 1, (), (1,), (1,))
    assert (p.last_leader, p.last_leader_epoch, p.leader_directory) == (1, 0, D1)
    assert [q.partition for q in image.led_by(1)] == [0]


def test_directory_reassignment_and_the_reserved_directory_ids():
    image = fold(topic("t", T1), partition(T1, 0, [1, 2], [1, 2], 1, [D1, mr.DIRECTORY_UNASSIGNED]),
                 change(T1, 0, directories=[D3, mr.DIRECTORY_LOST]))  # moved between log dirs (KIP-858)
    p = image.partition("t", 0)
    assert p.directories == (D3, mr.DIRECTORY_LOST) and p.leader_epoch == 0 and p.partition_epoch == 1
    assert [p.directory_name(d) for d in p.directories] == [None, "LOST"]
    assert p.directory_name(mr.DIRECTORY_UNASSIGNED) == "UNASSIGNED"
    assert p.directory_name(mr.DIRECTORY_MIGRATING) == "MIGRATING"
    assert p.directory_name("AAAAAAAAAAAAAAAAAAAAYw") == "RESERVED(99)"


def test_records_before_directories_read_as_migrating():
    """PartitionRecord v0 (before 3.7-IV2): ``defaultToMigrating`` gives every replica MIGRATING; a later
    change that moves the replicas keeps them so until directories are named."""
    image = fold(topic("t", T1), partition(T1, 0, [1, 2], [1, 2], 1, version=0),
                 change(T1, 0, version=0, replicas=[1, 2, 3], isr=[1, 2, 3]))
    assert image.partition("t", 0).directories == (mr.DIRECTORY_MIGRATING,) * 3 and not image.findings


def test_remove_topic_drops_its_partitions_and_a_change_for_it_is_refused():
    image = fold(topic("a", T1), partition(T1, 0, [1], [1], 1, [D1]), topic("b", T2),
                 partition(T2, 0, [1], [1], 1, [D1]), rec(9, 0, {"topicId": T1}), change(T1, 0, leader=1))
    assert list(image.topics) == ["b"] and image.topic_by_id(T1) is None
    assert [p.topic for p in image.partitions()] == ["b"]
    message = only_finding(image, FindingKind.METADATA_REPLAY)
    assert message == f"PARTITION_CHANGE_RECORD at offset 5: topic id {T1} is not in the image; not applied"
    [f] = image.findings
    assert (f.path, f.position, f.first_offset) == ("m.log", 500, 5)


def test_unknown_topic_id_unknown_partition_and_mismatched_directories_are_findings_not_errors():
    image = fold(partition(T1, 0, [1], [1], 1, [D1]), topic("t", T1), change(T1, 7, leader=1),
                 partition(T1, 1, [1, 2], [1], 1, [D1]), rec(9, 0, {"topicId": T2}))
    assert [f.kind for f in image.findings] == [FindingKind.METADATA_REPLAY] * 4
    assert [f.first_offset for f in image.findings] == [0, 2, 3, 4]
    assert "1 directories for 2 replicas" in image.findings[2].message
    assert image.partition_count("t") == 0


def test_a_record_that_does_not_decode_is_a_finding():
    image = fold_cluster_metadata([MetadataEntry(3, 5, None, "m.log", 40, "Unknown metadata id 99")])
    message = only_finding(image, FindingKind.CORRUPT_METADATA_RECORD)
    assert message == "metadata record at offset 3 does not decode: Unknown metadata id 99; skipped"
    assert image.records == 1 and image.newest_offset == 3


def test_brokers_register_fence_change_and_unregister():
    image = fold(broker(1, 10, [D2, D1]), rec(17, 0, {"brokerId": 1, "brokerEpoch": 10, "fenced": -1}),
                 broker(2, 11, [D3]), rec(7, 0, {"id": 2, "epoch": 11}),
                 rec(17, 2, {"brokerId": 1, "brokerEpoch": 10, "inControlledShutdown": 1, "logDirs": [D3]}))
    b1, b2 = image.brokers[1], image.brokers[2]
    assert (b1.epoch, b1.fenced, b1.in_controlled_shutdown, b1.log_dirs, b1.rack) == (10, False, True, (D3,), "r1")
    assert b2.fenced and b2.registered_offset == 2 and b1.supported("metadata.version").max_supported == 27
    assert image.log_dirs() == ((1, D3), (2, D3))
    assert list(fold(broker(1, 10), rec(1, 0, {"brokerId": 1, "brokerEpoch": 10})).brokers) == []


def test_log_dirs_sorted_as_kafkas_uuid_order():
    """``BrokerRegistration`` sorts its directories by ``Uuid.compareTo`` (signed 64-bit halves)."""
    minus_one = "_____________________w"  # 0xff..: -1, above D1 (0x94..: far below zero), below LOST (0)
    dirs = fold(broker(1, 1, [D2, minus_one, mr.DIRECTORY_LOST, D1])).brokers[1].log_dirs
    assert dirs == (D1, minus_one, mr.DIRECTORY_LOST, D2)  # D2 = 0x7c..: positive, last


@pytest.mark.parametrize("record, problem", [
    (rec(7, 0, {"id": 1, "epoch": 9}), "cannot fence broker 1 at epoch 9: its registered epoch is 10"),
    (rec(8, 0, {"id": 5, "epoch": 10}), "cannot unfence broker 5: it is not registered"),
    (rec(17, 0, {"brokerId": 1, "brokerEpoch": 10, "fenced": 7}), "unknown value for fenced: 7"),
])
def test_broker_changes_kafka_refuses(record, problem):
    image = fold(broker(1, 10), record)
    assert problem in only_finding(image, FindingKind.METADATA_REPLAY)
    assert image.brokers[1].fenced


def test_clear_elr_bumps_the_partition_epoch_only_where_there_is_an_elr():
    image = fold(topic("t", T1), partition(T1, 0, [1], [], -1, [D1], eligibleLeaderReplicas=[1], lastKnownElr=[1]),
                 partition(T1, 1, [1], [1], 1, [D1]), rec(28, 0, {"topicName": "t"}))
    p0, p1 = image.partition("t", 0), image.partition("t", 1)
    assert (p0.elr, p0.last_known_elr, p0.partition_epoch, p1.partition_epoch) == ((), (), 1, 0)
    assert "no topic named 'x'" in only_finding(fold(rec(28, 0, {"topicName": "x"})), FindingKind.METADATA_REPLAY)


def test_topic_record_for_an_existing_id_drops_its_partitions_as_kafka_does():
    image = fold(topic("t", T1), partition(T1, 0, [1], [1], 1, [D1]), topic("t2", T1))
    assert list(image.topics) == ["t2"] and image.partition_count("t2") == 0
    assert "1 partitions dropped" in only_finding(image, FindingKind.METADATA_REPLAY)


def test_features_and_producer_ids():
    image = fold(rec(12, 0, {"name": "metadata.version", "featureLevel": 21}),
                 rec(12, 0, {"name": "transaction.version", "featureLevel": 2}),
                 rec(12, 0, {"name": "transaction.version", "featureLevel": 0}),
                 rec(12, 0, {"name": "metadata.version", "featureLevel": 27}),
                 rec(15, 0, {"brokerId": 1, "brokerEpoch": 10, "nextProducerId": 2000}))
    assert dict(image.features) == {"metadata.version": 27, "transaction.version": 0}
    assert (image.metadata_version, image.feature("transaction.version"), image.feature("group.version")) == (27, 0, 0)
    assert image.next_producer_id == 2000


def test_snapshot_records_have_no_offset_and_mark_sets_the_position():
    replay = ClusterReplay()
    replay.apply(MetadataEntry(None, 7, topic("t", T1), "s.checkpoint", 0))
    replay.mark(99, 1234)
    image = replay.image(origin="snapshot")
    assert (image.newest_offset, image.newest_timestamp, image.origin, image.complete) == (99, 1234, "snapshot", True)
    bad = ClusterReplay()
    bad.apply(MetadataEntry(None, 7, change(T1, 0, leader=1), "s.checkpoint", 61))
    assert bad.image().findings[0].message.startswith("PARTITION_CHANGE_RECORD at a snapshot record: ")


def test_the_image_is_frozen():
    image = fold(topic("t", T1), partition(T1, 0, [1], [1], 1, [D1]))
    with pytest.raises(TypeError):
        image.topics["x"] = None  # type: ignore[index]
    with pytest.raises(AttributeError):
        image.records = 3  # type: ignore[misc]
    empty: object | None = fold()
    assert empty.empty and empty.partition("t", 0) is None and list(empty.partitions("t")) == []


def _real_records():
    from pathlib import Path

    from tests.oracle import iter_v2_records
    log = Path(__file__).resolve().parents[2] / "fixtures/real/kraft-tv2/disk/__cluster_metadata-0" / \
        "00000000000000000000.log"
    return [mr.decode_metadata_record(v) for _, _, v, c in iter_v2_records(log.read_bytes()) if not c]


REAL_RECORDS = _real_records()


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.sampled_from(REAL_RECORDS[:120] + REAL_RECORDS[-60:]), max_size=60))
def test_any_order_of_real_records_folds_without_raising(records):
    """Out of order, duplicated, or without their topic: every record is applied or a finding, never an error."""
    image = fold(*records)
    assert image.records == len(records)
    assert all(f.kind is FindingKind.METADATA_REPLAY and f.path == "m.log" for f in image.findings)
    assert all(p.topic in image.topics for p in image.partitions())
