"""The dump part of ``bench/decode.py``: our ``dump --deep-iteration --print-data-log`` against
Java's ``kafka-dump-log.sh`` with the same flags, and the check that both print the same bytes.

* ``kafka_script()`` finds the Java tool: ``$KAFKA_HOME/bin/kafka-dump-log.sh``, else the Kafka
  4.1.0 distribution next to this repository (``../shared/kafka/kafka_2.13-4.1.0``).
* ``dump_commands()`` are the two command lines (timed by ``decode.py``, stdout to /dev/null).
* ``compare_outputs()`` runs both once more, untimed, reading their stdout side by side and
  comparing byte for byte as they stream (nothing is stored: a full-size dump prints gigabytes);
  it reports the first line that differs.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """``../shared`` of the checkout: the first ``shared`` directory beside the repository or
    beside one of its parents (a worktree under ``wt/NAME`` finds the one of the main checkout)."""
    for parent in REPO.parents:
        if (parent / "shared").is_dir():
            return parent / "shared"
    return REPO.parent / "shared"


DEFAULT_KAFKA_HOME = shared_dir() / "kafka" / "kafka_2.13-4.1.0"
DUMP_FLAGS = ("--deep-iteration", "--print-data-log")
_CHUNK = 1 << 20


def kafka_script(home: str | None) -> tuple[Path | None, str]:
    """The kafka-dump-log.sh to run (from ``home``, else the default distribution) or None and why."""
    base = Path(home) if home else DEFAULT_KAFKA_HOME
    script = base / "bin" / "kafka-dump-log.sh"
    if not os.access(script, os.X_OK):
        why = f"{script} is missing or not executable" if home else (
            f"KAFKA_HOME is not set and {DEFAULT_KAFKA_HOME} has no Kafka distribution")
        return None, why + ": Java kafka-dump-log.sh not run"
    return script, ""


def dump_commands(python: str, segment: Path, script: Path | None) -> dict[str, list[str]]:
    """``ours`` (``python -m forensics dump``) and, with a script, ``kafka-dump-log.sh``."""
    cmds = {"ours": [python, "-m", "forensics", "dump", *DUMP_FLAGS, str(segment)]}
    if script is not None:
        cmds["kafka-dump-log.sh"] = [str(script), *DUMP_FLAGS, "--files", str(segment)]
    return cmds


def compare_outputs(cmds: dict[str, Sequence[str]], env: dict, cwd: Path) -> tuple[bool, str]:
    """Run the two commands at once and compare their stdout byte for byte while it streams.

    The stream that is behind is read first; the one ahead blocks on its full pipe meanwhile, so
    at most a chunk per stream is held. Returns (same, detail): the byte and line counts, or where
    and how they differ (exit codes, the first differing line, or one output being longer)."""
    labels = list(cmds)
    if len(labels) != 2:
        return True, "only one implementation: nothing to compare"
    with tempfile.TemporaryFile() as err0, tempfile.TemporaryFile() as err1:
        procs = [subprocess.Popen(cmds[label], stdout=subprocess.PIPE, stderr=err, env=env, cwd=cwd)
                 for label, err in zip(labels, (err0, err1))]
        try:
            same, detail = _compare_streams(procs, labels)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.stdout.close()
                p.wait()
        codes = [p.returncode for p in procs]
    if same and any(codes):
        return False, f"exit codes {dict(zip(labels, codes))}"
    return same, detail


def _compare_streams(procs: list[subprocess.Popen], labels: list[str]) -> tuple[bool, str]:
    bufs = [bytearray(), bytearray()]
    done = [False, False]
    compared = lines = 0
    while not (done[0] and done[1]):
        i = 0 if not done[0] and (done[1] or len(bufs[0]) <= len(bufs[1])) else 1
        chunk = procs[i].stdout.read1(_CHUNK)
        if chunk:
            bufs[i] += chunk
        else:
            done[i] = True
        n = min(len(bufs[0]), len(bufs[1]))
        if n:
            if bufs[0][:n] != bufs[1][:n]:
                at = next(k for k in range(n) if bufs[0][k] != bufs[1][k])
                line = lines + bufs[0].count(b"\n", 0, at) + 1
                return False, f"outputs differ at byte {compared + at:,} (line {line:,}): " + "; ".join(
                    f"{label} {_line_at(buf, at)!r}" for label, buf in zip(labels, bufs))
            lines += bufs[0].count(b"\n", 0, n)
            compared += n
            del bufs[0][:n], bufs[1][:n]
        for j in (0, 1):  # one output ended, the other goes on
            if done[j] and bufs[1 - j]:
                return False, f"{labels[1 - j]} prints more than {labels[j]}: from byte {compared:,} " \
                              f"{_line_at(bufs[1 - j], 0)!r}"
    return True, f"identical: {compared:,} bytes, {lines:,} lines"


def _line_at(buf: bytearray, at: int) -> bytes:
    """The (partial) line of ``buf`` around position ``at``, at most 160 bytes."""
    start = buf.rfind(b"\n", 0, at) + 1
    end = buf.find(b"\n", at)
    return bytes(buf[start:end if end >= 0 else len(buf)][:160])
