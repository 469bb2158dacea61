"""File and directory names of a broker log directory (Kafka's ``LocalLog``, ``LogFileUtils``). Pure functions.

Mirrors ``core/src/main/scala/kafka/log/LocalLog.scala`` (``parseTopicPartitionName``,
``DeleteDirPattern``/``FutureDirPattern``/``StrayDirPattern``),
``storage/.../log/LogFileUtils.java`` (suffixes, ``offsetFromFileName``) and
``raft/src/main/java/org/apache/kafka/snapshot/Snapshots.java`` (KRaft snapshot names).
"""

from __future__ import annotations

import re
from enum import Enum
from typing import NamedTuple


class PartitionStatus(str, Enum):
    LIVE = "live"
    DELETE = "delete"  # <topic>-<p>.<uuid>-delete: scheduled for async deletion
    FUTURE = "future"  # <topic>-<p>.<uuid>-future: target of an intra-broker move
    STRAY = "stray"  # <topic>-<p>.<uuid>-stray: KRaft stray replica (3.7+)


class FileKind(str, Enum):
    LOG = "log"
    INDEX = "index"
    TIMEINDEX = "timeindex"
    TXNINDEX = "txnindex"
    SNAPSHOT = "snapshot"  # producer state snapshot, named by offset
    KRAFT_SNAPSHOT = "kraft_snapshot"  # <20-digit end offset>-<10-digit epoch>.checkpoint
    LEADER_EPOCH_CHECKPOINT = "leader_epoch_checkpoint"
    PARTITION_METADATA = "partition_metadata"
    QUORUM_STATE = "quorum_state"
    META_PROPERTIES = "meta_properties"
    OFFSET_CHECKPOINT = "offset_checkpoint"
    CLEAN_SHUTDOWN = "clean_shutdown"
    BOOTSTRAP_CHECKPOINT = "bootstrap_checkpoint"  # KRaft bootstrap records (binary)
    LOCK = "lock"


class TempSuffix(str, Enum):
    DELETED = ".deleted"
    CLEANED = ".cleaned"
    SWAP = ".swap"
    TMP = ".tmp"  # write-temp-then-rename leftovers of text checkpoint writers
    PART = ".part"  # partial KRaft snapshot (<id>-<random>.checkpoint.part)


SEGMENT_KINDS = frozenset({FileKind.LOG, FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX})
INDEX_KINDS = frozenset({FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX})
OFFSET_NAMED_KINDS = SEGMENT_KINDS | {FileKind.SNAPSHOT}
PARTITION_FILE_KINDS = OFFSET_NAMED_KINDS | {
    FileKind.KRAFT_SNAPSHOT,
    FileKind.LEADER_EPOCH_CHECKPOINT,
    FileKind.PARTITION_METADATA,
    FileKind.QUORUM_STATE,
}
ROOT_FILE_KINDS = frozenset(
    {FileKind.META_PROPERTIES, FileKind.OFFSET_CHECKPOINT, FileKind.CLEAN_SHUTDOWN, FileKind.BOOTSTRAP_CHECKPOINT}
)

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"  # high watermarks
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
OFFSET_CHECKPOINT_NAMES = (
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    CLEANER_OFFSET_CHECKPOINT,
)
BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"  # KRaft bootstrap records: BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME
REMOTE_LOG_INDEX_CACHE_DIR = "remote-log-index-cache"  # tiered storage; LogManager skips it

_FIXED_NAMES = {
    "leader-epoch-checkpoint": FileKind.LEADER_EPOCH_CHECKPOINT,
    "partition.metadata": FileKind.PARTITION_METADATA,
    "quorum-state": FileKind.QUORUM_STATE,
    "meta.properties": FileKind.META_PROPERTIES,
    ".kafka_cleanshutdown": FileKind.CLEAN_SHUTDOWN,
    BOOTSTRAP_CHECKPOINT: FileKind.BOOTSTRAP_CHECKPOINT,
    ".lock": FileKind.LOCK,
    **{name: FileKind.OFFSET_CHECKPOINT for name in OFFSET_CHECKPOINT_NAMES},
}
# the suffix of each offset-named file (LogFileUtils: LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, ...): the one table
# the file-name patterns below and kafka-dump-log.sh's dispatch (:func:`kind_of_suffix`) are made from
_SUFFIX_KINDS = {kind.value: kind for kind in (FileKind.LOG, FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX,
                                               FileKind.SNAPSHOT)}
_SUFFIXES = "|".join(_SUFFIX_KINDS)
_SEGMENT_TEMP = "|".join(re.escape(t.value) for t in (TempSuffix.DELETED, TempSuffix.CLEANED, TempSuffix.SWAP))
_OFFSET_FILE = re.compile(rf"([0-9]+)\.({_SUFFIXES})({_SEGMENT_TEMP})?\Z")
_KRAFT_SNAPSHOT = re.compile(r"([0-9]{20})-([0-9]{10})\.checkpoint(\.deleted)?\Z")
_KRAFT_PARTIAL = re.compile(r"([0-9]{20})-([0-9]{10})-[^/]*\.checkpoint\.part\Z")
_LOOSE_SUFFIX = re.compile(rf".*\.({_SUFFIXES})({_SEGMENT_TEMP})?\Z", re.S)
_JAVA_NON_WS = r"[^ \t\n\x0b\f\r]+"
_SUFFIXED_DIR = {
    "-delete": (PartitionStatus.DELETE, re.compile(rf"{_JAVA_NON_WS}-{_JAVA_NON_WS}\.{_JAVA_NON_WS}-delete\Z")),
    "-future": (PartitionStatus.FUTURE, re.compile(rf"{_JAVA_NON_WS}-{_JAVA_NON_WS}\.{_JAVA_NON_WS}-future\Z")),
    "-stray": (PartitionStatus.STRAY, re.compile(rf"{_JAVA_NON_WS}-{_JAVA_NON_WS}\.{_JAVA_NON_WS}-stray\Z")),
}
MAX_DIR_NAME = 255  # logDirNameWithSuffixCappedLength caps -delete/-stray names at this length


