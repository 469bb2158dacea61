"""Findings are aggregated: of one kind about one producer (or transactional id), the first three are
kept whole and the rest become, per file, one aggregate with a count and the ranges it covers.

The real-data tests replay a real Kafka 4.1.0 segment (the Java client's TV2 transactions: data at
producer epochs 0-2, markers at 1-3) several times with rebased offsets (``fixtures/replay.py``):
each copy starts again at epoch 0, one ``epoch_regression`` per copy after the first. The expected
findings come from kafka-python's own record-batch reader, not from our decoder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixtures import replay
from forensics.cli import scan_cmd, state_cmd  # noqa: F401  (registers the commands)
from forensics.findings import AGGREGATE_AFTER, Finding, FindingKind, FindingRuns, level_counts, total
from forensics.runs.rebuild import scan
from tests.cli.test_cli import run_cli

COPIES = 12


def _f(n: int, path: str = "a.log", kind: FindingKind = FindingKind.EPOCH_REGRESSION) -> Finding:
    return Finding(kind, f"finding {n}", path, 100 * n, None, 10 * n, 10 * n + 5)


def test_the_first_three_whole_then_one_aggregate_in_place_of_the_rest() -> None:
    runs = FindingRuns()
    for n in range(1, 8):
        runs.add(_f(n), "producer 7")
    out = runs.findings()
    assert out[:3] == (_f(1), _f(2), _f(3))
    [agg] = out[3:]
    assert (agg.kind, agg.count, agg.path) == (FindingKind.EPOCH_REGRESSION, 4, "a.log")
    assert (agg.first_offset, agg.last_offset, agg.position, agg.last_position) == (40, 75, 400, 700)
    assert agg.message == ("producer 7: epoch_regression x 4 more, at offsets 40..75, in batches starting at bytes "
                           "400..700 (aggregated: the first 3 are listed one by one)")
    assert agg.as_json()["count"] == 4 and agg.as_json()["last_position"] == 700
    assert "count" not in out[0].as_json() and "last_position" not in out[0].as_json()
    assert agg.one_line() == f"warning: epoch_regression: a.log, bytes 400-700, offsets 40-75: {agg.message}"
    assert total(out) == 7 and level_counts(out) == {"warning": 7}


def test_one_past_the_first_three_is_kept_whole() -> None:
    runs = FindingRuns()
    for n in range(1, AGGREGATE_AFTER + 2):
        runs.add(_f(n), "producer 7")
    assert runs.findings() == tuple(_f(n) for n in range(1, AGGREGATE_AFTER + 2))


def test_subjects_kinds_and_files_are_counted_apart_in_order_of_appearance() -> None:
    runs = FindingRuns()
    order = [("p1", _f(n)) for n in range(1, 4)] + [("p1", _f(4, "b.log")), ("p2", _f(5)), ("p1", _f(6)),
                                                     ("p1", _f(7, "b.log")), ("p1", _f(8)),
                                                     ("p1", _f(9, kind=FindingKind.INVALID_TXN_STATE))]
    for subject, f in order:
        runs.add(f, subject)
    out = runs.findings()
    assert [f.message if f.count == 1 else (f.path, f.count) for f in out] == [
        "finding 1", "finding 2", "finding 3", ("b.log", 2), "finding 5", ("a.log", 2), "finding 9"]


def _replayed(tmp_path: Path, healthy: bool = False) -> Path:
    return replay.write_partition(tmp_path / ("healthy" if healthy else "replay"), COPIES, healthy)


def _regressions(log: Path) -> list[tuple[int, int, int]]:
    """(byte position, first offset, last offset) of each run of data batches whose epoch is below the
    producer's previous batch's, by kafka-python's reader: the run ends before the next marker."""
    from kafka.record.memory_records import MemoryRecords

    data, pos, epoch, out = log.read_bytes(), 0, None, []
    records = MemoryRecords(data)
    while records.has_next():
        b = records.next_batch()
        if b.is_control_batch:
            epoch = b.producer_epoch
        elif epoch is not None and b.producer_epoch < epoch:
            out.append([pos, b.base_offset, b.base_offset + b.last_offset_delta])
            epoch = b.producer_epoch
        elif out and out[-1][2] + 1 == b.base_offset and b.producer_epoch == epoch and pos > out[-1][0]:
            out[-1][2] = b.base_offset + b.last_offset_delta
        pos += b.size_in_bytes
    return [tuple(r) for r in out]


