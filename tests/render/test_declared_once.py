"""A column added to a row's declaration reaches every format of that row with no other file touched: its
JSON key, its CSV column, its place in Kafka's tool table, its cell in the ``--format table`` screens (at
the screen's width and with ``--wide``), its export column and its report label all come from the field's
``column(...)``. Shown on each row kind made again with one field more, rendered by the same functions the
commands use; and the commands' own column lists are those functions' answers for the kinds as they are.
So for dump's JSON objects: a field added to a dump row's dataclass, or a key added to the declared object of
a batch, a record or an index entry (``report/dump_rows.JSON_OBJECTS``), is in that row's JSON object."""

from __future__ import annotations

import io
import json
from dataclasses import field, fields
from operator import attrgetter
from pathlib import Path

import pytest

from forensics.columns import Cell, Label, column, columns, csv_columns, export_columns, kafka_columns, screen_columns
from forensics.dataclass_fast import dataclass
from forensics.findings import Finding, FindingKind
from forensics.pipeline.export_rows import (
    BATCHES,
    COORDINATOR_RECORDS,
    FINDINGS,
    PARTITIONS,
    PRODUCER_STATES,
    TRANSACTIONS,
    BatchColumns,
    CoordinatorRecordRow,
    PartitionRow,
    ProducerStateRow,
    TransactionTableRow,
)
from forensics.render import dump_json, scan_render, state_render, state_screens
from forensics.render.dump_json import json_builder, row_obj
from forensics.render.kafka_text import LIST_TEXT, PRODUCERS_TEXT, declared_layout
from forensics.render.machine_format import LIST
from forensics.render.row_screens import declared_fields, print_rows
from forensics.render.rows import render_rows
from forensics.render.table_fit import fit_console
from forensics.report.dump import DumpOptions, dump_file, expand_rows
from forensics.report.dump_rows import (
    AS_IS, JSON_OBJECTS, ByTag, FileStart, JsonObject, Key, KraftSnapshotStart, LogStart, NoteRow,
    TrailingBytes, Variants, THE_ROW, own_keys)
from forensics.report.rows import (
    DescribeRow, HangingRow, HistoryRow, ProducerRow, RowEvidence, SpanRow, TransactionRow)
from forensics.report.dump_rows import FindingRow
from forensics.report.scan import LogDirSummary, PartitionSummary
from forensics.state.inputs import SegmentSummary

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EXAMPLE = FIXTURES / "example-disk"
REAL_TV2 = FIXTURES / "real" / "kraft-tv2" / "disk"
KINDS = (HangingRow, RowEvidence, ProducerRow, SpanRow, TransactionRow, DescribeRow, HistoryRow, PartitionRow,
         ProducerStateRow, LogDirSummary, PartitionSummary, SegmentSummary)
ADDED = column(csv=99, kafka=(99, "AddedFact"), export="long", table=Cell(99, "AddedFact"),
               wide=Cell(99, "AddedFact"), label=Label("an added fact"))


def _with_added(kind: type) -> type:
    """``kind`` with one field more, declared as a developer would add it."""
    ns = {"__annotations__": {"added_fact": "int"}, "added_fact": field(default=41, metadata=ADDED)}
    return dataclass(frozen=True, slots=True)(type(f"Added{kind.__name__}", (kind,), ns))


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_an_added_field_is_a_column_of_every_format(kind):
    added = _with_added(kind)
    assert [c.key for c in columns(added)] == [c.key for c in columns(kind)] + ["addedFact"]
    assert csv_columns(added) == csv_columns(kind) + ("addedFact",)
    assert kafka_columns(added)[-1].header == "AddedFact"
    assert export_columns(added) == export_columns(kind) + (("addedFact", "long"),)
    for wide in (False, True):
        assert screen_columns(added, wide)[-1] == ("added_fact", Cell(99, "AddedFact"))


def _list_row(**extra) -> TransactionRow:
    return _with_added(TransactionRow)(
        transactional_id="app-1", coordinator=1, producer_id=2000, producer_epoch=3, transaction_state="Ongoing",
        transaction_timeout_ms=60000, current_transaction_start_time_ms=1_700_000_000_000,
        topic_partitions=["orders-0"], last_update_time_ms=1_700_000_000_500, coordinator_epoch=0,
        transaction_state_partition=4, **extra)