class FileName(NamedTuple):
    """What a file name says: kind, offset (segment base, snapshot offset or KRaft end
    offset), KRaft epoch and temporary suffix."""

    kind: FileKind
    offset: int | None = None
    epoch: int | None = None
    temp: TempSuffix | None = None


class PartitionDirName(NamedTuple):
    topic: str  # as written in the name; may be truncated for -delete/-stray (KAFKA-15605)
    partition: int
    status: PartitionStatus
    uuid_suffix: str | None  # the 32-hex unique id of suffixed dirs


def _int32(text: str) -> int | None:
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -(2**31) <= value < 2**31 else None


def parse_partition_dir_name(name: str) -> PartitionDirName | None:
    """``LocalLog.parseTopicPartitionName``; ``None`` where Kafka would throw."""
    if not name or "-" not in name:
        return None
    status, uuid_suffix, base = PartitionStatus.LIVE, None, name
    for suffix, (suffix_status, pattern) in _SUFFIXED_DIR.items():
        if name.endswith(suffix):
            if not pattern.match(name):
                return None
            dot = name.rfind(".")
            status, uuid_suffix, base = suffix_status, name[dot + 1 : -len(suffix)], name[:dot]
            break
    dash = base.rfind("-")
    topic, partition_text = base[:dash], base[dash + 1 :]
    partition = _int32(partition_text)
    if dash < 0 or not topic or partition is None:
        return None
    return PartitionDirName(topic, partition, status, uuid_suffix)


def classify_file_name(name: str) -> FileName | None:
    """Classify a file found inside a log dir or partition dir; ``None`` if unknown."""
    m = _OFFSET_FILE.match(name)
    if m:
        temp = TempSuffix(m.group(3)) if m.group(3) else None
        return FileName(_SUFFIX_KINDS[m.group(2)], int(m.group(1)), None, temp)
    m = _KRAFT_SNAPSHOT.match(name)
    if m:
        temp = TempSuffix.DELETED if m.group(3) else None
        return FileName(FileKind.KRAFT_SNAPSHOT, int(m.group(1)), int(m.group(2)), temp)
    m = _KRAFT_PARTIAL.match(name)
    if m:
        return FileName(FileKind.KRAFT_SNAPSHOT, int(m.group(1)), int(m.group(2)), TempSuffix.PART)
    if name in _FIXED_NAMES:
        return FileName(_FIXED_NAMES[name])
    if name.endswith(".tmp") and name[: -len(".tmp")] in _FIXED_NAMES:
        return FileName(_FIXED_NAMES[name[: -len(".tmp")]], temp=TempSuffix.TMP)
    return None


def kraft_snapshot_id(name: str) -> tuple[int, int] | None:
    """``Snapshots.parse``: (end offset, epoch) of a KRaft snapshot's file name; None for any other
    name (a ``.deleted`` or partial snapshot too)."""
    m = _KRAFT_SNAPSHOT.match(name)
    return (int(m.group(1)), int(m.group(2))) if m is not None and not m.group(3) else None


def classify_loose_file(name: str) -> FileName | None:
    """Classify a file given directly by the user: like :func:`classify_file_name`, but a
    segment/index/snapshot suffix is enough (the offset is ``None`` when the name does not
    start with digits, e.g. a renamed copy)."""
    parsed = classify_file_name(name)
    if parsed is not None:
        return parsed
    m = _LOOSE_SUFFIX.match(name)
    if m:
        temp = TempSuffix(m.group(2)) if m.group(2) else None
        return FileName(_SUFFIX_KINDS[m.group(1)], None, None, temp)
    if name.endswith((".checkpoint", "offset-checkpoint")):
        return FileName(FileKind.OFFSET_CHECKPOINT)  # a text checkpoint whose role the name hides
    return None


def kind_of_suffix(suffix: str) -> FileKind | None:
    """The offset-named kind a file name's last suffix (``.log``, ``.index``, ``.timeindex``,
    ``.txnindex``, ``.snapshot``) names; None for any other."""
    return _SUFFIX_KINDS.get(suffix[1:]) if suffix.startswith(".") else None


def offset_prefix(offset: int) -> str:
    """``LogFileUtils.filenamePrefixFromOffset``: 20-digit zero padded."""
    return f"{offset:020d}"


_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}\Z")


def is_legal_topic(name: str) -> bool:
    """A name Kafka accepts for a topic (``org.apache.kafka.common.internals.Topic.validate``): 1-249 of
    ``[a-zA-Z0-9._-]``, not ``.`` or ``..``. A partition dir named otherwise was not made by a broker."""
    return bool(_LEGAL_TOPIC.match(name)) and name not in (".", "..")
