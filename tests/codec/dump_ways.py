"""The dump of a file every way its text can be written, for the differential tests of the run
writer (tests/codec/test_dump_runs*.py): from runs of batches (``DumpOptions.batch_runs``, the
command line's text dump: ``native.dump_batches`` writes the runs in C) and from a BatchRow and its
records per batch, each with the accelerator and in pure Python. All four must give the same
stdout, stderr and findings.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from forensics.render.dump_text import render_dump_text
from forensics.render.terminal_text import TerminalLines
from forensics.report.dump import DumpOptions, dump_file
from tests.fuzz.strategies import pure_python

# the option sets of a deep dump: with and without contents and record metadata
OPTIONS = (dict(deep_iteration=True), dict(print_data_log=True), dict(print_data_log=True, skip_record_metadata=True),
           dict(deep_iteration=True, skip_record_metadata=True))
Dumped = tuple[str, str, int]  # stdout, stderr, findings


def dump_one(path: Path, runs: bool, decoder: str | None = None, terminal: bool = False, **options) -> Dumped:
    """One dump of ``path`` (``terminal``: stdout through the terminal sink, as to a tty)."""
    out, err = io.StringIO(), io.StringIO()
    opts = DumpOptions(batch_runs=runs, decoder=decoder, **options)
    sink = TerminalLines(out) if terminal else out
    findings = render_dump_text(dump_file(str(path), opts), sink, err, opts.skip_record_metadata)
    return out.getvalue(), err.getvalue(), findings


def dump_ways(path: Path, decoder: str | None = None, option_sets: Sequence[dict] = OPTIONS,
              **extra) -> list[Dumped]:
    """The dump with runs and without, accelerated and pure, each option set: all four the same
    (asserted); returns the accelerated run writer's, one per option set."""
    def each(runs: bool) -> list[Dumped]:
        return [dump_one(path, runs, decoder, **options, **extra) for options in option_sets]

    fast_runs, fast_rows = each(True), each(False)
    with pure_python():
        pure_runs, pure_rows = each(True), each(False)
    for name, got in (("rows", fast_rows), ("pure runs", pure_runs), ("pure rows", pure_rows)):
        for options, a, b in zip(option_sets, fast_runs, got):
            assert a == b, f"{path} {options} {extra}: C runs and {name} differ"
    return fast_runs


def decoder_of(path: Path) -> str | None:
    """The decoder of a coordinator partition's segment (by its directory's name), else None."""
    topic = path.parent.name.rsplit("-", 1)[0]
    return {"__transaction_state": "transaction-log", "__consumer_offsets": "offsets"}.get(topic)
