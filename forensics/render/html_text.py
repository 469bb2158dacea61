"""Text helpers of the HTML report: escaping hostile text, a row's values as people read them (times
and sizes: the one formatter of each, :mod:`forensics.render.time_text`, :mod:`forensics.render.size_text`).

Everything shown comes from evidence (topic names, transactional ids, paths, reasons that quote
them): :func:`esc` escapes it for HTML text and attribute values alike, and makes control and
bidirectional-override characters visible (``\\x1b``, ``\\u202e``) as a terminal shows them
(:mod:`forensics.render.terminal_text`) so that a name cannot hide or reorder what is printed
around it.
"""

from __future__ import annotations

import html

from forensics.render.size_text import exact_size
from forensics.render.terminal_text import ESCAPES
from forensics.render.time_text import duration, moment

# the terminal's table (forensics/render/terminal_text.py), but tab, newline and carriage return,
# which HTML shows as a space
_INVISIBLE = {c: shown for c, shown in ESCAPES.items() if c not in (0x09, 0x0A, 0x0D)}


def esc(value: object) -> str:
    """``value`` as text, safe inside HTML/SVG text and double- or single-quoted attributes."""
    text = "" if value is None else str(value)
    return html.escape(text.translate(_INVISIBLE), quote=True)


def value_text(value: object, kind: str = "", as_of: int | None = None) -> str:
    """A row's value as text (not escaped): times with their epoch ms and age, durations and sizes
    as people read them, yes/no for booleans. Lists and missing values are the caller's."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and kind == "time":
        return moment(value, as_of)
    if isinstance(value, int) and kind == "duration":
        return duration(value)
    if isinstance(value, int) and kind == "bytes":
        return exact_size(value)
    return str(value)
