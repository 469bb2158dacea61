"""A mutation sweep over real broker disks: damage one file at a time, re-run the verdicts, and
count what the damage did to them.

The real disks (``fixtures/real/<run>/disk``) hold nothing hanging: every open transaction is
ongoing and every other one completed. So any abort armed on a damaged copy would discard data
that was never hanging (an armed abort is harmful by construction); and an open transaction whose
partition still shows it open somewhere (its producer snapshot) must stay a row.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from forensics.render.reasons import reason_text
from forensics.report.hanging import find_hanging, is_armed
from forensics.runs.rebuild import load_state
from tests.analysis.evidence_sweep import Memo

Mutation = tuple[str, str, Callable[[Path], None]]  # (file, description, apply)
SKIP_TOPICS = ("__consumer_offsets", "c-")  # no transaction lives there


def copy_disk(src: Path, dst: Path) -> Path:
    """The disk without the partitions no transaction touches (keeps the sweep fast)."""
    shutil.copytree(src, dst, ignore=lambda d, names: [n for n in names if n.startswith(SKIP_TOPICS)])
    return dst


def _batch_ends(data: bytes) -> list[int]:
    """Byte offsets where each v2/legacy entry ends (offset 8 + size 4 + size bytes)."""
    ends, pos = [], 0
    while pos + 12 <= len(data):
        size = int.from_bytes(data[pos + 8:pos + 12], "big")
        if size <= 0 or pos + 12 + size > len(data):
            break
        pos += 12 + size
        ends.append(pos)
    return ends


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def mutations(root: Path, last: int = 3) -> Iterator[Mutation]:
    """Per non-empty ``.log``: zero fill, and for the last ``last`` entries a cut before it, a cut
    inside it and a flipped byte at its end; removal of the file; per snapshot: removal."""
    for log in sorted(root.rglob("*.log")):
        data = log.read_bytes()
        if not data:
            continue
        rel = str(log.relative_to(root))
        yield rel, "zero fill", lambda p, n=len(data): _write(p, bytes(n))
        yield rel, "removed", lambda p: p.unlink()
        ends = _batch_ends(data)
        starts = [0] + ends[:-1]
        for start, end in list(zip(starts, ends))[-last:]:
            yield rel, f"cut at byte {start}", lambda p, s=start, d=data: _write(p, d[:s])
            yield rel, f"cut at byte {(start + end) // 2}", lambda p, s=(start + end) // 2, d=data: _write(p, d[:s])
            flipped = bytearray(data)
            flipped[end - 1] ^= 0xFF
            yield rel, f"byte {end - 1} flipped", lambda p, b=bytes(flipped): _write(p, b)
    for snap in sorted(root.rglob("*.snapshot")):
        yield str(snap.relative_to(root)), "removed", lambda p: p.unlink()


@dataclass
class SweepResult:
    runs: int = 0
    armed: list[str] = field(default_factory=list)  # mutation: row, for every abort armed on a damaged copy
    vanished: list[str] = field(default_factory=list)  # an open transaction the snapshot still shows, no row
    unverifiable: int = 0  # runs in which a damaged verdict was reported as unverifiable


def _open_in_snapshots(report) -> set[tuple[str, int]]:
    """Partitions whose producer snapshots (even unusable ones) show an open transaction."""
    out = set()
    for v in report.partitions:
        for snap in v.inputs.snapshots:
            entries = snap.snapshot.entries if snap.snapshot is not None else ()
            if any(e.current_txn_first_offset is not None and e.current_txn_first_offset >= 0 for e in entries):
                out.add((v.topic_partition.topic, v.topic_partition.partition))
    return out


def _verdicts(root: Path, as_of: int):
    report = load_state([str(root)])
    verdicts, _ = find_hanging(report, as_of=as_of)
    return report, verdicts


def sweep(root: Path, as_of: int, only: Callable[[str], bool] = lambda rel: True, memo: bool = True,
          runs: list | None = None) -> SweepResult:
    """Apply every mutation of :func:`mutations` (of the files ``only`` keeps) to ``root`` one at a
    time, each undone after. ``memo``: what a run reads of the files the mutation left unchanged (the
    partition dirs, work units and producer and coordinator folds of every other file) is made once for
    the sweep and shared by its runs (``evidence_sweep.Memo``: pure functions of those bytes, keyed by
    them; False: everything made again on every run); ``runs``: each mutation's name, armed verdicts and
    rows appended to it (test_damage_sweep.py compares them both ways)."""
    result = SweepResult()
    memoized = Memo() if memo else None
    with memoized.used() if memoized else contextlib.nullcontext():
        for rel, what, apply in mutations(root):
            if only(rel):
                _one(root, as_of, rel, what, apply, result, memoized, runs)
    return result


def _one(root: Path, as_of: int, rel: str, what: str, apply, result: SweepResult, memo: Memo | None,
         runs: list | None) -> None:
    path = root / rel
    saved = path.read_bytes()
    apply(path)
    try:
        if memo is not None:
            memo.new_run()
        report, verdicts = _verdicts(root, as_of)
    finally:
        _write(path, saved)
    result.runs += 1
    name = f"{rel}: {what}"
    for v in verdicts:
        if is_armed(v):
            result.armed.append(f"{name}: {v.view.topic_partition} producer {v.entry.producer_id} "
                                f"from {v.start_offset}: {reason_text(v.reason)}")
    result.unverifiable += any(v.gaps for v in verdicts)
    shown = {(v.view.topic_partition.topic, v.view.topic_partition.partition) for v in verdicts}
    for tp in sorted(_open_in_snapshots(report) - shown):
        result.vanished.append(f"{name}: {tp[0]}-{tp[1]}")
    if runs is not None:
        runs.append((name, [(str(v.view.topic_partition), v.entry.producer_id, v.start_offset, is_armed(v),
                             reason_text(v.reason), bool(v.gaps)) for v in verdicts], sorted(shown)))


__all__ = ["copy_disk", "mutations", "sweep", "SweepResult"]
