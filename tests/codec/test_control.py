"""forensics.codec.control: every control record decoded in one place (end-transaction markers and
KRaft's control messages), as Kafka 4.1's kafka-dump-log.sh prints them and as the producer state
reads them (the first record of a control batch)."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures.diskgen.records import encode_marker_batch
from forensics.codec import batch as v2
from forensics.codec import control
from forensics.codec.schema_encode import encode_message
from forensics.errors import CorruptRecordError, ForensicsError
from tests.tiers import examples

h = bytes.fromhex

LEADER_CHANGE_KEY = h("00000002")
LEADER_CHANGE_VALUE = h("00000000000102000000010002000000010000")
LEADER_CHANGE_TEXT = 'LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}'


def test_real_leader_change():
    assert control.format_control_record(LEADER_CHANGE_KEY, LEADER_CHANGE_VALUE) == LEADER_CHANGE_TEXT
    rec = control.decode_control_record(LEADER_CHANGE_KEY, LEADER_CHANGE_VALUE)
    assert rec.type_name == "LEADER_CHANGE" and rec.data["leaderId"] == 1


# --------------------------------------------------------------------------- control records


def test_end_txn_markers():
    assert control.format_control_record(h("00000001"), h("000000000000")) == "endTxnMarker: COMMIT coordinatorEpoch: 0"
    assert control.format_control_record(h("00000000"), h("0000000000070000")) == "endTxnMarker: ABORT coordinatorEpoch: 7"
    # unknown key/value versions >= 0 are read as version 0
    assert control.format_control_record(h("00050001"), h("0003ffffffff")) == "endTxnMarker: COMMIT coordinatorEpoch: -1"
    with pytest.raises(CorruptRecordError, match="at least 6 bytes"):
        control.format_control_record(h("00000001"), h("0000"))
    with pytest.raises(CorruptRecordError, match="negative end-transaction marker version -1"):
        control.format_control_record(h("00000001"), h("ffff00000000"))


def test_kraft_control_records():
    header = encode_message(control.SNAPSHOT_HEADER_RECORD, 0, {"version": 0, "lastContainedLogTimestamp": 1795211201211})
    assert control.format_control_record(h("00000003"), header) == (
        'SnapshotHeader {"version":0,"lastContainedLogTimestamp":1795211201211}')
    footer = encode_message(control.SNAPSHOT_FOOTER_RECORD, 0, {"version": 0})
    assert control.format_control_record(h("00000004"), footer) == 'SnapshotFooter {"version":0}'
    kv = encode_message(control.KRAFT_VERSION_RECORD, 0, {"version": 0, "kRaftVersion": 1})
    assert control.format_control_record(h("00000005"), kv) == 'KRaftVersion {"version":0,"kRaftVersion":1}'
    voters = encode_message(control.VOTERS_RECORD, 0, {"version": 0, "voters": [{
        "voterId": 1, "voterDirectoryId": "lMXTcDlVjZjX-4CQmJ2Liw",
        "endpoints": [{"name": "CONTROLLER", "host": "127.0.0.1", "port": 29093}],
        "kRaftVersionFeature": {"minSupportedVersion": 0, "maxSupportedVersion": 1},
    }]})
    assert control.format_control_record(h("00000006"), voters) == (
        'KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"lMXTcDlVjZjX-4CQmJ2Liw",'
        '"endpoints":[{"name":"CONTROLLER","host":"127.0.0.1","port":29093}],'
        '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}')
    assert control.format_control_record(h("00000009"), b"") == "controlType: UNKNOWN(9)"
    assert control.format_control_record(h("0000ffff"), None) == "controlType: UNKNOWN(-1)"


def test_leader_change_rendered_at_its_own_version():
    # read at version 0, written at the version stored in the message: v1 adds the
    # voters' (default, all-zero) directory ids
    value = bytearray(LEADER_CHANGE_VALUE)
    value[0:2] = struct.pack(">h", 1)
    assert control.format_control_record(LEADER_CHANGE_KEY, bytes(value)) == (
        'LeaderChange: {"version":1,"leaderId":1,"voters":[{"voterId":1,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}],'
        '"grantingVoters":[{"voterId":1,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}]}')


def test_control_record_errors():
    with pytest.raises(CorruptRecordError, match="at least 4 bytes"):
        control.format_control_record(b"\x00\x00", b"")
    with pytest.raises(CorruptRecordError, match="negative control record key version -1"):
        control.format_control_record(h("ffff0002"), b"")
    with pytest.raises(CorruptRecordError):
        control.format_control_record(LEADER_CHANGE_KEY, LEADER_CHANGE_VALUE[:5])
    with pytest.raises(CorruptRecordError):
        control.format_control_record(None, None)


@settings(max_examples=examples(500), deadline=None)
@given(st.one_of(st.none(), st.binary(max_size=8)), st.one_of(st.none(), st.binary(max_size=60)))
def test_arbitrary_control_records_raise_only_our_errors(key, value):
    try:
        text = control.format_control_record(key, value)
    except ForensicsError:
        return
    assert isinstance(text, str)
    label, _, rest = text.partition(" ")
    if label in ("LeaderChange:", "SnapshotHeader", "SnapshotFooter", "KRaftVersion", "KRaftVoters"):
        json.loads(rest)


def test_read_control_batch_gives_the_marker_the_broker_reads():
    buf = encode_marker_batch(42, 1000, 5, False, 7, 1_700_000_000_000)
    header = v2.decode_header(buf)
    read = control.read_control_batch(buf, 0, header)
    assert read is not None
    assert (read.offset, read.key.type_name, read.marker.is_commit, read.marker.coordinator_epoch) == (42, "ABORT", False, 7)


def test_read_control_reads_no_kraft_value():
    # a LEADER_CHANGE key with a value that does not decode: the producer state never reads it
    assert control.read_control(LEADER_CHANGE_KEY, b"\xff") == (control.ControlKey(0, 2), None)
    with pytest.raises(CorruptRecordError):
        control.decode_control_record(LEADER_CHANGE_KEY, b"\xff")
