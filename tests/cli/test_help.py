"""``--help`` as documentation: the commands in the order of an investigation, every option name
whole at 80 columns (and narrower), the text folded at the screen's width (``COLUMNS``, 80 in a pipe),
flags without a value placeholder, and 1-3 examples per command that really run on the example disk
with the exit status they are shown with."""

from __future__ import annotations

import os
import re
import subprocess
import sys
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
from forensics.cli import help_text
from forensics.cli.app import app

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = ["scan", "find-hanging", "describe-producers", "list", "describe", "abort-commands", "report",
            "export", "dump", "verify-manifest"]  # issue 17, in this order


def commands() -> dict[str, object]:
    return typer.main.get_command(app).commands


def help_of(args: list[str], columns: int = 80) -> str:
    """The help as printed in a terminal ``columns`` wide (typer's CliRunner would force 80)."""
    group = typer.main.get_command(app)
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        ctx = group.context_class(group, info_name="kafka-forensics")
        if args:
            cmd = group.commands[args[0]]
            ctx = cmd.context_class(cmd, info_name=args[0], parent=ctx)
        return ctx.get_help() + "\n"
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def option_names(cmd) -> list[str]:
    return [name for p in cmd.params if p.param_type_name == "option" for name in (*p.opts, *p.secondary_opts)]


# -- the top level ---------------------------------------------------------------------------------


def test_commands_are_listed_in_workflow_order():
    assert list(help_text.ORDER) == WORKFLOW
    assert sorted(commands()) == sorted(WORKFLOW)  # no command without its place in the help
    out = help_of([])
    listed = re.findall(r"^  ([a-z-]+)  ", out.split("Commands:\n", 1)[1], re.M)
    assert listed == WORKFLOW


def test_top_level_help_gives_each_command_one_line_and_says_where_to_start():
    out = help_of([])
    for name in WORKFLOW:
        line = next(x for x in out.splitlines() if x.startswith(f"  {name} "))
        assert line.split(None, 1)[1] == help_text.summary(name)  # whole, on one line
    assert "Start with 'kafka-forensics scan DIR'" in out


def test_help_at_a_fixed_terminal_width_as_a_process():
    env = dict(os.environ, COLUMNS="80")
    for args in ([], ["abort-commands"]):
        p = subprocess.run([sys.executable, "-m", "forensics", *args, "--help"], capture_output=True, text=True,
                           env=env, timeout=60)
        assert p.returncode == 0 and p.stderr == ""
        assert max(len(x) for x in p.stdout.splitlines()) <= 80
    assert "--bootstrap-server HOST:PORT" in p.stdout
    assert "--max-transaction-timeout MINUTES" in p.stdout


# -- every command's help ----------------------------------------------------------------------------


@pytest.mark.parametrize("columns", [80, 60])
@pytest.mark.parametrize("name", WORKFLOW)
def test_every_option_name_appears_whole(name, columns):
    out = help_of([name], columns)
    assert "…" not in out
    assert max(len(x) for x in out.splitlines()) <= 80
    for option in option_names(commands()[name]):
        assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", out), (name, option)


@pytest.mark.parametrize("name", WORKFLOW)
def test_flags_take_no_value_and_show_none(name):
    cmd = commands()[name]
    out = help_of([name])
    assert not re.search(r"<(bool|str|int|float|list|path|local)", out), out  # no <bool>, <str>, <int range>...
    for p in cmd.params:
        if p.param_type_name != "option":
            continue
        row = next(x for x in out.splitlines() if x.startswith("  -")
                   and all(re.search(rf"(?<![\w-]){o}(?![\w-])", x) for o in (*p.opts, *p.secondary_opts)))
        names = row.strip().split("  ")[0]
        if p.is_flag:
            assert re.fullmatch(r"[\w, /-]+", names), row  # nothing after the names
            assert p.metavar is None
        else:
            assert p.metavar and names.endswith(" " + p.metavar), row  # a value, named


def test_a_flag_given_a_value_is_not_taken_for_it():
    r = CliRunner().invoke(app, ["find-hanging", str(REPO / "fixtures" / "example-disk"), "--all", "true"])
    assert r.exit_code == 3 and "true" in r.stderr  # "true" is a PATH, which does not exist


# -- the examples ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", WORKFLOW)
def test_every_command_shows_one_to_three_examples(name):
    examples = help_text.examples(name)
    assert 1 <= len(examples) <= 3
    out = help_of([name])
    for ex in examples:
        assert f"# {ex.what}" in out
        for argv in ex.commands:
            assert argv[0] in commands()
            for line in help_text.command_lines(argv):  # as indented in the help
                assert line in out.splitlines(), (line, out)
    wide = help_of([name], 250).splitlines()
    assert all(line in wide for ex in examples for argv in ex.commands for line in help_text.command_lines(argv))


@pytest.mark.parametrize("columns", [100, 132])
@pytest.mark.parametrize("name", [None, "find-hanging", "list"])
def test_help_folds_at_the_screen_width(name, columns):
    """``-h`` with ``COLUMNS=100`` folds at 100, not at click's 80 (issue 24): no line wider than the
    screen, the text using the room (click leaves 2 columns), and wider screens fold later."""
    args = [name] if name else []
    out = help_of(args, columns)
    widths = [len(x) for x in out.splitlines()]
    assert max(widths) <= columns - 2
    assert max(widths) > 80  # the paragraphs took the room
    assert len(out.splitlines()) < len(help_of(args, 80).splitlines())
    assert len(help_of(args, 200).splitlines()) <= len(out.splitlines())


