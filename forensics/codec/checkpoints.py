"""Text checkpoint and metadata files of a broker log directory (Kafka's ``CheckpointFile``, ``MetaProperties``).

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
* ``metadata/.../properties/MetaProperties.java`` + ``MetaPropertiesVersion.java``
* ``storage/.../checkpoint/CleanShutdownFileHandler.java`` (JSON ``version``/``brokerEpoch``)
* ``raft/src/main/java/org/apache/kafka/raft/FileQuorumStateStore.java`` +
  ``raft/src/main/resources/common/message/QuorumStateData.json``

Lines end at ``\\n``, ``\\r`` or ``\\r\\n`` (Java ``BufferedReader.readLine``). Whitespace
splitting uses Java's ASCII ``\\s`` class and keeps Java ``String.split`` semantics (a
leading separator yields an empty first field; trailing empty fields are dropped).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from dataclasses import dataclass
from types import MappingProxyType
from typing import (
    Callable,
    Iterator,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Tuple,
    TypeVar,
    Union,
)

from forensics.codec.primitives import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN
from forensics.errors import CorruptCheckpointError
from forensics.model import TopicPartition

Content = Union[bytes, bytearray, memoryview, str]

OFFSET_CHECKPOINT_VERSION = 0
LEADER_EPOCH_CHECKPOINT_VERSION = 0
PARTITION_METADATA_VERSION = 0  # PartitionMetadataFile.CURRENT_VERSION; reader accepts >= 0
QUORUM_STATE_VERSIONS = (0, 1)  # FileQuorumStateStore LOWEST/HIGHEST_SUPPORTED_VERSION


_LINE_END = re.compile(rb"\r\n|\r|\n")
_JAVA_WS = re.compile(r"[ \t\n\x0b\f\r]+")  # java.util.regex \s (ASCII only)
_COLON_WS = re.compile(r":[ \t\n\x0b\f\r]+")  # PartitionMetadataReadBuffer ":\s+"
_JAVA_INT = re.compile(r"[+-]?[0-9]+\Z")
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

    version: Optional[int]  # None for an empty file
    entries: Tuple[OffsetEntry, ...]

    def offsets(self) -> Mapping[TopicPartition, int]:
        """Read-only mapping; a partition listed twice keeps its last value (Kafka's HashMap)."""
        return MappingProxyType({e.topic_partition: e.offset for e in self.entries})


@dataclass(frozen=True, slots=True)
class LeaderEpochCheckpoint:
    version: Optional[int]  # None for an empty file
    entries: Tuple[EpochEntry, ...]

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


@dataclass(frozen=True, slots=True)
class MetaProperties:
    """``meta.properties``: version 0 (ZooKeeper, ``broker.id``) or 1 (KRaft, ``node.id``)."""

    version: int
    node_id: Optional[int]  # node.id (v1) or broker.id (v0)
    cluster_id: Optional[str]
    directory_id: Optional[str]  # canonical base64url (KIP-858, 3.7+)
    raw: Tuple[Tuple[str, str], ...]  # every key/value in file order (duplicates kept)


@dataclass(frozen=True, slots=True)
class CleanShutdown:
    """``.kafka_cleanshutdown``: its presence means the last shutdown was clean."""

    version: Optional[int]  # None for the empty file written by <= 3.6
    broker_epoch: Optional[int]


@dataclass(frozen=True, slots=True)
class QuorumState:
    """KRaft ``quorum-state`` (``QuorumStateData`` JSON plus ``data_version``).

    Fields absent from the file are ``None``; Kafka's defaults (-1) are not filled in so
    that "absent" and "written as -1" stay distinguishable.
    """

    data_version: int
    leader_id: Optional[int]
    leader_epoch: Optional[int]
    voted_id: Optional[int]
    voted_directory_id: Optional[str]  # version 1+
    cluster_id: Optional[str]  # version 0
    applied_offset: Optional[int]  # version 0
    current_voters: Optional[Tuple[int, ...]]  # version 0


# --------------------------------------------------------------------------- helpers


class _Line(NamedTuple):
    number: int  # 1-based
    position: int  # byte offset of the first byte of the line
    text: str


def _error(path: Optional[str], position: Optional[int], message: str) -> CorruptCheckpointError:
    return CorruptCheckpointError(message, path=path, position=position)


def _as_bytes(data: Content) -> bytes:
    return data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)


