"""Seeded mutations of real Kafka segments, each with a byte map back to the original.

A :class:`Mutant` starts as a copy of a segment and records, for every byte of the mutated file,
which byte of the original it came from (``origin[j]``, or -1 for a byte that was inserted or spliced
in). In-place damage (bit flips, byte sets, zero fills, overwrites) keeps the origin and changes the
value; truncations and deletions drop bytes; inserts, splices and appended zeros add bytes with origin
-1. The oracle (:mod:`tests.fuzz.segment_oracle`) uses the map to tell, for every batch of the
original, whether its bytes are intact (and where they are now), damaged only in fields no checksum
covers, or damaged.

:func:`mutate` draws one mutation of a given kind from a ``random.Random``; the same seed gives the
same bytes on every machine (``random.Random`` is specified to be reproducible across platforms for
the same seed and call sequence).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"
EXAMPLE = REPO / "fixtures" / "example-disk"

DECODERS = {"__transaction_state": "transaction-log", "__consumer_offsets": "offsets",
            "__cluster_metadata": "cluster-metadata"}

# v2 header fields (name, offset, width); the first two are outside the CRC-32C with the epoch
V2_FIELDS = (("baseOffset", 0, 8), ("batchLength", 8, 4), ("partitionLeaderEpoch", 12, 4), ("magic", 16, 1),
             ("crc", 17, 4), ("attributes", 21, 2), ("lastOffsetDelta", 23, 4), ("baseTimestamp", 27, 8),
             ("maxTimestamp", 35, 8), ("producerId", 43, 8), ("producerEpoch", 51, 2),
             ("baseSequence", 53, 4), ("recordsCount", 57, 4))
HUGE_LENGTHS = (0x7FFFFFFF, 0x7FFFFFF0, 0x40000000, 0x10000000, -1, -0x80000000, 0, 13, 48)
EXTREME_OFFSETS = (2**63 - 1, 2**63 - 2, 2**63 - 100, -1, -2**63, 2**31, 2**31 - 1, 2**32 + 5)

KINDS = ("bitflip", "byteset", "truncate", "zerofill", "zerotail", "splice", "insert", "delete", "header", "multi")


class Source(NamedTuple):
    name: str  # path relative to the repository
    data: bytes
    base_offset: int  # from the file name
    decoder: str | None  # dump record decoder for the topic
    sha256: str
    batches: tuple[tuple[int, int], ...] = ()  # (position, end) of every batch, filled by the oracle

    @property
    def file_name(self) -> str:
        return self.name.rsplit("/", 1)[-1]


def topic_of(partition_dir: str) -> str:
    return partition_dir.rsplit("-", 1)[0]


def load_source(path: Path) -> Source:
    data = path.read_bytes()
    return Source(str(path.relative_to(REPO)), data, int(path.name[:20]), DECODERS.get(topic_of(path.parent.name)),
                  hashlib.sha256(data).hexdigest())


def real_sources(roots: Sequence[Path] = (REAL,)) -> list[Source]:
    """Every non-empty ``.log`` under ``roots``, once per distinct content (first path in sorted order)."""
    seen: dict[str, Source] = {}
    for root in roots:
        for path in sorted(root.glob("**/*.log")):
            if path.stat().st_size == 0:
                continue
            src = load_source(path)
            seen.setdefault(src.sha256, src)
    return list(seen.values())


class Mutant:
    """The mutated bytes and, per byte, its position in the original (-1: not from the original)."""

    def __init__(self, data: bytes) -> None:
        self.original = data
        self.data = bytearray(data)
        self.origin: list[int] = list(range(len(data)))
        self.ops: list[str] = []

    def flip(self, i: int, bit: int) -> None:
        self.data[i] ^= 1 << bit
        self.ops.append(f"flip bit {bit} of byte {i}")

    def overwrite(self, i: int, chunk: bytes, what: str = "set", foreign: bool = False) -> None:
        """Write ``chunk`` over the bytes at ``i``; ``foreign``: it comes from another file, so the
        bytes under it count as replaced (origin -1), not as changed in place."""
        chunk = chunk[: len(self.data) - i]
        self.data[i: i + len(chunk)] = chunk
        if foreign:
            self.origin[i: i + len(chunk)] = [-1] * len(chunk)
        self.ops.append(f"{what} bytes {i}..{i + len(chunk)} to {chunk[:16].hex()}{'...' if len(chunk) > 16 else ''}")

    def zero(self, a: int, b: int) -> None:
        b = min(b, len(self.data))
        self.data[a:b] = bytes(b - a)
        self.ops.append(f"zero bytes {a}..{b}")

    def truncate(self, n: int) -> None:
        self.ops.append(f"truncate {len(self.data)} -> {n} bytes")
        del self.data[n:]
        del self.origin[n:]

    def insert(self, i: int, chunk: bytes, what: str = "insert") -> None:
        self.data[i:i] = chunk
        self.origin[i:i] = [-1] * len(chunk)
        self.ops.append(f"{what} {len(chunk)} bytes at {i}")

    def delete(self, a: int, b: int) -> None:
        b = min(b, len(self.data))
        del self.data[a:b]
        del self.origin[a:b]
        self.ops.append(f"delete bytes {a}..{b}")

    def describe(self) -> str:
        return "; ".join(self.ops)


# -- drawing mutations ---------------------------------------------------------------------------


def _pos(rng: random.Random, m: Mutant) -> int:
    return rng.randrange(len(m.data))


def _current_batches(m: Mutant, batches: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Original batches whose first 61 bytes are still in place, as positions in the mutant."""
    where = {o: j for j, o in enumerate(m.origin) if o >= 0}
    out = []
    for p, e in batches:
        j = where.get(p)
        if j is not None and where.get(min(p + 60, e - 1)) == j + min(60, e - 1 - p):
            out.append((j, j + e - p))
    return out