def test_help_in_a_process_folds_at_columns_and_at_80_in_a_pipe():
    base = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    for columns, limit in (("100", 98), (None, 80)):
        env = dict(base, COLUMNS=columns) if columns else base
        p = subprocess.run([sys.executable, "-m", "forensics", "list", "-h"], capture_output=True, text=True,
                           env=env, timeout=60)
        assert p.returncode == 0 and p.stderr == ""
        widest = max(len(x) for x in p.stdout.splitlines())
        assert 80 - 4 <= widest <= limit, (columns, widest)


EXPECTED_EXIT = {  # every example's exit status: 1 where find-hanging finds the example's hanging transaction
    "scan fixtures/example-disk": 0,
    "scan fixtures/example-disk --format json --as-of 2026-01-01T01:00:00Z": 0,
    "find-hanging fixtures/example-disk": 1,
    "find-hanging fixtures/example-disk --all --format json": 1,
    "describe-producers fixtures/example-disk --topic orders --partition 0 --timeline": 0,
    "list fixtures/example-disk": 0,
    "list fixtures/example-disk --state completecommit --format csv": 0,
    "describe fixtures/example-disk --transactional-id reporting-app": 0,
    "abort-commands fixtures/example-disk --bootstrap-server kafka-1:9092 > abort.sh": 0,
    "report fixtures/example-disk --out report.html --bootstrap-server kafka-1:9092": 0,
    "report fixtures/example-disk --out orders.html --topic orders": 0,
    "export fixtures/example-disk --out example-export": 0,  # in-process (pyarrow)
    "export fixtures/example-disk --out example-export --overwrite --master local[2]": None,  # Spark: tests/spark
    f"dump {help_text.ORDERS_0}": 0,
    f"dump --deep-iteration --print-data-log {help_text.ORDERS_0}": 0,
    f"dump --transaction-log-decoder {help_text.TXN_STATE_0}": 0,
    "scan fixtures/example-disk --manifest evidence.json": 0,
    "verify-manifest evidence.json": 0,
}

EXAMPLES: list[tuple[str, tuple[tuple[str, ...], ...]]] = [
    (c.name, ex.commands) for c in help_text.COMMANDS for ex in c.examples]


def test_every_example_has_its_expected_exit_status():
    shown = [" ".join(argv) for _, lines in EXAMPLES for argv in lines]
    assert sorted(shown) == sorted(EXPECTED_EXIT)


def _expand(word: str, where: Path) -> str:
    """A path pattern, expanded as a shell would (one file here)."""
    if "*" not in word:
        return word
    found = sorted(str(p.relative_to(where)) for p in where.glob(word))
    assert len(found) == 1, (word, found)
    return found[0]


def _run_example(argv: tuple[str, ...], where: Path):
    """Run one command line in ``where`` (which links fixtures/ to the source tree's), ``> FILE``
    writing its stdout there."""
    args, target = [_expand(a, where) for a in argv], None
    if ">" in args:
        args, target = args[: args.index(">")], args[args.index(">") + 1]
    old = os.getcwd()
    os.chdir(where)
    try:
        r = CliRunner().invoke(app, args, env={"KAFKA_FORENSICS_ENGINE": "local"})
    finally:
        os.chdir(old)
    if target is not None:
        (where / target).write_text(r.stdout, encoding="utf-8")
    return r


@pytest.mark.parametrize("name, lines", [pytest.param(n, c, id=" && ".join(" ".join(a) for a in c))
                                          for n, c in EXAMPLES])
def test_the_example_runs_on_the_example_disk(name, lines, tmp_path):
    (tmp_path / "fixtures").symlink_to(REPO / "fixtures")
    for argv in lines:
        expected = EXPECTED_EXIT[" ".join(argv)]
        cmd = commands()[argv[0]]
        args = [_expand(a, tmp_path) for a in (argv[1: argv.index(">")] if ">" in argv else argv[1:])]
        cmd.make_context(argv[0], args)  # the options parse, whether or not it can run here
        if expected is None:
            continue
        r = _run_example(argv, tmp_path)
        assert r.exit_code == expected, (argv, r.stderr)
        assert "Traceback" not in r.stderr
    if name == "abort-commands":
        script = (tmp_path / "abort.sh").read_text(encoding="utf-8")
        assert "kafka-transactions.sh --bootstrap-server kafka-1:9092 abort --topic orders --partition 0" in script
    if name == "report":
        out = lines[0][lines[0].index("--out") + 1]
        assert (tmp_path / out).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    if name == "verify-manifest":
        assert r.stdout.startswith("OK: all match;")


def test_the_help_screen_in_docs_is_the_one_printed():
    """docs/cli.md shows ``describe-producers -h`` at 80 columns as printed (``...`` skips lines)."""
    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    shown = doc.split("$ kafka-forensics describe-producers -h\n", 1)[1].split("```", 1)[0].splitlines()
    printed = help_of(["describe-producers"]).splitlines()
    at, skip = 0, False
    for line in shown:
        if line.strip() == "...":
            skip = True
            continue
        if skip and not line:
            continue
        if skip:  # "..." stands for the lines up to the next one shown
            at, skip = printed.index(line, at), False
        assert printed[at] == line, (at, line)
        at += 1
    assert at == len(printed) and printed.index("  Examples (on fixtures/example-disk of the source tree):") > 20
