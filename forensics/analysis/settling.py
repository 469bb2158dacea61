"""The settling rule: a verdict resting on the absence of a record needs that record's file copied well after
the moment the record would have been written (see :mod:`forensics.analysis.quiescence`).

Two absences decide the verdicts that arm or forbid an abort:

* **no marker in the data partition** (``hanging`` on a coordinator that completed, rotated, expired or
  forgot the id; ``stuck-coordinator`` on a PrepareCommit/PrepareAbort): the coordinator writes its
  markers right after its decision, so the data partition must have been copied at least the window
  after the coordinator's newest record for the id;
* **no transaction in the coordinator** (the id's record shows another state, or no
  ``__transaction_state`` partition knows the producer): the coordinator records a transaction
  (``AddPartitionsToTxn``) before its data is written, so the coordinator partition must have been
  copied at least the window after the transaction's newest data.

On a quiescent log dir (its broker stopped cleanly) a partition is final and the rule holds at once.
"""

from __future__ import annotations

from forensics.analysis.coordinator import CoordinatorView, TransactionIdView
from forensics.analysis.producers import PartitionView
from forensics.analysis.quiescence import Quiescence
from forensics.analysis.gap_facts import CoordinatorMayBeLater, Gap, GapKind, MarkerMayBeLater
from forensics.state.producer import ProducerState, TransactionSpan


def _data_time(entry: ProducerState, span: TransactionSpan | None) -> int:
    times = [entry.last_timestamp] + ([span.last_timestamp] if span is not None and span.last_timestamp else [])
    return max(times)


def decision_time(v: TransactionIdView) -> int:
    """When the coordinator last wrote about the id: its newest record's time (or its value's update time)."""
    m = v.metadata
    return max(v.last.timestamp, m.last_update_ms if m is not None else -1)


def settling_gaps(hanging: bool, view: PartitionView, entry: ProducerState, span: TransactionSpan | None,
                  v: TransactionIdView | None, coord: CoordinatorView | None, q: Quiescence | None) -> tuple[Gap, ...]:
    """What keeps a verdict that a marker is missing (hanging, stuck) from being judged on this copy: the
    data partition against the coordinator's newest record for the id and, for ``hanging`` (the coordinator
    shows no transaction in flight), the coordinator partitions against the transaction's newest data. Each gap
    holds its facts (``settling``), written out by :func:`forensics.render.gap_text.settling_text`."""
    if q is None or q.proven or coord is None:
        return ()
    out: list[Gap] = []
    tp, path = view.topic_partition, view.inputs.path
    if v is not None and not q.settled_after(path, decision_time(v)):
        fact = MarkerMayBeLater(tp, q.copy_time(path), q.window_ms, v.transactional_id, v.last.state_name,
                                decision_time(v))
        out.append(Gap(GapKind.TOO_RECENT, fact, path, partition_dir=path))
    if not hanging:
        return tuple(out)
    data = _data_time(entry, span)
    wanted = [v.partition] if v is not None else sorted(coord.partitions)
    early = [p for p in wanted if p in coord.partitions and not q.settled_after(coord.partitions[p].inputs.path, data)]
    if early:
        first = coord.partitions[early[0]].inputs.path
        later = CoordinatorMayBeLater(tuple(early), q.copy_time(first), q.window_ms, data, v is not None)
        out.append(Gap(GapKind.TOO_RECENT, later, first, partition_dir=first))
    return tuple(out)

