"""The words of why an abort is not armed (render/armed_text.py): each reason of report.hanging.NotArmed, and
what each verdict kind says of itself."""

from __future__ import annotations

import pytest

from forensics.analysis.verdict_kinds import Arming, VerdictKind
from forensics.render.armed_text import KIND_UNARMED, not_armed_text
from forensics.report.hanging import NotArmed


def test_every_kind_not_armed_by_default_says_why() -> None:
    """A kind whose commands are commented (or never offered) says why in the row and the script; a proven kind is
    kept from arming only by the reasons of NotArmed."""
    assert set(KIND_UNARMED) == {k for k in VerdictKind if k.arming is not Arming.PROVEN}
    assert not_armed_text(NotArmed.KIND, VerdictKind.HANGING) is None
    assert not_armed_text(None, VerdictKind.UNVERIFIABLE) is None  # armed
    assert not_armed_text(NotArmed.KIND, VerdictKind.UNVERIFIABLE) == (
        "unverifiable: the evidence cannot prove it hangs (see the reason); --arm-unverifiable arms it")
    assert not_armed_text(NotArmed.KIND, VerdictKind.STUCK) == "the coordinator still holds it: see the advice"
    assert not_armed_text(NotArmed.KIND, VerdictKind.FENCED) == "the partition fences the coordinator: see the advice"
    assert not_armed_text(NotArmed.KIND, VerdictKind.ONGOING) == (
        "within its own timeout: the coordinator will still finish it; not proven hanging")
    assert not_armed_text(NotArmed.KIND, VerdictKind.OVERDUE) == (
        "past its own timeout, yet the coordinator still holds it Ongoing: not proven hanging (see the advice)")


@pytest.mark.parametrize("why, words", [
    (NotArmed.COMMIT_PENDING, "the coordinator decided to COMMIT and still holds this partition in PrepareCommit: "
                              "never abort it (see the advice)"),
    (NotArmed.ILLEGAL_TOPIC, "the partition dir's topic name is not one Kafka allows (1-249 of a-z A-Z 0-9 . _ -): a "
                             "forged or damaged directory name"),
    (NotArmed.TOO_RECENT, "too recent to judge from this copy (see the reason): judge it on the live cluster or on a "
                          "copy of stopped brokers; --arm-unverifiable does not arm it"),
    (NotArmed.DAMAGED, "the records it rests on are damaged or incomplete (see the reason): take a fresh copy; "
                       "--arm-unverifiable does not arm it"),
    (NotArmed.YOUNGER_THAN_GATE, "younger than the --max-transaction-timeout age gate"),
], ids=lambda x: x.value if isinstance(x, NotArmed) else "")
def test_each_reason_in_words(why: NotArmed, words: str) -> None:
    for kind in VerdictKind:  # said the same whatever the kind
        assert not_armed_text(why, kind) == words
