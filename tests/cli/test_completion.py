"""Shell completion (issue 24, item 9): ``--install-completion`` and ``--show-completion`` (typer's), and
the answers the shell asks for at each Tab: command names from the table of summaries without loading
a command (cli/lazy_group.py), a command's options and choices from that command alone, plain help
texts without rich's renderer, so that a Tab costs no more than ``--version``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.cli import app as cli_app

REPO = Path(__file__).resolve().parents[2]
COMMAND_MODULES = sorted({module for _, module, _ in cli_app.COMMANDS})
VAR = "_KAFKA_FORENSICS_COMPLETE"

_PROBE = """
import atexit, json, sys
out = sys.argv.pop(1)
atexit.register(lambda: json.dump(sorted(sys.modules), open(out, "w")))
from forensics.__main__ import run
run()
"""


def complete(tmp_path: Path, env: dict[str, str]) -> tuple[str, set[str]]:
    """What the program answers the shell (``env``: the shell's request), and the modules it loaded."""
    probe, out = tmp_path / "probe.py", tmp_path / "modules.json"
    probe.write_text(_PROBE, encoding="utf-8")
    done = subprocess.run([sys.executable, str(probe), str(out)], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout, set(json.loads(out.read_text(encoding="utf-8")))


def bash(tmp_path: Path, line: str) -> tuple[list[str], set[str]]:
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    out, loaded = complete(tmp_path, {VAR: "complete_bash", "COMP_WORDS": line, "COMP_CWORD": str(cword)})
    return [x for x in out.splitlines() if x], loaded


def commands_loaded(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded if m in COMMAND_MODULES)


def test_the_root_offers_install_and_show_completion():
    done = subprocess.run([sys.executable, "-m", "forensics", "--help"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert "--install-completion" in done.stdout and "--show-completion" in done.stdout


def test_show_completion_prints_the_bash_script():
    """Run from bash (typer detects the shell from the parent process): the script to source. A second
    command keeps bash from exec'ing the first (bash would no longer be its parent)."""
    done = subprocess.run(["bash", "-c", f"{sys.executable} -m forensics --show-completion; exit $?"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"{VAR}=complete_bash" in done.stdout
    assert "complete -o default -F _kafka_forensics_completion kafka-forensics" in done.stdout  # else: file names


def test_command_names_are_completed_without_loading_a_command(tmp_path: Path):
    names, loaded = bash(tmp_path, "kafka-forensics ")
    assert names == [name for name, _, _ in cli_app.COMMANDS]
    assert commands_loaded(loaded) == []
    names, loaded = bash(tmp_path, "kafka-forensics de")
    assert names == ["describe-producers", "describe"] and commands_loaded(loaded) == []
    options, _ = bash(tmp_path, "kafka-forensics --")
    assert "--version" in options and "--show-completion" in options


def test_a_commands_options_and_choices_load_that_command_only(tmp_path: Path):
    options, loaded = bash(tmp_path, "kafka-forensics list --")
    assert {"--duration-filter", "--transactional-id-pattern", "--quiet", "--format"} <= set(options)
    assert commands_loaded(loaded) == ["forensics.cli.state_cmd"]
    assert not [m for m in loaded if m.startswith(("pyspark", "py4j"))]
    choices, _ = bash(tmp_path, "kafka-forensics find-hanging --format ")
    assert choices == ["table", "text", "json", "jsonl", "csv"]
    paths, _ = bash(tmp_path, "kafka-forensics scan fix")
    assert paths == []  # nothing of ours: bash completes file names (complete -o default)


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_described_answers_keep_the_help_plain_and_load_no_renderer(tmp_path: Path, shell):
    env = {VAR: f"complete_{shell}", "_TYPER_COMPLETE_ARGS": "kafka-forensics d"}
    if shell == "fish":
        env["_TYPER_COMPLETE_FISH_ACTION"] = "get-args"
    out, loaded = complete(tmp_path, env)
    assert "describe-producers" in out and "its metadata and history" in out
    assert commands_loaded(loaded) == []
    assert "typer.rich_utils" not in loaded and "pydantic" not in loaded  # 0.3 s a Tab key otherwise
