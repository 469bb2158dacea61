"""Read-only access to evidence: directory listings, ``stat`` and small text files.

Nothing here creates, modifies, locks or renames anything. Small files are read through the one
read-only opener (:func:`forensics.io.files.read_small_file`: ``O_RDONLY | O_NONBLOCK``, regular
files only by ``fstat`` of the opened descriptor, so a FIFO named like a checkpoint cannot block
us). Every OS error becomes a finding, never a traceback.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from forensics.errors import InputError, UsageError
from forensics.findings import Finding, FindingKind
from forensics.io.files import describe_mode
from forensics.layout.names import BOOTSTRAP_CHECKPOINT, OFFSET_CHECKPOINT_NAMES

if TYPE_CHECKING:  # pragma: no cover
    from forensics.layout.inventory import Inventory

MAX_TEXT_BYTES = 64 * 1024 * 1024  # text checkpoints of ~1M partitions stay well below this



class DirEntry(NamedTuple):
    name: str
    path: str
    kind: str  # "file", "dir" or "other" (FIFO, socket, device)
    size: int
    is_symlink: bool
    what: str = ""  # for "other": what it is, in words ("a FIFO (named pipe)")


def unreadable(path: str, err: OSError, what: str = "cannot read") -> Finding:
    reason = err.strerror or type(err).__name__
    return Finding(FindingKind.UNREADABLE_FILE, f"{what}: {reason}", path=path)


def list_dir(path: str) -> tuple[list[DirEntry] | None, list[Finding]]:
    """Entries of ``path`` sorted by name (symlinks followed for the type), or ``None`` and
    an UNREADABLE_FILE finding when the directory cannot be listed."""
    findings: list[Finding] = []
    try:
        with os.scandir(path) as it:
            raw = sorted(it, key=lambda e: e.name)
    except OSError as err:
        return None, [unreadable(path, err, "cannot list directory")]
    entries: list[DirEntry] = []
    for e in raw:
        try:
            is_link = e.is_symlink()
            st = os.stat(e.path)  # follows symlinks
        except OSError as err:
            message = {errno.ENOENT: "dangling symlink",
                       errno.ELOOP: "symlink loop or chain too deep, not followed"}.get(err.errno or 0, "cannot stat")
            findings.append(unreadable(e.path, err, message))
            continue
        if stat.S_ISDIR(st.st_mode):
            entries.append(DirEntry(e.name, e.path, "dir", st.st_size, is_link))
        elif stat.S_ISREG(st.st_mode):
            entries.append(DirEntry(e.name, e.path, "file", st.st_size, is_link))
        else:
            entries.append(DirEntry(e.name, e.path, "other", st.st_size, is_link, describe_mode(st.st_mode)))
    return entries, findings


def under(real: str, top: str) -> bool:
    """Is the resolved path ``real`` the resolved path ``top`` or below it?"""
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def is_within(path: str, root: str) -> bool:
    """Is ``path`` ``root`` or below it, both resolved (symlinks followed)?"""
    return under(os.path.realpath(path), os.path.realpath(root))


# names whose presence makes a directory a broker log dir (LogManager writes them at its root)
LOG_DIR_MARKERS = ("meta.properties", ".kafka_cleanshutdown", BOOTSTRAP_CHECKPOINT, *OFFSET_CHECKPOINT_NAMES)


def is_log_dir(path: str) -> bool:
    """Does ``path`` hold one of the files a broker writes at a log dir's root? (Existence only.)"""
    return any(os.path.lexists(os.path.join(path, name)) for name in LOG_DIR_MARKERS)


def evidence_zones(given: str) -> list[tuple[str, str]]:
    """Where nothing of ours may be written because of the input ``given``: ``(real path, why)``.
    The input itself; for a file, the directory holding it; and the broker log dir at or just above
    that directory (or above a directory given), so that an output beside a segment or a partition dir
    given alone lands neither in its partition dir nor among its sibling partitions."""
    if not os.path.lexists(given):
        return []
    real = os.path.realpath(given)
    zones = [(real, given)]
    start = real if os.path.isdir(real) else os.path.dirname(real)
    if start != real:
        zones.append((start, f"the directory holding {given}"))
    for up in (start, os.path.dirname(start)):
        if up != os.path.dirname(up) and is_log_dir(up) and all(up != z for z, _ in zones):
            zones.append((up, f"the log dir holding {given}"))
    return zones


def check_outside_evidence(target: str, inputs: Sequence[str], option: str = "--manifest") -> None:
    """Refuse (exit 2) an output path anywhere in the evidence: inside or equal to an input, beside a
    file given, or under the broker log dir holding an input (:func:`evidence_zones`). The one rule for
    every output path (--manifest, report --out, export --out)."""
    real = os.path.realpath(target)
    for given in inputs:
        for zone, why in evidence_zones(given):
            if under(real, zone):
                where = given if why == given else f"{zone}, {why}"
                raise UsageError(f"{option} {target}: lies inside the evidence ({where}); write it elsewhere")


