"""The operator advice of :mod:`forensics.analysis.advice` as facts, called directly on real verdicts (the
hanging scenarios, rebuilt and judged by :func:`forensics.analysis.hanging.classify`): which lines each kind
gives, in which order, with which values. Their words: tests/render/test_advice_text.py."""

from __future__ import annotations

from dataclasses import replace

import pytest

from forensics.analysis import advice as a
from forensics.analysis.gap_facts import Gap, GapKind, SnapshotPastEnd
from forensics.analysis.verdict_kinds import VerdictKind
from forensics.model import TopicPartition
from forensics.state.coordinator import Decision
from tests.scenario_verdicts import first_verdicts


@pytest.fixture(scope="module")
def verdict(tmp_path_factory):
    """``verdict(name)``: the first verdict of a scenario, as of its expected time."""
    return first_verdicts(tmp_path_factory)


def test_stuck_on_commit_forbids_the_abort_first(verdict):
    v = verdict("prepare-commit-pending")
    tp, c = TopicPartition("prep", 1), a.Coordinator("prep-app", 0, 1, 0)
    assert a.stuck(v) == v.advice == (a.DoNotAbortCommitted(), a.MarkersNeverArrived(c, "PrepareCommit", tp),
                                      a.CheckMarkerWrites(tp, 700), a.ReloadCoordinator(c, tp))
    on_abort = a.stuck(replace(v, decision=Decision.ABORT))
    assert on_abort == v.advice[1:] + (a.AbortWritesMarker(),)


def test_fenced_follows_the_coordinator_s_last_decision(verdict):
    v = verdict("fenced-coordinator")
    tp, c = TopicPartition("fen", 0), a.Coordinator("fen-app", 0, 1, 2)
    both = (a.RefusesMarkers(c, 1100, 9), a.CheckFencing(tp, 1100, 9))
    assert a.fenced(v) == v.advice == (a.DoNotAbortLastCommit(), *both)
    assert a.fenced(replace(v, decision=Decision.ABORT)) == (*both, a.AbortAtPartitionEpoch(9))
    assert a.fenced(replace(v, decision=None)) == (*both, a.RefusedWhateverDecided())


def test_overdue_names_the_timeout_the_coordinator_and_how_to_end_it_not_how_late(verdict):
    v = verdict("tv2")
    tp, c = TopicPartition("tv2", 0), a.Coordinator("tv2-app", 2, 1, 0)
    assert a.overdue(v) == v.advice == (a.PastOwnTimeout(60_000, c), a.CheckTimeoutAborts(c, tp, 800),
                                        a.ReloadAborts(c), a.Terminate("tv2-app"))
    assert a.overdue(replace(v, overdue_ms=59 * 60_000 + 59_999)) == v.advice  # how late: the heading's
    assert a.overdue(replace(v, id_view=None, transactional_id=None)) == (
        a.PastOwnTimeout(None, None), a.CheckTimeoutAborts(None, tp, 800), a.ReloadAborts(None), a.Terminate(None))


def test_unverifiable_asks_for_the_coordinators_or_a_fresh_copy_of_each_partition_dir_once(verdict):
    v = verdict("missing-txn-state-partition")
    assert v.verdict is VerdictKind.UNVERIFIABLE and v.gaps == ()
    assert a.unverifiable(v) == v.advice == (a.AddCoordinators(),)
    dirs = ["/e/b-1/x-0", "/e/b-1/__transaction_state-1", "/e/b-1/x-0"]
    gaps = tuple(Gap(GapKind.SNAPSHOT_PAST_END, SnapshotPastEnd(9), f"{d}/0.log", None, 0, d) for d in dirs)
    assert a.unverifiable(replace(v, gaps=gaps)) == (a.FreshCopy(("/e/b-1/__transaction_state-1", "/e/b-1/x-0")),)


def test_a_proven_hang_and_an_ongoing_transaction_need_no_advice(verdict):
    hanging, ongoing = verdict("kafka-9144"), verdict("ongoing")
    assert (hanging.verdict, ongoing.verdict) == (VerdictKind.HANGING, VerdictKind.ONGOING)
    assert a.none(hanging) == hanging.advice == () and a.none(ongoing) == ongoing.advice == ()
