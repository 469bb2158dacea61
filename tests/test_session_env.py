"""The suite holds in any shell (issue 23): tests/conftest.py sets what output depends on to the
suite's own values at session start, and the tool's own output does not depend on the machine's
time zone or locale."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import SESSION_ENV, SUITE_CONTROLS, UNSET, session_environment

REPO = Path(__file__).resolve().parents[1]
HOSTILE = {"COLUMNS": "100", "LINES": "20", "TZ": "Asia/Kolkata", "LC_ALL": "C", "LANG": "fr_FR.ISO-8859-1",
           "NO_COLOR": "1", "FORCE_COLOR": "1", "TERM": "dumb", "PYTHONIOENCODING": "latin-1",
           "KAFKA_FORENSICS_ENGINE": "spark", "KAFKA_FORENSICS_DEBUG": "1", "KAFKA_FORENSICS_STATS": "/x",
           "KAFKA_FORENSICS_SOMETHING_NEW": "1", "KAFKA_FORENSICS_PURE": "1", "PATH": "/usr/bin"}


def test_the_session_runs_with_its_own_values() -> None:
    for name in UNSET:
        assert name not in os.environ, name
    for name, value in SESSION_ENV.items():
        assert os.environ[name] == value, name
    assert all(n in SUITE_CONTROLS or n == "KAFKA_FORENSICS_ENGINE" for n in os.environ if n.startswith("KAFKA_FORENSICS_"))
    assert time.tzname[0] == "UTC" and time.timezone == 0


def test_a_hostile_shell_becomes_the_suites_environment() -> None:
    environ = dict(HOSTILE)
    session_environment(environ)
    assert environ == {**SESSION_ENV, "KAFKA_FORENSICS_PURE": "1", "PATH": "/usr/bin"}


def test_the_processes_tests_start_get_the_session_environment() -> None:
    done = subprocess.run([sys.executable, "-c", "import os, time; print(os.environ.get('COLUMNS'), time.tzname[0], "
                           "os.environ['KAFKA_FORENSICS_ENGINE'])"], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["None", "UTC", "local"]


def test_output_does_not_depend_on_the_machines_time_zone_or_locale() -> None:
    """Times are int64 epoch ms inside and rendered in UTC: a run in Kolkata with the C locale prints
    the same bytes (a naive --as-of is UTC too)."""
    args = [sys.executable, "-m", "forensics", "find-hanging", "fixtures/example-disk", "--all", "--format", "json",
            "--as-of", "2026-01-01T01:00:00"]
    here = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=300)
    there = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=300,
                           env={**os.environ, "TZ": "Asia/Kolkata", "LC_ALL": "C", "LANG": "C"})
    assert here.returncode == 1 and '"verdict": "hanging"' in here.stdout
    assert (there.returncode, there.stdout, there.stderr) == (here.returncode, here.stdout, here.stderr)


def test_the_processes_tests_start_compile_into_the_sessions_own_bytecode_directory() -> None:
    """Whatever the caller exported (PYTHONDONTWRITEBYTECODE=1, another prefix), a CLI run started by a
    test compiles each module once per session, and never into the checkout."""
    done = subprocess.run([sys.executable, "-c", "import sys; print(sys.pycache_prefix, sys.dont_write_bytecode)"],
                          capture_output=True, text=True, timeout=60)
    prefix, dont_write = done.stdout.split()
    assert dont_write == "False"
    assert Path(prefix).name.startswith("kafka-forensics-pycache-") and Path(prefix).is_dir()
    assert not Path(prefix).resolve().is_relative_to(REPO)
