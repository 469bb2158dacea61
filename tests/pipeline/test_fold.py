"""The accelerator's fold of healthy batches (``native.fold``, csrc/fold.c) against the pure-Python
reference (pipeline/units.py's per-frame fold): a work unit gives the same piece both ways (events,
runs, header statistics, counters, findings) on every fixture segment, scenario and real segment, on
generated segments of interleaved producers, transactions, markers and snapshot cuts, and on the same
damaged at random; the fold takes healthy batches only and leaves every other entry to the frames."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures import hanging_scenarios, scenarios
from fixtures.diskgen.records import RecordSpec, encode_marker_batch, encode_v2_batch
from forensics.pipeline.plan import UnitKind, WorkUnit
from forensics.pipeline.units import read_segment
from forensics.speedups import native
from tests.fuzz.strategies import mutate
from tests.segments import needs_native, real_segments, segment_params
from tests.fuzz.strategies import pure_python as _pure
from tests.tiers import examples


REPO = Path(__file__).resolve().parents[2]


_segments = real_segments


def _pieces(path: str, base: int | None, cuts: tuple[int, ...] = (), start: int = 0, end: int | None = None):
    """The unit's piece for each kind a segment is read as: events (with and without the header
    statistics) and statistics alone."""
    out = []
    for kind, stats in ((UnitKind.EVENTS, False), (UnitKind.EVENTS, True), (UnitKind.STATS, True)):
        out.append(read_segment(WorkUnit(kind, path, path, base, start, end, 0, stats, cuts)))
    return out


def _both(path: str, base: int | None, cuts: tuple[int, ...] = (), start: int = 0, end: int | None = None):
    fast = _pieces(path, base, cuts, start, end)
    with _pure():
        slow = _pieces(path, base, cuts, start, end)
    assert fast == slow
    return fast


@needs_native
@pytest.mark.parametrize("path", segment_params(_segments()))
def test_every_segment_folds_the_same_both_ways(path: Path) -> None:
    base = int(path.stem) if path.stem.isdigit() else None
    snapshots = tuple(sorted(int(p.stem) for p in path.parent.glob("*.snapshot") if p.stem.isdigit()))
    _both(str(path), base)
    _both(str(path), base, snapshots)
    size = path.stat().st_size
    _both(str(path), base, snapshots, size // 2)  # a range that starts inside a batch: damage to resync from


@pytest.fixture(scope="module")
def scenario_disks(tmp_path_factory):
    base = tmp_path_factory.mktemp("fold")
    out = [scenarios.build(name, base / "s" / name) for name in scenarios.SCENARIOS]
    out += [hanging_scenarios.build(name, base / "h" / name) for name in hanging_scenarios.SCENARIOS]
    return out


@needs_native
def test_every_scenario_folds_the_same_both_ways(scenario_disks) -> None:
    seen = 0
    for root in scenario_disks:
        for path in sorted(Path(root).rglob("*.log")):
            if path.stat().st_size:
                snapshots = tuple(sorted(int(p.stem) for p in path.parent.glob("*.snapshot") if p.stem.isdigit()))
                _both(str(path), int(path.stem) if path.stem.isdigit() else None, snapshots)
                seen += 1
    assert seen > 20


def _segment(seed: int) -> tuple[bytes, tuple[int, ...]]:
    """Interleaved producers: idempotent ones, transactional ones ending their transactions with
    markers (or not), plain batches, a non-transactional batch inside a transaction, epoch bumps,
    sequences near the wrap, sequences that do not continue (a repeat, a gap, a reset to 0, an
    unsequenced batch: each breaks a run), snapshot cuts; some batches compressed."""
    rnd = random.Random(seed)
    out, offset, ts = bytearray(), 0, 1_767_225_600_000
    producers = [(pid, rnd.random() < 0.5) for pid in rnd.sample(range(0, 1 << 40), rnd.randint(1, 5))]
    epochs = {pid: rnd.randint(0, 3) for pid, _ in producers}
    seqs = {pid: rnd.choice([0, 0, 2**31 - 40]) for pid, _ in producers}
    open_txn = set()
    for _ in range(rnd.randint(1, 60)):
        pid, transactional = rnd.choice(producers + [(-1, False)])
        roll = rnd.random()
        if pid >= 0 and transactional and pid in open_txn and roll < 0.2:
            out += encode_marker_batch(offset, pid, epochs[pid], rnd.random() < 0.5, 3, ts)
            open_txn.discard(pid)
            offset += 1
            continue
        if pid >= 0 and roll > 0.97:
            epochs[pid] += 1
        n = rnd.randint(1, 4)
        recs = [RecordSpec(key=b"k%d" % i, value=bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 12))))
                for i in range(n)]
        tx = transactional and not (roll > 0.93)  # now and then a plain batch of a transactional producer
        if pid >= 0:
            jump = rnd.random()
            if jump < 0.04:  # a repeat of sequences already written (a duplicated or replayed batch)
                seqs[pid] = max(0, seqs[pid] - rnd.randint(1, 4))
            elif jump < 0.07:  # a gap
                seqs[pid] = (seqs[pid] + rnd.randint(1, 3)) % (2**31)
            elif jump < 0.09:  # a reset (an idempotent producer whose entry expired starts again)
                seqs[pid] = 0
        seq = -1 if pid < 0 or rnd.random() < 0.02 else seqs[pid]
        out += encode_v2_batch(offset, recs, producer_id=pid, producer_epoch=epochs.get(pid, -1), base_sequence=seq,
                               transactional=tx, codec=rnd.choice([0, 0, 0, 1, 2, 3, 4]), base_timestamp=ts)
        if pid >= 0:
            seqs[pid] = (seqs[pid] + n) % (2**31)
            if tx:
                open_txn.add(pid)
        offset += n + rnd.choice([0, 0, 0, 2])  # gaps, as compaction leaves them
        ts += rnd.randint(0, 5000)
    cuts = tuple(sorted(rnd.sample(range(0, offset + 2), min(offset + 2, rnd.randint(0, 3)))))
    return bytes(out), cuts


@needs_native
@settings(max_examples=examples(300), deadline=None)
@given(seed=st.integers(0, 2**20), data=st.data())
def test_generated_and_damaged_segments_fold_the_same_both_ways(tmp_path_factory, seed: int, data) -> None:
    clean, cuts = _segment(seed)
    damaged = mutate(data.draw, bytearray(clean), data.draw(st.integers(0, 3)))
    path = tmp_path_factory.mktemp("seg") / "00000000000000000000.log"
    for buf in (clean, damaged):
        path.write_bytes(buf)
        pieces = _both(str(path), 0, cuts)
        if buf is clean:  # the clean segment: no finding, one run per producer stretch
            assert all(not p.events.findings for p in pieces if p.events is not None)


@needs_native
def test_the_fold_takes_healthy_batches_only(tmp_path: Path) -> None:
    """A control batch of a producer, a legacy entry and a batch whose checksum fails stop it; what
    it took comes back as runs, in the order their first batch came."""
    rec = [RecordSpec(key=b"k", value=b"v")]
    a = encode_v2_batch(0, rec, producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)
    b = encode_v2_batch(1, rec, producer_id=8, producer_epoch=0, base_sequence=0)
    c = encode_v2_batch(2, rec, producer_id=7, producer_epoch=0, base_sequence=1, transactional=True)
    marker = encode_marker_batch(3, 7, 0, True, 1, 0)
    buf = a + b + c + marker
    got = native.fold(buf, 0, len(buf), True, 0, None, (), set(), False)
    at, _next, valid, frames, first_base, next_after = got[:6]
    runs = got[13]
    assert (at, valid, frames, first_base, next_after) == (len(a + b + c), len(a + b + c), 3, 0, 3)
    assert [(r[0], r[11], r[2], r[3], r[15]) for r in runs] == [(7, 2, 0, 2, True), (8, 1, 1, 1, True)]
    assert native.fold(buf, len(a + b + c), len(buf), True, 0, 3, (), set(), False)[3] == 0  # the marker: not taken
    assert native.fold(buf, len(a + b + c), len(buf), True, 0, 3, (), None, True)[3] == 1  # statistics alone: taken
    bad = bytearray(buf)
    bad[len(a) + 30] ^= 1  # b's checksum fails
    assert native.fold(bytes(bad), 0, len(bad), True, 0, None, (), set(), False)[0] == len(a)
    inside = native.fold(buf, 0, len(buf), True, 0, None, (), {7}, False)[13]  # 7's transaction open before
    assert [r[15] for r in inside] == [True, True]  # transactional batches may always join
    plain = encode_v2_batch(0, rec, producer_id=7, producer_epoch=0, base_sequence=0)
    assert native.fold(plain, 0, len(plain), True, 0, None, (), {7}, False)[13][0][15] is False
