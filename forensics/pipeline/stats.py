"""What an executor did, with the same fields for both (``KAFKA_FORENSICS_STATS``, benchmarks): a leaf
module that both executors import (the engine imports the executors, never the other way round)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from forensics.dataclass_fast import dataclass

from forensics.pipeline.plan import WorkUnit


@dataclass(frozen=True)
class EngineStats:
    """One job of an executor: which engine ran it (and on which Spark master), its units, tasks and
    slots, the bytes its tasks sent to the driver (pickled), the session's start-up and the job's own
    time (seconds, to the millisecond), the log bytes it read."""

    engine: str
    master: str | None
    units: int
    tasks: int
    slots: int
    bytes_to_driver: int
    startup_seconds: float
    run_seconds: float
    input_bytes: int

    def as_json(self) -> dict[str, object]:
        """The JSON object written to ``KAFKA_FORENSICS_STATS`` (keys as the benchmarks read them)."""
        return {"engine": self.engine, "master": self.master, "units": self.units, "tasks": self.tasks,
                "slots": self.slots, "bytesToDriver": self.bytes_to_driver, "startupSeconds": self.startup_seconds,
                "runSeconds": self.run_seconds, "inputBytes": self.input_bytes}


def engine_stats(engine: str, master: str | None, units: Sequence[WorkUnit], tasks: int, slots: int,
                 started: float, bytes_to_driver: int = 0, startup_seconds: float = 0.0) -> EngineStats:
    """What an executor did, the same fields for both. ``started``: ``time.perf_counter()`` when the
    job began."""
    return EngineStats(engine=engine, master=master, units=len(units), tasks=tasks, slots=slots,
                       bytes_to_driver=bytes_to_driver, startup_seconds=round(startup_seconds, 3),
                       run_seconds=round(time.perf_counter() - started, 3),
                       input_bytes=sum(u.size for u in units))
