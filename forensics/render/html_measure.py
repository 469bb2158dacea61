"""How wide a text is drawn in the report's SVG pictures, known without a browser (the page runs
no script): the pictures size their label columns from it and wrap what would not fit, so no
label is cut at any page width (the SVG scales as a whole).

The estimate errs wide: ASCII at the advance widths of DejaVu Sans Bold (the widest face the style
sheet falls back to; system-ui is DejaVu Sans on Debian), rounded up to 1/100 em, bold or not;
anything else one em (CJK ideographs are), emoji and other astral characters 1.3 em; text is
measured as :func:`~forensics.render.html_text.esc` shows it (``\\u202e`` for a bidi override).
tests/browser/test_report_chromium.py measures the drawn labels in Chromium against it.
"""

from __future__ import annotations

import html
import unicodedata

from forensics.render.html_text import esc

FONT_SIZE = 12.0  # px: svg text in forensics.render.html_style
LINE_H = 14.0  # px between the lines of a label
# advance widths of U+0020..U+007E in 1/100 em (DejaVu Sans Bold, rounded up)
_ASCII = tuple(int(w) / 100 for w in (
    "35 46 53 84 70 101 88 31 46 46 53 84 38 42 38 37 70 70 70 70 70 70 70 70 70 70 40 40 84 84 84 59 100 78 77 74 "
    "84 69 69 83 84 38 38 78 64 100 84 86 74 86 78 73 69 82 78 111 78 73 73 46 37 46 84 50 50 68 72 60 72 68 44 72 "
    "72 35 35 67 35 105 72 69 72 72 50 60 48 72 66 93 65 66 59 72 37 72 84").split())
_SLACK = 1.03  # kerning, hinting and rounding in the browser
MIN_TAIL = 6  # characters a wrapped name's last line keeps at least, where a separator allows


def _em(c: str) -> float:
    o = ord(c)
    if 0x20 <= o <= 0x7E:
        return _ASCII[o - 0x20]
    if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf"):
        return 0.0
    return 1.3 if o > 0xFFFF else 1.0


def shown(text: str) -> str:
    """The text as the page shows it (control and bidi characters made visible by ``esc``)."""
    return html.unescape(esc(text))


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """Width in px (SVG user units) of ``text`` drawn at ``size``: never less than the browser draws."""
    return sum(_em(c) for c in shown(text)) * size * _SLACK


def wrap(text: str, width: float, size: float = FONT_SIZE) -> list[str]:
    """``text`` as shown, in lines no wider than ``width``, broken after a separator (``-_. /:``)
    in the line's second half (not leaving a last line shorter than ``MIN_TAIL`` where another
    separator allows), else anywhere; joined back they give the shown text unchanged."""
    text = shown(text)
    lines: list[str] = []
    while text:
        end, used = 0, 0.0
        while end < len(text) and used + _em(text[end]) * size * _SLACK <= width:
            used += _em(text[end]) * size * _SLACK
            end += 1
        if end == len(text):
            lines.append(text)
            break
        end = max(end, 1)
        cuts = [i + 1 for i in range(end // 2, end) if text[i] in "-_. /:"]
        # not right before a short tail (a name's "-0" stays with the word before it)
        cut = max((c for c in cuts if len(text) - c >= MIN_TAIL), default=max(cuts, default=end))
        lines.append(text[:cut])
        text = text[cut:]
    return lines or [""]
