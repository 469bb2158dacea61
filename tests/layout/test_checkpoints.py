"""Parsers of text checkpoint/metadata files (forensics.codec.checkpoints)."""

from __future__ import annotations

import base64
import os
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensics.codec import broker_files as bf
from forensics.codec import checkpoints as cp
from forensics.errors import CorruptCheckpointError
from forensics.model import TopicPartition
from tests.tiers import examples

REAL = Path("/work/shared/real-kafka/4.1.0")
RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")
P = "/evidence/x"


def real_data(run: str) -> Path:
    d = REAL / run / "data"
    if not d.is_dir():
        pytest.skip(f"real broker disk {d} not available")
    return d


def corrupt(fn, data, path=P) -> CorruptCheckpointError:
    with pytest.raises(CorruptCheckpointError) as info:
        fn(data, path)
    assert info.value.path == path
    return info.value


# --------------------------------------------------------------------------- offset checkpoints


def test_offset_checkpoint_good():
    c = cp.parse_offset_checkpoint(b"0\n3\nfoo 0 10\nfoo.bar-baz 12 0\n__consumer_offsets 49 9223372036854775807\n", P)
    assert c.version == 0
    assert c.entries[0] == cp.OffsetEntry(TopicPartition("foo", 0), 10)
    assert c.offsets() == {
        TopicPartition("foo", 0): 10,
        TopicPartition("foo.bar-baz", 12): 0,
        TopicPartition("__consumer_offsets", 49): 2**63 - 1,
    }
    with pytest.raises(TypeError):
        c.offsets()[TopicPartition("foo", 0)] = 1  # type: ignore[index]


def test_offset_checkpoint_empty_and_header_only():
    assert cp.parse_offset_checkpoint(b"", P).entries == ()
    assert cp.parse_offset_checkpoint(b"", P).version is None
    assert cp.parse_offset_checkpoint("0\n", P).entries == ()  # count line missing: Kafka returns empty
    assert cp.parse_offset_checkpoint(b"0\n0\n", P).entries == ()


def test_offset_checkpoint_line_endings_and_whitespace():
    c = cp.parse_offset_checkpoint(b"0\r\n2\r\nfoo\t0  5\rbar 1 6   ", P)
    assert c.offsets() == {TopicPartition("foo", 0): 5, TopicPartition("bar", 1): 6}
    assert cp.parse_offset_checkpoint("0\n1\nt +1 -1\n", P).entries[0].offset == -1  # Java parseInt accepts signs


def test_offset_checkpoint_duplicate_last_wins():
    c = cp.parse_offset_checkpoint(b"0\n2\nfoo 0 1\nfoo 0 2\n", P)
    assert len(c.entries) == 2 and c.offsets()[TopicPartition("foo", 0)] == 2


@pytest.mark.parametrize(
    "data, position, fragment",
    [
        (b"1\n0\n", 0, "unsupported version 1"),
        (b"x\n0\n", 0, "malformed version"),
        (b" 0\n0\n", 0, "malformed version"),
        (b"\n", 0, "malformed version"),
        (b"0\nzz\n", 2, "malformed entry count"),
        (b"0\n2\nfoo 0 1\n", 2, "entry count 2 but 1"),
        (b"0\n0\nfoo 0 1\n", 2, "entry count 0 but 1"),
        (b"0\n1\nfoo 0\n", 4, "line 3: malformed entry"),
        (b"0\n1\nfoo x 1\n", 4, "malformed entry"),
        (b"0\n1\nfoo 0 1 2\n", 4, "malformed entry"),
        (b"0\n1\n foo 0 1\n", 4, "malformed entry"),  # Java split keeps a leading empty field
        (b"0\n2\nfoo 0 1\n\n", 12, "line 4: malformed entry"),
        (b"0\n1\nfoo 2147483648 1\n", 4, "malformed entry"),
        (b"0\n1\nfoo 0 9223372036854775808\n", 4, "malformed entry"),
        (b"0\n1\nfoo 0 \xff\n", 10, "UTF-8"),
    ],
)
def test_offset_checkpoint_malformed(data, position, fragment):
    e = corrupt(cp.parse_offset_checkpoint, data)
    assert e.position == position
    assert fragment in e.message
    assert P in str(e)


def test_str_input_positions_are_bytes():
    e = corrupt(cp.parse_offset_checkpoint, "0\n1\ntöpic 0\n")
    assert e.position == 4
    assert cp.parse_offset_checkpoint("0\n1\ntöpic 0 1\n", P).entries[0].topic_partition.topic == "töpic"


