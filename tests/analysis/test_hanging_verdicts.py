"""The verdicts of :mod:`forensics.analysis.hanging`, called directly on the views a state rebuild makes
(the example disk and the hanging scenarios of ``fixtures/hanging_scenarios.py``): the kind each rule
decides, the reason and the values it names, the age gate and the overdue grace at their edges, the
patterns found with and without the other replicas, and :func:`evidence_of`. A reason is a fact
(:mod:`forensics.analysis.reasons`); its words are :func:`forensics.render.reasons.reason_text`'s."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fixtures import hanging_scenarios
from forensics.analysis import gap_facts as gf
from forensics.analysis import reasons as r
from forensics.analysis.evidence_gaps import EvidenceCheck
from forensics.analysis.hanging import (
    DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
    OVERDUE_GRACE_MS,
    classify,
    classify_partition,
    evidence_of,
)
from forensics.analysis.replicas import group_replicas
from forensics.analysis.verdict_kinds import VerdictKind
from forensics.findings import FindingKind
from forensics.model import TopicPartition
from forensics.render.reasons import TORN_OR_LOST, evidence_json, gap_json, pattern_text, reason_text
from forensics.render.time_text import stamp
from forensics.report.hanging import leader_views
from forensics.runs.rebuild import load_state
from forensics.state.coordinator import Decision

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
AS_OF = 1767225613300  # the example disk's incident clock
LAST_TIMESTAMP = 1767225606251  # reporting-app's entry on orders-0


@pytest.fixture(scope="module")
def example():
    return load_state([str(EXAMPLE)])


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    """``scenario(name, *left_out, partition_count=None)``: the state of a scenario's disk, built once."""
    made = {}

    def state(name, *left_out, partition_count=None):
        key = (name, left_out, partition_count)
        if key not in made:
            root = hanging_scenarios.build(name, tmp_path_factory.mktemp(name))
            for rel in left_out:
                shutil.rmtree(root / rel)
            made[key] = load_state([str(root)], partition_count=partition_count)
        return made[key]

    return state


def _judge(rep, name=None, as_of=None, **kw):
    as_of = hanging_scenarios.expected(name)["asOf"] if as_of is None else as_of
    return classify(leader_views(rep), rep.coordinator, as_of, **kw)


# -- the example disk: proven hanging --------------------------------------------------------------


def test_the_example_disk_hangs_by_the_coordinator_s_own_records(example):
    [v] = classify(example.partitions, example.coordinator, AS_OF)
    assert v.verdict is VerdictKind.HANGING
    assert str(v.view.topic_partition) == "orders-0" and v.start_offset == 6
    assert (v.entry.producer_id, v.entry.producer_epoch, v.entry.coordinator_epoch) == (2002, 1, -1)
    assert (v.span.first_offset, v.span.last_data_offset, v.span.data_epochs, v.span.records) == (6, 7, (1,), 2)
    assert (v.transactional_id, v.id_view.partition, v.coordinator_partition) == ("reporting-app", 0, 0)
    assert v.decision is Decision.COMMIT  # its last transaction committed: CompleteCommit
    assert v.reason == r.NothingInFlight("reporting-app", "CompleteCommit", 1)
    assert reason_text(v.reason) == ("coordinator has 'reporting-app' in CompleteCommit (epoch 1): no transaction in "
                                     "flight, no marker will come")
    assert v.patterns == () and v.gaps == () and v.overdue_ms is None
    assert v.duration_ms == AS_OF - LAST_TIMESTAMP and not v.past_age_gate
    assert v.abortable and not v.needs_person and v.needs_attention and v.advice == ()


def test_without_coordinator_data_it_is_unverifiable(example):
    [v] = classify(example.partitions, None, AS_OF)
    assert v.verdict is VerdictKind.UNVERIFIABLE and v.id_view is None and v.transactional_id is None
    assert v.reason == r.NoCoordinator()
    assert reason_text(v.reason) == ("no __transaction_state in the inputs: the coordinator may still complete this "
                                     "transaction; judged by age alone, as Kafka's find-hanging does")
    assert not v.abortable and v.needs_person and v.needs_attention and v.decision is None


