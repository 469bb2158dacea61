"""The plan, the units' event runs and the per-replica merge (no Spark needed).

* folding runs gives exactly what folding the batches one by one gives, on every fixture disk;
* the merge is associative and commutative: any grouping and order of unit results finalizes to
  the same value;
* large segments are split at batch boundaries taken from the offset index; units carry only
  paths and ranges and pickle small.
"""

from __future__ import annotations

import pickle
from dataclasses import replace
from functools import reduce
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from forensics.analysis.producers import rebuild_partition
from forensics.layout.discovery import discover
from forensics.pipeline import units as units_mod
from forensics.pipeline.assemble import (
    EMPTY_RESULT,
    is_txn_state,
    live_partitions,
    partition_inputs,
)
from forensics.pipeline.local import LocalExecutor
from forensics.pipeline.merge import EMPTY, finalize, merge, part_of
from forensics.pipeline.plan import Scope, UnitKind, plan, split_points
from forensics.pipeline.units import run_unit

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"




class _SingleBatches(units_mod._Runs):
    """Never joins: one event per batch, as before runs existed."""

    def data(self, h, pos):
        self.open.pop(h.producer_id, None)
        super().data(h, pos)


def _views(root: Path):
    inventory = discover([str(root)])
    results = LocalExecutor().run(plan(inventory, Scope()))
    out = {}
    for log_dir, p in live_partitions(inventory):
        if not is_txn_state(p):
            v = rebuild_partition(partition_inputs(log_dir, p, results.get(p.path, EMPTY_RESULT)))
            out[p.path] = replace(v, inputs=None, broker=replace(v.broker, events=0),
                                  history=replace(v.history, events=0))
    return out, results


def test_runs_fold_exactly_as_single_batches(disks, monkeypatch) -> None:
    joined = {name: _views(root) for name, root in disks.items()}  # runs joined (by the accelerator's fold, if built)
    monkeypatch.setattr(units_mod, "_Runs", _SingleBatches)
    monkeypatch.setattr(units_mod, "native", None)  # every batch through _Runs.data: the fold joins none
    runs = batches = 0
    for name, root in disks.items():
        single, single_results = _views(root)
        views, results = joined[name]
        assert views == single, name
        runs += sum(len(s.events) for r in results.values() for s in r.events)
        batches += sum(len(s.events) for r in single_results.values() for s in r.events)
    assert runs < batches, "no run joined anything: the test would not see a broken join"


def test_a_run_keeps_first_and_last_batch_fields(disks) -> None:
    _, results = _views(disks["real-tv2"])
    multi = [e for r in results.values() for s in r.events for e in s.events
             if getattr(e, "batches", 1) > 1]
    assert multi
    for e in multi:
        assert e.base_offset <= e.last_base_offset <= e.last_offset
        assert e.base_sequence <= e.last_sequence
        assert e.first_max_timestamp <= e.max_timestamp
        assert e.offset_delta == e.last_offset - e.last_base_offset


def _parts(root: Path):
    inventory = discover([str(root)])
    return [(u.key, part_of(run_unit(u))) for u in plan(inventory, Scope(stats=True, non_live=True))]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_merge_is_associative_and_commutative(data) -> None:
    parts = [p for key, p in _PARTS if key == _KEY]
    order = data.draw(st.permutations(parts))
    cut = data.draw(st.integers(0, len(order)))
    left = reduce(merge, order[:cut], EMPTY)
    right = reduce(merge, order[cut:], EMPTY)
    assert finalize(merge(left, right)) == finalize(reduce(merge, parts, EMPTY))
    assert merge(left, right) == merge(right, left)


_PARTS = _parts(REAL / "kraft-tv2" / "disk")
_KEY = max({k for k, _ in _PARTS}, key=lambda k: sum(1 for kk, _ in _PARTS if kk == k))


def test_units_carry_paths_and_ranges_only() -> None:
    inventory = discover([str(REAL / "kraft-tv2" / "disk")])
    units = plan(inventory, Scope(stats=True, non_live=True, split_bytes=4096))
    assert {u.kind for u in units} >= {UnitKind.EVENTS, UnitKind.TXNLOG, UnitKind.STATS, UnitKind.SNAPSHOT}
    for u in units:
        assert len(pickle.dumps(u)) < 2048
        assert all(isinstance(v, (str, int, tuple, bool, type(None), UnitKind)) for v in u)


def test_split_points_are_batch_starts_from_the_offset_index() -> None:
    inventory = discover([str(REAL / "kraft-tv2" / "disk")])
    segments = [s for _, p in inventory.all_partitions() for s in p.segments if s.index and (s.log_size or 0) > 8192]
    assert segments
    for s in segments:
        points = split_points(s, 4096)
        assert points == sorted(set(points)) and all(0 < p < s.log_size for p in points)
        data = Path(s.log).read_bytes()
        starts, pos = set(), 0
        while pos + 12 <= len(data):
            starts.add(pos)
            pos += 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
        assert set(points) <= starts, s.log
    assert split_points(segments[0], 1 << 40) == []
