"""scan through its typed request and result (``forensics.runs.scan.scan``): the partitions, their
offsets and open transactions, the version, and what the disk names that the inputs lack; checked
against ``scan --format json`` for the same disks."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from forensics.cli.app import app
from forensics.errors import UsageError
from forensics.render.broker_version_text import version_label
from forensics.runs.hanging import FindHangingRequest, VerdictRequest, find_hanging
from forensics.runs.scan import ScanRequest, scan
from forensics.render.clock_text import as_of_source
from tests.runs.support import EXAMPLE, EXAMPLE_AS_OF, copy_without, evidence


def _scan(*paths, **kw):
    return scan(ScanRequest(evidence(*paths), **kw))


def _partitions(result):
    return {(p.topic, p.partition): p for d in result.report.log_dirs for p in d.partitions}


def _printed(path):
    r = CliRunner().invoke(app, ["scan", str(path), "--format", "json", "--no-progress"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_the_example_disk_partition_by_partition():
    done = _scan(EXAMPLE)
    assert done.report.as_of.time_ms == EXAMPLE_AS_OF and done.manifest is None
    [log_dir] = done.report.log_dirs
    assert (log_dir.broker_id, log_dir.cluster_id, log_dir.clean_shutdown) == (1, "a2Fma2EtZm9yZW5zaWNzLQ", True)
    parts = _partitions(done)
    assert sorted(parts) == [("__cluster_metadata", 0), ("__transaction_state", 0), ("__transaction_state", 1),
                             ("__transaction_state", 2), ("orders", 0), ("orders", 1), ("payments", 0)]
    o0, o1, p0 = parts[("orders", 0)], parts[("orders", 1)], parts[("payments", 0)]
    assert [s.base_offset for s in o0.segments] == [0, 9, 15] and [s.base_offset for s in o1.segments] == [0, 7]
    assert (o0.log_start_offset, o0.high_watermark, o0.last_stable_offset, o0.last_stable_offset_lag) == (0, 16, 6, 10)
    assert (o0.open_transactions, o0.batches, o0.records, o0.first_offset, o0.last_offset) == (1, 11, 16, 0, 15)
    assert o0.max_active_txn_duration_ms == 7049 and not o0.late_transaction
    assert (o1.last_stable_offset, o1.open_transactions, sorted(o1.codecs)) == (15, 0, ["gzip", "none", "zstd"])
    assert (p0.high_watermark, p0.last_stable_offset, p0.bytes) == (12, 12, 1370)
    assert sum(p.bytes for p in parts.values()) == done.report.total_bytes() == 10659
    assert list(done.report.all_findings()) == [] and done.evidence_gaps == ()
    assert done.version.low is not None and version_label(done.version).startswith("broker 4.1 or newer")


def test_the_typed_scan_is_what_scan_prints_as_json():
    done, printed = _scan(EXAMPLE), _printed(EXAMPLE)
    assert printed["asOf"] == {"timeMs": done.report.as_of.time_ms, "source": as_of_source(done.report.as_of)}
    assert printed["brokerVersion"]["label"] == version_label(done.version)
    assert printed["evidence"] == {"gaps": list(done.evidence_gaps)}
    rows = {(p["topic"], p["partition"]): p for p in printed["logDirs"][0]["partitions"]}
    for key, p in _partitions(done).items():
        assert (rows[key]["logStartOffset"], rows[key]["highWatermark"], rows[key]["lastStableOffset"],
                rows[key]["openTransactions"], rows[key]["batches"], rows[key]["records"], rows[key]["bytes"]) == (
            p.log_start_offset, p.high_watermark, p.last_stable_offset, p.open_transactions, p.batches, p.records,
            p.bytes), key
    assert printed["summary"] == {"logDirs": 1, "partitions": 7, "bytes": 10659, "findings": 0}


def test_a_partition_left_out_is_an_evidence_gap_as_find_hanging_names_it(tmp_path):
    disk = copy_without(EXAMPLE, tmp_path / "disk", "broker-1/payments-0")
    done = _scan(disk)
    assert ("payments", 0) not in _partitions(done) and len(_partitions(done)) == 6
    [gap] = done.evidence_gaps
    assert gap.startswith("evidence: 1 partition(s) without the copy that matters among the inputs, of which "
                          "payments-0: its leader's copy (broker 1, log dir ")
    assert gap.endswith("is not among the inputs; no replica's is")
    assert find_hanging(FindHangingRequest(VerdictRequest(evidence(disk)))).run.warnings == done.evidence_gaps
    assert _printed(disk)["evidence"]["gaps"] == [gap]


def test_a_topic_selected_is_checked_before_anything_is_read():
    only = _scan(EXAMPLE, topic="orders")
    assert sorted(_partitions(only)) == [("orders", 0), ("orders", 1)]
    assert sorted(_partitions(_scan(EXAMPLE, topic="orders", partition=1))) == [("orders", 1)]
    with pytest.raises(UsageError, match="no topic 'nope' in the evidence"):
        _scan(EXAMPLE, topic="nope")
