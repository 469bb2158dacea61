"""The optional C accelerator (``forensics._speedups``, built from ``csrc/``), or ``None``.

It is built at install time where a C compiler exists. The pure-Python code paths stay the
reference and give the same results: the accelerator only takes the healthy common case (framing
v2 batches, decoding records) and hands anything unusual back to them. Setting
``KAFKA_FORENSICS_PURE=1`` turns it off (the test suite runs both ways).
"""

from __future__ import annotations

import os
from typing import Optional

native: Optional[object] = None
if not os.environ.get("KAFKA_FORENSICS_PURE"):
    try:
        from forensics import _speedups as native  # type: ignore[no-redef]
    except ImportError:  # pragma: no cover - no compiler at install time
        native = None


def describe() -> str:
    """One line for ``--version``-style reports and the benchmarks."""
    if native is None:
        return "pure Python" + (" (KAFKA_FORENSICS_PURE is set)" if os.environ.get("KAFKA_FORENSICS_PURE") else "")
    crc = "CPU CRC-32C" if native.hardware_crc() else "table CRC-32C"
    return f"C accelerator ({crc})"
