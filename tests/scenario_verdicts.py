"""The verdicts of the hanging scenarios (fixtures/hanging_scenarios.py), for the tests of what analysis
and render make of one."""

from __future__ import annotations

from fixtures import hanging_scenarios
from forensics.analysis.hanging import classify
from forensics.report.hanging import leader_views
from forensics.runs.rebuild import load_state


def first_verdicts(tmp_path_factory):
    """``first(name)``: the first verdict of a scenario, as of its expected time (each scenario built once)."""
    made = {}

    def first(name):
        if name not in made:
            rep = load_state([str(hanging_scenarios.build(name, tmp_path_factory.mktemp(name)))])
            made[name] = classify(leader_views(rep), rep.coordinator, hanging_scenarios.expected(name)["asOf"])[0]
        return made[name]

    return first
