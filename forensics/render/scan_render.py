"""Render a :class:`forensics.report.scan.ScanReport` as rich tables or JSON.

The tables go through rich with markup, emoji codes and highlighting off, so that no text from the
evidence (a directory named ``[link=file:evil]click``, a checkpoint line ``[/b]``) is ever read as
rich markup, and every such text is shown through :func:`~forensics.render.terminal_text.term`.

They fit the screen (:mod:`forensics.render.table_text`): by default the columns an SRE reads first
(HW, LSO, LSOLag, open transactions, findings; never cut: their columns do not wrap), names and paths
folded within their cells; ``wide``: every column, as wide as it needs. A file or a pipe gets every
line whole.
"""

from __future__ import annotations

import json
from typing import Any, TextIO
from collections.abc import Sequence

from rich.console import Console

from forensics.analysis.broker_version import BrokerVersionRange
from forensics.columns import (
    ABSENT, BYTE_RANGE, COUNT, EXACT_SIZE, LOG_DIR, NAME, OFFSETS, OPEN, PLAIN, SET, SIZE, TOTAL, VALUE, YES_NO, JsonRow)
from forensics.dataclass_fast import dataclass
from forensics.findings import Finding, total
from forensics.model import first_few
from forensics.render.broker_version_text import version_json, version_label
from forensics.render.clock_text import as_of_source, as_of_text
from forensics.render.counts import by_topic, count
from forensics.render.machine_format import SCAN
from forensics.render.size_text import exact_size, size
from forensics.render.row_screens import Field, Texts, declared_fields
from forensics.render.table_fit import fit_console, print_fitted, screen_width
from forensics.render.terminal_text import term
from forensics.render.time_text import short_duration
from forensics.report.scan import LogDirSummary, PartitionSummary, ScanReport, SegmentSummary, quiet_internal


def _offsets(first: int | None, last: int | None) -> str:
    return "-" if first is None else f"{first}..{_opt(last)}"


def _bytes(f: Finding) -> str:
    """A finding's byte range: its first byte to its end (an aggregate's: to the last one's first byte)."""
    end = f.last_position if f.end_position is None else f.end_position
    return "-" if f.position is None else f"{f.position}..{_opt(end)}"


def _set(values) -> str:
    return ",".join(str(v) for v in sorted(values)) or "-"


def _opt(value) -> str:
    return "-" if value is None else term(value)


# -- the columns: as the summaries and the findings declare them (forensics.report.scan, forensics.state.inputs,
# forensics.findings: each field's Cell) ----------------------------------------------------------------------

_TEXTS: Texts = {  # Cell.text -> the cell of (row, value)
    PLAIN: lambda row, value: _opt(value), COUNT: lambda row, value: str(len(value)),
    YES_NO: lambda row, value: "yes" if value else "no",
    SIZE: lambda row, value: size(value),  # 214.5 KiB; --wide: exact_size, the count too (JSON: bytes)
    EXACT_SIZE: lambda row, value: exact_size(value),
    LOG_DIR: lambda row, value: term(value) or "(partition dirs given directly)",
    NAME: lambda row, value: _name(row), OPEN: lambda row, value: _open(row),
    OFFSETS: lambda row, value: _offsets(row.first_offset, row.last_offset), SET: lambda row, value: _set(value),
    TOTAL: lambda row, value: str(total(value)), VALUE: lambda row, value: value.value,
    BYTE_RANGE: lambda row, value: _bytes(row)}


def _print(console: Console, title: str, fields: Sequence[Field], rows: Sequence[Any], width: int | None) -> None:
    print_fitted(console, title, [f.column for f in fields], [[f.text(r) for f in fields] for r in rows], width)


def _name(p: PartitionSummary) -> str:
    """``orders-0``, the log dir's name for it; ``orders-0 (stray)`` for a copy Kafka does not serve."""
    name = term(p.path.rstrip("/").rsplit("/", 1)[-1]) if p.topic is None or p.partition is None \
        else f"{term(p.topic)}-{p.partition}"
    return name if p.status == "live" else f"{name} ({term(p.status)})"


def _dirs_title(dirs: Sequence[LogDirSummary], wide: bool) -> str:
    """The table's title; it names the cluster when all the log dirs name the same one (the Cluster
    column, only with ``wide``, is then the same on every row)."""
    ids = {d.cluster_id for d in dirs}
    if wide or len(ids) != 1 or None in ids:
        return "Log directories"
    return f"Log directories of cluster {term(next(iter(ids)))}"


def _open(p: PartitionSummary) -> str:
    """``1 (4 d 19 h)``: open transactions and how long the oldest has been open, as of; ``late``
    past Kafka's late-transaction threshold."""
    if p.max_active_txn_duration_ms is None:
        return str(p.open_transactions) + (" (late)" if p.late_transaction else "")
    return (f"{p.open_transactions} ({short_duration(p.max_active_txn_duration_ms)}"
            + (", late)" if p.late_transaction else ")"))


def _hidden_line(hidden: Sequence[PartitionSummary]) -> str:
    topics: dict[str, int] = {}
    for p in hidden:
        topics[p.topic or ""] = topics.get(p.topic or "", 0) + 1
    which = by_topic([(term(t), n) for t, n in topics.items()])
    return (f"{count(len(hidden), 'partition')} of internal topics hidden ({which}): no LSO lag, open transaction "
            "or finding; --internal shows them")


