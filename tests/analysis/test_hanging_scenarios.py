"""``find-hanging`` on the hanging-transaction scenarios (``fixtures/hanging_scenarios.py``):
every scenario is built twice (byte-identical), then its verdicts, abort arguments (safe rule,
docs/stuck-lso.md), exit code and findings are compared with the hand-derived
``fixtures/hanging-scenarios/<name>/expected.json``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
from fixtures import hanging_scenarios as hs
from forensics.cli.app import app
from forensics.report.state import partition_state_rows
from forensics.runs.rebuild import load_state
from tests.machine_output import rows_of

runner = CliRunner()
NAMES = list(hs.SCENARIOS)
XFAIL: dict[str, str] = {}  # scenario -> reason, for verdicts we believe forensics gets wrong


def _params():
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=XFAIL[n])) if n in XFAIL else n
            for n in NAMES]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = {}
    for name in NAMES:
        root = hs.build(name, tmp_path_factory.mktemp(name))
        out[name] = root
    return out


def _run(root: Path, as_of: int, *extra: str):
    return runner.invoke(app, ["find-hanging", str(root), *extra, "--format", "json", "--no-progress",
                               "--as-of", str(as_of)])


def _key(d) -> tuple:
    return d["topic"], d["partition"], d["producerId"], d["startOffset"]


@pytest.mark.parametrize("name", NAMES)
def test_build_is_deterministic(name, built, tmp_path):
    again = hs.build(name, tmp_path / "again")
    first, second = _files(built[name]), _files(again)
    assert first and sorted(first) == sorted(second)
    assert [k for k in first if first[k] != second[k]] == []


@pytest.mark.parametrize("name", _params())
def test_verdicts(name, built):
    exp = hs.expected(name)
    r = _run(built[name], exp["asOf"], "--all")
    assert r.exit_code == exp["exitCode"], r.output
    rows = {_key(x): x for x in rows_of(r.stdout)}
    assert set(rows) == {_key(v) for v in exp["verdicts"]}, rows
    for v in exp["verdicts"]:
        row = rows[_key(v)]
        assert row["verdict"] == v["verdict"], row["reason"]
        for part in v["reasonContains"]:
            assert part in row["reason"], row["reason"]
        if "brokerId" in v:
            assert row["brokerId"] == v["brokerId"]
        assert row["armed"] == v["abortable"], row
        assert (row["overdueMs"] is not None) == v.get("overdue", False), row
        assert row["verdictState"] == ("overdue" if v.get("overdue") else v["verdict"]), row
        if v["abortable"]:
            assert row["abortArgs"] is not None, row
            args = row["abortArgs"]
            assert args[args.index("--producer-id") + 1] == str(v["producerId"])
            assert args[args.index("--topic") + 1] == v["topic"]
            assert args[args.index("--partition") + 1] == str(v["partition"])
            assert args[args.index("--producer-epoch") + 1] == str(v["producerEpoch"])
            assert args[args.index("--coordinator-epoch") + 1] == str(v["coordinatorEpoch"])
        else:
            assert row["abortArgs"] is None, row


@pytest.mark.parametrize("name", _params())
def test_default_run_exit_code_and_shown_rows(name, built):
    exp = hs.expected(name)
    r = _run(built[name], exp["asOf"])
    assert r.exit_code == exp["exitCode"], r.output
    shown = {_key(x) for x in rows_of(r.stdout)}
    # without --all: every open transaction but those the coordinator will still finish in time
    assert shown == {_key(v) for v in exp["verdicts"] if v["verdict"] != "ongoing" or v.get("overdue")}


@pytest.mark.parametrize("name", NAMES)
def test_findings(name, built):
    exp = hs.expected(name)
    rep = load_state([str(built[name])])
    found = [(f.kind.value, f.path or "") for f in rep.findings()]
    for want in exp["findings"]:
        assert any(k == want["kind"] and want["pathContains"] in p for k, p in found), (want, found)
    for want in exp.get("lso", ()):
        [row] = [x.as_json() for x in partition_state_rows(rep)
                 if (x.topic, x.partition) == (want["topic"], want["partition"])]
        assert {k: row[k] for k in want} == want


def test_unclean_election_reason_quotes_the_lost_markers_epochs(built):
    exp = hs.expected("unclean-election")
    [row] = rows_of(_run(built["unclean-election"], exp["asOf"]).stdout)
    assert "broker 1 holds its COMMIT marker at offset 3 (epoch 0, coordinatorEpoch 2)" in row["reason"]


def test_overdue_is_a_state_of_its_own_on_every_screen(built):
    """tv2: an Ongoing transaction past its own timeout reads as overdue (never "wait"), never armed, exit 7."""
    root, as_of = built["tv2"], str(hs.expected("tv2")["asOf"])
    common = [str(root), "--no-progress", "--as-of", as_of]
    table = runner.invoke(app, ["find-hanging", *common], env={"COLUMNS": "100"})
    assert table.exit_code == 7
    assert table.stdout.count("│ ongoing, overdue │") == 2
    assert ": ongoing, overdue by " in table.stdout and "    advice: " in table.stdout
    assert "will commit, abort or time it out" not in table.stdout
    wide = runner.invoke(app, ["find-hanging", *common, "--wide"])
    assert wide.stdout.count(" ongoing, overdue ") >= 2 and "    advice: " in wide.stdout
    text = runner.invoke(app, ["find-hanging", *common, "--format", "text"])
    assert "overdue" not in text.stdout  # Kafka's layout: no state of ours
    script = runner.invoke(app, ["abort-commands", *common, "--bootstrap-server", "b:9092"])
    assert script.exit_code == 0
    assert script.stdout.count(": ongoing, overdue by ") == 2
    assert script.stdout.count("# NOT ARMED (ongoing, overdue): past its own timeout") == 2
    assert "\nkafka-transactions.sh" not in script.stdout and "kf_guard --" not in script.stdout
    rows = rows_of(_run(root, int(as_of)).stdout)
    assert {(r["verdict"], r["verdictState"], r["armed"]) for r in rows} == {("ongoing", "overdue", False)}
    assert all(r["overdueMs"] > 60_000 and r["notArmedBecause"] for r in rows)


def test_overdue_in_the_report(built, tmp_path):
    out = tmp_path / "report.html"
    r = runner.invoke(app, ["report", str(built["tv2"]), "--no-progress", "--as-of",
                            str(hs.expected("tv2")["asOf"]), "--out", str(out)])
    assert r.exit_code == 0, r.output
    page = out.read_text()
    assert page.count(">ongoing, overdue</span></h3>") == 2 and "2 overdue" in page
    assert page.count("loads it and aborts the timed-out transaction") == 2  # what to do
    assert "Commands, NOT armed" not in page and "should have aborted it" in page


def _script(root: Path, name: str) -> str:
    r = runner.invoke(app, ["abort-commands", str(root), "--bootstrap-server", "b:9092", "--no-progress", "--as-of",
                            str(hs.expected(name)["asOf"])])
    assert r.exit_code == 0, r.output
    return r.stdout


@pytest.mark.parametrize("name", NAMES)
def test_the_script_says_why_each_open_transaction_is_not_armed(name, built):
    """One comment block per open transaction, every one not armed saying why; "nothing to abort" counts them."""
    text, exp = _script(built[name], name), hs.expected(name)
    heads = [ln for ln in text.splitlines() if ln.startswith("# ") and " producer " in ln and " from offset " in ln]
    assert len(heads) == len(exp["verdicts"]), text
    unarmed = [v for v in exp["verdicts"] if not v["abortable"]]
    whys = [ln for ln in text.splitlines() if ln.startswith("# NOT ARMED (")]
    assert len(whys) == len(unarmed) and all(ln.split("): ", 1)[1] for ln in whys), whys
    if not any(v["abortable"] for v in exp["verdicts"]):
        n = len(exp["verdicts"])
        assert f"\n# nothing to abort: {n} open transaction{'s' if n != 1 else ''}, none armed" in text


def test_an_ongoing_transaction_in_time_is_a_comment_with_why(built):
    text = _script(built["ongoing"], "ongoing")
    assert "# NOT ARMED (ongoing): within its own timeout: the coordinator will still finish it" in text
    assert "# nothing to abort: 1 open transaction, none armed (each above says why)" in text


def test_a_pending_commit_says_never_abort(built):
    text = _script(built["prepare-commit-pending"], "prepare-commit-pending")
    assert "# NOT ARMED (stuck-coordinator): the coordinator decided to COMMIT and still holds this partition" in text
    assert "abort --topic" not in text  # no command at all, not even commented


def test_the_script_explains_the_coordinator_epoch_rule_where_it_applies(built, tmp_path):
    r = runner.invoke(app, ["abort-commands", str(hs.HERE.parent / "example-disk"), "--bootstrap-server", "b:9092",
                            "--no-progress"])
    assert r.exit_code == 0, r.output
    guard = [ln for ln in r.stdout.splitlines() if ln.startswith("kf_guard --")]
    assert guard and "LatestCoordinatorEpoch=-1" in guard[0]
    assert "--coordinator-epoch 0" in r.stdout
    assert r.stdout.count("#   coordinator epoch: the partition's entry has none yet (LatestCoordinatorEpoch -1") == 1
    assert "replaces a negative value by 0 itself" in r.stdout
    fenced = _script(built["fenced-coordinator"], "fenced-coordinator")  # a coordinator epoch of its own
    assert "#   coordinator epoch: the partition's entry has none yet" not in fenced
