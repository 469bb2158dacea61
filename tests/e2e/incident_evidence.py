"""Real evidence of three incidents on a stopped broker, each with the live broker's own answers beside it.

* :func:`jbod_scene` (scene c): one broker, three log dirs (``log.dirs=.../a,.../b,.../c``); a hanging
  transaction made as in ``tests/e2e/test_live_guard_broker.py`` (open transaction, producer SIGKILLed, its
  ``__transaction_state`` partition removed while the broker is stopped, restart, clean stop); the copy of
  all three dirs; the live ``find-hanging``, ``describe-producers`` and ``kafka-log-dirs.sh --describe``.
* :func:`delete_records_scene` (scene d): a hanging transaction on two partitions, then
  ``kafka-delete-records.sh`` moves one partition's log start past its data and the other's into it; the
  broker's answers (offsets, LSO, read_committed records, describe-producers, find-hanging) afterwards,
  after a restart from the copy's state, and after the aborts.
* :func:`restart_scene` (scene e): an open transaction, a clean restart (the leader epoch bumps without
  any truncation), another open transaction; clean stop, copy.

Each writes ``OUT/copy/`` (``cp -a`` of the stopped broker's log dir(s)), ``OUT/truth.json`` and returns it.
As a script: ``python -m tests.e2e.incident_evidence OUT {jbod,delete-records,restart,all}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import closing
from pathlib import Path

from tests.e2e import broker_clients as clients
from tests.e2e import evidence_truth as truth
from tests.e2e.kafka_broker import Broker

TXN_PARTITIONS = 5
SETTINGS = {"transaction.state.log.num.partitions": str(TXN_PARTITIONS)}
OPEN_RECORDS, COMMITTED_RECORDS = 3, 2


def create_topics(broker: Broker, topics: dict[str, int]) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    with closing(KafkaAdminClient(bootstrap_servers=broker.bootstrap)) as admin:
        admin.create_topics([NewTopic(t, n, 1) for t, n in topics.items()])


def directory_id(log_dir: Path) -> str | None:
    for line in (log_dir / "meta.properties").read_text().splitlines():
        if line.startswith("directory.id="):
            return line.split("=", 1)[1]
    return None


def layout(root: Path, log_dirs: list[Path]) -> dict[str, dict]:
    """Each log dir (relative to ``root``): its directory.id and the partition dirs it holds."""
    return {d.relative_to(root).as_posix(): {"directory_id": directory_id(d),
                                             "partitions": sorted(p.name for p in d.iterdir() if p.is_dir())}
            for d in log_dirs}


def events_of(work: Path, txid: str) -> list[dict]:
    return truth.read_events([work / f"{txid}.jsonl"])


def make_hanging(broker: Broker, log_dirs: list[Path], txid: str) -> list[str]:
    """Stopped broker: forget ``txid`` on disk, start (the coordinator partition is recreated empty)."""
    broker.stop()
    gone = clients.forget_transactional_ids(log_dirs, [txid])
    assert gone, f"no __transaction_state partition holds {txid}"
    broker.start()
    return [str(d.relative_to(broker.work)) for d in gone]


def jbod_scene(out: Path, release: str | None = "3.9-IV0") -> dict:
    out.mkdir(parents=True, exist_ok=True)
    dirs = [out / "kafka" / "data" / n for n in ("a", "b", "c")]
    broker = Broker(out / "kafka", release_version=release,
                    extra=dict(SETTINGS, **{"log.dirs": ",".join(map(str, dirs))}))
    hanging_id, committed_id, filler_id = "kf-jbod-hanging", "kf-jbod-committed", "kf-jbod-filler"
    child = None
    try:
        broker.format()
        broker.start()
        create_topics(broker, {"stuck": 1, "filler": 6})
        child = clients.open_transaction(broker, out, hanging_id, "stuck", [0], OPEN_RECORDS)
        clients.commit_records(broker, committed_id, "stuck", [0], COMMITTED_RECORDS)
        clients.commit_records(broker, filler_id, "filler", range(6), 2)
        clients.kill(child)
        gone = make_hanging(broker, dirs, hanging_id)
        broker.stop()
        stopped_ms = truth.now_ms()
        copy = dict(truth.take_copy(broker.data, out / "copy", "cp -a"), copy="copy")
        broker.start()
        live = {"findHanging": clients.find_hanging_live(broker),
                "describeProducers": clients.tool_lines(broker, "describe-producers", "--topic", "stuck",
                                                        "--partition", "0"),
                "logDirs": clients.log_dirs_live(broker),
                "offsets": dict(zip(("lastStableOffset", "highWatermark"), clients.offsets(broker, "stuck")))}
    finally:
        if child is not None:
            clients.kill(child)
        broker.close()
    scene = {
        "scene": "jbod", "release": release or "4.1-default", "log_dirs": layout(out / "copy", sorted(
            (out / "copy").iterdir())),
        "txn_state_partitions": TXN_PARTITIONS, "removed_coordinator_partitions": gone, "stopped_ms": stopped_ms,
        "hanging": {"transactionalId": hanging_id, "topic": "stuck", "partition": 0,
                    "events": events_of(out, hanging_id), "openRecords": OPEN_RECORDS,
                    "committedBehind": COMMITTED_RECORDS},
        "live": live, "copy": copy, "file_times": truth.file_times(out / "copy"),
    }
    truth.dump_json(out / "truth.json", scene)
    return scene


DR_BEFORE, DR_OPEN, DR_AFTER = 4, 4, 2  # committed before (0..3, marker 4), open (5..8), committed after (9..10)
DR_PAST, DR_INTO = 9, 7  # partition 0: log start past the open data; partition 1: into it


def delete_records(broker: Broker, out: Path, moves: dict[int, int], topic: str) -> dict:
    spec = out / "delete-records.json"
    spec.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": p, "offset": o} for p, o in sorted(moves.items())]}))
    r = broker.run_tool(["kafka-delete-records.sh", "--bootstrap-server", broker.bootstrap,
                         "--offset-json-file", str(spec)])
    return {"rc": r.returncode, "stdout": r.stdout.splitlines(), "stderr": r.stderr.splitlines()[-5:]}


def delete_records_scene(out: Path, release: str | None = "3.9-IV0") -> dict:
    out.mkdir(parents=True, exist_ok=True)
    broker = Broker(out / "kafka", release_version=release, extra=SETTINGS)
    topic, hanging_id = "dr", "kf-dr-hanging"
    child = None
    answers: dict[str, dict] = {}

    def record(when: str) -> None:
        answers[when] = {str(p): clients.partition_answers(broker, topic, p) for p in (0, 1)}
        answers[when]["findHanging"] = clients.find_hanging_live(broker)

    try:
        broker.format()
        broker.start()
        create_topics(broker, {topic: 2})
        clients.commit_records(broker, "kf-dr-before", topic, [0, 1], DR_BEFORE)
        child = clients.open_transaction(broker, out, hanging_id, topic, [0, 1], DR_OPEN)
        clients.commit_records(broker, "kf-dr-after", topic, [0, 1], DR_AFTER)
        clients.kill(child)
        gone = make_hanging(broker, [broker.data], hanging_id)
        record("before_delete")
        deleted = delete_records(broker, out, {0: DR_PAST, 1: DR_INTO}, topic)
        record("after_delete")
        broker.stop()
        copy = dict(truth.take_copy(broker.data, out / "copy", "cp -a"), copy="copy")
        broker.start()
        record("after_restart")
        producers = {p: truth.table_rows(answers["after_restart"][str(p)]["describeProducers"]["stdout"])
                     for p in (0, 1)}
        aborts = {}
        for p in (0, 1):
            row = next((r for r in producers[p] if r.get("CurrentTransactionStartOffset") not in (None, "", "None")),
                       None)
            start = row["CurrentTransactionStartOffset"] if row else str(DR_BEFORE + 1)
            aborts[str(p)] = clients.tool_lines(broker, "abort", "--topic", topic, "--partition", str(p),
                                                "--start-offset", start)
        record("after_abort")
    finally:
        if child is not None:
            clients.kill(child)
        broker.close()
    scene = {
        "scene": "delete-records", "release": release or "4.1-default", "topic": topic,
        "layout": {"committed_before": [0, DR_BEFORE - 1], "marker_before": DR_BEFORE,
                   "open": [DR_BEFORE + 1, DR_BEFORE + DR_OPEN], "committed_after": [
                       DR_BEFORE + DR_OPEN + 1, DR_BEFORE + DR_OPEN + DR_AFTER],
                   "marker_after": DR_BEFORE + DR_OPEN + DR_AFTER + 1},
        "delete_records": {"moves": {"0": DR_PAST, "1": DR_INTO}, "result": deleted,
                           "what": {"0": "log start past the open transaction's data",
                                    "1": "log start inside the open transaction's data"}},
        "hanging": {"transactionalId": hanging_id, "events": events_of(out, hanging_id)},
        "removed_coordinator_partitions": gone, "answers": answers, "aborts": aborts, "copy": copy,
        "file_times": truth.file_times(out / "copy"),
    }
    truth.dump_json(out / "truth.json", scene)
    return scene


def restart_scene(out: Path, release: str | None = "3.9-IV0") -> dict:
    out.mkdir(parents=True, exist_ok=True)
    broker = Broker(out / "kafka", release_version=release, extra=SETTINGS)
    topic = "rs"
    children = []
    epochs = {}
    try:
        broker.format()
        broker.start()
        create_topics(broker, {topic: 1})
        clients.commit_records(broker, "kf-rs-committed", topic, [0], 3)
        children.append(clients.open_transaction(broker, out, "kf-rs-before", topic, [0], OPEN_RECORDS))
        clients.kill(children[-1])
        broker.stop()
        epochs["after_first_stop"] = (broker.data / f"{topic}-0" / "leader-epoch-checkpoint").read_text()
        broker.start()
        children.append(clients.open_transaction(broker, out, "kf-rs-after", topic, [0], OPEN_RECORDS))
        clients.kill(children[-1])
        clients.commit_records(broker, "kf-rs-committed", topic, [0], COMMITTED_RECORDS)
        live = {"findHanging": clients.find_hanging_live(broker),
                "partition": clients.partition_answers(broker, topic, 0),
                "list": clients.tool_lines(broker, "list")}
        broker.stop()
        copy = dict(truth.take_copy(broker.data, out / "copy", "cp -a"), copy="copy")
    finally:
        for child in children:
            clients.kill(child)
        broker.close()
    epochs["copy"] = (out / "copy" / f"{topic}-0" / "leader-epoch-checkpoint").read_text()
    scene = {
        "scene": "restart", "release": release or "4.1-default", "topic": topic, "broker_starts": broker.starts,
        "open": {t: events_of(out, t) for t in ("kf-rs-before", "kf-rs-after")},
        "leader_epoch_checkpoint": epochs, "live": live, "copy": copy,
        "file_times": truth.file_times(out / "copy"),
    }
    truth.dump_json(out / "truth.json", scene)
    return scene


SCENES = {"jbod": jbod_scene, "delete-records": delete_records_scene, "restart": restart_scene}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="a new directory; each scene in OUT/<scene>")
    ap.add_argument("scene", choices=sorted(SCENES) + ["all"])
    ap.add_argument("--release", default="3.9-IV0", help="kafka-storage --release-version, or 'default' (4.1, TV2)")
    args = ap.parse_args(argv)
    release = None if args.release == "default" else args.release
    for name in sorted(SCENES) if args.scene == "all" else [args.scene]:
        SCENES[name](args.out / name, release)
        print(f"{name} -> {args.out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
