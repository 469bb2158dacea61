"""Our command line as an operator runs it (a child process), and what its outputs say, for the e2e tests
and the real-evidence generator (``tests/e2e/live_evidence.py``)."""

from __future__ import annotations

import subprocess
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from tests.machine_output import rows_of

UNUSED_BOOTSTRAP = "127.0.0.1:9"  # abort-commands needs one; nothing connects to it


def forensics(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """The kafka-forensics CLI, as an operator runs it."""
    return subprocess.run([sys.executable, "-m", "forensics", *args, "--engine", "local", "--no-progress"],
                          capture_output=True, text=True, timeout=timeout)


def forensics_here(*args: str) -> subprocess.CompletedProcess:
    """The same command line run in this process (typer's ``CliRunner``), for evidence analysed after the fact
    (a copy taken earlier, the broker stopped): a child process would add only its start-up, ~0.5 s CPU a run.
    An exception that escapes is written to stderr as a child's would be (``Traceback ...``), exit 1."""
    from typer.testing import CliRunner

    from forensics.cli.app import app

    argv = [*args, "--engine", "local", "--no-progress"]
    r = CliRunner().invoke(app, argv)
    err = r.stderr
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        err += "".join(traceback.format_exception(*r.exc_info))
    return subprocess.CompletedProcess(["kafka-forensics", *argv], r.exit_code, r.stdout, err)


def armed_lines(script: str) -> list[str]:
    """The guard calls and abort lines an abort-commands script runs (not its comments, not kf_guard's body)."""
    lines = (ln.strip() for ln in script.splitlines())
    return [ln for ln in lines if ln.startswith(("kf_guard --", "kafka-transactions.sh "))]


def row_summary(row: dict) -> dict:
    """The parts of a find-hanging --format json row that the ground truth is compared with."""
    ev = row.get("evidence") or {}
    preview = row.get("abortPreview") or {}
    keep = ("topic", "partition", "producerId", "producerEpoch", "coordinatorEpoch", "startOffset", "verdict",
            "reason", "transactionalId", "armed", "notArmedBecause", "coordinatorPartition", "lastSequence",
            "lastTimestamp")
    out = {k: row.get(k) for k in keep}
    out.update({"logStartOffset": ev.get("logStartOffset"), "highWatermark": ev.get("highWatermark"),
                "lastStableOffset": ev.get("lastStableOffset")})
    if preview:
        out["abortPreview"] = {k: preview.get(k) for k in (
            "firstOffset", "lastOffset", "batches", "records", "lastStableOffset", "lsoAfterAbort", "keys")}
    return out


def json_rows(r: subprocess.CompletedProcess) -> list[dict]:
    try:
        return rows_of(r.stdout) if r.stdout.strip() else []
    except (ValueError, AssertionError, KeyError):
        return []


def script_head(script: str) -> list[str]:
    """The comment lines an abort-commands script opens with (inputs, as-of, warnings), up to ``set -eu``."""
    head = []
    for ln in script.splitlines():
        if ln.startswith("set -eu"):
            break
        head.append(ln)
    return head


def run_summary(r: subprocess.CompletedProcess) -> dict:
    return {"rc": r.returncode, "stderr": r.stderr.splitlines(), "traceback": "Traceback" in r.stderr}


def analyse(paths: Sequence[Path], bootstrap: str = UNUSED_BOOTSTRAP,
            run: Callable[..., subprocess.CompletedProcess] = forensics) -> dict:
    """find-hanging (default options, then --all, both --format json) and abort-commands on ``paths``, each a
    child process (``run=forensics_here``: in this process)."""
    args = [str(p) for p in paths]
    fh = run("find-hanging", *args, "--format", "json")
    fh_all = run("find-hanging", *args, "--all", "--format", "json")
    ac = run("abort-commands", *args, "--bootstrap-server", bootstrap)
    return {
        "find_hanging": dict(run_summary(fh), rows=[row_summary(r) for r in json_rows(fh)]),
        "find_hanging_all": dict(run_summary(fh_all), rows=[row_summary(r) for r in json_rows(fh_all)]),
        "abort_commands": dict(run_summary(ac), armed=armed_lines(ac.stdout), head=script_head(ac.stdout),
                               comments=[ln for ln in ac.stdout.splitlines() if ln.startswith("# kafka-transactions.sh")]),
    }
