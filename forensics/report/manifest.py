"""The evidence manifest: a verifiable record of one run and of the whole evidence tree it looked at.

:func:`record_inputs` records every entry under the inputs (directories, files, symlinks, special
files, with their type) and hashes the regular files before the analysis reads them;
:func:`close_run` re-checks their size and modification time after it, so a file that changed
during the run is named in the manifest. The JSON form (``render/manifest_render.py``) is the one
written to disk, with a digest of its own content; ``report/manifest_verify.py`` checks a manifest
against the evidence as it is now.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from forensics.dataclass_fast import dataclass
from typing import Any

from forensics.errors import InputError
from forensics.exit_codes import EXIT_CORRUPT
from forensics.io.digest import FileDigest, hash_files
from forensics.layout.evidence_files import EvidenceEntry

MANIFEST_VERSION = 2


class ManifestFormatError(InputError):
    """The file given to verify-manifest is not a kafka-forensics manifest."""

    exit_code = EXIT_CORRUPT


@dataclass(frozen=True)
class ManifestEntry:
    path: str  # as the user's input named it
    absolute_path: str
    kind: str  # role: log dir, partition dir, directory, log-dir file, partition file, file given, other file
    type: str = "file"  # dir, file, symlink, fifo, socket, char-device, block-device, other
    size: int | None = None
    mtime_ns: int | None = None
    sha256: str | None = None
    error: str | None = None  # a file that could not be hashed, a directory that could not be listed: why
    changed_during_run: bool = False
    sparse_sha256: str | None = None  # instead of sha256, for a file with more holes than SPARSE_HASH_LIMIT
    target: str | None = None  # a symlink's target

    @property
    def is_file(self) -> bool:
        return self.type == "file"

    @property
    def digest(self) -> str | None:
        return self.sha256 if self.sparse_sha256 is None else self.sparse_sha256


@dataclass(frozen=True)
class Manifest:
    tool_version: str
    command: str
    command_line: tuple[str, ...]
    working_directory: str
    host: str
    engine: str | None
    inputs: tuple[str, ...]
    started_ms: int
    ended_ms: int | None
    as_of_ms: int | None
    as_of_source: str | None
    entries: tuple[ManifestEntry, ...]
    version: int = MANIFEST_VERSION

    @property
    def files(self) -> tuple[ManifestEntry, ...]:
        """The regular files."""
        return tuple(e for e in self.entries if e.is_file)

    @property
    def total_bytes(self) -> int:
        return sum(f.size or 0 for f in self.files)


@dataclass(frozen=True)
class Summary:
    """What a manifest's ``summary`` says; :func:`summarize` computes it from the entries."""

    files: int
    directories: int
    other_entries: int
    bytes: int
    not_hashed: int
    changed_during_run: int


def summarize(m: Manifest) -> Summary:
    files = m.files
    return Summary(len(files), sum(1 for e in m.entries if e.type == "dir"),
                   sum(1 for e in m.entries if e.type not in ("file", "dir")), m.total_bytes,
                   sum(1 for f in files if f.error is not None), sum(1 for f in files if f.changed_during_run))


def entry_of(e: EvidenceEntry, d: FileDigest | None) -> ManifestEntry:
    """A manifest entry from a tree entry and, for a regular file, its digest."""
    if d is None:
        return ManifestEntry(e.path, os.path.abspath(e.path), e.kind, e.type, error=e.error, target=e.target)
    return ManifestEntry(e.path, os.path.abspath(e.path), e.kind, e.type, d.size, d.mtime_ns, d.sha256,
                         d.error, d.changed_while_read, d.sparse_sha256)


def digest_entries(entries: Sequence[EvidenceEntry]) -> tuple[ManifestEntry, ...]:
    """Entries with every regular file hashed; a symlink below an input is never followed (only an
    input given as a symlink is), and nothing on a kernel file system is read."""
    files = [e for e in entries if e.type == "file" and e.error is None]
    digests: dict[str, FileDigest] = {}
    for follow in (True, False):
        group = [e.path for e in files if e.given == follow]
        digests.update(zip(group, hash_files(group, follow=follow)))
    return tuple(entry_of(e, digests.get(e.path)) for e in entries)


