"""What the command line makes of typer's errors (cli/app.py, ``_dispatch``): a click error (a usage
error) is shown as click shows it, with its exit code; a bare ``typer.TyperException``, which has no
``show``, ends in the last line of defence's one line (exit 70), never a traceback (it was caught as
a click error, and its ``show()`` raised AttributeError)."""

from __future__ import annotations

import pytest
import typer

from forensics.cli import app as cli_app
from forensics.cli.app import EXIT_INTERNAL, EXIT_USAGE
from forensics.process_state import PROCESS


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch) -> None:
    monkeypatch.delenv("KAFKA_FORENSICS_DEBUG", raising=False)
    PROCESS.interrupted.clear()


def test_a_usage_error_is_shown_as_click_shows_it(capsys) -> None:
    assert cli_app._dispatch(["scan", "--no-such-option"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "Error: No such option: --no-such-option" in err and "Traceback" not in err, err


def test_a_bare_typer_exception_is_one_line_not_a_traceback(monkeypatch, capsys) -> None:
    def failing(**_kwargs):
        raise typer.TyperException("boom")

    monkeypatch.setattr(cli_app, "app", failing)
    assert cli_app._dispatch(["scan"]) == EXIT_INTERNAL
    assert capsys.readouterr().err == ("kafka-forensics: internal error: TyperException: boom "
                                       "(set KAFKA_FORENSICS_DEBUG=1 for a traceback)\n")
