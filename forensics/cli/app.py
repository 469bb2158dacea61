"""The ``kafka-forensics`` command line: the typer app and its commands, registered here by name.

Each command lives in a module of its own that knows nothing of this one: it parses its options,
makes one call into :mod:`forensics.runs`, renders the result and picks the exit code (the exit codes,
the error line and the stdout guard are :mod:`forensics.cli.boundary`'s), and is imported only when
it runs (:data:`COMMANDS`). :func:`main` is the entry point (``kafka-forensics``, ``python -m
forensics``).
"""

from __future__ import annotations

import os
import signal
import sys
import threading

import typer

from forensics import __version__
from forensics.cli import help_format, help_text
from forensics.cli.click_api import ClickException as _CliError  # a usage error, shown as click shows it
from forensics.cli.lazy_group import LazyGroup
from forensics.cli.boundary import (  # noqa: F401  (the exit codes and the boundary: scripts import them from here)
    EXIT_CODES,
    EXIT_FOUND,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_UNDECIDED,
    EXIT_USAGE,
    GuardedStdout,
    OutputError,
    command_line,
    error_boundary,
    fail,
    on_ctrl_c,
    say_interrupted,
    silence_stdout,
)
from forensics.errors import ForensicsError
from forensics.process_state import PROCESS
from forensics.render.terminal_text import term

# The commands, in the order ``--help`` lists them: that of an investigation (cli/help_text.py, which
# gives each its line in the list and its examples), each by the module and the function that make
# it. A command's module is imported only when that command runs (or its help is shown): ``--help``
# lists them from help_text's summaries alone, so that starting the tool costs no more than the one
# command run (docs/performance.md, "Start-up").
COMMANDS = (
    ("scan", "forensics.cli.scan_cmd", "scan_cli"),
    ("find-hanging", "forensics.cli.hanging_cmd", "find_hanging_cli"),
    ("describe-producers", "forensics.cli.state_cmd", "describe_producers_cli"),
    ("list", "forensics.cli.state_cmd", "list_cli"),
    ("describe", "forensics.cli.state_cmd", "describe_cli"),
    ("abort-commands", "forensics.cli.hanging_cmd", "abort_commands_cli"),
    ("report", "forensics.cli.report_cmd", "report_cli"),
    ("export", "forensics.cli.export_cmd", "export_cli"),
    ("dump", "forensics.cli.dump_cmd", "dump_cli"),
    ("verify-manifest", "forensics.cli.evidence", "verify_manifest_cli"),
)


def _command(name: str, module: str, function: str):
    """The click command ``name``: its module imported, its function made a command as
    ``app.command(name, ...)`` would, with its help's summary and examples."""
    import importlib

    from typer.main import get_command_from_info
    from typer.models import CommandInfo

    callback = getattr(importlib.import_module(module), function)
    info = CommandInfo(name, cls=help_format.Command, callback=callback, short_help=help_text.summary(name),
                       epilog=help_text.epilog(name))
    return get_command_from_info(info, pretty_exceptions_short=app.pretty_exceptions_short,
                                 rich_markup_mode=app.rich_markup_mode)


class _Group(LazyGroup):
    """The group of :data:`COMMANDS`."""

    table = COMMANDS
    make = staticmethod(_command)
    summary = staticmethod(help_text.summary)


app = typer.Typer(
    cls=_Group,
    add_completion=True,  # --install-completion, --show-completion (cli/lazy_group.py: commands named unloaded)
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's plain help: never cuts an option name (cli/help_format.py)
    help="Offline forensics for Apache Kafka broker disks (read-only).",
    epilog=help_text.ROOT_EPILOG,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from forensics.speedups import state  # the accelerator, a small C extension: no heavier import

        typer.echo(f"kafka-forensics {__version__}\n{state()}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and whether the C accelerator is in use, "
                                       "and exit.")) -> None:
    """Offline forensics for Apache Kafka broker disks (read-only)."""


def _run(argv: list[str] | None) -> int:
    PROCESS.command_line = ("kafka-forensics", *(sys.argv[1:] if argv is None else argv))
    try:
        return _dispatch(argv)
    finally:
        PROCESS.command_line = ()


def _dispatch(argv: list[str] | None) -> int:
    try:
        code = app(args=argv, prog_name="kafka-forensics", standalone_mode=False)
        if code == EXIT_INTERRUPTED:  # click turns Ctrl-C into a return value without standalone mode
            return say_interrupted()
    except typer.Exit as exc:
        code = exc.exit_code
    except _CliError as exc:
        exc.show()
        code = getattr(exc, "exit_code", EXIT_USAGE)
    except (typer.Abort, KeyboardInterrupt):
        return say_interrupted()
    except BrokenPipeError:
        silence_stdout()
        code = EXIT_OK
    except Exception as exc:  # the last line of defence: one line, never a traceback
        if PROCESS.interrupted.is_set():  # a call cut short by Ctrl-C fails in its own way (Py4J, Spark)
            return say_interrupted()
        if isinstance(exc, OutputError):
            silence_stdout()
        if isinstance(exc, ForensicsError):
            typer.echo(f"kafka-forensics: {term(exc)}", err=True)
            return exc.exit_code
        if os.environ.get("KAFKA_FORENSICS_DEBUG"):
            raise
        typer.echo(f"kafka-forensics: internal error: {type(exc).__name__}: {term(exc)} "
                   "(set KAFKA_FORENSICS_DEBUG=1 for a traceback)", err=True)
        code = EXIT_INTERNAL
    return code if isinstance(code, int) else EXIT_OK


def _flush_output(code: int) -> int:
    """Flush stdout before exit (else Python does it at shutdown, where a failure becomes a
    traceback and exit 120): a closed pipe changes nothing, a failed write is one line and
    :data:`EXIT_OUTPUT`."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    except OutputError as exc:
        silence_stdout()
        typer.echo(f"kafka-forensics: {exc}", err=True)
        return exc.exit_code
    except (OSError, ValueError):  # stdout closed or replaced by the caller: nothing left to write
        silence_stdout()
    return code


def _stop_spark(interrupted: bool) -> None:
    """Stop the Spark session and its JVM (:func:`forensics.pipeline.engine.shutdown`), where this
    process started one: a command that never ran Spark loads nothing for it."""
    if PROCESS.spark is not None:
        from forensics.pipeline.engine import shutdown

        shutdown(interrupted)


def main(argv: list[str] | None = None) -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, on_ctrl_c)
    PROCESS.interrupted.clear()
    if not isinstance(sys.stdout, GuardedStdout) and sys.stdout is not None:
        sys.stdout = GuardedStdout(sys.stdout)
    code = _run(argv)
    try:
        # the Spark session and its JVM, if one was started: before exit, with our Ctrl-C handling
        _stop_spark(PROCESS.interrupted.is_set())
    except KeyboardInterrupt:
        pass
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # all is done: the exit code below is the truth
    if PROCESS.interrupted.is_set() and code != EXIT_INTERRUPTED:  # Ctrl-C after the work was done, while stopping
        code = say_interrupted()
    sys.exit(_flush_output(code))
