"""Checkpoint files of a broker log directory (Kafka's ``CheckpointFile``) and ``partition.metadata``.

Pure parsers: each takes the file content (``bytes`` or ``str``) and the ``path`` it came
from (used only in error messages) and returns a frozen record. Bad input raises
:class:`~forensics.errors.CorruptCheckpointError` carrying the path, the byte position of
the offending line (or byte) and a message naming the line number; nothing else escapes.

Mirrors (read, not copied):

* ``server-common/src/main/java/org/apache/kafka/server/common/CheckpointFile.java``
  (``CheckpointReadBuffer``: version line, count line, entries to EOF; empty file = no
  entries; a file with only the version line = no entries; count must equal entries read)
* ``storage/.../checkpoint/OffsetCheckpointFile.java`` (``<topic> <partition> <offset>``)
* ``storage/.../checkpoint/LeaderEpochCheckpointFile.java`` (``<epoch> <startOffset>``)
* ``storage/.../checkpoint/PartitionMetadataReadBuffer.java`` (split on ``:\\s+``,
  version >= 0, topic id via ``clients/.../common/Uuid.java#fromString``, zero UUID rejected)

Lines are read by :mod:`forensics.codec.text_lines`; ``meta.properties``, ``.kafka_cleanshutdown``
and ``quorum-state`` by :mod:`forensics.codec.broker_files`.
"""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from forensics.dataclass_fast import dataclass
from types import MappingProxyType
from typing import (
    NamedTuple,
    TypeVar,
)
from collections.abc import Callable, Mapping

from forensics.codec.java_reader import uuid_to_string
from forensics.codec.primitives import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN
from forensics.codec.text_lines import (
    JAVA_WS,
    Content,
    as_bytes,
    corrupt,
    java_int,
    java_split,
    line_int,
    text_lines,
)
from forensics.model import TopicPartition


OFFSET_CHECKPOINT_VERSION = 0
LEADER_EPOCH_CHECKPOINT_VERSION = 0
PARTITION_METADATA_VERSION = 0  # PartitionMetadataFile.CURRENT_VERSION; reader accepts >= 0


_COLON_WS = re.compile(r":[ \t\n\x0b\f\r]+")  # PartitionMetadataReadBuffer ":\s+"
_BASE64URL = re.compile(r"[A-Za-z0-9_-]{22}(==)?\Z")

# --------------------------------------------------------------------------- records


class OffsetEntry(NamedTuple):
    """One line of an offset checkpoint (``OffsetCheckpointFile.TopicPartitionOffset``)."""

    topic_partition: TopicPartition
    offset: int


class EpochEntry(NamedTuple):
    """One line of ``leader-epoch-checkpoint`` (Kafka's ``EpochEntry``)."""

    epoch: int
    start_offset: int


@dataclass(frozen=True, slots=True)
class OffsetCheckpoint:
    """``recovery-point-offset-checkpoint``, ``replication-offset-checkpoint``,
    ``log-start-offset-checkpoint`` or ``cleaner-offset-checkpoint``."""

    version: int | None  # None for an empty file
    entries: tuple[OffsetEntry, ...]

    def offsets(self) -> Mapping[TopicPartition, int]:
        """Read-only mapping; a partition listed twice keeps its last value (Kafka's HashMap)."""
        return MappingProxyType({e.topic_partition: e.offset for e in self.entries})


@dataclass(frozen=True, slots=True)
class LeaderEpochCheckpoint:
    version: int | None  # None for an empty file
    entries: tuple[EpochEntry, ...]

    def is_monotonic(self) -> bool:
        """Epochs strictly and start offsets weakly increasing, as the broker writes them."""
        return all(
            b.epoch > a.epoch and b.start_offset >= a.start_offset
            for a, b in zip(self.entries, self.entries[1:], strict=False)
        )


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    version: int
    topic_id: str  # canonical base64url without padding, as Kafka prints it
    topic_uuid: uuid.UUID





_T = TypeVar("_T")


