"""The broker's own files in a log directory: ``meta.properties``, ``.kafka_cleanshutdown`` and
KRaft's ``quorum-state``.

Pure parsers, as :mod:`forensics.codec.checkpoints` (bad input raises
:class:`~forensics.errors.CorruptCheckpointError` with the path and byte position). Mirrors (read,
not copied) ``metadata/.../properties/MetaProperties.java`` + ``MetaPropertiesVersion.java``,
``storage/.../checkpoint/CleanShutdownFileHandler.java`` (JSON ``version``/``brokerEpoch``) and
``raft/.../FileQuorumStateStore.java`` + ``QuorumStateData.json``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from forensics.dataclass_fast import dataclass
from typing import NamedTuple

from forensics.codec.checkpoints import decode_kafka_uuid, encode_kafka_uuid
from forensics.codec.primitives import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN
from forensics.codec.text_lines import (
    LINE_END,
    Content,
    Line,
    as_bytes,
    corrupt,
    decode_text,
    java_int,
    text_lines,
)

QUORUM_STATE_VERSIONS = (0, 1)  # FileQuorumStateStore LOWEST/HIGHEST_SUPPORTED_VERSION


@dataclass(frozen=True, slots=True)
class MetaProperties:
    """``meta.properties``: version 0 (ZooKeeper, ``broker.id``) or 1 (KRaft, ``node.id``)."""

    version: int
    node_id: int | None  # node.id (v1) or broker.id (v0)
    cluster_id: str | None
    directory_id: str | None  # canonical base64url (KIP-858, 3.7+)
    raw: tuple[tuple[str, str], ...]  # every key/value in file order (duplicates kept)


@dataclass(frozen=True, slots=True)
class CleanShutdown:
    """``.kafka_cleanshutdown``: its presence means the last shutdown was clean."""

    version: int | None  # None for the empty file written by <= 3.6
    broker_epoch: int | None


@dataclass(frozen=True, slots=True)
class QuorumState:
    """KRaft ``quorum-state`` (``QuorumStateData`` JSON plus ``data_version``).

    Fields absent from the file are ``None``; Kafka's defaults (-1) are not filled in so
    that "absent" and "written as -1" stay distinguishable.
    """

    data_version: int
    leader_id: int | None
    leader_epoch: int | None
    voted_id: int | None
    voted_directory_id: str | None  # version 1+
    cluster_id: str | None  # version 0
    applied_offset: int | None  # version 0
    current_voters: tuple[int, ...] | None  # version 0


# --------------------------------------------------------------------------- meta.properties

_PROPS_WS = " \t\f"
_PROPS_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


class _Property(NamedTuple):
    key: str
    value: str
    number: int  # 1-based line number of the logical line's first natural line
    position: int  # byte offset of that line


def _logical_property_lines(data: Content, path: str | None) -> Iterator[Line]:
    """``java.util.Properties.LineReader``: skip blank lines and ``#``/``!`` comments, join
    lines ending in an odd number of backslashes (continuations lose leading blanks)."""
    lines = text_lines(data, path)
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
        yield Line(first.number, first.position, text)


def _unescape(text: str, path: str | None, line: Line) -> str:
    out: list[str] = []
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
                raise corrupt(path, line.position, f"line {line.number}: malformed \\uxxxx escape")
            out.append(chr(int(hexdigits, 16)))
            i += 4
        else:
            out.append(_PROPS_ESCAPES.get(c, c))
    return "".join(out)


def _split_property(line: str) -> tuple[str, str]:
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


def _properties(data: Content, path: str | None) -> list[_Property]:
    raw = as_bytes(data)
    if b"\x00" in raw:
        raise corrupt(path, raw.index(b"\x00"), "NUL byte in a properties file")
    out: list[_Property] = []
    for line in _logical_property_lines(raw, path):
        key, value = _split_property(line.text)
        out.append(_Property(_unescape(key, path, line), _unescape(value, path, line), line.number, line.position))
    return out


def parse_properties(data: Content, path: str | None = None) -> tuple[tuple[str, str], ...]:
    """Java ``Properties`` text as ordered (key, value) pairs (duplicates kept).

    Kafka writes these files as UTF-8 but reads them as ISO-8859-1; content that is not
    UTF-8, or that contains NUL bytes (a zero-filled file after a crash), is rejected here
    rather than read as nonsense keys.
    """
    return tuple((p.key, p.value) for p in _properties(data, path))


def parse_meta_properties(data: Content, path: str | None = None) -> MetaProperties:
    """``MetaProperties.Builder(Properties)``: missing ``version`` means 0; version 0 takes
    ``broker.id`` (optional), version 1 requires ``node.id`` and ``cluster.id``; a
    ``directory.id`` must be a valid UUID. The id key of the other version is ignored."""
    props = _properties(data, path)
    last = {p.key: p for p in props}  # last duplicate wins, as in java.util.Properties
    version_prop = last.get("version")
    version = 0
    if version_prop is not None:
        parsed = java_int(version_prop.value.strip(), INT32_MIN, INT32_MAX)
        if parsed not in (0, 1):
            raise corrupt(
                path,
                version_prop.position,
                f"line {version_prop.number}: unknown meta.properties version {version_prop.value[:40]!r}",
            )
        version = parsed
    id_key = "broker.id" if version == 0 else "node.id"
    node_id: int | None = None
    id_prop = last.get(id_key)
    if id_prop is not None:
        node_id = java_int(id_prop.value, INT32_MIN, INT32_MAX)
        if node_id is None:
            raise corrupt(
                path, id_prop.position, f"line {id_prop.number}: {id_key} {id_prop.value[:40]!r} is not an int32"
            )
    elif version == 1:
        raise corrupt(path, None, "version 1 meta.properties without node.id")
    cluster_prop = last.get("cluster.id")
    if version == 1 and cluster_prop is None:
        raise corrupt(path, None, "version 1 meta.properties without cluster.id")
    directory_id: str | None = None
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


def _json_object(data: Content, path: str | None, *, first_line_only: bool) -> dict[str, object]:
    raw = as_bytes(data)
    if first_line_only:
        m = LINE_END.search(raw)
        raw = raw[: m.start()] if m else raw
    text = decode_text(raw, path, 0)
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        pos = e.pos if isinstance(e, json.JSONDecodeError) else None
        byte_pos = len(text[:pos].encode("utf-8")) if pos is not None else None
        raise corrupt(path, byte_pos, f"malformed JSON: {getattr(e, 'msg', e)}") from None
    if not isinstance(obj, dict):
        raise corrupt(path, 0, f"JSON {type(obj).__name__} where an object is expected")
    return obj


def _json_int(obj: dict[str, object], key: str, path: str | None, lo: int, hi: int) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise corrupt(path, None, f"{key} is {value!r}, expected an integer")
    return value


def parse_clean_shutdown(data: Content, path: str | None = None) -> CleanShutdown:
    """Empty (<= 3.6) or ``{"version":0,"brokerEpoch":N}`` (3.7+, KIP-966).

    The broker treats the file's existence as "clean" even when the content is
    unreadable; a caller that catches the error should still record a clean shutdown.
    """
    if not as_bytes(data).strip():
        return CleanShutdown(None, None)
    obj = _json_object(data, path, first_line_only=False)
    version = _json_int(obj, "version", path, INT32_MIN, INT32_MAX)
    epoch = _json_int(obj, "brokerEpoch", path, INT64_MIN, INT64_MAX)
    return CleanShutdown(version, epoch)


def parse_quorum_state(data: Content, path: str | None = None) -> QuorumState:
    """First line of ``quorum-state`` as JSON with a ``data_version`` of 0 or 1."""
    obj = _json_object(data, path, first_line_only=True)
    data_version = _json_int(obj, "data_version", path, INT32_MIN, INT32_MAX)
    if data_version is None:
        raise corrupt(path, 0, "quorum-state without data_version")
    if data_version not in QUORUM_STATE_VERSIONS:
        raise corrupt(path, 0, f"unsupported quorum-state data_version {data_version}")

    def opt_int(key: str, lo: int = INT32_MIN, hi: int = INT32_MAX) -> int | None:
        return _json_int(obj, key, path, lo, hi)

    def opt_str(key: str) -> str | None:
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            raise corrupt(path, None, f"{key} is {value!r}, expected a string")
        return value

    voters: tuple[int, ...] | None = None
    raw_voters = obj.get("currentVoters")
    if raw_voters is not None:
        if not isinstance(raw_voters, list) or not all(isinstance(v, dict) for v in raw_voters):
            raise corrupt(path, None, "currentVoters is not a list of objects")
        ids = [_json_int(v, "voterId", path, INT32_MIN, INT32_MAX) for v in raw_voters]
        if any(i is None for i in ids):
            raise corrupt(path, None, "currentVoters entry without voterId")
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
