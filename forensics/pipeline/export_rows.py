"""The tables ``export`` writes: their columns, declared once, and the executor-side rows of ``batches``.

Each :class:`Table` lists its columns in order with a Spark SQL type and whether it can be null,
derived from the one frozen dataclass that declares a row of it (its fields' ``column(export=...)``,
:func:`forensics.columns.export_columns`); ``docs/export.md`` gives every column's meaning (a test
keeps the two in step). Both writers derive their schema from these declarations and nothing else:
Spark's (``pipeline/export.spark_schema``) and pyarrow's (``pipeline/export_local.arrow_schema``), so
the two engines write the same Parquet types. Names are lowerCamelCase (the fields' names,
:func:`forensics.columns.column_name`), Kafka's own where Kafka has one (``DumpLogSegments``,
``ProducerStateEntry``, ``TransactionMetadata``), as in the JSON output of the other commands. Times
are epoch milliseconds (``long``), offsets and byte positions ``long``, raw wire values keep Kafka's
widths.

:func:`batch_rows` runs on the executors: one row per record batch header of one segment, framed
exactly as ``scan`` frames it (CRC verified, record bodies untouched except the one record of a
control batch), so a table of any size never passes through the driver. Its rows are tuples in
the order :class:`BatchColumns` declares, not instances of it: a dataclass built by keyword per batch
and its :func:`~forensics.columns.export_values` make ``batch_rows`` five to six times slower (12
against 2 us a batch over a generated disk of 63,537 batches; read back with one ``attrgetter``
instead, two and a half times); tests/pipeline/test_export_rows.py holds every kind of frame's tuple to
the row built by keyword. The driver's tables are few rows and are built by keyword
(:mod:`forensics.report.export`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import field
from forensics.dataclass_fast import dataclass
from typing import NamedTuple

from forensics.codec import legacy
from forensics.codec.compression import codec_name
from forensics.codec.control import read_control_batch
from forensics.columns import JsonRow, column, export_columns
from forensics.errors import ForensicsError, InputError
from forensics.findings import Finding
from forensics.io.frames import Frame, V2Frame
from forensics.io.segment import SegmentWalk
from forensics.pipeline.plan import UnitKind


class Column(NamedTuple):
    name: str
    type: str  # Spark SQL: string, boolean, byte, short, int, long, array<short>, array<string>
    nullable: bool = True

    @property
    def element(self) -> tuple[str, bool]:
        """The simple type and whether the column is an array of it (its elements never null):
        ``array<short>`` is ``("short", True)``."""
        if self.type.startswith("array<") and self.type.endswith(">"):
            return self.type[6:-1], True
        return self.type, False


class Table(NamedTuple):
    name: str
    columns: tuple[Column, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


def _cols(spec: str) -> tuple[Column, ...]:
    """``"name type, name type!"``: ``!`` marks a column that is never null."""
    out = []
    for item in spec.split(","):
        name, typ = item.split()
        out.append(Column(name, typ.rstrip("!"), not typ.endswith("!")))
    return tuple(out)


def _table_columns(kind: type) -> tuple[Column, ...]:
    """The columns a row kind declares for its export table (:func:`forensics.columns.export_columns`)."""
    return _cols(", ".join(f"{name} {typ}" for name, typ in export_columns(kind)))


@dataclass(frozen=True, slots=True)
class ReplicaColumns(JsonRow):
    """The first columns of every table of a partition replica's rows: which replica (the rows below add
    theirs; :class:`BatchColumns` has them after the segment's ``path``)."""

    replica_path: str = field(metadata=column(export="string"))
    log_dir: str | None = field(metadata=column(export="string"))
    broker_id: int | None = field(metadata=column(export="int"))
    topic: str = field(metadata=column(export="string"))
    partition: int = field(metadata=column(export="int"))


