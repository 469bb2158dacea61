"""Which tier this pytest session runs, for the property tests' example counts.

The fast tier is ``-m "not slow"`` (pyproject.toml); ``tests/conftest.py`` sets :data:`FAST` at
configure time, before any test module is imported. A property test states its full count with
``settings(max_examples=examples(N))``: the full suite (what ``.ci/run`` and the README's test command
run) draws ``N`` examples, the fast tier a quarter of them (at least :data:`FAST_FLOOR`) — every property
still runs in the developer loop, with new random examples each run, and the long draw stays in CI.
"""

from __future__ import annotations

FAST = False
FAST_SHARE = 4
FAST_FLOOR = 30


def fast_tier(markexpr: str) -> bool:
    """True for the fast tier's marker expression, ``not slow`` (spacing aside)."""
    return " ".join(markexpr.split()) == "not slow"


def examples(full: int) -> int:
    """The ``max_examples`` of a property test whose full draw is ``full``, in this session's tier."""
    return max(full // FAST_SHARE, min(full, FAST_FLOOR)) if FAST else full
