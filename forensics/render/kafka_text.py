"""``--format text`` of find-hanging, list, describe and describe-producers: the table
``kafka-transactions.sh`` 4.1 prints (``TransactionsCommand``: each command's ``HEADERS`` and row
values, printed by ``ToolsUtils.prettyPrintTable``), its columns only, so that a script written for
Kafka's tool reads ours. Our own columns and reasons are in the table, CSV, JSON and ``--wide``.

Value forms are the tool's: numbers as ``String.valueOf`` writes them, an absent value as ``None``
(describe's ``CurrentTransactionStartTimeMs``, describe-producers' ``CurrentTransactionStartOffset``),
find-hanging's ``Duration(min)`` as ``TimeUnit.MILLISECONDS.toMinutes`` (whole minutes, toward zero;
against the as-of time where Kafka's tool reads its clock), a partition set comma-joined.

Rows come in the order Kafka's tool would list them where that order is the iteration order of a Java
``HashMap``/``HashSet`` the tool or the broker builds (describe's partition set, describe-producers'
producers): :func:`java_hash_order`. That order depends only on the hashes, except between keys of one
bucket (insertion order) and after a map has held more entries than it holds now (a larger table):
there ours follows the order of the evidence. ``list`` (the coordinators' caches, in their own order)
and ``find-hanging`` (the order of the partitions the tool asked) keep ours.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, TypeVar
from collections.abc import Callable, Iterable, Mapping, Sequence

from forensics.columns import kafka_columns

from forensics.render.rows import KafkaColumn, KafkaLayout, plain
from forensics.report.rows import DescribeRow, HangingRow, ProducerRow, TransactionRow

T = TypeVar("T")
_INT = 1 << 32


def _int32(value: int) -> int:
    value &= _INT - 1
    return value - _INT if value >= 1 << 31 else value


def java_string_hash(text: str) -> int:
    """``String.hashCode()``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, in 32 bits."""
    h = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] | data[i + 1] << 8)) & (_INT - 1)
    return _int32(h)


def java_long_hash(value: int) -> int:
    """``Long.hashCode()``: the two 32-bit halves xor-ed."""
    value &= (1 << 64) - 1
    return _int32(value ^ (value >> 32))


def topic_partition_hash(topic: str, partition: int) -> int:
    """``TopicPartition.hashCode()``: ``31 * (31 + partition) + topic.hashCode()``."""
    return _int32(31 * _int32(31 + partition) + java_string_hash(topic))


def java_hash_order(items: Iterable[T], hash_of: Callable[[T], int]) -> list[T]:
    """The iteration order of a ``java.util.HashMap`` (or ``HashSet``) into which ``items`` were put in
    this order: by bucket (``(h ^ h >>> 16) & (capacity - 1)``), then insertion order; capacity 16,
    doubled past 0.75 full or when a bucket reaches 9 entries below capacity 64 (``treeifyBin``)."""
    capacity, size = 16, 0
    buckets: list[list[Any]] = [[] for _ in range(capacity)]

    def resize() -> None:
        nonlocal capacity, buckets
        capacity *= 2
        old, buckets = buckets, [[] for _ in range(capacity)]
        for entries in old:  # a bucket splits in two, each keeping its order
            for entry in entries:
                buckets[entry[0] & (capacity - 1)].append(entry)

    for item in items:
        h = hash_of(item) & (_INT - 1)
        h ^= h >> 16
        bucket = buckets[h & (capacity - 1)]
        bucket.append((h, item))
        size += 1
        if len(bucket) >= 9 and capacity < 64:
            resize()
        if size > capacity * 3 // 4:
            resize()
    return [item for entries in buckets for _, item in entries]


def _value(attr: str, absent: str = "None") -> Callable[[Any], str]:
    """A row's field ``attr`` as Kafka writes it; ``absent``: what the tool prints where there is none."""
    return lambda row: absent if getattr(row, attr) is None else plain(getattr(row, attr))


def declared_layout(kind: type, order: Callable[[Sequence[Any]], Sequence[Any]] | None = None,
                    cells: Mapping[str, Callable[[Any], str]] = MappingProxyType({})) -> KafkaLayout:
    """The Kafka tool table a row kind declares (:func:`forensics.columns.kafka_columns`): each column's
    value as the tool writes it, or ``cells``' text for a header named there; ``order``: the tool's row
    order."""
    columns = tuple(KafkaColumn(c.header, cells.get(c.header) or _value(c.attr, c.absent)) for c in kafka_columns(kind))
    return KafkaLayout(columns) if order is None else KafkaLayout(columns, order)


def _split(name: str) -> tuple:
    topic, _, partition = name.rpartition("-")
    return (topic, int(partition)) if partition.isdigit() else (name, 0)


def _partition_set(row: DescribeRow) -> str:
    """describe's ``TopicPartitions``: the client's ``HashSet<TopicPartition>``, comma-joined."""
    names = [str(p) for p in row.topic_partitions or ()]
    return ",".join(java_hash_order(names, lambda n: topic_partition_hash(*_split(n))))


def _producer_order(rows: Sequence[ProducerRow]) -> list[ProducerRow]:
    """The broker's ``HashMap<Long, ProducerStateEntry>`` of the partition, as describe-producers lists it."""
    return java_hash_order(rows, lambda r: java_long_hash(r.producer_id or 0))


# FindHangingTransactionsCommand.HEADERS and printHangingTransactions (declared with the row:
# forensics.report.rows.HangingRow; Duration(min) is its durationMin, whole minutes as toMinutes)
HANGING_TEXT = declared_layout(HangingRow)

# ListTransactionsCommand.HEADERS, DescribeTransactionsCommand.HEADERS (declared with the rows:
# forensics.report.rows)
LIST_TEXT = declared_layout(TransactionRow)
DESCRIBE_TEXT = declared_layout(DescribeRow, cells={"TopicPartitions": _partition_set})

# DescribeProducersCommand.HEADERS (declared with the row: forensics.report.rows.ProducerRow)
PRODUCERS_TEXT = declared_layout(ProducerRow, _producer_order)
