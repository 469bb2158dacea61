"""The words of the gaps in the evidence (forensics/render/gap_text.py), on hand-made facts: how the damage of
one log is said (each place once, the ends after), a contradiction's line, what a part of an unproven reason
adds, the torn-log warning."""

from __future__ import annotations

from forensics.analysis import gap_facts as f
from forensics.analysis.coverage import Uncovered, UncoveredWhy
from forensics.analysis.evidence_model import TornLog
from forensics.findings import FindingKind
from forensics.model import TopicPartition
from forensics.render.gap_text import fact_text, gap_text, log_damage_text, part_text, torn_warning

SEG = "/d/orders-0/00000000000000000000.log"
TP = TopicPartition("orders", 0)
UNREADABLE = f.Gap(FindingKind.UNREADABLE_FILE, f.Damage(FindingKind.UNREADABLE_FILE, SEG, None), SEG)
END = f.Gap(f.GapKind.BELOW_HIGH_WATERMARK, f.BelowHighWatermark(5), "/d/orders-0", log_end=0)


def test_a_file_unreadable_twice_is_named_once() -> None:
    assert log_damage_text(f.LogDamage("orders-0", (UNREADABLE, UNREADABLE, END, END))) == (
        "the log of orders-0 cannot be read (00000000000000000000.log) and ends at offset 0, below its high "
        "watermark 5")
    other = f.Gap(FindingKind.CRC_MISMATCH, f.Damage(FindingKind.CRC_MISMATCH, SEG, 61), SEG, 61)
    assert log_damage_text(f.LogDamage("orders-0", (UNREADABLE, other))) == (
        "the log of orders-0 cannot be read (00000000000000000000.log) and is damaged at byte 61 of "
        "00000000000000000000.log (crc_mismatch)")


def test_more_than_three_damaged_places_are_counted_and_the_ends_joined() -> None:
    places = tuple(f.Gap(FindingKind.CRC_MISMATCH, f.Damage(FindingKind.CRC_MISMATCH, SEG, p), SEG, p) for p in (1, 2, 3, 4, 5))
    rp = f.Gap(f.GapKind.BELOW_RECOVERY_POINT, f.BelowRecoveryPoint(6), "/d/orders-0", log_end=0)
    text = log_damage_text(f.LogDamage("orders-0", (*places, END, rp), f.DamageMeans.MARKER_MAY_BE_MISSING))
    assert text.endswith("at byte 3 of 00000000000000000000.log (crc_mismatch), 2 more damaged places and ends at "
                         "offset 0, below its high watermark 5 and below its recovery point 6: this transaction's "
                         "marker may be missing from the copy")


def test_end_facts_name_their_files_by_name_only() -> None:
    assert fact_text(f.IndexPastEnd(41, "offset index", "/d/orders-0/00000000000000000000.index")) == (
        "below offset 41, which its offset index 00000000000000000000.index names")
    assert fact_text(f.SnapshotPastEnd(12)) == "below its producer snapshot 00000000000000000012.snapshot"
    assert fact_text(f.Damage(FindingKind.TRUNCATED_TAIL, SEG, None)) == (
        "is damaged in 00000000000000000000.log (truncated_tail)")


def test_contradictions_name_their_records_by_file_and_byte() -> None:
    assert fact_text(f.EpochMismatch("orders-0", 7, SEG, 120, 3, None)) == (
        f"the batch holding offset 7 of orders-0 ({SEG} @ byte 120) carries leader epoch 3, where its "
        "leader-epoch-checkpoint gives no epoch (no entry starts at or below it): an edited or stale checkpoint, or "
        "a log of another moment")
    assert fact_text(f.RepeatedBatch(SEG, 9, 4, 2, SEG, 0, 0xABC)).endswith(
        f"at offset 2 ({SEG} @ byte 0, CRC 0x00000abc): a copy of a batch, not a new transaction")
    other = f.Replica(2, "/b/orders-0")
    assert fact_text(f.ReplicaTransaction(other, TP, "/b/orders-0", 9, 4, (), 3, (1,))) == (
        "broker 2 (/b/orders-0)'s copy of orders-0 (/b/orders-0) holds producer 9's open transaction since offset 4 "
        "with batches of producer epochs ?, the copy read since offset 3 with 1: the replicas of one transaction "
        "disagree")
    misplaced = f.Misplaced(3, (("a", 1), ("b", 2)), "/t/0.log", 40)
    assert fact_text(misplaced).startswith("__transaction_state-3 holds records of ids that hash to other partitions "
                                           "('a' to 1 and 1 more; /t/0.log @ byte 40)")


def test_copies_missing_say_what_coverage_found() -> None:
    u = Uncovered(TopicPartition("__transaction_state", 1), UncoveredWhy.LEADER_COPY_MISSING, 3)
    lacking = tuple(TopicPartition("__transaction_state", p) for p in (1, 2, 5, 8))
    assert fact_text(f.CopyMissing(TP, u)) == (
        "orders-0: its leader's copy (broker 3) is not among the inputs; no replica's is, which may hold newer records")
    assert fact_text(f.CoordinatorCopiesMissing(lacking, u)) == (
        "4 coordinator partition(s) lack the copy that matters (__transaction_state-1, __transaction_state-2, "
        "__transaction_state-5 and 1 more; its leader's copy (broker 3) is not among the inputs; no replica's is): one "
        "may hold this producer's record")


def test_a_part_of_an_unproven_reason_adds_what_it_means() -> None:
    contradiction = f.Gap(f.GapKind.CONTRADICTION, f.EpochMismatch("__transaction_state-0", 1, SEG, 0, 2, 1), SEG, 0)
    assert part_text(f.NotBrokersOwn(contradiction)) == (
        gap_text(contradiction) + ": the id's records there are not proven to be the broker's own")
    assert part_text(END) == "below its high watermark 5"


def test_the_torn_warning_names_a_few_logs_then_counts() -> None:
    assert torn_warning(()) == []
    torn = [TornLog(TopicPartition("t", p), (f.LogDamage(f"t-{p}", (END,)),)) for p in range(4)]
    [line] = torn_warning(torn)
    assert line == ("evidence: 4 partition(s) whose log disagrees with what their own files say it held, of which the "
                    "log of t-0 ends at offset 0, below its high watermark 5; the log of t-1 ends at offset 0, below "
                    "its high watermark 5; the log of t-2 ends at offset 0, below its high watermark 5; and 1 more: "
                    "what is missing may hold an open transaction, so no all-clear is proven")
