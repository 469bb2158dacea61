"""A byte-based progress bar on stderr (shown only when stderr is a terminal), its sizes in the units
of every other screen (:mod:`forensics.render.size_text`: binary, ``1.2/2.0 GiB``), not rich's
decimal ``DownloadColumn``."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from collections.abc import Callable, Iterator


@contextmanager
def byte_progress(total: int, label: str, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    if not enabled or not sys.stderr.isatty() or total <= 0:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
    from rich.text import Text

    from forensics.render.size_text import size

    class Done(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(f"{size(task.completed)} of {size(task.total)}", style="progress.download")

    class Speed(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text("?" if speed is None else f"{size(speed)}/s", style="progress.data.speed")

    with Progress(TextColumn("{task.description}"), BarColumn(), Done(), Speed(), TimeRemainingColumn(),
                  console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)
