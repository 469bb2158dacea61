"""The optional C accelerator (``forensics._speedups``, built from ``csrc/``), or ``None``.

It is built at install time where a C compiler exists. The pure-Python code paths stay the
reference and give the same results: the accelerator only takes the healthy common case (framing
v2 batches, decoding records) and hands anything unusual back to them. Setting
``KAFKA_FORENSICS_PURE=1`` turns it off: the tests compare the two paths on the same bytes, and CI
runs the fast tier once more with it set (.ci/run).

``native`` is typed as :class:`Accelerator`, the functions ``forensics/_speedups.pyi`` declares, so
that a type checker checks every call into C (a module cannot be spelled as ``Optional[...]``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from forensics import _speedups

    class Accelerator:
        """forensics._speedups as the type checker sees it: each function its stub's."""

        attribute_bits = staticmethod(_speedups.attribute_bits)
        batch_line = staticmethod(_speedups.batch_line)
        codecs = staticmethod(_speedups.codecs)
        crc32 = staticmethod(_speedups.crc32)
        crc32c = staticmethod(_speedups.crc32c)
        deep_tuples = staticmethod(_speedups.deep_tuples)
        dump_batches = staticmethod(_speedups.dump_batches)
        fold = staticmethod(_speedups.fold)
        hardware_crc = staticmethod(_speedups.hardware_crc)
        init_fallback = staticmethod(_speedups.init_fallback)
        init_frames = staticmethod(_speedups.init_frames)
        init_legacy = staticmethod(_speedups.init_legacy)
        init_records = staticmethod(_speedups.init_records)
        legacy_entry = staticmethod(_speedups.legacy_entry)
        legacy_inner = staticmethod(_speedups.legacy_inner)
        legacy_lines = staticmethod(_speedups.legacy_lines)
        legacy_records = staticmethod(_speedups.legacy_records)
        record_block = staticmethod(_speedups.record_block)
        record_lines = staticmethod(_speedups.record_lines)
        record_tuples = staticmethod(_speedups.record_tuples)
        records = staticmethod(_speedups.records)
        register_codecs = staticmethod(_speedups.register_codecs)
        scan = staticmethod(_speedups.scan)
        scan_tuples = staticmethod(_speedups.scan_tuples)
        unframe = staticmethod(_speedups.unframe)
        xxh32 = staticmethod(_speedups.xxh32)


def _turned_off() -> bool:
    return bool(os.environ.get("KAFKA_FORENSICS_PURE"))


def _load() -> Accelerator | None:
    if _turned_off():
        return None
    try:
        from forensics import _speedups as module
    except ImportError:  # pragma: no cover - no compiler at install time
        return None
    return cast("Accelerator", module)


native: Accelerator | None = _load()


# How much slower the pure-Python paths are, as --version says it: CPU time with KAFKA_FORENSICS_PURE=1
# against the accelerator, local engine, one process, 2026-12-02 (shared 2-core machine, 2 rounds):
# scan 1.7x and find-hanging 1.4x on a 269 MB bench/synth_disk.py disk (docs/performance.md: find-hanging
# on the 2 GiB bench disk 4.6 s -> 2.9 s, 1.6x), dump --deep-iteration --print-data-log 14x on a 33.6 MB
# segment of the real Java producer's batches (bench/real_segments.py --kinds java-txn --mib 32).
PURE_SLOWER = "~1.5x slower to scan or judge a disk, ~14x to dump records"


def _crc(accelerator: Accelerator) -> str:
    return "CPU CRC-32C" if accelerator.hardware_crc() else "table CRC-32C"


def describe() -> str:
    """One line for ``--version``-style reports and the benchmarks."""
    if native is None:
        return "pure Python" + (" (KAFKA_FORENSICS_PURE is set)" if _turned_off() else "")
    return f"C accelerator ({_crc(native)})"


def state() -> str:
    """``--version``'s line: whether the accelerator is in use, and if not, why and what it costs."""
    if native is not None:
        return f"C accelerator: on ({_crc(native)})"
    why = "KAFKA_FORENSICS_PURE is set" if _turned_off() else "not built: no C compiler when installed"
    return f"C accelerator: off ({why}): pure Python, {PURE_SLOWER}"
