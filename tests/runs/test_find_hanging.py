"""find-hanging through its typed request and result (``forensics.runs.hanging.find_hanging``): the
rows (:class:`~forensics.report.hanging.HangingRow`), the outcome the command maps to its exit code,
the run's as-of time, version, evidence and warnings, on the example disk, every hanging scenario and
partial copies; and the rows against what ``find-hanging --format json`` prints for the same disk."""

from __future__ import annotations

import hashlib
import json

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
from fixtures import hanging_scenarios
from forensics.analysis.evidence_model import NoAllClear, NoAllClearWhy
from forensics.analysis.verdict_kinds import VerdictKind
from forensics.cli.app import app
from forensics.errors import UsageError
from forensics.exit_codes import EXIT_FOUND, EXIT_OK, EXIT_UNDECIDED
from forensics.model import TopicPartition
from forensics.pipeline.engine import EngineName, EngineSpec
from forensics.render.broker_version_text import version_label
from forensics.render.armed_text import KIND_UNARMED
from forensics.render.evidence_text import no_all_clear_text
from forensics.render.time_text import stamp
from forensics.render.evidence_text import NO_COORDINATOR_WARNING
from forensics.report.hanging import Outcome
from forensics.report.preview import AbortPreview
from forensics.columns import ABSENT
from forensics.runs.hanging import FindHangingRequest, VerdictRequest, find_hanging
from forensics.runs.manifest import verify
from forensics.runs.scan import ScanRequest, scan
from forensics.render.clock_text import as_of_source
from tests.machine_output import rows_of
from tests.runs.support import (
    EXAMPLE,
    EXAMPLE_AS_OF,
    REAL_TV2,
    REPORTING_LAST_TIMESTAMP,
    Told,
    copy_without,
    evidence,
)

# the exit code find-hanging gives each outcome (docs/cli.md)
EXIT_OF = {Outcome.CLEAR: EXIT_OK, Outcome.HANGING: EXIT_FOUND, Outcome.UNDECIDED: EXIT_UNDECIDED}
runner = CliRunner()


def _find(*paths, show_all=False, previews=False, redact=False, listener=None, **verdicts):
    req = FindHangingRequest(VerdictRequest(evidence(*paths), **verdicts), show_all, previews, redact)
    return find_hanging(req) if listener is None else find_hanging(req, listener)


def _cli(*args):
    return runner.invoke(app, ["find-hanging", *map(str, args), "--format", "json", "--no-progress"])


def _flag(argv, name):
    return argv[argv.index(name) + 1]


# -- the example disk: one transaction proven hanging ---------------------------------------------


def test_the_example_disk_has_one_hanging_transaction():
    found = _find(EXAMPLE)
    assert found.outcome is Outcome.HANGING and EXIT_OF[found.outcome] == EXIT_FOUND
    assert found.unproven is None and found.hidden == ()
    [row] = found.rows
    assert (row.topic, row.partition, row.broker_id) == ("orders", 0, 1)
    assert (row.producer_id, row.producer_epoch, row.coordinator_epoch) == (2002, 1, -1)
    assert (row.start_offset, row.last_timestamp, row.last_sequence) == (6, REPORTING_LAST_TIMESTAMP, 1)
    assert row.duration_ms == EXAMPLE_AS_OF - REPORTING_LAST_TIMESTAMP == 7049
    assert (row.duration_s, row.duration_min) == (7, 0)
    assert (row.verdict, row.verdict_state, row.transactional_id) == ("hanging", "hanging", "reporting-app")
    assert row.reason == ("coordinator has 'reporting-app' in CompleteCommit (epoch 1): no transaction in flight, "
                          "no marker will come")
    assert row.armed and row.not_armed_because is None and row.advice == [] and row.overdue_ms is None
    assert row.coordinator_partition == 0
    # the safe rule: the entry's epoch, and max(its coordinator epoch -1, 0)
    assert row.abort_args[-10:] == ["--topic", "orders", "--partition", "0", "--producer-id", "2002",
                                    "--producer-epoch", "1", "--coordinator-epoch", "0"]
    assert row.abort_args_start_offset[-2:] == ["--start-offset", "6"]
    assert row.abort_forms == {"abortArgs": row.abort_args, "abortArgsStartOffset": row.abort_args_start_offset,
                               "kafkaPythonArgs": row.kafka_python_args}
    assert row.active_form == "abortArgsStartOffset"  # the brokers are 4.1: the --start-offset form is armed
    ev = row.evidence.as_json()
    assert (ev["logStartOffset"], ev["lastStableOffset"], ev["highWatermark"]) == (0, 6, 16)
    assert ev["openTransaction"] == {"firstOffset": 6, "lastDataOffset": 7, "batches": 1, "records": 2, "bytes": 249,
                                     "epochs": [1], "fromSnapshot": False}
    assert ev["firstBatch"] == {"path": f"{EXAMPLE}/broker-1/orders-0/00000000000000000000.log", "position": 600}
    assert (ev["coordinatorRecord"]["partition"], ev["coordinatorRecord"]["offset"],
            ev["coordinatorRecord"]["state"]) == (0, 3, "CompleteCommit")
    assert row.abort_preview is ABSENT  # none asked for


