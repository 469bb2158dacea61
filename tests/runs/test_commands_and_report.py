"""abort-commands and the incident report through their typed requests and results
(``forensics.runs.hanging.abort_commands``, ``incident_report``): which rows carry commands, which are
armed and why not, what the report model counts and draws."""

from __future__ import annotations

from fixtures import hanging_scenarios
from forensics.analysis.verdict_kinds import VerdictKind
from forensics.render.broker_version_text import version_label
from forensics.render.armed_text import KIND_UNARMED
from forensics.render.evidence_text import NO_COORDINATOR_WARNING
from forensics.columns import ABSENT
from forensics.runs.hanging import AbortRequest, ReportRequest, VerdictRequest, abort_commands, incident_report
from tests.runs.support import EXAMPLE, EXAMPLE_AS_OF, REPORTING_LAST_TIMESTAMP, copy_without, evidence

AGE_GATE_MS = 15 * 60_000  # --max-transaction-timeout's default


def _abort(*paths, bootstrap="k:9092", command_config=None, arm_unverifiable=False, **verdicts):
    return abort_commands(AbortRequest(VerdictRequest(evidence(*paths), **verdicts), bootstrap, command_config,
                                       arm_unverifiable=arm_unverifiable))


def _report(*paths, **verdicts):
    return incident_report(ReportRequest(VerdictRequest(evidence(*paths), **verdicts)))


# -- abort-commands -------------------------------------------------------------------------------


def test_the_hanging_transaction_gets_its_commands_with_the_brokers_and_config_given():
    done = _abort(EXAMPLE, command_config="client.properties")
    [row] = done.rows
    assert row.armed and row.verdict == "hanging" and row.not_armed_because is None
    assert row.abort_args == ["kafka-transactions.sh", "--bootstrap-server", "k:9092", "--command-config",
                              "client.properties", "abort", "--topic", "orders", "--partition", "0", "--producer-id",
                              "2002", "--producer-epoch", "1", "--coordinator-epoch", "0"]
    assert row.abort_args_start_offset == ["kafka-transactions.sh", "--bootstrap-server", "k:9092", "--command-config",
                                           "client.properties", "abort", "--topic", "orders", "--partition", "0",
                                           "--start-offset", "6"]
    assert row.kafka_python_args[:6] == ["python", "-m", "kafka.admin", "-b", "k:9092", "transactions"]
    assert "--command-config" not in row.kafka_python_args  # kafka-python's CLI takes no client config file
    assert row.as_of_ms is ABSENT  # the script states its as-of once, in its header
    assert row.abort_preview.lso_after_abort == 16  # every row with commands says what its abort discards
    assert done.run.as_of.time_ms == EXAMPLE_AS_OF and done.run.warnings == ()


def test_an_unverifiable_abort_is_armed_only_on_request_and_past_the_age_gate(tmp_path):
    part = copy_without(EXAMPLE / "broker-1" / "orders-0", tmp_path / "orders-0")
    old = REPORTING_LAST_TIMESTAMP + AGE_GATE_MS + 60_000
    young = REPORTING_LAST_TIMESTAMP + 60_000
    [plain] = _abort(part, as_of=old).rows
    assert (plain.verdict, plain.armed, plain.abort_args) == ("unverifiable", False, None)
    assert plain.not_armed_because == KIND_UNARMED[VerdictKind.UNVERIFIABLE]
    assert plain.abort_forms["abortArgs"][-6:] == ["--producer-id", "2002", "--producer-epoch", "1",
                                                   "--coordinator-epoch", "0"]
    done = _abort(part, as_of=old, arm_unverifiable=True)
    [armed] = done.rows
    assert armed.armed and armed.not_armed_because is None
    assert armed.abort_args == plain.abort_forms["abortArgs"]
    assert done.run.warnings[0] == NO_COORDINATOR_WARNING
    [gated] = _abort(part, as_of=young, arm_unverifiable=True).rows
    assert not gated.armed and gated.abort_args is None
    assert gated.not_armed_because == "younger than the --max-transaction-timeout age gate"
    [shorter] = _abort(part, as_of=young, arm_unverifiable=True, max_timeout_ms=30_000).rows
    assert shorter.armed  # a minute old is past a 30 s gate


def test_a_commit_pending_is_never_offered_an_abort(scenarios):
    exp = hanging_scenarios.expected("prepare-commit-pending")
    [row] = _abort(scenarios["prepare-commit-pending"], as_of=exp["asOf"]).rows
    assert (row.topic, row.partition, row.producer_id, row.verdict) == ("prep", 1, 700, "stuck-coordinator")
    assert row.abort_forms is None and row.abort_args is None and not row.armed
    assert row.not_armed_because == ("the coordinator decided to COMMIT and still holds this partition in "
                                     "PrepareCommit: never abort it (see the advice)")
    assert row.advice[0].startswith("do NOT abort: the coordinator decided to COMMIT")


