"""The local executor: runs the work units in-process, one after the other (``--engine local``:
no JVM, no threads), and merges their results per replica."""

from __future__ import annotations

import time
from typing import Dict, Optional, Sequence

from forensics.model import Progress
from forensics.pipeline.stats import engine_stats
from forensics.pipeline.merge import ReplicaResult, finalize, merge_all, part_of
from forensics.pipeline.plan import WorkUnit
from forensics.pipeline.units import run_unit



class LocalExecutor:
    name = "local"

    def __init__(self) -> None:
        self.stats: Dict[str, object] = {}

    def run(self, units: Sequence[WorkUnit], progress: Optional[Progress] = None) -> Dict[str, ReplicaResult]:
        started = time.perf_counter()
        groups: Dict[str, list] = {}
        for u in units:
            groups.setdefault(u.key, []).append(part_of(run_unit(u)))
            if progress is not None:
                progress(u.size)
        results = {key: finalize(merge_all(parts)) for key, parts in groups.items()}
        self.stats = engine_stats("local", None, units, len(units), 1, started)
        return results
