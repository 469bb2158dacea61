"""The tests issue 22 asks for ("Tests that must exist"), on real-broker evidence: they fail on today's code
by design, and the evidence model, live-copy detection, completeness checks and DeleteRecords semantics
make them pass.

Until those land, this directory is skipped unless ``KF_EVIDENCE_TESTS=1``, so that the fast tier and the
full suite stay green: ``KF_EVIDENCE_TESTS=1 .venv/bin/python -m pytest -q tests/evidence`` runs them
(the fast ones on ``fixtures/live/``; the ``broker`` ones start a real Kafka 4.1.0 broker and are slow).
Remove this switch (this ``pytest_collection_modifyitems``) when the fixes land.
"""

import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SWITCH = "KF_EVIDENCE_TESTS"


def pytest_collection_modifyitems(config, items):
    if os.environ.get(SWITCH) == "1":
        return
    skip = pytest.mark.skip(reason=f"issue 22's evidence tests fail until its fixes land; {SWITCH}=1 runs them")
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(skip)
