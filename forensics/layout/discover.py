"""Find broker log directories, partition directories and loose Kafka files on disk.

``discover(paths)`` accepts, in any mix:

* a broker log dir (``meta.properties``, checkpoint files and/or partition dirs);
* a folder holding several brokers' log dirs (searched ``max_depth`` levels deep);
* a single partition dir (goes to :attr:`Inventory.partitions`);
* single files: segments, indexes, snapshots, checkpoints (:attr:`Inventory.loose_files`).

Evidence is only listed, ``stat``-ed and, for small text files (checkpoints,
``meta.properties``, ``partition.metadata``, ``quorum-state``, ``.kafka_cleanshutdown``),
read through a read-only descriptor. Segment, index and snapshot files are never opened.
Symlinks are followed, but each real directory is entered once, so symlink cycles end.
Damage becomes findings (UNREADABLE_FILE, CORRUPT_CHECKPOINT, UNKNOWN_FILE, ...); only
unusable *inputs* (a path that does not exist, a file of no Kafka kind) raise
:class:`~forensics.errors.InputError`.

The effective segment set per partition follows ``LogLoader``; see
:mod:`forensics.layout.segments` for the rule used for ``.swap`` files.
"""

from __future__ import annotations

import dataclasses
import os
from types import MappingProxyType
from typing import (
    Callable,
    Dict,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
    TypeVar,
)

from forensics.codec import checkpoints as cp
from forensics.errors import CorruptCheckpointError, InputError
from forensics.findings import Finding, FindingKind
from forensics.layout.evidence import (
    DirEntry,
    is_readable,
    list_dir,
    read_small_file,
    unreadable,
)
from forensics.layout.names import (
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    PARTITION_FILE_KINDS,
    RECOVERY_POINT_CHECKPOINT,
    REMOTE_LOG_INDEX_CACHE_DIR,
    REPLICATION_OFFSET_CHECKPOINT,
    ROOT_FILE_KINDS,
    FileKind,
    PartitionStatus,
    TempSuffix,
    classify_file_name,
    classify_loose_file,
    parse_partition_dir_name,
)
from forensics.layout.records import (
    Inventory,
    KraftSnapshotFile,
    LogDir,
    LooseFile,
    PartitionDir,
)
from forensics.layout.segments import NamedFile, SwapNextOffset, resolve_segments
from forensics.model import TopicPartition

DEFAULT_MAX_DEPTH = 3

_T = TypeVar("_T")

# --------------------------------------------------------------------------- text files


def read_text_file(path: str, parser: Callable[[bytes, str], _T], findings: List[Finding]) -> Optional[_T]:
    """Read and parse one small text file; failures become findings and return None."""
    try:
        data = read_small_file(path)
    except OSError as e:
        findings.append(unreadable(path, e))
        return None
    except ValueError as e:
        findings.append(Finding(FindingKind.CORRUPT_CHECKPOINT, f"not parsed: {e}", path=path))
        return None
    try:
        return parser(data, path)
    except CorruptCheckpointError as e:
        findings.append(Finding(FindingKind.CORRUPT_CHECKPOINT, e.message, path=e.path or path, position=e.position))
        return None


def _note(kind: FindingKind, message: str, path: str) -> Finding:
    return Finding(kind, message, path=path)


# --------------------------------------------------------------------------- partition dirs


