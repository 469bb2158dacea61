"""The incident model (``forensics.report.incident``) against the example disk and the hanging
scenarios. Expected numbers come from the files themselves, read here with a separate walker of
v2 batch headers (``struct``, no forensics decoder) and the broker's checkpoint files, or from the
scenarios' hand-derived ``expected.json``; none is copied from the code under test."""

from __future__ import annotations

import re
import shutil
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import NamedTuple

import pytest

from fixtures import hanging_scenarios as hs
from forensics.render.reasons import worded_row
from forensics.report.hanging import find_hanging
from forensics.report.incident import (
    COMMIT,
    DEAD,
    HANGING,
    IDLE,
    PREPARE,
    build_incident,
    flatten,
)
from forensics.report.rows import HangingRow
from forensics.runs.rebuild import load_state
from forensics.render.clock_text import as_of_source

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
BROKER = EXAMPLE / "broker-1"
AS_OF = 1767225620000  # 2026-01-01T00:00:20Z, after every batch of the example disk

# v2 RecordBatch header (DefaultRecordBatch.java): baseOffset, batchLength, partitionLeaderEpoch,
# magic, crc, attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch,
# baseSequence, recordCount
HEADER = struct.Struct(">qiibIhiqqqhii")


class RawBatch(NamedTuple):
    base_offset: int
    last_offset: int
    max_timestamp: int
    producer_id: int
    transactional: bool
    control: bool
    commit: bool  # control batches: COMMIT (True) or ABORT marker


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (value >> 1) ^ -(value & 1), pos


def _control_type(data: bytes, pos: int) -> int:
    """Type of the first control record of an uncompressed batch whose records start at ``pos``."""
    _, pos = _varint(data, pos)  # record length
    pos += 1  # attributes
    _, pos = _varint(data, pos)  # timestamp delta
    _, pos = _varint(data, pos)  # offset delta
    _, pos = _varint(data, pos)  # key length
    return struct.unpack_from(">hh", data, pos)[1]  # version, type (0 abort, 1 commit)


def raw_batches(partition_dir: Path) -> Iterator[RawBatch]:
    for log in sorted(partition_dir.glob("*.log")):
        data, pos = log.read_bytes(), 0
        while pos + HEADER.size <= len(data):
            h = HEADER.unpack_from(data, pos)
            control = bool(h[5] & 0x20)
            commit = control and _control_type(data, pos + HEADER.size) == 1
            yield RawBatch(h[0], h[0] + h[6], h[8], h[9], bool(h[5] & 0x10), control, commit)
            pos += 12 + h[1]


def open_transactions(partition_dir: Path) -> dict[int, int]:
    """producer id -> first offset of its transaction that no marker closed."""
    open_: dict[int, int] = {}
    for b in raw_batches(partition_dir):
        if b.control:
            open_.pop(b.producer_id, None)
        elif b.transactional:
            open_.setdefault(b.producer_id, b.base_offset)
    return open_


def checkpoint(log_dir: Path, name: str) -> dict[tuple[str, int], int]:
    lines = (log_dir / name).read_text().splitlines()
    return {(t, int(p)): int(o) for t, p, o in (line.split() for line in lines[2:2 + int(lines[1])])}


def data_partitions(log_dir: Path) -> list[Path]:
    return sorted(d for d in log_dir.iterdir() if re.fullmatch(r".+-\d+", d.name)
                  and not d.name.startswith(("__transaction_state-", "__cluster_metadata-")))


def incident_of(path: Path, as_of: int, **kw):
    rep = load_state([str(path)])
    verdicts, when = find_hanging(rep, as_of=as_of)
    kw.setdefault("rows", [worded_row(v, when) for v in verdicts])
    return build_incident(rep, verdicts, when, as_of_source=as_of_source(when), inputs=[str(path)], **kw), rep, verdicts


@pytest.fixture(scope="module")
def example():
    return incident_of(EXAMPLE, AS_OF)[0]


