"""``__transaction_state`` records (Kafka's ``TransactionLog``); the text Kafka 4.1's
``--transaction-log-decoder`` prints for them is in :mod:`forensics.codec.txnlog_text`.

Mirrors, from the Kafka source:

* ``transaction-coordinator/src/main/resources/common/message/TransactionLogKey.json`` (version 0,
  non-flexible; in 4.x the key's int16 prefix is the coordinator *record type*, 0 = TransactionLog)
  and ``TransactionLogValue.json`` (v0 non-flexible, v1 flexible with tagged fields 0..2), read the
  way the generated ``TransactionLogKey``/``TransactionLogValue`` readers do;
* ``coordinator-common/.../runtime/CoordinatorRecordSerde.java`` + ``TransactionCoordinatorRecordSerde``;
* ``clients/.../utils/Utils.java`` (``abs``) and ``java.lang.String.hashCode`` for the partition of an id.

Strings are decoded like Java's ``new String(bytes, UTF_8)``: malformed UTF-8 becomes U+FFFD (the
broker and the dump tool do the same); ``utf8_replaced`` says it happened. Bytes after a complete key
or value are ignored by Kafka's readers; ``trailing_bytes`` counts them.

Error positions are byte positions inside the buffer given, plus ``base_position``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from forensics.dataclass_fast import dataclass
from enum import IntEnum
from typing import NamedTuple, TypeVar

from forensics.codec.java_reader import java_string
from forensics.codec.primitives import (
    read_bytes,
    read_int8,
    read_int16,
    read_int32,
    read_int64,
    read_uvarint,
)
from forensics.errors import CorruptTransactionLogError

TRANSACTION_LOG_RECORD_TYPE = 0  # key version / coordinator record type of TransactionLogKey
VALUE_VERSIONS = (0, 1)  # TransactionLogValue validVersions "0-1"; 1+ flexible
MAX_STRING_LENGTH = 0x7FFF  # generated readers reject longer (compact) strings

# TransactionLogValue v1 tagged fields (tag -> (name, default))
TAG_PREVIOUS_PRODUCER_ID = 0  # int64, default -1
TAG_NEXT_PRODUCER_ID = 1  # int64, default -1
TAG_CLIENT_TRANSACTION_VERSION = 2  # int16, default 0
TAG_NEXT_PRODUCER_EPOCH = 3  # int16, default -1 -- post-4.1 trunk (KIP-939), TransactionLogValue.json [UNVERIFIED]

_E = CorruptTransactionLogError


class TransactionStatus(IntEnum):
    """Persisted ``TransactionStatus`` byte (Kafka's ``TransactionState`` ids)."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6  # in-memory only, never written
    PREPARE_EPOCH_FENCE = 7  # in-memory only, never written

    @property
    def kafka_name(self) -> str:
        """Kafka's state name: ``Empty``, ``Ongoing``, ``PrepareCommit``, ..."""
        return "".join(part.capitalize() for part in self.name.split("_"))


@dataclass(frozen=True, slots=True)
class TransactionLogKey:
    """Key of a ``__transaction_state`` record (record type / key version 0)."""

    transactional_id: str
    version: int = TRANSACTION_LOG_RECORD_TYPE
    utf8_replaced: bool = False
    trailing_bytes: int = 0


@dataclass(frozen=True, slots=True)
class UnknownTransactionLogKey:
    """A key whose int16 prefix is not 0. Kafka's loader skips such records with a warning and the
    dump tool prints ``Unknown record type N at offset O, skipping.``; we keep the bytes."""

    version: int
    data: bytes  # the bytes after the int16 prefix


class PartitionsSchema(NamedTuple):
    """One element of ``TransactionPartitions``: a topic and its partition ids."""

    topic: str
    partition_ids: tuple[int, ...]


class TaggedField(NamedTuple):
    tag: int
    data: bytes


@dataclass(frozen=True, slots=True)
class TransactionLogValue:
    """Value of a ``__transaction_state`` record, v0 or v1 (a tombstone is ``None``, not a value).

    ``status`` is a :class:`TransactionStatus` when the id is known, else the raw int8 (Kafka would
    throw IllegalStateException; we keep it, see ``status_known``). ``partitions`` is ``None`` for a
    null array (written for Empty), ``()`` for an empty one. Tagged fields keep their defaults when
    absent; unknown tags are kept in ``unknown_tags`` and, for the per-topic elements, in
    ``partition_unknown_tags`` as ``(element index, TaggedField)``.
    """

    version: int
    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    status: TransactionStatus | int
    partitions: tuple[PartitionsSchema, ...] | None
    last_update_timestamp_ms: int
    start_timestamp_ms: int
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0
    next_producer_epoch: int = -1
    unknown_tags: tuple[TaggedField, ...] = ()
    partition_unknown_tags: tuple[tuple[int, TaggedField], ...] = ()
    utf8_replaced: bool = False
    trailing_bytes: int = 0

    @property
    def status_id(self) -> int:
        return int(self.status)

    @property
    def status_known(self) -> bool:
        return isinstance(self.status, TransactionStatus)


# --------------------------------------------------------------------------- decoding

T = TypeVar("T")


def _rebased(fn: Callable[[], T], base_position: int) -> T:
    try:
        return fn()
    except CorruptTransactionLogError as exc:
        if base_position and exc.position is not None:
            exc.position += base_position
        raise


def _signed32(u: int) -> int:
    u &= 0xFFFFFFFF
    return u - 0x1_0000_0000 if u & 0x8000_0000 else u


def _read_len_uvarint(buf, pos: int, end: int) -> tuple[int, int]:
    """Kafka's ``readUnsignedVarint() - 1`` in Java int arithmetic (0 -> -1 = null)."""
    u, pos = read_uvarint(buf, pos, end, 5, _E)
    return _signed32(_signed32(u) - 1), pos


def _decode_utf8(raw: bytes) -> tuple[str, bool]:
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return java_string(raw), True


def _read_string(buf, pos: int, end: int, flexible: bool, name: str) -> tuple[str, bool, int]:
    start = pos
    if flexible:
        length, pos = _read_len_uvarint(buf, pos, end)
    else:
        length, pos = read_int16(buf, pos, end, _E)
    if length < 0:
        raise _E(f"non-nullable field {name} was serialized as null", position=start)
    if length > MAX_STRING_LENGTH:
        raise _E(f"string field {name} had invalid length {length}", position=start)
    raw, pos = read_bytes(buf, pos, end, length, _E)
    text, replaced = _decode_utf8(raw)
    return text, replaced, pos


def _read_array_len(buf, pos: int, end: int, flexible: bool) -> tuple[int, int]:
    if flexible:
        return _read_len_uvarint(buf, pos, end)
    return read_int32(buf, pos, end, _E)


def _check_array_len(n: int, pos: int, end: int, start: int) -> None:
    if n > end - pos:
        raise _E(
            f"Tried to allocate a collection of size {n}, but there are only {end - pos} bytes remaining.",
            position=start,
        )


def _read_tag_section(buf, pos: int, end: int) -> tuple[list[tuple[TaggedField, int]], int]:
    """A tagged-field section as (field, byte position of its tag) pairs."""
    start = pos
    count, pos = read_uvarint(buf, pos, end, 5, _E)
    if count > end - pos:
        raise _E(f"tagged field count {count} exceeds remaining bytes", position=start)
    fields: list[tuple[TaggedField, int]] = []
    for _ in range(count):
        at = pos
        tag, pos = read_uvarint(buf, pos, end, 5, _E)
        size, pos = read_uvarint(buf, pos, end, 5, _E)
        data, pos = read_bytes(buf, pos, end, size, _E)
        fields.append((TaggedField(tag, data), at))
    return fields, pos


def decode_key(buf, *, base_position: int = 0) -> TransactionLogKey | UnknownTransactionLogKey:
    """Decode a record key. An int16 prefix other than 0 gives :class:`UnknownTransactionLogKey`
    (not an error: Kafka skips those records); a short or malformed key raises
    :class:`CorruptTransactionLogError`."""
    return _rebased(lambda: _decode_key(buf), base_position)


def _decode_key(buf) -> TransactionLogKey | UnknownTransactionLogKey:
    if buf is None:
        raise _E("transaction log record has a null key", position=0)
    end = len(buf)
    fast = _key_v0(buf, end)
    if fast is not None:
        return fast
    version, pos = read_int16(buf, 0, end, _E)
    if version != TRANSACTION_LOG_RECORD_TYPE:
        return UnknownTransactionLogKey(version, bytes(buf[pos:end]))
    txn_id, replaced, pos = _read_string(buf, pos, end, False, "transactionalId")
    return TransactionLogKey(txn_id, version, replaced, end - pos)


def decode_value(buf, *, base_position: int = 0, shared: dict | None = None) -> TransactionLogValue | None:
    """Decode a record value; ``None`` (a null value) is a tombstone and returns ``None``.
    An empty buffer is NOT a tombstone (Kafka's null is length -1) and raises. ``shared``: a dict
    the caller keeps across values, so that equal partition lists are one object (a transaction's
    records repeat its partition set)."""
    if buf is None:
        return None
    return _rebased(lambda: _decode_value(buf, shared), base_position)


def _read_partitions(buf, pos: int, end: int, flexible: bool):
    start = pos
    count, pos = _read_array_len(buf, pos, end, flexible)
    if count < 0:
        return None, (), False, pos
    _check_array_len(count, pos, end, start)
    items: list[PartitionsSchema] = []
    elem_tags: list[tuple[int, TaggedField]] = []
    any_replaced = False
    for index in range(count):
        topic, replaced, pos = _read_string(buf, pos, end, flexible, "topic")
        any_replaced |= replaced
        ids_at = pos
        n_ids, pos = _read_array_len(buf, pos, end, flexible)
        if n_ids < 0:
            raise _E("non-nullable field partitionIds was serialized as null", position=ids_at)
        _check_array_len(n_ids, pos, end, ids_at)
        if pos + 4 * n_ids <= end:
            ids = struct.unpack_from(f">{n_ids}i", buf, pos)
            pos += 4 * n_ids
        else:  # (to say where the short one ends)
            read = []
            for _ in range(n_ids):
                pid, pos = read_int32(buf, pos, end, _E)
                read.append(pid)
            ids = tuple(read)
        if flexible:
            tags, pos = _read_tag_section(buf, pos, end)
            elem_tags.extend((index, t) for t, _ in tags)
        items.append(PartitionsSchema(topic, ids))
    return tuple(items), tuple(elem_tags), any_replaced, pos


# TransactionLogValue's fixed fields: producerId, producerEpoch, transactionTimeoutMs, transactionStatus;
# after the partitions, transactionLastUpdateTimestampMs and transactionStartTimestampMs
_HEAD = struct.Struct(">qhib")
_TIMES = struct.Struct(">qq")
# A key: its type and its id's length; a version 0 value: its version, fixed fields and partition count;
# a version 0 topic's length, a partition id count
_KEY_HEAD = struct.Struct(">hh")
_V0_HEAD = struct.Struct(">hqhibi")
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_STATUS = {s.value: s for s in TransactionStatus}

_KNOWN_TAGS = {
    TAG_PREVIOUS_PRODUCER_ID: ("previous_producer_id", 8),
    TAG_NEXT_PRODUCER_ID: ("next_producer_id", 8),
    TAG_CLIENT_TRANSACTION_VERSION: ("client_transaction_version", 2),
}


def _key_v0(buf, end: int) -> TransactionLogKey | None:
    """A key of type 0 whose id is well-formed UTF-8 and fits, in one read (what :func:`_decode_key`
    makes of it), else None: that one then reads it field by field (Java's replacement characters,
    the errors and their positions)."""
    if end < _KEY_HEAD.size:
        return None
    version, length = _KEY_HEAD.unpack_from(buf, 0)
    if version != TRANSACTION_LOG_RECORD_TYPE or not 0 <= length <= end - _KEY_HEAD.size:
        return None
    try:
        txn_id = str(buf[_KEY_HEAD.size:_KEY_HEAD.size + length], "utf-8")
    except UnicodeDecodeError:
        return None
    return TransactionLogKey(txn_id, version, False, end - _KEY_HEAD.size - length)


def _value_v0(buf, end: int, shared: dict | None) -> TransactionLogValue | None:
    """A version 0 value that breaks no rule, read with a struct per field group (what
    :func:`_decode_value` makes of it), else None: that one then reads it field by field, to say
    which rule breaks where."""
    if end < _V0_HEAD.size:
        return None
    _, producer_id, producer_epoch, timeout_ms, status_raw, count = _V0_HEAD.unpack_from(buf, 0)
    pos = _V0_HEAD.size
    if count < 0 or count > end - pos:
        return None
    items: list[PartitionsSchema] = []
    for _ in range(count):
        if pos + 2 > end:
            return None
        (length,) = _INT16.unpack_from(buf, pos)
        pos += 2
        if length < 0 or pos + length + 4 > end:
            return None
        try:
            topic = str(buf[pos:pos + length], "utf-8")
        except UnicodeDecodeError:
            return None
        pos += length
        (n_ids,) = _INT32.unpack_from(buf, pos)
        pos += 4
        if n_ids < 0 or pos + 4 * n_ids > end:
            return None
        items.append(PartitionsSchema(topic, struct.unpack_from(f">{n_ids}i", buf, pos)))
        pos += 4 * n_ids
    if pos + _TIMES.size > end:
        return None
    last_update, start_ts = _TIMES.unpack_from(buf, pos)
    pos += _TIMES.size
    partitions = tuple(items)
    if shared is not None and partitions:
        partitions = shared.setdefault(partitions, partitions)
    return TransactionLogValue(
        version=0, producer_id=producer_id, producer_epoch=producer_epoch, transaction_timeout_ms=timeout_ms,
        status=_STATUS.get(status_raw, status_raw), partitions=partitions, last_update_timestamp_ms=last_update,
        start_timestamp_ms=start_ts, unknown_tags=(), partition_unknown_tags=(), utf8_replaced=False,
        trailing_bytes=end - pos, previous_producer_id=-1, next_producer_id=-1, client_transaction_version=0,
        next_producer_epoch=-1,
    )


def _decode_value(buf, shared: dict | None = None) -> TransactionLogValue:
    end = len(buf)
    if end >= 2 and buf[0] == 0 and buf[1] == 0:  # version 0
        fast = _value_v0(buf, end, shared)
        if fast is not None:
            return fast
    version, pos = read_int16(buf, 0, end, _E)
    if version not in VALUE_VERSIONS:
        raise _E(f"Can't read version {version} of TransactionLogValue", position=0)
    flexible = version >= 1
    if pos + _HEAD.size <= end:  # (a short value: field by field below, to say which field ends where)
        producer_id, producer_epoch, timeout_ms, status_raw = _HEAD.unpack_from(buf, pos)
        pos += _HEAD.size
    else:
        producer_id, pos = read_int64(buf, pos, end, _E)
        producer_epoch, pos = read_int16(buf, pos, end, _E)
        timeout_ms, pos = read_int32(buf, pos, end, _E)
        status_raw, pos = read_int8(buf, pos, end, _E)
    partitions, elem_tags, replaced, pos = _read_partitions(buf, pos, end, flexible)
    if shared is not None and partitions:
        partitions = shared.setdefault(partitions, partitions)
    if pos + _TIMES.size <= end:
        last_update, start_ts = _TIMES.unpack_from(buf, pos)
        pos += _TIMES.size
    else:
        last_update, pos = read_int64(buf, pos, end, _E)
        start_ts, pos = read_int64(buf, pos, end, _E)
    tagged = {"previous_producer_id": -1, "next_producer_id": -1, "client_transaction_version": 0,
              "next_producer_epoch": -1}
    unknown: list[TaggedField] = []
    if flexible:
        fields, pos = _read_tag_section(buf, pos, end)
        for field, at in fields:
            _apply_tag(field, tagged, unknown, at)
    try:
        status: TransactionStatus | int = TransactionStatus(status_raw)
    except ValueError:
        status = status_raw
    return TransactionLogValue(
        version=version,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        transaction_timeout_ms=timeout_ms,
        status=status,
        partitions=partitions,
        last_update_timestamp_ms=last_update,
        start_timestamp_ms=start_ts,
        unknown_tags=tuple(unknown),
        partition_unknown_tags=elem_tags,
        utf8_replaced=replaced,
        trailing_bytes=end - pos,
        **tagged,
    )


def _apply_tag(field: TaggedField, tagged: dict, unknown: list[TaggedField], at: int) -> None:
    known = _KNOWN_TAGS.get(field.tag)
    if known is not None:
        name, size = known
        if len(field.data) != size:
            raise _E(f"tagged field {field.tag} ({name}) has size {len(field.data)}, expected {size}",
                     position=at)
        tagged[name] = int.from_bytes(field.data, "big", signed=True)
    elif field.tag == TAG_NEXT_PRODUCER_EPOCH and len(field.data) == 2:
        tagged["next_producer_epoch"] = int.from_bytes(field.data, "big", signed=True)
    else:
        unknown.append(field)


# --------------------------------------------------------------------------- partition of an id


def java_string_hash(s: str) -> int:
    """``java.lang.String.hashCode``: ``31*h + c`` over UTF-16 code units, int32 wrap-around."""
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return _signed32(h)


def java_utils_abs(n: int) -> int:
    """Kafka ``Utils.abs``: ``Integer.MIN_VALUE`` maps to 0 (not ``& 0x7fffffff``)."""
    return 0 if n == -0x8000_0000 else abs(n)


def transaction_partition_for(transactional_id: str, partition_count: int) -> int:
    """The ``__transaction_state`` partition owning ``transactional_id`` (Kafka's
    ``TransactionStateManager.partitionFor``)."""
    if partition_count <= 0:
        raise ValueError(f"partition_count must be positive, got {partition_count}")
    return java_utils_abs(java_string_hash(transactional_id)) % partition_count
