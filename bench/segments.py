"""Single-segment generator for the decode benchmark (``bench/decode.py``).

    .venv/bin/python bench/segments.py --data /work/bench-data/decode --batches 1000000

writes one segment per kind into ``--data``: a directory named after the parameters holding
``00000000000000000000.log`` and a sidecar ``segment.json`` with the parameters and counts; a
segment whose file and sidecar exist with the same parameters is reused:

* ``v2-none``, ``v2-gzip``, ``v2-snappy``, ``v2-lz4``, ``v2-zstd``: ``--batches`` magic-2 record
  batches of 1-100 records (geometric, clipped to 1..100: mean 19 records per batch, most small),
  contiguous offsets, valid CRC-32C. Records: 40-60-byte JSON-like values, 7-byte keys (one in ten
  null), a quarter with one header. Producers: plain (pid -1, 30 %), eight idempotent ones
  (55 %) and one transactional one (15 %) whose transactions of 10 batches end with a COMMIT
  marker (a 78-byte control batch, counted in ``--batches``).
* ``v1-none``: ``--batches`` legacy magic-1 messages, one record each (message-set entries).
* ``v1-gzip``: ``--batches`` legacy magic-1 gzip wrapper messages, each holding the records of
  one batch shape as inner messages (relative offsets, as Kafka 0.10 writes them).

Speed: the records of a few hundred batch "shapes" are encoded (and compressed) once with
``fixtures/generator.py``; per batch only the 61-byte header is packed and the CRC computed, so
the writer runs at disk speed (about 1.3 GB of ``v2-none`` per million batches). Same ``--seed``,
same bytes (for compressed kinds: with the same compression library versions).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import struct
import sys
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from crc32c import crc32c

sys.path.append(str(Path(__file__).resolve().parents[1]))  # fixtures/ lives at the repo root

FORMAT_VERSION = 2  # bump when the bytes written for the same parameters change
DEFAULT_DATA = Path("/work/bench-data/decode")
V2_KINDS = ("v2-none", "v2-gzip", "v2-snappy", "v2-lz4", "v2-zstd")
LEGACY_KINDS = ("v1-none", "v1-gzip")
KINDS = V2_KINDS + LEGACY_KINDS
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
SHAPES = 512
# geometric on 1.. with P(success) p, clipped at 100: mean (1 - (1 - p)^100) / p = 19.3 for p = 1/19.4;
# with the 1-record COMMIT markers (1.4 % of the batches) the segments average 19.0 records per batch
GEOMETRIC_P = 1 / 19.4
TXN_LENGTH = 10  # data batches per transaction, then a COMMIT marker
IDEMPOTENT_PIDS = tuple(range(1000, 1008))
TXN_PID, TXN_EPOCH = 2000, 1
_PREFIX = struct.Struct(">qiibI")  # baseOffset, batchLength, partitionLeaderEpoch, magic, crc
_CRC_PART = struct.Struct(">hiqqqhii")  # attributes .. recordsCount: the start of the CRC-covered part
_LEGACY_HEAD = struct.Struct(">bbq")  # magic, attributes, timestamp: the start of the CRC-32-covered part
_LEGACY_PREFIX = struct.Struct(">qiI")  # offset, size, crc
_TRANSACTIONAL = 0x10
_FLUSH = 1 << 22
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def generator():
    """``fixtures/generator.py``, imported only when a segment must be written: it imports parts
    of ``forensics``, and existing segments stay usable while that package is mid-edit."""
    from fixtures import generator as gen

    return gen


class Shape(NamedTuple):
    """The records of one batch, encoded once: ``payload`` follows the 61-byte v2 header
    (compressed for a compressed codec), with offset and timestamp deltas 0..count-1."""

    count: int
    specs: tuple  # the generator's RecordSpecs
    payload: bytes


class SegmentInfo(NamedTuple):
    kind: str
    path: Path
    params: dict
    stats: dict

    @property
    def records(self) -> int:
        return self.stats["records"]

    @property
    def batches(self) -> int:
        return self.stats["batches"]

    @property
    def size(self) -> int:
        return self.stats["bytes"]


def shape_counts(n: int = SHAPES) -> list[int]:
    """Records per shape: the quantiles ``(i + 0.5) / n`` of a geometric distribution on 1..
    clipped to 1..100, so that the pool's mean is the distribution's, not a sample's."""
    return [min(100, 1 + int(math.log(1.0 - (i + 0.5) / n) / math.log(1.0 - GEOMETRIC_P))) for i in range(n)]


