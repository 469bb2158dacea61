"""The type gate (issue 25): ``mypy`` with the settings in ``pyproject.toml`` ([tool.mypy]:
``check_untyped_defs``) over the floors that pass it, here so that the fast tier fails on a new type
error in them. TYPED_FLOORS grows until it is all of ``forensics/``.

Until the accelerator has its stub (``forensics/_speedups.pyi``), ``native`` is typed ``object``:
its calls (``"object" has no attribute "scan"``) and ``forensics/speedups.py`` itself are the one
allowance; with the stub in place there is none."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

REPO = Path(__file__).resolve().parents[1]

TYPED_FLOORS = [
    "forensics/codec", "forensics/io", "forensics/state", "forensics/layout", "forensics/pipeline",
    "forensics/analysis", "forensics/errors.py", "forensics/findings.py", "forensics/model.py",
    "forensics/exit_codes.py",
]

_ERROR = re.compile(r"^(?P<path>[^:]+):\d+: error: (?P<message>.*)$")
_NATIVE_CALL = re.compile(r'^"object" has no attribute "\w+"  \[attr-defined\]$')

needs_mypy = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed (pip install -e '.[test]')")


def _mypy(*paths: str) -> List[str]:
    """mypy's error lines for ``paths`` (the repository's settings; its incremental cache in
    ``.mypy_cache``, so that a second run takes seconds)."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--show-error-codes", *paths],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 2: mypy itself failed
    return [line for line in done.stdout.splitlines() if _ERROR.match(line)]


def _allowed(line: str) -> bool:
    if (REPO / "forensics" / "_speedups.pyi").exists():
        return False
    m = _ERROR.match(line)
    assert m is not None
    return m["path"] == "forensics/speedups.py" or _NATIVE_CALL.match(m["message"]) is not None


@needs_mypy
def test_typed_floors_pass_mypy() -> None:
    errors = [line for line in _mypy(*TYPED_FLOORS) if not _allowed(line)]
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
