"""codec/txnlog's one-read paths (``_key_v0``, ``_value_v0``) against the field-by-field reading they
stand in for: on every ``__transaction_state`` record of the committed disks, and on each of them cut
short at every length and with bytes changed, the same value or the same error (message and position),
with the paths on and off."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from forensics.codec import txnlog
from forensics.codec.batch import decode_header, iter_records
from forensics.errors import ForensicsError

REPO = Path(__file__).resolve().parents[2]


def _records() -> list[tuple[bytes | None, bytes | None]]:
    found = []
    for log in sorted(REPO.joinpath("fixtures").rglob("__transaction_state-*/*.log")):
        buf = log.read_bytes()
        pos = 0
        while pos + 61 <= len(buf):
            size = 12 + int.from_bytes(buf[pos + 8:pos + 12], "big")
            header = decode_header(buf, pos)
            if not header.is_control and pos + size <= len(buf):
                found.extend((r.key, r.value) for r in iter_records(buf, pos, header))
            pos += size
    return found


RECORDS = _records()


def _outcome(fn, buf):
    try:
        return "value", fn(buf)
    except ForensicsError as exc:
        return "error", type(exc).__name__, exc.message, exc.position


def _both(monkeypatch, fn, buf):
    fast = _outcome(fn, buf)
    with monkeypatch.context() as m:
        m.setattr(txnlog, "_key_v0", lambda buf, end: None)
        m.setattr(txnlog, "_value_v0", lambda buf, end, shared: None)
        slow = _outcome(fn, buf)
    return fast, slow


def _value(buf):
    return txnlog.decode_value(buf, shared={})


def _variants(buf: bytes):
    """Each cut short at every length, and with each byte of its first 48 made 0x00, 0x80 and 0xFF."""
    for end in range(len(buf) + 1):
        yield buf[:end]
    for i in range(min(len(buf), 48)):
        for b in (0x00, 0x80, 0xFF):
            yield buf[:i] + bytes([b]) + buf[i + 1:]
    yield buf + b"\x00\x01"  # trailing bytes


def test_the_committed_disks_have_records_of_both_value_versions():
    versions = {struct.unpack_from(">h", v)[0] for _, v in RECORDS if v}
    assert len(RECORDS) > 50 and versions == {0, 1}


def test_every_record_decodes_the_same_either_way(monkeypatch):
    for key, value in RECORDS:
        fast, slow = _both(monkeypatch, txnlog.decode_key, key)
        assert fast == slow
        if value is not None:
            fast, slow = _both(monkeypatch, _value, value)
            assert fast == slow


def _samples(which: str, n: int = 40) -> list[bytes]:
    """``n`` distinct keys or values, spread over the records (both value versions among them)."""
    distinct = sorted({(k if which == "key" else v) for k, v in RECORDS} - {None}, key=lambda b: (b[:2], len(b), b))
    return distinct[:: max(1, len(distinct) // n)]


@pytest.mark.parametrize("which", ["key", "value"])
def test_damaged_records_decode_or_fail_the_same_either_way(monkeypatch, which):
    for buf in _samples(which):
        for variant in _variants(buf):
            fast, slow = _both(monkeypatch, txnlog.decode_key if which == "key" else _value, variant)
            assert fast == slow, variant.hex()


def test_hand_made_edges_decode_the_same_either_way(monkeypatch):
    def v0(status=4, topics=((b"t", (0, 1)),), count=None, tail=b""):
        parts = b"".join(struct.pack(">h", len(t)) + t + struct.pack(">i", len(ids)) + struct.pack(f">{len(ids)}i", *ids)
                         for t, ids in topics)
        n = len(topics) if count is None else count
        return struct.pack(">hqhibi", 0, 7, 1, 60000, status, n) + parts + struct.pack(">qq", 5, 6) + tail
    cases = [v0(), v0(status=99), v0(topics=()), v0(count=-1, topics=()), v0(topics=((b"\xed\xa0\x80", (1,)),)),
             v0(topics=((b"", ()),)), v0(tail=b"\x01\x02\x03"), v0(count=3)]
    keys = [struct.pack(">hh", 0, 2) + b"id", struct.pack(">hh", 0, 2) + b"\xff\xfe", struct.pack(">hh", 1, 2) + b"id",
            struct.pack(">hh", 0, -1), struct.pack(">hh", 0, 5) + b"id", struct.pack(">hh", 0, 0) + b"xyz"]
    for buf in cases:
        fast, slow = _both(monkeypatch, _value, buf)
        assert fast == slow
    for buf in keys:
        fast, slow = _both(monkeypatch, txnlog.decode_key, buf)
        assert fast == slow
    assert _both(monkeypatch, _value, v0(status=99))[0][1].status == 99  # an unknown status stays the raw int
