"""Every file an inventory covers: what an evidence manifest hashes.

The set is deliberately wider than the files a command decodes: every regular file in every log
dir and partition dir that discovery found (checkpoints, ``meta.properties``, lock files, unknown
files included) and every file given directly. An examiner proves the state of the whole evidence
tree the tool looked into, not only the parts one command happened to need. Listing only: nothing
is opened here.
"""

from __future__ import annotations

import os
from typing import Dict, Iterable, List, NamedTuple, Sequence

from forensics.layout.evidence import list_dir, outside_evidence
from forensics.layout.records import Inventory


class EvidenceFile(NamedTuple):
    path: str  # as built from the user's input
    kind: str  # "log-dir file", "partition file", "file given"


def _dir_files(path: str, kind: str, roots: Sequence[str]) -> Iterable[EvidenceFile]:
    entries, _errors = list_dir(path)  # listing problems were already findings of discovery
    for e in entries or ():
        if e.kind == "file" and outside_evidence(e, roots) is None:  # a link out of the evidence is not hashed
            yield EvidenceFile(e.path, kind)


def evidence_files(inventory: Inventory, roots: Sequence[str]) -> List[EvidenceFile]:
    """Regular files of the inventory's log dirs and partition dirs, and its loose files; each real
    file once (a symlinked copy of the same file is listed under the first path that reached it)."""
    seen: Dict[str, EvidenceFile] = {}

    def add(files: Iterable[EvidenceFile]) -> None:
        for f in files:
            seen.setdefault(os.path.realpath(f.path), f)

    for log_dir in inventory.log_dirs:
        add(_dir_files(log_dir.path, "log-dir file", roots))
        for p in log_dir.partitions:
            add(_dir_files(p.path, "partition file", roots))
    for p in inventory.partitions:
        add(_dir_files(p.path, "partition file", roots))
    add(EvidenceFile(f.path, "file given") for f in inventory.loose_files)
    return sorted(seen.values(), key=lambda f: f.path)


def given_files(paths: Sequence[str]) -> List[EvidenceFile]:
    """Files named directly (``dump``), in the order given, each real file once."""
    out: Dict[str, EvidenceFile] = {}
    for p in paths:
        out.setdefault(os.path.realpath(p), EvidenceFile(p, "file given"))
    return list(out.values())


__all__ = ["EvidenceFile", "evidence_files", "given_files"]
