"""dump, verify-manifest, export and the broker version through their typed requests and results
(``forensics.runs.dump``, ``runs.manifest``, ``runs.export``, ``runs.broker_version``)."""

from __future__ import annotations

import json

import pytest

from forensics.errors import UsageError
from forensics.exit_codes import EXIT_INPUT
from forensics.layout.discovery import discover
from forensics.report.dump import DumpOptions
from forensics.report.dump_rows import BatchRow, EntryRow, FileStart, LogStart
from forensics.analysis.broker_version import VersionSource
from forensics.render.broker_version_text import version_evidence, version_label
from forensics.runs.broker_version import broker_version_of
from forensics.runs.dump import DumpRequest, dump
from forensics.runs.export import ExportRequest, export
from forensics.runs.manifest import verify
from forensics.runs.scan import ScanRequest, scan
from tests.runs.support import EXAMPLE, EXAMPLE_AS_OF, Told, copy_without, evidence

ORDERS0 = EXAMPLE / "broker-1" / "orders-0"
SEGMENT = ORDERS0 / "00000000000000000000.log"


def _dump(*paths, options=DumpOptions(), listener=None, **kw):
    shown = []

    def show(rows):
        shown.append(list(rows))
        return 0

    req = DumpRequest(tuple(map(str, paths)), options, **kw)
    done = dump(req, show) if listener is None else dump(req, show, listener)
    return done, shown


# -- dump -----------------------------------------------------------------------------------------


def test_dump_streams_each_file_s_rows_in_order():
    done, [log, index] = _dump(SEGMENT, ORDERS0 / "00000000000000000000.index")
    assert (done.findings, done.failed, done.manifest) == (0, 0, None)
    assert log[:2] == [FileStart(str(SEGMENT), "log"), LogStart(0)]
    batches = [r for r in log if isinstance(r, BatchRow)]
    # 0-2 plain, 3-4 orders-app, 5 its COMMIT, 6-7 reporting-app (never closed), 8 plain
    assert [(b.frame.base_offset, b.frame.last_offset) for b in batches] == [(0, 2), (3, 4), (5, 5), (6, 7), (8, 8)]
    assert [b.header.producer_id for b in batches] == [-1, 2000, 2000, 2002, -1]
    assert [b.frame.position for b in batches][3] == 600  # find-hanging's firstBatch of reporting-app
    assert index[0] == FileStart(str(ORDERS0 / "00000000000000000000.index"), "index")
    assert [(r.kind, r.text) for r in index[1:] if isinstance(r, EntryRow)] == [("index_entry", "offset: 5 position: 522")]


def test_a_file_that_cannot_be_read_is_told_and_the_others_are_dumped(tmp_path):
    told = Told()
    missing = tmp_path / "gone.log"
    done, shown = _dump(missing, SEGMENT, listener=told)
    assert done.failed == EXIT_INPUT and done.findings == 0
    assert told.notes == [f"{missing}: no such file"]
    [log] = shown
    assert log[0] == FileStart(str(SEGMENT), "log")


def test_a_dump_manifest_records_the_files_named(tmp_path):
    target = tmp_path / "dump-manifest.json"
    done, _ = _dump(SEGMENT, manifest=str(target), command_line=("dump", str(SEGMENT)))
    m = done.manifest.manifest
    assert (m.command, m.engine, m.inputs) == ("dump", None, (str(SEGMENT),))
    assert [e.path for e in m.entries if e.sha256 is not None] == [str(SEGMENT)]
    assert not verify(str(target)).differs


# -- verify-manifest ------------------------------------------------------------------------------


def test_verify_names_the_file_that_changed_since_the_run(tmp_path):
    disk = copy_without(EXAMPLE, tmp_path / "disk")
    target = tmp_path / "scan-manifest.json"
    written = scan(ScanRequest(evidence(disk, manifest=str(target)))).manifest
    assert written.manifest.as_of_ms == EXAMPLE_AS_OF and written.manifest.command == "scan"
    clean = verify(str(target))
    assert not clean.differs and clean.sha256 == written.ref.sha256 and clean.version >= 2
    changed = disk / "broker-1" / "orders-0" / "00000000000000000015.log"
    changed.write_bytes(changed.read_bytes()[:-1])  # the copy, never the bundled disk
    after = verify(str(target))
    assert after.differs
    assert [(r.path, r.status) for r in after.rows if r.status != "ok"] == [(str(changed), "changed")]


# -- export ---------------------------------------------------------------------------------------


def test_export_writes_every_table_and_says_how_many_rows(tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "out"
    done = export(ExportRequest(evidence(EXAMPLE), str(out)))
    assert done.counts == {"batches": 72, "transactions": 12, "producer_states": 9, "partitions": 3,
                           "coordinator_records": 21, "findings": 0}
    assert (done.engine, done.as_of.time_ms, done.findings) == ("local", EXAMPLE_AS_OF, ())
    assert done.not_counted == (("__cluster_metadata", 1), ("__transaction_state", 3))
    summary = json.loads((out / "_export.json").read_text())
    assert {name: t["rows"] for name, t in summary["tables"].items()} == done.counts
    assert sorted(p.name for p in out.iterdir()) == sorted([*done.counts, "_export.json"])
    with pytest.raises(UsageError, match="not empty"):
        export(ExportRequest(evidence(EXAMPLE), str(out)))
    again = export(ExportRequest(evidence(EXAMPLE), str(out), overwrite=True))  # a previous export: replaced
    assert again.counts == done.counts


def test_export_refuses_an_output_inside_the_evidence(tmp_path):
    disk = copy_without(EXAMPLE, tmp_path / "disk")
    with pytest.raises(UsageError, match="--out"):
        export(ExportRequest(evidence(disk), str(disk / "broker-1" / "export")))
    assert not (disk / "broker-1" / "export").exists()


# -- the broker version ---------------------------------------------------------------------------


def test_the_broker_version_from_the_disk_or_as_given():
    inventory = discover([str(EXAMPLE)])
    disk = broker_version_of(inventory)
    assert disk.source is VersionSource.DISK and disk.low == (4, 1) and disk.high is None
    assert disk.at_least((3, 0)) and "metadata.version 4.1-IV1" in version_label(disk)
    given = broker_version_of(inventory, given=(3, 6))
    assert (given.source, given.low, given.high, given.disk) == (VersionSource.GIVEN, (3, 6), (3, 6), disk)
    assert version_label(given) == f"broker 3.6 (--broker-version; the disks say {version_label(disk)})"
    assert version_evidence(given) == ("--broker-version 3.6", *version_evidence(disk))  # the disks' own kept
    assert not given.at_least((3, 7))
