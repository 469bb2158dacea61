"""forensics.codec.offsets: __consumer_offsets records, Kafka 4.1 --offsets-decoder text."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensics.codec import offsets as oc
from forensics.codec.control import format_control_record
from forensics.codec.schema_encode import encode_message
from forensics.codec.schema_json import json_string
from forensics.errors import CorruptInputError, CorruptRecordError
from tests.oracle import dump_tails, iter_v2_records
from tests.tiers import examples

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "real"
REAL = Path("/work/shared/real-kafka/4.1.0")
RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")


# --------------------------------------------------------------------------- test-local helpers

def our_tail(offset: int, key: bytes | None, value: bytes | None, is_control: bool) -> str:
    if is_control:
        return " " + format_control_record(key, value)
    return oc.format_offsets_line_suffix(key, value, offset)


def compare_log(log: Path, dump: Path) -> int:
    expected = dump_tails(dump, '--offsets-decoder')
    ours = list(iter_v2_records(log.read_bytes()))
    assert len(ours) == len(expected)
    for (off, key, value, ctl), (exp_off, exp_tail) in zip(ours, expected):
        assert off == exp_off
        assert our_tail(off, key, value, ctl) == exp_tail, f"{log} offset {off}"
    return len(ours)


def offsets_key(record_type: int, key_data: dict) -> bytes:
    key_msg, _ = oc.record_schemas(record_type)
    return struct.pack(">h", record_type) + encode_message(key_msg, record_type, key_data)


def offsets_value(record_type: int, version: int, data: dict) -> bytes:
    _, value_msg = oc.record_schemas(record_type)
    return struct.pack(">h", version) + encode_message(value_msg, version, data)


# --------------------------------------------------------------------------- real Kafka 4.1 output


def test_fixture_matches_kafka_dump():
    log = FIXTURES / "kraft-tv2" / "__consumer_offsets-42" / "00000000000000000000.log"
    dump = FIXTURES / "kraft-tv2" / "dumps" / "__consumer_offsets-42" / "00000000000000000000.log.dump.txt"
    assert compare_log(log, dump) == 10


def test_fixture_typed_offset_commits():
    log = FIXTURES / "kraft-tv2" / "__consumer_offsets-42" / "00000000000000000000.log"
    commits = [oc.decode_offset_commit(k, v) for _, k, v, ctl in iter_v2_records(log.read_bytes()) if not ctl]
    assert len(commits) == 6
    first = commits[0]
    assert first == oc.OffsetCommit(
        group="h-eos-group", topic="a-txn-orders", partition=2, value_version=4, offset=26,
        leader_epoch=0, metadata="", commit_timestamp=1795211292011, expire_timestamp=-1,
    )
    assert [(c.partition, c.offset) for c in commits] == [(2, 26), (1, 5), (2, 48), (0, 26), (0, 48), (2, 31)]


@pytest.mark.skipif(not REAL.is_dir(), reason="/work/shared/real-kafka not present")
def test_every_consumer_offsets_log_of_both_runs():
    total = 0
    for run in RUNS:
        for part in sorted((REAL / run / "data").glob("__consumer_offsets-*")):
            for log in sorted(part.glob("*.log")):
                dump = REAL / run / "dumps" / part.name / (log.name + ".dump.txt")
                total += compare_log(log, dump)
    assert total == 10 + 5


# --------------------------------------------------------------------------- OffsetsMessageParser rules


def test_offset_commit_value_versions():
    key = offsets_key(1, {"group": "g", "topic": "t", "partition": 3})
    base = {"offset": 7, "leaderEpoch": 5, "metadata": "m", "commitTimestamp": 11, "expireTimestamp": 99}
    expected = {
        0: '{"offset":7,"metadata":"m","commitTimestamp":11}',
        1: '{"offset":7,"metadata":"m","commitTimestamp":11,"expireTimestamp":99}',
        2: '{"offset":7,"metadata":"m","commitTimestamp":11}',
        3: '{"offset":7,"leaderEpoch":5,"metadata":"m","commitTimestamp":11}',
        4: '{"offset":7,"leaderEpoch":5,"metadata":"m","commitTimestamp":11}',
    }
    for version, data in expected.items():
        k, v = oc.format_offsets_record(key, offsets_value(1, version, base), 0)
        assert k == '{"type":"1","data":{"group":"g","topic":"t","partition":3}}'
        assert v == '{"version":"%d","data":%s}' % (version, data)
    commit = oc.decode_offset_commit(key, offsets_value(1, 1, base))
    assert commit is not None and commit.expire_timestamp == 99 and commit.leader_epoch == -1


def test_tombstone_and_line_suffix():
    key = offsets_key(3, {"groupId": "group"})
    assert oc.format_offsets_record(key, None, 5) == ('{"type":"3","data":{"groupId":"group"}}', "<DELETE>")
    assert oc.format_offsets_line_suffix(key, None, 5) == ' key: {"type":"3","data":{"groupId":"group"}} payload: <DELETE>'
    key1 = offsets_key(1, {"group": "g", "topic": "t", "partition": 0})
    commit = oc.decode_offset_commit(key1, None)
    assert commit is not None and commit.is_tombstone and commit.offset is None
    assert oc.decode_offset_commit(key, None) is None


def test_consumer_group_metadata_value():
    key = offsets_key(3, {"groupId": "group"})
    assert oc.format_offsets_value(key, offsets_value(3, 0, {"epoch": 10}), 0) == '{"version":"0","data":{"epoch":10}}'
    assert oc.format_offsets_key(key, 0) == '{"type":"3","data":{"groupId":"group"}}'


def test_unknown_record_type():
    assert oc.format_offsets_record(struct.pack(">h", 32767), b"", 0) == (
        "Unknown record type 32767 at offset 0, skipping.", None)
    assert oc.format_offsets_record(struct.pack(">h", -3) + b"xx", None, 9) == (
        "Unknown record type -3 at offset 9, skipping.", None)
    assert oc.decode_offset_commit(struct.pack(">h", 99), b"\x00\x00") is None
    with pytest.raises(oc.UnknownCoordinatorRecordTypeError):
        oc.decode_offsets_record(struct.pack(">h", 99), None)


def test_error_strings():
    # A value of another type: ConsumerGroupMemberMetadataValue (all defaults) under a
    # ConsumerGroupMetadataKey -> read as ConsumerGroupMetadataValue; the tag section
    # then announces a 0x1FFFFFFF-byte unknown tagged field.
    key = offsets_key(3, {"groupId": "group"})
    _, member_value_msg = oc.record_schemas(5)
    value = struct.pack(">h", 0) + encode_message(member_value_msg, 0, {})
    assert oc.format_offsets_record(key, value, 0) == (
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: "
        "Error reading byte array of 536870911 byte(s): only 1 byte(s) available.",
        None,
    )
    assert oc.format_offsets_record(b"\x00", None, 4)[0] == "Error at offset 4, skipping. Could not read version from key's buffer."
    key1 = offsets_key(1, {"group": "g", "topic": "t", "partition": 0})
    assert oc.format_offsets_record(key1, b"\x00", 4)[0] == "Error at offset 4, skipping. Could not read version from value's buffer."
    assert oc.format_offsets_record(key1, b"\x00\x05", 4)[0] == (
        "Error at offset 4, skipping. Found an unknown record version 5 for 1 type")
    # truncated key: the int32 partition is missing -> BufferUnderflowException (no message)
    assert oc.format_offsets_record(key1[:-4], None, 1)[0] == (
        "Error at offset 1, skipping. Could not read record with version 1 from key's buffer due to: null.")
    # non-nullable string serialized as null
    assert oc.format_offsets_record(b"\x00\x02\xff\xff", None, 2)[0] == (
        "Error at offset 2, skipping. Could not read record with version 2 from key's buffer due to: "
        "non-nullable field group was serialized as null.")
    with pytest.raises(oc.CorruptCoordinatorRecordError):
        oc.decode_offsets_record(key1, b"\x00\x05")


def test_missing_key_aborts_like_kafka():
    with pytest.raises(CorruptRecordError, match="message had a missing key"):
        oc.format_offsets_record(None, b"\x00\x00", 0)


def _subscription_v3() -> bytes:
    # ConsumerProtocolSubscription v3: topics ["foo"], userData null, ownedPartitions
    # [{foo,[0]}], generationId 0, rackId "rack" (non-flexible encoding)
    return (
        struct.pack(">h", 3)
        + struct.pack(">i", 1) + struct.pack(">h", 3) + b"foo"
        + struct.pack(">i", -1)
        + struct.pack(">i", 1) + struct.pack(">h", 3) + b"foo" + struct.pack(">ii", 1, 0)
        + struct.pack(">i", 0)
        + struct.pack(">h", 4) + b"rack"
    )


def _assignment_v3() -> bytes:
    return (
        struct.pack(">h", 3)
        + struct.pack(">i", 1) + struct.pack(">h", 3) + b"foo" + struct.pack(">ii", 1, 0)
        + struct.pack(">i", -1)
    )


def _group_value(subscription: bytes, assignment: bytes, protocol_type: str = "consumer") -> bytes:
    return offsets_value(2, 4, {
        "protocolType": protocol_type, "generation": 10, "protocol": "range", "leader": "member",
        "currentStateTimestamp": -1,
        "members": [{
            "memberId": "member", "groupInstanceId": "instance", "clientId": "client", "clientHost": "host",
            "rebalanceTimeout": 1000, "sessionTimeout": 100, "subscription": subscription, "assignment": assignment,
        }],
    })


def test_group_metadata_expands_consumer_protocol():
    key = offsets_key(2, {"group": "group"})
    k, v = oc.format_offsets_record(key, _group_value(_subscription_v3(), _assignment_v3()), 0)
    assert k == '{"type":"2","data":{"group":"group"}}'
    assert v == (
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
        '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
        '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
        '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],'
        '"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],'
        '"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":'
        '[{"topic":"foo","partitions":[0]}],"userData":null}}]}}'
    )
    gm = oc.decode_group_metadata(key, _group_value(_subscription_v3(), _assignment_v3()))
    assert gm is not None and gm.generation == 10 and gm.members[0].client_id == "client"


def test_group_metadata_keeps_malformed_protocol_bytes():
    key = offsets_key(2, {"group": "group"})
    _, v = oc.format_offsets_record(key, _group_value(b"Subscription", b"Assignment"), 0)
    assert '"subscription":"U3Vic2NyaXB0aW9u","assignment":"QXNzaWdubWVudA=="' in v
    # not the consumer protocol: bytes stay base64 even when they would parse
    _, v = oc.format_offsets_record(key, _group_value(_subscription_v3(), b"", "connect"), 0)
    assert '"subscription":"' in v and '"assignment":""' in v


def test_subscription_versions_outside_the_valid_range():
    key = offsets_key(2, {"group": "group"})
    # v5 with owned partitions: the inline TopicPartition struct refuses versions > 3
    sub5 = struct.pack(">h", 5) + _subscription_v3()[2:]
    _, v = oc.format_offsets_record(key, _group_value(sub5, _assignment_v3()), 0)
    assert '"subscription":"AAU' in v
    # v5 without owned partitions parses with the v3 layout
    sub5_empty = (struct.pack(">h", 5) + struct.pack(">i", 0) + struct.pack(">i", -1) + struct.pack(">i", 0)
                  + struct.pack(">i", 7) + struct.pack(">h", -1))
    _, v = oc.format_offsets_record(key, _group_value(sub5_empty, _assignment_v3()), 0)
    assert '"subscription":{"topics":[],"userData":null,"ownedPartitions":[],"generationId":7,"rackId":null}' in v


def test_group_metadata_old_versions():
    key = offsets_key(2, {"group": "g"})
    data = {"protocolType": "", "generation": 1, "protocol": None, "leader": None, "members": []}
    assert oc.format_offsets_value(key, offsets_value(2, 0, data), 0) == (
        '{"version":"0","data":{"protocolType":"","generation":1,"protocol":null,"leader":null,"members":[]}}')


def test_consumer_group_record_types_render():
    cases = [
        (4, {"groupId": "g"}, {"topics": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "topicName": "t", "numPartitions": 1,
                                            "partitionMetadata": [{"partition": 0, "racks": ["r1"]}]}]},
         '{"topics":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","topicName":"t","numPartitions":1,'
         '"partitionMetadata":[{"partition":0,"racks":["r1"]}]}]}'),
        (5, {"groupId": "g", "memberId": "m"},
         {"instanceId": None, "rackId": None, "clientId": "c", "clientHost": "/h", "subscribedTopicNames": ["t"],
          "subscribedTopicRegex": None, "rebalanceTimeoutMs": 300000, "serverAssignor": "uniform",
          "classicMemberMetadata": {"sessionTimeoutMs": 45000,
                                    "supportedProtocols": [{"name": "range", "metadata": b"\x01"}]}},
         '{"instanceId":null,"rackId":null,"clientId":"c","clientHost":"/h","subscribedTopicNames":["t"],'
         '"subscribedTopicRegex":null,"rebalanceTimeoutMs":300000,"serverAssignor":"uniform",'
         '"classicMemberMetadata":{"sessionTimeoutMs":45000,"supportedProtocols":[{"name":"range","metadata":"AQ=="}]}}'),
        (6, {"groupId": "g"}, {"assignmentEpoch": 3}, '{"assignmentEpoch":3}'),
        (7, {"groupId": "g", "memberId": "m"},
         {"topicPartitions": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": [0, 2]}]},
         '{"topicPartitions":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[0,2]}]}'),
        (8, {"groupId": "g", "memberId": "m"},
         {"memberEpoch": 5, "previousMemberEpoch": 4, "state": 0, "assignedPartitions": [],
          "partitionsPendingRevocation": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": [1]}]},
         '{"memberEpoch":5,"previousMemberEpoch":4,"state":0,"assignedPartitions":[],'
         '"partitionsPendingRevocation":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[1]}]}'),
    ]
    for record_type, key_data, value_data, expected in cases:
        key = offsets_key(record_type, key_data)
        k, v = oc.format_offsets_record(key, offsets_value(record_type, 0, value_data), 0)
        assert k == '{"type":"%d","data":%s}' % (record_type, json.dumps(key_data, separators=(",", ":")))
        assert v == '{"version":"0","data":%s}' % expected
    # member metadata without the tagged classic metadata omits it
    key = offsets_key(5, {"groupId": "g", "memberId": "m"})
    _, v = oc.format_offsets_record(key, offsets_value(5, 0, {}), 0)
    assert "classicMemberMetadata" not in v and '"rebalanceTimeoutMs":-1' in v


def test_json_escaping_and_invalid_utf8():
    key = struct.pack(">h", 2) + struct.pack(">h", 6) + b'a"\\\n\x01\xff'
    k, _ = oc.format_offsets_record(key, None, 0)
    assert k == '{"type":"2","data":{"group":"a\\"\\\\\\n\\u0001\ufffd"}}'


# --------------------------------------------------------------------------- properties


@settings(max_examples=examples(400), deadline=None)
@given(st.one_of(st.none(), st.binary(max_size=64)), st.one_of(st.none(), st.binary(max_size=64)),
       st.integers(min_value=0, max_value=2**62))
def test_arbitrary_bytes_give_text_or_our_errors(key, value, offset):
    try:
        k, v = oc.format_offsets_record(key, value, offset)
    except CorruptRecordError:
        assert key is None
        return
    assert isinstance(k, str) and (v is None or isinstance(v, str))
    if v is None:
        assert k.startswith(("Error at offset", "Unknown record type"))
    try:
        oc.decode_offsets_record(key, value)
        oc.decode_offset_commit(key, value)
        oc.decode_group_metadata(key, value)
    except CorruptInputError:
        pass


_KNOWN_TYPE_KEY = st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 8]).flatmap(
    lambda t: st.binary(max_size=40).map(lambda b: struct.pack(">h", t) + b))


@settings(max_examples=examples(400), deadline=None)
@given(_KNOWN_TYPE_KEY, st.one_of(st.none(), st.binary(max_size=80).map(lambda b: b"\x00" + bytes([b[0] % 6 if b else 0]) + b[1:])))
def test_known_types_with_arbitrary_bodies(key, value):
    k, v = oc.format_offsets_record(key, value, 3)
    assert isinstance(k, str)
    if v is not None:
        json.loads(k)
        if v != "<DELETE>":
            json.loads(v)
    try:
        oc.decode_offsets_record(key, value)
    except CorruptInputError:
        pass


_text = st.text(max_size=20)
_i32 = st.integers(-2**31, 2**31 - 1)
_i64 = st.integers(-2**63, 2**63 - 1)


@settings(max_examples=examples(200), deadline=None)
@given(_text, _text, _i32, _i64, _i32, _text, _i64, st.integers(0, 4))
def test_offset_commit_round_trip(group, topic, partition, offset, epoch, metadata, ts, version):
    key = offsets_key(1, {"group": group, "topic": topic, "partition": partition})
    value = offsets_value(1, version, {"offset": offset, "leaderEpoch": epoch, "metadata": metadata,
                                       "commitTimestamp": ts})
    commit = oc.decode_offset_commit(key, value)
    assert commit is not None
    assert (commit.group, commit.topic, commit.partition, commit.offset, commit.metadata, commit.commit_timestamp) == \
        (group, topic, partition, offset, metadata, ts)
    assert commit.leader_epoch == (epoch if version >= 3 else -1)
    k, v = oc.format_offsets_record(key, value, 0)
    assert json.loads(k)["data"] == {"group": group, "topic": topic, "partition": partition}
    parsed = json.loads(v)
    assert parsed["version"] == str(version) and parsed["data"]["offset"] == offset
    assert parsed["data"]["metadata"] == metadata


@given(st.text())
def test_json_string_is_valid_json(s):
    assert json.loads(json_string(s)) == s
