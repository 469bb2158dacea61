"""The words of a verdict's advice (:mod:`forensics.analysis.advice`): each fact as the line find-hanging's
screens, the abort script's ``# advice:`` comments, JSON's ``advice`` and the report's "What to do" print."""

from __future__ import annotations

from collections.abc import Iterable

from forensics.analysis import advice as a


def _coordinator(c: a.Coordinator | None) -> str:
    if c is None:
        return "the coordinator"
    return (f"the coordinator of {c.transactional_id!r}: __transaction_state-{c.partition}, read from broker "
            f"{c.broker} (coordinator epoch {c.coordinator_epoch})")


def _leader_log(tp: object) -> str:
    return f"the server.log of the broker leading {tp}"


def advice_text(fact: a.Advice) -> str:
    """One line of advice."""
    if isinstance(fact, a.DoNotAbortCommitted):
        return ("do NOT abort: the coordinator decided to COMMIT; an abort would discard data committed on "
                "the transaction's other partitions")
    if isinstance(fact, a.MarkersNeverArrived):
        return (f"{_coordinator(fact.coordinator)} holds the transaction in "
                f"{fact.state_name if fact.state_name is not None else '?'}; its markers never reached {fact.partition}")
    if isinstance(fact, a.CheckMarkerWrites):
        return (f"check {_leader_log(fact.partition)} and the coordinator broker's server.log for WriteTxnMarkers of "
                f"producer {fact.producer_id} (errors such as NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, "
                "INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED)")
    if isinstance(fact, a.ReloadCoordinator):
        c = fact.coordinator
        return (f"a new leader of __transaction_state-{c.partition if c else None} reloads it and resends the pending "
                f"markers: restart broker {c.broker if c else None} or move that partition's leadership "
                f"(kafka-leader-election.sh, brokers 2.4+), after making sure {fact.partition} has a live leader")
    if isinstance(fact, a.AbortWritesMarker):
        return "the coordinator decided to ABORT: the abort below (commented) writes the marker it could not"
    if isinstance(fact, a.DoNotAbortLastCommit):
        return ("do NOT abort: the coordinator's last decision for this id was COMMIT; no tool writes a COMMIT "
                "marker, and an abort discards data committed on the other partitions: decide with the data's owners")
    if isinstance(fact, a.RefusesMarkers):
        return (f"the partition refuses the markers of {_coordinator(fact.coordinator)}: producer {fact.producer_id}'s "
                f"entry holds coordinator epoch {fact.coordinator_epoch}")
    if isinstance(fact, a.CheckFencing):
        return (f"check {_leader_log(fact.partition)} for TRANSACTION_COORDINATOR_FENCED on WriteTxnMarkers of "
                f"producer {fact.producer_id}, and who ran an abort with --coordinator-epoch {fact.coordinator_epoch}")
    if isinstance(fact, a.AbortAtPartitionEpoch):
        return (f"the coordinator's last decision was ABORT: an abort given the partition's own coordinator "
                f"epoch {fact.coordinator_epoch} (commented below) writes the marker it could not")
    if isinstance(fact, a.RefusedWhateverDecided):
        return "the transaction is still Ongoing: whatever the coordinator decides, its marker will be refused here"
    if isinstance(fact, a.PastOwnTimeout):
        timeout = f"{fact.timeout_ms} ms" if fact.timeout_ms is not None else "?"
        return (f"Ongoing past its own timeout ({timeout}): {_coordinator(fact.coordinator)} should have "
                "aborted it (it checks every 10 s by default)")
    if isinstance(fact, a.CheckTimeoutAborts):
        c = fact.coordinator
        return (f"check that broker {c.broker if c else '?'} still leads __transaction_state-"
                f"{c.partition if c else None} and its server.log for the aborts of timed-out transactions (errors "
                f"writing the PrepareAbort record or its markers), and {_leader_log(fact.partition)} for "
                f"WriteTxnMarkers of producer {fact.producer_id}")
    if isinstance(fact, a.ReloadAborts):
        c = fact.coordinator
        return (f"a new leader of __transaction_state-{c.partition if c else None} loads it and aborts the timed-out "
                f"transaction: restart broker {c.broker if c else '?'} or move that partition's leadership "
                "(kafka-leader-election.sh, brokers 2.4+)")
    if isinstance(fact, a.Terminate):
        tid = fact.transactional_id or "<transactional.id>"
        return (f"to end it: start a producer with transactional.id {tid!r} and call initTransactions() (any broker "
                "with transactions: it bumps the epoch and aborts the transaction in flight), or on a Kafka 4.0+ tool "
                f"kafka-transactions.sh forceTerminateTransaction --transactionalId {tid!r} (the same request); both "
                "abort: only if the transaction's data may be discarded")
    if isinstance(fact, a.FreshCopy):
        return (f"take a fresh copy of {', '.join(fact.partition_dirs)} and run again; the guard in abort-commands "
                "compares with the live cluster before any abort")
    return ("add the disks holding every __transaction_state partition and run again, or ask the live cluster "
            "(kafka-transactions.sh describe-producers / find-hanging)")


def advice_lines(facts: Iterable[a.Advice]) -> list[str]:
    """A verdict's advice (``Verdict.advice``), one line each, as a row holds it."""
    return [advice_text(f) for f in facts]
