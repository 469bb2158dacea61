"""Where the command line meets the library: exit codes by name, the one line an error becomes, stdout
that tells a full disk from a closed pipe, and Ctrl-C.

One place maps errors to exit codes (by name, :mod:`forensics.exit_codes`; docs/cli.md). Data goes to stdout; progress,
findings and diagnostics go to stderr. No traceback reaches a user unless KAFKA_FORENSICS_DEBUG=1 is
set. A closed output pipe ends any command quietly with exit 0; an output that cannot be written (a
full disk) ends it with :data:`EXIT_OUTPUT` and one line. Every command module imports this module,
never :mod:`forensics.cli.app` (which registers them by name and imports only the one run).
"""

from __future__ import annotations

import _thread
import os
import sys
import threading
from contextlib import contextmanager
from collections.abc import Iterator

import typer

from forensics.errors import ForensicsError
from forensics.process_state import PROCESS
from forensics.render.terminal_text import term

from forensics.exit_codes import (  # noqa: F401  (re-exported: the commands import them from here)
    EXIT_CODES,
    EXIT_CORRUPT,
    EXIT_FOUND,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_SPARK,
    EXIT_STRICT,
    EXIT_UNDECIDED,
    EXIT_USAGE,
)


def fail(message: str, code: int) -> typer.Exit:
    """One line ``kafka-forensics: MESSAGE`` on stderr (evidence text in it shown escaped, see
    :func:`~forensics.render.terminal_text.term`) and the exit to raise."""
    sys.stdout.flush()
    typer.echo(f"kafka-forensics: {term(message)}", err=True)
    return typer.Exit(code)


class OutputError(ForensicsError):
    """Writing to stdout failed (not a closed pipe: that ends the command quietly)."""

    exit_code = EXIT_OUTPUT


class GuardedStdout:
    """``sys.stdout`` whose write failures are told apart from every other ``OSError``: a full disk
    or an I/O error on the output becomes an :class:`OutputError`; a closed pipe stays a
    ``BrokenPipeError``. Everything else is the wrapped stream's."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def _guard(self, call, *args):
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write to stdout: {exc.strerror or exc}") from None

    def write(self, text: str) -> int:
        return self._guard(self._stream.write, text)

    def flush(self) -> None:
        self._guard(self._stream.flush)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _unsafe_to_interrupt(frame) -> bool:
    """A KeyboardInterrupt raised inside a finalizer (``__del__``: Py4J closes connections there)
    is swallowed by Python, and one raised inside logging can leave its module lock held, which
    hangs the next thread that logs. Neither may be where Ctrl-C lands."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "__del__" or code.co_filename.endswith(os.path.join("logging", "__init__.py")):
            return True
        frame = frame.f_back
    return False


def on_ctrl_c(signum, frame) -> None:
    """The SIGINT handler :func:`forensics.cli.app.main` installs: the first Ctrl-C is remembered
    (``PROCESS.interrupted``: whatever fails after it was interrupted) and lands as KeyboardInterrupt."""
    PROCESS.interrupted.set()
    if _unsafe_to_interrupt(frame):  # come back in a moment, at a safe point
        threading.Timer(0.05, _thread.interrupt_main).start()
        return
    raise KeyboardInterrupt


@contextmanager
def error_boundary() -> Iterator[None]:
    """Turn our errors into one clear line on stderr and a documented exit code."""
    try:
        yield
    except OutputError as exc:
        silence_stdout()  # what is still buffered cannot be written either
        raise fail(str(exc), exc.exit_code)
    except ForensicsError as exc:
        if PROCESS.interrupted.is_set():  # a Spark job cancelled by Ctrl-C fails as a job: it was interrupted
            raise KeyboardInterrupt from None
        raise fail(str(exc), exc.exit_code)
    except BrokenPipeError:
        silence_stdout()
        raise typer.Exit(EXIT_OK)


def silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def say_interrupted() -> int:
    typer.echo("kafka-forensics: interrupted", err=True)
    return EXIT_INTERRUPTED


def command_line() -> list[str]:
    """This run's command line (``sys.argv`` when the app was not started through :func:`main`)."""
    return list(PROCESS.command_line) or ["kafka-forensics", *sys.argv[1:]]

