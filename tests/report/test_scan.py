"""scan: the header-only inventory agrees with Kafka's own dumps and with the layout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.findings import FindingKind
from forensics.runs.rebuild import scan, scan_segment

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "real-kafka" / "4.1.0"
FIXTURE_RUN = REPO / "fixtures" / "real" / "kraft-tv2"


def kafka_batch_count(dump: Path) -> int:
    return sum(1 for line in dump.read_text().splitlines() if line.startswith("baseOffset: "))


def kafka_record_offsets(dump: Path):
    return [int(line.split()[2]) for line in dump.read_text().splitlines() if line.startswith("| offset: ")]


def test_segment_summary_matches_kafka_dump():
    log = FIXTURE_RUN / "b-txn-aborts-0" / "00000000000000000000.log"
    dump = FIXTURE_RUN / "dumps" / "b-txn-aborts-0" / "00000000000000000000.log.dump.txt"
    s = scan_segment(str(log), 0)
    assert s.batches == kafka_batch_count(dump) == 14
    offsets = kafka_record_offsets(dump)
    assert s.records == len(offsets) == 33
    assert (s.first_offset, s.last_offset) == (0, 32)
    assert s.magics == {2} and s.codecs == {"none"}
    assert s.control_batches == 7 and s.transactional_batches == 14
    assert s.findings == () and s.invalid_batches == 0


def test_partition_dirs_given_directly():
    report = scan([str(FIXTURE_RUN / "b-txn-aborts-0"), str(FIXTURE_RUN / "d-txn-ongoing-0")])
    parts = [p for d in report.log_dirs for p in d.partitions]
    assert [(p.topic, p.partition) for p in parts] == [("b-txn-aborts", 0), ("d-txn-ongoing", 0)]
    assert all(p.topic_id for p in parts)


def test_truncated_segment_is_a_finding(tmp_path):
    src = (FIXTURE_RUN / "b-txn-aborts-0" / "00000000000000000000.log").read_bytes()
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(src[:-30])
    report = scan([str(part)])
    [p] = report.log_dirs[0].partitions
    kinds = [f.kind for f in report.all_findings()]
    assert FindingKind.TRUNCATED_TAIL in kinds
    assert p.batches == 13  # the torn last marker is not counted


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/real-kafka not present")
@pytest.mark.parametrize("run", ["kraft-tv2", "kraft-rv3.9-tv0"])
def test_real_disk_inventory_matches_dumps(run):
    report = scan([str(SHARED / run / "data")])
    [d] = report.log_dirs
    assert d.broker_id == 1 and d.clean_shutdown
    assert len(d.partitions) == 137
    assert report.all_findings() == []
    checked = 0
    for p in d.partitions:
        for s in p.segments:
            rel = Path(s.path).relative_to(SHARED / run / "data")
            dump = SHARED / run / "dumps" / (str(rel) + ".dump.txt")
            assert s.batches == kafka_batch_count(dump), rel
            assert s.records == len(kafka_record_offsets(dump)), rel
            checked += 1
        if p.topic not in ("__cluster_metadata",) and p.high_watermark is not None and p.last_offset is not None:
            assert p.high_watermark == p.last_offset + 1, (p.topic, p.partition)
    assert checked >= 137


def test_scan_cli_json_subprocess():
    out = subprocess.run([sys.executable, "-m", "forensics", "scan", "--format", "json", str(FIXTURE_RUN / "b-txn-aborts-0")],
                         capture_output=True, text=True, check=True)
    obj = json.loads(out.stdout)
    assert obj["summary"]["partitions"] == 1
    assert obj["logDirs"][0]["partitions"][0]["batches"] == 14
    assert "Traceback" not in out.stderr


def test_scan_cli_missing_path():
    out = subprocess.run([sys.executable, "-m", "forensics", "scan", "/nonexistent/disk"], capture_output=True, text=True)
    assert out.returncode == 3
    assert out.stderr.count("\n") == 1 and "/nonexistent/disk" in out.stderr
