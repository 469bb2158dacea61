"""The words of the evidence model (render/evidence_text.py): the lines a verdict run says first, and why
nothing hanging is no all-clear."""

from __future__ import annotations

from forensics.analysis.coverage import Coverage, CoverageSource
from forensics.analysis.evidence_model import EvidenceModel, NoAllClear, NoAllClearWhy, TornLog
from forensics.analysis.gap_facts import BelowHighWatermark, Gap, GapKind, LogDamage
from forensics.analysis.quiescence import Quiescence, Unsettled, UnsettledKind
from forensics.model import TopicPartition
from forensics.render.evidence_text import evidence_lines, no_all_clear_text

TPS = tuple(TopicPartition("t", p) for p in range(4))


def test_no_all_clear_in_words() -> None:
    assert no_all_clear_text(NoAllClear(NoAllClearWhy.COPIES_MISSING, TPS[:1])) == (
        "1 partition(s) lack the copy that matters (t-0)")
    assert no_all_clear_text(NoAllClear(NoAllClearWhy.LOGS_TORN, TPS)) == (
        "4 partition(s) whose log disagrees with their own files (t-0, t-1, t-2 and 1 more)")
    assert no_all_clear_text(NoAllClear(NoAllClearWhy.METADATA_MISSING)) == (
        "the log dir holding __cluster_metadata is missing")
    assert no_all_clear_text(NoAllClear(NoAllClearWhy.METADATA_INCOMPLETE)) == (
        "the __cluster_metadata log read is incomplete")
    assert no_all_clear_text(NoAllClear(NoAllClearWhy.METADATA_COPY_MISSING)) == (
        "a metadata log dir is given without its __cluster_metadata-0")


def test_the_lines_in_their_order() -> None:
    """The quiescence first, then the coverage, then the torn logs."""
    q = Quiescence((Unsettled(UnsettledKind.NO_CLEAN_SHUTDOWN, "/d/1"),), frozenset())
    c = Coverage(CoverageSource.CHECKPOINTS, (), (1,), (), (), {}, None)
    end = Gap(GapKind.BELOW_HIGH_WATERMARK, BelowHighWatermark(5), "/d/1/t-0", log_end=3)
    lines = evidence_lines(EvidenceModel(q, c, (TornLog(TPS[0], (LogDamage("t-0", (end,)),)),)), {"/d/1": 1})
    assert [ln[:40] for ln in lines] == ["evidence: not one quiescent moment: brok", "evidence: no __cluster_metadata among th",
                                         "evidence: 1 partition(s) whose log disag"]
    assert lines[2] == ("evidence: 1 partition(s) whose log disagrees with what their own files say it held, of which "
                        "the log of t-0 ends at offset 3, below its high watermark 5: what is missing may hold an open "
                        "transaction, so no all-clear is proven")
    assert evidence_lines(EvidenceModel(Quiescence((), frozenset()), Coverage(CoverageSource.NOTHING, (), (), (), (),
                                                                              {}, None)), {}) == []
