"""The evidence manifest as JSON, and verify-manifest's lines. Times become text only here.

File names are written by :func:`forensics.report.manifest.name_fields` (text, plus the name's
bytes in base64 when it is not valid UTF-8), so every manifest is valid UTF-8 JSON; the document
ends with ``manifestDigest``, the SHA-256 of its canonical content (see
:func:`forensics.report.manifest.canonical_digest`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

from forensics.render.counts import count
from forensics.render.machine_format import VERIFY_MANIFEST
from forensics.render.size_text import exact_size
from forensics.render.terminal_text import term
from forensics.render.time_text import iso, iso_ns
from forensics.report.manifest import (
    DIGEST_KEY,
    MANIFEST_VERSION,
    Manifest,
    ManifestEntry,
    canonical_digest,
    name_fields,
    name_text,
    summarize,
)
from forensics.report.manifest_verify import Verification


def _iso_ms(ms: int | None) -> str | None:
    return None if ms is None else iso(ms)


def _iso_ns(ns: int | None) -> str | None:
    return None if ns is None else iso_ns(ns)


def _entry_obj(e: ManifestEntry) -> dict[str, Any]:
    obj: dict[str, Any] = {**name_fields("path", e.path), **name_fields("absolutePath", e.absolute_path),
                           "kind": e.kind, "type": e.type}
    if e.is_file:
        obj.update({"size": e.size, "mtimeNs": e.mtime_ns, "mtime": _iso_ns(e.mtime_ns), "sha256": e.sha256})
    if e.sparse_sha256 is not None:
        obj["sparseSha256"] = e.sparse_sha256
    if e.target is not None:
        obj.update(name_fields("target", e.target))
    if e.error is not None:
        obj["error"] = e.error
    if e.changed_during_run:
        obj["changedDuringRun"] = True
    return obj


def _names(key: str, names: Sequence[str]) -> dict[str, Any]:
    """A list of names, plus ``key + "Bytes"`` (base64 or null per name) when one is not UTF-8."""
    fields = [name_fields(key, n) for n in names]
    out: dict[str, Any] = {key: [f[key] for f in fields]}
    if any(key + "Bytes" in f for f in fields):
        out[key + "Bytes"] = [f.get(key + "Bytes") for f in fields]
    return out


def manifest_document(m: Manifest) -> dict[str, Any]:
    s = summarize(m)
    doc: dict[str, Any] = {
        "manifestVersion": MANIFEST_VERSION,
        "tool": {"name": "kafka-forensics", "version": m.tool_version},
        "run": {
            "command": m.command, "commandLine": [name_text(a) for a in m.command_line],
            **name_fields("workingDirectory", m.working_directory), "host": m.host, "engine": m.engine,
            "startedMs": m.started_ms, "started": _iso_ms(m.started_ms),
            "endedMs": m.ended_ms, "ended": _iso_ms(m.ended_ms),
        },
        "asOf": {"timeMs": m.as_of_ms, "time": _iso_ms(m.as_of_ms), "source": m.as_of_source},
        **_names("inputs", m.inputs),
        "summary": {"files": s.files, "directories": s.directories, "otherEntries": s.other_entries,
                    "bytes": s.bytes, "notHashed": s.not_hashed, "changedDuringRun": s.changed_during_run},
        "entries": [_entry_obj(e) for e in m.entries],
    }
    doc[DIGEST_KEY] = {"algorithm": "sha256", "value": canonical_digest(doc)}
    return doc


def manifest_json(m: Manifest) -> bytes:
    """The manifest file's bytes (UTF-8, keys in a fixed order, newline at the end)."""
    return (json.dumps(manifest_document(m), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def detail_text(r: Verification) -> str:
    """A row's detail, with a changed size as every screen writes sizes (``214.5 KiB (219,614 bytes),
    recorded 214.5 KiB (219,613 bytes)``) and a moved modification time as ISO UTC times to the
    nanosecond (the resolution compared: a move below the millisecond still shows)."""
    parts = [r.detail] if r.detail else []
    if r.sizes is not None:
        now_size, recorded_size = r.sizes
        parts.append(f"size {exact_size(now_size)}, recorded {exact_size(recorded_size)}")
    if r.mtimes is not None:
        now, recorded = r.mtimes
        parts.append(f"modification time {iso_ns(now)} (recorded {iso_ns(recorded)})")
    return "; ".join(parts)


def render_verification(rows: Sequence[Verification], manifest_sha256: str, recorded: int, out: TextIO,
                        fmt: str = "text", verbose: bool = False) -> None:
    """Text: a one-line verdict first (``recorded``: the entries the manifest lists, whatever was
    added since), then only the differences (every entry with ``verbose``)."""
    bad = sum(1 for r in rows if r.status != "ok")
    if fmt == "json":
        entries: list[dict[str, Any]] = [{**name_fields("path", r.path), "status": r.status,
                                          "detail": name_text(detail_text(r))} for r in rows]
        json.dump({**VERIFY_MANIFEST.header(), "manifestSha256": manifest_sha256, "entries": entries, "differences": bad}, out, indent=2)
        out.write("\n")
        return
    verdict = f"DIFFERENT: {bad} difference(s)" if bad else "OK: all match"
    out.write(f"{verdict}; manifest sha256 {manifest_sha256}: {count(recorded, 'entry')} recorded\n")
    shown = [r for r in rows if verbose or r.status != "ok"]
    width = max((len(r.status) for r in shown), default=2)
    for r in shown:
        out.write(f"{r.status.upper():<{width}}  {term(r.path)}  {term(detail_text(r))}\n")


__all__ = ["detail_text", "manifest_document", "manifest_json", "render_verification"]
