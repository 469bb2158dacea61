"""Why nothing hanging is no all-clear, as a fact (analysis/evidence_model.py); its words are
tests/render/test_evidence_text.py's."""

from __future__ import annotations

from dataclasses import replace

from forensics.analysis.coverage import Coverage, CoverageSource, Uncovered, UncoveredWhy
from forensics.analysis.evidence_model import EvidenceModel, NoAllClear, NoAllClearWhy, TornLog
from forensics.analysis.filters import Filters
from forensics.analysis.quiescence import Quiescence
from forensics.model import TopicPartition

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
QUIET = Quiescence((), frozenset())


def _coverage(*uncovered: TopicPartition) -> Coverage:
    return Coverage(CoverageSource.METADATA, (1,), (1,), (), (),
                    {tp: Uncovered(tp, UncoveredWhy.LEADER_COPY_MISSING, 1) for tp in uncovered}, 50)


def test_what_the_evidence_lacks_for_an_all_clear() -> None:
    everything, only_b = Filters(None, None, None), Filters("b", None, None)
    assert EvidenceModel(QUIET, _coverage()).unproven_all_clear(everything) is None
    lacking = EvidenceModel(QUIET, _coverage(A0, A1))
    assert lacking.unproven_all_clear(everything) == NoAllClear(NoAllClearWhy.COPIES_MISSING, (A0, A1))
    assert lacking.unproven_all_clear(only_b) is None  # the selection holds none of them
    torn = EvidenceModel(QUIET, _coverage(), (TornLog(B0, ()),))
    assert torn.unproven_all_clear(only_b) == NoAllClear(NoAllClearWhy.LOGS_TORN, (B0,))
    assert torn.unproven_all_clear(Filters("a", None, None)) is None
    # what the metadata lacks weighs on every selection, before the partitions
    for change, why in (({"metadata_missing": ("/d/1",)}, NoAllClearWhy.METADATA_MISSING),
                        ({"metadata_incomplete": True}, NoAllClearWhy.METADATA_INCOMPLETE),
                        ({"metadata_copies_missing": ("/m",)}, NoAllClearWhy.METADATA_COPY_MISSING)):
        model = EvidenceModel(QUIET, replace(_coverage(A0), **change))
        assert model.unproven_all_clear(only_b) == NoAllClear(why)
