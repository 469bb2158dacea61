"""The export tables are their row kinds' declarations (pipeline/export_rows.py), and the rows follow them.

``batches`` is built on the executors as tuples, for speed, not as :class:`BatchColumns`: every kind of frame
(v2 plain, idempotent, transactional, compressed, COMMIT and ABORT markers, a delete horizon, a failed CRC on
a data and on a control batch; legacy magic 0 and 1, plain and compressed wrappers, a failed CRC) is held here
to the row built by keyword from the same frame and written by :func:`export_values`, and the frames checked
tell every two columns apart, so that a tuple whose columns are reordered, or one dropped, fails. The driver's
tables are built by keyword; their columns are their row kinds' in declared order."""

from __future__ import annotations

import shutil
from itertools import combinations
from pathlib import Path

import pytest

from fixtures import scenarios
from forensics.codec import legacy
from forensics.codec.compression import codec_name
from forensics.codec.control import read_control_batch
from forensics.columns import export_columns, export_values
from forensics.errors import ForensicsError
from forensics.findings import Finding
from forensics.io.segment import SegmentWalk
from forensics.pipeline.export_rows import (
    BATCHES,
    COORDINATOR_RECORDS,
    PARTITIONS,
    PRODUCER_STATES,
    TABLES,
    TRANSACTIONS,
    BatchColumns,
    CoordinatorRecordRow,
    PartitionRow,
    ProducerStateRow,
    ReplicaColumns,
    TransactionTableRow,
    batch_rows,
)

REPO = Path(__file__).resolve().parents[2]
ROW_KINDS = {BATCHES: BatchColumns, TRANSACTIONS: TransactionTableRow, PRODUCER_STATES: ProducerStateRow,
             PARTITIONS: PartitionRow, COORDINATOR_RECORDS: CoordinatorRecordRow}


def test_every_table_is_its_row_kinds_columns_in_declared_order() -> None:
    assert {t.name for t in TABLES} == {t.name for t in ROW_KINDS} | {"findings"}
    for table, kind in [*ROW_KINDS.items(), (TABLES[-1], Finding)]:
        declared = [(name, typ.rstrip("!"), not typ.endswith("!")) for name, typ in export_columns(kind)]
        assert [(c.name, c.type, c.nullable) for c in table.columns] == declared, table.name


def test_the_replica_columns_are_one_declaration() -> None:
    replica = export_columns(ReplicaColumns)
    for kind in (TransactionTableRow, ProducerStateRow, PartitionRow):
        assert export_columns(kind)[:len(replica)] == replica
    assert export_columns(BatchColumns)[1:1 + len(replica)] == replica  # after the segment's path


# -- batches: the executors' tuples against the row built by keyword ----------------------------------


def _control(buf, frame) -> tuple:
    if not (frame.header.is_control and frame.crc_ok):
        return None, None
    try:
        control = read_control_batch(buf, frame.position, frame.header)
    except ForensicsError:
        return None, None
    if control is None:
        return None, None
    return control.key.type_name, None if control.marker is None else control.marker.coordinator_epoch


def _by_keyword(path: str, base: int | None, context: tuple, buf, frame) -> tuple:
    """The row of one frame, each column named."""
    replica_path, log_dir, broker_id, topic, partition, status = context
    where = dict(path=path, replica_path=replica_path, log_dir=log_dir, broker_id=broker_id, topic=topic,
                 partition=partition, partition_status=status, segment_base_offset=base, position=frame.position,
                 size=frame.size, magic=frame.magic, crc_valid=bool(frame.crc_ok))
    if frame.magic == 2:
        h = frame.header
        control_type, coordinator_epoch = _control(buf, frame)
        row = BatchColumns(
            **where, base_offset=h.base_offset, last_offset=h.last_offset, records_count=h.records_count,
            crc=h.crc, attributes=h.attributes, compression_type=codec_name(h.codec),
            timestamp_type=h.timestamp_type, is_transactional=h.is_transactional, is_control=h.is_control,
            partition_leader_epoch=h.partition_leader_epoch, base_timestamp=h.base_timestamp,
            max_timestamp=h.max_timestamp, delete_horizon_ms=h.delete_horizon_ms, producer_id=h.producer_id,
            producer_epoch=h.producer_epoch, base_sequence=h.base_sequence, last_sequence=h.last_sequence,
            control_type=control_type, coordinator_epoch=coordinator_epoch)
    else:
        pos = frame.position
        attributes = buf[pos + legacy.ATTRIBUTES_OFFSET]
        row = BatchColumns(
            **where, base_offset=frame.base_offset, last_offset=frame.last_offset, records_count=1,
            crc=legacy.CRC.unpack_from(buf, pos + legacy.CRC_OFFSET)[0], attributes=attributes,
            compression_type=codec_name(attributes & legacy.CODEC_MASK),
            timestamp_type=legacy.timestamp_type(frame.magic, attributes) if frame.magic == 1 else None,
            is_transactional=False, is_control=False, partition_leader_epoch=None, base_timestamp=None,
            max_timestamp=legacy.entry_timestamp(buf, pos, frame.magic) if frame.magic == 1 else None,
            delete_horizon_ms=None, producer_id=None, producer_epoch=None, base_sequence=None, last_sequence=None,
            control_type=None, coordinator_epoch=None)
    return export_values(row)


