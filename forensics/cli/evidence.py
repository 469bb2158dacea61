"""``--manifest FILE`` for every command that reads disks, and ``verify-manifest``.

A :class:`ManifestRun` starts with the command: it refuses a manifest path anywhere in the evidence
(:func:`check_outside_evidence`, the one rule for every output path), records the whole tree under
the inputs and hashes its files once discovery has named the log and partition dirs (before the
analysis reads them), and at the end writes the manifest (atomically, next to nowhere but FILE)
and returns its digest, which JSON reports embed.
"""

from __future__ import annotations

import hashlib
import os
import socket
import sys
import time
from dataclasses import dataclass, replace
from typing import Optional, Sequence

import typer

from forensics import __version__
from forensics.cli.boundary import (
    EXIT_FOUND,
    EXIT_INPUT,
    EXIT_USAGE,
    command_line,
    error_boundary,
    fail,
)
from forensics.errors import InputError
from forensics.layout.evidence import evidence_zones, under
from forensics.layout.evidence import is_within as inside
from forensics.layout.evidence_files import EvidenceEntry, evidence_tree, roles_of
from forensics.layout.records import Inventory
from forensics.render.terminal_text import term

MANIFEST = typer.Option(None, "--manifest", metavar="FILE", help="Write an evidence manifest to FILE: tool "
                        "version, command line, times, and size, modification time and SHA-256 of every input "
                        "file (check it later with verify-manifest). JSON reports embed its digest.")


@dataclass(frozen=True)
class ManifestRef:
    path: str
    sha256: str

    def as_json(self) -> dict:
        return {"path": self.path, "sha256": self.sha256}


def check_outside_evidence(target: str, inputs: Sequence[str], option: str = "--manifest") -> None:
    """Refuse (exit 2) an output path anywhere in the evidence: inside or equal to an input, beside a
    file given, or under the broker log dir holding an input (layout/evidence.evidence_zones). The one
    rule for every output path (--manifest, report --out, export --out)."""
    real = os.path.realpath(target)
    for given in inputs:
        for zone, why in evidence_zones(given):
            if under(real, zone):
                where = given if why == given else f"{zone}, {why}"
                raise fail(f"{option} {target}: lies inside the evidence ({where}); write it elsewhere", EXIT_USAGE)


def require_parent_dir(target: str, option: str) -> None:
    """Refuse (exit 3) an output path whose directory does not exist."""
    parent = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(parent):
        raise fail(f"{option} {target}: directory {parent} does not exist", EXIT_INPUT)


class ManifestRun:
    """What one run read, hashed; ``target=None`` makes every call a no-op."""

    def __init__(self, target: Optional[str], command: str, inputs: Sequence[str], engine: Optional[str]) -> None:
        from forensics.report.manifest import Manifest

        self.target = target
        if target is None:
            return
        check_outside_evidence(target, inputs)
        require_parent_dir(target, "--manifest")
        self.manifest = Manifest(
            tool_version=__version__, command=command, command_line=tuple(command_line()),
            working_directory=os.getcwd(), host=socket.gethostname(), engine=engine, inputs=tuple(inputs),
            started_ms=time.time_ns() // 1_000_000, ended_ms=None, as_of_ms=None, as_of_source=None, entries=())

    def record(self, entries: Sequence[EvidenceEntry]) -> None:
        if self.target is not None:
            from forensics.report.manifest import record_inputs

            self.manifest = record_inputs(self.manifest, entries)

    def record_inventory(self, inventory: Inventory, engine: Optional[str] = None) -> None:
        """Record the whole tree under the inputs, each entry with the role discovery gave it, and hash
        every regular file; ``engine``: the executor that will really run."""
        if self.target is not None:
            if engine is not None:
                self.manifest = replace(self.manifest, engine=engine)
            self.record(evidence_tree(self.manifest.inputs, roles_of(inventory)))

    def record_given(self, paths: Sequence[str]) -> None:
        """Record the files named (``dump``): a directory among them is refused by the command, not walked."""
        if self.target is not None:
            self.record(evidence_tree([p for p in paths if not os.path.isdir(p)]))

    def finish(self, as_of_ms: Optional[int] = None, as_of_source: Optional[str] = None) -> Optional[ManifestRef]:
        """Write the manifest; its digest for the report (None without --manifest)."""
        if self.target is None:
            return None
        from forensics.render.manifest_render import manifest_json
        from forensics.report.manifest import close_run

        self.manifest = close_run(self.manifest, time.time_ns() // 1_000_000, as_of_ms, as_of_source)
        data = manifest_json(self.manifest)
        write_atomically(self.target, data)
        for f in self.manifest.entries:
            if f.error is not None:
                what = "not hashed" if f.is_file else "not read" if f.type != "dir" else "not listed"
                sys.stderr.write(f"kafka-forensics: manifest: {term(f.path)}: {what}: {term(f.error)}\n")
            if f.changed_during_run:
                sys.stderr.write(f"kafka-forensics: manifest: WARNING: {term(f.path)} changed while this run "
                                 "read it\n")
        ref = ManifestRef(self.target, hashlib.sha256(data).hexdigest())
        sys.stderr.write(f"manifest: {ref.path} (sha256 {ref.sha256}; {len(self.manifest.files)} file(s), "
                         f"{self.manifest.total_bytes} bytes hashed)\n")
        return ref


def write_atomically(target: str, data: bytes, what: str = "the manifest") -> None:
    """Write ``data`` to ``target`` through a temporary file beside it and a rename: a reader never
    sees half of it; one clear line if it cannot be written."""
    tmp = f"{target}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InputError(f"cannot write {what}: {exc.strerror or exc}", path=target) from None


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
    import json

    from forensics.io.files import WHOLE_FILE_LIMIT, read_small_file
    from forensics.render.manifest_render import render_verification
    from forensics.report.manifest import ManifestFormatError
    from forensics.report.manifest_verify import manifest_checks, parse_manifest, verify_manifest

    if fmt not in ("text", "json"):
        raise fail(f"--format {fmt!r}: choose text or json", EXIT_USAGE)
    with error_boundary():
        data = read_small_file(manifest, WHOLE_FILE_LIMIT)
        try:
            obj = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ManifestFormatError(f"not JSON: {exc}", path=manifest) from None
        recorded = parse_manifest(obj, manifest)
        if recorded.version < 2:
            sys.stderr.write(f"kafka-forensics: note: {manifest} is a version 1 manifest: it lists only the files "
                             "it hashed and has no digest of itself, so entries added since and edits of the "
                             "manifest cannot be detected\n")
        rows = manifest_checks(obj, recorded, manifest) + verify_manifest(recorded, base)
        render_verification(rows, hashlib.sha256(data).hexdigest(), sys.stdout, fmt, verbose)
        sys.stdout.flush()
    if any(r.status != "ok" for r in rows):
        raise typer.Exit(EXIT_FOUND)


__all__ = ["MANIFEST", "ManifestRef", "ManifestRun", "check_outside_evidence", "inside", "require_parent_dir",
           "write_atomically"]
