"""What an executor is, whichever engine runs it: the work units in; each replica's results out, by
replica key in the order of the plan, as read (a :class:`~forensics.pipeline.merge.ReplicaResult`) or
as ``consume(key, results)`` made them. A leaf module that both executors import (the engine imports
the executors, never the other way round)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar, overload

from forensics.model import Progress
from forensics.pipeline.merge import ReplicaResult
from forensics.pipeline.plan import WorkUnit

R = TypeVar("R")  # what ``consume`` keeps of a replica's results


def as_read(key: str, results: ReplicaResult) -> ReplicaResult:
    """The ``consume`` that keeps a replica's results as read."""
    return results


as_read.in_worker = True  # type: ignore[attr-defined]  # see in_worker


def in_worker(consume: Callable[[str, ReplicaResult], object]) -> bool:
    """Whether ``consume`` may run in the worker process that read the replica (the in-process pool's
    workers, forked when the job starts, inherit it) instead of the driver: it says so with an
    attribute ``in_worker`` true, promising to be a function of its arguments alone that changes
    nothing the driver reads later (no list it appends to, no counter), and to return what pickles.
    Any other ``consume`` runs in the driver, as it always did."""
    return getattr(consume, "in_worker", False) is True


class Executor:
    """Runs work units. ``run`` is the same for every engine; each implements :meth:`run_each`."""

    name: str

    @overload
    def run(self, units: Sequence[WorkUnit], progress: Progress | None = None) -> dict[str, ReplicaResult]: ...

    @overload
    def run(self, units: Sequence[WorkUnit], progress: Progress | None,
            consume: Callable[[str, ReplicaResult], R]) -> dict[str, R]: ...

    @overload
    def run(self, units: Sequence[WorkUnit], progress: Progress | None = None, *,
            consume: Callable[[str, ReplicaResult], R]) -> dict[str, R]: ...

    def run(self, units, progress=None, consume=None):
        """Each replica's results by key, or ``consume(key, results)`` of them (called once per replica,
        as soon as they are read, so that a caller keeps what it needs and not what was read)."""
        return self.run_each(units, progress, as_read if consume is None else consume)

    def run_each(self, units: Sequence[WorkUnit], progress: Progress | None,
                 consume: Callable[[str, ReplicaResult], R]) -> dict[str, R]:
        """:meth:`run` with ``consume`` given: what each engine implements."""
        raise NotImplementedError
