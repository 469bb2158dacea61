"""Segments that Kafka 4.1's ``kafka-dump-log.sh`` reads without an error, built to reach every
line the dump writes: every codec, end-transaction markers, legacy v0/v1 entries and wrappers,
fields at the ends of their ranges, coordinator records of each version, and every hostile
payload of ``fixtures/hostile.py`` in keys, values, header keys and header values.

They are the inputs of the dump's differential tests (tests/codec/test_dump_runs_cases.py: the
run writer in C against the pure-Python path) and of its oracle (the same files dumped by Kafka's
own tool, ``jvm``). :func:`catalog` gives ``name -> (segment bytes, decoder)``; :func:`write` lays
them out as ``<root>/<topic>-0/00000000000000000000.log``.
"""

from __future__ import annotations

import struct
from pathlib import Path

from fixtures.diskgen.records import RecordSpec, encode_legacy_message, encode_marker_batch, encode_v2_batch
from fixtures.diskgen.txnlog import encode_txn_log_key, encode_txn_log_value
from fixtures.hostile import PAYLOADS, as_java_string, encode_group_commit, raw

START = 1_795_211_299_092
# bytes Kafka's StringDecoder replaces (invalid UTF-8 of every kind), and text it prints as it is
NOT_UTF8 = [b"\xff\xfe", b"\xed\xa0\x80x", b"\xc0\xaf", b"\xe2\x82", b"ok\xf4\x90\x80\x80", b"\xf0\x9f\x98", b"\x80",
            bytes(range(256))]
TEXTS = [b"", b"plain", "h\u00e9llo \u20ac \U0001f600".encode(), b"a\nb\r\x00c\x1b[0m\x7f", "\u202e\u2028\ufeff".encode()]
HOSTILE = [raw(p) for p in PAYLOADS.values()]
PIECES: list[bytes | None] = [None, *TEXTS, *NOT_UTF8, *HOSTILE]
HEADER_KEYS = ["", "h", "k,v", "]", *(as_java_string(p) for p in PAYLOADS.values())]


def records(seed: int, n: int) -> list[RecordSpec]:
    """n records of keys, values and headers from PIECES and HEADER_KEYS, picked by ``seed``."""
    out = []
    for i in range(n):
        j = seed * 7 + i * 3
        headers = tuple((HEADER_KEYS[(j + h) % len(HEADER_KEYS)], PIECES[(j + 2 * h) % len(PIECES)])
                        for h in range((seed + i) % 3))
        out.append(RecordSpec(key=PIECES[j % len(PIECES)], value=PIECES[(j + 1) % len(PIECES)], headers=headers,
                              timestamp_delta=(i * 13) % 5))
    return out


def _codecs() -> bytes:
    """Batches of every codec, CreateTime and LogAppendTime, each record a hostile or awkward piece."""
    out, offset = bytearray(), 0
    for codec in range(5):
        for ts_type in (0, 1):
            recs = records(codec * 2 + ts_type, len(PIECES))
            out += encode_v2_batch(offset, recs, codec=codec, timestamp_type=ts_type, base_timestamp=START,
                                   max_timestamp=START + 99 if ts_type else None)
            offset += len(recs)
    return bytes(out)


def _transactions() -> bytes:
    """Transactional and idempotent batches, COMMIT and ABORT markers between them, compressed too."""
    out, offset = bytearray(), 0
    for i in range(12):
        recs = records(i, 1 + i % 4)
        out += encode_v2_batch(offset, recs, producer_id=1000 + i % 3, producer_epoch=i % 2, base_sequence=i * 4,
                               transactional=i % 4 != 3, codec=(0, 0, 1, 4)[i % 4], base_timestamp=START + i)
        offset += len(recs)
        if i % 4 != 3:
            out += encode_marker_batch(offset, 1000 + i % 3, i % 2, i % 3 != 1, (0, 5, 2**31 - 1)[i % 3], START + i,
                                       leader_epoch=i % 2)
            offset += 1
    return bytes(out)


def _numbers() -> bytes:
    """Fields at the ends of their ranges: offsets near 2^63, sequences that wrap, timestamps -1
    and far away, a delete horizon, leader epochs -1 and 2^31-1, an empty batch."""
    out = bytearray()
    specs = [dict(base_offset=2**40, producer_id=2**62, producer_epoch=32767, base_sequence=2**31 - 2,
                  partition_leader_epoch=2**31 - 1),
             dict(base_offset=2**40 + 10, base_timestamp=-1, partition_leader_epoch=-1),
             dict(base_offset=2**40 + 20, base_timestamp=2**62, delete_horizon=START + 7),
             dict(base_offset=2**63 - 50, producer_id=7, producer_epoch=0, base_sequence=0)]
    for i, kw in enumerate(specs):
        out += encode_v2_batch(records=records(20 + i, 3), **kw)
    out += encode_v2_batch(2**63 - 40, [])  # no record: its batch line alone
    return bytes(out)


