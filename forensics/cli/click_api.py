"""The click the command line runs on: typer's own copy (typer >= 0.26 vendors click as
``typer._click``), else click itself (an older typer depends on it). The two are the same API; the
type checker reads the vendored one, that of the typer the tests install (``pip install -e
'.[test]'``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typer._click.core import Command, Context, ParameterSource
    from typer._click.exceptions import ClickException
    from typer._click.globals import get_current_context
    from typer._click.shell_completion import CompletionItem
else:
    try:
        from typer._click.core import Command, Context, ParameterSource
        from typer._click.exceptions import ClickException
        from typer._click.globals import get_current_context
        from typer._click.shell_completion import CompletionItem
    except ImportError:  # pragma: no cover - an older typer runs on click itself
        from click.core import Command, Context, ParameterSource
        from click.exceptions import ClickException
        from click.globals import get_current_context
        from click.shell_completion import CompletionItem

__all__ = ["ClickException", "Command", "CompletionItem", "Context", "ParameterSource", "get_current_context"]
