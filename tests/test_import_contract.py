"""The import contract (``.importlinter``, run by ``.ci/run`` with ``lint-imports``) holds on this tree,
and it would fail if a floor imported one above it or two modules of one folder imported each other:
each shown on a copy of ``forensics/`` with one import added."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CONTRACT = REPO / ".importlinter"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("importlinter") is None,
                                reason="import-linter is not installed (pip install -e '.[test]')")


def _lint(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` with this repository's contract over the ``forensics`` package found under ``root``."""
    env = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                           "sys.exit(lint_imports_command())", "--no-cache", str(CONTRACT)],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def _copy_with(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the package (Python sources only) with ``line`` added at the end of ``module``."""
    root = tmp_path / "tree"
    shutil.copytree(REPO / "forensics", root / "forensics", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
    target = root / "forensics" / module
    target.write_text(target.read_text() + f"\n{line}\n")
    return root


def test_the_contract_holds() -> None:
    done = _lint(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_an_import_pointing_up_breaks_it(tmp_path: Path) -> None:
    """codec (bytes -> records) importing the command line: the layers contract names the chain."""
    done = _lint(_copy_with(tmp_path, "codec/crc.py", "import forensics.cli.boundary  # noqa"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "The floors of the house: imports point down BROKEN" in done.stdout
    assert "forensics.codec.crc -> forensics.cli.boundary" in done.stdout


def test_a_view_calling_a_run_breaks_it(tmp_path: Path) -> None:
    """report/ holds views: it may not call back into the application layer that orchestrates it."""
    done = _lint(_copy_with(tmp_path, "report/hanging.py", "import forensics.runs.context  # noqa"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "The floors of the house: imports point down BROKEN" in done.stdout
    assert "forensics.report.hanging -> forensics.runs.context" in done.stdout


def test_a_circle_in_one_folder_breaks_it(tmp_path: Path) -> None:
    """The executors may not import the module that chooses between them (it imports them)."""
    done = _lint(_copy_with(tmp_path, "pipeline/local.py", "import forensics.pipeline.engine  # noqa"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "No circle of imports between the modules of one folder BROKEN" in done.stdout
    assert "in forensics.pipeline" in done.stdout and "- .local -> .engine (1 import)" in done.stdout
