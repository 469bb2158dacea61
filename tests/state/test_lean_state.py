"""What the state rebuild keeps (issue 18: memory follows what the answer needs).

* The coordinator fold's per-id summary (first and last record, last decision, producer ids) equals
  what the full history says, on every scenario disk, the hanging scenarios and the real disks;
  without ``keep_history`` no history is kept, and the metadata is the same.
* A lean rebuild (find-hanging, abort-commands) keeps the entries and transactions of the producers
  with an open transaction only, and judges exactly as the full one.
* The local executor hands each replica to ``consume`` as soon as its last unit ran, before the next
  replica is read, and returns what ``consume`` made of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures import hanging_scenarios as hs
from fixtures import scenarios
from forensics.codec.txnlog import TransactionStatus as S
from forensics.layout.discovery import discover
from forensics.pipeline import local
from forensics.pipeline.local import LocalExecutor
from forensics.pipeline.plan import plan
from forensics.report.hanging import find_hanging
from forensics.report.state import StateFolder, StateReport, assemble_state, state_scope

REPO = Path(__file__).resolve().parents[2]
REAL = [REPO / "fixtures" / "real" / "kraft-tv2" / "disk", REPO / "fixtures" / "real" / "kraft-rv3.9-tv0" / "disk"]


@pytest.fixture(scope="module")
def disks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("lean")
    out = {f"scenario {n}": scenarios.build(n, base / "s" / n).parent for n in sorted(scenarios.SCENARIOS)}
    out.update({f"hanging {n}": hs.build(n, base / "h" / n) for n in hs.SCENARIOS})
    out.update({f"real {p.parent.name}": p for p in REAL if p.is_dir()})
    return out


def _state(disk: Path, folder_args: dict) -> StateReport:
    inv = discover([str(disk)])
    scope = state_scope()
    folder = StateFolder(inv, scope, **folder_args)
    results = LocalExecutor().run(plan(inv, scope), consume=folder)
    return assemble_state(inv, results, scope, folder=folder)


def _decision(history) -> object:
    for h in reversed(history):
        status = h.value.status if h.value is not None else None
        if status in (S.PREPARE_COMMIT, S.COMPLETE_COMMIT):
            return "COMMIT"
        if status in (S.PREPARE_ABORT, S.COMPLETE_ABORT):
            return "ABORT"
    return None


def test_summaries_are_what_the_full_history_says(disks: dict[str, Path]) -> None:
    checked = 0
    for name, disk in disks.items():
        full = _state(disk, {})
        bare = _state(disk, {"keep_history": lambda tid: False})
        assert full.coordinator.ids.keys() == bare.coordinator.ids.keys(), name
        for tid, v in full.coordinator.ids.items():
            h = v.history
            assert h, (name, tid)
            for ref, entry in ((v.first, h[0]), (v.last, h[-1])):
                assert (ref.offset, ref.timestamp, ref.state_name, ref.at) == \
                    (entry.offset, entry.timestamp, entry.state_name, entry.at), (name, tid)
            assert v.decision == _decision(h), (name, tid)
            assert v.summary.producer_ids == tuple(dict.fromkeys(e.value.producer_id for e in h
                                                                 if e.value is not None)), (name, tid)
            lean = bare.coordinator.ids[tid]
            assert lean.history == () and lean.summary == v.summary and lean.metadata == v.metadata, (name, tid)
            checked += 1
    assert checked > 30


def _verdicts(rep: StateReport) -> list[tuple]:
    verdicts, _ = find_hanging(rep, as_of=1_800_000_000_000)
    return [(str(v.view.topic_partition), v.view.inputs.path, v.entry, v.start_offset, v.span, v.verdict, v.reason,
             v.transactional_id, v.decision, v.patterns, v.gaps) for v in verdicts]


def test_lean_rebuild_keeps_open_producers_only_and_judges_alike(disks: dict[str, Path]) -> None:
    trimmed = 0
    for name, disk in disks.items():
        full = _state(disk, {})
        lean = _state(disk, {"keep_history": lambda tid: False, "lean": True})
        assert _verdicts(lean) == _verdicts(full), name
        copies: dict[object, int] = {}
        for v in full.partitions:
            copies[v.topic_partition] = copies.get(v.topic_partition, 0) + 1
        for f, v in zip(full.partitions, lean.partitions):
            assert v.inputs.path == f.inputs.path
            assert (v.first_unstable_offset, v.last_stable_offset, v.findings) == \
                (f.first_unstable_offset, f.last_stable_offset, f.findings), (name, v.inputs.path)
            if copies[v.topic_partition] > 1:  # another replica may need its markers: all kept
                assert v.history.spans == f.history.spans
                continue
            open_pids = set(f.broker.ongoing) | set(f.history.ongoing) | {
                e.producer_id for s in f.inputs.snapshots if s.snapshot is not None for e in s.snapshot.entries
                if e.current_txn_first_offset is not None}
            assert set(v.history.spans) == open_pids & set(f.history.spans), (name, v.inputs.path)
            assert set(v.entries) == open_pids & set(f.entries), (name, v.inputs.path)
            assert v.history.completed == () and v.broker.completed == ()
            trimmed += len(f.history.spans) - len(v.history.spans)
    assert trimmed > 0


def test_local_executor_consumes_each_replica_before_reading_the_next(disks: dict[str, Path],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    inv = discover([str(disks["scenario hanging"])])
    units = plan(inv, state_scope())
    events: list[tuple] = []
    real = local.run_unit
    monkeypatch.setattr(local, "run_unit", lambda u: (events.append(("read", u.key)), real(u))[1])

    def consume(key, result):
        events.append(("consume", key))
        return ("kept", key, len(result.events))

    results = LocalExecutor().run(units, consume=consume)
    keys = list(dict.fromkeys(u.key for u in units))
    assert list(results) == keys and all(results[k][:2] == ("kept", k) for k in keys)
    assert [k for what, k in events if what == "consume"] == keys
    for key in keys:  # consumed right after its own last unit, before any later replica's unit
        i = events.index(("consume", key))
        assert events[i - 1] == ("read", key)
        assert all(k != key for _, k in events[i + 1:])
