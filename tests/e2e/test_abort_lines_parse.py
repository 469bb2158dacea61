"""Every abort line we emit is accepted by the real tools' argument parsers, as the values we meant.

Lines: every ``kafka-transactions.sh ... abort`` line of ``abort-commands`` (armed or as a comment, every
form, every row) on every fixture: ``fixtures/example-disk``, each ``fixtures/hanging-scenarios`` disk
(built, at its as-of), each ``fixtures/real`` disk as it is and without its ``__transaction_state``
partitions; with and without ``--command-config``. Plus the ``describe-producers`` command each
``kf_guard`` line runs.

* ``kafka-transactions.sh`` 4.1.0: all lines through its own parser in one JVM
  (``AbortArgsCheck.java``: ``TransactionsCommand.execute`` stopped right after parsing), no broker; the
  namespace it produced must hold the line's values. Two malformed control lines must be rejected.
* kafka-python 3.x's admin CLI (``python -m kafka.admin``): its ``main_parser`` in-process.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
from fixtures import hanging_scenarios as hs
from forensics.cli.app import app
from tests.e2e.kafka_broker import KAFKA_HOME, broker_problem
from tests.spark.cluster import find_java

REPO = Path(__file__).resolve().parents[2]
CHECKER = Path(__file__).with_name("AbortArgsCheck.java")
SEP = "\x1f"
CONFIG = "/etc/kafka/admin client.properties"  # a space: the quoting must survive
runner = CliRunner()


def _checker_problem():
    problem = broker_problem()
    if problem:
        return problem
    java = find_java()
    modules = subprocess.run([java.java, "--list-modules"], capture_output=True, text=True, timeout=120).stdout
    if "jdk.compiler@" not in modules:
        return f"{java.java} has no jdk.compiler module: Java's source launcher cannot run AbortArgsCheck.java"
    return None


def _scripts(tmp: Path) -> dict[str, str]:
    """abort-commands' script for every fixture disk, by a name saying which."""
    disks = {"example-disk": (REPO / "fixtures" / "example-disk", [])}
    for name in hs.SCENARIOS:
        as_of = json.loads((REPO / "fixtures" / "hanging-scenarios" / name / "expected.json").read_text())["asOf"]
        disks[name] = (hs.build(name, tmp / name), ["--as-of", str(as_of)])
    for run in sorted((REPO / "fixtures" / "real").glob("*/disk")):
        disks[f"real/{run.parent.name}"] = (run, [])
        bare = tmp / "no-coordinator" / run.parent.name
        shutil.copytree(run, bare, ignore=shutil.ignore_patterns("__transaction_state-*"))
        disks[f"real/{run.parent.name} without __transaction_state"] = (bare, [])
    out = {}
    for name, (disk, extra) in disks.items():
        for config in ([], ["--command-config", CONFIG]):
            r = runner.invoke(app, ["abort-commands", str(disk), "--bootstrap-server", "kafka-1:9092", *config,
                                    *extra, "--no-progress"])
            assert r.exit_code == 0, (name, r.output)
            out[f"{name}{' with --command-config' if config else ''}"] = r.stdout
    return out


def _commands(script: str, tool: str) -> list[list[str]]:
    """argv (after the tool's name) of every abort line, armed or commented, that runs ``tool``."""
    found = []
    for line in script.splitlines():
        text = line.strip().lstrip("#").strip()
        if text.startswith(tool + " ") and "abort" in shlex.split(text):
            found.append(shlex.split(text)[len(shlex.split(tool)):])
    return found


def _guard_describe(script: str) -> list[list[str]]:
    """The describe-producers argv each kf_guard line makes (forensics/render/live_guard.py)."""
    found = []
    for line in script.splitlines():
        words = shlex.split(line) if line.strip().startswith("kf_guard --") else []
        if words:
            opts = dict(zip(words[1::2], words[2::2]))
            argv = ["--bootstrap-server", opts["--bootstrap-server"]]
            if "--command-config" in opts:
                argv += ["--command-config", opts["--command-config"]]
            found.append(argv + ["describe-producers", "--topic", opts["--topic"], "--partition", opts["--partition"]])
    return found


