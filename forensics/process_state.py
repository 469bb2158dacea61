"""What this process holds while it lives: the one place for mutable module-level state.

Every other module-level name in :mod:`forensics` is a constant, made at import and never changed
(a cache of something worked out once, with ``functools`` or as :func:`forensics.columns.columns`
keeps each row kind's columns, or a per-thread scratch object, counts as one: it changes no answer).
State that lives as long as the process and is shared by calls that do not hand it to each other is
a field of :data:`PROCESS` instead (docs/developer.md, "Process state"):

* ``interrupted``: set by the first Ctrl-C (the CLI's SIGINT handler, :mod:`forensics.cli.boundary`),
  cleared when :func:`forensics.cli.app.main` starts: whatever fails after it was interrupted.
* ``command_line``: the command line as :func:`forensics.cli.app.main` was given it (for the evidence
  manifest), empty outside it.
* ``spark``: this process's Spark session (Spark allows one SparkContext per process), made by
  :func:`forensics.pipeline.spark_session.process_session` when the first job needs one; None
  until then. Nothing here imports pyspark: this module is as light as :mod:`threading`.

Everything a single run needs beyond that travels in its request and its results.
"""

from __future__ import annotations

import threading
from typing import Protocol


class SparkHolder(Protocol):
    """What a process does with its Spark session when it ends (``forensics.pipeline.spark_session``)."""

    def close(self, interrupted: bool = False) -> None: ...


class ProcessState:
    __slots__ = ("interrupted", "command_line", "spark")

    def __init__(self) -> None:
        self.interrupted = threading.Event()
        self.command_line: tuple[str, ...] = ()
        self.spark: SparkHolder | None = None


PROCESS = ProcessState()
