"""Driver side: the analysis inputs of each replica, from its layout and its finalized unit results."""

from __future__ import annotations

from collections.abc import Iterator

from forensics.layout import Inventory, LogDir, PartitionDir, PartitionStatus
from forensics.model import TRANSACTION_STATE_TOPIC
from forensics.pipeline.merge import ReplicaResult
from forensics.state.inputs import PartitionInputs, TxnStateInputs

EMPTY_RESULT = ReplicaResult((), (), (), (), (), ())


def live_partitions(inventory: Inventory) -> Iterator[tuple[LogDir | None, PartitionDir]]:
    """Partition replicas the broker would load (not ``-delete``/``-stray``/``-future`` copies)."""
    for log_dir, p in inventory.all_partitions():
        if p.status is PartitionStatus.LIVE and p.topic_partition is not None:
            yield log_dir, p


def is_txn_state(p: PartitionDir) -> bool:
    return p.topic == TRANSACTION_STATE_TOPIC


def _checkpoints(log_dir: LogDir | None, p: PartitionDir) -> tuple[int | None, int | None, int | None]:
    tp = p.topic_partition
    start = log_dir.log_start_offsets.get(tp) if log_dir is not None and tp is not None else None
    hw = log_dir.high_watermarks.get(tp) if log_dir is not None and tp is not None else None
    epoch = p.leader_epochs[-1].epoch if p.leader_epochs else None
    return start, hw, epoch


def partition_inputs(log_dir: LogDir | None, p: PartitionDir, r: ReplicaResult) -> PartitionInputs:
    """A data-partition replica: its segments' events, snapshots and txn indexes, with its checkpoints."""
    start, hw, epoch = _checkpoints(log_dir, p)
    tp = p.topic_partition
    if tp is None:
        raise ValueError(f"{p.path}: not a named partition directory")
    return PartitionInputs(p.path, tp, log_dir.broker_id if log_dir is not None else None,
                           log_dir.path if log_dir is not None else "", start, hw, epoch, r.events, r.snapshots,
                           r.txn_entries, r.txn_findings + tuple(p.findings),
                           log_dir.cleaner_offsets.get(tp) if log_dir is not None else None, tuple(p.leader_epochs))


def txn_state_inputs(log_dir: LogDir | None, p: PartitionDir, r: ReplicaResult) -> TxnStateInputs:
    """A ``__transaction_state`` replica: its records, with its checkpoints."""
    start, hw, epoch = _checkpoints(log_dir, p)
    return TxnStateInputs(p.path, p.partition if p.partition is not None else -1,
                          log_dir.broker_id if log_dir is not None else None,
                          log_dir.path if log_dir is not None else "", start, hw, epoch, r.txnlog,
                          tuple(p.findings))
