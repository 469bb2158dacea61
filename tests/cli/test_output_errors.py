"""When stdout fails (issue 15, item 13): a closed pipe ends every command quietly with exit 0; a
write that fails (a full disk) ends it with the output error code, 74, and one line, never exit 70
"internal error". Every command in the process through :func:`forensics.cli.app.main` (stdout a
stream that fails like the real one), and the issue's cases as real processes."""

from __future__ import annotations

import errno
import io
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.cli.app import EXIT_CODES, EXIT_OUTPUT, main
from tests.engine_lines import BY_ENV

REPO = Path(__file__).resolve().parents[2]
DISK = REPO / "fixtures" / "example-disk"
SEGMENT = DISK / "broker-1" / "orders-0" / "00000000000000000000.log"
FULL = "kafka-forensics: cannot write to stdout: No space left on device\n"


class _ClosedPipe(io.TextIOBase):
    """A pipe whose reader has gone: every write fails with EPIPE."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


class _FullDisk(io.TextIOBase):
    """A file on a full disk: every write fails with ENOSPC."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _commands(tmp: Path) -> list[list[str]]:
    manifest = tmp / "m.json"
    local = ["--engine", "local", "--no-progress"]
    return [
        ["scan", str(DISK), *local], ["scan", str(DISK), "--format", "json", *local],
        *(["find-hanging", str(DISK), "--all", "--format", f, *local] for f in ("table", "json", "csv")),
        ["list", str(DISK), *local], ["describe", str(DISK), "--transactional-id", "reporting-app", *local],
        ["describe-producers", str(DISK), "--topic", "orders", "--partition", "0", *local],
        ["abort-commands", str(DISK), "--bootstrap-server", "b:9092", "--manifest", str(manifest), *local],
        ["dump", str(SEGMENT), "--print-data-log"], ["dump", str(SEGMENT), "--format", "json"],
        ["verify-manifest", str(manifest)],
    ]


@pytest.fixture
def run_main(monkeypatch, capsys):
    """``run_main(argv, stdout) -> (exit code, stderr)``: the CLI's entry point in this process."""
    handler = signal.getsignal(signal.SIGINT)

    def run(argv: list[str], stdout) -> tuple:
        monkeypatch.setattr(sys, "stdout", stdout)
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code
        finally:
            signal.signal(signal.SIGINT, handler)
        monkeypatch.undo()
        return code, capsys.readouterr().err

    return run


def test_a_closed_pipe_ends_every_command_quietly(tmp_path: Path, run_main) -> None:
    for argv in _commands(tmp_path):
        code, err = run_main(argv, _ClosedPipe())
        assert code == 0, (argv, err)
        for noise in ("Broken pipe", "BrokenPipe", "Traceback", "internal error", "Exception ignored"):
            assert noise not in err, (argv, err)


def test_a_full_disk_is_the_output_error_in_one_line(tmp_path: Path, run_main) -> None:
    assert EXIT_OUTPUT == 74 and "output" in EXIT_CODES[EXIT_OUTPUT]
    run_main(_commands(tmp_path)[-4], io.StringIO())  # abort-commands writes the manifest the last one checks
    for argv in _commands(tmp_path):
        code, err = run_main(argv, _FullDisk())
        assert (code, err.count("\n"), err.splitlines()[-1] + "\n") == (EXIT_OUTPUT, err.count("\n"), FULL), argv
        assert err.count("cannot write") == 1 and "internal error" not in err and "Traceback" not in err, (argv, err)


def _env() -> dict:
    """This environment for a real process of ours: in-process engine, no debug tracebacks."""
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_DEBUG"}
    env["KAFKA_FORENSICS_ENGINE"] = "local"
    return env


def _shell(command: str, tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=_env(), cwd=tmp, timeout=300)


def test_scan_into_head_exits_0_as_a_real_process(tmp_path: Path) -> None:
    prog = f"{shlex.quote(sys.executable)} -m forensics"
    done = _shell(f"{prog} scan {shlex.quote(str(DISK))} | head -1; echo \"rc=${{PIPESTATUS[0]}}\"", tmp_path)
    first, rc = done.stdout.splitlines()
    assert first.startswith("Log directories") and rc == "rc=0"
    # no error line: the engine's, then at most the clock's note, when the whole table fit the pipe before head left
    lines = done.stderr.splitlines()
    assert lines[:1] == [BY_ENV] and all(ln.startswith("file times look like copy times: ") for ln in lines[1:]), \
        done.stderr
    # the reader gone before the first write (a pipe whose read end is closed before the run starts,
    # where `| true` could still be reading under load), so that every write fails
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "forensics", "scan", str(DISK)], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, env=_env(), cwd=tmp_path, timeout=300)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, BY_ENV + "\n")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("command", ["scan", "find-hanging --format csv"])
def test_a_full_disk_as_a_real_process(tmp_path: Path, command: str) -> None:
    prog = f"{shlex.quote(sys.executable)} -m forensics"
    done = _shell(f"{prog} {command} {shlex.quote(str(DISK))} > /dev/full", tmp_path)
    assert (done.returncode, done.stderr) == (EXIT_OUTPUT, BY_ENV + "\n" + FULL)
