"""What the commands print on stderr around a run: the listener that tells as it goes (notes, warnings,
the progress bar), the manifest written, findings one line each, the engine statistics file."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, Iterable, Optional

import typer

from forensics.cli.progress import byte_progress
from forensics.pipeline.engine import Chosen
from forensics.render.engine_text import engine_line
from forensics.render.terminal_text import term
from forensics.runs.manifest import ManifestWritten

STATS_ENV = "KAFKA_FORENSICS_STATS"  # file to write the engine's statistics to (benchmarks)


class StderrListener:
    """A run's notes and warnings, one line each on stderr as they happen; a progress bar on a terminal."""

    def __init__(self, progress: bool = True) -> None:
        self.enabled = progress

    def note(self, text: str) -> None:
        sys.stdout.flush()  # after what stdout already holds, on a terminal showing both
        typer.echo(f"kafka-forensics: {term(text)}", err=True)

    def warn(self, text: str) -> None:
        typer.echo(f"kafka-forensics: warning: {text}", err=True)

    def engine(self, chosen: Chosen) -> None:
        typer.echo(f"kafka-forensics: {term(engine_line(chosen))}", err=True)

    def progress(self, total: int, label: str):
        return byte_progress(total, label, enabled=self.enabled)


def after_run(manifest: Optional[ManifestWritten], stats: Optional[Dict[str, Any]] = None) -> Optional[dict]:
    """The engine statistics (to ``KAFKA_FORENSICS_STATS``), then the manifest written: what could not be
    hashed and its digest on stderr; its reference for JSON output."""
    write_engine_stats(stats)
    if manifest is None:
        return None
    for f in manifest.problems:
        if f.error is not None:
            what = "not hashed" if f.is_file else "not read" if f.type != "dir" else "not listed"
            sys.stderr.write(f"kafka-forensics: manifest: {term(f.path)}: {what}: {term(f.error)}\n")
        if f.changed_during_run:
            sys.stderr.write(f"kafka-forensics: manifest: WARNING: {term(f.path)} changed while this run read it\n")
    ref, m = manifest.ref, manifest.manifest
    sys.stderr.write(f"manifest: {ref.path} (sha256 {ref.sha256}; {len(m.files)} file(s), "
                     f"{m.total_bytes} bytes hashed)\n")
    return ref.as_json()


def write_findings(findings: Iterable) -> None:
    """One line each, evidence text shown through :func:`~forensics.render.terminal_text.term`."""
    for f in findings:
        sys.stderr.write(term(f.one_line()) + "\n")


def write_engine_stats(stats: Optional[Dict[str, Any]]) -> None:
    """With KAFKA_FORENSICS_STATS=FILE, record what the engine did (units, tasks, bytes to the driver)."""
    target = os.environ.get(STATS_ENV)
    if not target or not stats:
        return
    with open(target, "w", encoding="utf-8") as fh:
        json.dump(stats, fh, indent=2, sort_keys=True)
        fh.write("\n")
