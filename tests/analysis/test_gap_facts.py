"""The gaps of the evidence as facts (analysis/evidence_gaps.py, analysis/gap_facts.py), on hand-made log
extents: which fact each end of a log gives, with which values, in which order; damage as its finding's
kind, file and byte; only a settling gap answers ``settling``. Their words: tests/render/test_gap_text.py."""

from __future__ import annotations

from forensics.analysis import gap_facts as f
from forensics.analysis.evidence_gaps import LogExtent, end_gaps, gaps_of, log_damage
from forensics.codec.checkpoints import EpochEntry
from forensics.findings import Finding, FindingKind
from forensics.model import TopicPartition

DIR = "/d/orders-0"
SEG = f"{DIR}/00000000000000000000.log"


def _extent(**kw) -> LogExtent:
    base = dict(label="orders-0", path=DIR, log_end=4, high_watermark=None, recovery_point=None, snapshot_offsets=(),
                segments=(SEG,), findings=())
    return LogExtent(**(base | kw))


def test_a_log_ending_below_its_checkpoints_gives_one_fact_each_with_the_offsets() -> None:
    log = _extent(high_watermark=5, recovery_point=6, log_start=7, snapshot_offsets=(3, 9, 12),
                  leader_epochs=(EpochEntry(1, 0), EpochEntry(2, 8)), reach=(11, f"{DIR}/0.index", "offset index"))
    gaps = end_gaps(log)
    assert [g.fact for g in gaps] == [f.BelowHighWatermark(5), f.BelowRecoveryPoint(6), f.BelowLogStart(7),
                                      f.EpochPastEnd(2, 8), f.IndexPastEnd(10, "offset index", f"{DIR}/0.index"),
                                      f.SnapshotPastEnd(12)]
    assert {g.log_end for g in gaps} == {4} and {g.partition_dir for g in gaps} == {DIR}
    assert [g.kind for g in gaps] == [f.GapKind.BELOW_HIGH_WATERMARK, f.GapKind.BELOW_RECOVERY_POINT,
                                      f.GapKind.BELOW_LOG_START, f.GapKind.EPOCH_PAST_END, f.GapKind.INDEX_PAST_END,
                                      f.GapKind.SNAPSHOT_PAST_END]
    assert [g.kind.value for g in gaps] == ["below_high_watermark", "below_recovery_point", "below_log_start",
                                            "epoch_past_end", "index_past_end", "snapshot_past_end"]


def test_a_clean_stop_makes_a_log_past_its_checkpoints_a_gap() -> None:
    log = _extent(log_end=9, high_watermark=5, recovery_point=6, clean_shutdown=True, sole_replica=True,
                  leader_epochs=(EpochEntry(3, 0),), led_at=4)
    assert [g.fact for g in end_gaps(log)] == [f.PastRecoveryPoint(6), f.PastHighWatermark(5),
                                               f.EpochBehindMetadata(3, 4)]


def test_damage_is_its_finding_s_kind_file_and_byte_and_only_from_the_point_asked() -> None:
    found = (Finding(FindingKind.CRC_MISMATCH, "crc", path=SEG, position=600),
             Finding(FindingKind.UNREADABLE_FILE, "unreadable", path=f"{DIR}/other.log"),
             Finding(FindingKind.FUTURE_TIMESTAMP, "not damage", path=SEG))
    gaps = gaps_of(_extent(findings=found))
    assert [g.fact for g in gaps] == [f.Damage(FindingKind.CRC_MISMATCH, SEG, 600),
                                      f.Damage(FindingKind.UNREADABLE_FILE, f"{DIR}/other.log", None)]
    assert [g.fact for g in gaps_of(_extent(findings=found), after=(SEG, 601))] == [gaps[1].fact]
    said = log_damage("orders-0", gaps, f.DamageMeans.COPY_MAY_NOT_HOLD)
    assert said == f.LogDamage("orders-0", gaps, f.DamageMeans.COPY_MAY_NOT_HOLD)


def test_only_a_settling_gap_answers_settling() -> None:
    fact = f.MarkerMayBeLater(TopicPartition("orders", 0), None, 60_000, "app", "Empty", 1)
    assert f.Gap(f.GapKind.TOO_RECENT, fact, DIR).settling is fact
    assert all(g.settling is None for g in end_gaps(_extent(high_watermark=5)))
