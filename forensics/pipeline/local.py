"""The local executor (``--engine local``: no JVM): runs the work units in this process, one after
the other, or over a pool of forked worker processes (``--jobs``, :mod:`forensics.pipeline.pool`),
and merges their results per replica, handing each replica over in plan order either way."""

from __future__ import annotations

import gc
import time
from contextlib import closing, contextmanager
from collections.abc import Callable, Iterator, Sequence

from forensics.model import Progress
from forensics.pipeline.executor import R, Executor, in_worker
from forensics.pipeline.stats import EngineStats, engine_stats
from forensics.pipeline.merge import ReplicaResult, finalize, merge_all, part_of
from forensics.pipeline.plan import WorkUnit
from forensics.pipeline.units import run_unit

# What a run must cost (pool.cost: its log bytes and pool.UNIT_COST per unit) for the pool to start
# unless --jobs asks for it: the pool costs ~0.03 s of wall time (forks, results sent back), which a
# second idle core wins back from ~170 MiB on (half of 0.30-0.37 s/GiB); rounded up, a busy machine
# moving it up (measured on 2 cores: docs/performance.md, "Every core").
POOL_FROM_BYTES = 256 << 20


class LocalExecutor(Executor):
    """``jobs``: worker processes at most (1: this process alone, the one-process path); ``forced``: that
    many whatever the size (``--jobs`` given), else in this process below :data:`POOL_FROM_BYTES`."""

    name = "local"

    def __init__(self, jobs: int = 1, forced: bool = False, min_task_bytes: int | None = None) -> None:
        self.jobs = max(1, jobs)
        self.forced = forced
        self.min_task_bytes = min_task_bytes  # None: the pool's own (tests cut fixtures finer)
        self.stats: EngineStats | None = None  # the last job's

    def processes(self, units: Sequence[WorkUnit]) -> int:
        """The worker processes a run of ``units`` uses (1: none, the units run in this process)."""
        if self.jobs < 2:
            return 1
        from forensics.pipeline.pool import cost, fork_safe

        if not fork_safe() or (not self.forced and cost(units) < POOL_FROM_BYTES):
            return 1
        n = min(self.jobs, len(self._schedule(units, self.jobs)))
        return n if n >= 2 else 1

    def _schedule(self, units: Sequence[WorkUnit], workers: int) -> list:
        from forensics.pipeline.pool import UNIT_COST, schedule

        # --jobs given: as many processes as asked, whatever the size (tasks as small as a unit)
        floor = self.min_task_bytes if self.min_task_bytes is not None else UNIT_COST if self.forced else None
        return schedule(units, workers, floor)

    def run_each(self, units: Sequence[WorkUnit], progress: Progress | None,
                 consume: Callable[[str, ReplicaResult], R]) -> dict[str, R]:
        """Each replica's finalized results, or what ``consume(key, results)`` makes of them, called as
        soon as the replica's last unit ran (the plan lists units replica by replica): what was read
        of one replica is dropped before the next is read. Over a pool, the same calls in the same
        order, each as soon as the replica and every one before it are read."""
        started = time.perf_counter()
        workers = self.processes(units)
        with _no_cycle_collection():
            ran = None
            if workers > 1:
                ran = self._run_pool(self._schedule(units, workers), workers, progress, consume)
            if ran is None:
                workers = 1
                ran = self._run(units, progress, consume), len(units), 0
            results, tasks, sent = ran
        self.stats = engine_stats("local", None, units, tasks, workers, started, sent)
        return results

    @staticmethod
    def _run_pool(tasks: list, workers: int, progress: Progress | None,
                  consume: Callable[[str, ReplicaResult], R]) -> tuple[dict[str, R], int, int] | None:
        """The pool's run (None when the system refuses to fork: the caller runs in this process)."""
        from forensics.pipeline.pool import merge_parts, run_tasks, start, stop

        pool: list = []
        parts: dict[str, list] = {}
        results: dict[str, R] = {}
        sent = 0
        folded = in_worker(consume)  # whole replicas come back folded already (see executor.in_worker)
        try:
            try:
                start(workers, pool, consume if folded else None)
            except OSError:  # the ones forked already are stopped below
                return None
            with closing(run_tasks(pool, tasks, progress)) as done:  # closed at once on an error or Ctrl-C
                for task, values, size in done:
                    sent += size
                    for piece, value in zip(task, values):
                        if folded and piece.whole:
                            results[piece.key] = value
                            continue
                        result = merge_parts(parts, piece, value)
                        if result is not None:
                            results[piece.key] = consume(piece.key, result)
                            del result
                    del values
        finally:
            stop(pool)  # whatever is left of it (nothing after a clean run)
        order = {piece.key: None for task in tasks for piece in task}
        return {key: results[key] for key in order}, len(tasks), sent

    @staticmethod
    def _run(units: Sequence[WorkUnit], progress: Progress | None,
             consume: Callable[[str, ReplicaResult], R]) -> dict[str, R]:
        last = {u.key: i for i, u in enumerate(units)}
        groups: dict[str, list] = {}
        results: dict[str, R] = {}
        for i, u in enumerate(units):
            groups.setdefault(u.key, []).append(part_of(run_unit(u)))
            if progress is not None:
                progress(u.size)
            if last[u.key] == i:
                result = finalize(merge_all(groups.pop(u.key)))
                results[u.key] = consume(u.key, result)
                del result
        return {key: results[key] for key in last}  # in the order of the plan (the pool merges in the same order)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector paused while the units run: what they make (tuples, named
    tuples, slotted records) holds no reference cycle, and the collector's full passes over every
    object kept so far cost a third of a state rebuild's CPU (measured: 8.3 s of 26 s on 100k
    transactions). Reference counting still frees everything dropped; the collector's state is
    restored after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
