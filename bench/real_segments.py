"""Large segments made of real producers' batches, for the dump benchmark (``bench/dumpbench.py``).

    .venv/bin/python bench/real_segments.py                              # every kind at its default size
    .venv/bin/python bench/real_segments.py --kinds java-txn --mib 256

Each kind takes the largest ``.log`` of one partition of a real Kafka 4.1.0 broker disk
(``../shared/real-kafka/4.1.0/<run>/data/<partition>-*``, written by real clients: the Java
producer, librdkafka, kafka-python; see that directory's README) and repeats its entries, in file
order, until the next repetition would pass ``--mib`` MiB (default 256; 32 for ``gzip`` and ``zstd``,
64 for ``snappy`` and ``lz4``, whose text is 14-27 times the segment: about 1 GB of dump each). Repetition ``k`` adds ``k * span`` to
every entry's base offset, ``span`` being the source segment's last offset + 1 minus its first, so
offsets keep rising as on a broker; nothing else changes. The base offset is outside a v2 batch's
CRC-32C (which covers attributes onwards, ``DefaultRecordBatch``), so every CRC stays the
client's; a legacy entry's CRC-32 does not cover its offset either. Timestamps, producer ids,
sequences, leader epochs and record bytes repeat as they are.

The output is ``--data/<kind>-<MiB>m-f<format>/<source file name>`` (the name's base offset is
the source's: the dump tools read it) with a sidecar ``segment.json`` (source, SHA-256 of the
source, repetitions, counts, the dump flags of the kind); a segment whose file and sidecar agree is
reused. Same source, same bytes.

| kind | source partition | producer | dump flags beside ``--deep-iteration --print-data-log`` |
|---|---|---|---|
| ``java-txn`` | ``i-java-txn`` | Java 4.1.0 ``kafka-producer-perf-test`` transactional: 64-byte values, many small batches | |
| ``librdkafka-txn`` | ``a-txn-orders`` | confluent-kafka (librdkafka 2.16): keys, two headers per record | |
| ``kafka-python-txn`` | ``j-kafka-python-txn`` | kafka-python 3.0.12 transactional | |
| ``idempotent`` | ``c-idempotent`` | librdkafka idempotent | |
| ``gzip`` ``snappy`` ``lz4`` ``zstd`` | ``f-comp-<codec>`` | librdkafka, compressed batches | |
| ``compact-txn`` | ``g-compact-txn`` | transactional, on a compacted topic | |
| ``txn-state`` | ``__transaction_state`` | the transaction coordinator | ``--transaction-log-decoder`` |
| ``offsets`` | ``__consumer_offsets`` | the group coordinator | ``--offsets-decoder`` |
| ``metadata`` | ``__cluster_metadata`` | the KRaft controller | ``--cluster-metadata-decoder`` |
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import struct
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dumpcmp import shared_dir  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
REAL = shared_dir() / "real-kafka" / "4.1.0"
DEFAULT_RUN = "kraft-tv2"
DEFAULT_DATA = Path("/work/bench-data/real")
FORMAT_VERSION = 1  # bump when the bytes written for the same parameters change
_PREFIX = struct.Struct(">qi")  # offset, size
_LAST_DELTA = struct.Struct(">i")  # v2: lastOffsetDelta at byte 23


class Kind(NamedTuple):
    partition: str  # the partition dirs' topic: every <topic>-<n> of the run is a candidate
    flags: tuple[str, ...] = ()  # dump flags beside --deep-iteration --print-data-log
    mib: int = 256  # default size: compressed kinds print 14-27 bytes per byte, so less of them


KINDS = {
    "java-txn": Kind("i-java-txn"),
    "librdkafka-txn": Kind("a-txn-orders"),
    "kafka-python-txn": Kind("j-kafka-python-txn"),
    "idempotent": Kind("c-idempotent"),
    "gzip": Kind("f-comp-gzip", mib=32),
    "snappy": Kind("f-comp-snappy", mib=64),
    "lz4": Kind("f-comp-lz4", mib=64),
    "zstd": Kind("f-comp-zstd", mib=32),
    "compact-txn": Kind("g-compact-txn"),
    "txn-state": Kind("__transaction_state", ("--transaction-log-decoder",)),
    "offsets": Kind("__consumer_offsets", ("--offsets-decoder",)),
    "metadata": Kind("__cluster_metadata", ("--cluster-metadata-decoder",)),
}


class RealSegment(NamedTuple):
    kind: str
    path: Path
    flags: tuple[str, ...]
    stats: dict

    @property
    def size(self) -> int:
        return self.stats["bytes"]


def source_segment(kind: str, run: str = DEFAULT_RUN) -> Path:
    """The largest ``.log`` among the kind's partitions of ``run``."""
    topic = KINDS[kind].partition
    logs = [Path(p) for p in glob.glob(str(REAL / run / "data" / f"{glob.escape(topic)}-*" / "*.log"))]
    logs = [p for p in logs if p.parent.name.rsplit("-", 1)[-1].isdigit() and p.stat().st_size > 0]
    if not logs:
        raise FileNotFoundError(f"no non-empty .log of {topic} under {REAL / run / 'data'}")
    return max(logs, key=lambda p: (p.stat().st_size, str(p)))


