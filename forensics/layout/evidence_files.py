"""The whole evidence tree under the inputs: what an evidence manifest records.

Every entry below every input, whatever it is (directories, regular files, symlinks, FIFOs,
sockets, devices), at any depth and whether or not a command decodes it: an examiner proves the
state of the whole tree the tool was pointed at, so that a file added later (a segment, a partition
dir, a file in a log dir) is noticed too. The walk never follows a symlink found below an input
(it is recorded as a symlink with its target text); an input given as a symlink is followed, as
everywhere (the user chose it). Listing and ``lstat`` only: nothing is opened here.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from typing import NamedTuple

from forensics.layout.evidence import on_kernel_fs, under
from forensics.layout.inventory import Inventory

# entry types, by the mode lstat gives
_TYPES = ((stat.S_ISDIR, "dir"), (stat.S_ISREG, "file"), (stat.S_ISLNK, "symlink"), (stat.S_ISFIFO, "fifo"),
          (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "char-device"), (stat.S_ISBLK, "block-device"))


def entry_type(mode: int) -> str:
    for test, name in _TYPES:
        if test(mode):
            return name
    return "other"


class EvidenceEntry(NamedTuple):
    path: str  # as reached from the user's input
    kind: str  # its role: "log dir", "partition dir", "directory", "log-dir file", "partition file",
    # "file given", "other file" (a symlink or special file takes the role of a file where it lies)
    type: str = "file"  # "dir", "file", "symlink", "fifo", "socket", "char-device", "block-device", "other"
    target: str | None = None  # a symlink's target, as stored in the link
    error: str | None = None  # a directory that could not be listed: why
    given: bool = False  # the input itself (followed if it is a symlink)


class Roles(NamedTuple):
    """Real paths of the log dirs and partition dirs discovery found."""

    log_dirs: frozenset
    partitions: frozenset

    def of_dir(self, real: str) -> str:
        return "log dir" if real in self.log_dirs else "partition dir" if real in self.partitions else "directory"

    def of_file_in(self, dir_role: str) -> str:
        return {"log dir": "log-dir file", "partition dir": "partition file"}.get(dir_role, "other file")


NO_ROLES = Roles(frozenset(), frozenset())


def roles_of(inventory: Inventory) -> Roles:
    return Roles(frozenset(os.path.realpath(d.path) for d in inventory.log_dirs),
                 frozenset(os.path.realpath(p.path) for _, p in inventory.all_partitions()))


def distinct_inputs(paths: Sequence[str]) -> list[str]:
    """The inputs in the order given, without those lying inside another one (or equal to an
    earlier one): each real entry is recorded once, under the widest input that reaches it."""
    real = [os.path.realpath(p) for p in paths]
    return [p for i, p in enumerate(paths)
            if not any(j != i and under(real[i], real[j]) and (real[i] != real[j] or j < i) for j in range(len(paths)))]


KERNEL_FS = "on a kernel file system (/proc, /sys, /dev), not evidence: not read"


def _stat(path: str, follow: bool) -> os.stat_result | None:
    try:
        return os.stat(path) if follow else os.lstat(path)
    except OSError:
        return None


def _entry(path: str, st: os.stat_result, role: str, dir_role: str, given: bool = False) -> EvidenceEntry:
    kind = entry_type(st.st_mode)
    error = KERNEL_FS if on_kernel_fs(st) else None
    if kind == "dir":
        return EvidenceEntry(path, role, "dir", error=error, given=given)
    target = None
    if kind == "symlink":
        try:
            target = os.readlink(path)
        except OSError:
            pass
    return EvidenceEntry(path, dir_role, kind, target, error, given)


def _walk_dir(top: str, role: str, roles: Roles, out: list[EvidenceEntry]) -> None:
    stack = [(top, role)]
    while stack:
        path, dir_role = stack.pop()
        try:
            with os.scandir(path) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError as exc:  # this entry replaces the directory's own (see _unique)
            out.append(EvidenceEntry(path, dir_role, "dir", error=f"cannot list: {exc.strerror or exc}"))
            continue
        for child in children:
            st = _stat(child.path, False)
            if st is None:
                continue  # gone since it was listed
            is_dir = stat.S_ISDIR(st.st_mode)
            child_role = roles.of_dir(os.path.realpath(child.path)) if is_dir else ""
            entry = _entry(child.path, st, child_role, roles.of_file_in(dir_role))
            out.append(entry)
            if is_dir and entry.error is None:
                stack.append((child.path, child_role))


def entry_at(path: str, kind: str, given: bool) -> EvidenceEntry | None:
    """The entry at ``path`` as it is now (``given``: an input, followed if a symlink), or None."""
    st = _stat(path, given)
    if st is None:
        return None
    return _entry(path, st, kind, kind, given)


def evidence_tree(inputs: Sequence[str], roles: Roles = NO_ROLES) -> list[EvidenceEntry]:
    """Every entry under ``inputs`` (each input and everything below it), sorted by path; symlinks
    below an input are entries, never followed; nothing on a kernel file system is entered. An
    input that does not exist is left out (the command has already said so)."""
    out: list[EvidenceEntry] = []
    for given in distinct_inputs(list(inputs)):
        st = _stat(given, True)
        if st is None:
            continue
        role = roles.of_dir(os.path.realpath(given)) if stat.S_ISDIR(st.st_mode) else ""
        entry = _entry(given, st, role, "file given", given=True)
        out.append(entry)
        if entry.type == "dir" and entry.error is None:
            _walk_dir(given, role, roles, out)
    return sorted(_unique(out), key=lambda f: f.path)


def _unique(entries: list[EvidenceEntry]) -> list[EvidenceEntry]:
    """Each path once (a directory that could not be listed keeps the entry saying why)."""
    seen: dict[str, EvidenceEntry] = {}
    for e in entries:
        if e.path not in seen or e.error is not None:
            seen[e.path] = e._replace(given=e.given or seen[e.path].given) if e.path in seen else e
    return list(seen.values())


__all__ = ["KERNEL_FS", "NO_ROLES", "EvidenceEntry", "Roles", "distinct_inputs", "entry_at", "entry_type",
           "evidence_tree", "roles_of"]
