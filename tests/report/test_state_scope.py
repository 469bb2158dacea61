"""A scope whose ``select`` is None reads every data partition (pipeline/plan.py: ``Scope.select``,
"data partitions to rebuild", None for all): the state's assembly takes it so too, and rebuilds the
same partitions as a scope that selects every one (it called the None)."""

from __future__ import annotations

from pathlib import Path

from forensics.layout.discovery import discover
from forensics.pipeline.local import LocalExecutor
from forensics.pipeline.plan import Scope, plan
from forensics.report.state import assemble_state, state_scope

DISK = Path(__file__).resolve().parents[2] / "fixtures" / "example-disk"


def _partitions(scope: Scope):
    inv = discover([str(DISK)])
    report = assemble_state(inv, LocalExecutor().run(plan(inv, scope)), scope)
    return [(v.inputs.path, sorted(v.entries)) for v in report.partitions]


def test_a_scope_without_select_rebuilds_every_data_partition() -> None:
    every = Scope(data=True, coordinator=True, metadata_tail=True)
    assert every.select is None
    rebuilt = _partitions(every)
    assert rebuilt and rebuilt == _partitions(state_scope())
