"""The evidence manifest as JSON, and verify-manifest's lines. Times become text only here."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Dict, Optional, Sequence, TextIO

from forensics.render.terminal_text import term
from forensics.report.manifest import (
    MANIFEST_VERSION,
    Manifest,
    ManifestFile,
    Verification,
)


def _iso_ms(ms: Optional[int]) -> Optional[str]:
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds")


def _iso_ns(ns: Optional[int]) -> Optional[str]:
    if ns is None:
        return None
    return datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc).isoformat() \
        .replace("+00:00", f".{ns % 1_000_000_000:09d}+00:00")


def _file_obj(f: ManifestFile) -> Dict[str, Any]:
    obj: Dict[str, Any] = {"path": f.path, "absolutePath": f.absolute_path, "kind": f.kind, "size": f.size,
                           "mtimeNs": f.mtime_ns, "mtime": _iso_ns(f.mtime_ns), "sha256": f.sha256}
    if f.sparse_sha256 is not None:
        obj["sparseSha256"] = f.sparse_sha256
    if f.error is not None:
        obj["error"] = f.error
    if f.changed_during_run:
        obj["changedDuringRun"] = True
    return obj


def manifest_json(m: Manifest) -> bytes:
    """The manifest file's bytes (UTF-8, keys in a fixed order, newline at the end)."""
    obj = {
        "manifestVersion": MANIFEST_VERSION,
        "tool": {"name": "kafka-forensics", "version": m.tool_version},
        "run": {
            "command": m.command, "commandLine": list(m.command_line), "workingDirectory": m.working_directory,
            "host": m.host, "engine": m.engine,
            "startedMs": m.started_ms, "started": _iso_ms(m.started_ms),
            "endedMs": m.ended_ms, "ended": _iso_ms(m.ended_ms),
        },
        "asOf": {"timeMs": m.as_of_ms, "time": _iso_ms(m.as_of_ms), "source": m.as_of_source},
        "inputs": list(m.inputs),
        "summary": {"files": len(m.files), "bytes": m.total_bytes,
                    "notHashed": sum(1 for f in m.files if f.error is not None),
                    "changedDuringRun": sum(1 for f in m.files if f.changed_during_run)},
        "files": [_file_obj(f) for f in m.files],
    }
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def render_verification(rows: Sequence[Verification], manifest_sha256: str, out: TextIO, fmt: str = "text") -> None:
    if fmt == "json":
        json.dump({"manifestSha256": manifest_sha256,
                   "files": [{"path": r.path, "status": r.status, "detail": r.detail} for r in rows],
                   "differences": sum(1 for r in rows if r.status != "ok")}, out, indent=2)
        out.write("\n")
        return
    width = max((len(r.status) for r in rows), default=2)
    for r in rows:
        out.write(f"{r.status.upper():<{width}}  {term(r.path)}  {term(r.detail)}\n")
    bad = sum(1 for r in rows if r.status != "ok")
    out.write(f"manifest sha256 {manifest_sha256}: {len(rows)} file(s), "
              + (f"{bad} difference(s)\n" if bad else "all match\n"))


__all__ = ["manifest_json", "render_verification"]
