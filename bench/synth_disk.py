"""Synthetic multi-broker Kafka disk for the engine benchmark (``bench/engines.py``).

    .venv/bin/python bench/synth_disk.py /work/bench-data/disk-2g --size-gb 2 --brokers 3 \\
        --partitions-per-broker 100

writes ``OUT_DIR/broker-<id>/``, each a Kafka 4.x log dir: ``meta.properties``, ``.kafka_cleanshutdown``,
the recovery-point / replication-offset / log-start-offset / cleaner-offset checkpoints, and per
partition ``.log`` segments of v2 batches (rolled at ``--segment-mb``), ``.index``, ``.timeindex``,
``.txnindex`` (aborted transactions), ``.snapshot`` (at each roll and at the log end),
``leader-epoch-checkpoint`` and ``partition.metadata``. Replication factor 1: partition ``g`` (in a
global numbering) lives on broker ``g % brokers + 1``.

Mix: topics ``clicks`` / ``events`` (idempotent producers, one to three per partition, many batches
each), ``metrics`` (plain producers, producer id -1), ``orders`` / ``payments`` (one transactional
producer per partition, transactions of 10-60 batches interleaved with an idempotent producer,
ended by COMMIT or ABORT markers); ``--hanging`` of those end with a transaction the coordinator
completed but whose marker never arrived (``find-hanging`` reports each as ``hanging``). The
``__transaction_state`` partitions (``--txn-state-partitions``, spread over the brokers) hold the
coordinator's records of every transactional id: Empty, then Ongoing / PrepareX / CompleteX per
transaction.

Speed: batches come from a few hundred pre-encoded record blocks (1-100 records of 50-200 bytes);
per batch only the 61-byte header is packed and the CRC-32C computed, so the writer runs at disk
speed. The layouts (records, markers, coordinator records, snapshots, checkpoints) are those of
``fixtures/generator.py``, imported from it. Everything is deterministic for a given ``--seed``,
file modification times included.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import random
import struct
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path
from typing import NamedTuple

from crc32c import crc32c

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # fixtures/ lives at the repo root

from fixtures import generator as gen  # noqa: E402

START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
CLUSTER_ID = "YmVuY2gtZW5naW5lcy1kaXNr"
TXN_STATE = "__transaction_state"
TXN_STATE_LEADER_EPOCH = 1  # = coordinatorEpoch of every marker
TIMEOUT_MS = 60_000
INDEX_INTERVAL = 4096  # log.index.interval.bytes
# baseOffset, batchLength, partitionLeaderEpoch, magic, crc | attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount
_PREFIX = struct.Struct(">qiibI")
_CRC_PART = struct.Struct(">hiqqqhii")
_TRANSACTIONAL = 0x10
# topic -> (kind, share of the partitions); transactional topics share --txn-fraction
NON_TXN_TOPICS = (("clicks", "idempotent", 0.45), ("events", "idempotent", 0.45), ("metrics", "plain", 0.10))
TXN_TOPICS = ("orders", "payments")


class Shape(NamedTuple):
    """Pre-encoded records of one batch: offset and timestamp deltas 0..count-1."""

    count: int
    records: bytes


@dataclass(frozen=True)
class PartitionPlan:
    topic: str
    partition: int
    broker: int
    kind: str  # idempotent | plain | transactional | hanging
    target_bytes: int
    first_pid: int
    leader_epoch: int
    seed: str
    txn_batches: tuple[int, int] = (10, 60)  # data batches per transaction (min, max)
    txn_count: int = 0  # transactions per transactional partition (0: until target_bytes)
    max_batch_records: int = 100  # only batch shapes of at most this many records
    producer_per_txn: bool = False  # each transaction by its own transactional id and producer id
    lost_every: int = 0  # every Nth transaction loses its marker (0: none)


@functools.lru_cache(maxsize=4)
def make_shapes(seed: int, n: int = 256) -> list[Shape]:
    rng = random.Random(f"{seed}:shapes")
    printable = bytes(range(0x21, 0x7F)) * 3
    pool = rng.randbytes(1 << 16).translate(printable[:256])
    shapes = []
    for i in range(n):
        count = rng.randint(1, 100) if i % 4 else rng.randint(1, 5)  # a quarter small batches
        specs = []
        for j in range(count):
            size = rng.randint(40, 190)
            start = rng.randrange(len(pool) - size)
            specs.append(gen.RecordSpec(key=b"k%d-%d" % (i, j), value=pool[start:start + size], timestamp_delta=j))
        shapes.append(Shape(count, gen.encode_v2_batch(0, specs, base_timestamp=0)[61:]))
    return shapes


class Segment:
    """One open segment: the ``.log`` file and its index entries (``LogSegment.append``)."""

    def __init__(self, directory: Path, base: int) -> None:
        self.stem = directory / f"{base:020d}"
        self.base, self.size = base, 0
        self.log = open(f"{self.stem}.log", "wb", buffering=1 << 20)
        self.index, self.time = bytearray(), bytearray()
        self.txn: list[gen.AbortedTxnSpec] = []
        self.since_index, self.max_ts, self.max_ts_offset, self.last_time = 0, -1, -1, -1

    def append(self, parts: tuple[bytes, ...], size: int, last: int, max_ts: int) -> None:
        if max_ts > self.max_ts:
            self.max_ts, self.max_ts_offset = max_ts, last
        if self.since_index > INDEX_INTERVAL:
            self.index += struct.pack(">ii", last - self.base, self.size)
            self.time_append()
            self.since_index = 0
        self.since_index += size
        self.size += size
        for p in parts:
            self.log.write(p)

    def time_append(self) -> None:
        if self.max_ts > self.last_time:
            self.time += struct.pack(">qi", self.max_ts, self.max_ts_offset - self.base)
            self.last_time = self.max_ts

    def close(self) -> None:
        self.time_append()  # onBecomeInactiveSegment / LogSegment.close
        self.log.close()
        Path(f"{self.stem}.index").write_bytes(self.index)
        Path(f"{self.stem}.timeindex").write_bytes(self.time)
        if self.txn:
            Path(f"{self.stem}.txnindex").write_bytes(gen.encode_txn_index(self.txn))


class PartitionWriter:
    """Appends batches to one partition dir, rolls segments, keeps the broker's producer state
    (epoch, lastSeq, lastOffset, offsetDelta, lastTimestamp, coordinatorEpoch, txnFirstOffset)."""

    def __init__(self, directory: Path, leader_epoch: int, segment_bytes: int, clock: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.dir, self.leader_epoch, self.segment_bytes, self.clock = directory, leader_epoch, segment_bytes, clock
        self.next_offset, self.bytes, self.batches, self.records = 0, 0, 0, 0
        self.segment = Segment(directory, 0)
        self.producers: dict[int, list[int]] = {}
        self.sequences: dict[int, int] = {}
        self.open: dict[int, int] = {}  # producer id -> first offset of its open transaction

    def append_raw(self, parts: tuple[bytes, ...], size: int, last: int, max_ts: int) -> None:
        if self.segment.size and self.segment.size + size > self.segment_bytes:
            self.segment.close()
            self._snapshot()
            self.segment = Segment(self.dir, self.next_offset)
        self.segment.append(parts, size, last, max_ts)
        self.next_offset, self.bytes, self.batches = last + 1, self.bytes + size, self.batches + 1

    def data(self, shape: Shape, pid: int = -1, epoch: int = -1, transactional: bool = False) -> None:
        base, n = self.next_offset, shape.count
        self.clock += 3 + n // 8
        ts = self.clock
        seq = self.sequences.get(pid, 0) if pid >= 0 else -1
        hdr = _CRC_PART.pack(_TRANSACTIONAL if transactional else 0, n - 1, ts, ts + n - 1, pid, epoch, seq, n)
        prefix = _PREFIX.pack(base, 49 + len(shape.records), self.leader_epoch, 2, crc32c(shape.records, crc32c(hdr)))
        self.append_raw((prefix, hdr, shape.records), 61 + len(shape.records), base + n - 1, ts + n - 1)
        self.records += n
        if pid >= 0:
            self.sequences[pid] = seq + n
            st = self.producers.setdefault(pid, [epoch, -1, -1, 0, -1, -1, -1])
            st[0:5] = [epoch, seq + n - 1, base + n - 1, n - 1, ts + n - 1]
            if transactional and st[6] < 0:
                st[6] = base
                self.open[pid] = base

    def marker(self, pid: int, epoch: int, commit: bool) -> int:
        self.clock += 1
        offset, st = self.next_offset, self.producers[pid]
        batch = gen.encode_marker_batch(offset, pid, epoch, commit, TXN_STATE_LEADER_EPOCH, self.clock, self.leader_epoch)
        self.append_raw((batch,), len(batch), offset, self.clock)
        self.open.pop(pid, None)
        if not commit:  # the LSO moves just past the marker, or to the oldest other open transaction
            self.segment.txn.append(gen.AbortedTxnSpec(pid, st[6], offset, min(self.open.values(), default=offset + 1)))
        st[5], st[6], st[4] = TXN_STATE_LEADER_EPOCH, -1, self.clock
        return self.clock

    def _snapshot(self) -> None:
        entries = (gen.SnapshotEntrySpec(pid, *self.producers[pid]) for pid in sorted(self.producers))
        (self.dir / f"{self.next_offset:020d}.snapshot").write_bytes(gen.encode_producer_snapshot(entries))

    def close(self, topic_id: str) -> int:
        self.segment.close()
        if self.next_offset:
            self._snapshot()  # clean shutdown: a snapshot at the log end offset
        (self.dir / "leader-epoch-checkpoint").write_bytes(gen.encode_leader_epoch_checkpoint([(self.leader_epoch, 0)]))
        (self.dir / "partition.metadata").write_bytes(gen.encode_partition_metadata(topic_id))
        return self.next_offset


class CoordRecord(NamedTuple):
    """One ``__transaction_state`` record, written later on the id's coordinator partition."""

    timestamp: int
    transactional_id: str
    producer_id: int
    epoch: int
    status: int
    partitions: tuple[tuple[str, int], ...] | None
    last_update: int
    start: int