def record_inputs(manifest: Manifest, entries: Sequence[EvidenceEntry]) -> Manifest:
    """The manifest with ``entries`` recorded and their files hashed (each path once)."""
    known = {e.absolute_path for e in manifest.entries}
    todo = [e for e in entries if os.path.abspath(e.path) not in known]
    merged = manifest.entries + digest_entries(todo)
    return replace(manifest, entries=tuple(sorted(merged, key=lambda e: e.path)))


def _moved(e: ManifestEntry, given: bool) -> bool:
    """Did a recorded file's size or modification time move since it was hashed?"""
    if not e.is_file or e.error is not None:
        return False
    try:
        st = os.stat(e.path) if given else os.lstat(e.path)
    except OSError:
        return True
    return (st.st_size, st.st_mtime_ns) != (e.size, e.mtime_ns)


def close_run(manifest: Manifest, ended_ms: int, as_of_ms: int | None, as_of_source: str | None) -> Manifest:
    """End time and as-of; every file whose size or modification time moved since it was hashed is
    marked ``changed_during_run``."""
    entries = tuple(replace(e, changed_during_run=True) if _moved(e, e.path in manifest.inputs) else e
                    for e in manifest.entries)
    return replace(manifest, ended_ms=ended_ms, as_of_ms=as_of_ms, as_of_source=as_of_source, entries=entries)


# -- the JSON form's two rules, used by the writer (render/manifest_render.py) and the reader --------

DIGEST_KEY = "manifestDigest"


def canonical_digest(document: Mapping[str, Any]) -> str:
    """SHA-256 of the manifest's canonical content: the JSON document without its ``manifestDigest``
    key, written with sorted keys, no whitespace and ASCII only. Any edit of a value changes it; the
    pretty-printed file and the parsed document give the same digest."""
    body = {k: v for k, v in document.items() if k != DIGEST_KEY}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def _name_bytes(name: str) -> bytes:
    try:
        return name.encode("utf-8", "surrogateescape")  # the bytes on disk, as os.fsdecode carried them
    except UnicodeEncodeError:  # a lone surrogate no file name yields
        return name.encode("utf-8", "surrogatepass")


def name_text(name: str) -> str:
    """A file name as JSON text: a byte that is not valid UTF-8 (carried as a lone surrogate by
    ``os.fsdecode``) is written ``\\xNN``. The name's bytes then go beside it (:func:`name_fields`)."""
    return _name_bytes(name).decode("utf-8", "backslashreplace")


def name_fields(key: str, name: str) -> dict[str, str]:
    """``{key: text}``, plus ``{key + "Bytes": base64 of the name's bytes}`` when the name is not
    valid UTF-8: the text is for reading, the bytes are the faithful name."""
    if not any("\ud800" <= c <= "\udfff" for c in name):
        return {key: name}
    return {key: name_text(name), key + "Bytes": base64.b64encode(_name_bytes(name)).decode("ascii")}


def name_from(obj: Mapping[str, Any], key: str) -> str | None:
    """The name a :func:`name_fields` pair holds (its bytes when given), or None when absent."""
    raw = obj.get(key + "Bytes")
    if isinstance(raw, str):
        try:
            return os.fsdecode(base64.b64decode(raw, validate=True))
        except (ValueError, TypeError):
            return None
    value = obj.get(key)
    return value if isinstance(value, str) else None


__all__ = ["DIGEST_KEY", "MANIFEST_VERSION", "Manifest", "ManifestEntry", "ManifestFormatError", "Summary",
           "canonical_digest", "close_run", "digest_entries", "entry_of", "name_fields", "name_from", "name_text",
           "record_inputs", "summarize"]
