"""The reads every run builds on: a state rebuild and a scan (plan the work units, run them on an
executor, assemble the report), and the reads of the abort previews."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from forensics.analysis.hanging import DEFAULT_MAX_TRANSACTION_TIMEOUT_MS, Verdict
from forensics.layout import Inventory
from forensics.layout.discovery import discover
from forensics.model import Progress
from forensics.model import TopicPartition
from forensics.pipeline.engine import Executor
from forensics.pipeline.local import LocalExecutor
from forensics.pipeline.plan import UnitKind, WorkUnit, plan
from forensics.pipeline.preview import CommittedOffset, committed_offsets, discarded_data
from forensics.pipeline.units import read_segment
from forensics.render.clock_text import set_aside_findings
from forensics.report.preview import AbortPreview, abort_preview, consumer_offsets_logs, stuck_at_lso
from forensics.report.scan import SCAN_SCOPE, ScanReport, assemble_scan
from forensics.report.state import StateReport, assemble_state, loose_file_notes, state_scope
from forensics.state.inputs import SegmentSummary



def load_state(paths: Sequence[str], *, topic: str | None = None, partition: int | None = None,
               broker_id: int | None = None, partition_count: int | None = None,
               data: bool = True, progress: Progress | None = None,
               inventory: Inventory | None = None, executor: Executor | None = None) -> StateReport:
    """Rebuild producer state (data partitions matching the filters) and coordinator metadata."""
    inv = inventory if inventory is not None else discover(paths)
    loose_file_notes(inv)  # single files alone are refused before anything is read
    scope = state_scope(topic, partition, broker_id, data)
    results = (executor or LocalExecutor()).run(plan(inv, scope), progress)
    return assemble_state(inv, results, scope, partition_count)


def scan(paths: Sequence[str], progress: Progress | None = None, inventory: Inventory | None = None,
         as_of: int | None = None, max_timeout_ms: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
         executor: Executor | None = None) -> ScanReport:
    """The inventory of the disks: a header-only pass over every segment, rolled up per partition."""
    inv = inventory if inventory is not None else discover(paths)
    results = (executor or LocalExecutor()).run(plan(inv, SCAN_SCOPE), progress)
    report = assemble_scan(paths, inv, results, as_of, max_timeout_ms)
    return replace(report, findings=report.findings + set_aside_findings(report.as_of, str))  # export's: epoch ms


def previews(verdicts: Sequence[Verdict], inventory: Inventory, redact: bool = False) -> list[AbortPreview]:
    """What aborting each of ``verdicts`` discards (read from its partition's segments) and who waits
    behind it (the ``__consumer_offsets`` partitions among the inputs), in order."""
    if not verdicts:
        return []
    stuck, findings = _stuck_groups(inventory, verdicts)
    out = []
    for v in verdicts:
        last = v.span.last_data_offset if v.span is not None else None
        segments = [(s.path, s.base_offset) for s in v.view.inputs.segments]
        start = v.span.start if v.span is not None and v.span.first_offset == v.start_offset else None
        data = discarded_data(segments, v.entry.producer_id, v.start_offset, last,
                              (start.path, start.position) if start is not None else None, v.view.log_start_offset)
        out.append(abort_preview(v, data, stuck, findings, redact))
    return out


def _stuck_groups(inventory: Inventory, verdicts: Sequence[Verdict]
                  ) -> tuple[dict[TopicPartition, list[CommittedOffset]] | None, tuple]:
    logs = consumer_offsets_logs(inventory)
    if not logs:
        return None, ()
    lso = {v.view.topic_partition: v.view.last_stable_offset for v in verdicts}
    commits, findings = committed_offsets(logs, lso)
    return stuck_at_lso(commits, lso), tuple(findings)


def scan_segment(path: str, base_offset: int | None = None, progress: Progress | None = None) -> SegmentSummary:
    """Header-only summary of one ``.log`` file (never raises on damaged content)."""
    piece = read_segment(WorkUnit(UnitKind.STATS, path, path, base_offset, stats=True))
    if progress is not None:
        progress(piece.file_size)
    assert piece.summary is not None
    return piece.summary
