"""``--quiet``/``-q`` on every command (issue 24, item 9): only results and errors. stdout and the exit
code are those of the run without it; stderr keeps the warnings, findings and errors (each a line the
run without ``-q`` writes too) and drops the notes for people: the engine line, the as-of lines, hints,
summaries, the manifest's digest line, the progress bar (docs/cli.md, "--quiet")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from forensics.cli import console
from forensics.cli.app import COMMANDS, app

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
SEGMENT = EXAMPLE / "broker-1" / "orders-0" / "00000000000000000000.log"
NOTES = ("engine ", "as of ", "file times", "manifest: ", "report: ", "see --all", "nothing is proven hanging")


def every_command(tmp: Path) -> dict:
    """One run of each command on the example disk (outputs under ``tmp``)."""
    disk = str(EXAMPLE)
    return {
        "scan": ["scan", disk, "--manifest", str(tmp / "m.json")],
        "find-hanging": ["find-hanging", disk],
        "describe-producers": ["describe-producers", disk, "--topic", "orders", "--partition", "0"],
        "list": ["list", disk, "--duration-filter", "0"],
        "describe": ["describe", disk, "--transactional-id", "reporting-app"],
        "abort-commands": ["abort-commands", disk, "--bootstrap-server", "kafka-1:9092"],
        "report": ["report", disk, "--out", str(tmp / "r.html"), "--overwrite"],
        "export": ["export", disk, "--out", str(tmp / "export"), "--overwrite"],
        "dump": ["dump", str(SEGMENT)],
        "verify-manifest": ["verify-manifest", str(tmp / "m.json")],
    }


def run(args: list[str]):
    return CliRunner().invoke(app, args, env={"KAFKA_FORENSICS_ENGINE": "local"})


def test_every_command_takes_quiet_and_q():
    group = typer.main.get_command(app)
    for name, _, _ in COMMANDS:
        opts = [tuple(p.opts) for p in group.commands[name].params if "--quiet" in p.opts]
        assert opts == [("--quiet", "-q")], name


def test_quiet_keeps_stdout_and_exit_code_and_drops_the_notes(tmp_path: Path):
    cases = every_command(tmp_path)
    assert set(cases) == {name for name, _, _ in COMMANDS}
    for name, args in cases.items():  # in order: scan writes the manifest verify-manifest checks
        loud = run(args)
        quiet = run([*args, "-q" if name != "dump" else "--quiet"])
        assert (quiet.exit_code, quiet.stdout) == (loud.exit_code, loud.stdout), name
        assert quiet.exit_code in (0, 1), (name, loud.stderr)
        assert quiet.stderr == "", (name, quiet.stderr)  # the example disk: no warning, no finding
        if name not in ("dump", "verify-manifest"):  # what -q leaves out was there without it
            assert any(note in loud.stderr for note in NOTES), (name, loud.stderr)


def test_quiet_keeps_warnings_findings_and_errors(tmp_path: Path):
    """On a damaged copy (a torn segment tail, the metadata log dir left out) find-hanging -q still
    writes the finding and the warning that make it exit 7, and not the hint about exit 7; dump -q
    still says which file it could not read."""
    disk = tmp_path / "disk"
    shutil.copytree(EXAMPLE, disk)
    shutil.rmtree(disk / "broker-1" / "__cluster_metadata-0")
    segment = disk / "broker-1" / "orders-0" / SEGMENT.name
    segment.write_bytes(segment.read_bytes()[:-7])
    loud, quiet = run(["find-hanging", str(disk)]), run(["find-hanging", str(disk), "-q"])
    assert loud.exit_code == quiet.exit_code == 7 and loud.stdout == quiet.stdout
    kept = quiet.stderr.splitlines()
    assert kept and set(kept) <= set(loud.stderr.splitlines())
    assert any("truncated_tail" in line for line in kept)
    assert any(line.startswith("WARNING: evidence:") for line in kept)
    assert not [line for line in kept if any(note in line for note in NOTES)]
    assert len(kept) < len(loud.stderr.splitlines())

    gone = run(["dump", str(tmp_path / "no-such.log"), str(segment), "-q"])
    assert gone.exit_code == 3
    assert gone.stderr.splitlines()[0] == f"kafka-forensics: {tmp_path / 'no-such.log'}: no such file"
    assert "truncated_tail" in gone.stderr


def test_quiet_turns_the_progress_bar_off(monkeypatch):
    asked = []
    monkeypatch.setattr(console, "byte_progress", lambda total, label, enabled: asked.append(enabled))
    try:
        for quiet in (False, True):
            console.set_quiet(quiet)
            console.StderrListener(progress=True).progress(100, "reading")
    finally:
        console.set_quiet(False)
    assert asked == [True, False]


@pytest.mark.parametrize("quiet", [False, True])
def test_the_option_sets_quiet_for_the_run_and_resets_it(quiet):
    """The flag is set by every command as it is parsed, given or not: a run without -q after one
    with it is not quiet."""
    args = ["list", str(EXAMPLE), "--format", "csv"]
    run([*args, "-q"])
    assert console.is_quiet()
    run([*args, *(["-q"] if quiet else [])])
    assert console.is_quiet() is quiet
    console.set_quiet(False)
