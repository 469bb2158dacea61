"""Run a process for which file permissions bind, even when the tests run as root.

Root ignores file modes through two capabilities, CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH. A
command run through ``setpriv --bounding-set=-dac_override,-dac_read_search`` keeps uid 0 (so it
still reads the root-owned virtualenv) but obeys the modes: a 0444 file cannot be written, a 000
file cannot be read, a 0555 directory gets no new entries.
"""

from __future__ import annotations

import os
import shutil

import pytest

DROP = "--bounding-set=-dac_override,-dac_read_search"


def without_permission_override() -> list[str]:
    """The command prefix (empty when not root); skips the test when root cannot drop the capabilities."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv (util-linux): file permissions would not bind")
    return [setpriv, DROP, "--"]
