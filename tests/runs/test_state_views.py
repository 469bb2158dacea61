"""describe-producers, list and describe through their typed requests and results
(``forensics.runs.state``): the rows, the as-of time, the notes and the usage errors raised before
anything is read; checked against the commands' JSON for the same disk."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import forensics.cli.state_cmd  # noqa: F401  (registers the commands)
from forensics.cli.app import app
from forensics.errors import UsageError
from forensics.exit_codes import EXIT_USAGE
from forensics.render.clock_text import as_of_source
from forensics.runs.state import (
    DescribeRequest,
    ListRequest,
    ProducersRequest,
    describe_id,
    describe_producers,
    list_ids,
)
from tests.machine_output import rows_of
from tests.runs.support import EXAMPLE, EXAMPLE_AS_OF, copy_without, evidence

EX = evidence(EXAMPLE)


def _producers(result):
    return [(r.producer_id, r.producer_epoch, r.latest_coordinator_epoch, r.last_sequence,
             r.current_transaction_start_offset, r.last_offset) for r in result.rows]


# -- describe-producers ---------------------------------------------------------------------------


def test_describe_producers_of_each_example_partition():
    o0 = describe_producers(ProducersRequest(EX, "orders", 0))
    # (producer id, epoch, coordinator epoch, last sequence, open transaction's first offset, last offset)
    assert _producers(o0) == [(2000, 0, 1, 3, None, 13), (2002, 1, -1, 1, 6, 7)]
    assert all(r.broker_id == 1 and (r.topic, r.partition) == ("orders", 0) for r in o0.rows)
    assert o0.as_of.time_ms == EXAMPLE_AS_OF and o0.findings == () and o0.manifest is None
    [opened] = [t for t in o0.rows[1].transactions if t.outcome == "OPEN"]
    assert (opened.first_offset, opened.last_data_offset, opened.marker_offset) == (6, 7, None)
    assert [(t.first_offset, t.marker_offset, t.outcome) for t in o0.rows[0].transactions] == [
        (3, 5, "COMMIT"), (9, 10, "ABORT"), (13, 14, "COMMIT")]
    o1 = describe_producers(ProducersRequest(EX, "orders", 1))
    assert _producers(o1) == [(1000, 0, -1, 2, None, 9), (2000, 0, 1, 3, None, 13), (2001, 3, 1, 0, None, 5),
                              (2002, 1, 1, 0, None, 10)]
    p0 = describe_producers(ProducersRequest(EX, "payments", 0, broker_id=1))
    assert _producers(p0) == [(1000, 0, -1, 2, None, 11), (2000, 0, 1, 1, None, 7), (2001, 3, 1, 2, None, 9)]


def test_describe_producers_follows_the_epoch_bumps_of_transaction_version_2(scenarios):
    done = describe_producers(ProducersRequest(evidence(scenarios["tv2"]), "tv2", 0))
    [row] = done.rows
    assert (row.producer_id, row.producer_epoch, row.latest_coordinator_epoch,
            row.current_transaction_start_offset) == (800, 3, 0, 5)
    # TV2: every marker carries the next epoch (commit e0 -> e1, abort e1 -> e2), the open one none yet
    assert [(t.first_offset, t.outcome, t.marker_epoch) for t in row.transactions] == [
        (0, "COMMIT", 1), (3, "ABORT", 2), (5, "OPEN", None)]


def test_describe_producers_refuses_what_the_evidence_lacks():
    with pytest.raises(UsageError, match=r"no partition 5 of topic 'orders' in the evidence; partitions: 0-1") as e:
        describe_producers(ProducersRequest(EX, "orders", 5))
    assert e.value.exit_code == EXIT_USAGE
    with pytest.raises(UsageError, match=r"no broker 2 in the evidence; brokers: 1"):
        describe_producers(ProducersRequest(EX, "orders", 0, broker_id=2))


def test_describe_producers_is_what_the_command_prints():
    done = describe_producers(ProducersRequest(EX, "orders", 0))
    r = CliRunner().invoke(app, ["describe-producers", str(EXAMPLE), "--topic", "orders", "--partition", "0",
                                 "--format", "json", "--no-progress"])
    assert r.exit_code == 0, r.output
    assert rows_of(r.stdout) == json.loads(json.dumps([row.as_json() for row in done.rows]))


# -- list -----------------------------------------------------------------------------------------


def _ids(result):
    return [r.transactional_id for r in result.rows]


def test_list_every_transactional_id_of_the_example_disk():
    done = list_ids(ListRequest(EX))
    assert [(r.transactional_id, r.producer_id, r.producer_epoch, r.transaction_state,
             r.transaction_state_partition, r.transaction_timeout_ms) for r in done.rows] == [
        ("orders-app", 2000, 0, "CompleteCommit", 1, 60000), ("payments-app", 2001, 3, "CompleteCommit", 2, 60000),
        ("reporting-app", 2002, 1, "CompleteCommit", 0, 30000)]
    assert done.note is None and done.findings == () and done.as_of.time_ms == EXAMPLE_AS_OF
    r = CliRunner().invoke(app, ["list", str(EXAMPLE), "--format", "json", "--no-progress"])
    assert r.exit_code == 0 and rows_of(r.stdout) == json.loads(json.dumps([row.as_json() for row in done.rows]))


def test_list_filters_as_kafka_4_1_does_and_says_when_none_matched():
    none = list_ids(ListRequest(EX, state="ongoing"))
    assert none.rows == ()
    assert none.note == "no transactional id is in state Ongoing; states in the evidence: CompleteCommit (3)"
    assert _ids(list_ids(ListRequest(EX, transactional_id_pattern="pay.*"))) == ["payments-app"]
    assert _ids(list_ids(ListRequest(EX, transactional_id_pattern="pay"))) == []  # matched whole
    # running longer than 7 s as of the incident clock: only reporting-app's (started 7.3 s before it)
    assert _ids(list_ids(ListRequest(EX, duration_filter_ms=7_000, as_of=EXAMPLE_AS_OF))) == ["reporting-app"]
    assert _ids(list_ids(ListRequest(EX, duration_filter_ms=-1))) == ["orders-app", "payments-app", "reporting-app"]
    both = list_ids(ListRequest(EX, state="Ongoing", transactional_id_pattern="x.*"))
    assert both.note.startswith("no transactional id is in state Ongoing and matches 'x.*'; ")


def test_list_finds_the_ongoing_id_of_a_scenario(scenarios):
    assert _ids(list_ids(ListRequest(evidence(scenarios["tv2"]), state="ONGOING"))) == ["tv2-app"]


def test_list_refuses_a_bad_filter_before_reading():
    with pytest.raises(UsageError, match=r"--transactional-id-pattern '\(': not a regular expression"):
        list_ids(ListRequest(evidence(EXAMPLE / "no-such-dir"), transactional_id_pattern="("))
    with pytest.raises(UsageError, match=r"no transaction state 'bogus'; states: Empty, Ongoing, "):
        list_ids(ListRequest(EX, state="bogus"))


# -- describe -------------------------------------------------------------------------------------


def test_describe_one_id_with_its_history():
    done = describe_id(DescribeRequest(EX, "reporting-app"))
    [row] = done.rows
    assert (row.producer_id, row.producer_epoch, row.coordinator_epoch, row.transaction_state_partition) == (
        2002, 1, 1, 0)
    assert [(h.offset, h.transaction_state, h.topic_partitions) for h in row.history] == [
        (0, "Empty", []), (1, "Ongoing", ["orders-1"]), (2, "PrepareCommit", ["orders-1"]),
        (3, "CompleteCommit", [])]
    assert row.current_transaction_start_time_ms == 1767225606000
    assert row.transaction_duration_ms == EXAMPLE_AS_OF - 1767225606000 == 7300
    later = describe_id(DescribeRequest(EX, "reporting-app", as_of=EXAMPLE_AS_OF + 60_000))
    assert as_of_source(later.as_of) == "--as-of" and later.rows[0].transaction_duration_ms == 67_300


def test_describe_follows_a_transaction_version_2_id(scenarios):
    [row] = describe_id(DescribeRequest(evidence(scenarios["tv2"]), "tv2-app")).rows
    assert (row.transaction_state, row.topic_partitions, row.producer_epoch) == ("Ongoing", ["tv2-0", "tv2-1"], 3)
    assert [(h.transaction_state, h.producer_epoch) for h in row.history] == [
        ("Empty", 0), ("Ongoing", 0), ("PrepareCommit", 1), ("CompleteCommit", 1), ("Ongoing", 1),
        ("PrepareAbort", 2), ("CompleteAbort", 2), ("Ongoing", 2), ("PrepareCommit", 3), ("CompleteCommit", 3),
        ("Ongoing", 3)]


def test_describe_refuses_an_id_the_evidence_lacks(tmp_path):
    with pytest.raises(UsageError, match="no transactional id 'nobody' in the evidence; transactional ids: "
                                         "orders-app, payments-app, reporting-app"):
        describe_id(DescribeRequest(EX, "nobody"))
    disk = copy_without(EXAMPLE, tmp_path / "disk", "broker-1/__transaction_state-0")  # reporting-app's
    with pytest.raises(UsageError, match="no transactional id 'reporting-app' in the evidence"):
        describe_id(DescribeRequest(evidence(disk), "reporting-app"))
    assert _ids(list_ids(ListRequest(evidence(disk)))) == ["orders-app", "payments-app"]
