"""A replica read whole by one worker of the in-process pool is folded in that worker (its ``consume``
says it may: :func:`~forensics.pipeline.executor.in_worker`), a replica split across tasks in the
driver once its pieces are merged: either way the same values, the same reports and rows as one
process, and a ``consume`` that raises in a worker raises in the driver as it does in one process.

* :class:`~forensics.report.state.StateFolder` (find-hanging, list, describe, describe-producers) and
  :class:`~forensics.report.scan.ScanFolder` (scan) on every fixture disk and scenario, whole
  replicas and replicas cut across tasks (tasks as small as a unit, segments split into byte ranges);
* where each replica was folded: in a worker when its units were one piece, in the driver when
  they were split; a ``consume`` that does not say ``in_worker`` runs in the driver always;
* an error of ours raised by ``consume`` in a worker: the same type, line and exit code as in one
  process; any other exception the same type and text.
"""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from forensics.io.files import EvidenceError
from forensics.layout import discover
from forensics.pipeline import pool as pool_mod
from forensics.pipeline.executor import in_worker
from forensics.pipeline.local import LocalExecutor
from forensics.pipeline.plan import plan
from forensics.report.scan import SCAN_SCOPE, ScanFolder, assemble_scan
from forensics.report.state import StateFolder, assemble_state, list_rows, producer_rows, state_scope

SPLITS = {"whole": 256 << 20, "split": 4096}  # segments in one unit, or in byte ranges of ~4 KiB


def _pooled(workers: int = 2) -> LocalExecutor:
    return LocalExecutor(workers, forced=True, min_task_bytes=1)  # tasks as small as a unit: replicas split


class _Where:
    """A ``consume`` that runs ``inner`` and says in which process it did (pure: it reads only its pid)."""

    in_worker = True

    def __init__(self, inner) -> None:
        self.inner = inner

    def __call__(self, key, r):
        return os.getpid(), self.inner(key, r)


def test_the_folders_say_they_may_run_in_a_worker(disks) -> None:
    inv = discover([str(disks["example"])])
    assert in_worker(StateFolder(inv, state_scope())) and in_worker(ScanFolder(inv))
    assert not in_worker(lambda key, r: r)  # any other consume: in the driver


@pytest.mark.parametrize("split", SPLITS.values(), ids=SPLITS.keys())
def test_state_folded_in_workers_is_the_one_process_state(disks, split) -> None:
    whole_seen = split_seen = False
    for name, root in disks.items():
        inv = discover([str(root)])
        for lean in (False, True):
            scope = replace(state_scope(data=True), split_bytes=split)
            units = plan(inv, scope)
            folder = StateFolder(inv, scope, keep_history=None if not lean else (lambda tid: False), lean=lean)
            one = LocalExecutor().run(units, consume=folder)
            executor = _pooled()
            many = executor.run(units, consume=folder)
            assert list(many.items()) == list(one.items()), (name, lean)
            a = assemble_state(inv, one, scope, folder=folder)
            b = assemble_state(inv, many, scope, folder=folder)
            assert b == a, (name, lean)
            assert [producer_rows(v) for v in b.partitions] == [producer_rows(v) for v in a.partitions], name
            assert list_rows(b, "Dead") + list_rows(b) == list_rows(a, "Dead") + list_rows(a), name
            if executor.processes(units) > 1:
                pieces = [p for t in pool_mod.schedule(units, executor.processes(units), 1) for p in t]
                whole_seen |= any(p.whole for p in pieces)
                split_seen |= any(not p.whole for p in pieces)
    assert whole_seen and split_seen  # both paths taken


@pytest.mark.parametrize("split", SPLITS.values(), ids=SPLITS.keys())
def test_scan_folded_in_workers_is_the_one_process_scan(disks, split) -> None:
    for name, root in disks.items():
        inv = discover([str(root)])
        units = plan(inv, replace(SCAN_SCOPE, split_bytes=split))
        folder = ScanFolder(inv)
        one = LocalExecutor().run(units, consume=folder)
        many = _pooled(3).run(units, consume=folder)
        assert list(many.items()) == list(one.items()), name
        assert assemble_scan([str(root)], inv, many) == assemble_scan([str(root)], inv, one), name


def test_whole_replicas_fold_in_a_worker_split_ones_in_the_driver(disks) -> None:
    me = os.getpid()
    kinds = set()
    for name in ("example", "real-tv2", "h-kafka-9144"):
        inv = discover([str(disks[name])])
        scope = replace(state_scope(data=True), split_bytes=4096)
        units = plan(inv, scope)
        executor = _pooled()
        tasks = pool_mod.schedule(units, executor.processes(units), 1)
        whole = {p.key for t in tasks for p in t if p.whole}
        folder = StateFolder(inv, scope)
        got = executor.run(units, consume=_Where(folder))
        assert executor.processes(units) == 2, name
        kinds |= {key in whole for key in got}
        for key, (pid, value) in got.items():
            assert (pid != me) == (key in whole), (name, key)
        expected = LocalExecutor().run(units, consume=folder)
        assert {k: v for k, (_, v) in got.items()} == expected, name
        # a consume that does not say in_worker: in the driver, every replica
        plain = _Where(folder)
        plain.in_worker = False
        assert {pid for pid, _ in executor.run(units, consume=plain).values()} == {me}, name
    assert kinds == {True, False}  # replicas of both kinds met


class _Failing:
    """A pure ``consume`` raising ``error`` on the replica ``key``."""

    in_worker = True

    def __init__(self, key: str, error: BaseException) -> None:
        self.key, self.error = key, error

    def __call__(self, key, r):
        if key == self.key:
            raise self.error
        return r


def _failure(executor: LocalExecutor, units, consume) -> BaseException:
    with pytest.raises(BaseException) as info:
        executor.run(units, consume=consume)
    return info.value


@pytest.mark.parametrize("error", [EvidenceError("no transaction state here", "PATH"), ValueError("bad fold")],
                         ids=["evidence-error", "value-error"])
def test_a_consume_failing_in_a_worker_fails_as_in_one_process(disks, error) -> None:
    inv = discover([str(disks["real-tv2"])])
    scope = state_scope(data=True)
    units = plan(inv, scope)
    executor = _pooled()
    tasks = pool_mod.schedule(units, executor.processes(units), 1)
    whole = [p.key for t in tasks for p in t if p.whole]
    split = [p.key for t in tasks for p in t if not p.whole]
    for key in [whole[len(whole) // 2]] + split[:1]:  # raised in a worker; in the driver (split replica)
        if isinstance(error, EvidenceError):
            error = EvidenceError("no transaction state here", key)
        consume = _Failing(key, error)
        one = _failure(LocalExecutor(), units, consume)
        many = _failure(executor, units, consume)
        assert type(many) is type(one) and str(many) == str(one) and "\n" not in str(many), key
        assert getattr(many, "exit_code", None) == getattr(one, "exit_code", None), key