def _broken_copies(segments: list[Path], out: Path) -> list[Path]:
    """Copies of segments with a byte flipped inside the CRC's range of a data batch, of a marker and of a
    legacy entry (their framing sound: each is still a row, ``crcValid`` false)."""
    made = []
    for seg in segments:
        data = bytearray(seg.read_bytes())
        with SegmentWalk(str(seg), base_offset=int(seg.stem)) as walk:
            frames = list(walk.frames())
        chosen = [f for f in frames if f.magic < 2][:1]
        chosen += [f for f in frames if f.magic == 2 and f.header.is_control][:1]
        chosen += [f for f in frames if f.magic == 2 and not f.header.is_control][:1]
        for f in chosen:
            data[f.position + f.size - 1] ^= 0xFF  # the last byte of the entry: a record's, under the CRC
        target = out / seg.parent.name / seg.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(bytes(data))
        made.append(target)
    return made


@pytest.fixture(scope="module")
def segments(tmp_path_factory) -> list[Path]:
    base = tmp_path_factory.mktemp("export-rows")
    found = sorted((REPO / "fixtures" / "example-disk").rglob("*.log"))
    found += sorted((REPO / "fixtures" / "real" / "kraft-tv2" / "disk").rglob("*.log"))
    for name in ("legacy-then-v2", "compaction"):
        found += sorted(scenarios.build(name, base / name).rglob("*.log"))
    mixed = [p for p in found if p.parent.name.startswith("legacy-0")]
    shutil.rmtree(base / "broken", ignore_errors=True)
    found += _broken_copies(mixed, base / "broken")
    return [p for p in found if p.stat().st_size]


def _rows(segments: list[Path]) -> list[tuple[tuple, tuple]]:
    """(the executors' row, the row built by keyword) of every frame of the segments."""
    out = []
    for i, seg in enumerate(segments):
        context = (str(seg.parent), f"/logs/{i}", i, seg.parent.name.rsplit("-", 1)[0], i + 100, "live")
        got = list(batch_rows(str(seg), int(seg.stem), context))
        with SegmentWalk(str(seg), base_offset=int(seg.stem)) as walk:
            expected = [_by_keyword(str(seg), int(seg.stem), context, walk.buf, f) for f in walk.frames()]
        assert len(got) == len(expected), seg
        out += zip(got, expected)
    return out


def test_every_batch_row_is_the_declared_row_built_by_keyword(segments) -> None:
    rows = _rows(segments)
    for got, expected in rows:
        assert len(got) == len(BATCHES.columns)
        assert [(type(v), v) for v in got] == [(type(v), v) for v in expected], [
            c.name for c, a, b in zip(BATCHES.columns, got, expected) if (type(a), a) != (type(b), b)]
    # every kind of frame was among them
    named = [dict(zip(BATCHES.names, expected)) for _, expected in rows]
    kinds = {(r["magic"], r["compressionType"] != "none", r["isTransactional"], r["isControl"], r["controlType"],
              r["crcValid"]) for r in named}
    assert {(0, False, False, False, None, True), (0, True, False, False, None, True),
            (1, False, False, False, None, True), (1, True, False, False, None, True),
            (2, False, False, False, None, True), (2, False, True, False, None, True),
            (2, False, True, True, "COMMIT", True), (2, False, True, True, "ABORT", True),
            (2, False, True, True, None, False)} <= kinds, kinds
    assert any(not r["crcValid"] and r["magic"] < 2 for r in named)
    assert any(not r["crcValid"] and r["magic"] == 2 and not r["isControl"] for r in named)
    assert any(r["compressionType"] != "none" and r["magic"] == 2 for r in named)
    assert any(r["deleteHorizonMs"] is not None for r in named)
    assert any(r["producerId"] not in (None, -1) and not r["isTransactional"] for r in named)  # idempotent


def test_the_frames_checked_tell_every_two_columns_apart(segments) -> None:
    """For any two columns some row holds different values in them, so a tuple with two columns swapped
    (or one dropped, shifting the rest) differs from the declared row."""
    rows = [expected for _, expected in _rows(segments)]
    alike = [(BATCHES.names[i], BATCHES.names[j]) for i, j in combinations(range(len(BATCHES.columns)), 2)
             if all(type(r[i]) is type(r[j]) and r[i] == r[j] for r in rows)]
    assert alike == []
