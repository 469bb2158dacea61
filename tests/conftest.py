"""Shared pytest configuration.

The markers (``pyproject.toml``) sort the suite into tiers: ``-m "not slow"`` is the fast tier, and
every test marked ``spark``, ``jvm`` or ``browser`` counts as ``slow``; ``tests/process_guard.py``
fails a test that starts a JVM or Chromium without its marker.

The suite holds in any shell: at session start, before anything runs, everything a command's output
depends on is set to the suite's own values (:data:`SESSION_ENV`, :data:`UNSET`), whatever the
caller exported (``COLUMNS=100``, ``TZ=Asia/Kolkata``, ``LC_ALL=C``, ``NO_COLOR=1``, ``TERM=dumb``:
``.ci/run`` runs the fast tier once more with those). The processes the tests start inherit them.
A test about one of these sets it itself (``monkeypatch.setenv``, ``CliRunner(env=...)``).
"""

import os
import shutil
import signal
import sys
import tempfile
import time
import warnings

import pytest

from tests import tiers
from tests.process_guard import ProcessGuard

# pytest rewrites the asserts of every test module at import and caches the result in __pycache__ (git
# ignores it) unless bytecode writing is off: with PYTHONDONTWRITEBYTECODE=1 exported (sandboxes, some CI
# images) every pytest process, each xdist worker too, rewrote all of them again, ~10 s of CPU in a
# collection of ~16 s. Set before any test module is imported (this file is the first conftest); the
# processes the tests start compile into the session's own directory instead (bytecode_cache).
sys.dont_write_bytecode = False

SESSION_ENV = {
    "TZ": "UTC",  # times are rendered in UTC; nothing may depend on the machine's zone
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "xterm",
    # Commands default to Spark whenever --master/--conf is given (export also above its crossover on
    # 5 or more cores: forensics/pipeline/engine.py); the suite runs them
    # in-process unless a test asks for Spark explicitly (tests/spark runs both engines and compares them).
    "KAFKA_FORENSICS_ENGINE": "local",
}
UNSET = (
    "COLUMNS", "LINES",  # the width tables and notes fold at (unset: a pipe gets whole lines)
    "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLORTERM", "TTY_COMPATIBLE", "TTY_INTERACTIVE",
    "JUPYTER_COLUMNS", "JUPYTER_LINES",  # what rich reads
    "LANGUAGE",  # gettext's message catalogues (click's messages)
    "PYTHONIOENCODING", "PYTHONUTF8",  # the encoding of the streams of the Python processes the tests start
)
# KAFKA_FORENSICS_* variables that choose how the suite runs, not what a command prints: kept as given
# (KAFKA_FORENSICS_PURE=1 runs the suite on the pure-Python path, which must print the same bytes).
# Every other KAFKA_FORENSICS_* variable (DEBUG, STATS, SPARK_CDS, ...) is removed.
PYCACHE = pytest.StashKey[str]()  # the session's bytecode directory (bytecode_cache)
SUITE_CONTROLS = ("KAFKA_FORENSICS_PURE", "KAFKA_FORENSICS_SWEEP_CASES", "KAFKA_FORENSICS_SWEEP_SEED",
                  "KAFKA_FORENSICS_SCREENSHOT_DIR")


def session_environment(environ) -> None:
    """Set ``environ`` (``os.environ``) to the suite's own values of what output depends on."""
    for name in list(environ):
        if name in UNSET or (name.startswith("KAFKA_FORENSICS_") and name not in SUITE_CONTROLS):
            del environ[name]
    environ.update(SESSION_ENV)


def bytecode_cache(environ, directory: str) -> None:
    """Let the Python processes the tests start (the CLI, Spark's Python workers) compile each module
    once per session into ``directory``, whatever the caller exported: with PYTHONDONTWRITEBYTECODE=1,
    or a checkout whose ``__pycache__`` is stale or cannot be written, every one of them compiled
    every module again (about 1 s of CPU per CLI run). Nothing is written into the checkout."""
    environ.pop("PYTHONDONTWRITEBYTECODE", None)
    environ["PYTHONPYCACHEPREFIX"] = directory


def pytest_configure(config):
    config.pluginmanager.register(ProcessGuard(), "kafka-forensics-process-guard")
    # before any test module is imported: the property tests' example counts follow the tier (tests/tiers.py)
    tiers.FAST = tiers.fast_tier(config.getoption("markexpr", "") or "")


def pytest_sessionstart(session):
    session_environment(os.environ)
    session.config.stash[PYCACHE] = tempfile.mkdtemp(prefix="kafka-forensics-pycache-")
    bytecode_cache(os.environ, session.config.stash[PYCACHE])
    for name in UNSET:
        # pytest imports readline before this (its capture's workaround), and GNU readline sets COLUMNS
        # and LINES (80x24 without a terminal) in the process's own environment, which os.environ never
        # sees: every process a test starts without env= would inherit them
        os.unsetenv(name)
    time.tzset()


@pytest.fixture(autouse=True)
def _sigint_handler_kept():
    """Each test ends with the SIGINT handler it began with, so that no test decides what a later one in
    the same worker gets (the CLI's ``main`` ends with ``SIG_IGN``; a Spark session puts Python's default
    back). A test that changed it is named in the warnings summary. A suite started in the background by a
    non-interactive shell (``cmd &``) begins with SIGINT ignored: a test about Ctrl-C sets its handler itself
    (tests/pipeline/test_pool.py)."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        warnings.warn(f"this test left the SIGINT handler {after!r} (was {before!r}); put back", stacklevel=1)


def pytest_sessionfinish(session):
    if PYCACHE in session.config.stash:
        shutil.rmtree(session.config.stash[PYCACHE], ignore_errors=True)
