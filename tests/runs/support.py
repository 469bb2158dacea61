"""What the tests of the application layer (``forensics/runs/``) share: the bundled disks, copies of
them with a partition dir left out, and a listener that keeps what a run tells."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from forensics.runs.context import Evidence

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
REAL_TV2 = REPO / "fixtures" / "real" / "kraft-tv2" / "disk"
# the example disk's incident clock: its newest batch timestamp (a __cluster_metadata batch)
EXAMPLE_AS_OF = 1767225613300
# reporting-app's open transaction on orders-0: its producer entry's lastTimestamp
REPORTING_LAST_TIMESTAMP = 1767225606251


def evidence(*paths: Path, **kw) -> Evidence:
    return Evidence(tuple(str(p) for p in paths), **kw)


def copy_without(src: Path, dst: Path, *left_out: str) -> Path:
    """A copy of the disk ``src`` at ``dst`` with the entries ``left_out`` (relative paths) not copied:
    a partial copy, as an operator who missed a directory leaves it. The bundled disk is never written."""
    shutil.copytree(src, dst)
    for rel in left_out:
        shutil.rmtree(dst / rel)
    return dst


class Told:
    """A :class:`~forensics.runs.listener.Listener` that keeps what it is told."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.engines: list[object] = []
        self.bars: list[tuple[int, str, int]] = []  # (total, label, bytes told)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def warn(self, text: str) -> None:
        self.warnings.append(text)

    def engine(self, chosen) -> None:
        self.engines.append(chosen)

    @contextmanager
    def progress(self, total: int, label: str) -> Iterator:
        read = [0]

        def advance(n: int) -> None:
            read[0] += n

        yield advance
        self.bars.append((total, label, read[0]))
