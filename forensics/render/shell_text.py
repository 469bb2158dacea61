"""The shell sink: text from the evidence (topic names, ids, paths, keys) written into an sh script.

* A comment can never be ended by the data inside it: every control character (newline, carriage
  return, escape sequences that could hide a line from a reviewer who ``cat``s the script, bidi
  overrides) is shown escaped, so one comment stays one line.
* A command word is always single-quoted when it is not a plain word (``shlex.quote``); values we
  did not compute that contain control characters are refused by the caller, never written raw.
"""

from __future__ import annotations

import re
import shlex
from typing import Iterable

# C0 and C1 controls, DEL, and the Unicode format characters that reorder or hide text
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def _escape(m: "re.Match[str]") -> str:
    c = m.group()
    if c == "\t":
        return "\\t"
    if c == "\r":
        return "\\r"
    if c == "\n":
        return "\\n"
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def visible(text: str) -> str:
    """``text`` with every control or invisible formatting character shown escaped (no newline stays)."""
    return _HIDDEN.sub(_escape, text)


def has_hidden(text: str) -> bool:
    return _HIDDEN.search(text) is not None


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