@dataclass(frozen=True, slots=True)
class BatchColumns(JsonRow):
    """One record batch header of a segment (a legacy entry: its one wrapper or record) as ``scan`` frames it: a
    row of the ``batches`` table. The executors build these rows as tuples in this order (:func:`batch_rows`,
    held to this declaration by tests/pipeline/test_export_rows.py); the replica's columns after ``path`` are
    :class:`ReplicaColumns`' (the same test holds them to it)."""

    path: str = field(metadata=column(export="string!"))
    replica_path: str | None = field(metadata=column(export="string"))
    log_dir: str | None = field(metadata=column(export="string"))
    broker_id: int | None = field(metadata=column(export="int"))
    topic: str | None = field(metadata=column(export="string"))
    partition: int | None = field(metadata=column(export="int"))
    partition_status: str | None = field(metadata=column(export="string"))
    segment_base_offset: int | None = field(metadata=column(export="long"))
    position: int = field(metadata=column(export="long!"))
    size: int = field(metadata=column(export="long!"))
    magic: int = field(metadata=column(export="byte!"))
    base_offset: int = field(metadata=column(export="long!"))
    last_offset: int = field(metadata=column(export="long!"))
    records_count: int = field(metadata=column(export="int!"))
    crc: int = field(metadata=column(export="long!"))
    crc_valid: bool = field(metadata=column(export="boolean!"))
    attributes: int = field(metadata=column(export="short!"))
    compression_type: str = field(metadata=column(export="string!"))
    timestamp_type: str | None = field(metadata=column(export="string"))
    is_transactional: bool = field(metadata=column(export="boolean!"))
    is_control: bool = field(metadata=column(export="boolean!"))
    partition_leader_epoch: int | None = field(metadata=column(export="int"))  # the v2 fields: None for legacy
    base_timestamp: int | None = field(metadata=column(export="long"))
    max_timestamp: int | None = field(metadata=column(export="long"))  # legacy magic 1: the entry's timestamp
    delete_horizon_ms: int | None = field(metadata=column(export="long"))
    producer_id: int | None = field(metadata=column(export="long"))
    producer_epoch: int | None = field(metadata=column(export="short"))
    base_sequence: int | None = field(metadata=column(export="int"))
    last_sequence: int | None = field(metadata=column(export="int"))
    control_type: str | None = field(metadata=column(export="string"))  # a control batch whose record decodes
    coordinator_epoch: int | None = field(metadata=column(export="int"))  # an end-transaction marker's


BATCHES = Table("batches", _table_columns(BatchColumns))


@dataclass(frozen=True, slots=True)
class TransactionTableRow(ReplicaColumns):
    """One transaction of a producer of a data partition replica (a span of the fold ``fold`` names: the
    full history, or the broker's snapshot + replay), as ``describe-producers`` shows it: a row of the
    ``transactions`` table (:func:`forensics.report.export.transaction_rows`)."""

    producer_id: int = field(metadata=column(export="long!"))
    fold: str = field(metadata=column(export="string!"))  # history | broker
    first_offset: int = field(metadata=column(export="long!"))
    last_data_offset: int | None = field(metadata=column(export="long"))
    data_epochs: list[int] = field(metadata=column(export="array<short>!"))
    batches: int = field(metadata=column(export="long!"))
    records: int = field(metadata=column(export="long!"))
    bytes: int = field(metadata=column(export="long!"))
    first_timestamp: int | None = field(metadata=column(export="long"))
    last_timestamp: int | None = field(metadata=column(export="long"))
    start_path: str | None = field(metadata=column(export="string"))  # where its first batch lies
    start_position: int | None = field(metadata=column(export="long"))
    is_open: bool = field(metadata=column(export="boolean!"))
    marker_offset: int | None = field(metadata=column(export="long"))  # its end marker's (None: open)
    outcome: str | None = field(metadata=column(export="string"))
    marker_epoch: int | None = field(metadata=column(export="short"))
    coordinator_epoch: int | None = field(metadata=column(export="int"))
    marker_timestamp: int | None = field(metadata=column(export="long"))
    marker_path: str | None = field(metadata=column(export="string"))
    marker_position: int | None = field(metadata=column(export="long"))
    from_snapshot: bool = field(metadata=column(export="boolean!"))


