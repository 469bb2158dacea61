"""Find broker log directories, partition directories and loose Kafka files on disk.

``discover(paths)`` accepts, in any mix:

* a broker log dir (``meta.properties``, checkpoint files and/or partition dirs);
* a folder holding several brokers' log dirs (searched ``max_depth`` levels deep);
* a single partition dir (goes to :attr:`Inventory.partitions`);
* single files: segments, indexes, snapshots, checkpoints (:attr:`Inventory.loose_files`).

Evidence is only listed, ``stat``-ed and, for small text files (checkpoints,
``meta.properties``, ``partition.metadata``, ``quorum-state``, ``.kafka_cleanshutdown``),
read through a read-only descriptor. Segment, index and snapshot files are never opened.
Symlinks given as inputs are followed (the user chose them); symlinks found below the inputs are
followed only while their target stays inside the inputs (else an ``outside_evidence`` finding),
and each real directory is entered once, so symlink cycles end.
Damage becomes findings (UNREADABLE_FILE, CORRUPT_CHECKPOINT, UNKNOWN_FILE, ...); only
unusable *inputs* (a path that does not exist, a broken or looping symlink, a file of no Kafka
kind, inputs with no Kafka content at all) raise :class:`~forensics.errors.InputError`. Partition
dirs are read in :mod:`forensics.layout.partition_dir`, the cross-checks (duplicate broker ids,
truncated topic names) live in :mod:`forensics.layout.checks`.

The effective segment set per partition follows ``LogLoader``; see
:mod:`forensics.layout.segments` for the rule used for ``.swap`` files.
"""

from __future__ import annotations

import dataclasses
import errno
import os
from types import MappingProxyType
from collections.abc import Mapping, Sequence

from forensics.codec import broker_files as bf
from forensics.codec import checkpoints as cp
from forensics.errors import InputError
from forensics.findings import Finding, FindingKind
from forensics.io.files import lock_holder
from forensics.layout.checks import (
    duplicate_brokers,
    require_kafka_content,
    resolve_truncated_topics,
    with_topic,
)
from forensics.layout.evidence import DirEntry, is_readable, list_dir, outside_evidence, unreadable
from forensics.layout.names import (
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    PARTITION_FILE_KINDS,
    RECOVERY_POINT_CHECKPOINT,
    REMOTE_LOG_INDEX_CACHE_DIR,
    REPLICATION_OFFSET_CHECKPOINT,
    ROOT_FILE_KINDS,
    FileKind,
    classify_file_name,
    classify_loose_file,
    parse_partition_dir_name,
)
from forensics.layout.partition_dir import note as _note
from forensics.layout.partition_dir import read_text_file, scan_partition_dir, special_file
from forensics.layout.inventory import Inventory, LogDir, LooseFile, PartitionDir
from forensics.layout.segments import SwapNextOffset
from forensics.model import TopicPartition

DEFAULT_MAX_DEPTH = 3

# --------------------------------------------------------------------------- log dirs


def _holds_kind(entries: Sequence[DirEntry], kinds) -> bool:
    """Whether a regular file among ``entries`` is named like a Kafka file of one of ``kinds``."""
    for e in entries:
        parsed = classify_file_name(e.name) if e.kind == "file" else None
        if parsed is not None and parsed.kind in kinds:
            return True
    return False


def _is_partition_like(entries: Sequence[DirEntry]) -> bool:
    return _holds_kind(entries, PARTITION_FILE_KINDS)


def _has_root_marker(entries: Sequence[DirEntry]) -> bool:
    return _holds_kind(entries, ROOT_FILE_KINDS)