class PartitionResult(NamedTuple):
    plan: PartitionPlan
    log_end: int
    bytes: int
    batches: int
    records: int
    transactions: int
    clock: int
    coordinator: tuple[CoordRecord, ...]


def topic_id(topic: str) -> str:
    return gen.kafka_uuid(f"topic:{CLUSTER_ID}:{topic}")


def write_non_txn(w: PartitionWriter, plan: PartitionPlan, shapes: Sequence[Shape], rng: random.Random) -> None:
    pids = [plan.first_pid + i for i in range(rng.randint(1, 3))] if plan.kind == "idempotent" else [-1]
    epochs = {pid: rng.randint(0, 3) if pid >= 0 else -1 for pid in pids}
    while w.bytes < plan.target_bytes:
        pid = rng.choice(pids)
        w.data(rng.choice(shapes), pid, epochs[pid])


def one_transaction(w: PartitionWriter, shapes: Sequence[Shape], rng: random.Random, who: tuple,
                    coord: list[CoordRecord], commit: bool, lost_marker: bool,
                    batches: tuple[int, int] = (10, 60)) -> None:
    """Ongoing, ``batches`` (10-60) data batches (an idempotent producer interleaving), PrepareX, the
    marker (unless ``lost_marker``: the coordinator completes, the partition never sees it), CompleteX."""
    tid, pid, side, epoch, tp = who
    start = w.clock + 1
    coord.append(CoordRecord(start, tid, pid, epoch, gen.ONGOING, (tp,), start, start))
    for _ in range(rng.randint(*batches)):
        if rng.random() < 0.2:
            w.data(rng.choice(shapes), side, 0)
        w.data(rng.choice(shapes), pid, epoch, transactional=True)
    prepare = w.clock + 1
    coord.append(CoordRecord(prepare, tid, pid, epoch, gen.PREPARE_COMMIT if commit else gen.PREPARE_ABORT, (tp,),
                             prepare, start))
    if lost_marker:
        w.clock += 1
    else:
        w.marker(pid, epoch, commit)
    coord.append(CoordRecord(w.clock + 1, tid, pid, epoch, gen.COMPLETE_COMMIT if commit else gen.COMPLETE_ABORT, (),
                             prepare, start))
    w.clock += 2