@pytest.mark.parametrize("past_by, past", [(0, False), (1, True)])
def test_the_age_gate_is_strictly_more_than_the_maximum_timeout(example, past_by, past):
    as_of = LAST_TIMESTAMP + DEFAULT_MAX_TRANSACTION_TIMEOUT_MS + past_by
    [v] = classify(example.partitions, None, as_of)
    assert v.duration_ms == DEFAULT_MAX_TRANSACTION_TIMEOUT_MS + past_by and v.past_age_gate is past
    [short] = classify(example.partitions, None, as_of, max_timeout_ms=60_000)
    assert short.past_age_gate


def test_without_an_as_of_there_is_no_duration(example):
    [v] = classify(example.partitions, example.coordinator, None)
    assert v.duration_ms is None and not v.past_age_gate and v.verdict is VerdictKind.HANGING


def test_evidence_of_names_the_files_bytes_and_coordinator_record(example):
    [v] = classify(example.partitions, example.coordinator, AS_OF)
    broker = f"{EXAMPLE}/broker-1"
    assert evidence_json(evidence_of(v)) == {
        "partitionDir": f"{broker}/orders-0", "brokerId": 1,
        "firstBatch": {"path": f"{broker}/orders-0/00000000000000000000.log", "position": 600},
        "snapshot": f"{broker}/orders-0/00000000000000000016.snapshot",
        "logStartOffset": 0, "highWatermark": 16, "lastStableOffset": 6,
        "openTransaction": {"firstOffset": 6, "lastDataOffset": 7, "batches": 1, "records": 2, "bytes": 249,
                            "epochs": [1], "fromSnapshot": False},
        "coordinatorRecord": {"partition": 0, "offset": 3, "state": "CompleteCommit", "timestamp": 1767225607250,
                              "path": f"{broker}/__transaction_state-0/00000000000000000000.log", "position": 400}}
    assert "gaps" not in evidence_json(evidence_of(v))


def test_classify_is_classify_partition_for_each_view(example):
    one = [classify_partition(view, example.coordinator, AS_OF) for view in example.partitions]
    assert [str(v.view.topic_partition) for vs in one for v in vs] == ["orders-0"]
    assert [len(vs) for vs in one] == [1, 0, 0]  # orders-1 and payments-0 have no open transaction


# -- each rule, on the scenario that shows it ------------------------------------------------------


def test_ongoing_within_its_timeout_names_its_start_as_a_time(scenario):
    rep = scenario("ongoing")
    [v] = _judge(rep, "ongoing")
    m = v.id_view.metadata
    assert v.verdict is VerdictKind.ONGOING and not v.needs_attention
    assert v.reason == r.Ongoing(TopicPartition("live", 0), m.start_ms, m.timeout_ms)
    as_of = hanging_scenarios.expected("ongoing")["asOf"]
    assert reason_text(v.reason, as_of) == (f"Ongoing with live-0 in its set since {stamp(m.start_ms, as_of)}: the "
                                            f"coordinator will commit, abort or time it out ({m.timeout_ms} ms)")