# --------------------------------------------------------------------------- leader epochs


def test_leader_epoch_checkpoint():
    c = cp.parse_leader_epoch_checkpoint(b"0\n3\n0 0\n2 17\n5 17\n", P)
    assert c.entries == (cp.EpochEntry(0, 0), cp.EpochEntry(2, 17), cp.EpochEntry(5, 17))
    assert c.is_monotonic()
    assert not cp.parse_leader_epoch_checkpoint(b"0\n2\n3 10\n2 20\n", P).is_monotonic()
    assert cp.parse_leader_epoch_checkpoint(b"", P).entries == ()


@pytest.mark.parametrize(
    "data", [b"1\n1\n0 0\n", b"0\n1\n0\n", b"0\n1\n0 0 0\n", b"0\n1\n2147483648 0\n", b"0\n2\n0 0\n"]
)
def test_leader_epoch_checkpoint_malformed(data):
    corrupt(cp.parse_leader_epoch_checkpoint, data)


# --------------------------------------------------------------------------- partition.metadata


def test_partition_metadata_good():
    m = cp.parse_partition_metadata(b"version: 0\ntopic_id: Pe2yS4LsQP6h33OMDhPjPg", P)
    assert m.version == 0 and m.topic_id == "Pe2yS4LsQP6h33OMDhPjPg"
    assert m.topic_uuid == uuid.UUID("3dedb24b-82ec-40fe-a1df-738c0e13e33e")
    assert cp.parse_partition_metadata("version: 0\ntopic_id: Pe2yS4LsQP6h33OMDhPjPg\n", P) == m
    assert (
        cp.parse_partition_metadata("version:\t0\r\ntopic_id:  Pe2yS4LsQP6h33OMDhPjPg==", P) == m
    )  # padded, like Java
    assert cp.parse_partition_metadata("version: 3\ntopic_id: Pe2yS4LsQP6h33OMDhPjPg", P).version == 3  # reader: >= 0
    meta_topic = cp.parse_partition_metadata("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", P)
    assert meta_topic.topic_uuid.int == 1  # __cluster_metadata's fixed id