class _Walker:
    def __init__(self, max_depth: int, swap_next_offset: SwapNextOffset | None, roots: Sequence[str]) -> None:
        self.max_depth = max_depth
        self.roots = roots  # the inputs: a symlink found below them that leaves them is not followed
        self.swap_next_offset = swap_next_offset
        self.visited: set[str] = set()
        self.listings: dict[str, tuple[list[DirEntry] | None, list[Finding]]] = {}
        self.findings: list[Finding] = []
        self.log_dirs: list[LogDir] = []
        self.partitions: dict[str, PartitionDir] = {}  # loose partition dirs by real path
        self.loose: list[LooseFile] = []

    # -- listing with memo, so deciding "is this a log dir?" costs no second listing
    def listing(self, path: str, findings: list[Finding]) -> list[DirEntry] | None:
        """Entries of ``path``; listing problems are appended to ``findings``."""
        real = os.path.realpath(path)
        if real not in self.listings:
            entries, errors = list_dir(path)
            if entries is not None:
                kept = []
                for e in entries:
                    outside = outside_evidence(e, self.roots)
                    if outside is None:
                        kept.append(e)
                    else:
                        errors.append(outside)
                entries = kept
            self.listings[real] = (entries, errors)
        entries, errors = self.listings[real]
        findings.extend(errors)
        return entries

    def enter(self, path: str, findings: list[Finding]) -> bool:
        """Mark a real directory visited; False (and a finding) if it already was."""
        real = os.path.realpath(path)
        if real in self.visited:
            findings.append(
                _note(
                    FindingKind.UNKNOWN_FILE,
                    f"already visited as {real} (symlink cycle or repeated input); not followed",
                    path,
                )
            )
            return False
        self.visited.add(real)
        return True

    def add_path(self, given: str) -> None:
        if not os.path.lexists(given):
            raise InputError("no such file or directory", path=given)
        if os.path.isdir(given):
            if not self.walk(given, 0):
                self.findings.append(
                    _note(
                        FindingKind.NOT_KAFKA,
                        f"no Kafka log directory, partition directory or file found within {self.max_depth} levels",
                        given,
                    )
                )
        elif os.path.isfile(given):
            self.add_loose_file(given)
        elif not os.path.exists(given):
            raise InputError(_broken_link(given), path=given)
        else:
            raise InputError("not a regular file or directory", path=given)

    def add_loose_file(self, path: str) -> None:
        parsed = classify_loose_file(os.path.basename(path))
        if parsed is None:
            raise InputError("not a directory and not a Kafka segment, index, snapshot or checkpoint file", path=path)
        if parsed.kind is FileKind.META_PROPERTIES:  # it says what its log dir is, and holds nothing to read alone
            raise InputError("meta.properties describes a log dir and holds no records: give its log dir "
                             f"({os.path.dirname(path) or '.'})", path=path)
        try:
            size = os.stat(path).st_size
        except OSError as e:
            self.findings.append(unreadable(path, e, "cannot stat"))
            return
        if not is_readable(path):
            self.findings.append(_note(FindingKind.UNREADABLE_FILE, "no read permission", path))
        temp = parsed.temp.value if parsed.temp is not None else None
        self.loose.append(LooseFile(path, parsed.kind, parsed.offset, temp, size))

    def walk(self, path: str, depth: int) -> bool:
        """Classify ``path``; returns True if any Kafka content was found at or below it."""
        if not self.enter(path, self.findings):
            return True
        errors: list[Finding] = []
        entries = self.listing(path, errors)
        if entries is None:
            self.findings.extend(errors)
            return True  # unreadable: reported, and not "no Kafka content"
        if self.is_log_dir(entries):
            self.log_dirs.append(self.scan_log_dir(path, entries, errors))
            return True
        if _is_partition_like(entries):
            self.partitions[os.path.realpath(path)] = scan_partition_dir(path, entries, self.swap_next_offset, errors)
            return True
        self.findings.extend(errors)
        found = False
        if depth < self.max_depth:
            for e in entries:
                if e.kind == "dir":
                    found = self.walk(e.path, depth + 1) or found
        return found

    def is_log_dir(self, entries: Sequence[DirEntry]) -> bool:
        if _has_root_marker(entries):
            return True
        for e in entries:
            if e.kind == "dir" and parse_partition_dir_name(e.name) is not None:
                child = self.listing(e.path, [])
                if child is not None and _is_partition_like(child):
                    return True
        return False

    def scan_log_dir(self, path: str, entries: Sequence[DirEntry], listing_findings: Sequence[Finding]) -> LogDir:
        findings: list[Finding] = list(listing_findings)
        partitions: list[PartitionDir] = []
        for e in entries:
            if e.kind != "dir":
                continue
            if e.name == REMOTE_LOG_INDEX_CACHE_DIR:
                continue
            if parse_partition_dir_name(e.name) is None:
                findings.append(
                    _note(
                        FindingKind.UNKNOWN_FILE,
                        "directory name is not topic-partition (the broker refuses to load it)",
                        e.path,
                    )
                )
                continue
            if self.partitions.pop(os.path.realpath(e.path), None) is None and not self.enter(e.path, findings):
                continue  # (a partition dir given on its own before its log dir is claimed here)
            errors: list[Finding] = []
            child = self.listing(e.path, errors)
            if child is None:
                findings.extend(errors)
            else:
                partitions.append(scan_partition_dir(e.path, child, self.swap_next_offset, errors))
        log_dir = _scan_root_files(path, entries, findings)
        return dataclasses.replace(log_dir, partitions=tuple(partitions), findings=tuple(findings))


