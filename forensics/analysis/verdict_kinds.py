"""The kinds of verdict on an open transaction, each with the rules it carries.

A :class:`VerdictKind` member says, for every transaction judged that kind: whether its abort may be
armed (:class:`Arming`), whether the abort commands are offered at all (:class:`Offer`), whether it
needs a person (``find-hanging`` exit 7, :mod:`forensics.exit_codes`), its tone and label in the
table and the report and its advice (:mod:`forensics.analysis.advice`); what it says of its abort not
being armed is written in :mod:`forensics.render.armed_text`.
Nothing else compares kinds: the rows, the script, the report and the exit code ask the member. Its
value (a ``str``: ``VerdictKind.HANGING == "hanging"``) is the row's ``verdictState``; its ``word``,
the row's ``verdict``, is the same but for a state of another kind (``overdue``: verdict ``ongoing``).

Adding a kind:

1. one member here (its value, arming, offer, whether it needs a person, tone, an advice function in
   :mod:`forensics.analysis.advice` returning its facts, their words in :mod:`forensics.render.advice_text`;
   ``state_of`` for a state of another kind), why it is not armed in :mod:`forensics.render.armed_text`,
   and the place in :mod:`forensics.analysis.hanging` that decides it;
2. its scenario fixture: a story in ``fixtures/hanging_scenarios.py`` with its
   ``fixtures/hanging-scenarios/<name>/expected.json`` (tests/analysis/test_hanging_scenarios.py);
3. its line in the verdict tables of docs/cli.md (``find-hanging``) and docs/stuck-lso.md.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from forensics.analysis import advice as _advice


class Arming(Enum):
    """Whether a verdict's abort line may be written uncommented (armed)."""

    PROVEN = "armed"  # proven: armed (on a topic name Kafka allows)
    ON_REQUEST = "commented; --arm-unverifiable arms it"  # only lacking coordinator data, past the age gate
    NEVER = "never armed"


class Offer(Enum):
    """Whether the abort commands are written at all (armed or commented), beside the PrepareCommit
    rule that vetoes any (:func:`forensics.report.hanging.abort_candidate`)."""

    ALWAYS = "always"
    AFTER_ABORT = "when the coordinator decided ABORT"  # its marker never arrived: the abort writes it
    NEVER = "never"


class VerdictKind(str, Enum):
    """A kind of verdict and its rules (see the module doc for how to add one)."""

    arming: Arming
    offer: Offer
    needs_person: bool  # find-hanging exits 7 for it when nothing is proven hanging
    tone: str  # the report's tone (forensics.report.incident_model: its colour in render/html_style)
    word: str  # the verdict written in JSON, CSV and --format text: its value, or the kind it is a state of
    label: str  # what the table and the report show: the word, and the state where it is one ("ongoing, overdue")
    advice: Callable[..., tuple[_advice.Advice, ...]]  # operator guidance (facts), given the Verdict; () when none

    def __new__(cls, value: str, arming: Arming, offer: Offer, needs_person: bool, tone: str,
                advice: Callable[..., tuple[_advice.Advice, ...]], state_of: str | None = None) -> VerdictKind:
        member = str.__new__(cls, value)
        member._value_ = value
        member.arming, member.offer, member.needs_person, member.tone = arming, offer, needs_person, tone
        member.word = state_of or value
        member.label = value if state_of is None else f"{state_of}, {value}"
        member.advice = advice
        return member

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    # the coordinator's own records prove no marker will come; the only kind armed by default
    HANGING = ("hanging", Arming.PROVEN, Offer.ALWAYS, False, "hanging", _advice.none)
    # the evidence cannot decide (no coordinator data, or damaged or incomplete records)
    UNVERIFIABLE = ("unverifiable", Arming.ON_REQUEST, Offer.ALWAYS, True, "unverified", _advice.unverifiable)
    # PrepareCommit/PrepareAbort with the partition in its set: markers that never arrived
    STUCK = ("stuck-coordinator", Arming.NEVER, Offer.AFTER_ABORT, True, "prepare", _advice.stuck)
    # the partition holds a coordinator epoch above the coordinator's own: it refuses its markers
    FENCED = ("fenced-coordinator", Arming.NEVER, Offer.AFTER_ABORT, True, "prepare", _advice.fenced)
    # Ongoing with the partition in its set: the coordinator will commit, abort or time it out
    ONGOING = ("ongoing", Arming.NEVER, Offer.NEVER, False, "open", _advice.none)
    # ongoing, more than a minute past its own timeout: the coordinator should have aborted it, yet its
    # own records still hold it Ongoing, so no marker is proven missing (JSON: verdict "ongoing",
    # verdictState "overdue")
    OVERDUE = ("overdue", Arming.NEVER, Offer.NEVER, True, "open", _advice.overdue, "ongoing")
