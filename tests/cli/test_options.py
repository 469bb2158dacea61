"""One set of options, one meaning: an option of the same name has the same type, default, value
name and help on every command that takes it (a new command that defines its own drifts and fails
here), the few rightful differences are declared in cli/options.py with their reason, choices are
taken in any case, and docs/cli.md's table of shared options names exactly the commands that take
each one."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import forensics.cli.dump_cmd  # noqa: F401  (registers the commands on the app)
import forensics.cli.evidence  # noqa: F401
import forensics.cli.export_cmd  # noqa: F401
import forensics.cli.hanging_cmd  # noqa: F401
import forensics.cli.report_cmd  # noqa: F401
import forensics.cli.scan_cmd  # noqa: F401
import forensics.cli.state_cmd  # noqa: F401
from forensics.cli import options
from forensics.cli.app import app
from tests.machine_output import jsonl_rows, rows_of

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
FIELDS = ("kind", "type", "choices", "default", "help", "metavar", "required", "envvar", "range",
          "case_sensitive", "multiple", "secondary")


def commands():
    return typer.main.get_command(app).commands


def spec(p) -> dict[str, str]:
    desc = p.type_descriptor
    choices = tuple(str(getattr(c, "value", c)) for c in desc.choices) if desc.is_choice else None
    default = getattr(p.default, "value", p.default)
    return {
        "kind": "flag" if getattr(p, "is_flag", False) else p.param_type_name,
        "type": repr(desc.annotation if not desc.is_choice else "choice"),
        "choices": repr(choices),
        "default": repr(default),
        "help": p.help or "",
        "metavar": repr(p.metavar),
        "required": repr(p.required),
        "envvar": repr(p.envvar),
        "range": repr((getattr(p, "min", None), getattr(p, "max", None))),
        "case_sensitive": repr(desc.case_sensitive if desc.is_choice else None),
        "multiple": repr(getattr(p, "multiple", False)),
        "secondary": repr(tuple(getattr(p, "secondary_opts", ()))),
    }


def by_name() -> dict[str, list[tuple[str, dict[str, str]]]]:
    out: dict[str, list[tuple[str, dict[str, str]]]] = defaultdict(list)
    for cmd_name, cmd in commands().items():
        for p in cmd.params:
            key = p.opts[0] if p.param_type_name == "option" else p.name
            out[key].append((cmd_name, spec(p)))
    return out


def test_one_name_one_meaning():
    """Every field of a shared option is the same on every command, except those cli/options.py
    declares (with the reason) for that option, and each declared difference is real."""
    seen = {}
    for name, entries in by_name().items():
        if len(entries) < 2:
            continue
        differing = {f for f in FIELDS if len({s[f] for _, s in entries}) > 1}
        declared = set(options.VARIES.get(name, {}))
        assert differing == declared, (name, {f: {c: s[f] for c, s in entries} for f in differing ^ declared})
        seen[name] = differing
    assert set(options.VARIES) <= set(seen), "a declared difference for an option no two commands share"
    for name, reasons in options.VARIES.items():
        assert all(len(why) > 20 for why in reasons.values()), name  # each difference says why


def test_format_offers_renderers_of_one_meaning():
    """``--format``: each command offers some of one set of renderers, each name with one meaning,
    the first offered the default, any case."""
    for cmd_name, s in by_name()["--format"]:
        choices = eval(s["choices"])  # noqa: S307 - our own repr of a tuple of str
        assert set(choices) <= set(options.RENDERERS), (cmd_name, choices)
        assert eval(s["default"]) == choices[0]  # noqa: S307
        assert s["case_sensitive"] == "False", cmd_name
        stream = options.JSON_STREAM in s["help"]  # dump: json is the old name of jsonl, the same lines
        assert stream == (cmd_name == "dump")
        shown = [c for c in choices if not (stream and c == "json")]
        assert s["help"] == options.format_help(*shown, stream=stream), cmd_name
        assert s["metavar"] == repr("|".join(shown))
        for choice in shown:
            assert f"{choice} ({options.RENDERERS[choice]})" in s["help"]


def test_rows_print_as_table_json_jsonl_and_csv():
    for cmd_name in ("find-hanging", "describe-producers", "list", "describe"):
        s = dict(by_name()["--format"])[cmd_name]
        assert eval(s["choices"]) == ("table", "text", "json", "jsonl", "csv"), cmd_name  # noqa: S307


def test_choices_are_taken_in_any_case():
    run = CliRunner().invoke
    env = {"KAFKA_FORENSICS_ENGINE": "local"}
    lower = run(app, ["list", str(EXAMPLE), "--format", "json"], env=env)
    upper = run(app, ["list", str(EXAMPLE), "--format", "JSON", "--engine", "LOCAL"], env=env)
    assert lower.exit_code == upper.exit_code == 0
    assert upper.stdout == lower.stdout and rows_of(lower.stdout)
    for cmd_name, cmd in commands().items():
        for p in cmd.params:
            if p.type_descriptor.is_choice:
                assert not p.type_descriptor.case_sensitive, (cmd_name, p.opts)


def test_jsonl_is_one_row_per_line():
    run = CliRunner().invoke
    env = {"KAFKA_FORENSICS_ENGINE": "local"}
    doc = rows_of(run(app, ["list", str(EXAMPLE), "--format", "json"], env=env).stdout)
    lines = jsonl_rows(run(app, ["list", str(EXAMPLE), "--format", "jsonl"], env=env).stdout)
    assert lines == doc and len(lines) == 3


def _doc_table() -> dict[str, set]:
    """docs/cli.md's table of shared options: option -> the commands it names."""
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("## Options shared by commands", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = re.split(r"(?<!\\)\|", line)
        if len(cells) > 3 and cells[1].strip().startswith("`--"):
            for option in re.findall(r"`(--[a-z-]+)", cells[1]):
                rows[option] = {c.strip(" `") for c in cells[2].split(",")}
    return rows


def test_docs_name_the_commands_of_every_shared_option():
    documented = _doc_table()
    actual = {name: {c for c, _ in entries} for name, entries in by_name().items()
              if name.startswith("--") and len(entries) > 1 and name != "--help"}
    assert documented == actual


@pytest.mark.parametrize("option, commands_taking_it", [
    # an engine only where an engine runs: dump streams its files in this process, verify-manifest
    # reads the manifest and hashes the files
    ("--engine", {"scan", "find-hanging", "describe-producers", "list", "describe", "abort-commands", "report",
                  "export"}),
    # a progress bar wherever the disks are read as a whole
    ("--progress", {"scan", "find-hanging", "describe-producers", "list", "describe", "abort-commands", "report",
                    "export"}),
])
def test_an_option_only_where_it_does_something(option, commands_taking_it):
    assert {c for c, _ in by_name()[option]} == commands_taking_it


def test_dump_refuses_an_engine_it_would_not_use():
    r = CliRunner().invoke(app, ["dump", "--engine", "spark", str(EXAMPLE / "broker-1" / "orders-0" /
                                                                      "00000000000000000000.log")])
    assert r.exit_code == 2 and "No such option: --engine" in r.stderr


@pytest.mark.parametrize("args", [["--all", "true"], ["--all", "TRUE", str(EXAMPLE)]])
def test_a_flag_given_a_value_is_told_it_takes_none(args: list[str], tmp_path: Path) -> None:
    """``--all true`` was "true: no such file or directory" (click reads the word as a path)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "forensics", "find-hanging", str(EXAMPLE), *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    word = args[1]
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f'kafka-forensics: --all is a flag and takes no value: write --all alone ("{word}" is not a path)\n'


def test_a_path_named_true_is_still_a_path(tmp_path: Path) -> None:
    """Only a word that names no path is refused: a log dir copied as ./true is read."""
    import shutil
    import subprocess
    import sys

    shutil.copytree(EXAMPLE, tmp_path / "true")
    done = subprocess.run([sys.executable, "-m", "forensics", "find-hanging", "--all", "true", "--engine", "local"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 1 and "orders" in done.stdout, done.stderr
