"""What an executor did, with the same keys for both (``KAFKA_FORENSICS_STATS``, benchmarks): a leaf
module that both executors import (the engine imports the executors, never the other way round)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from forensics.pipeline.plan import WorkUnit


def engine_stats(engine: str, master: str | None, units: Sequence[WorkUnit], tasks: int, slots: int,
                 started: float, bytes_to_driver: int = 0, startup_seconds: float = 0.0) -> dict[str, object]:
    """What an executor did, with the same keys for both (``KAFKA_FORENSICS_STATS``, benchmarks).
    ``started``: ``time.perf_counter()`` when the job began."""
    return {"engine": engine, "master": master, "units": len(units), "tasks": tasks, "slots": slots,
            "bytesToDriver": bytes_to_driver, "startupSeconds": round(startup_seconds, 3),
            "runSeconds": round(time.perf_counter() - started, 3), "inputBytes": sum(u.size for u in units)}