def _rendered(fmt: str, rows) -> str:
    kind = type(rows[0])
    out = io.StringIO()

    def screen(rows, out):
        print_rows(fit_console(out, None), None, declared_fields(kind, True, state_screens._TEXTS), rows, None)
    render_rows(fmt, LIST, rows, csv_columns(kind), out, text=declared_layout(kind), screen=screen)
    return out.getvalue()


def test_an_added_field_shows_in_json_jsonl_csv_text_and_the_table():
    rows = [_list_row(added_fact=41)]
    assert json.loads(_rendered("json", rows))["rows"][0]["addedFact"] == 41
    assert json.loads(_rendered("jsonl", rows).splitlines()[1])["addedFact"] == 41
    header, line = _rendered("csv", rows).splitlines()
    assert (header.split(",")[-1], line.split(",")[-1]) == ("AddedFact", "41")
    header, line = _rendered("text", rows).splitlines()
    assert (header.split("\t")[-2].strip(), line.split("\t")[-2].strip()) == ("AddedFact", "41")
    screen = _rendered("table", rows)
    assert "AddedFact" in screen and "41" in screen


def test_scan_json_and_its_tables_take_an_added_field():
    seg = _with_added(SegmentSummary)(path="/d/t-0/0.log", base_offset=0, size=10, added_fact=41)
    assert list(seg.as_json())[-1] == "addedFact" and seg.as_json()["addedFact"] == 41
    assert declared_fields(type(seg), False, scan_render._TEXTS)[-1].column.header == "AddedFact"


def test_the_commands_column_lists_are_the_declarations():
    assert state_render.LIST_TABLE == csv_columns(TransactionRow)
    assert state_render.HANGING_TABLE == csv_columns(HangingRow)
    assert [c.header for c in LIST_TEXT.columns] == [c.header for c in kafka_columns(TransactionRow)]
    assert [c.header for c in PRODUCERS_TEXT.columns] == [c.header for c in kafka_columns(ProducerRow)]
    assert PARTITIONS.names == tuple(k for k, _ in export_columns(PartitionRow))
    assert FINDINGS.names == tuple(k for k, _ in export_columns(Finding))
    assert PRODUCER_STATES.names == tuple(k for k, _ in export_columns(ProducerStateRow))
    assert TRANSACTIONS.names == tuple(k for k, _ in export_columns(TransactionTableRow))
    assert COORDINATOR_RECORDS.names == tuple(k for k, _ in export_columns(CoordinatorRecordRow))
    assert BATCHES.names == tuple(k for k, _ in export_columns(BatchColumns))
    assert [c.column.header for c in scan_render._FINDINGS] == [
        cell.header for _, cell in screen_columns(Finding)]


def test_every_field_of_a_finding_is_in_its_export_table_or_said_why_not():
    exported = {c.attr for c in columns(Finding) if c.spec.export is not None}
    assert {f.name for f in fields(Finding)} - exported == {"severity"}  # exported as level ("severity")
    assert "level" in exported


def test_an_added_field_of_a_finding_is_in_its_json_by_field_name_and_its_export_column_in_camel_case():
    added = _with_added(Finding)
    f = added(FindingKind.CRC_MISMATCH, "bad", "/d/t-0/0.log", 10, 20, added_fact=41)
    assert list(f.as_json()) == ["kind", "severity", "message", "path", "position", "end_position", "added_fact"]
    assert f.as_json()["added_fact"] == 41
    assert export_columns(added)[-1] == ("addedFact", "long")
    assert dump_json.row_obj(FindingRow(f))["added_fact"] == 41


def test_a_finding_json_leaves_out_what_its_declaration_says_it_may():
    plain = Finding(FindingKind.ZERO_FILL, "zeros", "/d/t-0/0.log", 5)
    assert plain.as_json() == {"kind": "zero_fill", "severity": "warning", "message": "zeros",
                               "path": "/d/t-0/0.log", "position": 5}
    assert type(plain.as_json()["kind"]) is str  # an enum as its value, as export writes it
    aggregate = Finding(FindingKind.ZERO_FILL, "zeros", None, 5, None, 1, 9, None, 7, 900)
    assert aggregate.as_json() == {"kind": "zero_fill", "severity": "warning", "message": "zeros", "position": 5,
                                   "first_offset": 1, "last_offset": 9, "count": 7, "last_position": 900}
    zero = Finding(FindingKind.ZERO_FILL, "zeros", "", 0, 0, 0, 0)  # a zero or an empty text is a value, not absent
    assert [k for k in zero.as_json() if k not in ("kind", "severity", "message")] == [
        "path", "position", "end_position", "first_offset", "last_offset"]


