"""Issue 22 against a real Kafka 4.1.0 broker, stopped cleanly (``../shared/kafka``; skipped, saying why,
without it or Java 17+): slow. The scenes of ``tests/e2e/incident_evidence.py`` made afresh, checked as
``test_live_fixtures.py`` checks their committed copies:

* JBOD, three log dirs, a hanging transaction: all dirs -> the live find-hanging; one left out -> exit 7,
  naming it;
* DeleteRecords past and into an open transaction: the abort preview and the LSO are the broker's;
* one node restarted, and DeleteRecords: no KAFKA-7408 hint.
"""

from __future__ import annotations

import pytest

from tests.e2e import incident_evidence
from tests.e2e.forensics_cli import analyse
from tests.e2e.kafka_broker import broker_problem
from tests.evidence import checks

pytestmark = [pytest.mark.broker, pytest.mark.skipif(broker_problem() is not None, reason=broker_problem() or "")]


@pytest.fixture(scope="module")
def jbod(tmp_path_factory):
    out = tmp_path_factory.mktemp("jbod")
    scene = incident_evidence.jbod_scene(out)
    return out / "copy", scene, analyse(checks.jbod_dirs(out / "copy", scene))


@pytest.fixture(scope="module")
def delete_records(tmp_path_factory):
    out = tmp_path_factory.mktemp("delete-records")
    scene = incident_evidence.delete_records_scene(out)
    return out / "copy", scene, analyse([out / "copy"])


@pytest.fixture(scope="module")
def restart(tmp_path_factory):
    out = tmp_path_factory.mktemp("restart")
    scene = incident_evidence.restart_scene(out)
    return out / "copy", scene, analyse([out / "copy"])


def test_jbod_all_log_dirs_equal_the_live_find_hanging(jbod) -> None:
    _disk, scene, got = jbod
    assert got["find_hanging"]["rc"] == 1, got["find_hanging"]["stderr"]
    live = checks.live_table(scene["live"]["findHanging"]["stdout"])
    assert live and checks.our_table(got["find_hanging"]["rows"]) == live


@pytest.mark.parametrize("left_out", ["a", "b", "c"])
def test_jbod_one_log_dir_left_out_exits_7_naming_it(jbod, left_out: str) -> None:
    disk, scene, _ = jbod
    assert checks.jbod_left_out(disk, scene, left_out) == []


def test_delete_records_rows_equal_the_live_find_hanging(delete_records) -> None:
    _disk, scene, got = delete_records
    live = checks.live_table(scene["answers"]["after_delete"]["findHanging"]["stdout"])
    assert live and checks.our_table(got["find_hanging"]["rows"]) == live


@pytest.mark.parametrize("partition", [0, 1], ids=["log-start-past-the-transaction", "log-start-inside-it"])
def test_delete_records_preview_and_lso_are_the_brokers(delete_records, partition: int) -> None:
    _disk, scene, got = delete_records
    assert [a["rc"] for a in scene["aborts"].values()] == [0, 0], scene["aborts"]
    assert checks.preview_vs_broker(got["find_hanging"]["rows"], scene)[partition] == []


@pytest.mark.parametrize("which", ["jbod", "delete_records", "restart"])
def test_no_kafka_7408_hint_on_one_node(which: str, request) -> None:
    _disk, _scene, got = request.getfixturevalue(which)
    assert checks.kafka_7408_hints(got) == []


def test_restart_bumps_the_leader_epoch_without_truncation(restart) -> None:
    _disk, scene, got = restart
    epochs = scene["leader_epoch_checkpoint"]["copy"].split("\n")
    assert epochs[2:4] == ["0 0", "2 7"], epochs  # epoch 2 from offset 7: the first write after the restart
    assert checks.live_table(scene["live"]["findHanging"]["stdout"]) == []
    assert (got["find_hanging"]["rc"], got["find_hanging"]["rows"]) == (0, [])
