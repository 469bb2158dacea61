"""The local executor: runs the work units in-process, one after the other (``--engine local``:
no JVM, no threads), and merges their results per replica."""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, Optional, Sequence

from forensics.model import Progress
from forensics.pipeline.stats import engine_stats
from forensics.pipeline.merge import ReplicaResult, finalize, merge_all, part_of
from forensics.pipeline.plan import WorkUnit
from forensics.pipeline.units import run_unit



class LocalExecutor:
    name = "local"

    def __init__(self) -> None:
        self.stats: Dict[str, object] = {}

    def run(self, units: Sequence[WorkUnit], progress: Optional[Progress] = None,
            consume: Optional[Callable[[str, ReplicaResult], Any]] = None) -> Dict[str, Any]:
        """Each replica's finalized results, or what ``consume(key, results)`` makes of them, called as
        soon as the replica's last unit ran (the plan lists units replica by replica): what was read
        of one replica is dropped before the next is read."""
        started = time.perf_counter()
        last = {u.key: i for i, u in enumerate(units)}
        groups: Dict[str, list] = {}
        results: Dict[str, Any] = {}
        for i, u in enumerate(units):
            groups.setdefault(u.key, []).append(part_of(run_unit(u)))
            if progress is not None:
                progress(u.size)
            if last[u.key] == i:
                result = finalize(merge_all(groups.pop(u.key)))
                results[u.key] = consume(u.key, result) if consume is not None else result
                del result
        results = {key: results[key] for key in last}  # in the order of the plan, as before
        self.stats = engine_stats("local", None, units, len(units), 1, started)
        return results
