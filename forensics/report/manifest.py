"""The evidence manifest: a verifiable record of one run and of every input file it looked at.

:func:`record_inputs` hashes the files before the analysis reads them; :func:`close_run` re-checks
their size and modification time after it, so a file that changed during the run is named in the
manifest. :func:`verify_manifest` hashes the inputs again later and lists every difference. The
JSON form (``render/manifest_render.py``) is the one written to disk; :func:`parse_manifest` reads
it back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from forensics.errors import InputError
from forensics.io.digest import FileDigest, hash_file, hash_files, stat_file
from forensics.layout.evidence_files import EvidenceFile

MANIFEST_VERSION = 1


class ManifestFormatError(InputError):
    """The file given to verify-manifest is not a kafka-forensics manifest."""

    exit_code = 4


@dataclass(frozen=True)
class ManifestFile:
    path: str  # as the user's input named it
    absolute_path: str
    kind: str
    size: Optional[int]
    mtime_ns: Optional[int]
    sha256: Optional[str]
    error: Optional[str] = None  # could not be hashed: why
    changed_during_run: bool = False
    sparse_sha256: Optional[str] = None  # instead of sha256, for a file with more holes than SPARSE_HASH_LIMIT


@dataclass(frozen=True)
class Manifest:
    tool_version: str
    command: str
    command_line: Tuple[str, ...]
    working_directory: str
    host: str
    engine: Optional[str]
    inputs: Tuple[str, ...]
    started_ms: int
    ended_ms: Optional[int]
    as_of_ms: Optional[int]
    as_of_source: Optional[str]
    files: Tuple[ManifestFile, ...]

    @property
    def total_bytes(self) -> int:
        return sum(f.size or 0 for f in self.files)


def _from_digest(f: EvidenceFile, d: FileDigest) -> ManifestFile:
    return ManifestFile(f.path, os.path.abspath(f.path), f.kind, d.size, d.mtime_ns, d.sha256, d.error,
                        d.changed_while_read, d.sparse_sha256)


def record_inputs(manifest: Manifest, files: Sequence[EvidenceFile]) -> Manifest:
    """The manifest with ``files`` hashed (added to those already recorded, each path once)."""
    known = {f.absolute_path for f in manifest.files}
    todo = [f for f in files if os.path.abspath(f.path) not in known]
    digests = hash_files([f.path for f in todo])
    return replace(manifest, files=manifest.files + tuple(_from_digest(f, d) for f, d in zip(todo, digests)))


def close_run(manifest: Manifest, ended_ms: int, as_of_ms: Optional[int], as_of_source: Optional[str]) -> Manifest:
    """End time and as-of; every file whose size or modification time moved since it was hashed is
    marked ``changed_during_run``."""
    files = []
    for f in manifest.files:
        now = stat_file(f.path)
        moved = f.error is None and (now is None or (now.size, now.mtime_ns) != (f.size, f.mtime_ns))
        files.append(replace(f, changed_during_run=True) if moved else f)
    return replace(manifest, ended_ms=ended_ms, as_of_ms=as_of_ms, as_of_source=as_of_source, files=tuple(files))


# -- verification --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verification:
    path: str  # the path that was hashed again
    status: str  # ok, changed, missing, unreadable, not-hashed
    detail: str


def _where(f: ManifestFile, base: Optional[str]) -> str:
    if base is None:
        return f.absolute_path
    return f.path if os.path.isabs(f.path) else os.path.join(base, f.path)


def verify_manifest(manifest: Manifest, base: Optional[str] = None) -> List[Verification]:
    """Each recorded file hashed again (relative paths against ``base`` when given, else the recorded
    absolute paths). Differences in content, size or modification time are listed."""
    where = [_where(f, base) for f in manifest.files]
    digests = [hash_file(path, form="sparse" if f.sparse_sha256 else "sha256") for f, path in zip(manifest.files, where)]
    return [_compare(f, path, d) for f, path, d in zip(manifest.files, where, digests)]


def _compare(f: ManifestFile, path: str, d: FileDigest) -> Verification:
    if f.error is not None:
        return Verification(path, "not-hashed", f"was not readable when recorded ({f.error})")
    if d.error is not None:
        status = "missing" if d.error == "no such file" else "unreadable"
        return Verification(path, status, d.error)
    differences = []
    if d.sha256 != f.sha256:
        differences.append(f"sha256 {d.sha256} (recorded {f.sha256})")
    if d.sparse_sha256 != f.sparse_sha256:
        differences.append(f"sparse digest {d.sparse_sha256} (recorded {f.sparse_sha256})")
    if d.size != f.size:
        differences.append(f"size {d.size} (recorded {f.size})")
    if d.mtime_ns != f.mtime_ns:
        differences.append(f"modification time {d.mtime_ns} ns (recorded {f.mtime_ns})")
    if differences:
        return Verification(path, "changed", "; ".join(differences))
    note = " (it changed while the recorded run read it)" if f.changed_during_run else ""
    digest = f"sha256 {d.sha256}" if d.sparse_sha256 is None else f"sparse digest {d.sparse_sha256}"
    return Verification(path, "ok", f"{digest}{note}")


# -- reading a manifest back ---------------------------------------------------------------------


def _field(obj: Mapping[str, Any], key: str, kind: type, where: str, optional: bool = False) -> Any:
    value = obj.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ManifestFormatError(f"{where}: field {key!r} is missing or not a {kind.__name__}")
    return value


def parse_manifest(obj: Any, path: str) -> Manifest:
    """A Manifest from the JSON object written by ``render_manifest``; ManifestFormatError otherwise."""
    if not isinstance(obj, dict) or obj.get("manifestVersion") != MANIFEST_VERSION or not isinstance(
            obj.get("files"), list):
        raise ManifestFormatError("not a kafka-forensics evidence manifest (version 1)", path=path)
    files = []
    for i, f in enumerate(obj["files"]):
        where = f"{path}: files[{i}]"
        if not isinstance(f, dict):
            raise ManifestFormatError(f"{where} is not an object")
        files.append(ManifestFile(
            _field(f, "path", str, where), _field(f, "absolutePath", str, where), _field(f, "kind", str, where),
            _field(f, "size", int, where, True), _field(f, "mtimeNs", int, where, True),
            _field(f, "sha256", str, where, True), _field(f, "error", str, where, True),
            bool(f.get("changedDuringRun", False)), _field(f, "sparseSha256", str, where, True)))
    run, tool, as_of = obj.get("run") or {}, obj.get("tool") or {}, obj.get("asOf") or {}
    return Manifest(
        tool_version=str(tool.get("version", "")), command=str(run.get("command", "")),
        command_line=tuple(str(a) for a in run.get("commandLine", ())),
        working_directory=str(run.get("workingDirectory", "")), host=str(run.get("host", "")),
        engine=run.get("engine"), inputs=tuple(str(p) for p in obj.get("inputs", ())),
        started_ms=int(run.get("startedMs", 0)), ended_ms=run.get("endedMs"),
        as_of_ms=as_of.get("timeMs"), as_of_source=as_of.get("source"), files=tuple(files))


__all__ = ["MANIFEST_VERSION", "Manifest", "ManifestFile", "ManifestFormatError", "Verification", "close_run",
           "parse_manifest", "record_inputs", "verify_manifest"]
