"""What a run tells while it runs, and the listener that tells nothing: the vocabulary every run
shares, kept apart from :mod:`forensics.runs.context` (which opens whole disks and chooses the
engine) so that a run reading single files (dump) loads neither."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Protocol

from forensics.model import Progress

if TYPE_CHECKING:
    from forensics.pipeline.engine import Chosen


class Listener(Protocol):
    """What a run tells while it runs (the command line prints it on stderr, as it happens)."""

    def note(self, text: str) -> None:
        """A line about the inputs (which cluster, which copy of a broker was used)."""

    def warn(self, text: str) -> None:
        """A warning about how the run runs (Spark cannot start here: local instead)."""

    def engine(self, chosen: Chosen) -> None:
        """Which engine runs and why, as its first job starts."""

    def progress(self, total: int, label: str) -> AbstractContextManager[Progress]:
        """A progress bar over ``total`` bytes; the context gives the function told each byte count read."""


class Quiet:
    """A listener that tells nothing (library use, tests)."""

    def note(self, text: str) -> None:
        pass

    def warn(self, text: str) -> None:
        pass

    def engine(self, chosen: Chosen) -> None:
        pass

    @contextmanager
    def progress(self, total: int, label: str) -> Iterator[Progress]:
        yield lambda n: None


__all__ = ["Listener", "Quiet"]
