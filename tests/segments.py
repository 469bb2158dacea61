"""The segment corpus the C paths are compared on: every ``.log`` of ``fixtures/`` and, where present,
of ``../shared/real-kafka``; and the mark of tests that need the accelerator.

Many of them are copies: fixtures/real is a copy of ../shared/real-kafka's data, and the copies of one running
broker under fixtures/live share most of their segments. :func:`segment_params` gives each repeat the ``slow``
mark, so that the fast tier compares each distinct segment once and the full suite every path.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import pytest

from forensics.speedups import native
from tests.oracle import REPO, shared_dir

needs_native = pytest.mark.skipif(native is None, reason="the C accelerator is not built (or KAFKA_FORENSICS_PURE)")


def real_segments() -> list[Path]:
    """Every non-empty segment of the fixtures, then of ``../shared/real-kafka`` when it is there."""
    found = sorted((REPO / "fixtures").rglob("*.log"))
    shared = shared_dir() / "real-kafka"
    if shared.is_dir():
        found += sorted(shared.rglob("*.log"))
    return [p for p in found if p.stat().st_size > 0]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _same_as(path: Path) -> tuple:
    """What a comparison of one segment can depend on: its bytes, its file name (the base offset), its topic
    (the dump's decoder) and the producer snapshots beside it (the fold starts from them)."""
    snapshots = tuple((s.name, _digest(s)) for s in sorted(path.parent.glob("*.snapshot")))
    return path.parent.name.rsplit("-", 1)[0], path.name, _digest(path), snapshots


def segment_id(path: Path) -> str:
    return str(path.relative_to(path.parents[2]))


def segment_params(paths: Sequence[Path]) -> list:
    """``paths`` as parameters; each one :func:`_same_as` an earlier one is a repeat: slow tier only."""
    seen = set()
    params = []
    for path in paths:
        key = _same_as(path)
        marks = [pytest.mark.slow] if key in seen else []
        seen.add(key)
        params.append(pytest.param(path, id=segment_id(path), marks=marks))
    return params
