"""dump: ``kafka-dump-log.sh``-compatible dumps of the files named, one after the other, read-only.

A dump streams: each file's rows (:func:`forensics.report.dump.dump_file`) go to ``show`` (the command
line's renderer, which returns how many findings it wrote) as they are read, so that a large segment
never waits for its end. A file that cannot be read is told (one line) and the others are dumped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from forensics.dataclass_fast import dataclass
from typing import TYPE_CHECKING

from forensics.errors import InputError
from forensics.report.dump import DumpOptions, dump_file
from forensics.report.dump_rows import DumpRow
from forensics.runs.listener import Listener, Quiet

if TYPE_CHECKING:
    from forensics.runs.manifest import ManifestWritten

Show = Callable[[Iterator[DumpRow]], int]  # renders one file's rows; the number of findings among them


@dataclass(frozen=True)
class DumpRequest:
    paths: tuple[str, ...]
    options: DumpOptions = DumpOptions()
    manifest: str | None = None  # the files named are recorded and hashed (a directory is not walked)
    command_line: tuple[str, ...] = ()


@dataclass(frozen=True)
class DumpResult:
    findings: int
    failed: int  # the exit code of the first file that could not be dumped (0: none)
    manifest: ManifestWritten | None


def dump(req: DumpRequest, show: Show, listener: Listener = Quiet()) -> DumpResult:
    """Dump every file of ``req.paths`` through ``show``, in order (the manifest's code is loaded only
    when one is asked for: a dump of one segment starts at once)."""
    run = None
    if req.manifest is not None:
        from forensics.runs.manifest import ManifestRun

        run = ManifestRun(req.manifest, "dump", req.paths, None, req.command_line)
        run.record_given(req.paths)
    findings = failed = 0
    for path in req.paths:
        try:
            findings += show(dump_file(path, req.options))
        except InputError as exc:  # this file cannot be read: one line, then the other files
            listener.note(str(exc))
            failed = failed or exc.exit_code
    return DumpResult(findings, failed, run.finish() if run is not None else None)
