"""One big segment that replays one real producer's history over and over (anomaly-heavy input).

    .venv/bin/python bench/replay_segment.py /work/bench-data/replay-1g --size-gb 1
    .venv/bin/python bench/replay_segment.py /work/bench-data/healthy-1g --size-gb 1 --healthy

writes ``OUT/i-java-txn-1/00000000000000000000.log`` (plus the partition's ``partition.metadata``
and ``leader-epoch-checkpoint``): the batches of a real Kafka 4.1.0 segment
(``fixtures/real/kraft-tv2/disk/i-java-txn-1``: the Java client's transactions, data at producer
epochs 0-2 and TV2 markers at epochs 1-3, 120 data batches and 2 markers, 33,318 bytes) repeated
until the file reaches ``--size-gb``, each copy's base offsets moved on by the copy's offset span
(``fixtures/replay.py``). The base offset is outside the batch CRC, so every batch stays valid,
and each copy starts again at epoch 0 after its predecessor's marker at epoch 2: one
``epoch_regression`` per copy after the first (32,226 in 1 GiB).

``--healthy`` writes the same batches with every producer epoch set to 0 and each copy's sequences after the last copy's (CRC-32C recomputed):
the same bytes, batches, runs and transactions, and no finding from the producer-state fold. It
is the baseline the anomaly-heavy segment is measured against.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # fixtures/ lives at the repo root

from fixtures import replay  # noqa: E402


def write(out: Path, size_bytes: int, healthy: bool, source: Path = replay.REAL_SOURCE) -> tuple[int, int]:
    """Write the partition dir; returns (copies, bytes)."""
    one = (source / replay.SEGMENT).stat().st_size
    copies = max(1, size_bytes // one)
    replay.write_partition(out, copies, healthy, source)
    return copies, copies * one


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--size-gb", type=float, default=1.0, help="GiB of the segment (whole copies of the source)")
    ap.add_argument("--healthy", action="store_true", help="every producer epoch 0: no anomaly")
    ap.add_argument("--source", type=Path, default=replay.REAL_SOURCE, help="a partition dir with a clean v2 segment 0")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    copies, size = write(a.out_dir, int(a.size_gb * (1 << 30)), a.healthy, a.source)
    print(f"wrote {a.out_dir / a.source.name / replay.SEGMENT}: {copies} copies of {a.source.name}, {size:,} bytes"
          f"{' (healthy: epochs 0)' if a.healthy else ''} in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
