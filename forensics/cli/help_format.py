"""How ``--help`` is laid out: click's plain formatter (option names are never cut; the text folds at
the screen's width, ``COLUMNS`` else the terminal's, less click's 2-column margin, and at 80 columns
into a pager or a file), the options in sections (the command's own first, then the evidence and
the engine: see the ``rich_help_panel`` of each in cli/options.py), then the examples
(cli/help_text.py, which fit 80 columns)."""

from __future__ import annotations

import re
from typing import Any

import typer.core

from forensics.cli.click_api import Context
from forensics.cli.coercion import PlainValues

OPTIONS = "Options"
SCREEN = 1 << 16  # no cap of our own on the help's width: click's formatter takes the screen's (less 2)
_FLOOR = re.compile(r"x>=\d+")  # click's "[x>=0]": the lower bound of a count, which its error message names


def _without_floor(help_text: str) -> str:
    """``... [default: 15; x>=0]`` -> ``... [default: 15]`` (a count is never negative: no need to say)."""
    text = re.sub(r"; " + _FLOOR.pattern + r"(?=\])", "", help_text)
    text = re.sub(r"\[" + _FLOOR.pattern + r"; ", "[", text)
    return re.sub(r"\s*\[" + _FLOOR.pattern + r"\]", "", text)


def argument_name(param) -> str:
    """``PATH...``: the argument's metavar (else its name in capitals), ``...`` when it takes several."""
    name = param.metavar or (param.name or "").upper()
    return name + ("..." if param.nargs != 1 else "")


class HelpContext(Context):  # typer's commands' context_class
    """A context whose help folds at the screen's width (click stops at 80 columns unless told)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["max_content_width"] = kwargs.get("max_content_width") or SCREEN
        super().__init__(*args, **kwargs)


class Command(PlainValues, typer.core.TyperCommand):
    """A command whose arguments are named by their metavar (``PATH...``, ``[FILE...]`` when optional),
    and whose options are listed in sections, in the order of their first option (its values
    converted as cli/coercion.py says)."""

    context_class = HelpContext

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = argument_name(param)
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_options(self, ctx, formatter) -> None:
        arguments: list[tuple[str, str]] = []
        sections: dict[str, list[tuple[str, str]]] = {OPTIONS: []}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append((argument_name(param), getattr(param, "help", None) or ""))  # typer's arguments
            else:
                names, help_text = record
                panel = getattr(param, "rich_help_panel", None) or OPTIONS
                sections.setdefault(panel, []).append((names, _without_floor(help_text)))
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        for title, records in sections.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


__all__ = ["Command", "HelpContext"]
