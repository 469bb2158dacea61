"""Evidence text for a CSV cell: a spreadsheet must never take a name from a disk for a formula.

Spreadsheets (Excel, LibreOffice Calc, Google Sheets) run a cell that starts with ``=``, ``+``,
``-`` or ``@`` as a formula, and some also one that starts with a tab or a carriage return (the
OWASP "CSV Injection" guidance): ``=HYPERLINK(...)`` becomes a link, ``+cmd|' /C calc'!A0`` a
DDE command. Every text cell goes through :func:`csv_text`:

- control and bidirectional characters are escaped as on a terminal
  (:func:`forensics.render.terminal_text.term`), so no cell holds a raw tab, CR or newline;
- a cell that then starts with one of those characters gets a leading ``'``, the apostrophe
  spreadsheets read as "this is text" and do not show;
- and, because a spreadsheet set to split on ``;`` (the list separator of many locales) starts a
  new cell after every ``;``, a formula character right after a ``;`` gets a ``'`` in front too
  (OWASP: the separator can start a cell in the middle of a value).

Numbers are ours, never text from the evidence, and stay numbers: ``-1`` is written ``-1``. The
exact values are in ``--format json``.
"""

from __future__ import annotations

import re
from typing import Any

from forensics.render.terminal_text import term

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_AFTER_SEMICOLON = re.compile(r";(?=[=+\-@])")


def csv_text(value: Any) -> str:
    """A text cell (``str(value)``) that no spreadsheet evaluates."""
    text = term(value)
    if ";" in text:
        text = _AFTER_SEMICOLON.sub(";'", text)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


__all__ = ["FORMULA_STARTS", "csv_text"]