def _legacy(magic: int) -> bytes:
    """Legacy entries: plain ones of every piece, and wrappers of every legacy codec."""
    out, offset = bytearray(), 0
    for i, piece in enumerate(PIECES):
        out += encode_legacy_message(offset, PIECES[(i + 3) % len(PIECES)], piece, magic=magic,
                                     timestamp=START + i, log_append_time=magic == 1 and i % 2 == 1)
        offset += 1
    for codec in (1, 2, 3):
        inner = [RecordSpec(key=PIECES[(codec + k) % len(PIECES)], value=PIECES[(codec * 5 + k) % len(PIECES)],
                            timestamp_delta=k) for k in range(4)]
        offset += len(inner)
        out += encode_legacy_message(offset - 1, magic=magic, codec=codec, inner=inner, timestamp=START,
                                     log_append_time=magic == 1 and codec == 2)
    return bytes(out)


def _upgrade() -> bytes:
    """A partition whose format went v0 -> v1 -> v2: legacy entries before v2 batches."""
    return (encode_legacy_message(0, b"k", b"v0", magic=0) + encode_legacy_message(1, None, b"v1", magic=1)
            + encode_v2_batch(2, records(30, 3)) + encode_marker_batch(5, 9, 0, True, 1, START))


def _txn_state() -> bytes:
    """TransactionLogValue v0 and v1 of every status, topics and ids hostile, tombstones."""
    out, offset = bytearray(), 0
    ids = ["tx-1", *(as_java_string(p) for p in PAYLOADS.values())]
    for i, tid in enumerate(ids):
        partitions = None if i % 5 == 0 else [(ids[(i + k) % len(ids)][:200], k) for k in range(1 + i % 3)]
        value = encode_txn_log_value(4000 + i, i % 3, 60000, i % 8, partitions, START + i, START - i if i % 2 else -1,
                                     version=i % 2, client_transaction_version=i % 3 if i % 2 else 0)
        key = encode_txn_log_key(tid)
        if i % 4 == 2:  # an id that is not UTF-8: Java's decoder replaces it
            name = b"\xed\xa0\x80" + tid.encode()[:40] + NOT_UTF8[i % len(NOT_UTF8)][:2]
            key = struct.pack(">hh", 0, len(name)) + name
        recs = [RecordSpec(key=key, value=value)]
        if i % 6 == 5:
            recs.append(RecordSpec(key=key, value=None))
        out += encode_v2_batch(offset, recs, codec=(0, 0, 1, 4)[i % 4], base_timestamp=START + i)
        offset += len(recs)
    return bytes(out)


def _string(data: bytes) -> bytes:
    return struct.pack(">h", len(data)) + data


def _offsets() -> bytes:
    """Offset commits (OffsetCommitValue v0-v3, hostile group, topic and metadata), tombstones."""
    out, offset = bytearray(), 0
    texts = [b"g", *HOSTILE, *NOT_UTF8[:-1]]
    for i, text in enumerate(texts):
        commit = encode_group_commit(text, texts[(i + 1) % len(texts)][:300], i % 4, 26 + i, text, START + i)
        version = i % 4
        value = struct.pack(">hq", version, 26 + i) + (struct.pack(">i", i - 1) if version >= 3 else b"")
        value += _string(text) + struct.pack(">q", START + i) + (struct.pack(">q", START + 99) if version == 1 else b"")
        recs = [RecordSpec(key=commit.key, value=value)]
        if i % 5 == 4:
            recs.append(RecordSpec(key=commit.key, value=None))
        out += encode_v2_batch(offset, recs, codec=(0, 0, 2, 3)[i % 4], base_timestamp=START + i)
        offset += len(recs)
    return bytes(out)


def catalog() -> dict[str, tuple[bytes, str | None]]:
    """name -> (segment bytes, its decoder: None, "transaction-log" or "offsets")."""
    return {
        "codecs": (_codecs(), None),
        "transactions": (_transactions(), None),
        "numbers": (_numbers(), None),
        "legacy-v0": (_legacy(0), None),
        "legacy-v1": (_legacy(1), None),
        "upgrade": (_upgrade(), None),
        "__transaction_state": (_txn_state(), "transaction-log"),
        "__consumer_offsets": (_offsets(), "offsets"),
    }


def write(root: Path) -> dict[str, tuple[Path, str | None]]:
    """Every segment of :func:`catalog` as ``root/<name>-0/00000000000000000000.log``."""
    out = {}
    for name, (data, decoder) in catalog().items():
        path = root / f"{name}-0" / "00000000000000000000.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        out[name] = (path, decoder)
    return out
