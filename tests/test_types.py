"""The type gate (issue 25): ``mypy`` with the settings in ``pyproject.toml`` ([tool.mypy]:
``check_untyped_defs``) over all of ``forensics/``, here so that the fast tier (and so CI, ``.ci/run``)
fails on a new type error anywhere in the package. The C accelerator is typed by its stub
(``forensics/_speedups.pyi``): no error is allowed."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PACKAGE = "forensics"

_ERROR = re.compile(r"^[^:]+:\d+: error: ")

needs_mypy = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed (pip install -e '.[test]')")


def _mypy(*paths: str) -> list[str]:
    """mypy's error lines for ``paths`` (the repository's settings, ``check_untyped_defs`` whatever they
    say; its incremental cache in ``.mypy_cache``, so that a second run takes seconds)."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--check-untyped-defs", "--no-error-summary",
                           "--show-error-codes", *paths], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 2: mypy itself failed
    return [line for line in done.stdout.splitlines() if _ERROR.match(line)]


@needs_mypy
def test_the_package_passes_mypy() -> None:
    errors = _mypy(PACKAGE)
    assert not errors, "\n".join(errors)


@needs_mypy
def test_a_v2_frame_has_its_header_only_from_a_scanner_asked_for_headers(tmp_path: Path) -> None:
    """Frame.header is Optional; a scanner asked for headers yields V2Frame | LegacyFrame, and a test of
    ``magic`` makes the header a BatchHeader. Without headers it stays Optional: mypy says so."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from forensics.io.frames import FrameScanner\n"
        "\n"
        "\n"
        "def offsets(buf: bytes) -> list:\n"
        "    out = []\n"
        "    for frame in FrameScanner(buf, 'p', headers=True):\n"
        "        if frame.magic == 2:\n"
        "            out.append(frame.header.base_offset)\n"
        "    for plain in FrameScanner(buf, 'p'):\n"
        "        if plain.magic == 2:\n"
        "            out.append(plain.header.base_offset)\n"
        "    return out\n")
    # the probe's errors, not those of forensics/ (mypy's cache may name the probe of an earlier run)
    errors = [line for line in _mypy(str(probe)) if not line.startswith("forensics/")]
    assert len(errors) == 1, errors
    assert "probe.py:11: error:" in errors[0] and "[union-attr]" in errors[0], errors
