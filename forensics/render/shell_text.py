"""The shell sink: text from the evidence (topic names, ids, paths, keys) written into an sh script.

* A comment can never be ended by the data inside it: every control character (newline, carriage
  return, escape sequences that could hide a line from a reviewer who ``cat``s the script, bidi
  overrides) is shown escaped, so one comment stays one line.
* A command word is always single-quoted when it is not a plain word (``shlex.quote``); values we
  did not compute that contain control characters are refused by the caller, never written raw.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from forensics.render.terminal_text import has_control, term


def visible(text: str) -> str:
    """``text`` with every control or invisible formatting character shown escaped (no newline
    stays): the terminal's rule, :func:`forensics.render.terminal_text.term`."""
    return term(text)


def has_hidden(text: str) -> bool:
    return has_control(text)


def comment(text: str, prefix: str = "# ") -> str:
    """``text`` as one comment line (newline-terminated), whatever it contains."""
    return f"{prefix}{visible(text)}".rstrip() + "\n"


def command(words: Iterable[str]) -> str:
    """One command line, every word quoted as sh needs; raises ValueError on a word with a control
    character (the caller keeps such a command commented out)."""
    words = list(words)
    bad = [w for w in words if has_hidden(w)]
    if bad:
        raise ValueError(f"a command word contains a control character: {visible(bad[0])}")
    return shlex.join(words)


def commented_command(words: Iterable[str], prefix: str = "# ") -> str:
    """A command shown, not run: quoted as sh needs, control characters escaped, one comment line."""
    return comment(" ".join(shlex.quote(visible(w)) for w in words), prefix)
