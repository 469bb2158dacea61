"""``--manifest FILE`` for every command that reads disks, and ``verify-manifest`` (the runs are
:mod:`forensics.runs.manifest`'s)."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from forensics.cli.boundary import EXIT_FOUND, EXIT_USAGE, error_boundary, fail
from forensics.render.manifest_render import render_verification
from forensics.runs.manifest import verify

MANIFEST = typer.Option(None, "--manifest", metavar="FILE", help="Write an evidence manifest to FILE: tool "
                        "version, command line, times, and size, modification time and SHA-256 of every input "
                        "file (check it later with verify-manifest). JSON reports embed its digest.")


def verify_manifest_cli(
    manifest: str = typer.Argument(..., help="A manifest written by --manifest."),
    base: Optional[str] = typer.Option(None, "--base", metavar="DIR", help="Resolve the manifest's relative paths "
                                       "against DIR (evidence moved or mounted elsewhere) instead of the absolute "
                                       "paths it recorded."),
    fmt: str = typer.Option("text", "--format", help="text or json."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every entry, the matching ones too."),
) -> None:
    """Check a manifest and the evidence tree against each other: its own digest and summary, then
    every entry under its inputs (changed, missing, added, renamed, type changed). Prints a one-line
    verdict, then only the differences. Exit 1 when anything differs."""
    if fmt not in ("text", "json"):
        raise fail(f"--format {fmt!r}: choose text or json", EXIT_USAGE)
    with error_boundary():
        done = verify(manifest, base)
        if done.version < 2:
            sys.stderr.write(f"kafka-forensics: note: {manifest} is a version 1 manifest: it lists only the files "
                             "it hashed and has no digest of itself, so entries added since and edits of the "
                             "manifest cannot be detected\n")
        render_verification(list(done.rows), done.sha256, sys.stdout, fmt, verbose)
        sys.stdout.flush()
    if done.differs:
        raise typer.Exit(EXIT_FOUND)


__all__ = ["MANIFEST", "verify_manifest_cli"]
