"""End to end against a real Kafka 4.1.0 broker (``../shared/kafka``; skipped, saying why, without it or Java 17+).

The incident, made by real clients on a broker formatted with ``--release-version 3.9-IV0`` (classic
transaction protocol):

1. kafka-python producers ``kf-e2e-hanging`` (topic ``stuck``) and ``kf-e2e-moving`` (topic ``moving``),
   each in a process of its own, open a transaction and write 3 records; a third producer then commits
   2 records on ``stuck`` behind the open transaction (read_committed consumers cannot see them).
   ``kf-e2e-hanging``'s process is SIGKILLed.
2. The broker is stopped; the ``__transaction_state`` partitions holding the two ids (found by their
   bytes) are removed from the broker's own data dir: the coordinator's memory of them is lost, as after
   an unclean election on, or the loss of, a ``__transaction_state`` partition (docs/stuck-lso.md). The
   broker is started (it recreates them empty: nobody will ever end those transactions), then stopped,
   and its log dir is copied: the evidence.
3. The broker is started again. Offline, on the copy: ``find-hanging`` and ``abort-commands``. The
   generated script is run with ``sh`` against the live broker.

Checks: our offline verdicts equal the live broker's ``find-hanging``; the guarded script aborts and the
LSO moves past the aborted data (read_committed consumer: the committed records appear, the aborted ones
never); the same script run again is refused by its guard and nothing is written; the guard refuses when
the producer wrote after the copy; and when the broker cannot be reached.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e import broker_clients as clients
from tests.e2e.broker_clients import forget_transactional_ids, offsets
from tests.e2e.forensics_cli import armed_lines, forensics
from tests.e2e.kafka_broker import Broker, broker_problem, free_port
from tests.machine_output import rows_of

pytestmark = [pytest.mark.broker,
              pytest.mark.skipif(broker_problem() is not None, reason=broker_problem() or "")]

HANGING_ID, MOVING_ID, COMMITTED_ID = "kf-e2e-hanging", "kf-e2e-moving", "kf-e2e-committed"
STUCK, MOVING = "stuck", "moving"
OPEN_RECORDS, COMMITTED_RECORDS = 3, 2
CHILD = Path(__file__).with_name("txn_child.py")


@dataclass
class Scene:
    broker: Broker
    copy: Path
    work: Path
    moving: subprocess.Popen
    live_hanging: str  # kafka-transactions.sh find-hanging on the broker right after the last start


def start_child(broker: Broker, txid: str, topic: str, work: Path) -> subprocess.Popen:
    err = open(work / f"{txid}.stderr", "wb")
    child = subprocess.Popen([sys.executable, str(CHILD), broker.bootstrap, txid, topic, str(OPEN_RECORDS)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)
    err.close()
    line = child.stdout.readline().strip()
    assert line == "ready", f"{txid}: {line!r}; see {work / (txid + '.stderr')}"
    return child


def commit_records(broker: Broker, topic: str) -> None:
    clients.commit_records(broker, COMMITTED_ID, topic, [0], COMMITTED_RECORDS, key="{txid}-{i}")


def committed_keys(broker: Broker, topic: str, until: int, wait_s: float = 30) -> list[tuple[int, str]]:
    return clients.committed_records(broker, topic, 0, until, wait_s)


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    work = tmp_path_factory.mktemp("e2e")
    broker = Broker(work / "kafka")
    children: list[subprocess.Popen] = []
    try:
        broker.format()
        broker.start()
        from kafka import KafkaAdminClient
        from kafka.admin import NewTopic

        with closing(KafkaAdminClient(bootstrap_servers=broker.bootstrap)) as admin:
            admin.create_topics([NewTopic(STUCK, 1, 1), NewTopic(MOVING, 1, 1)])
        hanging = start_child(broker, HANGING_ID, STUCK, work)
        children.append(hanging)
        children.append(start_child(broker, MOVING_ID, MOVING, work))
        commit_records(broker, STUCK)
        hanging.kill()
        hanging.wait(30)
        broker.stop()
        gone = forget_transactional_ids(broker.data, [HANGING_ID, MOVING_ID])
        assert gone, "no __transaction_state partition holds the ids"
        broker.start()
        broker.stop()
        assert all(d.is_dir() for d in gone), f"{gone} not recreated by the broker"
        copy = work / "copy"
        shutil.copytree(broker.data, copy)
        broker.start()
        live = broker.run_tool(["kafka-transactions.sh", "--bootstrap-server", broker.bootstrap, "find-hanging",
                                "--broker-id", "1", "--max-transaction-timeout", "0"])
        assert live.returncode == 0, live.stderr
        yield Scene(broker, copy, work, children[1], live.stdout)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
            child.wait(30)
        broker.close()


def hanging_rows(scene: Scene) -> dict[str, dict]:
    r = forensics("find-hanging", str(scene.copy), "--format", "json")
    assert r.returncode == 1, r.stderr
    return {row["topic"]: row for row in rows_of(r.stdout)}


def script_for(scene: Scene, topic: str, bootstrap: str = "", *extra: str) -> Path:
    r = forensics("abort-commands", str(scene.copy), "--bootstrap-server", bootstrap or scene.broker.bootstrap,
                  "--topic", topic, *extra)
    assert r.returncode == 0, r.stderr
    path = scene.work / f"abort-{topic}-{len(list(scene.work.glob('abort-*.sh')))}.sh"
    path.write_text(r.stdout)
    return path


def run_script(scene: Scene, script: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", str(script)], capture_output=True, text=True, timeout=300,
                          env=scene.broker.tool_env(), cwd=scene.work)


def armed(script: Path) -> list[str]:
    return armed_lines(script.read_text())


def ok_line(row: dict) -> str:
    return (f"kf_guard: ok {row['topic']}-0 producer {row['producerId']}: live ProducerEpoch {row['producerEpoch']}, "
            f"LatestCoordinatorEpoch {row['coordinatorEpoch']}, CurrentTransactionStartOffset {row['startOffset']}, "
            f"LastSequence {row['lastSequence']}, LastTimestamp {row['lastTimestamp']} equal the disk copy")


def test_offline_verdicts_equal_the_live_brokers_find_hanging(scene: Scene) -> None:
    rows = hanging_rows(scene)
    assert sorted(rows) == [MOVING, STUCK]
    for row in rows.values():
        assert (row["partition"], row["producerEpoch"], row["coordinatorEpoch"], row["startOffset"], row["verdict"],
                row["lastSequence"]) == (0, 0, -1, 0, "hanging", OPEN_RECORDS - 1)
        assert f"no coordinator record for producer id {row['producerId']}" in row["reason"]
    # the live tool: Topic Partition ProducerId ProducerEpoch CoordinatorEpoch StartOffset LastTimestamp Duration(min)
    live = sorted(tuple(cell.strip() for cell in ln.split("\t")[:7]) for ln in scene.live_hanging.splitlines()[1:]
                  if ln.strip())
    ours = sorted((t, str(r["partition"]), str(r["producerId"]), str(r["producerEpoch"]), str(r["coordinatorEpoch"]),
                   str(r["startOffset"]), str(r["lastTimestamp"])) for t, r in rows.items())
    assert scene.live_hanging.splitlines()[0].split("\t")[:6] == [
        "Topic ", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset"]
    assert live == ours


def test_guarded_script_aborts_once_then_refuses_to_run_again(scene: Scene) -> None:
    row = hanging_rows(scene)[STUCK]
    script = script_for(scene, STUCK)
    lines = armed(script)
    assert lines[0].startswith("kf_guard ") and lines[0].endswith(" || exit") and len(lines) == 2
    # a 3.9-IV0 KRaft disk: brokers 3.0 or newer, so the --start-offset form is armed; the legacy form commented
    assert lines[1] == (f"kafka-transactions.sh --bootstrap-server {scene.broker.bootstrap} abort --topic {STUCK} "
                        "--partition 0 --start-offset 0")
    legacy = (f"kafka-transactions.sh --bootstrap-server {scene.broker.bootstrap} abort --topic {STUCK} "
              f"--partition 0 --producer-id {row['producerId']} --producer-epoch 0 --coordinator-epoch 0")
    assert f"# {legacy}" in script.read_text().splitlines()
    lso, hw = offsets(scene.broker, STUCK)
    assert lso == row["startOffset"] == 0 and hw == OPEN_RECORDS + COMMITTED_RECORDS + 1  # + the COMMIT marker
    assert committed_keys(scene.broker, STUCK, hw, wait_s=3) == []  # nothing visible behind the open transaction

    first = run_script(scene, script)
    assert first.returncode == 0, first.stderr
    assert ok_line(row) in first.stdout.splitlines()
    lso_after, hw_after = offsets(scene.broker, STUCK)
    assert (lso_after, hw_after) == (hw + 1, hw + 1)  # the ABORT marker; the LSO is past everything
    assert committed_keys(scene.broker, STUCK, hw_after) == [
        (OPEN_RECORDS + i, f"{COMMITTED_ID}-{i}") for i in range(COMMITTED_RECORDS)]  # never the aborted ones

    second = run_script(scene, script)
    assert second.returncode == 3, second.stdout + second.stderr
    last = second.stderr.splitlines()[-1]
    m = re.fullmatch(
        rf"kf_guard: REFUSED {STUCK}-0 producer {row['producerId']}: the live state differs from the disk copy: "
        r"LatestCoordinatorEpoch disk -1, live 0; CurrentTransactionStartOffset disk 0, live None; "
        rf"LastTimestamp disk {row['lastTimestamp']}, live (\d+)\. Nothing was aborted; analyse a fresh copy\.", last)
    assert m and int(m.group(1)) > row["lastTimestamp"], last  # the marker's time
    assert "kf_guard: ok" not in second.stdout
    assert offsets(scene.broker, STUCK) == (hw_after, hw_after)  # nothing written

    # without the guard, the armed --start-offset line looks the producer up live and finds no open
    # transaction there any more: refused, nothing written
    bare = subprocess.run(["sh", "-c", lines[1]], capture_output=True, text=True, timeout=300,
                          env=scene.broker.tool_env())
    assert bare.returncode != 0, bare.stdout
    assert offsets(scene.broker, STUCK) == (hw_after, hw_after)
    # but the legacy form (for older brokers) is accepted again and writes one more marker: there, only the
    # guard stops a rerun
    bare = subprocess.run(["sh", "-c", legacy], capture_output=True, text=True, timeout=300,
                          env=scene.broker.tool_env())
    assert bare.returncode == 0, bare.stderr
    assert offsets(scene.broker, STUCK) == (hw_after + 1, hw_after + 1)


def test_guard_refuses_when_the_producer_wrote_after_the_copy(scene: Scene) -> None:
    row = hanging_rows(scene)[MOVING]
    script = script_for(scene, MOVING)
    scene.moving.stdin.write("more 2\n")
    scene.moving.stdin.flush()
    sent = scene.moving.stdout.readline().split()
    assert sent == ["sent", str(OPEN_RECORDS), str(OPEN_RECORDS + 1)], sent
    before = offsets(scene.broker, MOVING)
    assert before == (0, OPEN_RECORDS + 2)

    r = run_script(scene, script)
    assert r.returncode == 3, r.stdout + r.stderr
    m = re.fullmatch(
        rf"kf_guard: REFUSED {MOVING}-0 producer {row['producerId']}: the live state differs from the disk copy: "
        rf"LastSequence disk {OPEN_RECORDS - 1}, live {OPEN_RECORDS + 1}; LastTimestamp disk {row['lastTimestamp']}, "
        r"live (\d+)\. Nothing was aborted; analyse a fresh copy\.", r.stderr.splitlines()[-1])
    assert m and int(m.group(1)) >= row["lastTimestamp"], r.stderr
    assert offsets(scene.broker, MOVING) == before  # still open, nothing aborted


def test_guard_refuses_when_the_broker_cannot_be_reached(scene: Scene) -> None:
    config = scene.work / "admin.properties"
    config.write_text("default.api.timeout.ms=3000\nrequest.timeout.ms=1000\n")
    nobody = f"127.0.0.1:{free_port()}"
    script = script_for(scene, STUCK, nobody, "--command-config", str(config))
    r = run_script(scene, script)
    assert r.returncode == 4, r.stdout + r.stderr
    said = r.stderr.splitlines()
    row = hanging_rows(scene)[STUCK]
    assert said[-1] == (
        f"kf_guard: REFUSED {STUCK}-0 producer {row['producerId']}: could not check: kafka-transactions.sh "
        "describe-producers exited 1 (its message is above): broker unreachable, or older than 2.8 (no "
        "DescribeProducers)? For an older broker use the offline check: KF_FRESH_COPY=<fresh copy of the "
        "partition dir> (see the top of this script). Nothing was aborted.")
    assert any(ln.startswith(f"Failed to describe producers for partition {STUCK}-0 on leader") for ln in said), said