def test_overdue_begins_only_past_the_grace(scenario):
    rep = scenario("tv2")
    first = _judge(rep, "tv2")
    assert [(str(v.view.topic_partition), v.verdict, v.entry.producer_epoch, v.start_offset) for v in first] == [
        ("tv2-0", VerdictKind.OVERDUE, 3, 5), ("tv2-1", VerdictKind.OVERDUE, 3, 5)]
    m = first[0].id_view.metadata
    due = m.start_ms + m.timeout_ms
    assert first[0].overdue_ms == hanging_scenarios.expected("tv2")["asOf"] - due
    assert first[0].reason == r.Overdue(TopicPartition("tv2", 0), m.start_ms, m.timeout_ms)
    assert reason_text(first[0].reason) == (
        f"Ongoing with tv2-0 in its set since {stamp(m.start_ms)}, past its own timeout ({m.timeout_ms} ms) since "
        f"{stamp(due)}: the coordinator should have aborted it, yet its records still hold it Ongoing, so no marker is "
        "proven missing")
    at_grace = _judge(rep, as_of=due + OVERDUE_GRACE_MS)
    assert {v.verdict for v in at_grace} == {VerdictKind.ONGOING} and all(v.overdue_ms is None for v in at_grace)
    past = _judge(rep, as_of=due + OVERDUE_GRACE_MS + 1)
    assert {v.verdict for v in past} == {VerdictKind.OVERDUE}
    assert [v.overdue_ms for v in past] == [OVERDUE_GRACE_MS + 1] * 2
    assert all(v.needs_person and not v.abortable for v in past)


def test_prepare_commit_pending_is_a_stuck_coordinator(scenario):
    [v] = _judge(scenario("prepare-commit-pending"), "prepare-commit-pending")
    assert v.verdict is VerdictKind.STUCK and v.decision is Decision.COMMIT
    assert str(v.view.topic_partition) == "prep-1" and v.entry.producer_id == 700
    assert v.reason == r.Prepared("PrepareCommit", TopicPartition("prep", 1), commit=True)
    assert reason_text(v.reason) == ("PrepareCommit with prep-1 still pending: the COMMIT marker never arrived (do NOT "
                                     "abort: the coordinator decided to commit)")
    assert v.needs_person and not v.abortable


def test_a_partition_above_the_coordinator_s_epoch_fences_it(scenario):
    [v] = _judge(scenario("fenced-coordinator"), "fenced-coordinator")
    assert v.verdict is VerdictKind.FENCED and v.entry.coordinator_epoch == 9 and v.id_view.coordinator_epoch == 2
    assert v.reason == r.Fenced(TopicPartition("fen", 0), 9, 1100, "ABORT", 1, 2, 0, 1)
    assert reason_text(v.reason).startswith("fen-0 holds coordinator epoch 9 for producer 1100 (its ABORT marker at offset 1), "
                               "above the coordinator's own epoch 2 (__transaction_state-0, broker 1)")


def test_an_expired_id_hangs_and_names_its_tombstone(scenario):
    [v] = _judge(scenario("expired-id"), "expired-id")
    assert v.verdict is VerdictKind.HANGING and v.id_view.metadata is None
    assert v.reason == r.IdExpired("expired-app", 4, 1)
    assert reason_text(v.reason) == "transactional id 'expired-app' expired: tombstone at offset 4 of __transaction_state-1"


def test_kafka_9144_names_the_marker_of_the_higher_epoch(scenario):
    [v] = _judge(scenario("kafka-9144"), "kafka-9144")
    assert v.verdict is VerdictKind.HANGING and v.decision is Decision.ABORT
    assert v.patterns == (r.Kafka9144("ABORT", 2, 1, 3, 0),)
    assert pattern_text(v.patterns[0]) == ("KAFKA-9144 pattern: ABORT marker at offset 2 carried epoch 1, yet this "
                                           "transaction's data at offset 3 has epoch 0")
    assert isinstance(v.reason, r.Patterned) and v.reason.patterns == v.patterns
    assert reason_text(v.reason).endswith("; " + pattern_text(v.patterns[0]))


def test_a_marker_on_another_replica_is_found_only_with_the_replicas(scenario):
    rep = scenario("unclean-election")
    [alone] = _judge(rep, "unclean-election")
    assert alone.verdict is VerdictKind.HANGING and alone.patterns == ()
    [seen] = _judge(rep, "unclean-election", replicas=group_replicas(rep.partitions))
    [fact] = seen.patterns
    assert isinstance(fact, r.MarkerElsewhere) and (fact.broker_id, fact.offset, fact.position) == (1, 3, 342)
    pattern = pattern_text(fact)
    assert pattern.startswith("marker lost on this replica (KAFKA-7408): broker 1 holds its COMMIT marker at offset 3 "
                              "(epoch 0, coordinatorEpoch 2) in ")
    assert pattern.endswith("/broker-1/ue-0/00000000000000000000.log @ byte 342")
    assert seen.view.inputs.broker_id == 2  # the replica judged is the one that lost it


