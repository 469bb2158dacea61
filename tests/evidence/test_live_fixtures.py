"""Issue 22's properties on the committed real-broker evidence (``fixtures/live/``, see its RECIPE.md): fast.

Each fixture is materialised first (``tests/e2e/live_fixtures.materialise``: the broker's file sizes,
bytes and mtimes back), then our CLI runs on it with an operator's command lines, in this process
(``forensics_here``; one test checks that a child process, as an operator starts it, says the same).

* three copies taken with ``cp -r`` / a slow file-by-file copy while a real broker ran, each of which
  caught a transaction in flight: nothing armed, no ``hanging`` / ``stuck-coordinator`` on a transaction
  the producers' logs show in flight, and a line saying the copy is of a running broker; the copy taken
  after the clean stop (the control) keeps today's verdicts and says no such thing;
* JBOD: all three log dirs give the live broker's find-hanging; one left out gives exit 7 and names it;
* DeleteRecords: the abort preview and the LSO are the broker's;
* restarts and DeleteRecords on one node never carry the KAFKA-7408 hint.
"""

from __future__ import annotations

import pytest

from tests.e2e.forensics_cli import analyse, forensics_here
from tests.e2e.live_fixtures import LIVE, materialise, truth_of
from tests.evidence import checks, claims

LIVE_COPIES = ["live-tv0-cp-r-complete-commit", "live-tv2-cp-r-prepare-commit", "live-tv2-slow-complete-commit"]
CONTROL = "live-tv2-final-clean-stop"
_cache: dict = {}


def analysed(name: str, tmp_path_factory) -> tuple:
    """(materialised disk, ground truth, what find-hanging / --all / abort-commands said), once a module run;
    a JBOD fixture is given as its log dirs."""
    if name not in _cache:
        disk, scene = materialise(name, tmp_path_factory.mktemp(name)), truth_of(name)
        paths = checks.jbod_dirs(disk, scene) if "log_dirs" in scene else [disk]
        _cache[name] = (disk, scene, analyse(paths, run=forensics_here))
    return _cache[name]


def test_in_process_runs_say_what_a_child_process_says(tmp_path_factory):
    """The runs below are in this process; a child process, as an operator starts it, gives the same exit
    codes, rows, stderr lines and script on a copy of a running broker (the lines saying so on stderr, a
    transaction in flight among the rows)."""
    disk, scene, here = analysed("live-tv2-cp-r-prepare-commit", tmp_path_factory)
    assert analyse([disk]) == here


@pytest.fixture(scope="module", autouse=True)
def _fixtures_present():
    missing = [n for n in LIVE_COPIES + [CONTROL, "jbod", "delete-records", "restart"] if not (LIVE / n).is_dir()]
    assert not missing, f"fixtures/live/ lacks {missing}"


@pytest.mark.parametrize("name", LIVE_COPIES)
def test_live_copy_arms_nothing(name, tmp_path_factory):
    _disk, _scene, got = analysed(name, tmp_path_factory)
    assert checks.armed(got) == []


@pytest.mark.parametrize("name", LIVE_COPIES)
def test_live_copy_no_verdict_on_a_transaction_in_flight(name, tmp_path_factory):
    _disk, scene, got = analysed(name, tmp_path_factory)
    assert scene["copy"]["in_flight"], "the fixture's copy caught no transaction in flight"
    assert checks.verdicts_on_in_flight(got["find_hanging_all"]["rows"], scene["copy"], checks.txns_of(scene)) == []


@pytest.mark.parametrize("name", LIVE_COPIES)
def test_live_copy_says_it_is_of_a_running_broker(name, tmp_path_factory):
    _disk, _scene, got = analysed(name, tmp_path_factory)
    assert checks.silent_on_running_broker(got) == []


def test_clean_stop_copy_keeps_todays_verdicts(tmp_path_factory):
    _disk, scene, got = analysed(CONTROL, tmp_path_factory)
    assert scene["copy"]["in_flight"] == []
    assert (got["find_hanging"]["rc"], got["find_hanging"]["rows"], checks.armed(got)) == (0, [], [])
    assert not any(claims.says_running_broker(checks.said(got[out])) for out in checks.OUTPUTS)
    assert checks.tracebacks(got) == []


def test_jbod_all_log_dirs_equal_the_live_find_hanging(tmp_path_factory):
    _disk, scene, analysis = analysed("jbod", tmp_path_factory)
    got = analysis["find_hanging"]
    assert got["rc"] == 1, got["stderr"]
    live = checks.live_table(scene["live"]["findHanging"]["stdout"])
    assert live and checks.our_table(got["rows"]) == live


@pytest.mark.parametrize("left_out", ["a", "b", "c"])
def test_jbod_one_log_dir_left_out_exits_7_naming_it(left_out, tmp_path):
    scene = truth_of("jbod")
    disk = materialise("jbod", tmp_path)
    assert checks.jbod_left_out(disk, scene, left_out) == []


@pytest.mark.parametrize("name", ["jbod", "delete-records", "restart"])
def test_no_kafka_7408_hint_on_one_node(name, tmp_path_factory):
    assert checks.kafka_7408_hints(analysed(name, tmp_path_factory)[2]) == []


def test_delete_records_rows_equal_the_live_find_hanging(tmp_path_factory):
    _disk, scene, got = analysed("delete-records", tmp_path_factory)
    live = checks.live_table(scene["answers"]["after_delete"]["findHanging"]["stdout"])
    assert live and checks.our_table(got["find_hanging"]["rows"]) == live


@pytest.mark.parametrize("partition", [0, 1], ids=["log-start-past-the-transaction", "log-start-inside-it"])
def test_delete_records_preview_and_lso_are_the_brokers(partition, tmp_path_factory):
    _disk, scene, got = analysed("delete-records", tmp_path_factory)
    assert checks.preview_vs_broker(got["find_hanging"]["rows"], scene)[partition] == []


def test_restart_open_transactions_are_what_the_broker_says(tmp_path_factory):
    _disk, scene, got = analysed("restart", tmp_path_factory)
    assert checks.live_table(scene["live"]["findHanging"]["stdout"]) == []
    assert (got["find_hanging"]["rc"], got["find_hanging"]["rows"]) == (0, [])
    open_at = sorted((int(r["ProducerId"]), int(r["CurrentTransactionStartOffset"]))
                     for r in checks.truth.table_rows(scene["live"]["partition"]["describeProducers"]["stdout"])
                     if r["CurrentTransactionStartOffset"] != "None")
    assert sorted((r["producerId"], r["startOffset"]) for r in got["find_hanging_all"]["rows"]
                  if r["verdict"] == "ongoing") == open_at
