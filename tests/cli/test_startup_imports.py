"""Start-up loads only what the command run needs (issue 23, "Start in a blink"; docs/performance.md,
"Start-up"): importing the CLI loads no command, no run, no pipeline and no Spark; ``dump`` of a
segment loads its own command and nothing of the whole-disk machinery; ``--help`` lists every
command without loading one. Each case runs in a fresh interpreter and reads ``sys.modules`` at
its very end (after every exit hook but its own), so that an import at exit counts too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.cli import app as cli_app
from forensics.cli import coercion, help_text

REPO = Path(__file__).resolve().parents[2]
SEGMENT = "fixtures/example-disk/broker-1/orders-0/00000000000000000000.log"
COMMAND_MODULES = sorted({module for _, module, _ in cli_app.COMMANDS})
SPARK = ("pyspark", "py4j")

# Runs the CLI (or only imports it) and writes the modules loaded at the very end of the process: the
# hook is registered first, so it runs last (atexit runs last-in, first-out).
_PROBE = """
import atexit, json, sys
out = sys.argv.pop(1)
atexit.register(lambda: json.dump(sorted(sys.modules), open(out, "w")))
if sys.argv[1:] == ["--import-only"]:
    import forensics.cli.app
else:
    from forensics.__main__ import run
    run()
"""


def _loaded(tmp_path: Path, *args: str) -> set[str]:
    probe = tmp_path / "probe.py"
    probe.write_text(_PROBE, encoding="utf-8")
    out = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, str(probe), str(out), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return set(json.loads(out.read_text(encoding="utf-8")))


def _under(modules: set[str], *packages: str) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def test_importing_the_cli_loads_no_command_run_pipeline_or_spark(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path, "--import-only")
    assert "forensics.cli.app" in loaded  # the probe really imported it
    assert _under(loaded, *SPARK) == []
    assert _under(loaded, "forensics.pipeline", "forensics.runs") == []
    assert _under(loaded, *COMMAND_MODULES) == []


@pytest.mark.parametrize("args", [("--version",), ("--help",)], ids=["version", "help"])
def test_version_and_help_load_no_command(tmp_path: Path, args) -> None:
    loaded = _loaded(tmp_path, *args)
    assert _under(loaded, *COMMAND_MODULES, "forensics.pipeline", "forensics.runs", *SPARK) == []
    if coercion.RuntimeParam is not None:  # typer converts through pydantic: not for these
        assert _under(loaded, "pydantic") == []


def test_dump_loads_its_command_and_no_pipeline_or_spark(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path, "dump", SEGMENT)
    assert _under(loaded, *COMMAND_MODULES) == ["forensics.cli.dump_cmd"]
    assert _under(loaded, "forensics.pipeline", *SPARK) == []
    # nor the machinery of whole disks: discovery, the engine's context, the manifest (no --manifest)
    assert _under(loaded, "forensics.layout.discovery", "forensics.runs.context", "forensics.runs.manifest",
                  "forensics.analysis") == []
    if coercion.RuntimeParam is not None:  # its option values converted without pydantic (cli/coercion.py)
        assert _under(loaded, "pydantic") == []


def test_a_whole_disk_command_loads_its_own_command_only_and_no_spark(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path, "scan", "fixtures/example-disk", "--engine", "auto")
    assert _under(loaded, *COMMAND_MODULES) == ["forensics.cli.scan_cmd"]
    assert "forensics.pipeline.local" in loaded  # it ran, in-process
    assert _under(loaded, *SPARK, "forensics.pipeline.spark", "forensics.pipeline.spark_session") == []


def test_the_commands_are_registered_in_the_order_of_the_help() -> None:
    """cli/app.py's table and cli/help_text.py's list name the same commands in the same order, and
    each entry names a function that exists (loading every command, as the tests of the help do)."""
    import importlib

    assert tuple(name for name, _, _ in cli_app.COMMANDS) == help_text.ORDER
    for name, module, function in cli_app.COMMANDS:
        assert callable(getattr(importlib.import_module(module), function)), name