def test_a_snapshot_held_transaction_after_retention_still_hangs(scenario):
    [v] = _judge(scenario("retention"), "retention")
    assert v.verdict is VerdictKind.HANGING and v.start_offset == 0 and v.span.from_snapshot
    assert v.view.log_start_offset == 4  # its data is gone: only the snapshot still holds it


def test_a_coordinator_partition_missing_leaves_it_unverifiable(scenario):
    [v] = _judge(scenario("missing-txn-state-partition"), "missing-txn-state-partition")
    assert v.verdict is VerdictKind.UNVERIFIABLE and v.id_view is None
    assert v.reason == r.CoordinatorPartitionsMissing(400, (0,))
    assert reason_text(v.reason) == ("no coordinator record for producer id 400, but __transaction_state partitions 0 "
                                     "are not among the inputs: the coordinator may still complete this transaction")


def test_no_record_in_any_partition_hangs_only_when_the_count_is_known(scenario):
    """lost-txn-state-partition: the id's records are gone from __transaction_state-0."""
    [known] = _judge(scenario("lost-txn-state-partition", partition_count=3), "lost-txn-state-partition")
    assert known.verdict is VerdictKind.HANGING
    assert known.reason == r.NoCoordinatorRecord(400)
    assert reason_text(known.reason) == "no coordinator record for producer id 400 in any __transaction_state partition"
    [unknown] = _judge(scenario("lost-txn-state-partition"), "lost-txn-state-partition")
    assert unknown.verdict is VerdictKind.UNVERIFIABLE
    assert unknown.reason == r.PartitionCountUnknown(400, 3)
    assert reason_text(unknown.reason).startswith("no coordinator record for producer id 400 in the 3 __transaction_state "
                                     "partitions read (0-2), but nothing on the disk gives their count")


def test_a_damaged_log_keeps_the_hang_from_being_proven(scenario):
    rep = scenario("torn-tail-marker")
    [bare] = _judge(rep, "torn-tail-marker")
    assert bare.verdict is VerdictKind.HANGING  # without an evidence check, the coordinator's records alone
    check = EvidenceCheck(rep.inventory, rep.coordinator, None, None, None, None, None)
    [v] = _judge(rep, "torn-tail-marker", check=check)
    assert v.verdict is VerdictKind.UNVERIFIABLE
    assert [(g.kind, g.position, Path(g.partition_dir).name) for g in v.gaps] == [("truncated_tail", 356, "torn-0")]
    assert isinstance(v.reason, r.Unproven) and v.reason.reason == bare.reason and v.reason.torn_or_lost
    [damage] = v.gaps  # the facts: the finding's kind, file and byte, said as this log's damage
    assert damage.fact == gf.Damage(FindingKind.TRUNCATED_TAIL, damage.path, 356) and damage.path.endswith(".log")
    assert v.reason.parts == (gf.LogDamage("torn-0", v.gaps, gf.DamageMeans.MARKER_MAY_BE_MISSING),)
    assert reason_text(v.reason).startswith(f"not proven: {reason_text(bare.reason)}; but the log of torn-0 is damaged at byte 356 of "
                               "00000000000000000000.log (truncated_tail): this transaction's marker may be missing "
                               "from the copy")
    assert reason_text(v.reason).endswith(f"; {TORN_OR_LOST}")
    assert evidence_json(evidence_of(v))["gaps"] == [gap_json(g) for g in v.gaps]
    assert [set(gap_json(g)) for g in v.gaps] == [{"kind", "text", "path", "position", "log_end", "partition_dir"}]