TRANSACTIONS = Table("transactions", _table_columns(TransactionTableRow))


@dataclass(frozen=True, slots=True)
class ProducerStateRow(ReplicaColumns):
    """One producer of a data partition replica, as its state was rebuilt (``ProducerStateEntry``): a row of
    the ``producer_states`` table (:func:`forensics.report.export.producer_state_rows`)."""

    producer_id: int = field(metadata=column(export="long!"))
    producer_epoch: int = field(metadata=column(export="short!"))
    coordinator_epoch: int = field(metadata=column(export="int!"))  # as DescribeProducers reports it (-1: none)
    last_sequence: int = field(metadata=column(export="int!"))
    last_offset: int = field(metadata=column(export="long!"))
    offset_delta: int = field(metadata=column(export="int!"))
    last_timestamp: int = field(metadata=column(export="long!"))
    current_txn_first_offset: int | None = field(metadata=column(export="long"))


PRODUCER_STATES = Table("producer_states", _table_columns(ProducerStateRow))


@dataclass(frozen=True, slots=True)
class PartitionRow(ReplicaColumns):
    """One data partition replica's figures as its state was rebuilt: a row of the ``partitions`` table,
    the state views' partition row (:func:`forensics.report.state.partition_state_rows`)."""

    log_start_offset: int = field(metadata=column(export="long!"))
    log_end_offset: int = field(metadata=column(export="long!"))
    high_watermark: int | None = field(metadata=column(export="long"))  # None: not known (no checkpoint names it)
    first_unstable_offset: int | None = field(metadata=column(export="long"))
    last_stable_offset: int = field(metadata=column(export="long!"))
    leader_epoch: int | None = field(metadata=column(export="int"))
    open_transactions: int = field(metadata=column(export="int!"))
    producers: int = field(metadata=column(export="int!"))
    max_timestamp: int | None = field(metadata=column(export="long"))
    snapshot_path: str | None = field(metadata=column(export="string"))


PARTITIONS = Table("partitions", _table_columns(PartitionRow))

@dataclass(frozen=True, slots=True)
class CoordinatorRecordRow(JsonRow):
    """One record of the ``__transaction_state`` replica a partition's coordinator loads
    (``TransactionLog``'s key and value; a tombstone has no value): a row of the ``coordinator_records``
    table (:func:`forensics.report.export.coordinator_rows`)."""

    transaction_state_partition: int = field(metadata=column(export="int!"))
    replica_path: str = field(metadata=column(export="string!"))
    broker_id: int | None = field(metadata=column(export="int"))
    path: str = field(metadata=column(export="string!"))  # the segment and the record's batch in it
    position: int = field(metadata=column(export="long!"))
    offset: int = field(metadata=column(export="long!"))
    timestamp: int = field(metadata=column(export="long!"))
    coordinator_epoch: int = field(metadata=column(export="int!"))  # the batch's partition leader epoch
    transactional_id: str = field(metadata=column(export="string!"))
    is_tombstone: bool = field(metadata=column(export="boolean!"))
    transaction_state: str = field(metadata=column(export="string!"))
    # the value's columns: None (the default) for a tombstone, which has no value
    value_version: int | None = field(default=None, metadata=column(export="short"))
    producer_id: int | None = field(default=None, metadata=column(export="long"))
    producer_epoch: int | None = field(default=None, metadata=column(export="short"))
    transaction_timeout_ms: int | None = field(default=None, metadata=column(export="int"))
    topic_partitions: list[str] | None = field(default=None, metadata=column(export="array<string>"))  # topic-N
    last_update_time_ms: int | None = field(default=None, metadata=column(export="long"))
    start_time_ms: int | None = field(default=None, metadata=column(export="long"))
    previous_producer_id: int | None = field(default=None, metadata=column(export="long"))
    next_producer_id: int | None = field(default=None, metadata=column(export="long"))
    next_producer_epoch: int | None = field(default=None, metadata=column(export="short"))
    client_transaction_version: int | None = field(default=None, metadata=column(export="short"))