def test_a_replayed_history_is_aggregated(tmp_path: Path) -> None:
    part = _replayed(tmp_path)
    log = part / replay.SEGMENT
    expected = _regressions(log)
    assert len(expected) == COPIES - 1
    [p] = scan([str(part)]).log_dirs[0].partitions
    found = [f for f in p.state_findings if f.kind is FindingKind.EPOCH_REGRESSION]
    assert [(f.position, f.first_offset, f.last_offset) for f in found[:3]] == expected[:3]
    assert all(f.count == 1 and "data batch at epoch 0 after epoch" in f.message for f in found[:3])
    [agg] = found[3:]
    rest = expected[3:]
    assert (agg.count, agg.path) == (len(rest), str(log))
    assert (agg.position, agg.last_position) == (rest[0][0], rest[-1][0])
    assert (agg.first_offset, agg.last_offset) == (rest[0][1], rest[-1][2])
    assert total(found) == COPIES - 1


def test_the_healthy_twin_has_no_anomaly(tmp_path: Path) -> None:
    part = _replayed(tmp_path, healthy=True)
    assert _regressions(part / replay.SEGMENT) == []
    [p] = scan([str(part)]).log_dirs[0].partitions
    assert p.state_findings and {f.kind for f in p.state_findings} == {FindingKind.NO_SNAPSHOT}
    assert p.batches == 122 * COPIES


@pytest.fixture
def replayed(tmp_path: Path) -> Path:
    return _replayed(tmp_path)


def test_every_output_says_what_was_aggregated(replayed: Path, tmp_path: Path) -> None:
    rest = _regressions(replayed / replay.SEGMENT)[3:]
    said = (f"producer 19: epoch_regression x {len(rest)} more, at offsets {rest[0][1]}..{rest[-1][2]}, in batches "
            f"starting at bytes {rest[0][0]}..{rest[-1][0]} (aggregated: the first 3 are listed one by one)")
    code, out, _ = run_cli(["scan", str(replayed), "--engine", "local", "--format", "json", "--no-progress"], tmp_path)
    doc = json.loads(out)
    found = doc["logDirs"][0]["partitions"][0]["findings"]
    [agg] = [f for f in found if f.get("count") and f["kind"] == "epoch_regression"]
    assert (code, agg["message"], agg["count"], agg["last_position"]) == (0, said, len(rest), rest[-1][0])
    # each copy's first batch also repeats sequences its producer wrote at that epoch in the first copy
    [dup] = [f for f in found if f.get("count") and f["kind"] == "duplicate_sequence"]
    assert (dup["count"], dup["position"], dup["last_position"]) == (len(rest), rest[0][0], rest[-1][0])
    # no_snapshot, missing_index, one regression and one duplicate per copy after the first
    assert doc["summary"]["findings"] == 2 + 2 * (COPIES - 1)
    code, out, _ = run_cli(["scan", str(replayed), "--engine", "local", "--no-progress"], tmp_path)
    assert code == 0 and f"Findings ({2 + 2 * (COPIES - 1)})" in out
    assert f"{rest[0][0]}..{rest[-1][0]}" in out and "x 8 more" in out
    code, _, err = run_cli(["describe-producers", str(replayed), "--topic", "i-java-txn", "--partition", "1"], tmp_path)
    assert code == 0
    assert (f"warning: epoch_regression: {replayed / replay.SEGMENT}, bytes {rest[0][0]}-{rest[-1][0]}, offsets "
            f"{rest[0][1]}-{rest[-1][2]}: {said}") in err.splitlines()
