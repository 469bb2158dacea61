"""The one table of valid previous transaction states (Kafka's ``TransactionState``).

Mirrors ``validPreviousStates`` of Kafka's ``TransactionState`` (``TransactionMetadata.scala``
up to 3.9, ``TransactionState.java`` in 4.x). A TV2 client (``clientTransactionVersion >= 2``,
Kafka 4.0+) may also move to PrepareAbort from Empty or a completed state (an abort with no
partitions, or an epoch bump during InitProducerId).
"""

from __future__ import annotations

from forensics.codec.txnlog import TransactionStatus as S

VALID_PREVIOUS: dict[S, frozenset[S]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    S.PREPARE_ABORT: frozenset({S.ONGOING, S.PREPARE_EPOCH_FENCE}),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}

TV2_EXTRA_PREVIOUS: dict[S, frozenset[S]] = {
    S.PREPARE_ABORT: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
}

PERSISTED = frozenset(s for s in S if s not in (S.DEAD, S.PREPARE_EPOCH_FENCE))
COMPLETED = frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT})  # no transaction in flight
PREPARING = frozenset({S.PREPARE_COMMIT, S.PREPARE_ABORT})


def is_valid_transition(previous: S, new: S, client_transaction_version: int = 0) -> bool:
    if previous in VALID_PREVIOUS.get(new, frozenset()):
        return True
    return client_transaction_version >= 2 and previous in TV2_EXTRA_PREVIOUS.get(new, frozenset())


def transition_problem(previous: S | None, new: S, client_transaction_version: int = 0) -> str | None:
    """Why ``previous -> new`` is not something a coordinator writes, or None when it is."""
    if new not in PERSISTED:
        return f"state {new.kafka_name} is never written to the log"
    if previous is None or is_valid_transition(previous, new, client_transaction_version):
        return None
    return f"{previous.kafka_name} -> {new.kafka_name} is not a valid transition"