def _scan_root_files(path: str, entries: Sequence[DirEntry], findings: list[Finding]) -> LogDir:
    meta: bf.MetaProperties | None = None
    clean: bf.CleanShutdown | None = None
    bootstrap: str | None = None
    lock_pid: int | None = None
    offsets: dict[str, Mapping[TopicPartition, int]] = {}
    for e in entries:
        if e.kind == "dir":
            continue
        parsed = classify_file_name(e.name)
        known = parsed is not None and parsed.kind in ROOT_FILE_KINDS | {FileKind.LOCK}
        if e.kind != "file":
            findings.append(special_file(e, known))
        elif parsed is None or not known:
            findings.append(_note(FindingKind.UNKNOWN_FILE, "not a Kafka log directory file", e.path))
        elif parsed.temp is not None:
            message = "leftover of an interrupted checkpoint write; the file without .tmp is authoritative"
            findings.append(_note(FindingKind.STALE_TMP_FILE, message, e.path))
        elif parsed.kind is FileKind.META_PROPERTIES:
            meta = read_text_file(e.path, bf.parse_meta_properties, findings)
        elif parsed.kind is FileKind.OFFSET_CHECKPOINT:
            checkpoint = read_text_file(e.path, cp.parse_offset_checkpoint, findings)
            if checkpoint is not None:
                offsets[e.name] = checkpoint.offsets()
        elif parsed.kind is FileKind.CLEAN_SHUTDOWN:
            # the broker treats the file's existence as a clean shutdown, whatever its content
            clean = read_text_file(e.path, bf.parse_clean_shutdown, findings) or bf.CleanShutdown(None, None)
        elif parsed.kind is FileKind.BOOTSTRAP_CHECKPOINT:
            bootstrap = e.path
        elif parsed.kind is FileKind.LOCK:
            lock_pid = lock_holder(e.path)  # asked with F_GETLK: nothing is locked
    empty: Mapping[TopicPartition, int] = MappingProxyType({})
    return LogDir(
        path=path,
        meta=meta,
        clean_shutdown=clean,
        recovery_points=offsets.get(RECOVERY_POINT_CHECKPOINT, empty),
        high_watermarks=offsets.get(REPLICATION_OFFSET_CHECKPOINT, empty),
        log_start_offsets=offsets.get(LOG_START_OFFSET_CHECKPOINT, empty),
        cleaner_offsets=offsets.get(CLEANER_OFFSET_CHECKPOINT, empty),
        bootstrap_checkpoint=bootstrap,
        lock_pid=lock_pid,
    )


# --------------------------------------------------------------------------- inputs


def _broken_link(path: str) -> str:
    """Why a symbolic link given as input leads nowhere."""
    try:
        os.stat(path)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return ("symbolic link loop, or a chain of links deeper than the system follows "
                    "(too many levels of symbolic links)")
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"dangling symbolic link (its target {target} does not exist)"
    return "dangling or looping symbolic link"


def discover(
    paths: Sequence[str],
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    swap_next_offset: SwapNextOffset | None = None,
    allow_empty: bool = False,
) -> Inventory:
    """Inventory of every Kafka log dir, partition dir and file found at ``paths``.

    ``swap_next_offset``, if given, returns the next offset of a ``.log.swap`` file
    (last offset + 1, read from its last batch header by the io layer); without it the
    swap coverage is approximated, see :mod:`forensics.layout.segments`.

    Raises :class:`InputError` for a path that does not exist, a dangling or looping symlink, a
    special file, a regular file whose name is not of a Kafka kind, and, unless ``allow_empty``,
    when no input holds anything Kafka (an input without Kafka content next to one with some is
    a NOT_KAFKA finding instead).
    """
    if isinstance(paths, (str, bytes)):
        raise InputError("discover() takes a sequence of paths, not a single string")
    given_paths = [os.fspath(p) for p in paths]
    walker = _Walker(max_depth, swap_next_offset, given_paths)
    for given in given_paths:
        walker.add_path(given)
    loose_partitions = tuple(walker.partitions.values())
    everything = [p for d in walker.log_dirs for p in d.partitions] + list(loose_partitions)
    if not everything and not walker.log_dirs and not walker.loose and not allow_empty:
        require_kafka_content([os.fspath(p) for p in paths], walker.findings, max_depth)
    names = resolve_truncated_topics(everything)
    log_dirs = tuple(
        dataclasses.replace(d, partitions=tuple(with_topic(p, names) for p in d.partitions)) for d in walker.log_dirs
    )
    return Inventory(
        log_dirs=log_dirs,
        loose_files=tuple(walker.loose),
        findings=tuple(walker.findings) + tuple(duplicate_brokers(log_dirs)),
        partitions=tuple(with_topic(p, names) for p in loose_partitions),
    )


__all__ = ["DEFAULT_MAX_DEPTH", "discover", "read_text_file", "scan_partition_dir"]
