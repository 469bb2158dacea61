"""One big segment that replays one real producer's history over and over (anomaly-heavy input).

    .venv/bin/python bench/replay_segment.py /work/bench-data/replay-1g --size-gb 1
    .venv/bin/python bench/replay_segment.py /work/bench-data/healthy-1g --size-gb 1 --healthy

writes ``OUT/i-java-txn-1/00000000000000000000.log`` (plus the partition's ``partition.metadata``
and ``leader-epoch-checkpoint``): the batches of a real Kafka 4.1.0 segment
(``fixtures/real/kraft-tv2/disk/i-java-txn-1``: the Java client's transactions, data at producer
epochs 0, 1, 2 and TV2 markers at epochs 1, 2, 3, 120 data batches and 2 markers, 33,318 bytes)
repeated until the file reaches ``--size-gb``, each copy's base offsets moved on by the copy's
offset span. The base offset is outside the batch CRC, so every batch stays valid, and each copy
starts again at epoch 0 after its predecessor's marker at epoch 3: one ``epoch_regression`` per
copy (32,227 in 1 GiB).

``--healthy`` writes the same batches with every producer epoch set to 0 (CRC-32C recomputed):
the same bytes, batches, runs and transactions, and no finding from the producer-state fold. It
is the baseline the anomaly-heavy segment is measured against.
"""

from __future__ import annotations

import argparse
import shutil
import struct
import sys
import time
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from crc32c import crc32c

SOURCE = Path(__file__).resolve().parents[1] / "fixtures/real/kraft-tv2/disk/i-java-txn-1"
SEGMENT = "00000000000000000000.log"
_HEAD = struct.Struct(">qi")  # baseOffset, batchLength
_LAST_DELTA = struct.Struct(">i")  # lastOffsetDelta @23
_EPOCH_AT, _CRC_AT, _CRC_FROM = 51, 17, 21  # producerEpoch, crc, start of the CRC-covered part


def batches(data: bytes) -> List[Tuple[int, int]]:
    """(position, size) of every batch of a clean v2 segment."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        _, length = _HEAD.unpack_from(data, pos)
        out.append((pos, length + 12))
        pos += length + 12
    if pos != len(data):
        raise SystemExit(f"{pos}: the source segment does not end on a batch boundary")
    return out


def template(data: bytes, healthy: bool) -> Tuple[bytearray, List[int], List[int], int]:
    """The source bytes (epochs zeroed for ``healthy``), each batch's position and base offset
    relative to the first, and the offset span of one copy."""
    buf = bytearray(data)
    frames = batches(data)
    first = _HEAD.unpack_from(buf, 0)[0]
    bases, end = [], first
    for pos, size in frames:
        base = _HEAD.unpack_from(buf, pos)[0]
        bases.append(base - first)
        end = max(end, base + _LAST_DELTA.unpack_from(buf, pos + 23)[0] + 1)
        if healthy:
            struct.pack_into(">h", buf, pos + _EPOCH_AT, 0)
            struct.pack_into(">I", buf, pos + _CRC_AT, crc32c(bytes(buf[pos + _CRC_FROM:pos + size])))
    return buf, [pos for pos, _ in frames], bases, end - first


def write(out: Path, size_bytes: int, healthy: bool, source: Path = SOURCE) -> Tuple[int, int]:
    """Write the partition dir; returns (copies, bytes)."""
    data = (source / SEGMENT).read_bytes()
    buf, positions, bases, span = template(data, healthy)
    part = out / source.name
    part.mkdir(parents=True, exist_ok=True)
    for name in ("partition.metadata", "leader-epoch-checkpoint"):
        if (source / name).exists():
            shutil.copyfile(source / name, part / name)
    copies = max(1, size_bytes // len(buf))
    pack = struct.Struct(">q").pack_into
    with open(part / SEGMENT, "wb", buffering=1 << 22) as f:
        for k in range(copies):
            shift = k * span
            for pos, base in zip(positions, bases):
                pack(buf, pos, shift + base)
            f.write(buf)
    return copies, copies * len(buf)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--size-gb", type=float, default=1.0, help="GiB of the segment (whole copies of the source)")
    ap.add_argument("--healthy", action="store_true", help="every producer epoch 0: no anomaly")
    ap.add_argument("--source", type=Path, default=SOURCE, help="a partition dir with a clean v2 segment 0")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    copies, size = write(a.out_dir, int(a.size_gb * (1 << 30)), a.healthy, a.source)
    print(f"wrote {a.out_dir / a.source.name / SEGMENT}: {copies} copies of {a.source.name}, {size:,} bytes"
          f"{' (healthy: epochs 0)' if a.healthy else ''} in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
