"""A filter that matches nothing is an error (exit 2, one line saying what exists), on every command
that has the filter; checked before any segment is read. A value that names something real but
selects no row is an answer (exit 0)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
import forensics.cli.report_cmd  # noqa: F401
import forensics.cli.scan_cmd  # noqa: F401
from forensics.analysis.filters import Filters, check_filters
from forensics.cli.app import app
from forensics.errors import UsageError
from forensics.layout.discovery import discover
from tests.engine_lines import without_engine_line
from tests.machine_output import rows_of

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
REAL = REPO / "fixtures" / "real" / "kraft-tv2" / "disk"
runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def one_line(r, engine_ran: bool = False) -> str:
    """The one line on stderr (``engine_ran``: after the engine's, for a refusal once the state is rebuilt)."""
    lines = (without_engine_line(r.stderr) if engine_ran else r.stderr).splitlines()
    assert len(lines) == 1, r.stderr
    assert r.stdout == "", r.stdout
    return lines[0]


ABORT = ("--bootstrap-server", "h:9092")
TYPO = "kafka-forensics: no topic 'order' in the evidence; did you mean 'orders'?"


@pytest.mark.parametrize("command", [
    ("find-hanging", EXAMPLE, "--topic", "order"),
    ("find-hanging", EXAMPLE, "--topic", "order", "--format", "json"),
    ("abort-commands", EXAMPLE, *ABORT, "--topic", "order"),
    ("describe-producers", EXAMPLE, "--topic", "order", "--partition", "0"),
    ("scan", EXAMPLE, "--topic", "order"),
    ("scan", EXAMPLE, "--topic", "order", "--format", "json"),
])
def test_a_topic_typo_is_a_usage_error_naming_the_close_match(command):
    r = run(*command)
    assert r.exit_code == 2
    assert one_line(r) == TYPO


@pytest.mark.parametrize("args, line", [
    (("--topic", "Orders"), "no topic 'Orders' in the evidence; did you mean 'orders'?"),  # topics are case-sensitive
    (("--topic", "zzz"), "no topic 'zzz' in the evidence; topics: __cluster_metadata, __transaction_state, orders, payments"),
    (("--topic", "orders", "--partition", "5"), "no partition 5 of topic 'orders' in the evidence; partitions: 0-1"),
    (("--broker-id", "7"), "no broker 7 in the evidence; brokers: 1"),
    (("--topic", "orders", "--broker-id", "7"), "no broker 7 in the evidence; brokers: 1"),
    (("--partition", "1"), "--partition needs --topic"),
])
def test_find_hanging_and_abort_commands_say_what_exists(args, line):
    for command in (("find-hanging", EXAMPLE), ("abort-commands", EXAMPLE, *ABORT), ("scan", EXAMPLE)):
        r = run(*command, *args)
        assert r.exit_code == 2, (command, r.output)
        assert one_line(r) == "kafka-forensics: " + line


def test_a_filter_naming_something_real_that_selects_nothing_is_an_answer():
    r = run("find-hanging", EXAMPLE, "--topic", "orders", "--partition", "1", "--format", "json")
    assert r.exit_code == 0 and rows_of(r.stdout) == []
    script = run("abort-commands", EXAMPLE, *ABORT, "--topic", "payments")
    assert script.exit_code == 0 and "# nothing to abort" in script.stdout


def test_a_narrowed_find_hanging_says_it_judged_only_its_selection():
    # payments has nothing hanging while orders-0 hangs: exit 0 must not read as an all-clear of the cluster
    narrowed = run("find-hanging", EXAMPLE, "--topic", "payments")
    assert narrowed.exit_code == 0
    assert narrowed.stderr.splitlines()[-1] == (
        "only topic 'payments' (--topic payments): no verdict on the other partitions, whatever the exit code; "
        "without these options find-hanging judges them all")
    whole = run("find-hanging", EXAMPLE)
    assert whole.exit_code == 1 and "no verdict on the other partitions" not in whole.stderr


def test_the_check_runs_before_anything_is_read(monkeypatch):
    import forensics.runs.hanging as hanging

    def boom(*a, **k):
        raise AssertionError("the state was loaded")

    monkeypatch.setattr(hanging, "assemble_state", boom)
    monkeypatch.setattr(hanging, "plan", boom)
    r = run("find-hanging", EXAMPLE, "--topic", "order", "--engine", "spark")
    assert r.exit_code == 2 and one_line(r) == TYPO


def test_describe_producers_names_the_brokers_holding_the_partition(tmp_path):
    r = run("describe-producers", EXAMPLE, "--topic", "orders", "--partition", "0", "--broker-id", "2")
    assert r.exit_code == 2 and one_line(r) == "kafka-forensics: no broker 2 in the evidence; brokers: 1"
    r = run("describe-producers", REAL, "--topic", "d-txn-ongoing", "--partition", "3")
    assert r.exit_code == 2
    assert one_line(r) == "kafka-forensics: no partition 3 of topic 'd-txn-ongoing' in the evidence; partitions: 0-2"


def test_describe_transactional_id():
    r = run("describe", EXAMPLE, "--transactional-id", "reportng-app")
    assert r.exit_code == 2
    assert one_line(r, engine_ran=True) == ("kafka-forensics: no transactional id 'reportng-app' in the evidence; did you mean "
                           "'reporting-app'?")
    r = run("describe", EXAMPLE, "--transactional-id", "zzz")
    assert r.exit_code == 2
    assert one_line(r, engine_ran=True) == ("kafka-forensics: no transactional id 'zzz' in the evidence; transactional ids: "
                           "orders-app, payments-app, reporting-app")
    bare = REPO / "fixtures" / "real" / "kraft-tv2" / "d-txn-ongoing-0"
    r = run("describe", bare, "--transactional-id", "d-tx-ongoing")
    assert r.exit_code == 2
    assert one_line(r, engine_ran=True) == ("kafka-forensics: no transactional id 'd-tx-ongoing' in the evidence: no "
                           "__transaction_state partition among the inputs")
    assert run("describe", REAL, "--transactional-id", "d-tx-ongoing").exit_code == 0


def test_list_state_any_case_and_typos():
    exact = run("list", REAL, "--state", "Ongoing", "--format", "json")
    lower = run("list", REAL, "--state", "ongoing", "--format", "json")
    assert exact.exit_code == lower.exit_code == 0
    assert [x["transactionalId"] for x in rows_of(lower.stdout)] == ["d-tx-ongoing"]
    assert lower.stdout == exact.stdout
    r = run("list", REAL, "--state", "ongoin")
    assert r.exit_code == 2 and one_line(r) == "kafka-forensics: no transaction state 'ongoin'; did you mean 'Ongoing'?"
    r = run("list", REAL, "--state", "xyz")
    assert r.exit_code == 2
    assert one_line(r) == ("kafka-forensics: no transaction state 'xyz'; states: Empty, Ongoing, PrepareCommit, "
                           "PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence")


def test_list_state_that_no_id_is_in_is_an_answer_with_what_is_there():
    r = run("list", EXAMPLE, "--state", "PREPARECOMMIT", "--format", "json")
    assert r.exit_code == 0 and rows_of(r.stdout) == []
    assert r.stderr.splitlines()[-1] == ("no transactional id is in state PrepareCommit; states in the evidence: "
                                         "CompleteCommit (3)")


def test_many_values_are_counted_not_listed(tmp_path):
    for i in range(30):
        (tmp_path / f"topic-{i:02d}-0").mkdir()
        (tmp_path / f"topic-{i:02d}-0" / "00000000000000000000.log").write_bytes(b"")
    inv = discover([str(tmp_path)])
    with pytest.raises(UsageError) as e:
        check_filters(inv, Filters(topic="zzz"))
    assert str(e.value) == "no topic 'zzz' in the evidence (30 topics; scan lists them)"
    with pytest.raises(UsageError) as e:
        check_filters(inv, Filters(topic="topc-05"))
    assert str(e.value) == "no topic 'topc-05' in the evidence; did you mean 'topic-05' or 'topic-25' or 'topic-20'?"
    with pytest.raises(UsageError) as e:  # partition dirs given without their log dir name no broker
        check_filters(inv, Filters(broker_id=1))
    assert str(e.value) == ("no broker 1 in the evidence: no log dir among the inputs names its broker "
                            "(meta.properties)")


def test_deleted_copies_only_are_named_as_such(tmp_path):
    gone = tmp_path / "logs" / "gone-0.0123456789abcdef0123456789abcdef-delete"
    gone.mkdir(parents=True)
    (gone / "00000000000000000000.log").write_bytes(b"")
    (tmp_path / "logs" / "kept-0").mkdir()
    (tmp_path / "logs" / "kept-0" / "00000000000000000000.log").write_bytes(b"")
    with pytest.raises(UsageError) as e:
        check_filters(discover([str(tmp_path / "logs")]), Filters(topic="gone"))
    assert str(e.value) == ("topic 'gone' is in the evidence only as -delete, -stray or -future directories, "
                            "which this command does not analyse")
