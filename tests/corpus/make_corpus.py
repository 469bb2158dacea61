"""Regenerate ``tests/corpus``: damaged copies of real Kafka segments and the findings each must give.

Run from the repository root (rewrites ``tests/corpus/<case>/``, ``expected.json`` and ``RECIPE.md``;
deterministic: the output is byte-identical on every run, which ``tests/io/test_damaged_corpus.py``
checks)::

    .venv/bin/python tests/corpus/make_corpus.py            # write
    .venv/bin/python tests/corpus/make_corpus.py --check    # compare with the committed files

The sources are framed here by a walk over their length fields, checked with kafka-python's CRC-32C
(independent of ``forensics``). Each case is assembled piece by piece -- original batches copied
verbatim, batches with a known change, raw bytes -- and its expectations follow from the pieces by the
rules of docs/damage.md: a batch whose checksum fails but whose length is confirmed is a
``crc_mismatch`` over the batch; bytes that frame nothing are a ``corrupt_region`` (``zero_fill`` when all
zero) up to the next intact batch, or to the end of the file (``truncated_tail`` for a torn last entry);
the offsets of the framed batches give ``offset_regression``, ``offset_overflow`` and
``batch_before_base`` as Kafka's segment invariants say. Every batch that verifies must still decode
at its position with the header fields listed.
"""

from __future__ import annotations

import hashlib
import json
import random
import struct
import sys
from pathlib import Path
from typing import NamedTuple

from kafka.record._crc32c import crc as crc32c

CORPUS = Path(__file__).resolve().parent
REPO = CORPUS.parents[1]
INT32_MAX = 0x7FFFFFFF

SOURCES = {
    "aborts": "fixtures/real/kraft-tv2/b-txn-aborts-0/00000000000000000000.log",
    "txn-state": "fixtures/real/kraft-tv2/__transaction_state-21/00000000000000000000.log",
    "offsets": "fixtures/real/kraft-tv2/__consumer_offsets-42/00000000000000000000.log",
    "lz4": "fixtures/real/kraft-rv3.9-tv0/disk/f-comp-lz4-0/00000000000000000000.log",
    "gzip": "fixtures/real/kraft-tv2/disk/f-comp-gzip-0/00000000000000000000.log",
    "snappy": "fixtures/real/kraft-tv2/disk/f-comp-snappy-0/00000000000000000000.log",
    "zstd": "fixtures/real/kraft-tv2/disk/f-comp-zstd-0/00000000000000000000.log",
    "compacted": "fixtures/real/kraft-tv2/g-compact-txn-0/00000000000000000033.log",
    "orders": "fixtures/example-disk/broker-1/orders-0/00000000000000000009.log",
    "payments": "fixtures/example-disk/broker-1/payments-0/00000000000000000007.log",
}
DECODERS = {"__transaction_state": "transaction-log", "__consumer_offsets": "offsets"}


class Batch(NamedTuple):
    data: bytes
    base_offset: int
    last_offset: int
    epoch: int  # partitionLeaderEpoch


class Segment(NamedTuple):
    key: str
    path: str
    data: bytes
    batches: list[Batch]

    @property
    def decoder(self) -> str | None:
        return DECODERS.get(self.path.split("/")[-2].rsplit("-", 1)[0])


def load(key: str) -> Segment:
    data = (REPO / SOURCES[key]).read_bytes()
    batches, p = [], 0
    while p < len(data):
        base, length, epoch, magic, stored = struct.unpack_from(">qiibI", data, p)
        end = p + 12 + length
        assert magic == 2 and crc32c(data[p + 21: end]) == stored, f"{key}: batch at {p} is not a sound v2 batch"
        batches.append(Batch(data[p:end], base, base + struct.unpack_from(">i", data, p + 23)[0], epoch))
        p = end
    assert p == len(data)
    return Segment(key, SOURCES[key], data, batches)


def with_field(b: Batch, at: int, fmt: str, value: int) -> Batch:
    raw = bytearray(b.data)
    struct.pack_into(fmt, raw, at, value)
    base, _, epoch = struct.unpack_from(">qii", raw, 0)
    return Batch(bytes(raw), base, base + b.last_offset - b.base_offset, epoch)