@pytest.fixture(scope="module")
def scripts(tmp_path_factory) -> dict[str, str]:
    return _scripts(tmp_path_factory.mktemp("abort-scripts"))


def _options(argv: list[str]) -> dict[str, str]:
    """``--name value`` pairs of a kafka-transactions.sh argv keyed as argparse4j names them
    (``--producer-id`` -> ``producer_id``), and the one bare word as ``command``."""
    out, i = {}, 0
    while i < len(argv):
        if argv[i].startswith("--"):
            out[argv[i][2:].replace("-", "_")] = argv[i + 1]
            i += 2
        else:
            out["command"] = argv[i]
            i += 1
    return out


@pytest.mark.jvm
@pytest.mark.skipif(_checker_problem() is not None, reason=_checker_problem() or "")
def test_every_line_is_accepted_by_kafka_transactions_4_1(scripts: dict[str, str]) -> None:
    lines = [(name, argv) for name, text in scripts.items()
             for argv in _commands(text, "kafka-transactions.sh") + _guard_describe(text)]
    shapes = {("start_offset" if "--start-offset" in argv else "producer_id" if "--producer-id" in argv
               else argv[argv.index("describe-producers")] if "describe-producers" in argv else "?") for _, argv in lines}
    assert shapes == {"start_offset", "producer_id", "describe-producers"}, shapes
    bad = [["--bootstrap-server", "kafka-1:9092", "abort", "--topic", "t", "--partition", "0", "--producer-id", "7",
            "--producer-epoch", "40000", "--coordinator-epoch", "0"],  # an epoch is a Short
           ["--bootstrap-server", "kafka-1:9092", "abort", "--topic", "t", "--start-offset", "3"]]  # no --partition
    feed = "".join(SEP.join(argv) + "\n" for argv in [a for _, a in lines] + bad)
    r = subprocess.run([find_java().java, "-cp", str(KAFKA_HOME / "libs" / "*"), str(CHECKER)], input=feed,
                       capture_output=True, text=True, timeout=600)
    answers = r.stdout.splitlines()
    assert r.returncode == 0 and len(answers) == len(lines) + len(bad), r.stderr[-2000:]
    for (name, argv), answer in zip(lines, answers):
        status, *attrs = answer.split("\t")
        assert status == "OK", (name, argv, answer)
        parsed = dict(a.split("=", 1) for a in attrs)
        want = _options(argv)
        assert {k: parsed[k] for k in want} == want, (name, argv, answer)
        assert parsed["command_config"] == want.get("command_config", "null")
    for answer in answers[len(lines):]:
        assert answer.startswith("REJECTED\t1\tusage: kafka-transactions.sh"), answer
    assert "could not convert | '40000' to Short" in answers[-2]
    assert "argument --partition is required" in answers[-1]


def test_every_kafka_python_line_is_accepted_by_its_admin_cli(scripts: dict[str, str]) -> None:
    from kafka.cli.admin import main_parser

    lines = [(name, argv) for name, text in scripts.items() for argv in _commands(text, "python -m kafka.admin")]
    assert lines
    parser = main_parser()
    for name, argv in lines:
        ns = parser.parse_args(argv)
        value = {flag: argv[argv.index(flag) + 1] for flag in argv if flag.startswith("-")}
        assert argv[2:4] == ["transactions", "abort"], (name, argv)
        assert (ns.bootstrap_servers, ns.topic, ns.partition, ns.producer_id, ns.producer_epoch,
                ns.coordinator_epoch) == ([value["-b"]], value["-t"], int(value["-p"]), int(value["--producer-id"]),
                                          int(value["--producer-epoch"]), int(value["--coordinator-epoch"])), (name, argv)
