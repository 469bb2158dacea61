"""Option values converted without loading pydantic, where typer would give the same value.

Typer (0.2x) converts every value given to a command through a pydantic ``TypeAdapter`` made for
the parameter when the value is first seen: importing pydantic and building the adapters costs a
tenth of a second, more than the rest of a short command (``dump`` of one segment;
docs/performance.md, "Start-up"). The options of our commands are of a few plain kinds (text,
integers with a lower bound, choices from an Enum, lists of text): for those, a value typer's
adapter takes as it is (a string, a canonical integer in range, a known choice) is converted here
to the very value it would give, and anything else (an integer out of range, a word that is no
choice, ...) goes to typer's own conversion, which then gives its own value or its own error
message. tests/cli/test_coercion.py holds the two to the same result over every parameter of every
command. Where typer has no such conversion (another version), :func:`install` changes nothing.
"""

from __future__ import annotations

import re
from forensics.dataclass_fast import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, get_args, get_origin

try:  # typer's conversion layer (0.2x); older typers convert through click's types, without pydantic
    from typer._coercion import RuntimeParam as _RuntimeParam
    from typer._coercion import build_runtime_param
    from typer._param_types import coerce_cli_choice
    from typer.core import _TyperParameter

    RuntimeParam: type[_RuntimeParam] | None = _RuntimeParam  # None: this typer has no such layer
except ImportError:  # pragma: no cover - another typer: nothing to do
    RuntimeParam = None

if TYPE_CHECKING:  # what PlainValues is mixed into: click's commands (and groups)
    from forensics.cli.click_api import Command as _Command
else:
    _Command = object

_MISS = object()
_CANONICAL_INT = re.compile(r"(?:0|-?[1-9][0-9]{0,17})\Z")  # what any integer parser reads the same way

STR, INT, BOOL, CHOICE, STR_LIST = "str", "int", "bool", "choice", "str-list"


def kind_of(param) -> str:
    """The plain kind of a typer parameter (:data:`STR`, :data:`INT`, :data:`BOOL`, :data:`CHOICE`,
    :data:`STR_LIST`), or "" when its values go to typer's conversion only."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or descriptor.file_annotation is not None:
        return ""
    info, annotation = descriptor.parameter_info, descriptor.annotation
    if getattr(info, "parser", None) is not None:
        return ""
    if annotation is str:
        return STR
    if annotation is bool:
        return BOOL
    if annotation is int and not getattr(info, "clamp", False):
        return INT
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return CHOICE
    if get_origin(annotation) is list and get_args(annotation) == (str,):
        return STR_LIST
    return ""


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class _Plain(_RuntimeParam):
        """A plain parameter's conversion: the common values here, the others by typer."""

        kind: str

        def _coerce_value(self, value: Any, param, ctx) -> Any:
            got = self.plain(value, ctx)
            if got is _MISS:
                return build_runtime_param(param.type_descriptor)._coerce_value(value, param=param, ctx=ctx)
            return got

        def plain(self, value: Any, ctx) -> Any:
            """The value typer's adapter would give for ``value``, or :data:`_MISS` when unsure."""
            if self.kind == STR:
                return value if isinstance(value, str) else _MISS
            if self.kind == BOOL:  # a flag's own value (typer converts only a value given as text)
                return value if isinstance(value, bool) else _MISS
            if self.kind == STR_LIST:
                ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
                return list(value) if ok else _MISS
            if self.kind == INT:
                return self._int(value)
            try:  # CHOICE: typer's own matching, which its adapter calls
                return coerce_cli_choice(value, choices=tuple(self.annotation),
                                         case_sensitive=self.parameter_info.case_sensitive, ctx=ctx)
            except ValueError:
                return _MISS

        def _int(self, value: Any) -> Any:
            if type(value) is int:
                number = value
            elif isinstance(value, str) and _CANONICAL_INT.match(value):
                number = int(value)
            else:
                return _MISS
            low, high = self.parameter_info.min, self.parameter_info.max
            if (low is not None and number < low) or (high is not None and number > high):
                return _MISS  # typer's conversion says why, in its words
            return number


def install(command) -> list[str]:
    """Give each plain parameter of ``command`` the conversion above (before any value is seen); the
    names of those that got it."""
    return [param.name for param in getattr(command, "params", ()) if _install(param)]


def _install(param) -> bool:
    if RuntimeParam is None or not isinstance(param, _TyperParameter):
        return False
    kind = kind_of(param)
    if not kind or getattr(param, "_runtime_param", _MISS) is not None:
        return False
    descriptor = param.type_descriptor
    param._runtime_param = _Plain(descriptor.parameter_info, descriptor.annotation, kind)
    return True


class PlainValues(_Command):
    """For a click command class (before typer's in the bases): its parameters, and the help option
    click makes when it is first asked for, get the conversions above."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        install(self)

    def get_help_option(self, ctx):
        option = super().get_help_option(ctx)
        if option is not None:
            _install(option)
        return option


__all__ = ["BOOL", "CHOICE", "INT", "STR", "STR_LIST", "PlainValues", "install", "kind_of"]