def test_summary_counts_what_is_on_the_disk(example):
    s = example.summary
    node_id = next(int(line.split("=")[1]) for line in (BROKER / "meta.properties").read_text().splitlines()
                   if line.startswith("node.id="))
    parts = data_partitions(BROKER)
    opened = {p.name: open_transactions(p) for p in parts}
    assert s.brokers == (node_id,) and s.log_dirs == 1
    assert s.partitions == s.replicas == len(parts)
    assert s.topics == len({p.name.rsplit("-", 1)[0] for p in parts})
    assert s.txn_state_partitions == len(list(BROKER.glob("__transaction_state-*")))
    assert s.open_transactions == sum(len(o) for o in opened.values()) == 1
    assert s.hanging == 1 and s.verdicts == (("hanging", 1),)
    assert s.findings == 0 and example.findings == ()
    assert s.log_bytes == sum(f.stat().st_size for f in BROKER.glob("*/*.log"))
    assert example.as_of_ms == AS_OF and example.inputs == (str(EXAMPLE),)
    assert example.manifest_path is None and example.manifest_sha256 is None


def test_lso_lag_per_partition_from_the_raw_batches(example):
    hw = checkpoint(BROKER, "replication-offset-checkpoint")
    lags = {(i.topic, i.partition): i for i in example.lso}
    assert set(lags) == {(p.name.rsplit("-", 1)[0], int(p.name.rsplit("-", 1)[1])) for p in data_partitions(BROKER)}
    for (topic, partition), lag in lags.items():
        d = BROKER / f"{topic}-{partition}"
        batches = list(raw_batches(d))
        opened = open_transactions(d)
        assert lag.high_watermark == hw[(topic, partition)] and lag.high_watermark_known
        assert lag.log_end_offset == batches[-1].last_offset + 1
        if not opened:
            assert (lag.last_stable_offset, lag.lag_offsets, lag.pinned_by, lag.tone) == (hw[(topic, partition)], 0,
                                                                                         None, IDLE)
            continue
        pid, first = min(opened.items(), key=lambda kv: kv[1])
        since = next(b.max_timestamp for b in batches if b.base_offset == first)
        assert (lag.last_stable_offset, lag.pinned_by, lag.pinned_offset) == (first, pid, first)
        assert lag.lag_offsets == hw[(topic, partition)] - first
        assert lag.pinned_since_ms == since
        assert lag.lag_ms == max(b.max_timestamp for b in batches) - since
        assert lag.age_ms == AS_OF - since
        assert lag.tone == HANGING
    assert lags[("orders", 0)].lag_offsets == 10  # RECIPE: HW 16, LSO 6 (pinned by reporting-app)


def test_hanging_transaction_carries_verdict_evidence_and_every_command(example):
    [t] = example.transactions
    first = open_transactions(BROKER / "orders-0")
    assert (t.topic, t.partition, t.producer_id, t.start_offset) == ("orders", 0, 2002, first[2002])
    assert t.abortable and t.verdict == "hanging" and t.tone == HANGING and t.transactional_id == "reporting-app"
    assert "CompleteCommit" in t.reason
    ev = {f.key: f for f in t.evidence}
    assert ev["evidence.openTransaction.firstOffset"].value == first[2002]
    assert ev["evidence.coordinatorRecord.state"].value == "CompleteCommit"
    assert ev["evidence.coordinatorRecord.timestamp"].is_time
    assert ev["evidence.firstBatch.path"].value.endswith("orders-0/00000000000000000000.log")
    assert ev["evidence.openTransaction.fromSnapshot"].label == ("open transaction: opened before the snapshot the "
                                                                 "replay starts from")
    facts = {f.key: f for f in t.facts}  # the row's own facts, labelled, in the table's order
    assert [f.key for f in t.facts] == ["brokerId", "startOffset", "producerId", "producerEpoch", "coordinatorEpoch",
                                        "lastSequence", "lastTimestamp", "durationMs", "coordinatorPartition"]
    assert facts["startOffset"].value == first[2002] and facts["lastTimestamp"].is_time
    assert facts["durationMs"].kind == "duration" and facts["durationMs"].value == AS_OF - t.last_timestamp_ms
    commands = {c.key: c.argv for c in t.commands}
    assert {"abortArgs", "abortArgsStartOffset"} <= set(commands)
    for argv in commands.values():  # every form names the same partition and producer
        joined = " ".join(argv)
        assert ("orders" in argv and "0" in argv and ("2002" in argv or "--start-offset 6" in joined))
    assert commands["abortArgsStartOffset"][-2:] == ("--start-offset", str(first[2002]))


