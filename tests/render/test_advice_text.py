"""The words of the operator advice (:mod:`forensics.render.advice_text`) of :mod:`forensics.analysis.advice`'s
facts, on real verdicts (the hanging scenarios, rebuilt and judged by :func:`forensics.analysis.hanging.classify`),
each branch of each function: the coordinator's decision (commit, abort, none yet), the gaps, a missing id view.
The facts themselves: tests/analysis/test_advice.py."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from forensics.analysis import advice as facts
from forensics.analysis.gap_facts import Gap, GapKind, SnapshotPastEnd
from forensics.findings import FindingKind
from forensics.analysis.verdict_kinds import VerdictKind
from forensics.render.advice_text import advice_lines
from forensics.state.coordinator import Decision
from tests.scenario_verdicts import first_verdicts


def _words(f):
    return lambda v: tuple(advice_lines(f(v)))


advice = SimpleNamespace(stuck=_words(facts.stuck), fenced=_words(facts.fenced), overdue=_words(facts.overdue),
                         unverifiable=_words(facts.unverifiable), none=_words(facts.none))  # each written out


@pytest.fixture(scope="module")
def verdict(tmp_path_factory):
    """``verdict(name)``: the first verdict of a scenario, as of its expected time."""
    return first_verdicts(tmp_path_factory)


def test_stuck_on_commit_says_never_abort_and_how_to_resend_the_markers(verdict):
    v = verdict("prepare-commit-pending")
    assert v.verdict is VerdictKind.STUCK and v.decision is Decision.COMMIT
    lines = advice.stuck(v)
    assert lines == tuple(advice_lines(v.advice))  # the kind names this function
    assert lines == (
        "do NOT abort: the coordinator decided to COMMIT; an abort would discard data committed on the transaction's "
        "other partitions",
        "the coordinator of 'prep-app': __transaction_state-0, read from broker 1 (coordinator epoch 0) holds the "
        "transaction in PrepareCommit; its markers never reached prep-1",
        "check the server.log of the broker leading prep-1 and the coordinator broker's server.log for "
        "WriteTxnMarkers of producer 700 (errors such as NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, "
        "INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED)",
        "a new leader of __transaction_state-0 reloads it and resends the pending markers: restart broker 1 or move "
        "that partition's leadership (kafka-leader-election.sh, brokers 2.4+), after making sure prep-1 has a live "
        "leader")


def test_stuck_on_abort_offers_the_abort_that_writes_the_missing_marker(verdict):
    lines = advice.stuck(replace(verdict("prepare-commit-pending"), decision=Decision.ABORT))
    assert not any(line.startswith("do NOT abort") for line in lines)
    assert lines[-1] == "the coordinator decided to ABORT: the abort below (commented) writes the marker it could not"
    assert len(lines) == 4


def test_fenced_advice_follows_the_coordinator_s_last_decision(verdict):
    v = verdict("fenced-coordinator")
    assert v.verdict is VerdictKind.FENCED and v.decision is Decision.COMMIT
    commit = advice.fenced(v)
    assert commit == tuple(advice_lines(v.advice)) and len(commit) == 3
    assert commit[0].startswith("do NOT abort: the coordinator's last decision for this id was COMMIT")
    assert commit[1] == ("the partition refuses the markers of the coordinator of 'fen-app': __transaction_state-0, "
                         "read from broker 1 (coordinator epoch 2): producer 1100's entry holds coordinator epoch 9")
    assert commit[2] == ("check the server.log of the broker leading fen-0 for TRANSACTION_COORDINATOR_FENCED on "
                         "WriteTxnMarkers of producer 1100, and who ran an abort with --coordinator-epoch 9")
    abort = advice.fenced(replace(v, decision=Decision.ABORT))
    assert abort[:2] == commit[1:] and abort[2] == (
        "the coordinator's last decision was ABORT: an abort given the partition's own coordinator epoch 9 "
        "(commented below) writes the marker it could not")
    ongoing = advice.fenced(replace(v, decision=None))
    assert ongoing[2] == ("the transaction is still Ongoing: whatever the coordinator decides, its marker will be "
                          "refused here")


def test_overdue_advice_says_what_to_check_and_how_to_end_it_and_leaves_how_late_to_the_heading(verdict):
    """How long past its timeout is said once, by the heading (``ongoing, overdue by 58 min``, in the
    screens' duration form) and JSON's overdueMs: the advice said "58 min" again, and "67 min" beside a
    heading's "1 h 7 min" (issue 24)."""
    v = verdict("tv2")
    assert v.verdict is VerdictKind.OVERDUE
    lines = advice.overdue(v)
    assert lines == tuple(advice_lines(v.advice)) and len(lines) == 4
    assert lines[0] == ("Ongoing past its own timeout (60000 ms): the coordinator of "
                        "'tv2-app': __transaction_state-2, read from broker 1 (coordinator epoch 0) should have "
                        "aborted it (it checks every 10 s by default)")
    assert v.overdue_ms // 60_000 == 58 and not any(" min" in line for line in lines)
    assert "the server.log of the broker leading tv2-0 for WriteTxnMarkers of producer 800" in lines[1]
    assert lines[2].startswith("a new leader of __transaction_state-2 loads it and aborts the timed-out transaction: "
                               "restart broker 1")
    assert "transactional.id 'tv2-app'" in lines[3] and "forceTerminateTransaction --transactionalId 'tv2-app'" \
        in lines[3]
    assert advice.overdue(replace(v, overdue_ms=59 * 60_000 + 59_999)) == lines  # how late: the heading's


def test_overdue_without_an_id_names_placeholders(verdict):
    lines = advice.overdue(replace(verdict("tv2"), id_view=None, transactional_id=None))
    assert lines[0].startswith("Ongoing past its own timeout (?): the coordinator should have aborted it")
    assert "transactional.id '<transactional.id>'" in lines[3]


def test_unverifiable_asks_for_the_coordinators_or_a_fresh_copy(verdict):
    v = verdict("missing-txn-state-partition")
    assert v.verdict is VerdictKind.UNVERIFIABLE and v.gaps == ()
    assert advice.unverifiable(v) == tuple(advice_lines(v.advice)) == (
        "add the disks holding every __transaction_state partition and run again, or ask the live cluster "
        "(kafka-transactions.sh describe-producers / find-hanging)",)
    fact = SnapshotPastEnd(9)  # which gap does not matter: the partition dirs do
    gaps = (Gap(FindingKind.TRUNCATED_TAIL, fact, "/e/b-1/x-0/0.log", 356, None, "/e/b-1/x-0"),
            Gap(GapKind.TOO_RECENT, fact, "/e/b-1/__transaction_state-1/0.log", None, None, "/e/b-1/__transaction_state-1"),
            Gap(FindingKind.CRC_MISMATCH, fact, "/e/b-1/x-0/9.log", 10, None, "/e/b-1/x-0"))
    assert advice.unverifiable(replace(v, gaps=gaps)) == (
        "take a fresh copy of /e/b-1/__transaction_state-1, /e/b-1/x-0 and run again; the guard in abort-commands "
        "compares with the live cluster before any abort",)  # each partition dir once, sorted


def test_a_proven_hang_and_an_ongoing_transaction_need_no_advice(verdict):
    hanging, ongoing = verdict("kafka-9144"), verdict("ongoing")
    assert (hanging.verdict, ongoing.verdict) == (VerdictKind.HANGING, VerdictKind.ONGOING)
    assert advice.none(hanging) == () and advice.none(ongoing) == ()