@pytest.mark.parametrize(
    "data, position, fragment",
    [
        (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", 21, "all-zero"),
        (b"version: -1\ntopic_id: Pe2yS4LsQP6h33OMDhPjPg", 0, "unsupported version"),
        (b"version: x\ntopic_id: Pe2yS4LsQP6h33OMDhPjPg", 0, "malformed version"),
        (b"version:0\ntopic_id: Pe2yS4LsQP6h33OMDhPjPg", 0, "malformed version"),
        (b"version: 0", 10, "missing topic_id"),
        (b"version: 0\ntopic_id Pe2yS4LsQP6h33OMDhPjPg", 11, "malformed topic_id"),
        (b"version: 0\ntopic_id: Pe2yS4LsQP6h33OMDhPj", 21, "not a base64url"),
        (b"version: 0\ntopic_id: Pe2yS4LsQP6h33OMDhPjPg0", 21, "not a base64url"),
        (b"version: 0\ntopic_id: Pe2yS4LsQP6h33OMDh+j/g", 21, "not a base64url"),
        (b"", 0, "empty"),
        (b"\xfe\xff", 0, "UTF-8"),
    ],
)
def test_partition_metadata_malformed(data, position, fragment):
    e = corrupt(cp.parse_partition_metadata, data)
    assert e.position == position, e
    assert fragment in e.message


@given(st.binary(min_size=16, max_size=16))
def test_uuid_roundtrip(raw):
    value = uuid.UUID(bytes=raw)
    text = cp.encode_kafka_uuid(value)
    assert len(text) == 22
    assert text == base64.urlsafe_b64encode(raw).decode().rstrip("=")
    assert cp.decode_kafka_uuid(text) == value


# --------------------------------------------------------------------------- meta.properties

KRAFT_META = b"""#
#Fri Nov 20 21:46:38 UTC 2026
node.id=1
directory.id=lMXTcDlVjZjX-4CQmJ2Liw
version=1
cluster.id=TW9-1HLgQpieFawninaYyg
"""


def test_meta_properties_kraft():
    m = bf.parse_meta_properties(KRAFT_META, P)
    assert (m.version, m.node_id, m.cluster_id, m.directory_id) == (
        1,
        1,
        "TW9-1HLgQpieFawninaYyg",
        "lMXTcDlVjZjX-4CQmJ2Liw",
    )
    assert m.raw[0] == ("node.id", "1") and len(m.raw) == 4


def test_meta_properties_zookeeper_and_syntax():
    text = (
        "! old style comment\n"
        "   # indented comment\n"
        "\n"
        "broker.id : 7\n"
        "cluster.id   AbC\\\n"
        "    dEf\n"
        "node.id=99\n"  # ignored by version 0, like Kafka
        "weird\\=key=va\\u0041lue\\n\n"
        "version=0\n"
        "version = 0\n"
    )
    m = bf.parse_meta_properties(text, P)
    assert (m.version, m.node_id, m.cluster_id, m.directory_id) == (0, 7, "AbCdEf", None)
    assert ("weird=key", "vaAlue\n") in m.raw
    assert [k for k, _ in m.raw].count("version") == 2


def test_meta_properties_defaults():
    m = bf.parse_meta_properties(b"cluster.id=x\n", P)  # no version: 0, broker.id optional
    assert (m.version, m.node_id) == (0, None)
    assert bf.parse_meta_properties(b"", P).version == 0


@pytest.mark.parametrize(
    "data, fragment",
    [
        (b"version=2\nnode.id=1\ncluster.id=x\n", "unknown meta.properties version"),
        (b"version=one\n", "unknown meta.properties version"),
        (b"version=1\ncluster.id=x\n", "without node.id"),
        (b"version=1\nnode.id=1\n", "without cluster.id"),
        (b"version=1\nnode.id=x1\ncluster.id=x\n", "node.id"),
        (b"broker.id=2147483648\n", "broker.id"),
        (b"version=1\nnode.id=1\ncluster.id=x\ndirectory.id=nope\n", "base64url"),
        (b"version=1\nnode.id=1\ncluster.id=x\nx=\\u12\n", "\\uxxxx"),
        (b"version=1\nnode.id=1\ncluster.id=\xff\n", "UTF-8"),
        (b"\x00" * 64, "NUL"),
    ],
)
def test_meta_properties_malformed(data, fragment):
    e = corrupt(bf.parse_meta_properties, data)
    assert fragment in e.message


def test_meta_properties_error_points_at_line():
    e = corrupt(bf.parse_meta_properties, b"#c\nversion=1\nnode.id=abc\ncluster.id=x\n")
    assert e.position == len(b"#c\nversion=1\n") and "line 3" in e.message


# --------------------------------------------------------------------------- .kafka_cleanshutdown


def test_clean_shutdown():
    assert bf.parse_clean_shutdown(b"", P) == bf.CleanShutdown(None, None)
    assert bf.parse_clean_shutdown(b"\n", P) == bf.CleanShutdown(None, None)
    assert bf.parse_clean_shutdown(b'{"version":0,"brokerEpoch":10}', P) == bf.CleanShutdown(0, 10)
    assert bf.parse_clean_shutdown(b'{"version":0,"brokerEpoch":10,"x":1}', P) == bf.CleanShutdown(0, 10)
    assert bf.parse_clean_shutdown(b'{"version":0}', P) == bf.CleanShutdown(0, None)


@pytest.mark.parametrize(
    "data", [b"{", b"[1]", b'{"brokerEpoch":"10"}', b'{"brokerEpoch":true}', b"\xff", b'{"brokerEpoch":1e3}']
)
def test_clean_shutdown_malformed(data):
    corrupt(bf.parse_clean_shutdown, data)


# --------------------------------------------------------------------------- quorum-state

QS0 = (
    b'{"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,'
    b'"currentVoters":[{"voterId":1}],"data_version":0}'
)


def test_quorum_state():
    q = bf.parse_quorum_state(QS0, P)
    assert q == bf.QuorumState(0, 1, 1, -1, None, "", 0, (1,))
    q1 = bf.parse_quorum_state(
        b'{"leaderId":3,"leaderEpoch":7,"votedId":2,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAQ","data_version":1}\ngarbage',
        P,
    )
    assert (q1.data_version, q1.leader_id, q1.leader_epoch, q1.voted_id) == (1, 3, 7, 2)
    assert q1.voted_directory_id == "AAAAAAAAAAAAAAAAAAAAAQ" and q1.current_voters is None and q1.cluster_id is None


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{}",
        b'{"data_version":2}',
        b'{"data_version":"0"}',
        b"[]",
        b"not json",
        b'{"data_version":0,"leaderId":"1"}',
        b'{"data_version":0,"currentVoters":[1]}',
        b'{"data_version":0,"currentVoters":[{}]}',
        b'{"data_version":0,"clusterId":5}',
    ],
)
def test_quorum_state_malformed(data):
    corrupt(bf.parse_quorum_state, data)


