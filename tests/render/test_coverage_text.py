"""The words of the coverage (render/coverage_text.py), as every verdict run and scan print them."""

from __future__ import annotations

from forensics.analysis.coverage import Coverage, CoverageSource, MissingBroker, MissingLogDir, Uncovered, UncoveredWhy
from forensics.model import TopicPartition
from forensics.render.coverage_text import coverage_lines, joined, names, uncovered_text

TP = TopicPartition("orders", 0)


def _tps(n: int) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition("t", p) for p in range(n))


def test_why_a_copy_is_missing() -> None:
    assert uncovered_text(Uncovered(TP, UncoveredWhy.LEADER_COPY_MISSING, 3, (2,), "1aB")) == (
        "its leader's copy (broker 3, log dir 1aB) is not among the inputs; broker 2's is")
    assert uncovered_text(Uncovered(TP, UncoveredWhy.LEADER_COPY_MISSING, 3, (1, 2, None))) == (
        "its leader's copy (broker 3) is not among the inputs; broker 1's, broker 2's and broker None's are")
    assert uncovered_text(Uncovered(TP, UncoveredWhy.LEADER_COPY_MISSING, 3)) == (
        "its leader's copy (broker 3) is not among the inputs; no replica's is")
    assert uncovered_text(Uncovered(TP, UncoveredWhy.NO_LEADER, None, (1, 2))) == (
        "it has no leader, and broker 1's and broker 2's copies are among the inputs")
    assert uncovered_text(Uncovered(TP, UncoveredWhy.NO_LEADER, None)) == (
        "it has no leader, and no replica's copy is among the inputs")
    assert uncovered_text(Uncovered(TP, UncoveredWhy.LISTED_NOT_GIVEN, 1, log_dir="/d/1")) == (
        "broker 1's checkpoints list it, but its partition dir is not among the inputs (/d/1): that copy may be the "
        "leader's")
    assert uncovered_text(Uncovered(TP, UncoveredWhy.LISTED_NOT_GIVEN, None, log_dir="/d/x")).startswith(
        "/d/x's checkpoints list it")


def test_names_and_joined() -> None:
    assert names(_tps(3)) == "t-0, t-1, t-2" and names(_tps(5)) == "t-0, t-1, t-2 and 2 more"
    assert joined(["a"]) == "a" and joined(["a", "b", "c"]) == "a, b and c"


def test_the_coverage_lines() -> None:
    other = TopicPartition("pay", 1)
    c = Coverage(CoverageSource.METADATA, (1, 2, 3), (1,), (MissingBroker(2, _tps(4)), MissingBroker(3, ())),
                 (MissingLogDir(1, "dirB", ()),),
                 {TopicPartition("t", 0): Uncovered(TopicPartition("t", 0), UncoveredWhy.LEADER_COPY_MISSING, 2),
                  other: Uncovered(other, UncoveredWhy.NO_LEADER, None, (1,))}, 50, metadata_incomplete=True)
    assert coverage_lines(c) == [
        "evidence: broker 2 is registered in __cluster_metadata but none of its log dirs is among the inputs (leader "
        "of 4 partition(s), of which t-0, t-1, t-2 and 1 more)",
        "evidence: broker 3 is registered in __cluster_metadata but none of its log dirs is among the inputs (it leads "
        "nothing)",
        "evidence: broker 1's log dir dirB is registered but not among the inputs (no partition is assigned to it)",
        "evidence: 1 partition(s) without the copy that matters among the inputs, of which pay-1: it has no leader, "
        "and broker 1's copy is among the inputs",
        "evidence: the __cluster_metadata log read is incomplete (damaged, records missing, or records that do not "
        "decode or that Kafka's replay refuses: see its findings): what it says should exist may be out of date, so "
        "no all-clear is proven"]
    zk = Coverage(CoverageSource.CHECKPOINTS, (), (1, 2), (), (), {}, None)
    assert coverage_lines(zk) == [
        "evidence: no __cluster_metadata among the inputs (a ZooKeeper-era disk, or its metadata log dir left out): "
        "the cluster's other brokers and the partitions' leaders are not on these disks; brokers 1, 2 judged as given"]
    assert coverage_lines(Coverage(CoverageSource.NOTHING, (), (), (), (), {}, None)) == []