def flip(raw: bytes, at: int, bit: int) -> bytes:
    out = bytearray(raw)
    out[at] ^= 1 << bit
    return bytes(out)


class Build:
    """A damaged file assembled from pieces, with what the reader must report for each piece."""

    def __init__(self, base: int) -> None:
        self.base = base
        self.data = bytearray()
        self.frames: list[tuple[int, int, Batch, bool]] = []  # position, end, batch, checksum verifies
        self.findings: list[tuple[str, int, int]] = []

    def batches(self, seg: Segment, ks) -> Build:
        for k in ks:
            self.batch(seg.batches[k])
        return self

    def batch(self, b: Batch, crc_ok: bool = True) -> Build:
        p = len(self.data)
        self.data += b.data
        self.frames.append((p, len(self.data), b, crc_ok))
        if not crc_ok:
            self.findings.append(("crc_mismatch", p, len(self.data)))
        return self

    def raw(self, raw: bytes, kind: str) -> Build:
        p = len(self.data)
        self.data += raw
        self.findings.append((kind, p, len(self.data)))
        return self

    def expected(self) -> tuple[list[list], list[dict]]:
        """Findings (with the offset rules applied to the framed batches, in file order) and the
        batches that must decode."""
        findings = list(self.findings)
        following = None
        for p, e, b, crc_ok in self.frames:
            if b.base_offset < self.base and crc_ok:
                findings.append(("batch_before_base", p, e))
            elif b.last_offset - self.base > INT32_MAX:
                findings.append(("offset_overflow", p, e))
            if following is not None and b.base_offset < following:
                findings.append(("offset_regression", p, e))
            following = max(following or 0, b.last_offset + 1)
        decoded = [{"position": p, "base_offset": b.base_offset, "last_offset": b.last_offset,
                    "partition_leader_epoch": b.epoch} for p, _, b, ok in self.frames if ok]
        return sorted([list(f) for f in findings], key=lambda f: (f[1], f[0])), decoded


