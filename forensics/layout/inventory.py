"""Frozen records produced by :func:`forensics.layout.discovery.discover`.

Plain data: paths are strings exactly as built from the user's input (no resolution of
symlinks), sizes come from ``os.stat``, checkpoint content is already parsed into the
typed records of :mod:`forensics.codec.checkpoints`. Nothing here holds an open file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field
from forensics.dataclass_fast import dataclass
from types import MappingProxyType

from forensics.codec.broker_files import CleanShutdown, MetaProperties, QuorumState
from forensics.codec.checkpoints import EpochEntry
from forensics.findings import Finding
from forensics.layout.names import MAX_DIR_NAME, FileKind, PartitionStatus
from forensics.model import TopicPartition

_EMPTY: Mapping[TopicPartition, int] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class SegmentFiles:
    """One effective log segment: the files the broker would load for ``base_offset``.

    ``log`` is ``None`` only in :attr:`PartitionDir.orphan_indexes` (index files whose
    ``.log`` is missing; the broker deletes those at load).
    """

    base_offset: int
    log: str | None
    index: str | None = None
    timeindex: str | None = None
    txnindex: str | None = None
    log_size: int | None = None
    swapped_in: bool = False  # the .log comes from a ``.log.swap`` the broker would rename


@dataclass(frozen=True, slots=True)
class SnapshotFile:
    """Producer-state snapshot ``<offset>.snapshot`` (offset = map end offset)."""

    offset: int
    path: str
    size: int


@dataclass(frozen=True, slots=True)
class KraftSnapshotFile:
    """KRaft metadata snapshot ``<end offset>-<epoch>.checkpoint``."""

    end_offset: int
    epoch: int
    path: str
    size: int


@dataclass(frozen=True, slots=True)
class PartitionDir:
    path: str
    name: str
    topic: str | None  # best topic name: resolved through topic_id for -delete/-stray
    partition: int | None  # None only for a directory given directly whose name does not parse
    status: PartitionStatus
    uuid_suffix: str | None
    name_topic: str | None  # topic as parsed from the directory name (may be truncated)
    topic_id: str | None  # partition.metadata, base64url
    leader_epochs: tuple[EpochEntry, ...]
    segments: tuple[SegmentFiles, ...]  # EFFECTIVE set, sorted by base offset
    snapshots: tuple[SnapshotFile, ...]  # effective, sorted by offset
    kraft_checkpoints: tuple[KraftSnapshotFile, ...]
    deleted_files: tuple[str, ...]  # *.deleted: old data, not part of the log
    cleaned_files: tuple[str, ...]  # *.cleaned: ignored by the broker
    swap_files: tuple[str, ...]  # every *.swap found (valid ones are in ``segments``)
    replaced_files: tuple[str, ...] = ()  # non-temp files the broker would delete: covered by a swap
    orphan_indexes: tuple[SegmentFiles, ...] = ()  # index files without a .log
    quorum_state: QuorumState | None = None  # __cluster_metadata-0 only
    findings: tuple[Finding, ...] = ()

    @property
    def topic_partition(self) -> TopicPartition | None:
        if self.topic is None or self.partition is None:
            return None
        return TopicPartition(self.topic, self.partition)

    @property
    def name_may_be_truncated(self) -> bool:
        """-delete/-stray names are capped at 255 chars by cutting the topic (KAFKA-15605)."""
        return self.status in (PartitionStatus.DELETE, PartitionStatus.STRAY) and len(self.name) >= MAX_DIR_NAME


@dataclass(frozen=True, slots=True)
class LogDir:
    path: str
    meta: MetaProperties | None
    clean_shutdown: CleanShutdown | None  # None: no .kafka_cleanshutdown (unclean or running)
    recovery_points: Mapping[TopicPartition, int] = field(default_factory=lambda: _EMPTY)
    high_watermarks: Mapping[TopicPartition, int] = field(default_factory=lambda: _EMPTY)
    log_start_offsets: Mapping[TopicPartition, int] = field(default_factory=lambda: _EMPTY)
    cleaner_offsets: Mapping[TopicPartition, int] = field(default_factory=lambda: _EMPTY)
    partitions: tuple[PartitionDir, ...] = ()
    bootstrap_checkpoint: str | None = None  # KRaft bootstrap.checkpoint (binary records)
    lock_pid: int | None = None  # a process holding .lock (a running broker); 0 free; None: no .lock / unknown
    findings: tuple[Finding, ...] = ()

    @property
    def broker_id(self) -> int | None:
        """``node.id`` (KRaft) or ``broker.id`` (ZooKeeper) from meta.properties."""
        return self.meta.node_id if self.meta is not None else None

    @property
    def directory_id(self) -> str | None:
        return self.meta.directory_id if self.meta is not None else None

    @property
    def cluster_id(self) -> str | None:
        return self.meta.cluster_id if self.meta is not None else None

    @property
    def had_clean_shutdown(self) -> bool:
        return self.clean_shutdown is not None

    def partition(
        self, topic: str, partition: int, status: PartitionStatus = PartitionStatus.LIVE
    ) -> PartitionDir | None:
        for p in self.partitions:
            if p.topic == topic and p.partition == partition and p.status is status:
                return p
        return None


@dataclass(frozen=True, slots=True)
class LooseFile:
    """A single file given directly on the command line."""

    path: str
    kind: FileKind
    offset: int | None  # from the name, when it starts with digits
    temp_suffix: str | None  # ".deleted", ".swap", ... when present
    size: int


@dataclass(frozen=True, slots=True)
class Inventory:
    log_dirs: tuple[LogDir, ...]
    loose_files: tuple[LooseFile, ...]
    findings: tuple[Finding, ...]  # inventory-level: duplicate brokers, symlink loops, non-Kafka inputs
    partitions: tuple[PartitionDir, ...] = ()  # partition dirs given directly, outside any log dir

    def all_partitions(self) -> Iterator[tuple[LogDir | None, PartitionDir]]:
        for log_dir in self.log_dirs:
            for p in log_dir.partitions:
                yield log_dir, p
        for p in self.partitions:
            yield None, p

    def all_findings(self) -> Iterator[Finding]:
        yield from self.findings
        for log_dir in self.log_dirs:
            yield from log_dir.findings
        for _, p in self.all_partitions():
            yield from p.findings