def write_txn(w: PartitionWriter, plan: PartitionPlan, shapes: Sequence[Shape], rng: random.Random) -> tuple:
    """Transactions of one transactional producer (an idempotent one interleaves), or with
    ``producer_per_txn`` each by its own transactional id and producer id; the coordinator records
    they imply. A ``hanging`` partition ends with one whose marker never arrives; with
    ``lost_every`` N, every Nth transaction loses its marker too (it stays open)."""
    tid, pid, side = f"{plan.topic}-writer-{plan.partition}", plan.first_pid, plan.first_pid + 1
    epoch, tp = rng.randint(0, 5), (plan.topic, plan.partition)
    coord = [CoordRecord(w.clock, tid, pid, epoch, gen.EMPTY, None, w.clock, -1)]
    count = 0
    while (count < plan.txn_count if plan.txn_count else w.bytes < plan.target_bytes) or count == 0:
        if plan.producer_per_txn and count:  # a new id and producer: the coordinator's Empty record first
            tid, pid, epoch = f"{plan.topic}-writer-{plan.partition}-{count}", plan.first_pid * 1_000_000 + count, 0
            coord.append(CoordRecord(w.clock, tid, pid, epoch, gen.EMPTY, None, w.clock, -1))
        lost = bool(plan.lost_every) and (count + 1) % plan.lost_every == 0
        one_transaction(w, shapes, rng, (tid, pid, side, epoch, tp), coord,
                        commit=lost or rng.random() < 0.85, lost_marker=lost, batches=plan.txn_batches)
        count += 1
    if plan.kind == "hanging":
        one_transaction(w, shapes, rng, (tid, pid, side, epoch, tp), coord, commit=True, lost_marker=True,
                        batches=plan.txn_batches)
        count += 1
    return count, tuple(coord)