COORDINATOR_RECORDS = Table("coordinator_records", _table_columns(CoordinatorRecordRow))

FINDINGS = Table("findings", _table_columns(Finding))

TABLES = (BATCHES, TRANSACTIONS, PRODUCER_STATES, PARTITIONS, COORDINATOR_RECORDS, FINDINGS)

# The version of the columns above, written to ``_export.json`` (``schemaVersion``): one more whenever a
# column is added, removed, renamed or changes type or nullability (tests/cli/test_export_local.py holds a
# digest of the declarations to it).
SCHEMA_VERSION = 1

# -- batches: rows on the executors ------------------------------------------------------------------

SEGMENT_KINDS = (UnitKind.EVENTS, UnitKind.TXNLOG, UnitKind.STATS)  # the units whose segments are batches rows

Context = tuple[str | None, str | None, int | None, str | None, int | None, str | None]
NO_CONTEXT: Context = (None, None, None, None, None, None)  # a single file given on the command line


def _control(buf, frame: V2Frame) -> tuple[str | None, int | None]:
    """The control record type of a control batch (and the coordinator epoch of an end-transaction
    marker); (None, None) when its record does not decode (the findings table says why)."""
    try:
        control = read_control_batch(buf, frame.position, frame.header)
    except ForensicsError:
        return None, None
    if control is None:
        return None, None
    return control.key.type_name, control.marker.coordinator_epoch if control.marker is not None else None


def _v2_row(head: tuple, buf, frame: V2Frame) -> tuple:
    """A v2 batch's :class:`BatchColumns` after ``head`` (its first ten, ``path`` to ``size``), as a tuple."""
    h = frame.header
    control, coordinator_epoch = _control(buf, frame) if h.is_control and frame.crc_ok else (None, None)
    return head + (
        2, h.base_offset, h.last_offset, h.records_count, h.crc, bool(frame.crc_ok), h.attributes,
        codec_name(h.codec), h.timestamp_type, h.is_transactional, h.is_control, h.partition_leader_epoch,
        h.base_timestamp, h.max_timestamp, h.delete_horizon_ms, h.producer_id, h.producer_epoch,
        h.base_sequence, h.last_sequence, control, coordinator_epoch)


def _legacy_row(head: tuple, buf, frame: Frame) -> tuple:
    """A legacy entry's :class:`BatchColumns` after ``head``, as a tuple: one record, no v2 field."""
    pos, magic = frame.position, frame.magic
    attrs = buf[pos + legacy.ATTRIBUTES_OFFSET]
    ts = legacy.entry_timestamp(buf, pos, magic) if magic == 1 else None
    ts_type = legacy.timestamp_type(magic, attrs) if magic == 1 else None
    return head + (
        magic, frame.base_offset, frame.last_offset, 1, legacy.CRC.unpack_from(buf, pos + legacy.CRC_OFFSET)[0],
        bool(frame.crc_ok), attrs, codec_name(attrs & legacy.CODEC_MASK), ts_type, False, False, None, None, ts, None,
        None, None, None, None, None, None)


def batch_rows(path: str, base_offset: int | None, context: Context) -> Iterator[tuple]:
    """One :data:`BATCHES` row (:class:`BatchColumns`' values, in its order) per frame of the segment at
    ``path``. A file that cannot be opened gives no row (its ``unreadable_file`` finding is in the
    findings table)."""
    try:
        walk = SegmentWalk(path, base_offset=base_offset)
    except InputError:
        return
    replica, log_dir, broker_id, topic, partition, status = context
    with walk:
        buf = walk.buf
        for frame in walk.frames():
            head = (path, replica, log_dir, broker_id, topic, partition, status, base_offset, frame.position,
                    frame.size)
            yield _v2_row(head, buf, frame) if frame.magic == 2 else _legacy_row(head, buf, frame)