def scan_partition_dir(
    path: str,
    entries: Sequence[DirEntry],
    swap_next_offset: Optional[SwapNextOffset] = None,
    listing_findings: Sequence[Finding] = (),
) -> PartitionDir:
    """Build a :class:`PartitionDir` from an already listed directory
    (``listing_findings``: what went wrong while listing it, e.g. dangling symlinks)."""
    name = os.path.basename(os.path.normpath(path))
    parsed_name = parse_partition_dir_name(name)
    findings: List[Finding] = list(listing_findings)
    offset_files: List[NamedFile] = []
    kraft: List[KraftSnapshotFile] = []
    kraft_deleted: List[str] = []
    epochs: Optional[cp.LeaderEpochCheckpoint] = None
    metadata: Optional[cp.PartitionMetadata] = None
    quorum: Optional[cp.QuorumState] = None
    for e in entries:
        if e.kind != "file":
            findings.append(_note(FindingKind.UNKNOWN_FILE, f"unexpected {e.kind} inside a partition dir", e.path))
            continue
        parsed = classify_file_name(e.name)
        if parsed is None or parsed.kind not in PARTITION_FILE_KINDS:
            findings.append(_note(FindingKind.UNKNOWN_FILE, "not a Kafka partition file", e.path))
            continue
        if parsed.temp in (TempSuffix.TMP, TempSuffix.PART):
            findings.append(_note(FindingKind.STALE_TMP_FILE, "leftover of an interrupted write; ignored", e.path))
        elif parsed.kind is FileKind.KRAFT_SNAPSHOT:
            if parsed.temp is TempSuffix.DELETED:
                kraft_deleted.append(e.path)
                findings.append(
                    Finding(
                        FindingKind.DELETED_FILE,
                        "KRaft snapshot marked for deletion",
                        path=e.path,
                        first_offset=parsed.offset,
                    )
                )
            else:
                kraft.append(KraftSnapshotFile(parsed.offset or 0, parsed.epoch or 0, e.path, e.size))
        elif parsed.kind is FileKind.LEADER_EPOCH_CHECKPOINT:
            epochs = read_text_file(e.path, cp.parse_leader_epoch_checkpoint, findings)
            if epochs is not None and not epochs.is_monotonic():
                findings.append(
                    _note(FindingKind.CORRUPT_CHECKPOINT, "leader epochs / start offsets are not increasing", e.path)
                )
        elif parsed.kind is FileKind.PARTITION_METADATA:
            metadata = read_text_file(e.path, cp.parse_partition_metadata, findings)
        elif parsed.kind is FileKind.QUORUM_STATE:
            quorum = read_text_file(e.path, cp.parse_quorum_state, findings)
        else:
            offset_files.append(NamedFile(parsed, e))
            if not is_readable(e.path):
                findings.append(_note(FindingKind.UNREADABLE_FILE, "no read permission", e.path))
    res = resolve_segments(offset_files, swap_next_offset)
    topic = parsed_name.topic if parsed_name else None
    return PartitionDir(
        path=path,
        name=name,
        topic=topic,
        partition=parsed_name.partition if parsed_name else None,
        status=parsed_name.status if parsed_name else PartitionStatus.LIVE,
        uuid_suffix=parsed_name.uuid_suffix if parsed_name else None,
        name_topic=topic,
        topic_id=metadata.topic_id if metadata else None,
        leader_epochs=epochs.entries if epochs else (),
        segments=res.segments,
        snapshots=res.snapshots,
        kraft_checkpoints=tuple(sorted(kraft, key=lambda k: (k.end_offset, k.epoch))),
        deleted_files=res.deleted_files + tuple(kraft_deleted),
        cleaned_files=res.cleaned_files,
        swap_files=res.swap_files,
        replaced_files=res.replaced_files,
        orphan_indexes=res.orphan_indexes,
        quorum_state=quorum,
        findings=tuple(findings) + res.findings,
    )


# --------------------------------------------------------------------------- log dirs


def _is_partition_like(entries: Sequence[DirEntry]) -> bool:
    for e in entries:
        parsed = classify_file_name(e.name) if e.kind == "file" else None
        if parsed is not None and parsed.kind in PARTITION_FILE_KINDS:
            return True
    return False


def _has_root_marker(entries: Sequence[DirEntry]) -> bool:
    for e in entries:
        parsed = classify_file_name(e.name) if e.kind == "file" else None
        if parsed is not None and parsed.kind in ROOT_FILE_KINDS:
            return True
    return False


class _Walker:
    def __init__(self, max_depth: int, swap_next_offset: Optional[SwapNextOffset]) -> None:
        self.max_depth = max_depth
        self.swap_next_offset = swap_next_offset
        self.visited: Set[str] = set()
        self.listings: Dict[str, Tuple[Optional[List[DirEntry]], List[Finding]]] = {}
        self.findings: List[Finding] = []
        self.log_dirs: List[LogDir] = []
        self.partitions: Dict[str, PartitionDir] = {}  # loose partition dirs by real path
        self.loose: List[LooseFile] = []

    # -- listing with memo, so deciding "is this a log dir?" costs no second listing
    def listing(self, path: str, findings: List[Finding]) -> Optional[List[DirEntry]]:
        """Entries of ``path``; listing problems are appended to ``findings``."""
        real = os.path.realpath(path)
        if real not in self.listings:
            self.listings[real] = list_dir(path)
        entries, errors = self.listings[real]
        findings.extend(errors)
        return entries

    def enter(self, path: str, findings: List[Finding]) -> bool:
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
            raise InputError("dangling or looping symbolic link", path=given)
        else:
            raise InputError("not a regular file or directory", path=given)

    def add_loose_file(self, path: str) -> None:
        parsed = classify_loose_file(os.path.basename(path))
        if parsed is None:
            raise InputError("not a directory and not a Kafka segment, index, snapshot or checkpoint file", path=path)
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
        errors: List[Finding] = []
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
        findings: List[Finding] = list(listing_findings)
        partitions: List[PartitionDir] = []
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
            errors: List[Finding] = []
            child = self.listing(e.path, errors)
            if child is None:
                findings.extend(errors)
            else:
                partitions.append(scan_partition_dir(e.path, child, self.swap_next_offset, errors))
        log_dir = _scan_root_files(path, entries, findings)
        return dataclasses.replace(log_dir, partitions=tuple(partitions), findings=tuple(findings))


