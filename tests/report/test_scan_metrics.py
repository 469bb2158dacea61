"""Offline metrics in ``scan``: LSO, LastStableOffsetLag, MaxActiveTransactionDuration and
PartitionsWithLateTransactionsCount (``ProducerStateManager.hasLateTransaction``), against the as-of time."""

from __future__ import annotations

from pathlib import Path

from forensics.runs.rebuild import scan
from forensics.render.clock_text import as_of_source

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
REAL = REPO / "fixtures" / "real" / "kraft-tv2" / "disk"
OPEN_START = 1767225606251  # maxTimestamp of reporting-app's first open batch on orders-0 (header-only)


def _parts(report):
    return {(p.topic, p.partition): p for d in report.log_dirs for p in d.partitions}


def test_hanging_transaction_pins_lso_and_becomes_late():
    early = scan([str(EXAMPLE)], as_of=OPEN_START + 60_000)
    p = _parts(early)[("orders", 0)]
    assert (p.last_stable_offset, p.last_stable_offset_lag, p.open_transactions) == (6, 10, 1)
    assert p.oldest_open_txn_start == OPEN_START and p.max_active_txn_duration_ms == 60_000
    assert not p.late_transaction and early.log_dirs[0].partitions_with_late_transactions == 0
    # late once older than transaction.max.timeout.ms (15 min) + 5 min, measured from lastTimestamp
    late = scan([str(EXAMPLE)], as_of=p.oldest_open_txn_last_timestamp + 20 * 60_000 + 1)
    assert _parts(late)[("orders", 0)].late_transaction
    assert late.log_dirs[0].partitions_with_late_transactions == 1
    assert as_of_source(late.as_of) == "--as-of"


def test_real_disk_lso_equals_hw_except_the_ongoing_transaction():
    report = scan([str(REAL)])
    assert report.as_of.time_ms is not None and as_of_source(report.as_of).startswith("newest ")
    for (topic, partition), p in _parts(report).items():
        if topic in ("__transaction_state", "__cluster_metadata"):
            assert p.last_stable_offset is None
        elif topic == "d-txn-ongoing" and partition in (0, 1):
            assert (p.last_stable_offset, p.open_transactions, p.last_stable_offset_lag) == (2, 1, 3)
        else:
            assert p.last_stable_offset == p.high_watermark and p.open_transactions == 0, (topic, partition)
