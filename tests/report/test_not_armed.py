"""Why a row's abort is not armed, as a fact (report/hanging.not_armed) on the scenarios' first verdicts; the words
are tests/render/test_armed_text.py's."""

from __future__ import annotations

import pytest

from forensics.analysis.verdict_kinds import VerdictKind
from forensics.report.hanging import NotArmed, is_armed, not_armed
from tests.scenario_verdicts import first_verdicts


@pytest.fixture(scope="module")
def verdict(tmp_path_factory):
    return first_verdicts(tmp_path_factory)


@pytest.mark.parametrize("name, kind, why", [
    ("kafka-9144", VerdictKind.HANGING, None),  # proven: armed
    ("prepare-commit-pending", VerdictKind.STUCK, NotArmed.COMMIT_PENDING),  # never aborted, whatever its kind says
    ("fenced-coordinator", VerdictKind.FENCED, NotArmed.KIND),
    ("ongoing", VerdictKind.ONGOING, NotArmed.KIND),
    ("tv2", VerdictKind.OVERDUE, NotArmed.KIND),
])
def test_why_each_scenario_s_abort_is_not_armed(verdict, name, kind, why) -> None:
    v = verdict(name)
    assert v.verdict is kind and not_armed(v) is why and is_armed(v) is (why is None)


def test_an_unverifiable_verdict_lacking_only_coordinator_data(verdict) -> None:
    """Unverifiable for want of __transaction_state: its kind says so, and --arm-unverifiable arms it once past the
    age gate (the scenario's verdict is)."""
    v = verdict("missing-txn-state-partition")
    assert v.verdict is VerdictKind.UNVERIFIABLE and not v.gaps and not_armed(v) is NotArmed.KIND
    assert v.past_age_gate and not_armed(v, arm_unverifiable=True) is None