def test_the_run_says_its_clock_version_and_evidence():
    run = _find(EXAMPLE).run
    assert run.as_of.time_ms == EXAMPLE_AS_OF
    assert as_of_source(run.as_of).startswith(f"newest batch timestamp, in {EXAMPLE}/broker-1/__cluster_metadata-0/"
                                       "00000000000000000000.log; ")
    [row] = _find(EXAMPLE).rows
    assert (row.as_of_ms, row.as_of_source) == (run.as_of.time_ms, as_of_source(run.as_of))
    assert version_label(run.version).startswith("broker 4.1 or newer: KRaft, metadata.version 4.1-IV1")
    assert run.evidence == () and run.warnings == () and run.manifest is None
    assert run.stats is not None and run.stats.engine == "local"  # the executor's statistics (--stats, KAFKA_FORENSICS_STATS)


def test_a_given_as_of_moves_the_duration_and_the_age_gate_does_not_change_the_verdict():
    later = REPORTING_LAST_TIMESTAMP + 16 * 60_000
    found = _find(EXAMPLE, as_of=later)
    [row] = found.rows
    assert (found.run.as_of.time_ms, as_of_source(found.run.as_of)) == (later, "--as-of")
    assert (row.duration_ms, row.duration_s, row.duration_min) == (960_000, 960, 16)
    assert row.verdict == "hanging" and row.armed  # proven by the coordinator's records, whatever its age
    before = _find(EXAMPLE, as_of=REPORTING_LAST_TIMESTAMP - 30_000).rows[0]
    assert (before.duration_ms, before.duration_min) == (-30_000, 0)  # toward zero, as TimeUnit.toMinutes


def test_previews_say_what_the_abort_discards_and_redact_hides_the_keys():
    [row] = _find(EXAMPLE, previews=True, redact=True).rows
    p = row.abort_preview
    assert isinstance(p, AbortPreview)
    assert (p.first_offset, p.last_offset, p.batches, p.records, p.bytes) == (6, 7, 1, 2, 249)
    assert (p.last_stable_offset, p.high_watermark, p.lso_after_abort) == (6, 16, 16)
    assert p.keys == "<redacted>" and p.next_blocking_transaction is None
    assert p.stuck_consumer_groups is None  # no __consumer_offsets on the example disk
    assert p.segments == [f"{EXAMPLE}/broker-1/orders-0/00000000000000000000.log"]
    plain = _find(EXAMPLE, previews=True).rows[0].abort_preview
    assert plain.keys != "<redacted>" and plain.bytes == 249


def test_the_rows_are_what_find_hanging_prints_as_json():
    """One answer two ways: the typed rows, made JSON, are the command's rows, byte for byte once parsed."""
    found = _find(EXAMPLE, show_all=True, previews=True)
    printed = _cli(EXAMPLE, "--all")
    assert printed.exit_code == EXIT_OF[found.outcome] == EXIT_FOUND
    assert json.loads(json.dumps([r.as_json() for r in found.rows])) == rows_of(printed.stdout)


def test_the_reasons_write_their_times_as_stamps_aged_from_the_as_of_time(scenarios):
    root, as_of = scenarios["ongoing"], hanging_scenarios.expected("ongoing")["asOf"]
    found = _find(root, show_all=True, as_of=as_of)
    [stamped] = found.rows
    [v] = found.hidden  # ongoing in time: needs no one
    assert stamped.verdict == "ongoing"
    assert f" since {stamp(v.reason.start_ms, as_of)}:" in stamped.reason


# -- every hanging scenario, against its hand-derived expectations --------------------------------


