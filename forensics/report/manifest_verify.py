"""verify-manifest: a manifest read back and checked against the evidence as it is now.

The manifest itself first: its digest of its own content, and its summary against its entries.
Then the tree: every input is walked again exactly as it was recorded (symlinks below an input are
entries, never followed; nothing on a kernel file system is entered), and each entry is compared:
``ok``, ``changed`` (content, size, modification time, a symlink's target), ``missing`` (removed),
``added`` (not in the manifest), ``renamed`` (a removed file's content under a new path),
``type-changed`` (a file that is now a FIFO is not opened), ``unreadable``, ``not-hashed`` (could
not be read when recorded) and ``outside`` (an entry the manifest lists outside its own inputs: it
is not read, whatever it names). A version 1 manifest lists only files and has no digest: its files
are checked, and nothing can be said of entries it does not list.
"""

from __future__ import annotations

import os
from forensics.dataclass_fast import dataclass
from typing import Any
from collections.abc import Mapping, Sequence

from forensics.io.digest import FileDigest, hash_many
from forensics.layout.evidence_files import EvidenceEntry, distinct_inputs, entry_at, evidence_tree
from forensics.report.manifest import (
    DIGEST_KEY,
    Manifest,
    ManifestEntry,
    ManifestFormatError,
    canonical_digest,
    name_from,
    summarize,
)

ENTRY_TYPES = frozenset({"dir", "file", "symlink", "fifo", "socket", "char-device", "block-device", "other"})
_WORDS = {"dir": "directory", "file": "file", "symlink": "symlink", "fifo": "FIFO", "socket": "socket",
          "char-device": "character device", "block-device": "block device", "other": "special file"}


@dataclass(frozen=True)
class Verification:
    path: str  # where the entry is now (for "manifest": the manifest file)
    status: str  # ok, changed, missing, added, renamed, type-changed, unreadable, not-hashed, outside, manifest
    detail: str  # the differences but a changed size and a moved modification time
    mtimes: tuple[int | None, int | None] | None = None  # a moved modification time: (now, recorded), epoch ns
    sizes: tuple[int | None, int | None] | None = None  # a changed size: (now, recorded), bytes


# -- reading a manifest back ---------------------------------------------------------------------


def _field(obj: Mapping[str, Any], key: str, kind: type, where: str, optional: bool = False) -> Any:
    value = obj.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ManifestFormatError(f"{where}: field {key!r} is missing or not a {kind.__name__}")
    return value


def _name(obj: Mapping[str, Any], key: str, where: str, optional: bool = False) -> str | None:
    value = name_from(obj, key)
    if value is None and not optional:
        raise ManifestFormatError(f"{where}: field {key!r} is missing or not a str")
    return value


def _entry(f: Any, where: str, version: int) -> ManifestEntry:
    if not isinstance(f, dict):
        raise ManifestFormatError(f"{where} is not an object")
    kind = "file" if version == 1 else _field(f, "type", str, where)
    if kind not in ENTRY_TYPES:
        raise ManifestFormatError(f"{where}: field 'type' is not one of {', '.join(sorted(ENTRY_TYPES))}")
    return ManifestEntry(
        _name(f, "path", where) or "", _name(f, "absolutePath", where) or "", _field(f, "kind", str, where), kind,
        _field(f, "size", int, where, True), _field(f, "mtimeNs", int, where, True),
        _field(f, "sha256", str, where, True), _field(f, "error", str, where, True),
        bool(f.get("changedDuringRun", False)), _field(f, "sparseSha256", str, where, True),
        _name(f, "target", where, True))


def _inputs(obj: Mapping[str, Any]) -> tuple[str, ...]:
    names = obj.get("inputs") or []
    raw = obj.get("inputsBytes") or [None] * len(names)
    return tuple(name_from({"i": n, "iBytes": b}, "i") or str(n) for n, b in zip(names, raw))


def parse_manifest(obj: Any, path: str) -> Manifest:
    """A Manifest from the JSON object written by ``manifest_json`` (version 2) or by earlier releases
    (version 1); ManifestFormatError otherwise."""
    version = obj.get("manifestVersion") if isinstance(obj, dict) else None
    key = {1: "files", 2: "entries"}.get(version) if isinstance(version, int) else None
    if not isinstance(version, int) or key is None or not isinstance(obj.get(key), list):
        raise ManifestFormatError("not a kafka-forensics evidence manifest (version 1 or 2)", path=path)
    entries = tuple(_entry(f, f"{path}: {key}[{i}]", version) for i, f in enumerate(obj[key]))
    run, tool, as_of = obj.get("run") or {}, obj.get("tool") or {}, obj.get("asOf") or {}
    return Manifest(
        tool_version=str(tool.get("version", "")), command=str(run.get("command", "")),
        command_line=tuple(str(a) for a in run.get("commandLine", ())),
        working_directory=name_from(run, "workingDirectory") or "", host=str(run.get("host", "")),
        engine=run.get("engine"), inputs=_inputs(obj), started_ms=int(run.get("startedMs", 0)),
        ended_ms=run.get("endedMs"), as_of_ms=as_of.get("timeMs"), as_of_source=as_of.get("source"),
        entries=entries, version=version)


