"""How a reason names the gaps of one log (analysis/evidence_gaps.describe): each place once."""

from __future__ import annotations

from forensics.analysis.evidence_gaps import Gap, describe


def test_a_file_unreadable_twice_is_named_once() -> None:
    seg = "/d/orders-0/00000000000000000000.log"
    unreadable = Gap("unreadable_file", "cannot be read (00000000000000000000.log)", seg)
    end = Gap("below_high_watermark", "below its high watermark 5", "/d/orders-0", log_end=0)
    assert describe("orders-0", [unreadable, unreadable, end, end]) == (
        "the log of orders-0 cannot be read (00000000000000000000.log) and ends at offset 0, below its high "
        "watermark 5")
    other = Gap("crc_mismatch", "is damaged at byte 61 of 00000000000000000000.log (crc_mismatch)", seg, 61)
    assert describe("orders-0", [unreadable, other]) == (
        "the log of orders-0 cannot be read (00000000000000000000.log) and is damaged at byte 61 of "
        "00000000000000000000.log (crc_mismatch)")