def _cases(S: dict[str, Segment]):
    """(name, source keys, file name, damage, Build) for every case."""
    a, n = S["aborts"], len(S["aborts"].batches)
    rng = random.Random("kafka-forensics corpus")
    yield ("bitflip-header-attributes", ["aborts"], None, "bit 0 of byte 22 of batch 2 (attributes: the codec bits)",
           Build(0).batches(a, range(2)).batch(a.batches[2]._replace(data=flip(a.batches[2].data, 22, 0)), False)
           .batches(a, range(3, n)))
    yield ("bitflip-crc-field", ["aborts"], None, "bit 7 of byte 17 of batch 3 (the stored CRC-32C)",
           Build(0).batches(a, range(3)).batch(a.batches[3]._replace(data=flip(a.batches[3].data, 17, 7)), False)
           .batches(a, range(4, n)))
    for key, at in (("lz4", 100), ("gzip", 300), ("snappy", 777), ("zstd", 500)):
        s = S[key]
        yield (f"bitflip-{key}-payload", [key], None, f"bit 2 of byte {at} of batch 0 (compressed records)",
               Build(0).batch(s.batches[0]._replace(data=flip(s.batches[0].data, at, 2)), False)
               .batches(s, range(1, len(s.batches))))
    yield ("bitflip-length-field", ["aborts"], None, "bit 4 of byte 11 of batch 5 (batchLength +/- 16)",
           Build(0).batches(a, range(5)).raw(flip(a.batches[5].data, 11, 4), "corrupt_region").batches(a, range(6, n)))
    t = S["txn-state"]
    yield ("bitflip-magic", ["txn-state"], None, "bit 0 of byte 16 of batch 1 (magic 2 -> 3)",
           Build(0).batches(t, [0]).raw(flip(t.batches[1].data, 16, 0), "corrupt_region").batches(t, range(2, 4)))
    b4 = a.batches[4]
    yield ("flip-leader-epoch-undetectable", ["aborts"], None,
           "bit 0 of byte 15 of batch 4 (partitionLeaderEpoch: outside the CRC, nothing can detect it)",
           Build(0).batches(a, range(4)).batch(with_field(b4, 12, ">i", b4.epoch ^ 1)).batches(a, range(5, n)))
    b6 = a.batches[6]
    yield ("flip-base-offset", ["aborts"], None,
           "bit 3 of byte 7 of batch 6 (baseOffset +/- 8: outside the CRC; only the offset order shows it)",
           Build(0).batches(a, range(6)).batch(with_field(b6, 0, ">q", b6.base_offset ^ 8)).batches(a, range(7, n)))
    last = a.batches[-1].data
    yield ("truncate-mid-prefix", ["aborts"], None, "cut 10 bytes into the last batch (inside offset/length)",
           Build(0).batches(a, range(n - 1)).raw(last[:10], "truncated_tail"))
    yield ("truncate-mid-header", ["aborts"], None, "cut 40 bytes into the last batch (inside its header)",
           Build(0).batches(a, range(n - 1)).raw(last[:40], "truncated_tail"))
    lz = S["lz4"]
    yield ("truncate-mid-body", ["lz4"], None, "cut 500 bytes into batch 2 (lz4 records)",
           Build(0).batches(lz, range(2)).raw(lz.batches[2].data[:500], "truncated_tail"))
    yield ("zero-fill-batch", ["aborts"], None, "batch 7 overwritten with zeros",
           Build(0).batches(a, range(7)).raw(bytes(len(a.batches[7].data)), "zero_fill").batches(a, range(8, n)))
    b8 = bytearray(a.batches[8].data)
    b8[70:90] = bytes(20)
    yield ("zero-fill-in-body", ["aborts"], None, "bytes 70..90 of batch 8 zeroed (records)",
           Build(0).batches(a, range(8)).batch(a.batches[8]._replace(data=bytes(b8)), False).batches(a, range(9, n)))
    o = S["offsets"]
    yield ("zero-tail-crash", ["offsets"], None, "batches 5.. overwritten with zeros (a crash after extending the file)",
           Build(0).batches(o, range(5)).raw(bytes(sum(len(b.data) for b in o.batches[5:])), "zero_fill"))
    yield ("preallocated-tail", ["txn-state"], None, "4096 zero bytes appended (a preallocated segment)",
           Build(0).batches(t, range(4)).raw(bytes(4096), "zero_fill"))
    cut = a.batches[10].data[:150]
    assert len(cut) < len(a.batches[10].data)
    yield ("splice-head-tail", ["aborts", "offsets"], None,
           "batches 0-9 and 150 bytes of batch 10 of b-txn-aborts-0, then __consumer_offsets-42 from batch 2",
           Build(0).batches(a, range(10)).raw(cut, "corrupt_region").batches(o, range(2, len(o.batches))))
    orders = S["orders"]
    yield ("splice-garbage-between", ["txn-state", "orders"], None,
           "__transaction_state-21, 61 random bytes, then orders-0/00000000000000000009.log",
           Build(0).batches(t, range(4)).raw(bytes(rng.randrange(256) for _ in range(61)), "corrupt_region")
           .batches(orders, range(len(orders.batches))))
    big = with_field(a.batches[10], 8, ">i", 0x7FFFFFF0)
    yield ("length-claims-2gib", ["aborts"], None, "batchLength of batch 10 set to 0x7ffffff0",
           Build(0).batches(a, range(10)).raw(big.data, "corrupt_region").batches(a, range(11, n)))
    big = with_field(a.batches[-1], 8, ">i", 0x7FFFFFF0)
    yield ("length-claims-2gib-last", ["aborts"], None, "batchLength of the last batch set to 0x7ffffff0",
           Build(0).batches(a, range(n - 1)).raw(big.data, "truncated_tail"))
    ins = o.batches[3].data[:30] + bytes(rng.randrange(256) for _ in range(7)) + o.batches[3].data[30:]
    yield ("insert-inside-batch", ["offsets"], None, "7 random bytes inserted at byte 30 of batch 3",
           Build(0).batches(o, range(3)).raw(ins, "corrupt_region").batches(o, range(4, len(o.batches))))
    # regressions: the mutation sweep found these (tests/fuzz/README.md)
    yield ("regression-deletion-swallowed-batches", ["lz4"], None,
           ("bytes 411..1411 deleted (inside batch 0): its stale length ended on the file's 2 last zero bytes "
            "and used to swallow the 3 intact batches after it as one crc_mismatch"),
           Build(0).raw(lz.batches[0].data[:411] + lz.batches[0].data[1411:], "corrupt_region")
           .batches(lz, range(1, 4)))
    yield ("regression-base-offset-int64-max", ["aborts"], None,
           ("baseOffset of batch 0 set to 2^63-1: lastOffset overflowed int64 in the C accelerator (no finding, "
            "and OverflowError out of the scanner once the pure path had taken such a batch)"),
           Build(0).batch(with_field(a.batches[0], 0, ">q", 2**63 - 1)).batches(a, range(1, n)))
    c = S["compacted"]
    yield ("regression-name-beyond-int64", ["compacted"], "99999999999999999999.log",
           "unchanged copy named with a base offset beyond int64 (OverflowError in the accelerator)",
           Build(99999999999999999999).batches(c, range(len(c.batches))))
    pay = S["payments"]
    yield ("example-disk-torn-tail", ["payments"], None, "last batch cut after 100 of its 139 bytes",
           Build(7).batches(pay, range(4)).raw(pay.batches[4].data[:100], "truncated_tail"))
    yield ("example-disk-bitflip", ["orders"], None, "bit 5 of byte 120 of batch 2",
           Build(9).batches(orders, range(2)).batch(orders.batches[2]._replace(data=flip(orders.batches[2].data, 120, 5)),
                                                    False).batches(orders, range(3, len(orders.batches))))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build() -> dict[str, bytes]:
    """Every corpus file (relative path -> bytes), expected.json and RECIPE.md included."""
    S = {k: load(k) for k in SOURCES}
    out: dict[str, bytes] = {}
    expected = []
    for name, keys, file_name, damage, b in _cases(S):
        src = S[keys[0]]
        rel = f"{name}/{file_name or src.path.rsplit('/', 1)[1]}"
        data = bytes(b.data)
        findings, decoded = b.expected()
        out[rel] = data
        expected.append({"name": name, "file": rel, "sources": [S[k].path for k in keys], "damage": damage,
                         "decoder": src.decoder, "size": len(data), "sha256": sha256(data),
                         "findings": findings, "decoded": decoded})
    out["expected.json"] = ("[\n" + ",\n".join(json.dumps(e) for e in expected) + "\n]\n").encode()
    out["RECIPE.md"] = recipe(S, expected).encode()
    return out


