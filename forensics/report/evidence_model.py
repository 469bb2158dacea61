"""The facts of the evidence model, gathered from a state rebuild and the layout: how each log dir was
left (:mod:`forensics.analysis.quiescence`), when each partition was copied at the earliest."""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, Optional, Sequence

from forensics.analysis.clock import AsOf, FileTimes
from forensics.analysis.quiescence import ChangedFile, LogDirFacts, Quiescence, assess, earliest_copy
from forensics.layout.evidence import modification_times
from forensics.report.state import StateReport


def quiescence_of(report: StateReport, clock: AsOf, window_ms: int, changed: Sequence[ChangedFile] = (),
                  copy_start_ms: Optional[int] = None) -> Quiescence:
    """The quiescence of a state report's evidence; ``clock``: the incident clock of the same inputs (whether
    the file times are real), ``changed``: the files that changed while the run read them."""
    dir_of: Dict[str, str] = {}
    newest: Dict[str, Optional[int]] = {}
    for v in report.partitions:
        i = v.inputs
        dir_of[i.path] = i.log_dir
        snaps = [e.last_timestamp for r in i.snapshots if r.snapshot is not None for e in r.snapshot.entries]
        newest[i.path] = max([t for t in (v.max_timestamp, *snaps) if t is not None], default=None)
    for cp in report.coordinator.partitions.values():
        i = cp.inputs
        dir_of[i.path] = i.log_dir
        times = [s.max_timestamp for s in i.segments if s.max_timestamp is not None]
        newest[i.path] = max(times + list(cp.state.newest_update.values()), default=None)
    facts = [LogDirFacts(d.path, d.broker_id, d.had_clean_shutdown, d.lock_pid) for d in report.inventory.log_dirs]
    loose = [p.path for p in report.inventory.partitions]
    q = assess(facts, loose, changed, {}, dir_of, window_ms)
    if q.proven:
        return q  # every partition is final: no copy time is needed
    trust = clock.file_times is FileTimes.AGREE
    files = {p.path: [s.log for s in p.segments if s.log] + [s.path for s in p.snapshots]
             for _, p in report.inventory.all_partitions()} if trust else {}
    copied = {}
    for path in newest:
        mtimes = [t for t, _ in modification_times(files.get(path, ()))]
        at = earliest_copy(newest[path], mtimes, clock.time_ms, trust, copy_start_ms)
        if at is not None:
            copied[path] = at
    return replace(q, copied_by=copied)