@pytest.mark.parametrize("name", list(hanging_scenarios.SCENARIOS))
def test_every_scenario_as_its_expected_json_says(name, scenarios):
    exp = hanging_scenarios.expected(name)
    found = _find(scenarios[name], show_all=True, as_of=exp["asOf"])
    assert EXIT_OF[found.outcome] == exp["exitCode"]
    rows = {(r.topic, r.partition, r.producer_id, r.start_offset): r for r in found.rows}
    assert set(rows) == {(v["topic"], v["partition"], v["producerId"], v["startOffset"]) for v in exp["verdicts"]}
    for v in exp["verdicts"]:
        row = rows[(v["topic"], v["partition"], v["producerId"], v["startOffset"])]
        kind = VerdictKind.OVERDUE if v.get("overdue") else VerdictKind(v["verdict"])
        assert (row.verdict, row.verdict_state) == (kind.word, kind.value)
        assert row.armed == v["abortable"] == (row.abort_args is not None)
        assert all(part in row.reason for part in v["reasonContains"]), row.reason
        assert (row.overdue_ms is not None) == bool(v.get("overdue"))
        if "brokerId" in v:
            assert row.broker_id == v["brokerId"]
        if "producerEpoch" in v:  # the safe rule's values, in every form that names them
            assert row.producer_epoch == v["producerEpoch"]
            assert max(row.coordinator_epoch, 0) == v["coordinatorEpoch"]
            for form in ("abortArgs", "kafkaPythonArgs"):
                argv = row.abort_forms[form]
                assert (_flag(argv, "--producer-epoch"), _flag(argv, "--coordinator-epoch")) == (
                    str(v["producerEpoch"]), str(v["coordinatorEpoch"]))
    # without show_all: every open transaction but those the coordinator will still finish in time
    plain = _find(scenarios[name], as_of=exp["asOf"])
    assert plain.outcome is found.outcome
    assert {(r.topic, r.partition, r.start_offset) for r in plain.rows} == {
        (v["topic"], v["partition"], v["startOffset"]) for v in exp["verdicts"]
        if v["verdict"] != "ongoing" or v.get("overdue")}
    assert len(plain.rows) + len(plain.hidden) == len(found.rows)
    assert all(v.verdict is VerdictKind.ONGOING for v in plain.hidden)


def test_a_torn_marker_is_unverifiable_with_the_damage_as_evidence(scenarios):
    exp = hanging_scenarios.expected("torn-tail-marker")
    found = _find(scenarios["torn-tail-marker"], as_of=exp["asOf"])
    assert found.outcome is Outcome.UNDECIDED
    [row] = found.rows
    assert (row.verdict, row.armed, row.producer_id, row.start_offset) == ("unverifiable", False, 200, 1)
    assert row.reason.startswith("not proven: coordinator has 'torn-app' in CompleteCommit (epoch 0)")
    assert "the log of torn-0 is damaged at byte 356 of 00000000000000000000.log (truncated_tail)" in row.reason
    # damaged, and copied too soon after its coordinator's newest record: the second says why it is not armed
    kinds = [g.kind for g in row.evidence.gaps]
    assert "truncated_tail" in kinds and "too_recent" in kinds
    assert row.not_armed_because.startswith("too recent to judge from this copy (see the reason)")
    assert [(f.kind.value, f.path.rsplit("/", 2)[-2:]) for f in found.run.evidence] == [
        ("truncated_tail", ["torn-0", "00000000000000000000.log"])]
    # a copy of a running broker: said once for the run
    assert len(found.run.warnings) == 1 and "has no .kafka_cleanshutdown" in found.run.warnings[0]


def test_overdue_needs_a_person_and_says_how_late(scenarios):
    exp = hanging_scenarios.expected("tv2")
    found = _find(scenarios["tv2"], as_of=exp["asOf"])
    assert found.outcome is Outcome.UNDECIDED
    assert [(r.partition, r.producer_epoch, r.start_offset, r.verdict, r.verdict_state) for r in found.rows] == [
        (0, 3, 5, "ongoing", "overdue"), (1, 3, 5, "ongoing", "overdue")]
    for row in found.rows:
        assert row.overdue_ms > 60_000 and not row.armed and row.abort_forms is None
        assert row.advice[0].startswith("Ongoing past its own timeout (60000 ms)")


# -- partial copies: a partition dir left out ----------------------------------------------------


def test_a_real_disk_missing_a_partition_is_no_all_clear(tmp_path):
    whole = _find(REAL_TV2)
    assert whole.outcome is Outcome.CLEAR and whole.unproven is None and whole.rows == ()
    assert [(v.view.topic_partition.topic, v.view.topic_partition.partition, v.entry.producer_id, v.start_offset,
             v.verdict) for v in whole.hidden] == [("d-txn-ongoing", 0, 20, 2, VerdictKind.ONGOING),
                                                   ("d-txn-ongoing", 1, 20, 2, VerdictKind.ONGOING)]
    disk = copy_without(REAL_TV2, tmp_path / "disk", "b-txn-aborts-1")
    part = _find(disk)
    assert part.outcome is Outcome.UNDECIDED and EXIT_OF[part.outcome] == EXIT_UNDECIDED
    assert part.unproven == NoAllClear(NoAllClearWhy.COPIES_MISSING, (TopicPartition("b-txn-aborts", 1),))
    assert no_all_clear_text(part.unproven) == "1 partition(s) lack the copy that matters (b-txn-aborts-1)"
    assert part.rows == () and len(part.hidden) == 2  # the ongoing ones are still in time
    [warning] = part.run.warnings
    assert warning.startswith("evidence: 1 partition(s) without the copy that matters among the inputs, of which "
                              "b-txn-aborts-1: its leader's copy (broker 1, ")
    printed = _cli(disk)
    assert printed.exit_code == EXIT_UNDECIDED and rows_of(printed.stdout) == []
    assert f"this is no all-clear: {no_all_clear_text(part.unproven)}" in " ".join(printed.stderr.split())


