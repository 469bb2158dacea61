"""A command group whose commands are loaded when one is run, not when the program starts.

``kafka-forensics`` registers its commands by name (cli/app.py); each lives in a module that pulls in
the floors below it (the runs, the pipeline, the renderers). Importing them all to run one took most
of the start-up time. Here a command's module is imported the first time the command is asked for
(to run it, to show its help, to complete its options); ``--help`` and the shell's completion of a
command name list the commands without loading any, each with the line the table of summaries gives
it (cli/help_text.py), exactly as click would list the loaded commands.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping, Sequence

import typer.core

from forensics.cli.click_api import Command as _BareCommand
from forensics.cli.click_api import CompletionItem
from forensics.cli.coercion import PlainValues, install
from forensics.cli.help_format import HelpContext

Entry = tuple[str, str, str]  # (command name, module, function)


class _Commands(MutableMapping):
    """The group's commands by name, in the order of the table: a name is known at once, its command
    made (its module imported) on first access; commands added otherwise are kept as they are."""

    def __init__(self, table: Sequence[Entry], make: Callable[[str, str, str], object]) -> None:
        self._table = {name: (name, module, function) for name, module, function in table}
        self._make = make
        self._made: dict[str, object] = {}

    def __getitem__(self, name: str):
        if name not in self._made:
            if name not in self._table:
                raise KeyError(name)
            self._made[name] = self._make(*self._table[name])
        return self._made[name]

    def __setitem__(self, name: str, command) -> None:
        self._made[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._table.pop(name, None)
        self._made.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self._table
        yield from (name for name in self._made if name not in self._table)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return name in self._table or name in self._made

    def loaded(self, name: str):
        """The command ``name`` if it was made or added already (else None: its module is not loaded)."""
        return self._made.get(name)


class _Params(list):
    """A group's parameters, where each one added later gets the plain conversions too (typer appends
    --install-completion and --show-completion once the group is made; cli/coercion.py)."""

    def __init__(self, owner, params) -> None:
        super().__init__(params)
        self._owner = owner

    def append(self, param) -> None:
        super().append(param)
        install(self._owner)


def _as_is(text: str) -> str:
    """A help text for the shell's completion: plain already (no rich markup to strip)."""
    return text


class LazyGroup(PlainValues, typer.core.TyperGroup):
    """A typer group over :attr:`table`, each command made by :meth:`make` when first asked for; the
    ``Commands`` section of ``--help`` from :meth:`summary` alone. Subclass it with both set."""

    table: Sequence[Entry] = ()
    context_class = HelpContext

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.params = _Params(self, self.params)
        given = self.commands
        self.commands = _Commands(self.table, self.make)
        for name, command in given.items():
            self.commands[name] = command

    @staticmethod
    def make(name: str, module: str, function: str):  # pragma: no cover - set by the subclass
        raise NotImplementedError

    @staticmethod
    def summary(name: str) -> str:  # pragma: no cover - set by the subclass
        raise NotImplementedError

    def get_command(self, ctx, cmd_name: str):
        return self.commands.get(cmd_name)

    def list_commands(self, ctx):
        return list(self.commands)

    def format_commands(self, ctx, formatter) -> None:
        """click's own list (TyperGroup.format_commands), each line from the table of summaries for a
        command not loaded: it stands in as a bare command carrying its summary as its short help."""
        listed = [(name, self._listed(name)) for name in self.list_commands(ctx)]
        listed = [(name, command) for name, command in listed if not command.hidden]
        if listed:
            limit = formatter.width - 6 - max(len(name) for name, _ in listed)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in listed])

    def shell_complete(self, ctx, incomplete: str):
        """The command names starting with ``incomplete``, each with its summary (as typer's group
        completes them, without loading a command), then the group's own options."""
        named = [CompletionItem(name, help=command.get_short_help_str()) for name, command in
                 ((name, self._listed(name)) for name in self.list_commands(ctx) if name.startswith(incomplete))
                 if not command.hidden]
        return named + _BareCommand.shell_complete(self, ctx, incomplete)

    def _main_shell_completion(self, ctx_args, prog_name, complete_var=None) -> None:
        """Answer the shell's completion request, if this is one (typer's, then exit), with the help
        texts as they are: they are plain (no rich markup), and typer's zsh, fish and PowerShell
        answers would load rich's renderer to strip markup from them (0.3 s a Tab key) and eat their
        brackets (``[default: 15]``)."""
        try:
            from typer import _completion_classes

            _completion_classes._sanitize_help_text = _as_is
        except (ImportError, AttributeError):  # pragma: no cover - a typer without it
            pass
        super()._main_shell_completion(ctx_args, prog_name, complete_var)

    def _listed(self, name: str):
        loaded = self.commands.loaded(name) if isinstance(self.commands, _Commands) else self.commands[name]
        return loaded if loaded is not None else typer.core.TyperCommand(name, short_help=self.summary(name))


__all__ = ["Entry", "LazyGroup"]