def _decode(raw: bytes, path: Optional[str], base: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _error(path, base + e.start, f"not valid UTF-8 ({e.reason})") from None


def _lines(data: Content, path: Optional[str]) -> Iterator[_Line]:
    """Yield lines as ``BufferedReader.readLine`` would, with their byte positions."""
    raw = _as_bytes(data)
    pos = 0
    number = 0
    while pos < len(raw):
        number += 1
        m = _LINE_END.search(raw, pos)
        end = m.start() if m else len(raw)
        yield _Line(number, pos, _decode(raw[pos:end], path, pos))
        pos = m.end() if m else len(raw)


def _java_split(pattern: "re.Pattern[str]", text: str) -> List[str]:
    parts = pattern.split(text)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def _java_int(text: str, lo: int, hi: int) -> Optional[int]:
    """``Integer.parseInt``/``Long.parseLong`` (ASCII digits, optional sign, in range)."""
    if not _JAVA_INT.match(text):
        return None
    value = int(text)
    return value if lo <= value <= hi else None


def _line_int(line: _Line, path: Optional[str], what: str) -> int:
    value = _java_int(line.text, INT32_MIN, INT32_MAX)
    if value is None:
        raise _error(path, line.position, f"line {line.number}: malformed {what} {line.text[:80]!r}")
    return value


_T = TypeVar("_T")


def parse_checkpoint(
    data: Content,
    path: Optional[str],
    expected_version: int,
    parse_entry: Callable[[List[str]], Optional[_T]],
) -> Tuple[Optional[int], Tuple[_T, ...]]:
    """Generic ``CheckpointFile`` reader: ``(version or None if empty, entries)``.

    ``parse_entry`` gets the whitespace-split fields of one entry line and returns the
    entry or ``None`` when the line is malformed.
    """
    lines = _lines(data, path)
    first = next(lines, None)
    if first is None:
        return None, ()
    version = _line_int(first, path, "version")
    if version != expected_version:
        raise _error(path, first.position, f"line 1: unsupported version {version}, expected {expected_version}")
    second = next(lines, None)
    if second is None:
        return version, ()
    count = _line_int(second, path, "entry count")
    entries: List[_T] = []
    for line in lines:
        entry = parse_entry(_java_split(_JAVA_WS, line.text))
        if entry is None:
            raise _error(path, line.position, f"line {line.number}: malformed entry {line.text[:80]!r}")
        entries.append(entry)
    if len(entries) != count:
        raise _error(path, second.position, f"line 2: entry count {count} but {len(entries)} entries follow")
    return version, tuple(entries)


# --------------------------------------------------------------------------- offset files


def _offset_entry(fields: List[str]) -> Optional[OffsetEntry]:
    if len(fields) != 3 or not fields[0]:
        return None
    partition = _java_int(fields[1], INT32_MIN, INT32_MAX)
    offset = _java_int(fields[2], INT64_MIN, INT64_MAX)
    if partition is None or offset is None:
        return None
    return OffsetEntry(TopicPartition(fields[0], partition), offset)


def parse_offset_checkpoint(data: Content, path: Optional[str] = None) -> OffsetCheckpoint:
    version, entries = parse_checkpoint(data, path, OFFSET_CHECKPOINT_VERSION, _offset_entry)
    return OffsetCheckpoint(version, entries)


def _epoch_entry(fields: List[str]) -> Optional[EpochEntry]:
    if len(fields) != 2:
        return None
    epoch = _java_int(fields[0], INT32_MIN, INT32_MAX)
    start = _java_int(fields[1], INT64_MIN, INT64_MAX)
    if epoch is None or start is None:
        return None
    return EpochEntry(epoch, start)


def parse_leader_epoch_checkpoint(data: Content, path: Optional[str] = None) -> LeaderEpochCheckpoint:
    version, entries = parse_checkpoint(data, path, LEADER_EPOCH_CHECKPOINT_VERSION, _epoch_entry)
    return LeaderEpochCheckpoint(version, entries)


# --------------------------------------------------------------------------- UUIDs


def decode_kafka_uuid(text: str, path: Optional[str] = None, position: Optional[int] = None) -> uuid.UUID:
    """``Uuid.fromString``: base64url of 16 big-endian bytes, 22 chars (or 24 with ``==``)."""
    if not _BASE64URL.match(text):
        raise _error(path, position, f"{text[:40]!r} is not a base64url-encoded 16-byte UUID")
    try:
        raw = base64.urlsafe_b64decode(text[:22] + "==")
    except (binascii.Error, ValueError):  # pragma: no cover - the regex already guards
        raise _error(path, position, f"{text[:40]!r} is not valid base64url") from None
    return uuid.UUID(bytes=raw)


def encode_kafka_uuid(value: uuid.UUID) -> str:
    """``Uuid.toString``: base64url without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


# --------------------------------------------------------------------------- partition.metadata


def parse_partition_metadata(data: Content, path: Optional[str] = None) -> PartitionMetadata:
    lines = _lines(data, path)
    first = next(lines, None)
    if first is None:
        raise _error(path, 0, "empty partition.metadata")
    fields = _java_split(_COLON_WS, first.text)
    version = _java_int(fields[1], INT32_MIN, INT32_MAX) if len(fields) == 2 else None
    if version is None:
        raise _error(path, first.position, f"line 1: malformed version line {first.text[:80]!r}")
    if version < PARTITION_METADATA_VERSION:
        raise _error(path, first.position, f"line 1: unsupported version {version}")
    second = next(lines, None)
    if second is None:
        raise _error(path, len(_as_bytes(data)), "missing topic_id line")
    fields = _java_split(_COLON_WS, second.text)
    if len(fields) != 2:
        raise _error(path, second.position, f"line 2: malformed topic_id line {second.text[:80]!r}")
    value_pos = second.position + len(second.text.encode("utf-8")) - len(fields[1].encode("utf-8"))
    topic_uuid = decode_kafka_uuid(fields[1], path, value_pos)
    if topic_uuid.int == 0:
        raise _error(path, value_pos, "line 2: topic id is the all-zero UUID")
    return PartitionMetadata(version, encode_kafka_uuid(topic_uuid), topic_uuid)


# --------------------------------------------------------------------------- meta.properties

_PROPS_WS = " \t\f"
_PROPS_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


class _Property(NamedTuple):
    key: str
    value: str
    number: int  # 1-based line number of the logical line's first natural line
    position: int  # byte offset of that line


def _logical_property_lines(data: Content, path: Optional[str]) -> Iterator[_Line]:
    """``java.util.Properties.LineReader``: skip blank lines and ``#``/``!`` comments, join
    lines ending in an odd number of backslashes (continuations lose leading blanks)."""
    lines = _lines(data, path)
    for first in lines:
        text = first.text.lstrip(_PROPS_WS)
        if not text or text[0] in "#!":
            continue
        while (len(text) - len(text.rstrip("\\"))) % 2 == 1:
            text = text[:-1]
            cont = next(lines, None)
            if cont is None:
                break
            text += cont.text.lstrip(_PROPS_WS)
        yield _Line(first.number, first.position, text)


def _unescape(text: str, path: Optional[str], line: _Line) -> str:
    out: List[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        i += 1
        if c != "\\" or i >= len(text):
            out.append(c)
            continue
        c = text[i]
        i += 1
        if c == "u":
            hexdigits = text[i : i + 4]
            if len(hexdigits) != 4 or not re.fullmatch(r"[0-9A-Fa-f]{4}", hexdigits):
                raise _error(path, line.position, f"line {line.number}: malformed \\uxxxx escape")
            out.append(chr(int(hexdigits, 16)))
            i += 4
        else:
            out.append(_PROPS_ESCAPES.get(c, c))
    return "".join(out)


def _split_property(line: str) -> Tuple[str, str]:
    """Key ends at the first unescaped ``=``, ``:`` or whitespace; one separator and the
    whitespace around it are skipped."""
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:" or c in _PROPS_WS:
            break
        i += 1
    key, rest = line[:i], line[i:]
    rest = rest.lstrip(_PROPS_WS)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_PROPS_WS)
    return key, rest


def _properties(data: Content, path: Optional[str]) -> List[_Property]:
    raw = _as_bytes(data)
    if b"\x00" in raw:
        raise _error(path, raw.index(b"\x00"), "NUL byte in a properties file")
    out: List[_Property] = []
    for line in _logical_property_lines(raw, path):
        key, value = _split_property(line.text)
        out.append(_Property(_unescape(key, path, line), _unescape(value, path, line), line.number, line.position))
    return out


def parse_properties(data: Content, path: Optional[str] = None) -> Tuple[Tuple[str, str], ...]:
    """Java ``Properties`` text as ordered (key, value) pairs (duplicates kept).

    Kafka writes these files as UTF-8 but reads them as ISO-8859-1; content that is not
    UTF-8, or that contains NUL bytes (a zero-filled file after a crash), is rejected here
    rather than read as nonsense keys.
    """
    return tuple((p.key, p.value) for p in _properties(data, path))


def parse_meta_properties(data: Content, path: Optional[str] = None) -> MetaProperties:
    """``MetaProperties.Builder(Properties)``: missing ``version`` means 0; version 0 takes
    ``broker.id`` (optional), version 1 requires ``node.id`` and ``cluster.id``; a
    ``directory.id`` must be a valid UUID. The id key of the other version is ignored."""
    props = _properties(data, path)
    last = {p.key: p for p in props}  # last duplicate wins, as in java.util.Properties
    version_prop = last.get("version")
    version = 0
    if version_prop is not None:
        parsed = _java_int(version_prop.value.strip(), INT32_MIN, INT32_MAX)
        if parsed not in (0, 1):
            raise _error(
                path,
                version_prop.position,
                f"line {version_prop.number}: unknown meta.properties version {version_prop.value[:40]!r}",
            )
        version = parsed
    id_key = "broker.id" if version == 0 else "node.id"
    node_id: Optional[int] = None
    id_prop = last.get(id_key)
    if id_prop is not None:
        node_id = _java_int(id_prop.value, INT32_MIN, INT32_MAX)
        if node_id is None:
            raise _error(
                path, id_prop.position, f"line {id_prop.number}: {id_key} {id_prop.value[:40]!r} is not an int32"
            )
    elif version == 1:
        raise _error(path, None, "version 1 meta.properties without node.id")
    cluster_prop = last.get("cluster.id")
    if version == 1 and cluster_prop is None:
        raise _error(path, None, "version 1 meta.properties without cluster.id")
    directory_id: Optional[str] = None
    dir_prop = last.get("directory.id")
    if dir_prop is not None:
        directory_id = encode_kafka_uuid(decode_kafka_uuid(dir_prop.value, path, dir_prop.position))
    return MetaProperties(
        version=version,
        node_id=node_id,
        cluster_id=cluster_prop.value if cluster_prop is not None else None,
        directory_id=directory_id,
        raw=tuple((p.key, p.value) for p in props),
    )


# --------------------------------------------------------------------------- JSON files


def _json_object(data: Content, path: Optional[str], *, first_line_only: bool) -> "dict[str, object]":
    raw = _as_bytes(data)
    if first_line_only:
        m = _LINE_END.search(raw)
        raw = raw[: m.start()] if m else raw
    text = _decode(raw, path, 0)
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        pos = e.pos if isinstance(e, json.JSONDecodeError) else None
        byte_pos = len(text[:pos].encode("utf-8")) if pos is not None else None
        raise _error(path, byte_pos, f"malformed JSON: {getattr(e, 'msg', e)}") from None
    if not isinstance(obj, dict):
        raise _error(path, 0, f"JSON {type(obj).__name__} where an object is expected")
    return obj


def _json_int(obj: "dict[str, object]", key: str, path: Optional[str], lo: int, hi: int) -> Optional[int]:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise _error(path, None, f"{key} is {value!r}, expected an integer")
    return value


def parse_clean_shutdown(data: Content, path: Optional[str] = None) -> CleanShutdown:
    """Empty (<= 3.6) or ``{"version":0,"brokerEpoch":N}`` (3.7+, KIP-966).

    The broker treats the file's existence as "clean" even when the content is
    unreadable; a caller that catches the error should still record a clean shutdown.
    """
    if not _as_bytes(data).strip():
        return CleanShutdown(None, None)
    obj = _json_object(data, path, first_line_only=False)
    version = _json_int(obj, "version", path, INT32_MIN, INT32_MAX)
    epoch = _json_int(obj, "brokerEpoch", path, INT64_MIN, INT64_MAX)
    return CleanShutdown(version, epoch)


def parse_quorum_state(data: Content, path: Optional[str] = None) -> QuorumState:
    """First line of ``quorum-state`` as JSON with a ``data_version`` of 0 or 1."""
    obj = _json_object(data, path, first_line_only=True)
    data_version = _json_int(obj, "data_version", path, INT32_MIN, INT32_MAX)
    if data_version is None:
        raise _error(path, 0, "quorum-state without data_version")
    if data_version not in QUORUM_STATE_VERSIONS:
        raise _error(path, 0, f"unsupported quorum-state data_version {data_version}")

    def opt_int(key: str, lo: int = INT32_MIN, hi: int = INT32_MAX) -> Optional[int]:
        return _json_int(obj, key, path, lo, hi)

    def opt_str(key: str) -> Optional[str]:
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            raise _error(path, None, f"{key} is {value!r}, expected a string")
        return value

    voters: Optional[Tuple[int, ...]] = None
    raw_voters = obj.get("currentVoters")
    if raw_voters is not None:
        if not isinstance(raw_voters, list) or not all(isinstance(v, dict) for v in raw_voters):
            raise _error(path, None, "currentVoters is not a list of objects")
        ids = [_json_int(v, "voterId", path, INT32_MIN, INT32_MAX) for v in raw_voters]
        if any(i is None for i in ids):
            raise _error(path, None, "currentVoters entry without voterId")
        voters = tuple(i for i in ids if i is not None)
    return QuorumState(
        data_version=data_version,
        leader_id=opt_int("leaderId"),
        leader_epoch=opt_int("leaderEpoch"),
        voted_id=opt_int("votedId"),
        voted_directory_id=opt_str("votedDirectoryId"),
        cluster_id=opt_str("clusterId"),
        applied_offset=opt_int("appliedOffset", INT64_MIN, INT64_MAX),
        current_voters=voters,
    )