def manifest_checks(obj: Mapping[str, Any], m: Manifest, path: str) -> list[Verification]:
    """The manifest against itself: its own digest, and its summary against its entries (version 2)."""
    if m.version < 2:
        return []
    out = []
    recorded = obj.get(DIGEST_KEY)
    value = recorded.get("value") if isinstance(recorded, dict) else None
    computed = canonical_digest(obj)
    if not isinstance(value, str):
        out.append(Verification(path, "manifest", "carries no digest of its own content"))
    elif value != computed:
        out.append(Verification(path, "manifest", f"its content does not match its own digest (computed "
                                f"{computed}, recorded {value}): it was edited after it was written"))
    summary = obj.get("summary")
    if not isinstance(summary, dict):
        summary = {}
    s = summarize(m)
    for key, actual in (("files", s.files), ("directories", s.directories), ("otherEntries", s.other_entries),
                        ("bytes", s.bytes), ("notHashed", s.not_hashed), ("changedDuringRun", s.changed_during_run)):
        if summary.get(key) != actual:
            out.append(Verification(path, "manifest", f"summary.{key} is {summary.get(key)} but the entries "
                                    f"listed make {actual}"))
    return out


# -- the evidence as it is now -------------------------------------------------------------------


def _input_of(path: str, inputs: Sequence[str]) -> str | None:
    """The (longest) input the recorded ``path`` lies under, as both were written; None: outside."""
    found = [i for i in inputs if path == i or path.startswith(i if i.endswith(os.sep) else i + os.sep)]
    return max(found, key=len) if found else None


def _now(given: str, m: Manifest, base: str | None) -> str:
    """Where an input is now: relative inputs against ``base``, else against the recorded working directory."""
    return given if os.path.isabs(given) else os.path.join(base if base is not None else m.working_directory, given)


Current = dict[str, tuple[str, EvidenceEntry]]  # recorded-style path -> (where it is now, the entry)


def _current_tree(m: Manifest, base: str | None) -> Current:
    roots = [_now(i, m, base) for i in m.inputs]
    keep = set(distinct_inputs(roots))
    out: Current = {}
    for given, root in zip(m.inputs, roots):
        if root in keep:
            for e in evidence_tree([root]):
                out[given + e.path[len(root):]] = (e.path, e)
    return out


def _current_listed(m: Manifest, recorded: Mapping[str, ManifestEntry], base: str | None) -> Current:
    """Version 1: only the entries the manifest lists, looked up where they are now."""
    out: Current = {}
    for key, e in recorded.items():
        given = _input_of(key, m.inputs) or key
        where = _now(given, m, base) + key[len(given):]
        now = entry_at(where, e.kind, key in m.inputs)
        if now is not None:
            out[key] = (where, now)
    return out


def _digests(recorded: Mapping[str, ManifestEntry], current: Current) -> dict[str, FileDigest]:
    """The regular files to hash now: those recorded and still files (in the recorded form), and the
    added ones."""
    todo = []
    for key, (where, e) in current.items():
        if e.type != "file" or e.error is not None:
            continue
        rec = recorded.get(key)
        if rec is None:
            todo.append((key, (where, e.given, "auto")))
        elif rec.is_file and rec.error is None:
            todo.append((key, (where, e.given, "sparse" if rec.sparse_sha256 else "sha256")))
    return dict(zip([k for k, _ in todo], hash_many([r for _, r in todo])))


# -- comparing -----------------------------------------------------------------------------------


def _file_differences(rec: ManifestEntry, d: FileDigest) -> list[str]:
    out = []
    if d.sha256 != rec.sha256:
        out.append(f"sha256 {d.sha256} (recorded {rec.sha256})")
    if d.sparse_sha256 != rec.sparse_sha256:
        out.append(f"sparse digest {d.sparse_sha256} (recorded {rec.sparse_sha256})")
    return out