def recipe(S: dict[str, Segment], expected: list[dict]) -> str:
    lines = [
        "# Damaged real segments (generated)",
        "",
        "Written by `tests/corpus/make_corpus.py` (`.venv/bin/python tests/corpus/make_corpus.py`; `--check`",
        "compares); do not edit by hand. Each case directory holds one damaged copy of a real Kafka 4.1.0",
        "segment (`fixtures/real`) or of a synthetic example-disk segment (`fixtures/example-disk`), under the",
        "source's file name (its base offset) unless stated. `expected.json` lists, per case, the findings the",
        "segment reader must give (`[kind, byte position, end position]`, the framing findings of",
        "docs/damage.md) and every batch that must still decode (position, offsets, partitionLeaderEpoch).",
        "`tests/io/test_damaged_corpus.py` checks them through the dump report, the scan/rebuild unit reader",
        "and `kafka-forensics dump` (in-process and as a process).",
        "",
        "## Sources",
        "",
        "| key | file | sha256 |",
        "|---|---|---|",
    ]
    lines += [f"| {k} | `{s.path}` | `{sha256(s.data)}` |" for k, s in S.items()]
    lines += ["", "## Cases", "", "| case | damage | expected findings | sha256 |", "|---|---|---|---|"]
    for e in expected:
        found = ", ".join(f"{k} {p}-{q}" for k, p, q in e["findings"]) or "none"
        lines.append(f"| `{e['file']}` | {e['damage']} | {found} | `{e['sha256']}` |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    files = build()
    if "--check" in argv:
        bad = [rel for rel, data in files.items() if not (CORPUS / rel).is_file() or (CORPUS / rel).read_bytes() != data]
        print("\n".join(f"differs: {rel}" for rel in bad) or f"{len(files)} files identical")
        return 1 if bad else 0
    for rel, data in files.items():
        (CORPUS / rel).parent.mkdir(parents=True, exist_ok=True)
        (CORPUS / rel).write_bytes(data)
    print(f"wrote {len(files)} files under {CORPUS}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
