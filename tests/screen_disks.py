"""The disks every screen test reads: the example disk, the committed real Kafka 4.1 disk and the two
real disks of ../shared (the tests skip those, saying so, where ../shared is absent). The shared kraft-tv2
disk is byte for byte the committed one (tests/analysis/test_real_broker_state.py checks it) under another
path: slow tier only."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "fixtures" / "example-disk"
SHARED = REPO.parent / "shared" / "real-kafka" / "4.1.0"
DISKS = [pytest.param(EXAMPLE, id="example"),
         pytest.param(REPO / "fixtures" / "real" / "kraft-tv2" / "disk", id="fixtures-real-tv2"),
         pytest.param(SHARED / "kraft-tv2" / "data", id="shared-tv2", marks=pytest.mark.slow),
         pytest.param(SHARED / "kraft-rv3.9-tv0" / "data", id="shared-rv3.9-tv0")]