def record_specs(seed: int, n: int = SHAPES) -> list[tuple]:
    """``n`` batch shapes as tuples of ``RecordSpec``: small keys (10 % null), 40-60-byte values,
    one header on a quarter of the records."""
    gen = generator()
    rng = random.Random(f"{seed}:decode-shapes")
    events = (b"click", b"view", b"purchase", b"signup", b"logout", b"search")
    counts = shape_counts(n)
    rng.shuffle(counts)
    shapes = []
    for count in counts:
        specs = []
        for j in range(count):
            key = None if rng.random() < 0.1 else b"k%06d" % rng.randrange(1_000_000)
            size = rng.randint(40, 60)
            head = b'{"u":%d,"e":"%s","t":"' % (rng.randrange(10**6), rng.choice(events))  # at most 32 bytes
            tail = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(size - len(head) - 2))
            value = head + tail + b'"}'
            headers = (("trace", b"%016x" % rng.getrandbits(64)),) if rng.random() < 0.25 else ()
            specs.append(gen.RecordSpec(key=key, value=value, headers=headers, timestamp_delta=j))
        shapes.append(tuple(specs))
    return shapes


def make_shapes(seed: int, codec: int) -> list[Shape]:
    """Encode (and compress) each shape once with the project's generator."""
    gen = generator()
    return [Shape(len(specs), specs, gen.encode_v2_batch(0, specs, codec=codec, base_timestamp=0)[61:])
            for specs in record_specs(seed)]


def segment_path(data: Path, kind: str, batches: int, seed: int) -> Path:
    """Where a segment lives: a directory named after every parameter (the sidecar
    ``segment.json`` next to the file repeats them) holding ``00000000000000000000.log``, the name
    a first segment has on a broker (dump tools read the base offset from it)."""
    return data / f"{kind}-b{batches}-s{seed}-f{FORMAT_VERSION}" / f"{0:020d}.log"


def sidecar(path: Path) -> Path:
    """The segment's ``segment.json``: parameters and counts."""
    return path.with_name("segment.json")


def _params(kind: str, batches: int, seed: int) -> dict:
    """Everything that determines the bytes of a segment (compared on reuse)."""
    return {"kind": kind, "batches": batches, "seed": seed, "format": FORMAT_VERSION, "shapes": SHAPES,
            "generator": "fixtures/generator.py"}


class _Sink:
    """Buffered appends to the segment file: pieces are joined and written every ``_FLUSH`` bytes."""

    def __init__(self, out) -> None:
        self.out, self.parts, self.pending, self.size = out, [], 0, 0

    def add(self, *pieces: bytes) -> None:
        self.parts += pieces
        self.pending += sum(map(len, pieces))
        if self.pending >= _FLUSH:
            self.flush()

    def flush(self) -> int:
        """Write what is pending; returns the bytes written in all."""
        self.out.write(b"".join(self.parts))
        self.size += self.pending
        self.parts, self.pending = [], 0
        return self.size


def _write_v2(out, kind: str, batches: int, seed: int) -> dict:
    """Stream ``batches`` v2 batches; returns the counts for the sidecar."""
    gen = generator()
    codec = CODEC_IDS[kind.split("-", 1)[1]]
    shapes = make_shapes(seed, codec)
    rng = random.Random(f"{seed}:v2:batches")  # the same batches for every codec
    sequences: dict[int, int] = {}
    offset, ts, records, markers, txn_batches, in_txn = 0, START_MS, 0, 0, 0, 0
    sink = _Sink(out)
    for _ in range(batches):
        if in_txn == TXN_LENGTH:  # close the open transaction
            ts += 1
            sink.add(gen.encode_marker_batch(offset, TXN_PID, TXN_EPOCH, True, 0, ts))
            offset, records, markers, in_txn = offset + 1, records + 1, markers + 1, 0
        else:
            shape = shapes[rng.randrange(SHAPES)]
            n = shape.count
            roll = rng.random()
            if roll < 0.30:
                pid, epoch, seq, attrs = -1, -1, -1, codec
            else:
                pid = TXN_PID if roll >= 0.85 else IDEMPOTENT_PIDS[rng.randrange(len(IDEMPOTENT_PIDS))]
                epoch = TXN_EPOCH if pid == TXN_PID else 0
                seq = sequences.get(pid, 0)
                sequences[pid] = seq + n
                attrs = codec | (_TRANSACTIONAL if pid == TXN_PID else 0)
                if pid == TXN_PID:
                    in_txn += 1
                    txn_batches += 1
            ts += 1 + n // 8
            hdr = _CRC_PART.pack(attrs, n - 1, ts, ts + n - 1, pid, epoch, seq, n)
            payload = shape.payload
            prefix = _PREFIX.pack(offset, 49 + len(payload), 0, 2, crc32c(payload, crc32c(hdr)))
            sink.add(prefix, hdr, payload)
            offset += n
            records += n
    size = sink.flush()
    return {"batches": batches, "records": records, "bytes": size, "last_offset": offset - 1,
            "markers": markers, "transactional_batches": txn_batches,
            "mean_records_per_batch": round(records / max(batches, 1), 3), "codec": codec}


