"""The words of why a row's abort is not armed (:class:`forensics.report.hanging.NotArmed`): the row's
``notArmedBecause``, the abort script's comment above a commented command, the report's card."""

from __future__ import annotations

from forensics.analysis.verdict_kinds import VerdictKind
from forensics.report.hanging import NotArmed

# what each kind says of its abort not being armed, where one is offered or the state needs saying (a kind
# armed when proven says nothing: only the reasons below keep it from being armed)
KIND_UNARMED = {
    VerdictKind.UNVERIFIABLE: "unverifiable: the evidence cannot prove it hangs (see the reason); --arm-unverifiable "
                              "arms it",
    VerdictKind.STUCK: "the coordinator still holds it: see the advice",
    VerdictKind.FENCED: "the partition fences the coordinator: see the advice",
    VerdictKind.ONGOING: "within its own timeout: the coordinator will still finish it; not proven hanging",
    VerdictKind.OVERDUE: "past its own timeout, yet the coordinator still holds it Ongoing: not proven hanging (see "
                         "the advice)",
}

_NOT_ARMED = {
    NotArmed.COMMIT_PENDING: "the coordinator decided to COMMIT and still holds this partition in PrepareCommit: never "
                             "abort it (see the advice)",
    NotArmed.ILLEGAL_TOPIC: "the partition dir's topic name is not one Kafka allows (1-249 of a-z A-Z 0-9 . _ -): a "
                            "forged or damaged directory name",
    NotArmed.TOO_RECENT: "too recent to judge from this copy (see the reason): judge it on the live cluster or on a "
                         "copy of stopped brokers; --arm-unverifiable does not arm it",
    NotArmed.DAMAGED: "the records it rests on are damaged or incomplete (see the reason): take a fresh copy; "
                      "--arm-unverifiable does not arm it",
    NotArmed.YOUNGER_THAN_GATE: "younger than the --max-transaction-timeout age gate",
}


def not_armed_text(why: NotArmed | None, kind: VerdictKind) -> str | None:
    """``notArmedBecause``: why the abort of a row of verdict ``kind`` is not armed (None: it is, or its kind says
    nothing)."""
    if why is None:
        return None
    if why is NotArmed.KIND:
        return KIND_UNARMED.get(kind)
    return _NOT_ARMED[why]
