"""Records a coordinator never writes although their transition is valid (state/coordinator._rewritten,
after TransactionMetadata.completeTransitionTo): each is an illegal record of its id, so the verdicts
that rest on the id are unverifiable (tests/analysis/test_contradictions.py runs the disks)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from forensics.codec.txnlog import PartitionsSchema, TransactionLogValue, TransactionStatus
from forensics.state.coordinator import CoordinatorFold, TxnLogRecord

S = TransactionStatus


def _value(status: TransactionStatus, updated: int, partitions: Sequence[int] = (), epoch: int = 0,
           timeout: int = 60000, started: int = 1000) -> TransactionLogValue:
    parts: tuple[PartitionsSchema, ...] | None = None
    if status != S.EMPTY:
        parts = (PartitionsSchema("t", tuple(partitions)),) if partitions else ()
    return TransactionLogValue(1, 7, epoch, timeout, status, parts, updated, started if status != S.EMPTY else -1)


def _illegal(values, leader_epochs=None) -> str | None:
    fold = CoordinatorFold(0)
    for i, v in enumerate(values):
        fold.apply("p.log", TxnLogRecord("app", v, i, v.last_update_timestamp_ms,
                                         leader_epochs[i] if leader_epochs else 0, i * 100))
    bad = fold.finish().summaries["app"].illegal
    return None if bad is None else bad.problem


LEGAL = [
    _value(S.EMPTY, 900),
    _value(S.ONGOING, 1000, [0]),
    _value(S.ONGOING, 1000, [0, 1]),  # two AddPartitionsToTxn in one millisecond
    _value(S.PREPARE_COMMIT, 1005, [0, 1]),
    _value(S.COMPLETE_COMMIT, 1010, [0, 1]),
    _value(S.EMPTY, 1010, epoch=1, timeout=30000),  # InitProducerId: a new epoch and timeout
]


def test_a_coordinators_own_sequence_is_legal() -> None:
    assert _illegal(LEGAL) is None


@pytest.mark.parametrize("values, said", [
    (LEGAL[:3] + [LEGAL[2]], "the same record as the one before it"),  # Ongoing -> Ongoing is a valid transition
    (LEGAL + [_value(S.EMPTY, 900, epoch=1, timeout=30000)], "txnLastUpdateTimestamp 900 before the previous record's 1010"),
])
def test_a_record_re_appended_is_illegal(values, said) -> None:
    problem = _illegal(values)
    assert problem is not None and said in problem, problem


def test_an_older_time_from_another_coordinator_is_legal() -> None:
    """Another leader epoch is another broker, with its own clock: its times may run behind."""
    values = LEGAL + [_value(S.ONGOING, 950, [3], epoch=1, timeout=30000)]
    assert _illegal(values, [0] * len(LEGAL) + [1]) is None


def test_a_timeout_changed_inside_a_transaction_is_illegal() -> None:
    values = LEGAL[:2] + [_value(S.ONGOING, 1001, [0, 1], timeout=5000)]
    problem = _illegal(values)
    assert problem is not None and "transaction timeout 5000 ms after 60000 ms in Ongoing" in problem, problem


def test_an_ongoing_transaction_that_loses_a_partition_is_illegal() -> None:
    values = LEGAL[:3] + [_value(S.ONGOING, 1002, [1])]
    problem = _illegal(values)
    assert problem is not None and "Ongoing with partitions {t-1} after Ongoing with {t-0, t-1}" in problem, problem
