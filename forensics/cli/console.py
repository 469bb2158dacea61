"""What the commands print on stderr around a run: the listener that tells as it goes (notes, warnings,
the progress bar), the manifest written, findings one line each, the engine statistics file.

``--quiet`` (every command, cli/options.py ``QUIET``) leaves only results and errors: stdout as
without it and, on stderr, warnings, findings and errors; the notes for people (the engine line, the
as-of lines, hints, summaries) and the progress bar are not written (docs/cli.md, "--quiet")."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, TextIO
from collections.abc import Iterable

import typer

from forensics.cli.progress import byte_progress
from forensics.render.size_text import exact_size
from forensics.render.terminal_text import term

if TYPE_CHECKING:  # the engine and the manifest are loaded by the runs that have them, not by dump
    from forensics.pipeline.engine import Chosen
    from forensics.pipeline.stats import EngineStats
    from forensics.runs.manifest import ManifestWritten

STATS_ENV = "KAFKA_FORENSICS_STATS"  # file to write the engine's statistics to (benchmarks)


CONTINUED = "    "  # a folded note's next lines


class _Voice:
    """Whether the command running was given ``--quiet`` (set by the option as it is parsed)."""

    quiet = False


def set_quiet(quiet: bool) -> bool:
    """``--quiet``'s callback: every command sets it, given or not, before its body runs."""
    _Voice.quiet = bool(quiet)
    return quiet


def is_quiet() -> bool:
    return _Voice.quiet


def write_warning(text: str, out: TextIO | None = None) -> None:
    """A warning on stderr (or ``out``; evidence text in it already escaped), folded at the screen width
    as scan's tables are (``COLUMNS``, else the terminal's), its next lines indented; whole into a file
    or a pipe. Written under ``--quiet`` too. Findings are one line each (:func:`write_findings`), to grep."""
    from forensics.render.table_fit import fold, screen_width  # rich's tables: loaded when a note is written

    stream = out if out is not None else sys.stderr
    stream.write("".join(line + "\n" for line in fold(text, screen_width(stream), "", CONTINUED)))


def write_note(text: str, out: TextIO | None = None) -> None:
    """A note for people (the as-of lines, a hint, a summary), folded as :func:`write_warning`; nothing
    under ``--quiet``."""
    if not _Voice.quiet:
        write_warning(text, out)


class StderrListener:
    """A run's notes and warnings, one line each on stderr as they happen; a progress bar on a terminal.
    Under ``--quiet`` only the warnings (and the notes where ``notes_are_errors``: dump's notes are
    the files it could not read)."""

    def __init__(self, progress: bool = True, notes_are_errors: bool = False) -> None:
        self.enabled = progress
        self.notes_are_errors = notes_are_errors

    def note(self, text: str) -> None:
        sys.stdout.flush()  # after what stdout already holds, on a terminal showing both
        (write_warning if self.notes_are_errors else write_note)(f"kafka-forensics: {term(text)}")

    def warn(self, text: str) -> None:
        write_warning(f"kafka-forensics: warning: {text}")

    def engine(self, chosen: Chosen) -> None:
        from forensics.render.engine_text import engine_line

        if not _Voice.quiet:
            typer.echo(f"kafka-forensics: {term(engine_line(chosen))}", err=True)

    def progress(self, total: int, label: str):
        return byte_progress(total, label, enabled=self.enabled and not _Voice.quiet)


def after_run(manifest: ManifestWritten | None, stats: EngineStats | None = None) -> dict | None:
    """The engine statistics (to ``KAFKA_FORENSICS_STATS``), then the manifest written: what could not be
    hashed and its digest on stderr; its reference for JSON output."""
    write_engine_stats(stats)
    if manifest is None:
        return None
    for f in manifest.problems:
        if f.error is not None:
            what = "not hashed" if f.is_file else "not read" if f.type != "dir" else "not listed"
            write_warning(f"kafka-forensics: manifest: {term(f.path)}: {what}: {term(f.error)}")
        if f.changed_during_run:
            write_warning(f"kafka-forensics: manifest: WARNING: {term(f.path)} changed while this run read it")
    ref, m = manifest.ref, manifest.manifest
    write_note(f"manifest: {ref.path} (sha256 {ref.sha256}; {len(m.files)} file(s), {exact_size(m.total_bytes)} "
               "hashed)")
    return ref.as_json()


def write_findings(findings: Iterable) -> None:
    """One line each, evidence text shown through :func:`~forensics.render.terminal_text.term`."""
    for f in findings:
        sys.stderr.write(term(f.one_line()) + "\n")


def write_engine_stats(stats: EngineStats | None) -> None:
    """With KAFKA_FORENSICS_STATS=FILE, record what the engine did (units, tasks, bytes to the driver)."""
    target = os.environ.get(STATS_ENV)
    if not target or not stats:
        return
    with open(target, "w", encoding="utf-8") as fh:
        json.dump(stats.as_json(), fh, indent=2, sort_keys=True)
        fh.write("\n")
