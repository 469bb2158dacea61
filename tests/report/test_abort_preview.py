"""The abort preview and the commands for every tool, checked against the data.

For every hanging transaction of the example disk and of the hanging scenarios
(``fixtures/hanging_scenarios.py``), ``find-hanging --all --format json``'s ``abortPreview`` is
compared with what kafka-python's own record reader (``kafka.record.MemoryRecords``, an encoder
and decoder we did not write) finds in the partition's segments: the producer's transactional
data batches from the start offset (batches, records, bytes, first record timestamp, last batch
timestamp, first keys) and the LSO after the abort (the earliest other open transaction, folded
from the same batches, else the high watermark). The consumer groups stuck behind it come from a
``__consumer_offsets`` partition added to a copy of the example disk. The kafka-python command
line is parsed by kafka-python's own admin parser.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
from kafka.record import MemoryRecords
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
from fixtures import hanging_scenarios as hs
from fixtures.generator import RecordSpec, encode_v2_batch
from forensics.cli.app import app
from tests.machine_output import rows_of

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
runner = CliRunner()


def find_hanging(root: Path, *extra: str) -> list[dict]:
    r = runner.invoke(app, ["find-hanging", str(root), "--all", "--format", "json", "--no-progress", *extra])
    assert r.exit_code in (0, 1, 7), r.stderr
    return rows_of(r.stdout)


def partition_dir(root: Path, row: dict) -> Path:
    return Path(row["evidence"]["partitionDir"])


def kafka_python_batches(pdir: Path):
    """Every batch of the partition's segments, in offset order, as kafka-python reads them."""
    out = []
    for seg in sorted(pdir.glob("*.log")):
        for kb in MemoryRecords(seg.read_bytes()):
            if kb.validate_crc():
                out.append(kb)
    return out


def expected_preview(pdir: Path, pid: int, start: int, hw: int, log_start: int = 0) -> dict:
    """What an abort discards, read with kafka-python: the producer's data from ``start`` on that is not
    below the log start (DeleteRecords and retention removed that already)."""
    batches = kafka_python_batches(pdir)
    candidates = [(kb, [r for r in kb if r.offset >= log_start]) for kb in batches  # a batch iterates once
                  if kb.producer_id == pid and kb.is_transactional and not kb.is_control_batch
                  and kb.base_offset >= start]
    mine = [kb for kb, kept in candidates if kept]
    records = [r for _, kept in candidates for r in kept]
    keys: list[bytes | None] = []
    for r in records:
        if r.key not in keys and len(keys) < 5:
            keys.append(r.key)
    open_first: dict[int, int] = {}  # producer -> first offset of its open transaction
    for kb in batches:
        if not kb.is_transactional:
            continue
        if kb.is_control_batch:
            open_first.pop(kb.producer_id, None)
        else:
            open_first.setdefault(kb.producer_id, kb.base_offset)
    others = [f for p, f in open_first.items() if p != pid and f < hw]
    return {"firstOffset": max(start, log_start), "lastOffset": mine[-1].last_offset if mine else None, "batches": len(mine),
            "records": len(records), "bytes": sum(kb.size_in_bytes for kb in mine),
            "firstTimestamp": records[0].timestamp if records else None,
            "lastTimestamp": mine[-1].max_timestamp if mine else None,
            "keys": [None if k is None else k.decode("utf-8", "replace") for k in keys],
            "lsoAfterAbort": min(others) if others else hw}


def _as_of(name: str) -> list[str]:
    if name == "example-disk":
        return []
    expected = json.loads((REPO / "fixtures" / "hanging-scenarios" / name / "expected.json").read_text())
    return ["--as-of", str(expected["asOf"])]


@pytest.fixture(scope="module")
def scenario_roots(tmp_path_factory) -> dict[str, Path]:
    return {name: hs.build(name, tmp_path_factory.mktemp(name)) for name in hs.SCENARIOS}


@pytest.mark.parametrize("name", ["example-disk", *hs.SCENARIOS])
def test_preview_matches_the_data(name: str, scenario_roots) -> None:
    root = EXAMPLE if name == "example-disk" else scenario_roots[name]
    rows = find_hanging(root, *_as_of(name))
    previews = [r for r in rows if r.get("abortPreview")]
    assert len(previews) == sum(1 for r in rows if r["abortForms"]), "every row with abort commands has a preview"
    for row in previews:
        p = row["abortPreview"]
        want = expected_preview(partition_dir(root, row), row["producerId"], row["startOffset"], p["highWatermark"],
                                row["evidence"]["logStartOffset"])
        got = {k: p[k] for k in want}
        assert got == want, (name, row["topic"], row["partition"], row["producerId"])
        assert p["highWatermark"] == row["evidence"]["highWatermark"]
        assert p["lastStableOffset"] == row["evidence"]["lastStableOffset"]
        assert p["stuckConsumerGroups"] is None  # no __consumer_offsets among these inputs
    if name == "example-disk":
        assert [(r["topic"], r["abortPreview"]["records"]) for r in previews] == [("orders", 2)]


