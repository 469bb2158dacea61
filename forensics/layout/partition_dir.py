"""One partition directory, from its listing: the effective segment set, snapshots, KRaft
checkpoints, leader epochs, topic id and findings (see :func:`scan_partition_dir`).

Only small text files (``leader-epoch-checkpoint``, ``partition.metadata``, ``quorum-state``) are
read, through :func:`read_text_file`; segment, index and snapshot files are listed, never opened.
"""

from __future__ import annotations

import os
from typing import TypeVar
from collections.abc import Callable, Sequence

from forensics.codec import broker_files as bf
from forensics.codec import checkpoints as cp
from forensics.errors import CorruptCheckpointError
from forensics.findings import Finding, FindingKind
from forensics.layout.checks import unreadable_segment_message
from forensics.io.files import EvidenceError, FileTooLarge, read_small_file
from forensics.layout import evidence
from forensics.layout.evidence import DirEntry, is_readable
from forensics.layout.names import (
    PARTITION_FILE_KINDS,
    FileKind,
    PartitionStatus,
    TempSuffix,
    classify_file_name,
    parse_partition_dir_name,
)
from forensics.layout.inventory import KraftSnapshotFile, PartitionDir
from forensics.layout.segments import NamedFile, SwapNextOffset, resolve_segments

_T = TypeVar("_T")

# --------------------------------------------------------------------------- text files


def read_text_file(path: str, parser: Callable[[bytes, str], _T], findings: list[Finding]) -> _T | None:
    """Read and parse one small text file; failures become findings and return None."""
    try:
        data = read_small_file(path, evidence.MAX_TEXT_BYTES)
    except FileTooLarge as e:
        why = (f"grew past the {e.limit}-byte limit for text files while reading" if e.grew
               else f"{e.size} bytes, larger than the {e.limit}-byte limit for text files")
        findings.append(Finding(FindingKind.CORRUPT_CHECKPOINT, f"not parsed: {why}", path=path))
        return None
    except EvidenceError as e:
        if e.strerror is not None:  # the system refused: the file is unreadable
            findings.append(Finding(FindingKind.UNREADABLE_FILE, f"cannot read: {e.strerror}", path=path))
        else:
            findings.append(Finding(FindingKind.CORRUPT_CHECKPOINT, f"not parsed: {e.message}", path=path))
        return None
    try:
        return parser(data, path)
    except CorruptCheckpointError as e:
        findings.append(Finding(FindingKind.CORRUPT_CHECKPOINT, e.message, path=e.path or path, position=e.position))
        return None


def note(kind: FindingKind, message: str, path: str) -> Finding:
    return Finding(kind, message, path=path)


def special_file(e: DirEntry, kafka_name: bool) -> Finding:
    """A FIFO, socket or device in the evidence is never opened (opening a FIFO waits for a writer).
    Named like a Kafka file, it is a file the analysis lacks: unreadable; otherwise an unknown file."""
    if kafka_name:
        return note(FindingKind.UNREADABLE_FILE, f"{e.what}, not a regular file: not opened", e.path)
    return note(FindingKind.UNKNOWN_FILE, f"{e.what}, not a Kafka file and not a regular file: not opened", e.path)


# --------------------------------------------------------------------------- partition dirs


class _Listing:
    """The entries of one partition directory, sorted by kind as they are read (findings in order)."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        self.offset_files: list[NamedFile] = []
        self.kraft: list[KraftSnapshotFile] = []
        self.kraft_deleted: list[str] = []
        self.epochs: cp.LeaderEpochCheckpoint | None = None
        self.metadata: cp.PartitionMetadata | None = None
        self.quorum: bf.QuorumState | None = None

    def add(self, e: DirEntry) -> None:
        findings = self.findings
        if e.kind == "dir":
            findings.append(note(FindingKind.UNKNOWN_FILE, "unexpected dir inside a partition dir", e.path))
            return
        parsed = classify_file_name(e.name)
        if e.kind != "file":
            findings.append(special_file(e, parsed is not None and parsed.kind in PARTITION_FILE_KINDS))
        elif parsed is None or parsed.kind not in PARTITION_FILE_KINDS:
            findings.append(note(FindingKind.UNKNOWN_FILE, "not a Kafka partition file", e.path))
        elif parsed.temp in (TempSuffix.TMP, TempSuffix.PART):
            findings.append(note(FindingKind.STALE_TMP_FILE, "leftover of an interrupted write; ignored", e.path))
        elif parsed.kind is FileKind.KRAFT_SNAPSHOT:
            self._kraft_snapshot(e, parsed)
        elif parsed.kind is FileKind.LEADER_EPOCH_CHECKPOINT:
            self.epochs = read_text_file(e.path, cp.parse_leader_epoch_checkpoint, findings)
            if self.epochs is not None and not self.epochs.is_monotonic():
                findings.append(
                    note(FindingKind.CORRUPT_CHECKPOINT, "leader epochs / start offsets are not increasing", e.path)
                )
        elif parsed.kind is FileKind.PARTITION_METADATA:
            self.metadata = read_text_file(e.path, cp.parse_partition_metadata, findings)
        elif parsed.kind is FileKind.QUORUM_STATE:
            self.quorum = read_text_file(e.path, bf.parse_quorum_state, findings)
        else:
            self.offset_files.append(NamedFile(parsed, e))

    def _kraft_snapshot(self, e: DirEntry, parsed) -> None:
        if parsed.temp is TempSuffix.DELETED:
            self.kraft_deleted.append(e.path)
            self.findings.append(Finding(FindingKind.DELETED_FILE, "KRaft snapshot marked for deletion", path=e.path,
                                         first_offset=parsed.offset))
        else:
            self.kraft.append(KraftSnapshotFile(parsed.offset or 0, parsed.epoch or 0, e.path, e.size))


def scan_partition_dir(
    path: str,
    entries: Sequence[DirEntry],
    swap_next_offset: SwapNextOffset | None = None,
    listing_findings: Sequence[Finding] = (),
) -> PartitionDir:
    """Build a :class:`PartitionDir` from an already listed directory
    (``listing_findings``: what went wrong while listing it, e.g. dangling symlinks)."""
    name = os.path.basename(os.path.normpath(path))
    parsed_name = parse_partition_dir_name(name)
    files = _Listing(list(listing_findings))
    for e in entries:
        files.add(e)
    findings, offset_files, epochs, metadata = files.findings, files.offset_files, files.epochs, files.metadata
    kraft, kraft_deleted, quorum = files.kraft, files.kraft_deleted, files.quorum
    res = resolve_segments(offset_files, swap_next_offset)
    for f in offset_files:
        if not is_readable(f.path):
            findings.append(note(FindingKind.UNREADABLE_FILE, unreadable_segment_message(res.segments, f.path), f.path))
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


__all__ = ["note", "read_text_file", "scan_partition_dir", "special_file"]