def test_fenced_and_ongoing_rows_say_why_they_are_not_armed(scenarios):
    exp = hanging_scenarios.expected("fenced-coordinator")
    [fenced] = _abort(scenarios["fenced-coordinator"], as_of=exp["asOf"]).rows
    assert (fenced.verdict, fenced.coordinator_epoch, fenced.start_offset) == ("fenced-coordinator", 9, 2)
    assert not fenced.armed and fenced.abort_forms is None  # the coordinator decided COMMIT: no abort offered
    assert fenced.not_armed_because == KIND_UNARMED[VerdictKind.FENCED]
    exp = hanging_scenarios.expected("ongoing")
    [ongoing] = _abort(scenarios["ongoing"], as_of=exp["asOf"]).rows  # every open transaction has a row
    assert (ongoing.verdict, ongoing.armed, ongoing.abort_forms) == ("ongoing", False, None)
    assert ongoing.not_armed_because == KIND_UNARMED[VerdictKind.ONGOING]


# -- the incident report --------------------------------------------------------------------------


def test_the_report_counts_and_draws_the_example_disk():
    done = _report(EXAMPLE)
    inc = done.incident
    assert (inc.as_of_ms, inc.inputs, inc.brokers) == (EXAMPLE_AS_OF, (str(EXAMPLE),), version_label(done.run.version))
    assert inc.manifest_path is None and inc.selection is None and inc.warnings == ()
    s = inc.summary
    assert (s.brokers, s.log_dirs, s.topics, s.partitions, s.replicas) == ((1,), 1, 2, 3, 3)
    assert (s.txn_state_partitions, s.txn_state_partition_count, s.transactional_ids) == (3, 3, 3)
    assert (s.open_transactions, s.hanging, s.unverifiable, s.attention) == (1, 1, 0, 0)
    assert s.verdicts == (("hanging", 1),) and s.findings == 0 and s.log_bytes == 10659
    assert s.not_counted == (("__cluster_metadata", 1), ("__transaction_state", 3))
    [t] = inc.transactions
    assert (t.topic, t.partition, t.producer_id, t.producer_epoch, t.start_offset) == ("orders", 0, 2002, 1, 6)
    assert (t.verdict, t.abortable, t.armed, t.transactional_id) == ("hanging", True, True, "reporting-app")
    assert t.duration_ms == EXAMPLE_AS_OF - REPORTING_LAST_TIMESTAMP
    assert t.active_form == "abortArgsStartOffset"
    assert {c.key for c in t.commands} == {"abortArgs", "abortArgsStartOffset", "kafkaPythonArgs"}
    lso = {(x.topic, x.partition): x for x in inc.lso}
    orders0 = lso[("orders", 0)]
    assert (orders0.last_stable_offset, orders0.high_watermark, orders0.pinned_by, orders0.pinned_offset) == (
        6, 16, 2002, 6)
    assert orders0.tone == "hanging" and orders0.open_transactions == 1
    assert (lso[("orders", 1)].last_stable_offset, lso[("orders", 1)].pinned_by) == (15, None)
    assert (lso[("payments", 0)].last_stable_offset, lso[("payments", 0)].tone) == (12, "idle")
    assert {tl.transactional_id for tl in inc.timelines} >= {"reporting-app"}
    [hung] = [tl for tl in inc.timelines if tl.hanging]
    assert hung.transactional_id == "reporting-app" and hung.producer_ids == (2002,)


def test_a_report_of_one_topic_counts_what_it_leaves_out():
    inc = _report(EXAMPLE, topic="payments").incident
    assert inc.transactions == () and [(x.topic, x.partition) for x in inc.lso] == [("payments", 0)]
    assert (inc.summary.partitions, inc.summary.open_transactions, inc.summary.hanging) == (1, 0, 0)
    sel = inc.selection
    assert (sel.topic, sel.partitions_left_out, sel.topics_left_out) == ("payments", 2, 1)
    assert (sel.open_left_out, sel.hanging_left_out, sel.unverifiable_left_out) == (1, 1, 0)


def test_the_report_of_an_ongoing_transaction_arms_nothing(scenarios):
    exp = hanging_scenarios.expected("ongoing")
    inc = _report(scenarios["ongoing"], as_of=exp["asOf"]).incident
    [t] = inc.transactions
    assert (t.verdict, t.tone, t.armed, t.abortable) == ("ongoing", "open", False, False)
    [lag] = inc.lso
    assert (lag.pinned_by, lag.pinned_offset, lag.tone) == (600, 1, "open")
    assert lag.age_ms == exp["asOf"] - lag.pinned_since_ms
    assert inc.summary.verdicts == (("ongoing", 1),) and inc.summary.hanging == 0
