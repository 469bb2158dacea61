"""The ``kafka-forensics`` command line: thin typer commands over library functions.

One place maps errors to exit codes (see :data:`EXIT_CODES` and docs/cli.md). Data goes to
stdout; progress, findings and diagnostics go to stderr. No traceback reaches a user unless
KAFKA_FORENSICS_DEBUG=1 is set. A closed output pipe ends any command quietly with exit 0; an
output that cannot be written (a full disk) ends it with :data:`EXIT_OUTPUT` and one line.
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator, List, Optional

import typer

try:  # typer >= 0.26 vendors click; its usage errors derive from TyperException
    from typer.exceptions import TyperException as _CliError
except ImportError:  # pragma: no cover - older typer re-exports click's exceptions
    from click import ClickException as _CliError

from forensics import __version__
from forensics.errors import ForensicsError
from forensics.render.terminal_text import term

EXIT_OK = 0
EXIT_FOUND = 1  # reserved for commands that gate scripts (find-hanging: something hangs)
EXIT_USAGE = 2
EXIT_UNDECIDED = 7  # find-hanging: open transactions need a person, none is proven hanging
EXIT_INTERRUPTED = 130
EXIT_INTERNAL = 70
EXIT_OUTPUT = 74  # sysexits.h EX_IOERR: the output could not be written
EXIT_CODES = {
    0: "success",
    1: "the analysis found what the command looks for (find-hanging: a hanging transaction; verify-manifest: a "
       "file differs from the manifest)",
    2: "usage error (bad option or argument, an output path inside the evidence)",
    3: "input error: a path does not exist, is of the wrong type or cannot be read",
    4: "an input file is not what its name says or is damaged beyond decoding",
    5: "--strict was given and findings were reported",
    6: "the Spark engine failed: Spark could not start or a job failed (the message names Spark's log)",
    7: "find-hanging: nothing is proven hanging, but open transactions need a person (unverifiable evidence, a "
       "coordinator stuck or fenced, an ongoing transaction long past its timeout): neither all clear nor abort these",
    70: "internal error (a bug: please report it with KAFKA_FORENSICS_DEBUG=1 output)",
    74: "output error: stdout could not be written (disk full, I/O error); what was written is incomplete",
    130: "interrupted (Ctrl-C)",
}

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Offline forensics for Apache Kafka broker disks (read-only).",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kafka-forensics {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Offline forensics for Apache Kafka broker disks (read-only)."""


def fail(message: str, code: int) -> "typer.Exit":
    """One line ``kafka-forensics: MESSAGE`` on stderr (evidence text in it shown escaped, see
    :func:`~forensics.render.terminal_text.term`) and the exit to raise."""
    sys.stdout.flush()
    typer.echo(f"kafka-forensics: {term(message)}", err=True)
    return typer.Exit(code)


class OutputError(ForensicsError):
    """Writing to stdout failed (not a closed pipe: that ends the command quietly)."""

    exit_code = EXIT_OUTPUT


class _Stdout:
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


_CTRL_C = threading.Event()  # set by the first Ctrl-C: whatever fails after it was interrupted


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


def _on_ctrl_c(signum, frame) -> None:
    _CTRL_C.set()
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
        _silence_stdout()  # what is still buffered cannot be written either
        raise fail(str(exc), exc.exit_code)
    except ForensicsError as exc:
        if _CTRL_C.is_set():  # a Spark job cancelled by Ctrl-C fails as a job: it was interrupted
            raise KeyboardInterrupt from None
        raise fail(str(exc), exc.exit_code)
    except BrokenPipeError:
        _silence_stdout()
        raise typer.Exit(EXIT_OK)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _interrupted() -> int:
    typer.echo("kafka-forensics: interrupted", err=True)
    return EXIT_INTERRUPTED


_COMMAND_LINE: List[str] = []  # as main() was given it, for the evidence manifest


def command_line() -> List[str]:
    """This run's command line (``sys.argv`` when the app was not started through :func:`main`)."""
    return list(_COMMAND_LINE) or ["kafka-forensics", *sys.argv[1:]]


def _run(argv: Optional[List[str]]) -> int:
    _COMMAND_LINE[:] = ["kafka-forensics", *(sys.argv[1:] if argv is None else argv)]
    try:
        return _dispatch(argv)
    finally:
        _COMMAND_LINE.clear()


def _dispatch(argv: Optional[List[str]]) -> int:
    try:
        code = app(args=argv, prog_name="kafka-forensics", standalone_mode=False)
        if code == EXIT_INTERRUPTED:  # click turns Ctrl-C into a return value without standalone mode
            return _interrupted()
    except typer.Exit as exc:
        code = exc.exit_code
    except _CliError as exc:
        exc.show()
        code = getattr(exc, "exit_code", EXIT_USAGE)
    except (typer.Abort, KeyboardInterrupt):
        return _interrupted()
    except BrokenPipeError:
        _silence_stdout()
        code = EXIT_OK
    except Exception as exc:  # the last line of defence: one line, never a traceback
        if _CTRL_C.is_set():  # a call cut short by Ctrl-C fails in its own way (Py4J, Spark)
            return _interrupted()
        if isinstance(exc, OutputError):
            _silence_stdout()
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
        _silence_stdout()
    except OutputError as exc:
        _silence_stdout()
        typer.echo(f"kafka-forensics: {exc}", err=True)
        return exc.exit_code
    except (OSError, ValueError):  # stdout closed or replaced by the caller: nothing left to write
        _silence_stdout()
    return code


def main(argv: Optional[List[str]] = None) -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_ctrl_c)
    _CTRL_C.clear()
    if not isinstance(sys.stdout, _Stdout) and sys.stdout is not None:
        sys.stdout = _Stdout(sys.stdout)
    try:
        from forensics.cli import (  # noqa: F401  (registers the commands)
            dump_cmd,
            evidence,
            export_cmd,
            hanging_cmd,
            report_cmd,
            scan_cmd,
            state_cmd,
        )
        from forensics.pipeline.engine import shutdown
    except KeyboardInterrupt:
        sys.exit(_interrupted())
    code = _run(argv)
    try:
        # the Spark session and its JVM, if one was started: before exit, with our Ctrl-C handling
        shutdown(_CTRL_C.is_set())
    except KeyboardInterrupt:
        pass
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # all is done: the exit code below is the truth
    if _CTRL_C.is_set() and code != EXIT_INTERRUPTED:  # Ctrl-C after the work was done, while stopping
        code = _interrupted()
    sys.exit(_flush_output(code))
