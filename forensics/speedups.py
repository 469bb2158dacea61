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


# How much slower the pure-Python paths are, as --version says it: CPU time with KAFKA_FORENSICS_PURE=1
# against the accelerator, local engine, one process, 2026-12-02 (shared 2-core machine, 2 rounds):
# scan 1.7x and find-hanging 1.4x on a 269 MB bench/synth_disk.py disk (docs/performance.md: find-hanging
# on the 2 GiB bench disk 4.6 s -> 2.9 s, 1.6x), dump --deep-iteration --print-data-log 14x on a 33.6 MB
# segment of the real Java producer's batches (bench/real_segments.py --kinds java-txn --mib 32).
PURE_SLOWER = "~1.5x slower to scan or judge a disk, ~14x to dump records"


def _crc() -> str:
    return "CPU CRC-32C" if native.hardware_crc() else "table CRC-32C"  # type: ignore[union-attr]


def describe() -> str:
    """One line for ``--version``-style reports and the benchmarks."""
    if native is None:
        return "pure Python" + (" (KAFKA_FORENSICS_PURE is set)" if os.environ.get("KAFKA_FORENSICS_PURE") else "")
    return f"C accelerator ({_crc()})"


def state() -> str:
    """``--version``'s line: whether the accelerator is in use, and if not, why and what it costs."""
    if native is not None:
        return f"C accelerator: on ({_crc()})"
    why = "KAFKA_FORENSICS_PURE is set" if os.environ.get("KAFKA_FORENSICS_PURE") else \
        "not built: no C compiler when installed"
    return f"C accelerator: off ({why}): pure Python, {PURE_SLOWER}"
