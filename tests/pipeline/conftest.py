"""The disks the pipeline tests read: the example disk, the two real ones, every scenario (built once
per module)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures import hanging_scenarios, scenarios

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"


@pytest.fixture(scope="module")
def disks(tmp_path_factory) -> dict[str, Path]:
    out = {"example": REPO / "fixtures" / "example-disk", "real-tv2": REAL / "kraft-tv2" / "disk",
           "real-tv0": REAL / "kraft-rv3.9-tv0" / "disk"}
    base = tmp_path_factory.mktemp("disks")
    for name in scenarios.SCENARIOS:
        out[name] = scenarios.build(name, base / "s" / name)
    for name in hanging_scenarios.SCENARIOS:
        out["h-" + name] = hanging_scenarios.build(name, base / "h" / name)
    return out
