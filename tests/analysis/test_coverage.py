"""The coverage of the evidence as facts (analysis/coverage.py): which partition lacks which copy, and why; the
words are tests/render/test_coverage_text.py's."""

from __future__ import annotations

from forensics.analysis.coverage import (
    CoverageSource,
    PresentCopy,
    PresentLogDir,
    Uncovered,
    UncoveredWhy,
    from_checkpoints,
)
from forensics.layout.discovery import discover
from forensics.model import TopicPartition
from forensics.pipeline.cluster_metadata import EVIDENCE_RECORD_TYPES, read_cluster_image
from forensics.report.evidence_facts import coverage_of
from tests.runs.support import REAL_TV2, copy_without

ORDERS_0, ORDERS_1 = TopicPartition("orders", 0), TopicPartition("orders", 1)


def test_a_partition_its_checkpoints_list_but_not_given_is_uncovered() -> None:
    dirs = [PresentLogDir("/d/1", 1, "dirA", (ORDERS_0, ORDERS_1)), PresentLogDir("/d/x", None, None, (ORDERS_1,))]
    copies = [PresentCopy(ORDERS_0, 1, "dirA", "/d/1/orders-0", "/d/1")]
    c = from_checkpoints(dirs, copies)
    assert c.source is CoverageSource.CHECKPOINTS and c.brokers_present == (1,) and not c.complete
    # the first log dir that lists it names it: broker 1's, whose dir of orders-1 is not given
    assert dict(c.uncovered) == {ORDERS_1: Uncovered(ORDERS_1, UncoveredWhy.LISTED_NOT_GIVEN, 1, log_dir="/d/1")}
    assert from_checkpoints([], []).source is CoverageSource.NOTHING


def test_a_kraft_partition_whose_leader_copy_is_left_out(tmp_path) -> None:
    disk = copy_without(REAL_TV2, tmp_path / "disk", "b-txn-aborts-1")
    inventory = discover([str(disk)])
    image = read_cluster_image(inventory, record_types=EVIDENCE_RECORD_TYPES)
    c = coverage_of(inventory, image)
    tp = TopicPartition("b-txn-aborts", 1)
    leader = image.partition("b-txn-aborts", 1)
    assert c.source is CoverageSource.METADATA and list(c.uncovered) == [tp]
    assert c.uncovered[tp] == Uncovered(tp, UncoveredWhy.LEADER_COPY_MISSING, 1, (), leader.directory_of(1))
    # the broker stopped: no leader now, broker 1 the last, its log dir named by its directory id
    assert (leader.leader, leader.last_leader) == (-1, 1) and leader.directory_of(1)