def entries(data: bytes) -> list[tuple[int, int, int, int]]:
    """(position, size, first offset, last offset) of every entry, as a broker frames them; the
    source must be whole (a real, cleanly stopped broker's segment)."""
    out = []
    pos = 0
    while pos < len(data):
        offset, length = _PREFIX.unpack_from(data, pos)
        size = 12 + length
        if length < 14 or pos + size > len(data):
            raise ValueError(f"byte {pos}: entry of size {length} does not frame: not a whole segment")
        magic = data[pos + 16]
        last = offset + _LAST_DELTA.unpack_from(data, pos + 23)[0] if magic == 2 else offset
        out.append((pos, size, offset, last))
        pos += size
    return out


def segment_dir(data: Path, kind: str, mib: int) -> Path:
    return data / f"{kind}-{mib}m-f{FORMAT_VERSION}"


def _params(kind: str, mib: int, source: Path, digest: str) -> dict:
    return {"kind": kind, "mib": mib, "format": FORMAT_VERSION, "source": str(source), "source_sha256": digest}


def ensure_real_segment(kind: str, mib: int | None = None, data: Path = DEFAULT_DATA, run: str = DEFAULT_RUN, *,
                        log=print) -> RealSegment:
    """Reuse the segment of these parameters (``mib``: the kind's default size when None) if it
    exists in ``data``, else write it (to a temporary name, renamed when complete)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; one of {', '.join(KINDS)}")
    mib = KINDS[kind].mib if mib is None else mib
    source = source_segment(kind, run)
    raw = source.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    params = _params(kind, mib, source, digest)
    path = segment_dir(data, kind, mib) / source.name
    side = path.with_name("segment.json")
    flags = KINDS[kind].flags
    if path.is_file() and side.is_file():
        try:
            meta = json.loads(side.read_text())
        except (OSError, ValueError):
            meta = {}
        if meta.get("params") == params and meta.get("stats", {}).get("bytes") == path.stat().st_size:
            return RealSegment(kind, path, flags, meta["stats"])
    found = entries(raw)
    span = found[-1][3] + 1 - found[0][2]
    reps = max(1, (mib << 20) // len(raw))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    t0 = time.perf_counter()
    records = 0
    try:
        with open(tmp, "wb", buffering=1 << 22) as out:
            for k in range(reps):
                shift = k * span
                for pos, size, offset, _ in found:
                    out.write(_PREFIX.pack(offset + shift, size - 12))
                    out.write(raw[pos + 12:pos + size])
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    records = sum(last - first + 1 for _, _, first, last in found)  # offsets covered per repetition
    stats = {"bytes": path.stat().st_size, "repetitions": reps, "entries": reps * len(found),
             "offsets": reps * records, "source_bytes": len(raw), "source_entries": len(found), "span": span,
             "flags": list(flags), "generate_seconds": round(time.perf_counter() - t0, 2)}
    side.write_text(json.dumps({"params": params, "stats": stats}, indent=1) + "\n")
    log(f"  wrote {path}: {stats['bytes'] / 1e6:.1f} MB, {stats['entries']:,} entries "
        f"({reps:,} x {source.parent.name}/{source.name}) in {stats['generate_seconds']:.1f} s")
    return RealSegment(kind, path, flags, stats)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="output directory (default %(default)s)")
    ap.add_argument("--mib", type=int, help="size of each segment in MiB (default: the kind's, 256 or for the "
                                            "compressed kinds 32-64, whose dumps are 14-27 times their size)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated, default all: %(default)s")
    ap.add_argument("--run", default=DEFAULT_RUN, help=f"the run under {REAL} (default %(default)s)")
    a = ap.parse_args(argv)
    for kind in a.kinds.split(","):
        seg = ensure_real_segment(kind.strip(), a.mib, a.data, a.run)
        print(f"{seg.path}: {seg.size / 1e6:.1f} MB, {seg.stats['entries']:,} entries, flags {' '.join(seg.flags)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