def _compare_file(rec: ManifestEntry, where: str, d: FileDigest | None) -> Verification:
    if rec.error is not None:
        return Verification(where, "not-hashed", f"was not readable when recorded ({rec.error})")
    if d is None:
        return Verification(where, "unreadable", "not read")
    if d.error is not None:
        return Verification(where, "unreadable", d.error)
    differences = _file_differences(rec, d)
    moved = d.mtime_ns != rec.mtime_ns
    resized = d.size != rec.size
    if differences or moved or resized:
        return Verification(where, "changed", "; ".join(differences), (d.mtime_ns, rec.mtime_ns) if moved else None,
                            (d.size, rec.size) if resized else None)
    note = " (it changed while the recorded run read it)" if rec.changed_during_run else ""
    digest = f"sha256 {d.sha256}" if d.sparse_sha256 is None else f"sparse digest {d.sparse_sha256}"
    return Verification(where, "ok", f"{digest}{note}")


def _compare(rec: ManifestEntry, where: str, now: EvidenceEntry, d: FileDigest | None) -> Verification:
    if rec.type != now.type:
        read = "" if now.type in ("file", "dir", "symlink") else ": not opened"
        return Verification(where, "type-changed", f"was a {_WORDS[rec.type]}, now a {_WORDS[now.type]}{read}")
    if now.error is not None:
        return Verification(where, "unreadable", now.error)
    if rec.is_file:
        return _compare_file(rec, where, d)
    if rec.type == "symlink" and rec.target != now.target:
        return Verification(where, "changed", f"symlink to {now.target} (recorded {rec.target})")
    if rec.error is not None:
        return Verification(where, "not-hashed", f"was not readable when recorded ({rec.error})")
    return Verification(where, "ok", f"symlink to {now.target}" if now.type == "symlink" else _WORDS[now.type])


def _same_content(rec: ManifestEntry, d: FileDigest | None) -> bool:
    if d is None or d.error is not None or rec.error is not None or d.size != rec.size:
        return False
    return (rec.sha256 is not None and rec.sha256 == d.sha256) or (
        rec.sparse_sha256 is not None and rec.sparse_sha256 == d.sparse_sha256)


def _gone_and_new(missing: list[tuple[str, ManifestEntry]], added: list[tuple[str, EvidenceEntry]],
                  digests: Mapping[str, FileDigest], where_of) -> list[Verification]:
    """Missing and added entries; a removed file whose content reappears under a new path is one
    ``renamed`` row (content, not name, decides: the examiner sees where it went)."""
    rows = []
    taken = set()
    for key, rec in missing:
        moved_to = next((k for k, e in added if k not in taken and rec.is_file and e.type == "file"
                         and _same_content(rec, digests.get(k))), None)
        if moved_to is None:
            rows.append(Verification(where_of(key), "missing", f"the recorded {_WORDS[rec.type]} is gone"))
            continue
        taken.add(moved_to)
        algo = "sha256" if rec.sparse_sha256 is None else "sparse digest"
        rows.append(Verification(where_of(moved_to), "renamed", f"was {rec.path} (same {algo} {rec.digest})"))
    for key, now in added:
        if key not in taken:
            d = digests.get(key)
            what = f" (sha256 {d.sha256})" if d is not None and d.sha256 else ""
            rows.append(Verification(where_of(key), "added", f"a {_WORDS[now.type]} the manifest does not "
                                     f"list{what}"))
    return rows


def verify_manifest(m: Manifest, base: str | None = None) -> list[Verification]:
    """Every entry of the manifest compared with the evidence as it is now (relative inputs against
    ``base`` when given, else the recorded working directory), and, for a version 2 manifest, every
    entry now under its inputs that it does not list. Sorted by path."""
    rows, recorded = [], {}
    for e in m.entries:
        if _input_of(e.path, m.inputs) is None:
            rows.append(Verification(e.path, "outside", "not under the manifest's inputs: not read"))
        else:
            recorded[e.path] = e
    current = _current_tree(m, base) if m.version >= 2 else _current_listed(m, recorded, base)
    digests = _digests(recorded, current)

    def where_of(key: str) -> str:
        if key in current:
            return current[key][0]
        given = _input_of(key, m.inputs) or key
        return _now(given, m, base) + key[len(given):]

    missing = [(k, e) for k, e in recorded.items() if k not in current]
    added = [(k, e) for k, (_, e) in current.items() if k not in recorded]
    rows += [_compare(e, current[k][0], current[k][1], digests.get(k)) for k, e in recorded.items() if k in current]
    rows += _gone_and_new(sorted(missing, key=lambda t: t[0]), sorted(added, key=lambda t: t[0]), digests, where_of)
    return sorted(rows, key=lambda r: (r.path, r.status))


__all__ = ["Verification", "manifest_checks", "parse_manifest", "verify_manifest"]
