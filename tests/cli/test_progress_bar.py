"""The progress bar on a terminal: the engine line is written before its first frame (never inside
it), and its sizes are binary as on every other screen (``KiB``, not rich's decimal ``kB``)."""

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.terminal_output import read_terminal

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "example-disk"


def _stderr_on_a_terminal(*args: str) -> str:
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "forensics", *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=child, close_fds=True)
    os.close(child)
    out = read_terminal(main)
    os.close(main)
    assert proc.wait(timeout=120) == 0
    return out.decode("utf-8")


def test_engine_line_comes_before_the_bar_and_sizes_are_binary():
    err = _stderr_on_a_terminal("scan", str(EXAMPLE))
    engine, _, frames = err.partition("\r\n")
    assert engine.startswith("kafka-forensics: engine local (in-process): "), err[:300]  # a line of its own
    assert "scanning (local)" in frames and "engine" not in frames  # the bar was drawn, after the line
    assert "10.4 KiB of 10.4 KiB" in frames and " kB" not in frames
