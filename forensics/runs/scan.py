"""scan: the inventory of broker disks (header-only, read-only)."""

from __future__ import annotations

import os
from dataclasses import replace
from forensics.dataclass_fast import dataclass

from forensics.analysis.broker_version import BrokerVersionRange, Version
from forensics.analysis.filters import Filters
from forensics.errors import InputError
from forensics.layout.inventory import Inventory
from forensics.layout.names import FileKind
from forensics.pipeline.cluster_metadata import EVIDENCE_RECORD_TYPES, read_cluster_image
from forensics.pipeline.plan import plan
from forensics.pipeline.stats import EngineStats
from forensics.render.clock_text import as_of_source, set_aside_findings
from forensics.render.coverage_text import coverage_lines
from forensics.report.evidence_facts import coverage_of
from forensics.report.scan import SCAN_SCOPE, ScanFolder, ScanReport, assemble_scan, selected
from forensics.runs.broker_version import broker_version_of
from forensics.runs.context import EngineChoice, Evidence, Listener, Quiet, open_evidence
from forensics.runs.manifest import ManifestWritten


@dataclass(frozen=True)
class ScanRequest:
    evidence: Evidence
    engine: EngineChoice = EngineChoice()
    as_of: int | None = None  # None: the incident clock
    broker_version: Version | None = None  # None: what the disks show
    topic: str | None = None  # only this topic's partitions (checked against the inputs before reading)
    partition: int | None = None
    broker_id: int | None = None


@dataclass(frozen=True)
class ScanResult:
    report: ScanReport  # its as_of is the run's
    version: BrokerVersionRange
    manifest: ManifestWritten | None
    stats: EngineStats | None  # what the engine did (None: no job ran)
    # what the disk says should exist and is not among the inputs (brokers, log dirs, partitions,
    # __cluster_metadata), one line each as find-hanging writes them; empty: nothing named is missing
    evidence_gaps: tuple[str, ...] = ()


def scan(req: ScanRequest, listener: Listener = Quiet()) -> ScanResult:
    """Brokers and log dirs, partitions, segments, bytes, batches, offsets, formats, codecs, findings."""
    opened = open_evidence("scan", req.evidence, req.engine, listener, Filters(req.topic, req.partition, req.broker_id))
    refuse_nothing_to_read(opened.inventory)
    results = opened.run_units(plan(opened.inventory, SCAN_SCOPE), "scanning", listener, ScanFolder(opened.inventory))
    assembled = assemble_scan(req.evidence.paths, opened.inventory, results, req.as_of)
    assembled = replace(assembled, findings=assembled.findings + set_aside_findings(assembled.as_of))
    report = selected(assembled, req.topic, req.partition, req.broker_id)
    version = broker_version_of(opened.inventory, scan=report, given=req.broker_version)
    image = read_cluster_image(opened.inventory, record_types=EVIDENCE_RECORD_TYPES)
    gaps = tuple(coverage_lines(coverage_of(opened.inventory, image)))
    written = opened.manifest.finish(report.as_of.time_ms, as_of_source(report.as_of))
    return ScanResult(report, version, written, opened.stats, gaps)


# what ``dump`` decodes of the files scan does not read alone (the text files it ignores, as kafka-dump-log.sh)
_DUMPED = frozenset({FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX, FileKind.SNAPSHOT, FileKind.KRAFT_SNAPSHOT,
                     FileKind.BOOTSTRAP_CHECKPOINT, FileKind.LOG})


def refuse_nothing_to_read(inv: Inventory) -> None:
    """Files alone that scan does not read (an index, a snapshot, a checkpoint, a segment the broker set
    aside): an input error (exit 3), as meta.properties and any non-Kafka file are, instead of a
    "Findings: none" about nothing read. Next to a log dir, partition dir or segment they are listed."""
    if inv.log_dirs or inv.partitions or not inv.loose_files:
        return
    if any(f.kind is FileKind.LOG and f.temp_suffix is None for f in inv.loose_files):
        return
    first = inv.loose_files[0]
    dump = "; `kafka-forensics dump` decodes it" if first.kind in _DUMPED else ""
    raise InputError("scan reads log dirs, partition dirs and .log segments, not this file alone: give its directory "
                     f"({os.path.dirname(first.path) or '.'}){dump}", path=first.path)