def test_a_coordinator_partition_left_out_makes_the_hang_unverifiable(tmp_path):
    disk = copy_without(EXAMPLE, tmp_path / "disk", "broker-1/__transaction_state-0")
    found = _find(disk)
    assert found.outcome is Outcome.UNDECIDED and found.unproven is None
    [row] = found.rows
    assert (row.producer_id, row.start_offset, row.verdict, row.armed) == (2002, 6, "unverifiable", False)
    assert row.transactional_id is None and row.coordinator_partition is None
    assert row.reason == ("no coordinator record for producer id 2002, but __transaction_state partitions 0 are not "
                          "among the inputs: the coordinator may still complete this transaction")
    assert row.not_armed_because == KIND_UNARMED[VerdictKind.UNVERIFIABLE]
    assert row.abort_args is None and row.abort_forms["abortArgs"][-4:] == [
        "--producer-epoch", "1", "--coordinator-epoch", "0"]
    assert row.advice == ["add the disks holding every __transaction_state partition and run again, or ask the "
                          "live cluster (kafka-transactions.sh describe-producers / find-hanging)"]
    [warning] = found.run.warnings
    assert "of which __transaction_state-0: its leader's copy" in warning
    assert scan(ScanRequest(evidence(disk))).evidence_gaps == found.run.warnings  # one rule, the same words


def test_without_any_coordinator_data_every_verdict_rests_on_age(tmp_path):
    part = tmp_path / "orders-0"
    copy_without(EXAMPLE / "broker-1" / "orders-0", part)
    found = _find(part)
    first, then = found.run.warnings  # first what weakens every verdict, then how the copy was taken
    assert first == NO_COORDINATOR_WARNING and then.startswith(f"evidence: not one quiescent moment: {part} given ")
    [row] = found.rows
    assert (row.verdict, row.armed, row.transactional_id) == ("unverifiable", False, None)
    assert row.reason.startswith("no __transaction_state in the inputs: the coordinator may still complete")
    assert found.outcome is Outcome.UNDECIDED


# -- the selection, the listener, the engine and the manifest -------------------------------------


def test_a_topic_selected_judges_its_partitions_only():
    found = _find(EXAMPLE, topic="payments")
    assert found.rows == () and found.hidden == () and found.outcome is Outcome.CLEAR
    assert _find(EXAMPLE, topic="orders", partition=1).rows == ()
    assert [r.partition for r in _find(EXAMPLE, topic="orders", partition=0).rows] == [0]
    with pytest.raises(UsageError, match="no topic 'nope' in the evidence"):
        _find(EXAMPLE, topic="nope")


def test_the_listener_hears_the_engine_and_the_progress():
    told = Told()
    _find(EXAMPLE, listener=told)
    assert told.notes == [] and told.warnings == []
    [chosen] = told.engines
    assert chosen.name is EngineName.local and chosen.input_bytes == 10659
    assert told.bars == [(10659, "rebuilding state (local)", 10659)]  # every log byte told, once
    warned = Told()
    _find(EXAMPLE, listener=warned, engine=EngineSpec(EngineName.local, master="local[1]"))
    assert warned.warnings == ["--master/--conf apply to --engine spark only"]


def test_the_manifest_records_the_run_and_verifies(tmp_path):
    target = tmp_path / "manifest.json"
    req = FindHangingRequest(VerdictRequest(evidence(EXAMPLE, manifest=str(target), command_line=("find-hanging",))))
    written = find_hanging(req).run.manifest
    assert written.ref.path == str(target)
    assert written.ref.sha256 == hashlib.sha256(target.read_bytes()).hexdigest()
    m = written.manifest
    assert (m.command, m.command_line, m.inputs, m.as_of_ms) == ("find-hanging", ("find-hanging",), (str(EXAMPLE),),
                                                                 EXAMPLE_AS_OF)
    assert written.problems == ()
    checked = verify(str(target))
    assert not checked.differs and checked.sha256 == written.ref.sha256
    assert checked.recorded == len(m.entries)


def test_a_manifest_inside_the_evidence_is_refused_before_anything_is_written(tmp_path):
    disk = copy_without(EXAMPLE, tmp_path / "disk")
    target = disk / "broker-1" / "manifest.json"
    with pytest.raises(UsageError):
        find_hanging(FindHangingRequest(VerdictRequest(evidence(disk, manifest=str(target)))))
    assert not target.exists()