def test_timeline_of_the_hanging_id_puts_the_coordinator_beside_each_partition(example):
    t = example.timelines[0]  # the id with a hanging transaction comes first
    assert t.title == t.transactional_id == "reporting-app" and t.hanging and t.producer_ids == (2002,)
    assert t.coordinator_partition == 0 and t.state == "CompleteCommit"
    # RECIPE: Empty on first use, then Ongoing / PrepareCommit / CompleteCommit with partitions [orders-1]
    assert [e.state for e in t.coordinator] == ["Empty", "Ongoing", "PrepareCommit", "CompleteCommit"]
    assert [e.partitions for e in t.coordinator] == [(), ("orders-1",), ("orders-1",), ()]
    txn_batches = list(raw_batches(BROKER / "__transaction_state-0"))
    assert [e.time_ms for e in t.coordinator] == [b.max_timestamp for b in txn_batches]
    assert [e.offset for e in t.coordinator] == [b.base_offset for b in txn_batches]
    lanes = {lane.name: lane for lane in t.lanes}
    assert set(lanes) == {"orders-0", "orders-1"}  # payments-0 holds nothing of producer 2002
    [hang] = lanes["orders-0"].spans
    data0 = [b for b in raw_batches(BROKER / "orders-0") if b.producer_id == 2002]
    assert not any(b.control for b in data0)
    assert (hang.first_offset, hang.last_data_offset) == (data0[0].base_offset, data0[-1].last_offset)
    assert hang.first_time_ms == data0[0].max_timestamp
    assert (hang.outcome, hang.marker_offset, hang.verdict, hang.tone) == (None, None, "hanging", HANGING)
    [done] = lanes["orders-1"].spans
    marker = next(b for b in raw_batches(BROKER / "orders-1") if b.producer_id == 2002 and b.control)
    assert marker.commit and done.outcome == "COMMIT" and done.tone == COMMIT
    assert (done.marker_offset, done.marker_time_ms) == (marker.base_offset, marker.max_timestamp)
    times = [b.max_timestamp for b in txn_batches] + [data0[0].max_timestamp, marker.max_timestamp]
    assert (t.start_ms, t.end_ms) == (min(times), max(times))


def test_every_transactional_id_gets_a_timeline_and_the_limit_counts_the_rest(example):
    assert [t.title for t in example.timelines] == ["reporting-app", "orders-app", "payments-app"]
    orders = example.timelines[1]
    spans = [s for lane in orders.lanes for s in lane.spans]
    markers = [b for p in data_partitions(BROKER) for b in raw_batches(p) if b.producer_id == 2000 and b.control]
    assert len(spans) == len(markers) and all(s.outcome for s in spans)
    assert sorted(s.outcome == "COMMIT" for s in spans) == sorted(b.commit for b in markers)
    limited = incident_of(EXAMPLE, AS_OF, max_timelines=1)[0]
    assert [t.title for t in limited.timelines] == ["reporting-app"] and limited.timelines_omitted == 2


def test_the_model_is_deterministic():
    assert incident_of(EXAMPLE, AS_OF)[0] == incident_of(EXAMPLE, AS_OF)[0]


@dataclass(frozen=True, slots=True)
class NewerRow(HangingRow):
    """A row kind grown by three columns (forensics.columns: declared once, shown as declared)."""

    tool_x_args: list[str] = field(default_factory=list)
    note: str = ""
    brand_new_fact: int | None = None


