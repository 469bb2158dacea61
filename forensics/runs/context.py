"""What every run is given (the evidence, the engine) and how it tells what it does as it goes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from forensics.dataclass_fast import dataclass

from forensics.analysis.filters import Filters, check_filters
from forensics.layout import Inventory
from forensics.layout.discovery import discover
from forensics.layout.clusters import select_cluster

from forensics.pipeline.engine import EngineName, EngineSpec, Executor, make_executor
from forensics.pipeline.executor import R
from forensics.pipeline.merge import ReplicaResult
from forensics.pipeline.plan import WorkUnit
from forensics.pipeline.stats import EngineStats
from forensics.report.scan import total_log_bytes
from forensics.runs.listener import Listener, Quiet  # noqa: F401  (re-exported: the runs import them from here)
from forensics.runs.manifest import ManifestRun

# ``--engine``, ``--master``, ``--conf`` and how a forced name was given: the executor's own spec
EngineChoice = EngineSpec


@dataclass(frozen=True)
class Evidence:
    """What to read: the paths given, the cluster to analyse among them, and where to write the evidence
    manifest (the command line it records with it)."""

    paths: tuple[str, ...]
    cluster_id: str | None = None
    manifest: str | None = None
    command_line: tuple[str, ...] = ()


@dataclass
class Opened:
    """The evidence of one run, discovered: its inventory (one cluster), the executor chosen and the
    manifest being recorded."""

    inventory: Inventory
    executor: Executor
    manifest: ManifestRun
    stats: EngineStats | None = None  # what the executor's last job did

    def run_units(self, units: Sequence[WorkUnit], label: str, listener: Listener,
                  consume: Callable[[str, ReplicaResult], R]) -> dict[str, R]:
        """Run ``units`` on the executor, with a progress bar over the inventory's log bytes;
        ``consume(key, results)``: what to keep of each replica, as it is read (``as_read``: all of it).
        The engine line first, then the bar."""
        announce = getattr(self.executor, "announce", None)  # make_executor's executors tell their engine
        if announce is not None:
            announce(units)
        with listener.progress(total_log_bytes(self.inventory), f"{label} ({self.executor.name})") as advance:
            results = self.executor.run(units, advance, consume)
        self.stats = getattr(self.executor, "stats", None)  # (Reuse ran no job of its own: None)
        return results


def open_evidence(command: str, evidence: Evidence, engine: EngineChoice, listener: Listener,
                  filters: Filters | None = None) -> Opened:
    """Start the manifest (refusing a manifest path in the evidence); discover the inputs, one cluster and
    one copy of each broker's log dir (:mod:`forensics.layout.clusters`; what was left out told as notes);
    check the filters against them (before anything is read); choose the executor (a warning when Spark
    cannot run here, or for options only Spark takes); record and hash the tree."""
    manifest = ManifestRun(evidence.manifest, command, evidence.paths, engine.name.value, evidence.command_line)
    selection = select_cluster(discover(list(evidence.paths)), evidence.cluster_id)
    for note in selection.notes:
        listener.note(note)
    if filters is not None:
        check_filters(selection.inventory, filters)
    if engine.name is EngineName.local and (engine.master or engine.conf):
        listener.warn("--master/--conf apply to --engine spark only")
    executor = make_executor(engine, listener.warn,
                             total_log_bytes(selection.inventory), listener.engine)
    manifest.record_inventory(selection.inventory, executor.name)
    return Opened(selection.inventory, executor, manifest)
