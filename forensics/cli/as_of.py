"""The as-of lines of every command: the time and where it comes from, what the file times say about
it, and the record times set aside (see analysis/clock.py and docs/cli.md, "The as-of time")."""

from __future__ import annotations

import sys
from typing import List, Optional, TextIO

from forensics.analysis.clock import AsOf
from forensics.render.clock_text import as_of_text, file_times_note
from forensics.render.terminal_text import term


def clock_lines(when: AsOf, *, as_of_line: bool = True, set_aside: bool = True) -> List[str]:
    lines = [f"as of {as_of_text(when)}"] if as_of_line else []
    note = file_times_note(when)
    if note is not None:
        lines.append(note)
    if set_aside:
        lines += [f.one_line() for f in when.set_aside]
    return lines


def write_clock(when: AsOf, out: Optional[TextIO] = None, **kw) -> None:
    """Print :func:`clock_lines` (stderr by default; evidence text in them shown through
    :func:`~forensics.render.terminal_text.term`)."""
    stream = out if out is not None else sys.stderr
    for line in clock_lines(when, **kw):
        stream.write(term(line) + "\n")
