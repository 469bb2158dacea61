"""The analysis time ("as of"): never the analysing machine's clock.

It is the newest of the timestamps the inputs carry (batch timestamps of every partition,
``__cluster_metadata`` and ``__transaction_state`` included, and the modification times of the
checkpoint and clean-shutdown files), or the time the user gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Tuple


@dataclass(frozen=True, slots=True)
class AsOf:
    time_ms: Optional[int]
    source: str  # "--as-of", "newest batch timestamp, in <path>", "modification time of <file>"


def input_time(segment_times: Iterable[Tuple[Optional[int], str]], file_times: Iterable[Tuple[int, str]]) -> AsOf:
    """The newest of the segments' newest batch timestamps ``(max_timestamp, path)`` and the broker
    files' modification times ``(mtime_ms, path)``, with where it came from."""
    candidates = [(t, f"newest batch timestamp, in {path}") for t, path in segment_times if t is not None]
    candidates += [(t, f"modification time of {path}") for t, path in file_times]
    return newest(candidates)


def newest(candidates: Iterable[Tuple[int, str]]) -> AsOf:
    best: Optional[Tuple[int, str]] = None
    for t, source in candidates:
        if best is None or t > best[0]:
            best = (t, source)
    return AsOf(best[0], best[1]) if best is not None else AsOf(None, "no timestamp on the inputs")