def test_extra_row_keys_become_commands_or_field_groups():
    """Columns a newer row carries are shown, labelled by the table or humanised, never dropped."""
    _, rep, verdicts = incident_of(EXAMPLE, AS_OF)
    base = worded_row(verdicts[0], find_hanging(rep, as_of=AS_OF)[1])
    row = NewerRow(**{f.name: getattr(base, f.name) for f in fields(base)} | dict(
        abort_preview={"firstOffset": 6, "keys": ["a", None], "firstTimestamp": 1767225606250,
                       "nested": [{"group": "g"}], "stuckConsumerGroups": None}),
        tool_x_args=["tool-x", "abort", "--pid", "2002"], note="see ticket", brand_new_fact=None)
    inc = build_incident(rep, verdicts, find_hanging(rep, as_of=AS_OF)[1], as_of_source="--as-of", inputs=[str(EXAMPLE)], rows=[row])
    [t] = inc.transactions
    assert ("toolXArgs", ("tool-x", "abort", "--pid", "2002")) in [(c.key, c.argv) for c in t.commands]
    groups = {g.key: {f.key: f for f in g.fields} for g in t.extras}
    assert set(groups) == {"abortPreview", ""}
    preview = groups["abortPreview"]
    assert preview["abortPreview.firstOffset"].value == 6 and preview["abortPreview.keys"].value == ("a", None)
    assert preview["abortPreview.firstTimestamp"].is_time and not preview["abortPreview.firstOffset"].is_time
    assert preview["abortPreview.firstOffset"].label == "first offset discarded"
    nested = preview["abortPreview.nested[0].group"]
    assert (nested.value, nested.label) == ("g", "abort preview › nested › group")  # not in the table: humanised
    stuck = preview["abortPreview.stuckConsumerGroups"]
    assert stuck.value is None and stuck.none == "unknown: no __consumer_offsets in the inputs"
    more = groups[""]
    assert (more["note"].value, more["note"].label) == ("see ticket", "note")
    assert (more["brandNewFact"].label, more["brandNewFact"].value, more["brandNewFact"].none) == (
        "brand new fact", None, "unknown")
    with pytest.raises(ValueError):
        build_incident(rep, verdicts, find_hanging(rep, as_of=AS_OF)[1], as_of_source="--as-of", inputs=[], rows=[])


def test_flatten_labels_every_scalar_and_marks_times():
    assert flatten({"a": {"b": 1, "lastTimestamp": 5}, "c": [1, 2], "d": True}) == [
        flatten(1, "a.b")[0], flatten(5, "a.lastTimestamp")[0], flatten([1, 2], "c")[0], flatten(True, "d")[0]]
    assert flatten(5, "a.lastTimestamp")[0].is_time and not flatten(True, "startTimeMs")[0].is_time
    assert flatten([1, 2], "c")[0].value == (1, 2) and flatten([], "c")[0].value == ()
    assert [f.label for f in flatten({"gaps": [{"text": "x"}, {"text": "y"}]}, "evidence")] == [
        "evidence gap 1: the log", "evidence gap 2: the log"]
    [unknown] = flatten({"newKey": None}, "evidence.gaps[0]")  # not in the table: shown, humanised
    assert (unknown.key, unknown.label, unknown.value, unknown.none) == (
        "evidence.gaps[0].newKey", "evidence › gaps › new key", None, "unknown")
    assert flatten(None, "evidence.gaps[0].position") == []  # the table says a missing one says nothing


# -- hanging scenarios --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    names = ("expired-id", "prepare-commit-pending", "missing-txn-state-partition", "unclean-election")
    return {n: hs.build(n, tmp_path_factory.mktemp(n)) for n in names}


def _scenario(scenarios, name, **kw):
    exp = hs.expected(name)
    return incident_of(scenarios[name], exp["asOf"], **kw)[0], exp


