"""The as-of lines of every command: the time and where it comes from, what the file times say about
it, and the record times set aside (see analysis/clock.py and docs/cli.md, "The as-of time")."""

from __future__ import annotations

import sys
from typing import TextIO

from forensics.analysis.clock import AsOf
from forensics.cli.console import write_note
from forensics.render.clock_text import as_of_text, file_times_note, set_aside_findings
from forensics.render.terminal_text import term


def clock_notes(when: AsOf, *, as_of_line: bool = True) -> list[str]:
    """The as-of line and what the file times say about it."""
    lines = [f"as of {as_of_text(when)}"] if as_of_line else []
    note = file_times_note(when)
    if note is not None:
        lines.append(note)
    return lines


def clock_lines(when: AsOf, *, as_of_line: bool = True, set_aside: bool = True) -> list[str]:
    """:func:`clock_notes`, then the record times set aside (findings)."""
    return clock_notes(when, as_of_line=as_of_line) + ([f.one_line() for f in set_aside_findings(when)] if set_aside else [])


def write_clock(when: AsOf, out: TextIO | None = None, *, as_of_line: bool = True, set_aside: bool = True) -> None:
    """Print :func:`clock_lines` (stderr by default; evidence text in them shown through
    :func:`~forensics.render.terminal_text.term`): the notes folded at the screen width, the
    findings one line each."""
    stream = out if out is not None else sys.stderr
    for line in clock_notes(when, as_of_line=as_of_line):
        write_note(term(line), stream)
    for f in set_aside_findings(when) if set_aside else ():
        stream.write(term(f.one_line()) + "\n")
