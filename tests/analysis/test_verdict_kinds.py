"""The verdict kinds carry their rules (forensics/analysis/verdict_kinds.py): each kind has a scenario
fixture and a docs line, a tone the report draws, and the rules the rows, the script and the exit code
read from it (not from the kind's word)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from forensics.analysis.verdict_kinds import Arming, Offer, VerdictKind
from forensics.render.html_style import TONES
from forensics.render.state_render import verdict_label
from forensics.report import incident_model

ROOT = Path(__file__).resolve().parents[2]


def _scenario_kinds():
    found = {}
    for p in sorted((ROOT / "fixtures" / "hanging-scenarios").glob("*/expected.json")):
        for v in json.loads(p.read_text())["verdicts"]:
            found.setdefault("overdue" if v.get("overdue") else v["verdict"], p.parent.name)
    return found


@pytest.mark.parametrize("kind", list(VerdictKind), ids=lambda k: k.value)
def test_every_kind_has_a_scenario_and_docs_lines(kind):
    assert kind.value in _scenario_kinds(), f"no fixtures/hanging-scenarios/*/expected.json shows {kind.value}"
    for doc in ("docs/cli.md", "docs/stuck-lso.md"):
        text = (ROOT / doc).read_text()
        assert re.search(rf"^\| `{re.escape(kind.value)}`", text, re.M), f"{doc}: no verdict table line"


@pytest.mark.parametrize("kind", list(VerdictKind), ids=lambda k: k.value)
def test_every_kind_has_a_tone_the_report_draws(kind):
    assert kind.tone in TONES
    assert kind.tone in {getattr(incident_model, n) for n in dir(incident_model) if n.isupper()}


def test_the_value_is_the_json_state_and_the_word_its_verdict():
    assert json.dumps(list(VerdictKind)) == json.dumps([k.value for k in VerdictKind])
    assert [f"{k}" for k in VerdictKind] == [str(k) for k in VerdictKind] == [k.value for k in VerdictKind]
    assert VerdictKind("stuck-coordinator") is VerdictKind.STUCK
    words = {k.value for k in VerdictKind if k.word == k.value}
    assert all(k.word in words for k in VerdictKind)  # a state (overdue) is one of a verdict (ongoing)
    assert (VerdictKind.OVERDUE.word, VerdictKind.OVERDUE.label) == ("ongoing", "ongoing, overdue")


@pytest.mark.parametrize("kind", list(VerdictKind), ids=lambda k: k.value)
def test_the_screens_label_a_row_as_its_kind(kind):
    assert verdict_label({"verdict": kind.word, "verdictState": kind.value}) == kind.label


def test_overdue_needs_a_person_and_is_never_armed():
    k = VerdictKind.OVERDUE
    assert k.needs_person and k.arming is Arming.NEVER and k.offer is Offer.NEVER


def test_only_a_proven_kind_is_armed_by_default_and_it_needs_no_person():
    proven = [k for k in VerdictKind if k.arming is Arming.PROVEN]
    assert proven == [VerdictKind.HANGING]
    assert not VerdictKind.HANGING.needs_person and VerdictKind.HANGING.offer is Offer.ALWAYS
    for k in VerdictKind:
        if k.arming is Arming.ON_REQUEST:
            assert k.needs_person, k


def test_a_kind_that_offers_no_abort_is_never_armed():
    for k in VerdictKind:
        if k.offer is Offer.NEVER:
            assert k.arming is Arming.NEVER, k


def test_no_module_but_the_kinds_names_a_kind_by_its_word():
    words = "|".join(re.escape(k.value) for k in VerdictKind)
    pattern = re.compile(rf"""(==|!=|\bin)\s*\(?["']({words})["']|["']({words})["']\s*(==|!=)""")
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in sorted((ROOT / "forensics").rglob("*.py")) if p.name != "verdict_kinds.py"
             for m in pattern.finditer(p.read_text())]
    assert found == []