def test_expired_id_timeline_ends_in_a_tombstone_and_the_partition_was_never_named(scenarios):
    inc, exp = _scenario(scenarios, "expired-id")
    [want] = exp["verdicts"]
    assert inc.summary.hanging == sum(v["abortable"] for v in exp["verdicts"]) == 1
    [t] = inc.transactions
    assert (t.topic, t.partition, t.producer_id, t.start_offset, t.verdict) == (
        want["topic"], want["partition"], want["producerId"], want["startOffset"], want["verdict"])
    [tl] = inc.timelines
    assert tl.title == "expired-app" and tl.hanging and tl.state == "Dead"
    assert tl.coordinator[-1].state == "<tombstone>" and tl.coordinator[-1].tone == DEAD
    named = {p for e in tl.coordinator for p in e.partitions}
    assert "exp-0" not in named and "aux-0" in named
    lanes = {lane.name: lane for lane in tl.lanes}
    broker = scenarios["expired-id"] / "broker-1"
    [hang] = lanes["exp-0"].spans
    assert (hang.first_offset, hang.tone, hang.outcome) == (want["startOffset"], HANGING, None)
    [marker] = [b for b in raw_batches(broker / "aux-0") if b.control]
    [done] = lanes["aux-0"].spans
    assert done.outcome == "COMMIT" and marker.commit and done.marker_offset == marker.base_offset
    hw = checkpoint(broker, "replication-offset-checkpoint")
    lag = next(i for i in inc.lso if (i.topic, i.partition) == ("exp", 0))
    assert lag.lag_offsets == hw[("exp", 0)] - want["startOffset"] and lag.tone == HANGING
    assert lag.age_ms == exp["asOf"] - next(b.max_timestamp for b in raw_batches(broker / "exp-0"))


def test_prepare_commit_pending_is_shown_without_commands(scenarios):
    inc, exp = _scenario(scenarios, "prepare-commit-pending")
    [want] = exp["verdicts"]
    [t] = inc.transactions
    assert (t.topic, t.partition, t.verdict, t.abortable) == (want["topic"], want["partition"], want["verdict"],
                                                              want["abortable"])
    assert t.commands == () and t.tone == PREPARE and inc.summary.hanging == 0
    [tl] = inc.timelines
    assert tl.state == "PrepareCommit" and not tl.hanging
    lanes = {lane.name: lane for lane in tl.lanes}
    [open_] = lanes["prep-1"].spans
    assert open_.outcome is None and open_.verdict == "stuck-coordinator" and open_.tone == PREPARE
    broker = scenarios["prepare-commit-pending"] / "broker-1"
    assert lanes["prep-0"].spans[0].outcome == "COMMIT" and any(b.commit for b in raw_batches(broker / "prep-0"))
    assert not any(b.control for b in raw_batches(broker / "prep-1"))


def test_a_producer_no_coordinator_record_names_gets_its_own_timeline(scenarios):
    inc, exp = _scenario(scenarios, "missing-txn-state-partition")
    [want] = exp["verdicts"]
    tl = inc.timelines[0]
    assert tl.title == f"producer id {want['producerId']}" and tl.transactional_id is None
    assert tl.coordinator == () and tl.coordinator_partition is None and not tl.hanging  # unverifiable
    [lane] = tl.lanes
    assert lane.name == f"{want['topic']}-{want['partition']}"
    assert [(s.first_offset, s.verdict) for s in lane.spans] == [(want["startOffset"], "unverifiable")]
    assert {t.title for t in inc.timelines[1:]} == {hs.KEEPER_ID}  # the id whose partition is there


def test_findings_are_kept_and_the_limit_counts_the_rest(scenarios):
    inc, exp = _scenario(scenarios, "unclean-election")
    kinds = {f.kind.value for f in inc.findings}
    assert {f["kind"] for f in exp["findings"]} <= kinds
    assert inc.summary.findings == len(inc.findings) >= 2
    assert inc.summary.brokers == (1, 2)
    few, _ = _scenario(scenarios, "unclean-election", max_findings=1)
    assert len(few.findings) == 1 and few.findings_omitted == inc.summary.findings - 1


def test_a_partition_the_coordinator_named_but_not_among_the_inputs_gets_an_empty_lane(tmp_path):
    disk = tmp_path / "example"
    shutil.copytree(EXAMPLE, disk)
    shutil.rmtree(disk / "broker-1" / "orders-1")
    inc = incident_of(disk, AS_OF)[0]
    t = inc.timelines[0]
    assert t.title == "reporting-app"
    lanes = {lane.name: lane for lane in t.lanes}
    assert lanes["orders-1"].present is False and lanes["orders-1"].spans == ()
    assert lanes["orders-0"].present and lanes["orders-0"].spans[0].tone == HANGING
    assert all(lane.present for name, lane in lanes.items() if name != "orders-1")
