"""What to do when the answer is "do not abort" (or "not yet"): the coordinator involved, the
evidence, what to look for in the broker logs and which operator action exists on which versions.

Grounded in Kafka's own code paths:
* a coordinator that becomes leader of a ``__transaction_state`` partition reloads it and resends
  the markers of every transaction in PrepareCommit/PrepareAbort (``TransactionCoordinator.onElection``);
* a marker refused with TRANSACTION_COORDINATOR_FENCED or INVALID_PRODUCER_EPOCH is dropped by the
  coordinator, which completes the transaction without it (``TransactionMarkerRequestCompletionHandler``);
* a producer calling ``initTransactions()`` with the same ``transactional.id`` bumps the epoch and
  aborts the transaction in flight (``TransactionCoordinator.handleInitProducerId``), on every broker
  with transactions (0.11+); ``kafka-transactions.sh forceTerminateTransaction`` (Kafka 4.0+, KIP-939)
  sends that request from the command line.
"""

from __future__ import annotations

from typing import Protocol

from forensics.analysis.coordinator import TransactionIdView
from forensics.analysis.evidence_gaps import Gap
from forensics.analysis.producers import PartitionView
from forensics.state.coordinator import Decision
from forensics.state.producer import ProducerState


class Verdict(Protocol):
    """What the advice reads of a verdict (:class:`forensics.analysis.hanging.Verdict`, whose kind,
    :class:`forensics.analysis.verdict_kinds.VerdictKind`, names the function: no import circle)."""

    @property
    def view(self) -> PartitionView: ...
    @property
    def entry(self) -> ProducerState: ...
    @property
    def transactional_id(self) -> str | None: ...
    @property
    def id_view(self) -> TransactionIdView | None: ...
    @property
    def gaps(self) -> tuple[Gap, ...]: ...
    @property
    def overdue_ms(self) -> int | None: ...
    @property
    def decision(self) -> Decision | None: ...
    @property
    def coordinator_partition(self) -> int | None: ...


def _coordinator(v: Verdict) -> str:
    i = v.id_view
    if i is None:
        return "the coordinator"
    return (f"the coordinator of {i.transactional_id!r}: __transaction_state-{i.partition}, read from broker "
            f"{i.coordinator} (coordinator epoch {i.coordinator_epoch})")


def _leader_log(v: Verdict) -> str:
    return f"the server.log of the broker leading {v.view.topic_partition}"


def _terminate(v: Verdict) -> str:
    tid = v.transactional_id or "<transactional.id>"
    return (f"to end it: start a producer with transactional.id {tid!r} and call initTransactions() (any broker "
            "with transactions: it bumps the epoch and aborts the transaction in flight), or on a Kafka 4.0+ tool "
            f"kafka-transactions.sh forceTerminateTransaction --transactionalId {tid!r} (the same request); both "
            "abort: only if the transaction's data may be discarded")


def _reload(v: Verdict) -> str:
    p = v.coordinator_partition
    broker = v.id_view.coordinator if v.id_view is not None else None
    return (f"a new leader of __transaction_state-{p} reloads it and resends the pending markers: restart broker "
            f"{broker} or move that partition's leadership (kafka-leader-election.sh, brokers 2.4+), after making "
            f"sure {v.view.topic_partition} has a live leader")


def stuck(v: Verdict) -> tuple[str, ...]:
    """A coordinator that holds the transaction in PrepareCommit/PrepareAbort: its markers never arrived."""
    lines = [f"{_coordinator(v)} holds the transaction in {v.id_view.state_name if v.id_view else '?'}; "
             f"its markers never reached {v.view.topic_partition}",
             f"check {_leader_log(v)} and the coordinator broker's server.log for WriteTxnMarkers of producer "
             f"{v.entry.producer_id} (errors such as NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, "
             "INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED)", _reload(v)]
    if v.decision is Decision.COMMIT:
        lines.insert(0, "do NOT abort: the coordinator decided to COMMIT; an abort would discard data committed on "
                        "the transaction's other partitions")
    else:
        lines.append("the coordinator decided to ABORT: the abort below (commented) writes the marker it could not")
    return tuple(lines)


def fenced(v: Verdict) -> tuple[str, ...]:
    """The partition refuses the coordinator's markers (a coordinator epoch above the coordinator's own)."""
    e = v.entry
    lines = [f"the partition refuses the markers of {_coordinator(v)}: producer {e.producer_id}'s entry holds "
             f"coordinator epoch {e.coordinator_epoch}",
             f"check {_leader_log(v)} for TRANSACTION_COORDINATOR_FENCED on WriteTxnMarkers of producer "
             f"{e.producer_id}, and who ran an abort with --coordinator-epoch {e.coordinator_epoch}"]
    if v.decision is Decision.COMMIT:
        lines.insert(0, "do NOT abort: the coordinator's last decision for this id was COMMIT; no tool writes a "
                        "COMMIT marker, and an abort discards data committed on the other partitions: decide with "
                        "the data's owners")
    elif v.decision is Decision.ABORT:
        lines.append(f"the coordinator's last decision was ABORT: an abort given the partition's own coordinator "
                     f"epoch {e.coordinator_epoch} (commented below) writes the marker it could not")
    else:
        lines.append("the transaction is still Ongoing: whatever the coordinator decides, its marker will be "
                     "refused here")
    return tuple(lines)


def overdue(v: Verdict) -> tuple[str, ...]:
    """Ongoing past its own timeout: the coordinator should have aborted it (its timeout checker,
    ``TransactionCoordinator.abortTimedOutTransactions``, every 10 s by default) and has not. How long
    past it is the verdict's heading's (``ongoing, overdue by 1 h 7 min``) and JSON's ``overdueMs``,
    written once, not here again in other words."""
    m = v.id_view.metadata if v.id_view is not None else None
    timeout = f"{m.timeout_ms} ms" if m is not None else "?"
    broker = v.id_view.coordinator if v.id_view else "?"
    return (f"Ongoing past its own timeout ({timeout}): {_coordinator(v)} should have "
            "aborted it (it checks every 10 s by default)",
            f"check that broker {broker} still leads __transaction_state-{v.coordinator_partition} and its "
            "server.log for the aborts of timed-out transactions (errors writing the PrepareAbort record or its "
            f"markers), and {_leader_log(v)} for WriteTxnMarkers of producer {v.entry.producer_id}",
            f"a new leader of __transaction_state-{v.coordinator_partition} loads it and aborts the timed-out "
            f"transaction: restart broker {broker} or move that partition's leadership (kafka-leader-election.sh, "
            "brokers 2.4+)", _terminate(v))


def unverifiable(v: Verdict) -> tuple[str, ...]:
    """The evidence cannot decide: what to add or copy again."""
    if v.gaps:
        paths = sorted({g.partition_dir for g in v.gaps})
        return (f"take a fresh copy of {', '.join(paths)} and run again; the guard in abort-commands compares "
                "with the live cluster before any abort",)
    return ("add the disks holding every __transaction_state partition and run again, or ask the live cluster "
            "(kafka-transactions.sh describe-producers / find-hanging)",)


def none(v: Verdict) -> tuple[str, ...]:
    """A proven hang (the abort command is the advice), or a transaction its coordinator will finish in time."""
    return ()
