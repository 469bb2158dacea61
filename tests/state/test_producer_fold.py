"""The producer-state fold against the broker's rules (``ProducerAppendInfo.append``,
``ProducerStateManager.completeTxn``), event by event."""

from __future__ import annotations

from forensics.codec.snapshot import BatchMetadata, ProducerEntry, ProducerStateEntry
from forensics.findings import FindingKind
from forensics.state.events import DataBatch, Marker
from forensics.state.producer import ProducerStateBuilder

P = "seg.log"


def data(pid, epoch, base, last, *, seq=0, ts=1000, txn=True, pos=0):
    return DataBatch(pid, epoch, base, last, seq, seq + last - base, ts, txn, last - base + 1, 100, pos)


def marker(pid, epoch, offset, *, commit=True, coord=0, ts=2000, pos=0):
    return Marker(pid, epoch, offset, commit, coord, ts, pos)


def fold(*events, initial=()):
    b = ProducerStateBuilder(initial)
    b.apply_all(P, events)
    return b.finish()


def kinds(f):
    return [x.kind for x in f.findings]


def test_transaction_opens_at_first_transactional_batch_and_closes_at_marker():
    f = fold(data(7, 0, 10, 12), data(7, 0, 13, 13, seq=3))
    e = f.entries[7]
    assert (e.producer_epoch, e.last_sequence, e.last_offset, e.current_txn_first_offset) == (0, 3, 13, 10)
    assert f.ongoing == {7: 10}
    f = fold(data(7, 0, 10, 12), marker(7, 0, 13, coord=4, ts=5555))
    e = f.entries[7]
    assert e.current_txn_first_offset is None and e.coordinator_epoch == 4 and e.last_timestamp == 5555
    assert e.last_sequence == 2  # same epoch: batch metadata kept
    assert f.completed[0].first_offset == 10 and f.completed[0].last_offset == 13
    span = f.spans[7][0]
    assert (span.first_offset, span.last_data_offset, span.marker_offset, span.outcome) == (10, 12, 13, "COMMIT")


def test_marker_with_bumped_epoch_clears_batch_metadata():
    """Coordinator timeout abort (marker at epoch + 1): lastSequence -1, as b-txn-aborts-1 pid 6 shows."""
    f = fold(data(6, 0, 25, 26), marker(6, 1, 27, commit=False, ts=9))
    e = f.entries[6]
    assert (e.producer_epoch, e.last_sequence, e.last_offset, e.last_timestamp) == (1, -1, -1, 9)
    assert f.completed[0].is_aborted and f.findings == ()


def test_lso_of_completed_txn_is_other_producers_first_open_offset():
    """Interleaved (real b-txn-aborts-2): A opens at 0, B at 1, A aborts at 4 -> LSO 1."""
    f = fold(data(3, 0, 0, 0), data(4, 0, 1, 1), data(3, 0, 2, 2, seq=1), data(4, 0, 3, 3, seq=1),
             marker(3, 0, 4, commit=False), marker(4, 0, 5))
    a, b = f.completed
    assert (a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset) == (3, 0, 4, 1)
    assert (b.producer_id, b.last_stable_offset) == (4, 6)


def test_anomalies_are_findings_and_replication_semantics_apply():
    f = fold(data(1, 5, 0, 0), data(1, 4, 1, 1))  # epoch goes back: applied anyway
    assert FindingKind.EPOCH_REGRESSION in kinds(f) and f.entries[1].producer_epoch == 4
    f = fold(data(1, 0, 0, 0), marker(1, 0, 1, coord=7), data(1, 0, 2, 2), marker(1, 0, 3, coord=6))
    assert FindingKind.COORDINATOR_EPOCH_REGRESSION in kinds(f) and f.entries[1].coordinator_epoch == 6
    f = fold(data(1, 0, 0, 0), data(1, 0, 1, 1, txn=False))
    assert FindingKind.INVALID_TXN_STATE in kinds(f) and f.ongoing == {1: 0}
    f = fold(marker(1, 0, 0))
    assert kinds(f) == [FindingKind.MARKER_WITHOUT_TRANSACTION] and f.completed == ()
    f = fold(data(1, 0, 0, 0), data(1, 1, 1, 1))
    assert FindingKind.TRANSACTION_SPANS_EPOCHS in kinds(f)
    assert all(x.path == P and x.first_offset is not None for x in f.findings)


def test_non_transactional_and_idempotent_batches_never_open_transactions():
    f = fold(data(9, 0, 0, 4, txn=False), data(9, 0, 5, 9, seq=5, txn=False))
    assert f.ongoing == {} and f.entries[9].last_sequence == 9 and f.entries[9].coordinator_epoch == -1


def test_snapshot_start_keeps_open_transaction_and_batch_metadata():
    raw = ProducerEntry(20, 0, 3, 4, 2, 777, 0, 2)
    snap = ProducerStateEntry(20, 0, 0, 777, 2, BatchMetadata(3, 4, 2, 777), raw, 10)
    f = fold(initial=[snap])
    e = f.entries[20]
    assert (e.current_txn_first_offset, e.last_sequence, e.last_offset) == (2, 3, 4)
    f = fold(marker(20, 0, 5, commit=False), initial=[snap])
    assert f.completed[0].first_offset == 2 and f.spans[20][0].from_snapshot
