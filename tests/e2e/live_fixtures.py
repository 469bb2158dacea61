"""The committed real-broker fixtures under ``fixtures/live/``: how they are cut from the generated evidence
(:func:`export`) and how a test gets the broker's bytes and file times back (:func:`materialise`).

A copy of a running broker holds preallocated index files: the active segment's ``.index`` / ``.timeindex``
(16 KiB here, 10 MiB for ``__cluster_metadata``, whose index size no setting changes) are mostly zeros.
:func:`export` stores each file without its trailing zero bytes and records, per file, its real size,
mtime (ns) and SHA-256 in ``fixtures/live/truth/<name>.json`` (``files``); git keeps neither sizes of
zero tails nor times. :func:`materialise` copies a fixture into a tmp dir, extends each file back to
its size with zeros (byte-identical: only zeros were cut), restores every mtime (dirs too) and checks
every SHA-256. Always analyse the materialised copy, never ``fixtures/live/<name>`` itself: there the
preallocated indexes look trimmed (as after a clean shutdown) and every file has the checkout's time.

As a script: ``python -m tests.e2e.live_fixtures EVIDENCE_ROOT`` cuts the fixtures listed in
:data:`PICKS` from the generated evidence (``/work/scratch/live-evidence``) into ``fixtures/live/``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIVE = REPO / "fixtures" / "live"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def zero_tail_start(data: bytes) -> int:
    return len(data.rstrip(b"\0"))


def export(src: Path, name: str, truth: dict, dest: Path = LIVE) -> dict[str, dict]:
    """Copy the disk ``src`` to ``dest/name`` without zero tails; write ``dest/truth/name.json`` (``truth`` +
    ``files``). Returns ``files``."""
    target = dest / name
    if target.exists():
        shutil.rmtree(target)
    files: dict[str, dict] = {}
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src).as_posix()
        st = path.lstat()
        if path.is_dir():
            (target / rel).mkdir(parents=True, exist_ok=True)
            files[rel] = {"dir": True, "mtime_ns": st.st_mtime_ns}
            continue
        data = path.read_bytes()
        keep = zero_tail_start(data) if path.suffix in (".index", ".timeindex") else len(data)
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_bytes(data[:keep])
        files[rel] = {"size": len(data), "stored": keep, "mtime_ns": st.st_mtime_ns,
                      "sha256": hashlib.sha256(data).hexdigest()}
    (dest / "truth").mkdir(parents=True, exist_ok=True)
    (dest / "truth" / f"{name}.json").write_text(json.dumps(dict(truth, files=files), indent=1, sort_keys=True) + "\n")
    return files


def truth_of(name: str, dest: Path = LIVE) -> dict:
    return json.loads((dest / "truth" / f"{name}.json").read_text())


def materialise(name: str, tmp: Path, dest: Path = LIVE, leave_out: list[str] | None = None) -> Path:
    """``tmp/name``: the fixture as the broker's disk had it (sizes, bytes, mtimes), minus the top-level entries
    ``leave_out`` (e.g. one JBOD log dir)."""
    files = truth_of(name, dest)["files"]
    out = tmp / name
    shutil.copytree(dest / name, out)
    for top in leave_out or []:
        shutil.rmtree(out / top)
    kept = {rel: f for rel, f in files.items() if rel.split("/")[0] not in set(leave_out or [])}
    for rel, f in kept.items():
        path = out / rel
        if not f.get("dir"):
            if path.stat().st_size != f["stored"]:
                raise AssertionError(f"{path}: {path.stat().st_size} bytes, the fixture's truth says {f['stored']}")
            os.truncate(path, f["size"])
            if sha256(path) != f["sha256"]:
                raise AssertionError(f"{path}: SHA-256 differs from the broker's file")
    for rel in sorted(kept, key=lambda r: -r.count("/")):  # files first, then their dirs
        ns = kept[rel]["mtime_ns"]
        os.utime(out / rel, ns=(ns, ns))
    return out


def recent_transactions(scene: dict, copy_dir: Path, end_ms: int) -> list[dict]:
    """The transactions begun by ``end_ms`` (the copy's end) whose data may still be in ``copy_dir`` (any last
    offset at or above the partition's lowest segment base offset there, or no data acknowledged)."""
    low: dict[int, int] = {}
    for part in copy_dir.glob(f"{scene['topic']}-*"):
        bases = [int(p.stem) for p in part.glob("*.log")]
        low[int(part.name.rsplit("-", 1)[1])] = min(bases) if bases else 0
    return [t for t in scene["transactions"] if t["begin_ms"] <= end_ms and (
        not t["offsets"] or any(r[1] >= low.get(int(p), 0) for p, r in t["offsets"].items()))]


def export_live_copy(root: Path, run: str, copy: str, name: str) -> None:
    scene = json.loads((root / run / "truth.json").read_text())
    row = json.loads((root / run / "copies" / f"{copy}.json").read_text())
    src = root / run / "copies" / copy
    keep = ("scene", "release", "topic", "partitions", "txn_state_partitions", "broker_settings", "topic_settings",
            "producers", "grace_ms", "ms_per_commit")
    truth = {k: scene[k] for k in keep}
    truth.update(source=f"{run}/copies/{copy}", copy={k: v for k, v in row.items() if k != "file_times"},
                 transactions=recent_transactions(scene, src, row["end_ms"]))
    export(src, name, truth)


def export_incident(root: Path, run: str, scene_name: str, name: str) -> None:
    scene = json.loads((root / run / scene_name / "truth.json").read_text())
    truth = {k: v for k, v in scene.items() if k != "file_times"}
    truth["source"] = f"{run}/{scene_name}/copy"
    export(root / run / scene_name / "copy", name, truth)


# (fixture name, generated run, copy): the copies whose cut caught a transaction in flight, and the control
PICKS_LIVE = [
    ("live-tv0-cp-r-complete-commit", "live-tv0", "copy-11"),
    ("live-tv2-cp-r-prepare-commit", "live-tv2", "copy-09"),
    ("live-tv2-slow-complete-commit", "live-tv2", "copy-13"),
    ("live-tv2-final-clean-stop", "live-tv2", "final"),
]
PICKS_INCIDENTS = [("jbod", "incidents-tv0", "jbod"), ("delete-records", "incidents-tv0", "delete-records"),
                   ("restart", "incidents-tv0", "restart")]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0] if argv else "/work/scratch/live-evidence")
    for name, run, copy in PICKS_LIVE:
        export_live_copy(root, run, copy, name)
    for name, run, scene in PICKS_INCIDENTS:
        export_incident(root, run, scene, name)
    for name in [p[0] for p in PICKS_LIVE + PICKS_INCIDENTS]:
        size = sum(p.stat().st_size for p in (LIVE / name).rglob("*") if p.is_file())
        print(f"{name}: {size} bytes stored, truth {(LIVE / 'truth' / (name + '.json')).stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
