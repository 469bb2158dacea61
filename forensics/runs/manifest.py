"""The evidence manifest of a run (``--manifest FILE``) and ``verify-manifest``.

A :class:`ManifestRun` starts with the run: it refuses a manifest path anywhere in the evidence
(:func:`~forensics.layout.evidence.check_outside_evidence`, the one rule for every output path), records the whole tree under
the inputs and hashes its files once discovery has named the log and partition dirs (before the
analysis reads them), and at the end writes the manifest (atomically, next to nowhere but FILE)
and returns its digest, which JSON reports embed.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from forensics.dataclass_fast import dataclass
from collections.abc import Sequence
from typing import TYPE_CHECKING

from forensics import __version__
from forensics.errors import InputError
from forensics.io.files import WHOLE_FILE_LIMIT, read_small_file
from forensics.layout.evidence import check_output_path
from forensics.layout.inventory import Inventory

if TYPE_CHECKING:  # (a run without --manifest loads none of it: hashing, the tree walk, the JSON)
    from forensics.layout.evidence_files import EvidenceEntry
    from forensics.report.manifest import Manifest, ManifestEntry
    from forensics.report.manifest_verify import Verification


@dataclass(frozen=True)
class ManifestRef:
    path: str
    sha256: str

    def as_json(self) -> dict:
        return {"path": self.path, "sha256": self.sha256}


@dataclass(frozen=True)
class ManifestWritten:
    """A manifest written: its reference, and what the command line says about it."""

    ref: ManifestRef
    manifest: Manifest

    @property
    def problems(self) -> tuple[ManifestEntry, ...]:
        """Entries not hashed, read or listed, or that changed while the run read them."""
        return tuple(f for f in self.manifest.entries if f.error is not None or f.changed_during_run)


class ManifestRun:
    """What one run read, hashed; ``target=None`` makes every call a no-op."""

    def __init__(self, target: str | None, command: str, inputs: Sequence[str], engine: str | None,
                 command_line: Sequence[str] = ()) -> None:
        self.target = target
        if target is None:
            return
        import socket

        from forensics.report.manifest import Manifest

        check_output_path(target, inputs, "--manifest")
        self.manifest = Manifest(
            tool_version=__version__, command=command, command_line=tuple(command_line),
            working_directory=os.getcwd(), host=socket.gethostname(), engine=engine, inputs=tuple(inputs),
            started_ms=time.time_ns() // 1_000_000, ended_ms=None, as_of_ms=None, as_of_source=None, entries=())

    def record(self, entries: Sequence[EvidenceEntry]) -> None:
        if self.target is not None:
            from forensics.report.manifest import record_inputs

            self.manifest = record_inputs(self.manifest, entries)

    def record_inventory(self, inventory: Inventory, engine: str | None = None) -> None:
        """Record the whole tree under the inputs, each entry with the role discovery gave it, and hash
        every regular file; ``engine``: the executor that will really run."""
        if self.target is not None:
            from forensics.layout.evidence_files import evidence_tree, roles_of

            if engine is not None:
                self.manifest = replace(self.manifest, engine=engine)
            self.record(evidence_tree(self.manifest.inputs, roles_of(inventory)))

    def record_given(self, paths: Sequence[str]) -> None:
        """Record the files named (``dump``): a directory among them is refused by the command, not walked."""
        if self.target is not None:
            from forensics.layout.evidence_files import evidence_tree

            self.record(evidence_tree([p for p in paths if not os.path.isdir(p)]))

    def finish(self, as_of_ms: int | None = None, as_of_source: str | None = None) -> ManifestWritten | None:
        """Write the manifest; its digest for the report (None without --manifest)."""
        if self.target is None:
            return None
        import hashlib

        from forensics.render.manifest_render import manifest_json
        from forensics.report.manifest import close_run

        self.manifest = close_run(self.manifest, time.time_ns() // 1_000_000, as_of_ms, as_of_source)
        data = manifest_json(self.manifest)
        write_atomically(self.target, data)
        return ManifestWritten(ManifestRef(self.target, hashlib.sha256(data).hexdigest()), self.manifest)


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


# -- verify-manifest ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verified:
    """The checks of a manifest against itself and the evidence, in order, and the manifest's digest."""

    rows: tuple[Verification, ...]
    sha256: str
    version: int
    recorded: int  # the entries the manifest lists (version 1: its files)

    @property
    def differs(self) -> bool:
        return any(r.status != "ok" for r in self.rows)


def verify(manifest: str, base: str | None = None) -> Verified:
    """Check a manifest and the evidence tree against each other: its own digest and summary, then every
    entry under its inputs (``base``: resolve its relative paths there instead)."""
    import hashlib

    from forensics.report.manifest import ManifestFormatError
    from forensics.report.manifest_verify import manifest_checks, parse_manifest, verify_manifest

    data = read_small_file(manifest, WHOLE_FILE_LIMIT)
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ManifestFormatError(f"not JSON: {exc}", path=manifest) from None
    recorded = parse_manifest(obj, manifest)
    rows: list[Verification] = manifest_checks(obj, recorded, manifest) + verify_manifest(recorded, base)
    return Verified(tuple(rows), hashlib.sha256(data).hexdigest(), recorded.version, len(recorded.entries))