def write_partition(args: tuple[Path, PartitionPlan, int, int]) -> PartitionResult:
    root, plan, seed, segment_bytes = args
    shapes = [s for s in make_shapes(seed) if s.count <= plan.max_batch_records] or make_shapes(seed)[:1]
    rng = random.Random(plan.seed)
    w = PartitionWriter(root / f"broker-{plan.broker}" / f"{plan.topic}-{plan.partition}", plan.leader_epoch,
                        segment_bytes, START_MS + rng.randrange(60_000))
    txns, coord = 0, ()
    if plan.kind in ("transactional", "hanging"):
        txns, coord = write_txn(w, plan, shapes, rng)
    else:
        write_non_txn(w, plan, shapes, rng)
    leo = w.close(topic_id(plan.topic))
    return PartitionResult(plan, leo, w.bytes, w.batches, w.records, txns, w.clock, coord)


def plan_partitions(size_bytes: int, brokers: int, per_broker: int, txn_fraction: float, hanging: int,
                    seed: int) -> list[PartitionPlan]:
    """Topics and partitions, round-robin over the brokers; sizes skewed (a few hot partitions)."""
    total = brokers * per_broker
    n_txn = max(len(TXN_TOPICS), round(total * txn_fraction)) if txn_fraction > 0 else 0
    counts = [(t, "transactional", n_txn // len(TXN_TOPICS) + (i < n_txn % len(TXN_TOPICS)))
              for i, t in enumerate(TXN_TOPICS)] if n_txn else []
    rest = total - n_txn
    sizes = [round(rest * share) for _, _, share in NON_TXN_TOPICS]
    sizes[0] += rest - sum(sizes)
    counts += [(t, kind, n) for (t, kind, _), n in zip(NON_TXN_TOPICS, sizes)]
    rng = random.Random(f"{seed}:plan")
    weights = [20.0 if rng.random() < 0.02 else rng.uniform(0.5, 1.5) for _ in range(total)]
    unit = size_bytes / sum(weights)
    plans, g = [], 0
    for topic, kind, n in counts:
        for p in range(n):
            plans.append(PartitionPlan(topic, p, g % brokers + 1, kind, int(weights[g] * unit), 1000 + 4 * g,
                                       rng.randint(0, 3), f"{seed}:{topic}:{p}"))
            g += 1
    txn = [i for i, p in enumerate(plans) if p.kind == "transactional"]
    for i in range(min(hanging, len(txn))):  # spread over the transactional partitions (and brokers)
        j = txn[i * len(txn) // min(hanging, len(txn))]
        plans[j] = dataclasses.replace(plans[j], kind="hanging")
    return plans


def write_txn_state(root: Path, brokers: int, n_parts: int, results: Sequence[PartitionResult]) -> dict[int, list]:
    """The coordinator partitions: every id's records on ``abs(hash(id)) % n_parts``, in time order."""
    per_part: dict[int, list[CoordRecord]] = {k: [] for k in range(n_parts)}
    for r in results:
        for c in r.coordinator:
            per_part[gen.transaction_partition(c.transactional_id, n_parts)].append(c)
    offsets: dict[int, list] = {b: [] for b in range(1, brokers + 1)}
    for k, records in per_part.items():
        broker = k % brokers + 1
        w = PartitionWriter(root / f"broker-{broker}" / f"{TXN_STATE}-{k}", TXN_STATE_LEADER_EPOCH, 100 << 20, START_MS)
        for c in sorted(records, key=lambda c: (c.timestamp, c.transactional_id)):
            value = gen.encode_txn_log_value(c.producer_id, c.epoch, TIMEOUT_MS, c.status, c.partitions, c.last_update,
                                         c.start)
            rec = gen.RecordSpec(key=gen.encode_txn_log_key(c.transactional_id), value=value)
            batch = gen.encode_v2_batch(w.next_offset, [rec], partition_leader_epoch=TXN_STATE_LEADER_EPOCH,
                                    base_timestamp=c.timestamp)
            w.append_raw((batch,), len(batch), w.next_offset, c.timestamp)
        offsets[broker].append((TXN_STATE, k, w.close(topic_id(TXN_STATE))))
    return offsets


def write_broker_files(root: Path, broker: int, log_ends: list[tuple[str, int, int]], mtime_s: float) -> None:
    d = root / f"broker-{broker}"
    d.mkdir(parents=True, exist_ok=True)
    ends = sorted(log_ends)
    files = {
        "meta.properties": gen.encode_meta_properties(broker, CLUSTER_ID, gen.kafka_uuid(f"directory:{CLUSTER_ID}:{broker}"),
                                                  written_at=START_MS),
        ".kafka_cleanshutdown": gen.encode_clean_shutdown(100 + broker),
        "recovery-point-offset-checkpoint": gen.encode_offset_checkpoint(ends),
        "replication-offset-checkpoint": gen.encode_offset_checkpoint(ends),
        "log-start-offset-checkpoint": gen.encode_offset_checkpoint([]),
        "cleaner-offset-checkpoint": gen.encode_offset_checkpoint([]),
    }
    for name, data in files.items():
        (d / name).write_bytes(data)
        os.utime(d / name, (mtime_s, mtime_s))


def generate(root: Path, size_gb: float, brokers: int, per_broker: int, *, segment_mb: float = 64,
             txn_fraction: float = 0.2, hanging: int = 3, txn_state_partitions: int | None = None,
             seed: int = 1, jobs: int = 0, txn_batches: tuple[int, int] = (10, 60), txns_per_partition: int = 0,
             max_batch_records: int = 100, producer_per_txn: bool = False, lost_every: int = 0
             ) -> list[PartitionResult]:
    """Write the disk under ``root`` (which must not hold a ``broker-*`` dir yet)."""
    if any(root.glob("broker-*")):
        raise FileExistsError(f"{root} already holds broker-* dirs; remove them or pick another OUT_DIR")
    plans = [dataclasses.replace(p, txn_batches=txn_batches, txn_count=txns_per_partition,
                                 max_batch_records=max_batch_records, producer_per_txn=producer_per_txn,
                                 lost_every=lost_every)
             for p in plan_partitions(int(size_gb * (1 << 30)), brokers, per_broker, txn_fraction, hanging, seed)]
    work = [(root, p, seed, int(segment_mb * (1 << 20))) for p in plans]
    with Pool(jobs or os.cpu_count() or 1) as pool:
        results = pool.map(write_partition, work, chunksize=1)
    log_ends = write_txn_state(root, brokers, txn_state_partitions or 2 * brokers, results)
    for r in results:
        log_ends[r.plan.broker].append((r.plan.topic, r.plan.partition, r.log_end))
    mtime = (max(r.clock for r in results) + 3_600_000) / 1000  # the disks were copied an hour later
    for broker in range(1, brokers + 1):
        write_broker_files(root, broker, log_ends[broker], mtime)
    return results


def summary(results: Sequence[PartitionResult], seconds: float) -> str:
    size = sum(r.bytes for r in results)
    kinds: dict[str, int] = {}
    for r in results:
        kinds[r.plan.kind] = kinds.get(r.plan.kind, 0) + 1
    return (f"{len(results)} partitions ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}), "
            f"{size / 1e6:.1f} MB of segments, {sum(r.batches for r in results)} batches, "
            f"{sum(r.records for r in results)} records, {sum(r.transactions for r in results)} transactions, "
            f"in {seconds:.1f} s ({size / 1e6 / max(seconds, 1e-9):.0f} MB/s)")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--size-gb", type=float, default=2.0, help="total size of the data segments")
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--partitions-per-broker", type=int, default=100)
    ap.add_argument("--segment-mb", type=float, default=64.0, help="roll segments at this size")
    ap.add_argument("--txn-fraction", type=float, default=0.2, help="share of transactional partitions")
    ap.add_argument("--hanging", type=int, default=3, help="transactional partitions ending in a hanging transaction")
    ap.add_argument("--txn-state-partitions", type=int, default=None, help="default: 2 per broker")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=0, help="writer processes (default: all cores)")
    ap.add_argument("--txn-batches", default="10-60", help="data batches per transaction, MIN-MAX")
    ap.add_argument("--txns-per-partition", type=int, default=0,
                    help="transactions per transactional partition (default: as many as --size-gb allows)")
    ap.add_argument("--max-batch-records", type=int, default=100, help="only batches of at most this many records")
    ap.add_argument("--producer-per-txn", action="store_true",
                    help="each transaction by its own transactional id and producer id")
    ap.add_argument("--lost-every", type=int, default=0,
                    help="every Nth transaction of a partition loses its marker and hangs (with --producer-per-txn)")
    a = ap.parse_args(argv)
    lo, _, hi = a.txn_batches.partition("-")
    t0 = time.perf_counter()
    results = generate(a.out_dir, a.size_gb, a.brokers, a.partitions_per_broker, segment_mb=a.segment_mb,
                       txn_fraction=a.txn_fraction, hanging=a.hanging, txn_state_partitions=a.txn_state_partitions,
                       seed=a.seed, jobs=a.jobs, txn_batches=(int(lo), int(hi or lo)),
                       txns_per_partition=a.txns_per_partition, max_batch_records=a.max_batch_records,
                       producer_per_txn=a.producer_per_txn, lost_every=a.lost_every)
    print(f"wrote {a.out_dir}: {summary(results, time.perf_counter() - t0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