def _write_v1(out, kind: str, batches: int, seed: int) -> dict:
    """Stream ``batches`` legacy magic-1 entries: one message each (``v1-none``, timestamps
    rising by 1 ms) or gzip wrappers of one shape's records each (``v1-gzip``: each shape's
    wrapper is encoded once, so its inner timestamps repeat from wrapper to wrapper)."""
    gen = generator()
    shapes = record_specs(seed)
    rng = random.Random(f"{seed}:{kind}:entries")
    offset, ts, records = 0, START_MS, 0
    sink = _Sink(out)
    if kind == "v1-gzip":
        # a wrapper's inner offsets are relative and its CRC does not cover the offset field:
        # encode each shape's wrapper once, patch the 8-byte offset per entry
        wrappers = [gen.encode_legacy_message(len(s) - 1, magic=1, codec=gen.GZIP, timestamp=START_MS, inner=s)
                    for s in shapes]
        counts = [len(s) for s in shapes]
    else:
        flat = [r for s in shapes for r in s]
    for _ in range(batches):
        if kind == "v1-gzip":
            i = rng.randrange(SHAPES)
            last = offset + counts[i] - 1
            wrapper = wrappers[i]
            sink.add(struct.pack(">q", last), wrapper[8:])
            n = counts[i]
        else:
            spec = flat[rng.randrange(len(flat))]
            ts += 1
            body = _LEGACY_HEAD.pack(1, 0, ts) + _sized(spec.key) + _sized(spec.value)
            sink.add(_LEGACY_PREFIX.pack(offset, 4 + len(body), zlib.crc32(body)), body)
            n = 1
        offset += n
        records += n
    size = sink.flush()
    return {"batches": batches, "records": records, "bytes": size, "last_offset": offset - 1,
            "mean_records_per_batch": round(records / max(batches, 1), 3)}


def _sized(data: bytes | None) -> bytes:
    """A legacy int32-length-prefixed field (-1: null)."""
    return struct.pack(">i", -1) if data is None else struct.pack(">i", len(data)) + data


def load_info(path: Path) -> SegmentInfo | None:
    """The sidecar of an existing segment, if both files exist and agree on the size."""
    side = sidecar(path)
    if not (path.is_file() and side.is_file()):
        return None
    try:
        meta = json.loads(side.read_text())
    except (OSError, ValueError):
        return None
    if meta.get("stats", {}).get("bytes") != path.stat().st_size:
        return None
    return SegmentInfo(meta["params"]["kind"], path, meta["params"], meta["stats"])


def ensure_segment(data: Path, kind: str, batches: int, seed: int = 1, *, log=print) -> SegmentInfo:
    """Reuse the segment of these parameters if it exists in ``data``, else write it (to a
    temporary name, renamed when complete)."""
    if kind not in KINDS:
        raise ValueError(f"unknown segment kind {kind!r}; one of {', '.join(KINDS)}")
    path = segment_path(data, kind, batches, seed)
    params = _params(kind, batches, seed)
    info = load_info(path)
    if info is not None and info.params == params:
        return info
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    t0 = time.perf_counter()
    try:
        with open(tmp, "wb", buffering=1 << 20) as out:
            stats = (_write_v2 if kind in V2_KINDS else _write_v1)(out, kind, batches, seed)
        stats["generate_seconds"] = round(time.perf_counter() - t0, 2)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    sidecar(path).write_text(json.dumps({"params": params, "stats": stats}, indent=1) + "\n")
    log(f"  wrote {path}: {stats['bytes'] / 1e6:.1f} MB, {stats['batches']} batches, {stats['records']} records "
        f"in {stats['generate_seconds']:.1f} s")
    return SegmentInfo(kind, path, params, stats)


def batches_for_bytes(target_bytes: int, seed: int = 1) -> int:
    """How many ``v2-none`` batches make about ``target_bytes`` (from the shapes' mean size)."""
    shapes = make_shapes(seed, CODEC_IDS["none"])
    mean = sum(61 + len(s.payload) for s in shapes) / len(shapes)
    return max(1, round(target_bytes / mean))  # markers (1.5 % of the batches, 78 bytes) make it a bit smaller


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="output directory (default %(default)s)")
    ap.add_argument("--batches", type=int, default=1_000_000)
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated, default all: %(default)s")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    for kind in a.kinds.split(","):
        info = ensure_segment(a.data, kind.strip(), a.batches, a.seed)
        print(f"{info.path}: {info.size / 1e6:.1f} MB, {info.batches} batches, {info.records} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
