"""The words of the verdicts' facts (forensics/render/reasons.py, the gaps' in forensics/render/gap_text.py): the
settling gaps, a gap's text and JSON, an unproven reason's parts and tails, on hand-made facts."""

from __future__ import annotations

from forensics.analysis import reasons as r
from forensics.analysis import gap_facts as gf
from forensics.analysis.gap_facts import Gap, GapKind
from forensics.model import TopicPartition
from forensics.findings import FindingKind
from forensics.render.gap_text import gap_text, settling_text
from forensics.render.reasons import TOO_RECENT_ADVICE, TORN_OR_LOST, gap_json, reason_text
from forensics.render.time_text import stamp

T = 1_767_225_613_300
TP = TopicPartition("orders", 0)


def test_a_marker_that_may_have_landed_later_names_both_times_aged_from_the_as_of():
    fact = gf.MarkerMayBeLater(TP, T - 60_000, 300_000, "app", "CompleteCommit", T - 120_000)
    assert settling_text(fact, T) == (
        f"orders-0 was copied no earlier than {stamp(T - 60_000, T)}, less than 5 min after the coordinator's newest "
        f"record for 'app' (CompleteCommit at {stamp(T - 120_000, T)}): its marker may have landed after this copy")
    unknown = gf.MarkerMayBeLater(TP, None, 90_000, "app", "Empty", T)
    assert settling_text(unknown).startswith("orders-0 was copied at a moment nothing on it tells, less than 1.5 min ")


def test_coordinator_partitions_copied_too_soon_are_named_a_few_then_counted():
    one = gf.CoordinatorMayBeLater((3,), T, 300_000, T - 1, known_id=True)
    assert settling_text(one) == (f"__transaction_state-3 was copied no earlier than {stamp(T)}, less than 5 min after "
                                  f"this transaction's newest data ({stamp(T - 1)}): the coordinator's record of it may "
                                  "be newer than this copy")
    many = gf.CoordinatorMayBeLater((0, 1, 2, 4, 7), None, 300_000, T, known_id=False)
    assert settling_text(many).startswith("__transaction_state-0, __transaction_state-1, __transaction_state-2 and 2 "
                                          "more were copied at a moment nothing on it tells")
    assert "a coordinator record of this producer may be newer" in settling_text(many)


def test_a_gap_s_text_and_json_are_its_own_or_its_facts_written():
    plain = Gap(FindingKind.TRUNCATED_TAIL, gf.Damage(FindingKind.TRUNCATED_TAIL, "/e/0.log", 3), "/e/0.log", 3, None, "/e")
    assert gap_text(plain) == "is damaged at byte 3 of 0.log (truncated_tail)" and plain.settling is None
    assert gap_json(plain) == {"kind": "truncated_tail", "text": gap_text(plain), "path": "/e/0.log", "position": 3,
                               "log_end": None, "partition_dir": "/e"}
    fact = gf.CoordinatorMayBeLater((0,), T, 60_000, T, known_id=True)
    recent = Gap(GapKind.TOO_RECENT, fact, "/e/t-0", partition_dir="/e/t-0")
    assert recent.settling is fact
    assert gap_text(recent, T) == settling_text(fact, T) == gap_json(recent, T)["text"]
    assert type(gap_json(recent, T)["kind"]) is str and gap_json(recent, T)["kind"] == "too_recent"  # the value, not the member


def test_an_unproven_reason_says_what_it_rests_on_then_its_parts_then_its_tails():
    head = r.Patterned(r.NoCoordinatorRecord(7), (r.LeaderChange(3, 10),))
    fact = gf.MarkerMayBeLater(TP, None, 60_000, "app", "Empty", T)
    end = Gap(GapKind.BELOW_HIGH_WATERMARK, gf.BelowHighWatermark(5), "/e/orders-0", log_end=3)
    parts = (gf.LogDamage("orders-0", (end,)), Gap(GapKind.TOO_RECENT, fact, "/e/orders-0"))
    text = reason_text(r.Unproven(head, parts, torn_or_lost=True, too_recent=True))
    assert text == (f"not proven: {reason_text(head)}; but the log of orders-0 ends at offset 3, below its high "
                    f"watermark 5; {settling_text(fact)}; "
                    f"{TORN_OR_LOST}; {TOO_RECENT_ADVICE}")
    assert reason_text(head) == ("no coordinator record for producer id 7 in any __transaction_state partition; leader "
                                 "epoch 3 began at offset 10, after this transaction started: if its marker was lost "
                                 "there (truncation, unclean election: KAFKA-7408) another replica may hold it")
