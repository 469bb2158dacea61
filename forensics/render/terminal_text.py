"""Evidence text for a terminal: nothing a disk holds may move the cursor, clear the screen, set
the window title, reorder what is shown around it or forge a line.

Every string that came from the evidence (topic names, transactional ids, group ids, keys, values,
headers, paths, checkpoint lines, and the messages that quote them) goes through :func:`term`
before it reaches stdout or stderr as text. It shows, escaped as Python writes them:

- C0 controls and DEL as ``\\xNN`` (``\\x1b``), except ``\\t``, ``\\n`` and ``\\r``, which keep their
  short names: an embedded newline can never start a forged table row or finding line;
- C1 controls (U+0080-U+009F: ``\\u009b`` is a one-character CSI) as ``\\u0085``;
- the bidirectional controls that can reorder what a reader sees (U+061C, U+200E, U+200F,
  U+202A-U+202E, U+2066-U+2069), the zero-width and invisible format characters that can make two
  names look alike (U+200B-U+200D, U+2060-U+2065, U+FEFF) and the line and paragraph separators
  U+2028, U+2029, as ``\\u202e``;
- a byte that is not valid UTF-8 in a file or directory name (Python carries it as a lone
  surrogate, U+DC80-U+DCFF) as the byte, ``\\xff``; any other lone surrogate as ``\\udXXX``.

``\\xNN`` always names one byte of the name as it is on disk, ``\\uNNNN`` one Unicode character.
Backslashes are left alone (JSON output carries every value exactly). Everything else, letters
of every script included, is shown as it is. The same table serves the HTML report
(:mod:`forensics.render.html_text`), the CSV cells (:mod:`forensics.render.csv_text`) and JSON
written with ``ensure_ascii=False`` (:func:`json_text`: the same characters as ``\\uXXXX``).
"""

from __future__ import annotations

from typing import Protocol, TextIO

_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
# bidi controls, zero-width and other invisible format characters, line and paragraph separators
_INVISIBLE = (0x061C, *range(0x200B, 0x2010), 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2060, 0x206A),
              0xFEFF)


def _escapes() -> dict[int, str]:
    table: dict[int, str] = {c: _NAMED.get(c, f"\\x{c:02x}") for c in (*range(0x00, 0x20), 0x7F)}
    table.update({c: f"\\u{c:04x}" for c in (*range(0x80, 0xA0), *_INVISIBLE)})
    table.update({c: f"\\x{c - 0xDC00:02x}" for c in range(0xDC80, 0xDD00)})  # surrogateescape'd bytes
    table.update({c: f"\\u{c:04x}" for c in range(0xD800, 0xE000) if c not in table})
    return table


ESCAPES: dict[int, str] = _escapes()  # code point -> its visible form (for str.translate)


def term(value: object) -> str:
    """``value`` as text safe to print on a terminal (see the module's rules); ``None`` -> ``""``."""
    text = "" if value is None else str(value)
    if text.isascii() and text.isprintable():  # the common case: nothing to escape
        return text
    return text.translate(ESCAPES)


_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in ESCAPES if c >= 0x7F}  # json escapes C0 itself


def json_text(text: str) -> str:
    """A JSON text written with ``ensure_ascii=False``, with every character :func:`term` escapes
    written as a JSON ``\\uXXXX`` escape instead: the same values, nothing a terminal would run."""
    if text.isascii() and "\x7f" not in text:
        return text
    return text.translate(_JSON_ESCAPES)


def has_control(text: str) -> bool:
    """Does ``text`` hold a character :func:`term` escapes?"""
    return term(text) != text


def has_raw_control(text: str) -> bool:
    """Does ``text`` hold a character :func:`term` would escape (other than newline and tab, which
    separate lines and cells in our own output)? For tests and the injection sweep."""
    return any(ord(c) in ESCAPES and c not in "\n\t" for c in text)


_LINE_ESCAPES = {c: v for c, v in ESCAPES.items() if c != 0x0A}  # our own line ends stay


class TextOut(Protocol):
    """What a writer of lines needs of its stream: a text file, or :class:`TerminalLines` over one."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


class TerminalLines:
    """A text stream onto a terminal for output whose lines are Kafka's format with evidence inside
    them (dump's text): every character :func:`term` escapes is shown escaped, but the newlines that
    end the lines. A record holding ``\x1b[2J`` shows it instead of clearing the screen."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write(self, text: str) -> int:
        return self._out.write(text.translate(_LINE_ESCAPES))

    def flush(self) -> None:
        self._out.flush()


def for_terminal(out: TextIO) -> TextOut:
    """``out`` itself when it is a file or a pipe (those get Kafka's bytes, to compare with its tool);
    a :class:`TerminalLines` over it when it is a terminal."""
    try:
        interactive = out.isatty()
    except (AttributeError, ValueError):  # a closed or foreign stream: not a terminal
        interactive = False
    return TerminalLines(out) if interactive else out


__all__ = ["ESCAPES", "TerminalLines", "TextOut", "for_terminal", "has_control", "has_raw_control", "json_text", "term"]
