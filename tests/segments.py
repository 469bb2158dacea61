"""The segment corpus the C paths are compared on: every ``.log`` of ``fixtures/`` and, where present,
of ``../shared/real-kafka``; and the mark of tests that need the accelerator."""

from __future__ import annotations

from pathlib import Path
from typing import List

import pytest

from forensics.speedups import native
from tests.oracle import REPO, shared_dir

needs_native = pytest.mark.skipif(native is None, reason="the C accelerator is not built (or KAFKA_FORENSICS_PURE)")


def real_segments() -> List[Path]:
    """Every non-empty segment of the fixtures, then of ``../shared/real-kafka`` when it is there."""
    found = sorted((REPO / "fixtures").rglob("*.log"))
    shared = shared_dir() / "real-kafka"
    if shared.is_dir():
        found += sorted(shared.rglob("*.log"))
    return [p for p in found if p.stat().st_size > 0]