def _scan_root_files(path: str, entries: Sequence[DirEntry], findings: List[Finding]) -> LogDir:
    meta: Optional[cp.MetaProperties] = None
    clean: Optional[cp.CleanShutdown] = None
    bootstrap: Optional[str] = None
    offsets: Dict[str, Mapping[TopicPartition, int]] = {}
    for e in entries:
        if e.kind == "dir":
            continue
        parsed = classify_file_name(e.name) if e.kind == "file" else None
        if parsed is None or parsed.kind not in ROOT_FILE_KINDS | {FileKind.LOCK}:
            findings.append(_note(FindingKind.UNKNOWN_FILE, "not a Kafka log directory file", e.path))
        elif parsed.temp is not None:
            message = "leftover of an interrupted checkpoint write; the file without .tmp is authoritative"
            findings.append(_note(FindingKind.STALE_TMP_FILE, message, e.path))
        elif parsed.kind is FileKind.META_PROPERTIES:
            meta = read_text_file(e.path, cp.parse_meta_properties, findings)
        elif parsed.kind is FileKind.OFFSET_CHECKPOINT:
            checkpoint = read_text_file(e.path, cp.parse_offset_checkpoint, findings)
            if checkpoint is not None:
                offsets[e.name] = checkpoint.offsets()
        elif parsed.kind is FileKind.CLEAN_SHUTDOWN:
            # the broker treats the file's existence as a clean shutdown, whatever its content
            clean = read_text_file(e.path, cp.parse_clean_shutdown, findings) or cp.CleanShutdown(None, None)
        elif parsed.kind is FileKind.BOOTSTRAP_CHECKPOINT:
            bootstrap = e.path
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
    )


# --------------------------------------------------------------------------- cross-checks


def _resolve_truncated_topics(partitions: Sequence[PartitionDir]) -> Dict[str, str]:
    """topic id -> topic name, from directories whose names are never truncated."""
    names: Dict[str, str] = {}
    for p in partitions:
        if p.topic_id and p.name_topic and p.status in (PartitionStatus.LIVE, PartitionStatus.FUTURE):
            names.setdefault(p.topic_id, p.name_topic)
    return names


def _with_topic(p: PartitionDir, names: Dict[str, str]) -> PartitionDir:
    if p.status not in (PartitionStatus.DELETE, PartitionStatus.STRAY) or not p.topic_id:
        return p
    full = names.get(p.topic_id)
    if full is None or full == p.topic or not full.startswith(p.name_topic or ""):
        return p
    return dataclasses.replace(p, topic=full)


def _duplicate_brokers(log_dirs: Sequence[LogDir]) -> List[Finding]:
    """Same node id AND same directory id in two log dirs = a copy of one disk (or a
    cloned disk). Same node id with different directory ids is JBOD and fine."""
    groups: Dict[Tuple[int, str], List[LogDir]] = {}
    for d in log_dirs:
        if d.broker_id is not None and d.directory_id is not None:
            groups.setdefault((d.broker_id, d.directory_id), []).append(d)
    findings = []
    for (node, dir_id), dirs in groups.items():
        if len(dirs) > 1:
            others = ", ".join(d.path for d in dirs[1:])
            findings.append(
                Finding(
                    FindingKind.DUPLICATE_BROKER,
                    f"broker {node} directory.id {dir_id} also claimed by {others}",
                    path=dirs[0].path,
                )
            )
    return findings


def discover(
    paths: Sequence[str],
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    swap_next_offset: Optional[SwapNextOffset] = None,
) -> Inventory:
    """Inventory of every Kafka log dir, partition dir and file found at ``paths``.

    ``swap_next_offset``, if given, returns the next offset of a ``.log.swap`` file
    (last offset + 1, read from its last batch header by the io layer); without it the
    swap coverage is approximated, see :mod:`forensics.layout.segments`.

    Raises :class:`InputError` for a path that does not exist, a dangling symlink, a
    special file, or a regular file whose name is not of a Kafka kind.
    """
    if isinstance(paths, (str, bytes)):
        raise InputError("discover() takes a sequence of paths, not a single string")
    walker = _Walker(max_depth, swap_next_offset)
    for given in paths:
        walker.add_path(os.fspath(given))
    loose_partitions = tuple(walker.partitions.values())
    everything = [p for d in walker.log_dirs for p in d.partitions] + list(loose_partitions)
    names = _resolve_truncated_topics(everything)
    log_dirs = tuple(
        dataclasses.replace(d, partitions=tuple(_with_topic(p, names) for p in d.partitions)) for d in walker.log_dirs
    )
    return Inventory(
        log_dirs=log_dirs,
        loose_files=tuple(walker.loose),
        findings=tuple(walker.findings) + tuple(_duplicate_brokers(log_dirs)),
        partitions=tuple(_with_topic(p, names) for p in loose_partitions),
    )


__all__ = ["DEFAULT_MAX_DEPTH", "discover", "read_text_file", "scan_partition_dir"]
