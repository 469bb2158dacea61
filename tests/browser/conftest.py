"""The ``browser`` fixture of the browser tests: the path of Debian's Chromium, or a skip saying
it is missing (the tests never install it; ``.ci/run`` does)."""

from __future__ import annotations

import pytest

from tests.browser import chromium


@pytest.fixture(scope="module")
def browser() -> str:
    binary = chromium.find_chromium()
    if binary is None:
        pytest.skip(chromium.MISSING)
    return binary