def require_parent_dir(target: str, option: str) -> None:
    """Refuse (exit 3) an output path whose directory does not exist."""
    parent = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(parent):
        raise InputError(f"{option} {target}: directory {parent} does not exist")


def check_output_path(target: str, inputs: Sequence[str], option: str) -> None:
    """An output file may be written at ``target``: outside the evidence, in a directory that exists."""
    check_outside_evidence(target, inputs, option)
    require_parent_dir(target, option)


def outside_evidence(e: DirEntry, roots: Sequence[str]) -> Finding | None:
    """The finding for a symlink found inside the evidence whose target leaves every input root
    (``roots``: the inputs as given; a symlink given as an input is followed: the user chose it).
    Such a link is never followed, for the analysis and the manifest alike: a partition dir linked
    to /proc or /etc would make us read the host's files. None for anything else."""
    if not e.is_symlink or any(is_within(e.path, root) for root in roots):
        return None
    try:
        target = os.readlink(e.path)
    except OSError:
        target = "?"
    return Finding(FindingKind.OUTSIDE_EVIDENCE, f"symbolic link to {target}, outside the evidence given: not "
                   "followed", path=e.path)


# file systems through which the kernel shows the host itself (processes, devices, settings): never
# evidence. /proc/kmsg, a regular file by its mode, blocks and consumes the kernel log when read.
KERNEL_FS_TYPES = frozenset({"proc", "sysfs", "devtmpfs", "devpts", "debugfs", "tracefs", "securityfs", "cgroup",
                             "cgroup2", "configfs", "efivarfs", "bpf", "pstore", "fusectl", "mqueue", "binfmt_misc",
                             "autofs", "rpc_pipefs", "nsfs", "selinuxfs"})


@functools.cache
def kernel_fs_devices() -> frozenset:
    """Device numbers (``st_dev``) of the mounted kernel file systems, from /proc/self/mountinfo
    (read once); empty where that file does not exist."""
    devices = {-1}
    try:
        with open("/proc/self/mountinfo", "rb") as fh:
            for line in fh:
                fields = line.split()
                if b"-" in fields and len(fields) > fields.index(b"-") + 1:
                    fstype = fields[fields.index(b"-") + 1].decode("ascii", "replace")
                    major, _, minor = fields[2].partition(b":")
                    if fstype in KERNEL_FS_TYPES and major.isdigit() and minor.isdigit():
                        devices.add(os.makedev(int(major), int(minor)))
    except OSError:
        pass
    return frozenset(devices)


def on_kernel_fs(st: os.stat_result) -> bool:
    """Does this file live on a kernel file system (/proc, /sys, /dev, ...)?"""
    return st.st_dev in kernel_fs_devices()


def is_readable(path: str) -> bool:
    """Permission check without opening the file (layout never opens segment files)."""
    return os.access(path, os.R_OK)


# files a broker rewrites while it runs (every flush / checkpoint interval) and at a clean stop:
# their modification times tell when the broker last ran, if the copy preserved them
BROKER_TIME_FILES = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                     "log-start-offset-checkpoint", "cleaner-offset-checkpoint", ".kafka_cleanshutdown")


def broker_file_times(log_dir: str) -> list[tuple[int, str]]:
    """(mtime in epoch ms, path) of the broker-written files of a log dir that exist."""
    return modification_times(os.path.join(log_dir, name) for name in BROKER_TIME_FILES)


def modification_times(paths: Iterable[str]) -> list[tuple[int, str]]:
    """(mtime in epoch ms, path) of those of ``paths`` that are regular files."""
    out = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            out.append((st.st_mtime_ns // 1_000_000, path))
    return out


def input_file_times(inventory: Inventory) -> list[tuple[int, str]]:
    """The file times the incident clock compares its record time with (see analysis/clock.py): the
    broker-written files of every log dir (its segments when it has none of them), the segments of
    partition dirs given outside one, and single files given."""
    out: list[tuple[int, str]] = []
    for d in inventory.log_dirs:
        out += broker_file_times(d.path) or modification_times(s.log for p in d.partitions for s in p.segments
                                                               if s.log)
    out += modification_times(s.log for p in inventory.partitions for s in p.segments if s.log)
    return out + modification_times(f.path for f in inventory.loose_files)


def changed_segments(inventory: Inventory) -> list[tuple[str, int | None, int | None]]:
    """(path, size when listed, size now: None when gone) of every segment whose size changed since the
    inventory was made: a broker writing, rolling or deleting it while we read (``stat`` only)."""
    out = []
    for _, p in inventory.all_partitions():
        for s in p.segments:
            if s.log is None:
                continue
            try:
                now: int | None = os.stat(s.log).st_size
            except OSError:
                now = None
            if now != s.log_size:
                out.append((s.log, s.log_size, now))
    return out
