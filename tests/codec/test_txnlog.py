"""forensics.codec.txnlog: __transaction_state keys/values, partition hash, Kafka 4.1 decoder text."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensics.codec import txnlog as tl
from forensics.codec import txnlog_text as tt
from forensics.codec.primitives import encode_uvarint
from forensics.errors import CorruptTransactionLogError, ForensicsError
from tests.oracle import iter_v2_records
from tests.tiers import examples

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "real"
REAL = Path("/work/shared/real-kafka/4.1.0")
RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")

h = bytes.fromhex

# worked examples of TransactionLogKey / TransactionLogValue
KEY_MY_TXN_ID = h("0000" "0009" "6d792d74786e2d6964")
V0_ONGOING = h("0000 00000000000003e8 0005 0000ea60 01 00000001 0006 6f7264657273 00000002 00000000 00000002"
               " 0000018bcfe56800 0000018bcfe540f0".replace(" ", ""))
V1_ONGOING = h("0001 00000000000003e8 0005 0000ea60 01 02 07 6f7264657273 03 00000000 00000002 00"
               " 0000018bcfe56800 0000018bcfe540f0 01 02 02 0002".replace(" ", ""))
V0_EMPTY = h("0000 00000000000003e8 0006 0000ea60 00 ffffffff 0000018bcfe56800 ffffffffffffffff".replace(" ", ""))
V1_EMPTY = h("0001 00000000000003e8 0006 0000ea60 00 00 0000018bcfe56800 ffffffffffffffff 00".replace(" ", ""))
EXAMPLES = (V0_ONGOING, V1_ONGOING, V0_EMPTY, V1_EMPTY)


# --------------------------------------------------------------------------- test-local helpers

_RECORD_LINE = re.compile(r"^\| offset: (\d+) .*? key: (.*?)(?: payload: (.*))?$")


def dump_records(dump_path: Path, part: str, name: str):
    lines = dump_path.read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("# kafka-dump-log.sh") and "--transaction-log-decoder" in lines[0]
    assert lines[1] == f"Dumping {part}/{name}"
    out = []
    for line in lines[2:]:
        if line.startswith("| "):
            m = _RECORD_LINE.match(line)
            assert m, line
            out.append((int(m.group(1)), m.group(2), m.group(3)))
    return out


def our_records(path: Path):
    out = []
    for offset, key, value, control in iter_v2_records(path.read_bytes()):
        assert not control
        k, p = tt.format_record_key_and_value(key, value, offset)
        out.append((offset, k, p))
    return out


def compare_log(data_dir: Path, dumps_dir: Path) -> int:
    """Compare every segment of one partition with its dump; returns the number of records."""
    part, n = data_dir.name, 0
    for log in sorted(data_dir.glob("*.log")):
        ours = our_records(log)
        theirs = dump_records(dumps_dir / part / f"{log.name}.dump.txt", part, log.name)
        assert ours == theirs, (str(log), ours[:2], theirs[:2])
        n += len(ours)
    return n


def encode_value(version, pid, epoch, timeout, status, partitions, last_update, start,
                 tags=(), element_tags=()) -> bytes:
    """Minimal TransactionLogValue writer (test only)."""
    flex = version >= 1
    out = struct.pack(">hqhib", version, pid, epoch, timeout, status)
    if partitions is None:
        out += encode_uvarint(0) if flex else struct.pack(">i", -1)
    else:
        out += encode_uvarint(len(partitions) + 1) if flex else struct.pack(">i", len(partitions))
        for topic, ids in partitions:
            raw = topic.encode("utf-8") if isinstance(topic, str) else topic
            out += encode_uvarint(len(raw) + 1) if flex else struct.pack(">h", len(raw))
            out += raw
            out += encode_uvarint(len(ids) + 1) if flex else struct.pack(">i", len(ids))
            out += b"".join(struct.pack(">i", i) for i in ids)
            if flex:
                out += tag_section(element_tags)
    out += struct.pack(">qq", last_update, start)
    if flex:
        out += tag_section(tags)
    return out


def tag_section(tags) -> bytes:
    out = encode_uvarint(len(tags))
    for tag, data in tags:
        out += encode_uvarint(tag) + encode_uvarint(len(data)) + data
    return out


def encode_key(txn_id, version=0) -> bytes:
    raw = txn_id.encode("utf-8") if isinstance(txn_id, str) else txn_id
    return struct.pack(">hh", version, len(raw)) + raw


# --------------------------------------------------------------------------- spec examples


def test_spec_key_example():
    key = tl.decode_key(KEY_MY_TXN_ID)
    assert key == tl.TransactionLogKey("my-txn-id", 0)
    assert tt.format_key_json(key) == '{"type":"0","data":{"transactionalId":"my-txn-id"}}'


@pytest.mark.parametrize("raw,version", [(V0_ONGOING, 0), (V1_ONGOING, 1)])
def test_spec_ongoing_values(raw, version):
    v = tl.decode_value(raw)
    assert v.version == version and v.producer_id == 1000 and v.producer_epoch == 5
    assert v.transaction_timeout_ms == 60000 and v.status is tl.TransactionStatus.ONGOING
    assert v.partitions == (tl.PartitionsSchema("orders", (0, 2)),)
    assert v.last_update_timestamp_ms == 1700000000000 and v.start_timestamp_ms == 1699999990000
    assert v.client_transaction_version == (2 if version else 0)
    assert v.trailing_bytes == 0 and v.unknown_tags == ()
    tail = ',"clientTransactionVersion":2}}' if version else "}}"
    assert tt.format_value_json(v) == (
        '{"version":"%d","data":{"producerId":1000,"producerEpoch":5,"transactionTimeoutMs":60000,'
        '"transactionStatus":1,"transactionPartitions":[{"topic":"orders","partitionIds":[0,2]}],'
        '"transactionLastUpdateTimestampMs":1700000000000,"transactionStartTimestampMs":1699999990000' % version
        + tail
    )


@pytest.mark.parametrize("raw,version", [(V0_EMPTY, 0), (V1_EMPTY, 1)])
def test_spec_empty_values(raw, version):
    v = tl.decode_value(raw)
    assert v.status is tl.TransactionStatus.EMPTY and v.partitions is None and v.start_timestamp_ms == -1
    assert v.producer_epoch == 6 and v.version == version
    assert tt.format_value_json(v) == (
        '{"version":"%d","data":{"producerId":1000,"producerEpoch":6,"transactionTimeoutMs":60000,'
        '"transactionStatus":0,"transactionPartitions":null,"transactionLastUpdateTimestampMs":1700000000000,'
        '"transactionStartTimestampMs":-1}}' % version
    )


def test_brief_example_text_i_java_txn():
    value = encode_value(1, 19, 1, 60000, 2, [("i-java-txn", [1])], 1795211299775, 1795211299178,
                         tags=[(2, b"\x00\x02")])
    assert tt.format_value_json(tl.decode_value(value)) == (
        '{"version":"1","data":{"producerId":19,"producerEpoch":1,"transactionTimeoutMs":60000,'
        '"transactionStatus":2,"transactionPartitions":[{"topic":"i-java-txn","partitionIds":[1]}],'
        '"transactionLastUpdateTimestampMs":1795211299775,"transactionStartTimestampMs":1795211299178,'
        '"clientTransactionVersion":2}}'
    )
    assert tt.format_key_json(tl.decode_key(encode_key("a-tx-producer-1"))) == \
        '{"type":"0","data":{"transactionalId":"a-tx-producer-1"}}'


@pytest.mark.parametrize("txn_id,n,partition", [
    ("polygenelubricants", 50, 0),  # hashCode == Integer.MIN_VALUE, Utils.abs -> 0
    ("my-txn-id", 50, 11),
    ("Aa", 50, 12),
    ("BB", 50, 12),
    ("", 50, 0),
])
def test_transaction_partition_for_spec_examples(txn_id, n, partition):
    assert tl.transaction_partition_for(txn_id, n) == partition


def test_java_string_hash():
    assert tl.java_string_hash("polygenelubricants") == -2**31
    assert tl.java_string_hash("my-txn-id") == 1405732511
    assert tl.java_string_hash("Aa") == tl.java_string_hash("BB") == 2112
    assert tl.java_string_hash("\U0001F600") == 31 * 0xD83D + 0xDE00  # two UTF-16 code units
    assert tl.java_string_hash("é") == 0xE9
    with pytest.raises(ValueError):
        tl.transaction_partition_for("x", 0)


# --------------------------------------------------------------------------- real oracle


@pytest.mark.parametrize("run,part,expect_version", [
    ("kraft-tv2", "__transaction_state-21", 1),
    ("kraft-rv3.9-tv0", "__transaction_state-20", 0),
])
def test_fixture_logs_match_dump(run, part, expect_version):
    n = compare_log(FIXTURES / run / part, FIXTURES / run / "dumps")
    assert n == 4
    buf = (FIXTURES / run / part / "00000000000000000000.log").read_bytes()
    values = [tl.decode_value(v) for _, _, v, _ in iter_v2_records(buf)]
    assert {v.version for v in values} == {expect_version}
    assert [v.status_id for v in values] == ([0, 1, 3, 5] if expect_version else [0, 1, 2, 4])
    # both null (Empty) and empty (Complete*) partition arrays occur
    assert values[0].partitions is None and values[-1].partitions == ()
    for _, key, _, _ in iter_v2_records(buf):
        k = tl.decode_key(key)
        assert tl.transaction_partition_for(k.transactional_id, 50) == int(part.rsplit("-", 1)[1])


@pytest.mark.skipif(not REAL.is_dir(), reason="/work/shared/real-kafka not available")
@pytest.mark.parametrize("run", RUNS)
def test_every_real_transaction_state_log_matches_kafka_dump(run):
    dirs = sorted((REAL / run / "data").glob("__transaction_state-*"))
    assert len(dirs) == 50
    records = 0
    for d in dirs:
        n = compare_log(d, REAL / run / "dumps")
        records += n
        for log in d.glob("*.log"):
            for _, key, _, _ in iter_v2_records(log.read_bytes()):
                owner = tl.transaction_partition_for(tl.decode_key(key).transactional_id, 50)
                assert owner == int(d.name.rsplit("-", 1)[1])
    assert records >= 200  # 213 (kraft-tv2) and 205 (kraft-rv3.9-tv0) records


# --------------------------------------------------------------------------- semantics


def test_tombstone_and_empty_value():
    assert tl.decode_value(None) is None
    assert tt.format_value_json(None) == "<DELETE>"
    assert tt.format_record_key_and_value(KEY_MY_TXN_ID, None, 9) == (
        '{"type":"0","data":{"transactionalId":"my-txn-id"}}', "<DELETE>")
    with pytest.raises(CorruptTransactionLogError):
        tl.decode_value(b"")  # an empty value is not a tombstone


def test_unknown_key_version_is_typed_not_an_error():
    key = tl.decode_key(b"\x00\x01\x00\x02ab")
    assert key == tl.UnknownTransactionLogKey(1, b"\x00\x02ab")
    assert tt.format_record_key_and_value(b"\x00\x01\x00\x02ab", V0_ONGOING, 42) == (
        "Unknown record type 1 at offset 42, skipping.", None)


def test_record_error_texts():
    assert tt.format_record_key_and_value(b"\x00", None, 3) == (
        "Error at offset 3, skipping. Could not read version from key's buffer.", None)
    assert tt.format_record_key_and_value(KEY_MY_TXN_ID, b"\x00", 3) == (
        "Error at offset 3, skipping. Could not read version from value's buffer.", None)
    k, p = tt.format_record_key_and_value(KEY_MY_TXN_ID, b"\x00\x02" + V0_ONGOING[2:], 3)
    assert k == ("Error at offset 3, skipping. Could not read record with version 2 from value's buffer "
                 "due to: Can't read version 2 of TransactionLogValue.") and p is None
    k, p = tt.format_record_key_and_value(KEY_MY_TXN_ID[:-1], V0_ONGOING, 3)
    assert k.startswith("Error at offset 3, skipping. Could not read record with version 0 from key's buffer")
    with pytest.raises(CorruptTransactionLogError):
        tt.format_record_key_and_value(None, V0_ONGOING, 3)


def test_unknown_status_is_kept():
    v = tl.decode_value(encode_value(0, 1, 0, 100, 9, [], 5, 6))
    assert v.status == 9 and not v.status_known and v.status_id == 9
    assert '"transactionStatus":9,' in tt.format_value_json(v)
    v = tl.decode_value(encode_value(0, 1, 0, 100, -1, [], 5, 6))
    assert v.status == -1 and not v.status_known
    assert tl.decode_value(V0_ONGOING).status_known
    assert tl.TransactionStatus.PREPARE_EPOCH_FENCE.kafka_name == "PrepareEpochFence"


def test_tagged_fields_known_unknown_and_json_placement():
    tags = [(0, struct.pack(">q", 77)), (1, struct.pack(">q", 78)), (2, b"\x00\x01"),
            (3, struct.pack(">h", 4)), (9, b"\xde\xad")]
    raw = encode_value(1, 5, 3, 1000, 1, [("t", [0])], 10, 11, tags=tags, element_tags=[(4, b"x")])
    v = tl.decode_value(raw)
    assert (v.previous_producer_id, v.next_producer_id, v.client_transaction_version, v.next_producer_epoch) == \
        (77, 78, 1, 4)
    assert v.unknown_tags == (tl.TaggedField(9, b"\xde\xad"),)
    assert v.partition_unknown_tags == ((0, tl.TaggedField(4, b"x")),)
    assert tt.format_value_json(v) == (
        '{"version":"1","data":{"producerId":5,"previousProducerId":77,"nextProducerId":78,"producerEpoch":3,'
        '"transactionTimeoutMs":1000,"transactionStatus":1,"transactionPartitions":[{"topic":"t","partitionIds":[0]}],'
        '"transactionLastUpdateTimestampMs":10,"transactionStartTimestampMs":11,"clientTransactionVersion":1}}'
    )


def test_tagged_fields_at_default_are_not_printed():
    tags = [(0, struct.pack(">q", -1)), (2, b"\x00\x00")]
    v = tl.decode_value(encode_value(1, 5, 3, 1000, 0, None, 10, -1, tags=tags))
    assert "previousProducerId" not in tt.format_value_json(v)
    assert "clientTransactionVersion" not in tt.format_value_json(v)


def test_known_tag_with_wrong_size_is_an_error():
    raw = encode_value(1, 5, 3, 1000, 0, None, 10, -1, tags=[(2, b"\x00\x00\x02")])
    with pytest.raises(CorruptTransactionLogError, match="tagged field 2") as info:
        tl.decode_value(raw)
    assert info.value.position == 35  # the tag itself: 17 fixed + 1 null array + 16 timestamps + 1 count


def test_partitions_null_vs_empty_v0_v1():
    for version in (0, 1):
        assert tl.decode_value(encode_value(version, 1, 0, 1, 0, None, 1, 1)).partitions is None
        v = tl.decode_value(encode_value(version, 1, 0, 1, 4, [], 1, 1))
        assert v.partitions == ()
        assert '"transactionPartitions":[],' in tt.format_value_json(v)


def test_jackson_escaping_of_strings():
    txn_id = 'a"b\\c/d\ne\tf\x01g\x1fh\x7fi\u00e9j\u2028k\U0001F600l\x08\x0c\r'
    k = tl.decode_key(encode_key(txn_id))
    assert tt.format_key_json(k) == (
        '{"type":"0","data":{"transactionalId":"a\\"b\\\\c/d\\ne\\tf\\u0001g\\u001Fh\x7fi\u00e9j\u2028k'
        '\U0001F600l\\b\\f\\r"}}'
    )
    v = tl.decode_value(encode_value(1, 1, 0, 1, 1, [("t\x00\u00fc", [3])], 1, 1))
    assert '"topic":"t\\u0000\u00fc"' in tt.format_value_json(v)


def test_invalid_utf8_is_replaced_like_java():
    k = tl.decode_key(encode_key(b"ab\xffc"))
    assert k.transactional_id == "ab\ufffdc" and k.utf8_replaced
    v = tl.decode_value(encode_value(0, 1, 0, 1, 1, [(b"t\xc3", [0])], 1, 1))
    assert v.partitions[0].topic == "t\ufffd" and v.utf8_replaced
    assert not tl.decode_key(KEY_MY_TXN_ID).utf8_replaced


def test_trailing_bytes_are_counted_not_rejected():
    assert tl.decode_key(KEY_MY_TXN_ID + b"zz").trailing_bytes == 2
    assert tl.decode_value(V1_ONGOING + b"\x00").trailing_bytes == 1


def test_structural_errors():
    with pytest.raises(CorruptTransactionLogError, match="non-nullable field transactionalId"):
        tl.decode_key(b"\x00\x00\xff\xff")
    # v1 compact topic longer than 0x7fff
    raw = struct.pack(">hqhib", 1, 1, 0, 1, 1) + encode_uvarint(2) + encode_uvarint(0x8001)
    with pytest.raises(CorruptTransactionLogError, match="invalid length 32768"):
        tl.decode_value(raw)
    # partitionIds null
    raw = struct.pack(">hqhib", 0, 1, 0, 1, 1) + struct.pack(">ihsi", 1, 1, b"t", -1)
    with pytest.raises(CorruptTransactionLogError, match="partitionIds"):
        tl.decode_value(raw)
    # array count larger than the remaining bytes
    raw = struct.pack(">hqhib", 0, 1, 0, 1, 1) + struct.pack(">i", 1000)
    with pytest.raises(CorruptTransactionLogError, match="Tried to allocate") as info:
        tl.decode_value(raw)
    assert info.value.position == 17


def test_base_position_rebases_error_positions():
    with pytest.raises(CorruptTransactionLogError) as info:
        tl.decode_value(V0_ONGOING[:20], base_position=1000)
    assert info.value.position >= 1000
    with pytest.raises(CorruptTransactionLogError) as info:
        tl.decode_key(b"\x00", base_position=50)
    assert info.value.position == 50


@pytest.mark.parametrize("raw", EXAMPLES + (KEY_MY_TXN_ID,))
def test_every_truncation_raises_our_error(raw):
    decode = tl.decode_key if raw is KEY_MY_TXN_ID else tl.decode_value
    for n in range(len(raw)):
        with pytest.raises(CorruptTransactionLogError) as info:
            decode(raw[:n])
        assert info.value.position is not None and 0 <= info.value.position <= n


@pytest.mark.parametrize("raw", EXAMPLES)
def test_every_bit_flip_decodes_or_raises_our_error(raw):
    for i in range(len(raw) * 8):
        flipped = bytearray(raw)
        flipped[i // 8] ^= 1 << (i % 8)
        try:
            v = tl.decode_value(bytes(flipped))
        except CorruptTransactionLogError as exc:
            assert exc.position is not None
        else:
            tt.format_value_json(v)


@settings(max_examples=examples(400), deadline=None)
@given(st.binary(max_size=120))
def test_arbitrary_bytes_raise_only_our_errors(data):
    for candidate in (data, b"\x00\x00" + data, b"\x00\x01" + data):
        for decode in (tl.decode_key, tl.decode_value):
            try:
                result = decode(candidate)
            except ForensicsError as exc:
                assert isinstance(exc, CorruptTransactionLogError) and exc.position is not None
            else:
                if isinstance(result, tl.TransactionLogValue):
                    tt.format_value_json(result)
                elif isinstance(result, tl.TransactionLogKey):
                    tt.format_key_json(result)
        k, p = tt.format_record_key_and_value(candidate, data, 7)
        assert isinstance(k, str) and (p is None or isinstance(p, str))


@settings(max_examples=examples(200), deadline=None)
@given(
    st.integers(0, 1), st.integers(-2**63, 2**63 - 1), st.integers(-2**15, 2**15 - 1),
    st.integers(-2**31, 2**31 - 1), st.integers(-128, 127),
    st.one_of(st.none(), st.lists(st.tuples(st.text(max_size=8), st.lists(st.integers(-2**31, 2**31 - 1),
                                                                          max_size=4)), max_size=3)),
    st.integers(-2**63, 2**63 - 1), st.integers(-2**63, 2**63 - 1),
)
def test_roundtrip_generated_values(version, pid, epoch, timeout, status, parts, last, start):
    v = tl.decode_value(encode_value(version, pid, epoch, timeout, status, parts, last, start))
    assert (v.producer_id, v.producer_epoch, v.transaction_timeout_ms, v.status_id) == (pid, epoch, timeout, status)
    assert v.partitions == (None if parts is None else tuple(tl.PartitionsSchema(t, tuple(i)) for t, i in parts))
    assert tt.format_value_json(v).startswith('{"version":"%d","data":{"producerId":%d,' % (version, pid))