def _bitflip(rng, m, batches, others) -> None:
    for _ in range(rng.choice((1, 1, 1, 1, 2, 3, 8))):
        m.flip(_pos(rng, m), rng.randrange(8))


def _byteset(rng, m, batches, others) -> None:
    for _ in range(rng.choice((1, 1, 2, 4))):
        m.overwrite(_pos(rng, m), bytes([rng.randrange(256)]))


def _truncate(rng, m, batches, others) -> None:
    cur = _current_batches(m, batches)
    r = rng.random()
    if cur and r < 0.3:  # mid-header
        p, e = rng.choice(cur)
        m.truncate(p + rng.randrange(1, min(61, e - p)))
    elif cur and r < 0.4:  # exactly at a batch boundary (no damage: a shorter clean segment)
        m.truncate(rng.choice(cur)[0])
    else:
        m.truncate(_pos(rng, m))


def _zerofill(rng, m, batches, others) -> None:
    cur = _current_batches(m, batches)
    if cur and rng.random() < 0.3:  # whole batches
        i = rng.randrange(len(cur))
        j = min(len(cur), i + rng.choice((1, 1, 2, 5)))
        m.zero(cur[i][0], cur[j - 1][1])
    else:
        a = _pos(rng, m)
        m.zero(a, a + rng.choice((1, 2, 4, 8, 13, 40, 100, 300, 2000)))


def _zerotail(rng, m, batches, others) -> None:
    r = rng.random()
    if r < 0.4:  # a crash after the file was extended: zeros from some point to the end
        m.zero(_pos(rng, m), len(m.data))
    elif r < 0.7:  # a preallocated tail (segment.preallocate / Windows)
        m.insert(len(m.data), bytes(rng.choice((1, 17, 61, 4096, 65536))), "append zeros:")
    else:  # both
        a = _pos(rng, m)
        m.zero(a, len(m.data))
        m.insert(len(m.data), bytes(rng.choice((1, 100, 4096))), "append zeros:")


def _splice(rng, m, batches, others) -> None:
    other = rng.choice(others)
    r = rng.random()
    if r < 0.5:  # this segment's head, then another segment's tail (a reused or crossed block)
        cur = _current_batches(m, batches)
        cut = rng.choice(cur)[0] if cur and rng.random() < 0.3 else _pos(rng, m)
        j = rng.choice(other.batches)[0] if other.batches and rng.random() < 0.5 else rng.randrange(len(other.data))
        m.truncate(cut)
        m.insert(cut, other.data[j:], f"splice {other.name}[{j}:] ->")
    else:  # a piece of another segment inserted or written over this one
        j = rng.randrange(len(other.data))
        chunk = other.data[j: j + rng.choice((8, 61, 200, 1000, 5000))]
        i = _pos(rng, m)
        if r < 0.75:
            m.insert(i, chunk, f"splice {other.name}[{j}:{j + len(chunk)}] ->")
        else:
            m.overwrite(i, chunk, f"overwrite with {other.name}[{j}:]:", foreign=True)


def _insert(rng, m, batches, others) -> None:
    n = rng.choice((1, 2, 7, 17, 64, 300))
    m.insert(rng.randrange(len(m.data) + 1), rng.randbytes(n))


def _delete(rng, m, batches, others) -> None:
    a = _pos(rng, m)
    m.delete(a, a + rng.choice((1, 2, 4, 12, 61, 100, 1000)))


def _header(rng, m, batches, others) -> None:
    cur = _current_batches(m, batches)
    if not cur:
        return _byteset(rng, m, batches, others)
    p, _ = rng.choice(cur)
    name, off, width = rng.choice(V2_FIELDS)
    if name == "batchLength" and rng.random() < 0.6:  # a length claiming gigabytes (or nonsense)
        m.overwrite(p + off, rng.choice(HUGE_LENGTHS).to_bytes(4, "big", signed=True), "length field:")
    elif name == "baseOffset" and rng.random() < 0.4:  # offsets at the ends of the int64 range
        m.overwrite(p + off, rng.choice(EXTREME_OFFSETS).to_bytes(8, "big", signed=True), "baseOffset:")
    elif rng.random() < 0.5:
        m.flip(p + off + rng.randrange(width), rng.randrange(8))
    else:
        m.overwrite(p + off, rng.randbytes(width), f"{name}:")


_SIMPLE = {"bitflip": _bitflip, "byteset": _byteset, "truncate": _truncate, "zerofill": _zerofill,
           "zerotail": _zerotail, "splice": _splice, "insert": _insert, "delete": _delete, "header": _header}


def mutate(rng: random.Random, kind: str, src: Source, others: Sequence[Source]) -> Mutant:
    """One mutation of ``src`` (``others``: segments to splice from)."""
    m = Mutant(src.data)
    steps = [rng.choice(sorted(_SIMPLE)) for _ in range(rng.randint(2, 4))] if kind == "multi" else [kind]
    for step in steps:
        if not m.data:
            m.insert(0, rng.randbytes(rng.randint(1, 8)))
            continue
        _SIMPLE[step](rng, m, src.batches, others)
    return m
