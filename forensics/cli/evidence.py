"""``--manifest FILE`` for every command that reads disks, and ``verify-manifest`` (the runs are
:mod:`forensics.runs.manifest`'s)."""

from __future__ import annotations

import sys
from enum import Enum

import typer

from forensics.cli.boundary import EXIT_FOUND, error_boundary
from forensics.cli.console import write_note
from forensics.cli.options import MANIFEST, QUIET, format_option
from forensics.render.manifest_render import render_verification
from forensics.runs.manifest import verify

class ManifestFormat(str, Enum):
    text = "text"
    json = "json"


def verify_manifest_cli(
    manifest: str = typer.Argument(..., metavar="MANIFEST", help="A manifest written by --manifest."),
    base: str | None = typer.Option(None, "--base", metavar="DIR", help="Resolve the manifest's relative paths "
                                       "against DIR (evidence moved or mounted elsewhere) instead of the absolute "
                                       "paths it recorded."),
    fmt: ManifestFormat = format_option(ManifestFormat),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every entry, the matching ones too."),
    quiet: bool = QUIET,
) -> None:
    """Check a manifest and the evidence tree against each other: its own digest and summary, then
    every entry under its inputs (changed, missing, added, renamed, type changed). Prints a one-line
    verdict, then only the differences. Exit 1 when anything differs."""
    with error_boundary():
        done = verify(manifest, base)
        if done.version < 2:
            write_note(f"kafka-forensics: note: {manifest} is a version 1 manifest: it lists only the files it hashed "
                       "and has no digest of itself, so entries added since and edits of the manifest cannot be "
                       "detected")
        render_verification(list(done.rows), done.sha256, done.recorded, sys.stdout, fmt.value, verbose)
        sys.stdout.flush()
    if done.differs:
        raise typer.Exit(EXIT_FOUND)


__all__ = ["MANIFEST", "verify_manifest_cli"]