def test_redact_hides_the_keys() -> None:
    (row,) = [r for r in find_hanging(EXAMPLE, "--redact") if r.get("abortPreview")]
    assert row["abortPreview"]["keys"] == "<redacted>"
    assert "k18" not in json.dumps(row)


# -- consumer groups stuck behind the transaction --------------------------------------------------


def _commit_key(group: str, topic: str, partition: int) -> bytes:
    def s(t: str) -> bytes:
        return struct.pack(">h", len(t)) + t.encode()
    return struct.pack(">h", 1) + s(group) + s(topic) + struct.pack(">i", partition)


def _commit_value(offset: int, ts: int) -> bytes:  # OffsetCommitValue v3
    return struct.pack(">hqih", 3, offset, -1, 0) + struct.pack(">q", ts)


def test_groups_committed_at_the_lso_are_named(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    shutil.copytree(EXAMPLE, disk)
    offsets = disk / "broker-1" / "__consumer_offsets-7"
    offsets.mkdir()
    commits = [("stuck-app", 6, 1), ("behind-app", 3, 2), ("gone-app", 6, 3), ("other-topic", 6, 4)]
    records = [RecordSpec(key=_commit_key(g, "orders" if g != "other-topic" else "payments", 0),
                          value=_commit_value(o, 1767225600000 + t)) for g, o, t in commits]
    records.append(RecordSpec(key=_commit_key("gone-app", "orders", 0), value=None))  # tombstone
    (offsets / "00000000000000000000.log").write_bytes(encode_v2_batch(0, records))
    (row,) = [r for r in find_hanging(disk) if r.get("abortPreview")]
    groups = row["abortPreview"]["stuckConsumerGroups"]
    assert row["abortPreview"]["lastStableOffset"] == 6
    assert groups == [{"group": "stuck-app", "committedOffset": 6, "commitTimestamp": 1767225600001}]
    r = runner.invoke(app, ["abort-commands", str(disk), "--bootstrap-server", "b:9092"])
    assert "consumer groups committed at the LSO: stuck-app (committed 6)" in r.stdout


# -- the commands, for every tool ------------------------------------------------------------------


def _legacy_values(args: list[str]) -> tuple[str, str, int, int, int]:
    v = dict(zip(args[::1], args[1::1]))
    return v["--topic"], v["--partition"], int(v["--producer-id"]), int(v["--producer-epoch"]), \
        int(v["--coordinator-epoch"])


def test_every_tool_gets_the_same_producer_and_epochs(scenario_roots) -> None:
    from kafka.cli.admin import main_parser

    seen = 0
    for name, root in [("example-disk", EXAMPLE), *scenario_roots.items()]:
        for row in find_hanging(root, *_as_of(name)):
            forms = row["abortForms"]
            if not forms:
                continue
            assert forms["abortArgs"] == row["abortArgs"] or not row["armed"]
            legacy = _legacy_values(forms["abortArgs"])
            kp = forms["kafkaPythonArgs"]
            assert kp[:3] == ["python", "-m", "kafka.admin"]
            ns = main_parser().parse_args(kp[3:])  # kafka-python's own argument parser
            assert (ns.group.prog.split()[-1], ns.topic, str(ns.partition), ns.producer_id, ns.producer_epoch,
                    ns.coordinator_epoch) == ("transactions",) + legacy
            assert ns.coordinator_epoch >= 0  # never kafka-python's -1 default
            assert (row["producerId"], row["producerEpoch"]) == legacy[2:4]
            assert forms["abortArgsStartOffset"][-2:] == ["--start-offset", str(row["startOffset"])]
            seen += 1
    assert seen >= 5


def test_the_kafka_python_version_note_matches_its_protocol() -> None:
    """Our comment says kafka-python aborts need brokers >= 2.8: true while its WriteTxnMarkers
    request starts at version 1 (v0, the only version brokers before 2.8 speak, is gone)."""
    import importlib.resources

    from forensics.report.hanging import COMMAND_FORMS

    schema = importlib.resources.files("kafka.protocol.schemas.resources").joinpath("WriteTxnMarkersRequest.json")
    text = "\n".join(line for line in schema.read_text().splitlines() if not line.strip().startswith("//"))
    low = int(json.loads(text)["validVersions"].split("-")[0])
    assert low == 1 and "brokers >= 2.8" in COMMAND_FORMS["kafkaPythonArgs"]


def test_the_lso_stops_at_the_next_open_transaction() -> None:
    """Two other producers' transactions are open: the LSO moves to the earlier of them only."""
    from types import SimpleNamespace

    from forensics.report.preview import lso_after_abort

    view = SimpleNamespace(open_transactions={7: 10, 8: 14, 9: 12}, high_watermark=20)
    v = SimpleNamespace(view=view, entry=SimpleNamespace(producer_id=7))
    after, blocker = lso_after_abort(v)
    assert (after, blocker.as_json()) == (12, {"producerId": 9, "firstOffset": 12})
    view.open_transactions = {7: 10, 8: 25}  # above the high watermark: not readable yet, not blocking
    assert lso_after_abort(v) == (20, None)