def render_scan_table(report: ScanReport, out: TextIO, version: BrokerVersionRange | None = None, *,
                      wide: bool = False, internal: bool = False, evidence: Sequence[str] = ()) -> None:
    """The tables of a scan: the default columns fitted to the screen, or every column (``wide``); the
    internal topics' partitions with nothing to look at (report/scan.quiet_internal) left out, said in
    one line, unless ``internal``; last, ``evidence``: what the disk names that the inputs lack."""
    width = None if wide else screen_width(out)
    console = fit_console(out, width)
    if report.log_dirs:
        _print(console, _dirs_title(report.log_dirs, wide), _DIRS[wide], report.log_dirs, width)
    console.print(f"As of {term(as_of_text(report.as_of))}")
    if version is not None:
        console.print(term(version_label(version)))
    every = [p for d in report.log_dirs for p in d.partitions]
    parts = every if internal else [p for p in every if not quiet_internal(p)]
    hidden = [] if internal else [p for p in every if quiet_internal(p)]
    if parts:
        _print(console, "Partitions", _PARTS[wide], parts, width)
    elif report.log_dirs and not hidden:
        console.print("Partitions: none")  # log dirs that hold none: said, not an empty box
    if hidden:
        console.print(_hidden_line(hidden))
    if report.loose_segments:
        _print(console, "Segment files", _LOOSE[wide], report.loose_segments, width)
    if report.other_loose_files:  # given beside what scan reads: said, not passed over in silence
        names = first_few([term(p) for p in report.other_loose_files], 3)
        console.print(f"Not read by scan (it reads log dirs, partition dirs and .log segments; `kafka-forensics dump` "
                      f"decodes indexes and snapshots): {names}")
    findings = report.all_findings()
    if findings:
        _print(console, f"Findings ({total(findings)})", _FINDINGS, findings, width)
    else:
        console.print("Findings: none")
    if report.log_dirs:
        console.print(evidence_heading(evidence))
        for line in evidence:
            console.print(f"  {term(line.removeprefix('evidence: '))}")


def evidence_heading(evidence: Sequence[str]) -> str:
    """The line over what the disk names that the inputs lack (``__cluster_metadata``, the checkpoints)."""
    if evidence:
        return "Evidence: what weakens any verdict on these inputs"
    return "Evidence: every broker, log dir and partition the disk names is among the inputs"


@dataclass(frozen=True, slots=True)
class ScanAsOf(JsonRow):
    """scan's ``asOf``: the incident clock and, in words, where it comes from."""

    time_ms: int | None
    source: str


@dataclass(frozen=True, slots=True)
class ScanEvidence(JsonRow):
    """scan's ``evidence``: what weakens any verdict on these inputs, a line each."""

    gaps: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ScanTotals(JsonRow):
    """scan's ``summary``."""

    log_dirs: int
    partitions: int
    bytes: int
    findings: int  # as many as the findings stand for (an aggregate counts as many)


@dataclass(frozen=True, slots=True)
class ScanDocument(JsonRow):
    """scan's JSON document after its name and version (:data:`~forensics.render.machine_format.SCAN`), its
    objects as their rows declare them."""

    inputs: tuple[str, ...]
    as_of: ScanAsOf
    broker_version: Any  # (version_json's object; ABSENT: not asked)
    log_dirs: tuple[LogDirSummary, ...]
    segment_files: tuple[SegmentSummary, ...]
    other_files: tuple[str, ...]
    findings: tuple[Finding, ...]
    evidence: ScanEvidence
    summary: ScanTotals
    manifest: Any  # path and digest of the evidence manifest (ABSENT: none written)


def render_scan_json(report: ScanReport, out: TextIO, manifest: dict[str, Any] | None = None,
                     version: BrokerVersionRange | None = None, evidence: Sequence[str] = ()) -> None:
    """One JSON document (its name and version first: :data:`~forensics.render.machine_format.SCAN`); ``manifest``: path and digest of the evidence manifest, embedded when given;
    ``version``: the broker version range (``brokerVersion``), when given."""
    doc = ScanDocument(
        inputs=tuple(report.inputs), as_of=ScanAsOf(time_ms=report.as_of.time_ms, source=as_of_source(report.as_of)),
        broker_version=version_json(version) if version is not None else ABSENT,
        log_dirs=tuple(report.log_dirs), segment_files=tuple(report.loose_segments),
        other_files=tuple(report.other_loose_files), findings=tuple(report.findings),
        evidence=ScanEvidence(gaps=tuple(evidence)),
        summary=ScanTotals(log_dirs=len(report.log_dirs), partitions=sum(len(d.partitions) for d in report.log_dirs),
                           bytes=report.total_bytes(), findings=total(report.all_findings())),
        manifest=manifest if manifest is not None else ABSENT)
    json.dump({**SCAN.header(), **doc.as_json()}, out, indent=2, sort_keys=False)
    out.write("\n")


# (False, True): at the screen's width, with --wide
_DIRS = {w: declared_fields(LogDirSummary, w, _TEXTS) for w in (False, True)}
_PARTS = {w: declared_fields(PartitionSummary, w, _TEXTS) for w in (False, True)}
_LOOSE = {w: declared_fields(SegmentSummary, w, _TEXTS) for w in (False, True)}
_FINDINGS = declared_fields(Finding, False, _TEXTS)  # (the same with --wide)