# -- dump: each row kind's JSON object is its declaration (report/dump_rows.JSON_OBJECTS) ---------------

DUMP_ROWS = {FileStart: {"path": "/d/t-0/0.log", "kind": "log"}, LogStart: {"base_offset": 7},
             KraftSnapshotStart: {"end_offset": 9, "epoch": 2}, NoteRow: {"text": "a note"},
             TrailingBytes: {"byte_count": 3, "file_name": "0.log"}}


@pytest.mark.parametrize("kind", DUMP_ROWS, ids=lambda k: k.__name__)
def test_an_added_field_of_a_dump_row_is_a_key_of_its_json_object(kind):
    declared = JSON_OBJECTS[kind]
    assert isinstance(declared, JsonObject)
    row = kind(**DUMP_ROWS[kind])
    assert row_obj(row) == {"type": declared.tag, **row.as_json()}
    added = _with_added(kind)
    obj = json_builder(own_keys(declared.tag, added))(added(**DUMP_ROWS[kind]))
    assert list(obj) == list(row_obj(row)) + ["addedFact"] and obj["addedFact"] == 41


def _dump_rows(tmp_path) -> list:
    """The rows of a dump of every kind of file, each kind of row among them."""
    from fixtures.generator import RecordSpec, encode_legacy_message

    legacy = tmp_path / "00000000000000000000.log"  # v0 and v1, a wrapper, then bytes that are no entry
    legacy.write_bytes(encode_legacy_message(0, b"k", b"v", magic=0) + encode_legacy_message(
        2, magic=1, codec=1, inner=[RecordSpec(key=None, value=b"\xff"), RecordSpec(key=b"k", value=b"w")],
        timestamp=5) + b"\x00\x00\x01")
    part = EXAMPLE / "broker-1" / "payments-0"
    files = [legacy, *sorted(part.glob("0000000000000000000[07].*")), part / "leader-epoch-checkpoint",
             REAL_TV2 / "bootstrap.checkpoint"]
    rows = []
    for path in files:
        for deep in (DumpOptions(), DumpOptions(deep_iteration=True, print_data_log=True)):
            rows += expand_rows(dump_file(str(path), deep))
    return rows


def _declared(row) -> JsonObject:
    """The object the declarations give the row (by what it holds, or its tag)."""
    declared = JSON_OBJECTS[type(row)]
    if isinstance(declared, Variants):
        held = getattr(row, declared.on)
        return next(obj for kind, obj in declared.objects if isinstance(held, kind))
    if isinstance(declared, ByTag):
        return next(obj for obj in declared.objects if obj.tag == getattr(row, declared.on))
    return declared


def test_every_dump_json_object_has_its_declared_keys_in_order(tmp_path):
    rows = _dump_rows(tmp_path)
    seen = set()
    for row in rows:
        declared, obj = _declared(row), row_obj(row)
        seen.add((type(row), declared))
        if declared.rest:  # a finding, a dataclass row: its own object after the type
            own = row if declared.rest == THE_ROW else getattr(row, declared.rest)
            assert obj == {"type": declared.tag, **own.as_json()}
            continue
        keys = [k for k in declared.keys if not (k.omit_none and attrgetter(k.path)(row) is None)]
        assert list(obj) == ["type"] + [k.name for k in keys] and obj["type"] == declared.tag
        for k in keys:
            if k.write == AS_IS and not k.each:
                assert obj[k.name] == attrgetter(k.path)(row), (declared.tag, k)
    variants = [o for d in JSON_OBJECTS.values() if isinstance(d, Variants) for _, o in d.objects]
    tagged = [o for d in JSON_OBJECTS.values() if isinstance(d, ByTag) for o in d.objects]
    assert {obj for _, obj in seen} >= {*variants, *tagged}  # a legacy batch and its records, every entry
    assert {kind for kind, _ in seen} == set(JSON_OBJECTS)


def test_a_key_added_to_a_dump_declaration_is_in_the_json_object(tmp_path):
    """A key added to the declared object of a batch, a record or an entry (of each variant) is written
    last, with the value its path reads."""
    for row in _dump_rows(tmp_path):
        declared = _declared(row)
        if declared.rest or not declared.keys:
            continue
        path = declared.keys[0].path
        more = declared._replace(keys=(*declared.keys, Key("addedFact", path)))
        obj = json_builder(more)(row)
        assert list(obj) == list(row_obj(row)) + ["addedFact"] and obj["addedFact"] == attrgetter(path)(row)
