"""The local executor: runs the work units in-process, in offset order, and assembles the inputs
of the analysis (no JVM, no threads: what ``--engine local`` runs)."""

from __future__ import annotations

from typing import Callable, Iterator, Optional, Tuple

from forensics.layout import (
    Inventory,
    LogDir,
    PartitionDir,
    PartitionStatus,
    SegmentFiles,
)
from forensics.model import TRANSACTION_STATE_TOPIC
from forensics.pipeline.units import (
    producer_events,
    read_snapshot,
    read_txn_index,
    txn_log_records,
)
from forensics.state.inputs import PartitionInputs, TxnStateInputs

Progress = Callable[[int], None]
PartitionFilter = Callable[[Optional[LogDir], PartitionDir], bool]


def live_partitions(inventory: Inventory) -> Iterator[Tuple[Optional[LogDir], PartitionDir]]:
    """Partition replicas the broker would load (not ``-delete``/``-stray``/``-future`` copies)."""
    for log_dir, p in inventory.all_partitions():
        if p.status is PartitionStatus.LIVE and p.topic_partition is not None:
            yield log_dir, p


def _checkpoints(log_dir: Optional[LogDir], p: PartitionDir) -> Tuple[Optional[int], Optional[int], Optional[int]]:
    tp = p.topic_partition
    start = log_dir.log_start_offsets.get(tp) if log_dir is not None and tp is not None else None
    hw = log_dir.high_watermarks.get(tp) if log_dir is not None and tp is not None else None
    epoch = p.leader_epochs[-1].epoch if p.leader_epochs else None
    return start, hw, epoch


def _segments(p: PartitionDir, progress: Optional[Progress]) -> Iterator[SegmentFiles]:
    """The segments that have a ``.log``, in offset order, reporting progress as each is read."""
    for s in p.segments:
        if s.log is None:
            continue
        yield s
        if progress is not None:
            progress(s.log_size or 0)


def partition_inputs(log_dir: Optional[LogDir], p: PartitionDir, progress: Optional[Progress] = None) -> PartitionInputs:
    """Run the units of one data-partition replica: segments, snapshots, txn indexes."""
    segments = []
    txn_entries, txn_findings = [], []
    for s in _segments(p, progress):
        segments.append(producer_events(s.log, s.base_offset))
        if s.txnindex is not None:
            entries, found = read_txn_index(s.txnindex)
            txn_entries.extend(entries)
            txn_findings.extend(found)
    snapshots = tuple(read_snapshot(f.path, f.offset) for f in p.snapshots)
    start, hw, epoch = _checkpoints(log_dir, p)
    tp = p.topic_partition
    if tp is None:
        raise ValueError(f"{p.path}: not a named partition directory")
    return PartitionInputs(p.path, tp, log_dir.broker_id if log_dir is not None else None,
                           log_dir.path if log_dir is not None else "", start, hw, epoch, tuple(segments), snapshots,
                           tuple(txn_entries), tuple(txn_findings) + tuple(p.findings),
                           log_dir.cleaner_offsets.get(tp) if log_dir is not None else None, tuple(p.leader_epochs))


def txn_state_inputs(log_dir: Optional[LogDir], p: PartitionDir, progress: Optional[Progress] = None) -> TxnStateInputs:
    """Run the units of one ``__transaction_state`` replica."""
    segments = [txn_log_records(s.log, s.base_offset) for s in _segments(p, progress)]
    start, hw, epoch = _checkpoints(log_dir, p)
    return TxnStateInputs(p.path, p.partition if p.partition is not None else -1,
                          log_dir.broker_id if log_dir is not None else None,
                          log_dir.path if log_dir is not None else "", start, hw, epoch, tuple(segments),
                          tuple(p.findings))


def is_txn_state(p: PartitionDir) -> bool:
    return p.topic == TRANSACTION_STATE_TOPIC
