"""The transition table over the whole product of states (Kafka's ``TransactionState``)."""

from __future__ import annotations

import itertools

from forensics.codec.txnlog import TransactionStatus as S
from forensics.state.transitions import (
    PERSISTED,
    is_valid_transition,
    transition_problem,
)

# Kafka's validPreviousStates, written out independently of the module's table
KAFKA = {
    (S.EMPTY, S.EMPTY), (S.COMPLETE_COMMIT, S.EMPTY), (S.COMPLETE_ABORT, S.EMPTY),
    (S.ONGOING, S.ONGOING), (S.EMPTY, S.ONGOING), (S.COMPLETE_COMMIT, S.ONGOING), (S.COMPLETE_ABORT, S.ONGOING),
    (S.ONGOING, S.PREPARE_COMMIT),
    (S.ONGOING, S.PREPARE_ABORT), (S.PREPARE_EPOCH_FENCE, S.PREPARE_ABORT),
    (S.PREPARE_COMMIT, S.COMPLETE_COMMIT), (S.PREPARE_ABORT, S.COMPLETE_ABORT),
    (S.EMPTY, S.DEAD), (S.COMPLETE_COMMIT, S.DEAD), (S.COMPLETE_ABORT, S.DEAD),
    (S.ONGOING, S.PREPARE_EPOCH_FENCE),
}


def test_every_pair_matches_kafka_for_classic_clients():
    for prev, new in itertools.product(S, S):
        assert is_valid_transition(prev, new) == ((prev, new) in KAFKA), (prev, new)


def test_tv2_clients_may_abort_from_empty_or_completed():
    for prev in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        assert not is_valid_transition(prev, S.PREPARE_ABORT, 0)
        assert is_valid_transition(prev, S.PREPARE_ABORT, 2)
    assert not is_valid_transition(S.EMPTY, S.PREPARE_COMMIT, 2)


def test_problem_text_for_illegal_and_unpersisted_states():
    assert transition_problem(None, S.ONGOING) is None
    assert "Empty -> PrepareCommit" in transition_problem(S.EMPTY, S.PREPARE_COMMIT)
    for s in set(S) - PERSISTED:
        assert "never written" in transition_problem(S.EMPTY, s)
