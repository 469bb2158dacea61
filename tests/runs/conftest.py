"""The disks the tests of the application layer share: the hanging scenarios, built once (small and
deterministic, ``fixtures/hanging_scenarios.py``)."""

from __future__ import annotations

import pytest

from fixtures import hanging_scenarios


@pytest.fixture(scope="session")
def scenarios(tmp_path_factory):
    """Every hanging scenario's disk, by name."""
    root = tmp_path_factory.mktemp("hanging-scenarios")
    return {name: hanging_scenarios.build(name, root / name) for name in hanging_scenarios.SCENARIOS}
