"""How ``--help`` is laid out: click's plain formatter (option names are never cut, the text wraps
at the terminal's width up to 80 columns and reads the same in a pager or a file, as the help of
Kafka's own tools does), the options in sections (the command's own first, then the evidence and
the engine: see the ``rich_help_panel`` of each in cli/options.py), then the examples
(cli/help_text.py)."""

from __future__ import annotations

import re
from typing import Dict, List, Tuple

import typer.core

from forensics.cli.coercion import PlainValues

OPTIONS = "Options"
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


class Command(PlainValues, typer.core.TyperCommand):
    """A command whose arguments are named by their metavar (``PATH...``, ``[FILE...]`` when optional),
    and whose options are listed in sections, in the order of their first option (its values
    converted as cli/coercion.py says)."""

    def collect_usage_pieces(self, ctx) -> List[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = argument_name(param)
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_options(self, ctx, formatter) -> None:
        arguments: List[Tuple[str, str]] = []
        sections: Dict[str, List[Tuple[str, str]]] = {OPTIONS: []}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append((argument_name(param), param.help or ""))
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


__all__ = ["Command"]