# --------------------------------------------------------------------------- fuzz contract

PARSERS = [
    cp.parse_offset_checkpoint,
    cp.parse_leader_epoch_checkpoint,
    cp.parse_partition_metadata,
    bf.parse_meta_properties,
    bf.parse_clean_shutdown,
    bf.parse_quorum_state,
]


@pytest.mark.parametrize("parser", PARSERS, ids=lambda f: f.__name__)
@settings(max_examples=examples(300), deadline=None)
@given(
    data=st.one_of(
        st.binary(max_size=200),
        st.text(max_size=200),
        st.lists(
            st.sampled_from(
                [
                    "0",
                    "1",
                    "2",
                    "-1",
                    " ",
                    "\n",
                    "\r",
                    "t",
                    ":",
                    "=",
                    "\\",
                    "#",
                    "{",
                    "}",
                    '"',
                    "version: ",
                    "topic_id: ",
                    "AAAAAAAAAAAAAAAAAAAAAQ",
                    "data_version",
                    "\\u",
                    "\x00",
                    "\xff",
                ]
            ),
            max_size=40,
        ).map("".join),
    )
)
def test_only_corrupt_checkpoint_error_escapes(parser, data):
    try:
        parser(data, P)
    except CorruptCheckpointError as e:
        assert e.path == P


# --------------------------------------------------------------------------- real broker files


@pytest.mark.parametrize("run", RUNS)
def test_real_root_files(run):
    d = real_data(run)
    meta = bf.parse_meta_properties((d / "meta.properties").read_bytes(), str(d / "meta.properties"))
    assert meta.version == 1 and meta.node_id == 1 and meta.cluster_id and meta.directory_id
    clean = bf.parse_clean_shutdown((d / ".kafka_cleanshutdown").read_bytes(), "x")
    assert clean.version == 0 and clean.broker_epoch in (6, 10)
    hw = cp.parse_offset_checkpoint((d / "replication-offset-checkpoint").read_bytes(), "x").offsets()
    assert len(hw) == 136
    assert hw[TopicPartition("g-compact-txn", 0)] == 35
    assert hw[TopicPartition("b-txn-aborts", 0)] == 33
    assert len(cp.parse_offset_checkpoint((d / "recovery-point-offset-checkpoint").read_bytes(), "x").entries) == 136
    assert cp.parse_offset_checkpoint((d / "log-start-offset-checkpoint").read_bytes(), "x").entries == ()
    cleaner = cp.parse_offset_checkpoint((d / "cleaner-offset-checkpoint").read_bytes(), "x").offsets()
    assert cleaner == {TopicPartition("g-compact-txn", 0): 33}


@pytest.mark.parametrize("run", RUNS)
def test_real_partition_files(run):
    d = real_data(run)
    seen_ids = set()
    for part in sorted(p for p in d.iterdir() if p.is_dir()):
        md = cp.parse_partition_metadata((part / "partition.metadata").read_bytes(), str(part))
        seen_ids.add((part.name.rsplit("-", 1)[0], md.topic_id))
        epochs = cp.parse_leader_epoch_checkpoint((part / "leader-epoch-checkpoint").read_bytes(), str(part))
        assert epochs.is_monotonic()
    topics = {t for t, _ in seen_ids}
    assert len(seen_ids) == len(topics)  # one id per topic
    assert ("__cluster_metadata", "AAAAAAAAAAAAAAAAAAAAAQ") in seen_ids
    q = bf.parse_quorum_state((d / "__cluster_metadata-0" / "quorum-state").read_bytes(), "q")
    assert (q.leader_id, q.leader_epoch, q.voted_id, q.current_voters, q.data_version) == (1, 1, -1, (1,), 0)


def test_real_files_are_not_modified_by_parsing():
    d = real_data(RUNS[0])
    before = os.stat(d / "meta.properties")
    bf.parse_meta_properties((d / "meta.properties").read_bytes(), "m")
    after = os.stat(d / "meta.properties")
    assert (before.st_mtime_ns, before.st_size, before.st_mode) == (after.st_mtime_ns, after.st_size, after.st_mode)


@pytest.mark.parametrize("parser", PARSERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("data", ["\ud800", "[" * 100000, '{"a":' * 50000])
def test_pathological_input(parser, data):
    try:
        parser(data, P)
    except CorruptCheckpointError as e:
        assert e.path == P