def parse_checkpoint(
    data: Content,
    path: str | None,
    expected_version: int,
    parse_entry: Callable[[list[str]], _T | None],
) -> tuple[int | None, tuple[_T, ...]]:
    """Generic ``CheckpointFile`` reader: ``(version or None if empty, entries)``.

    ``parse_entry`` gets the whitespace-split fields of one entry line and returns the
    entry or ``None`` when the line is malformed.
    """
    lines = text_lines(data, path)
    first = next(lines, None)
    if first is None:
        return None, ()
    version = line_int(first, path, "version")
    if version != expected_version:
        raise corrupt(path, first.position, f"line 1: unsupported version {version}, expected {expected_version}")
    second = next(lines, None)
    if second is None:
        return version, ()
    count = line_int(second, path, "entry count")
    entries: list[_T] = []
    for line in lines:
        entry = parse_entry(java_split(JAVA_WS, line.text))
        if entry is None:
            raise corrupt(path, line.position, f"line {line.number}: malformed entry {line.text[:80]!r}")
        entries.append(entry)
    if len(entries) != count:
        raise corrupt(path, second.position, f"line 2: entry count {count} but {len(entries)} entries follow")
    return version, tuple(entries)


# --------------------------------------------------------------------------- offset files


def _offset_entry(fields: list[str]) -> OffsetEntry | None:
    if len(fields) != 3 or not fields[0]:
        return None
    partition = java_int(fields[1], INT32_MIN, INT32_MAX)
    offset = java_int(fields[2], INT64_MIN, INT64_MAX)
    if partition is None or offset is None:
        return None
    return OffsetEntry(TopicPartition(fields[0], partition), offset)


def parse_offset_checkpoint(data: Content, path: str | None = None) -> OffsetCheckpoint:
    version, entries = parse_checkpoint(data, path, OFFSET_CHECKPOINT_VERSION, _offset_entry)
    return OffsetCheckpoint(version, entries)


def _epoch_entry(fields: list[str]) -> EpochEntry | None:
    if len(fields) != 2:
        return None
    epoch = java_int(fields[0], INT32_MIN, INT32_MAX)
    start = java_int(fields[1], INT64_MIN, INT64_MAX)
    if epoch is None or start is None:
        return None
    return EpochEntry(epoch, start)


def parse_leader_epoch_checkpoint(data: Content, path: str | None = None) -> LeaderEpochCheckpoint:
    version, entries = parse_checkpoint(data, path, LEADER_EPOCH_CHECKPOINT_VERSION, _epoch_entry)
    return LeaderEpochCheckpoint(version, entries)


# --------------------------------------------------------------------------- UUIDs


def decode_kafka_uuid(text: str, path: str | None = None, position: int | None = None) -> uuid.UUID:
    """``Uuid.fromString``: base64url of 16 big-endian bytes, 22 chars (or 24 with ``==``)."""
    if not _BASE64URL.match(text):
        raise corrupt(path, position, f"{text[:40]!r} is not a base64url-encoded 16-byte UUID")
    try:
        raw = base64.urlsafe_b64decode(text[:22] + "==")
    except (binascii.Error, ValueError):  # pragma: no cover - the regex already guards
        raise corrupt(path, position, f"{text[:40]!r} is not valid base64url") from None
    return uuid.UUID(bytes=raw)


def encode_kafka_uuid(value: uuid.UUID) -> str:
    """``Uuid.toString``: base64url without padding."""
    return uuid_to_string(value.bytes)


# --------------------------------------------------------------------------- partition.metadata


def parse_partition_metadata(data: Content, path: str | None = None) -> PartitionMetadata:
    lines = text_lines(data, path)
    first = next(lines, None)
    if first is None:
        raise corrupt(path, 0, "empty partition.metadata")
    fields = java_split(_COLON_WS, first.text)
    version = java_int(fields[1], INT32_MIN, INT32_MAX) if len(fields) == 2 else None
    if version is None:
        raise corrupt(path, first.position, f"line 1: malformed version line {first.text[:80]!r}")
    if version < PARTITION_METADATA_VERSION:
        raise corrupt(path, first.position, f"line 1: unsupported version {version}")
    second = next(lines, None)
    if second is None:
        raise corrupt(path, len(as_bytes(data)), "missing topic_id line")
    fields = java_split(_COLON_WS, second.text)
    if len(fields) != 2:
        raise corrupt(path, second.position, f"line 2: malformed topic_id line {second.text[:80]!r}")
    value_pos = second.position + len(second.text.encode("utf-8")) - len(fields[1].encode("utf-8"))
    topic_uuid = decode_kafka_uuid(fields[1], path, value_pos)
    if topic_uuid.int == 0:
        raise corrupt(path, value_pos, "line 2: topic id is the all-zero UUID")
    return PartitionMetadata(version, encode_kafka_uuid(topic_uuid), topic_uuid)
