"""The property tests' example counts follow the tier (tests/tiers.py): the full draw in the full suite, a
quarter of it in the fast tier (``-m "not slow"``)."""

from tests import tiers


def test_the_fast_tier_is_told_by_its_marker_expression():
    assert tiers.fast_tier("not slow") and tiers.fast_tier("  not   slow ")
    assert not tiers.fast_tier("") and not tiers.fast_tier("slow") and not tiers.fast_tier("not slow and spark")


def test_this_session_knows_its_tier(request):
    assert tiers.FAST == tiers.fast_tier(request.config.getoption("markexpr", "") or "")


def test_the_fast_tier_draws_a_quarter_and_never_more_than_the_full_draw(monkeypatch):
    monkeypatch.setattr(tiers, "FAST", False)
    assert tiers.examples(300) == 300
    monkeypatch.setattr(tiers, "FAST", True)
    assert (tiers.examples(300), tiers.examples(100), tiers.examples(20)) == (75, 30, 20)
