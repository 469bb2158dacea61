"""forensics.codec.metadata_records: KRaft metadata records, Kafka 4.1 --cluster-metadata-decoder text
(the control records of the same logs: tests/codec/test_control.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensics.codec import control
from forensics.codec import metadata_records as mr
from forensics.codec.primitives import encode_uvarint
from forensics.codec.schema_encode import encode_message
from forensics.codec.schema_json import java_double
from forensics.errors import CorruptInputError
from tests.oracle import dump_tails, iter_v2_records
from tests.tiers import examples

REAL = Path("/work/shared/real-kafka/4.1.0")
RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")
h = bytes.fromhex


# --------------------------------------------------------------------------- test-local helpers

def our_tail(offset: int, key: bytes | None, value: bytes | None, is_control: bool) -> str:
    if is_control:
        return " " + control.format_control_record(key, value)
    return " payload: " + mr.format_metadata_record(value, offset)


def frame(api_key: int, version: int, body: bytes) -> bytes:
    return encode_uvarint(1) + encode_uvarint(api_key) + encode_uvarint(version) + body


def metadata_value(api_key: int, version: int, data: dict) -> bytes:
    return frame(api_key, version, encode_message(mr.METADATA_MESSAGES[api_key], version, data))


# --------------------------------------------------------------------------- real Kafka 4.1 output

# (value hex, text Kafka 4.1 printed after "payload: "), from both real runs' logs
REAL_RECORDS = [
    ("01170001001212426f6f747374726170207265636f726473",
     '{"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"Bootstrap records"}}'),
    ("01110000000001000000000000000a010001ff",
     '{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":0,"data":{"brokerId":1,"brokerEpoch":10,"fenced":-1}}'),
    ("01110100000001000000000000000a01010101",
     '{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":1,"data":{"brokerId":1,"brokerEpoch":10,'
     '"inControlledShutdown":1}}'),
    ("0102000d612d74786e2d6f7264657273f2570d5fbe884724bc2b8ba17cf85d7700",
     '{"type":"TOPIC_RECORD","version":0,"data":{"name":"a-txn-orders","topicId":"8lcNX76IRyS8K4uhfPhddw"}}'),
    ("01030200000000f2570d5fbe884724bc2b8ba17cf85d770200000001020000000101010000000100000000000000000294c5d370"
     "39558d98d7fb8090989d8b8b00",
     '{"type":"PARTITION_RECORD","version":2,"data":{"partitionId":0,"topicId":"8lcNX76IRyS8K4uhfPhddw",'
     '"replicas":[1],"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":0,'
     '"partitionEpoch":0,"directories":["lMXTcDlVjZjX-4CQmJ2Liw"]}}'),
    ("01030100000000d6f72475bf45409284628d1072249452020000000102000000010101000000010000000000000000027ce425f3"
     "3499a9b2dd5773853cc9c00400",
     '{"type":"PARTITION_RECORD","version":1,"data":{"partitionId":0,"topicId":"1vckdb9FQJKEYo0QciSUUg",'
     '"replicas":[1],"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":0,'
     '"partitionEpoch":0,"directories":["fOQl8zSZqbLdV3OFPMnABA"]}}'),
    ("011c00145f5f7472616e73616374696f6e5f737461746500",
     '{"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":"__transaction_state"}}'),
    ("010f0000000001000000000000000a00000000000003e800",
     '{"type":"PRODUCER_IDS_RECORD","version":0,"data":{"brokerId":1,"brokerEpoch":10,"nextProducerId":1000}}'),
    ("01050200000000baaa1e554210407c8a80e932db20683a040001010104ffffffff0605020000000107050200000001",
     '{"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":0,"topicId":"uqoeVUIQQHyKgOky2yBoOg",'
     '"isr":[],"leader":-1,"eligibleLeaderReplicas":[1],"lastKnownElr":[1]}}'),
    ("0105010000000080e072c40e6e454a95519adb04453c0c010104ffffffff",
     '{"type":"PARTITION_CHANGE_RECORD","version":1,"data":{"partitionId":0,"topicId":"gOByxA5uRUqVUZrbBEU8DA",'
     '"leader":-1}}'),
    ("0100030000000100a506ec9c3a024f438dab51b8067ae3e6000000000000000a020a504c41494e544558540a3132372e302e302e"
     "3171a4000000070e67726f75702e76657273696f6e00000001000e6b726166742e76657273696f6e0000000100116d6574616461"
     "74612e76657273696f6e0007001b000e73686172652e76657273696f6e0000000100147472616e73616374696f6e2e7665727369"
     "6f6e000000020021656c696769626c652e6c65616465722e7265706c696361732e76657273696f6e000000010000010001001102"
     "94c5d37039558d98d7fb8090989d8b8b",
     '{"type":"REGISTER_BROKER_RECORD","version":3,"data":{"brokerId":1,"isMigratingZkBroker":false,'
     '"incarnationId":"pQbsnDoCT0ONq1G4Bnrj5g","brokerEpoch":10,"endPoints":[{"name":"PLAINTEXT",'
     '"host":"127.0.0.1","port":29092,"securityProtocol":0}],"features":[{"name":"group.version",'
     '"minSupportedVersion":0,"maxSupportedVersion":1},{"name":"kraft.version","minSupportedVersion":0,'
     '"maxSupportedVersion":1},{"name":"metadata.version","minSupportedVersion":7,"maxSupportedVersion":27},'
     '{"name":"share.version","minSupportedVersion":0,"maxSupportedVersion":1},{"name":"transaction.version",'
     '"minSupportedVersion":0,"maxSupportedVersion":2},{"name":"eligible.leader.replicas.version",'
     '"minSupportedVersion":0,"maxSupportedVersion":1}],"rack":null,"fenced":true,"inControlledShutdown":false,'
     '"logDirs":["lMXTcDlVjZjX-4CQmJ2Liw"]}}'),
    ("011b00000000013073bf0426e44e1db76cbd7e59e9631900020b434f4e54524f4c4c45520a3132372e302e302e3171a5000000"
     "070e67726f75702e76657273696f6e0000000100147472616e73616374696f6e2e76657273696f6e000000020021656c696769"
     "626c652e6c65616465722e7265706c696361732e76657273696f6e00000001000e6b726166742e76657273696f6e00000001"
     "00116d657461646174612e76657273696f6e0007001b000e73686172652e76657273696f6e000000010000",
     '{"type":"REGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":1,'
     '"incarnationId":"MHO_BCbkTh23bL1-WeljGQ","zkMigrationReady":false,"endPoints":[{"name":"CONTROLLER",'
     '"host":"127.0.0.1","port":29093,"securityProtocol":0}],"features":[{"name":"group.version",'
     '"minSupportedVersion":0,"maxSupportedVersion":1},{"name":"transaction.version","minSupportedVersion":0,'
     '"maxSupportedVersion":2},{"name":"eligible.leader.replicas.version","minSupportedVersion":0,'
     '"maxSupportedVersion":1},{"name":"kraft.version","minSupportedVersion":0,"maxSupportedVersion":1},'
     '{"name":"metadata.version","minSupportedVersion":7,"maxSupportedVersion":27},{"name":"share.version",'
     '"minSupportedVersion":0,"maxSupportedVersion":1}]}}'),
    ("01140000", '{"type":"NO_OP_RECORD","version":0,"data":{}}'),
    ("01180000", '{"type":"END_TRANSACTION_RECORD","version":0,"data":{}}'),
]

@pytest.mark.parametrize("value_hex,expected", REAL_RECORDS)
def test_real_records(value_hex, expected):
    assert mr.format_metadata_record(h(value_hex), 7) == expected
    rec = mr.decode_metadata_record(h(value_hex))
    assert json.loads(expected)["type"] == rec.type_name


@pytest.mark.skipif(not REAL.is_dir(), reason="/work/shared/real-kafka not present")
def test_every_cluster_metadata_record_of_both_runs():
    counts = {}
    for run in RUNS:
        part = REAL / run / "data" / "__cluster_metadata-0"
        n = 0
        for log in sorted(part.glob("*.log")):
            dump = REAL / run / "dumps" / "__cluster_metadata-0" / (log.name + ".dump.txt")
            expected = dump_tails(dump, '--cluster-metadata-decoder')
            ours = list(iter_v2_records(log.read_bytes()))
            assert len(ours) == len(expected)
            for (off, key, value, ctl), (exp_off, exp_tail) in zip(ours, expected):
                assert off == exp_off
                assert our_tail(off, key, value, ctl) == exp_tail, f"{run} offset {off}"
                n += 1
        counts[run] = n
    assert counts == {"kraft-tv2": 833, "kraft-rv3.9-tv0": 804}


# --------------------------------------------------------------------------- typed decoding


def test_typed_records():
    part = mr.decode_metadata_record(h(REAL_RECORDS[4][0])).typed
    assert part == mr.PartitionRecord("8lcNX76IRyS8K4uhfPhddw", 0, (1,), (1,), 1, 0, 0, ("lMXTcDlVjZjX-4CQmJ2Liw",))
    change = mr.decode_metadata_record(h(REAL_RECORDS[8][0])).typed
    assert isinstance(change, mr.PartitionChangeRecord)
    assert change.leader == -1 and change.leader_changed and change.isr == () and change.replicas is None
    assert (change.elr, change.last_known_elr, change.directories) == ((1,), (1,), None)
    topic = mr.decode_metadata_record(h(REAL_RECORDS[3][0])).typed
    assert topic == mr.TopicRecord("a-txn-orders", "8lcNX76IRyS8K4uhfPhddw")
    pids = mr.decode_metadata_record(h(REAL_RECORDS[7][0])).typed
    assert pids == mr.ProducerIdsRecord(1, 10, 1000)
    unchanged = mr.decode_metadata_record(metadata_value(5, 0, {"partitionId": 3, "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}))
    assert unchanged.typed.leader == -2 and not unchanged.typed.leader_changed
    broker = mr.decode_metadata_record(h(REAL_RECORDS[10][0])).typed
    assert broker == mr.BrokerRegistrationRecord(
        1, 10, "pQbsnDoCT0ONq1G4Bnrj5g", True, ("lMXTcDlVjZjX-4CQmJ2Liw",), None, False, False,
        (mr.Endpoint("PLAINTEXT", "127.0.0.1", 29092, 0),),
        (mr.FeatureRange("group.version", 0, 1), mr.FeatureRange("kraft.version", 0, 1),
         mr.FeatureRange("metadata.version", 7, 27), mr.FeatureRange("share.version", 0, 1),
         mr.FeatureRange("transaction.version", 0, 2), mr.FeatureRange("eligible.leader.replicas.version", 0, 1)))
    assert mr.decode_metadata_record(h("01140000")).typed is None


def test_partition_change_with_leader_epoch_relevant_fields():
    value = metadata_value(5, 2, {"partitionId": 1, "topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "leader": 3,
                                  "isr": [3, 4], "leaderRecoveryState": 1, "directories": ["AAAAAAAAAAAAAAAAAAAAAg"]})
    assert mr.format_metadata_record(value, 0) == (
        '{"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":1,"topicId":"AAAAAAAAAAAAAAAAAAAAAQ",'
        '"isr":[3,4],"leader":3,"leaderRecoveryState":1,"directories":["AAAAAAAAAAAAAAAAAAAAAg"]}}')


def test_other_record_types_render():
    assert mr.format_metadata_record(metadata_value(4, 0, {"resourceType": 2, "resourceName": "t", "name": "k",
                                                           "value": None}), 0) == (
        '{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":2,"resourceName":"t","name":"k","value":null}}')
    quota = metadata_value(14, 0, {"entity": [{"entityType": "user", "entityName": None}], "key": "k",
                                   "value": 1048576.0, "remove": False})
    assert mr.format_metadata_record(quota, 0) == (
        '{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user","entityName":null}],'
        '"key":"k","value":1048576.0,"remove":false}}')
    scram = metadata_value(11, 0, {"name": "u", "mechanism": 1, "salt": b"\x00\x01", "storedKey": b"",
                                   "serverKey": b"\xff", "iterations": 4096})
    assert mr.format_metadata_record(scram, 0) == (
        '{"type":"USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"u","mechanism":1,"salt":"AAE=",'
        '"storedKey":"","serverKey":"/w==","iterations":4096}}')
    assert mr.format_metadata_record(metadata_value(25, 0, {}), 0) == (
        '{"type":"ABORT_TRANSACTION_RECORD","version":0,"data":{}}')
    assert mr.format_metadata_record(metadata_value(21, 0, {"zkMigrationState": 3}), 0) == (
        '{"type":"ZK_MIGRATION_STATE_RECORD","version":0,"data":{"zkMigrationState":3}}')


def test_versions_beyond_valid_range_read_with_nearest_layout():
    # Kafka does not check the frame's version against validVersions for the top level
    value = frame(2, 9, encode_message(mr.METADATA_MESSAGES[2], 0, {"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}))
    assert mr.format_metadata_record(value, 0) == (
        '{"type":"TOPIC_RECORD","version":9,"data":{"name":"t","topicId":"AAAAAAAAAAAAAAAAAAAAAQ"}}')
    # ... but inline structs (BrokerEndpoint) do
    body = encode_message(mr.METADATA_MESSAGES[0], 3, {"endPoints": [{"name": "P", "host": "h", "port": 1}]})
    assert mr.format_metadata_record(frame(0, 4, body), 12) == "Error at 12, skipping. Failed to deserialize record with type 0"


def test_error_strings():
    assert mr.format_metadata_record(None, 3) == "Error at 3, skipping. Error while reading frame version"
    assert mr.format_metadata_record(b"", 3) == "Error at 3, skipping. Error while reading frame version"
    assert mr.format_metadata_record(b"\x00", 3) == (
        "Error at 3, skipping. Could not deserialize metadata record with frame version 0. Note that upgrades "
        "from the preview release of KRaft in 2.8 to newer versions are not supported.")
    assert mr.format_metadata_record(b"\x02\x00\x00", 3) == (
        "Error at 3, skipping. Could not deserialize metadata record due to unknown frame version 2"
        "(only frame version 1 is supported)")
    assert mr.format_metadata_record(b"\x01\x63\x00", 3) == (
        "Error at 3, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 99")
    assert mr.format_metadata_record(b"\x01\x80\x80\x02\x00", 3) == "Error at 3, skipping. Value for type was too large."
    assert mr.format_metadata_record(b"\x01\x14", 3) == "Error at 3, skipping. Error while reading version"
    assert mr.format_metadata_record(b"\x01\x14\x00\x00\x07", 3) == "Error at 3, skipping. Found 1 byte(s) of garbage after 20"
    assert mr.format_metadata_record(b"\x01\x02\x00\x05ab", 3) == "Error at 3, skipping. Failed to deserialize record with type 2"
    # a varint whose 5th byte wraps into a negative Java int becomes a negative short
    assert mr.format_metadata_record(b"\xff\xff\xff\xff\x0f", 3) == (
        "Error at 3, skipping. Could not deserialize metadata record due to unknown frame version -1"
        "(only frame version 1 is supported)")
    with pytest.raises(mr.CorruptMetadataRecordError):
        mr.decode_metadata_record(b"\x01\x63\x00")


def test_java_double():
    assert [java_double(x) for x in (0.0, 1.0, 100.0, 1e7, 1.5e-7, 0.001, 1234.5, -2.5e10, float("nan"))] == [
        "0.0", "1.0", "100.0", "1.0E7", "1.5E-7", "0.001", "1234.5", "-2.5E10", "NaN"]


# --------------------------------------------------------------------------- properties


@settings(max_examples=examples(500), deadline=None)
@given(st.one_of(st.none(), st.binary(max_size=80)), st.integers(0, 2**62))
def test_arbitrary_values_give_text(value, offset):
    text = mr.format_metadata_record(value, offset)
    assert isinstance(text, str)
    if not text.startswith(f"Error at {offset}, skipping. "):
        json.loads(text)
    try:
        rec = mr.decode_metadata_record(value)
        rec.typed
    except CorruptInputError:
        pass


_KNOWN = st.sampled_from(sorted(mr.METADATA_MESSAGES))


@settings(max_examples=examples(500), deadline=None)
@given(_KNOWN, st.integers(0, 4), st.binary(max_size=80))
def test_known_types_with_arbitrary_bodies(api_key, version, body):
    text = mr.format_metadata_record(frame(api_key, version, body), 1)
    if not text.startswith("Error at 1, skipping. "):
        assert json.loads(text)["type"] == mr.METADATA_RECORD_TYPES[api_key]


_i32 = st.integers(-2**31, 2**31 - 1)
_uuid = st.binary(min_size=16, max_size=16).map(
    lambda b: __import__("base64").urlsafe_b64encode(b).decode().rstrip("="))


@settings(max_examples=examples(200), deadline=None)
@given(_i32, _uuid, st.lists(_i32, max_size=5), st.lists(_i32, max_size=5), _i32, _i32, _i32,
       st.lists(_uuid, max_size=3), st.integers(0, 2), st.one_of(st.none(), st.lists(_i32, max_size=3)))
def test_partition_record_round_trip(pid, topic_id, replicas, isr, leader, epoch, pepoch, dirs, version, elr):
    data = {"partitionId": pid, "topicId": topic_id, "replicas": replicas, "isr": isr, "leader": leader,
            "leaderEpoch": epoch, "partitionEpoch": pepoch, "directories": dirs, "eligibleLeaderReplicas": elr}
    value = metadata_value(3, version, data)
    rec = mr.decode_metadata_record(value)
    assert rec.typed == mr.PartitionRecord(topic_id, pid, tuple(replicas), tuple(isr), leader, epoch, pepoch,
                                           tuple(dirs) if version >= 1 else (), (), (), 0,
                                           tuple(elr) if version >= 2 and elr is not None else None)
    parsed = json.loads(mr.format_metadata_record(value, 0))
    assert parsed["version"] == version
    assert parsed["data"]["leaderEpoch"] == epoch and parsed["data"]["topicId"] == topic_id
    assert ("directories" in parsed["data"]) == (version >= 1)
    assert ("eligibleLeaderReplicas" in parsed["data"]) == (version >= 2 and elr is not None)


def test_apply_partition_change_bumps_epochs():
    part = mr.decode_metadata_record(h(REAL_RECORDS[4][0])).typed
    same = mr.PartitionChangeRecord(part.topic_id, 0, -2, (1, 2), None)
    after = mr.apply_partition_change(part, same)
    assert (after.leader, after.leader_epoch, after.partition_epoch, after.isr) == (1, 0, 1, (1, 2))
    offline = mr.PartitionChangeRecord(part.topic_id, 0, -1, (), None)
    after = mr.apply_partition_change(after, offline)
    assert (after.leader, after.leader_epoch, after.partition_epoch, after.isr) == (-1, 1, 2, ())
    with pytest.raises(ValueError):
        mr.apply_partition_change(part, mr.PartitionChangeRecord(part.topic_id, 1, -2, None, None))


def test_partition_registration_and_merge_follow_kafkas_partition_registration():
    """``new PartitionRegistration(PartitionRecord)`` and ``merge``: directories default to MIGRATING,
    ELR lists to empty; mismatched directories and unknown recovery states raise (Kafka throws)."""
    old = mr.PartitionRecord("AAAAAAAAAAAAAAAAAAAAAQ", 0, (1, 2), (1, 2), 1, 4, 7)  # as a v0 record: no directories
    reg = mr.partition_registration(old)
    assert reg.directories == (mr.DIRECTORY_MIGRATING,) * 2 and (reg.elr, reg.last_known_elr) == ((), ())
    moved = mr.apply_partition_change(reg, mr.PartitionChangeRecord(
        old.topic_id, 0, -2, None, (1, 2, 3), directories=("lMXTcDlVjZjX-4CQmJ2Liw",) * 3, leader_recovery_state=1))
    assert (moved.replicas, moved.leader_epoch, moved.partition_epoch, moved.leader_recovery_state) == ((1, 2, 3), 4, 8, 1)
    grown = mr.apply_partition_change(reg, mr.PartitionChangeRecord(old.topic_id, 0, -2, None, (1, 2, 3)))
    assert grown.directories == (mr.DIRECTORY_MIGRATING,) * 3  # still all MIGRATING: one per replica
    with pytest.raises(ValueError):  # two directories for three replicas
        mr.apply_partition_change(reg, mr.PartitionChangeRecord(old.topic_id, 0, -2, None, (1, 2, 3),
                                                                directories=("lMXTcDlVjZjX-4CQmJ2Liw",) * 2))
    with pytest.raises(ValueError):
        mr.apply_partition_change(reg, mr.PartitionChangeRecord(old.topic_id, 0, -2, None, None,
                                                                leader_recovery_state=5))
    with pytest.raises(ValueError):
        mr.partition_registration(mr.PartitionRecord("AAAAAAAAAAAAAAAAAAAAAQ", 0, (1, 2), (1,), 1, 0, 0, ("x",)))
    assert mr.reserved_directory("not base64!") is None
