"""One rule for a producer's coordinator epoch on every screen: DescribeProducers reports a negative
one as none (-1), an abort passes none as 0; describe-producers and export's producer_states agree
for an entry holding another negative value (a snapshot's int32 is taken as written)."""

from types import SimpleNamespace

import pytest

from forensics.model import TopicPartition
from forensics.report.export import producer_state_rows
from forensics.report.state import producer_rows
from forensics.state.producer import ProducerState


def _entry(coordinator_epoch: int) -> ProducerState:
    return ProducerState(producer_id=7, producer_epoch=3, coordinator_epoch=coordinator_epoch, last_sequence=4,
                         last_offset=12, offset_delta=0, last_timestamp=1_767_225_606_251,
                         current_txn_first_offset=10)


def _view(e: ProducerState) -> SimpleNamespace:
    inputs = SimpleNamespace(path="d/orders-0", log_dir="d", broker_id=1)
    folds = SimpleNamespace(spans={})
    return SimpleNamespace(topic_partition=TopicPartition("orders", 0), inputs=inputs, entries={7: e},
                           history=folds, broker=folds)


@pytest.mark.parametrize("held, reported, abort", [(-5, -1, 0), (-1, -1, 0), (0, 0, 0), (4, 4, 4)])
def test_describe_producers_and_export_report_the_same_epoch(held, reported, abort):
    e = _entry(held)
    assert (e.latest_coordinator_epoch, e.abort_coordinator_epoch) == (reported, abort)
    view = _view(e)
    (row,) = producer_rows(view)
    assert row.latest_coordinator_epoch == reported
    (exported,) = producer_state_rows(SimpleNamespace(partitions=[view]))
    assert exported[5:8] == (7, 3, reported)  # after the replica's five columns: producerId, producerEpoch, coordinatorEpoch
