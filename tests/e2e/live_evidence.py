"""Real evidence of a running broker: copies taken while it runs, and the tool run on its live log dir.

A single-node KRaft Kafka 4.1.0 broker (``tests/e2e/kafka_broker.py``), ``__transaction_state`` with
``TXN_PARTITIONS`` partitions, topic ``live`` (3 partitions, 16 KiB segments, 48 KiB retention per
partition: segments roll every few seconds, old ones are deleted, producer snapshots are written at each
roll). Two transactional producers, each in a process of its own (``tests/e2e/txn_log_child.py``), log
every step with wall-clock ms:

* ``kf-live-committer``: a transaction every ~50 ms, one record on each of the 3 partitions;
* ``kf-live-holder``: a transaction on 1-3 of the partitions held open 3-8 s, then committed or aborted.

While they run: ``copies`` copies of the log dir with ``cp -r`` (every ``cp_a_every``-th with ``cp -a``) at
random moments, each into its own dir, its wall-clock window recorded (scene a); then ``direct_runs``
runs of find-hanging / abort-commands on the broker's own log dir (scene b). Then the producers end
their transactions, the broker stops cleanly and one last copy (``final``) is taken: the quiescent control.

Everything lands under ``out``: ``kafka/`` (the broker's data, config, logs), ``producers/*.jsonl``,
``copies/copy-NN/`` + ``copies/copy-NN.json`` (its window, cp's exit, the producers' ground truth and the
file times), ``direct/run-NN.json``, ``truth.json`` (the scene: settings, every transaction, every copy).
:func:`analyse_scene` adds ``copies/copy-NN.today.json``: what today's find-hanging and abort-commands said.

As a script: ``python -m tests.e2e.live_evidence OUT [--release 3.9-IV0|default] [--copies 24] ...``.
"""

from __future__ import annotations

import argparse
import random
import re
import signal
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

from tests.e2e import evidence_truth as truth
from tests.e2e.forensics_cli import analyse, armed_lines, forensics, json_rows, row_summary, run_summary, script_head
from tests.e2e.kafka_broker import Broker

TOPIC = "live"
PARTITIONS = 3
TXN_PARTITIONS = 5
COMMITTER, HOLDER = "kf-live-committer", "kf-live-holder"
CHILD = Path(__file__).with_name("txn_log_child.py")
BROKER_SETTINGS = {
    "transaction.state.log.num.partitions": str(TXN_PARTITIONS),
    "log.retention.check.interval.ms": "1000", "log.segment.delete.delay.ms": "500",
    "log.cleaner.backoff.ms": "2000",
}
TOPIC_SETTINGS = {"internal.segment.bytes": "16384", "retention.bytes": "32768"}
COMMIT_PERIOD_MS = 50  # a transaction every ~50 ms when the box is idle (measured: "ms_per_commit" in truth.json)
COMMIT_VALUE_BYTES = 200  # segments roll every few seconds
# server.log lines that change the files under a reader: a roll, a segment deleted by retention (renamed
# .deleted, its files removed log.segment.delete.delay.ms later; two lines a segment), the log start moved
FILE_EVENTS = {"roll": "Rolled new log segment", "delete": "Deleting segment",
               "log_start": "Incremented log start offset"}


def release_name(release: str | None) -> str:
    return release or "4.1-default"


def start_producer(broker: Broker, out: Path, txid: str, mode: str, seed: int, *extra: str) -> subprocess.Popen:
    logs = out / "producers"
    logs.mkdir(parents=True, exist_ok=True)
    err = open(logs / f"{txid}.stderr", "wb")
    try:
        return subprocess.Popen([sys.executable, str(CHILD), broker.bootstrap, txid, TOPIC, mode,
                                 str(logs / f"{txid}.jsonl"), "--seed", str(seed), *extra],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    finally:
        err.close()


def count_events(path: Path, ev: str) -> int:
    try:
        return path.read_text().count(f'"ev": "{ev}"')
    except OSError:
        return 0


def wait_for(pred, what: str, children: list[subprocess.Popen], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        dead = [c.args[3] for c in children if c.poll() is not None]
        if dead:
            raise RuntimeError(f"producer {dead} ended while waiting for {what}; see its .stderr")
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.1)


def stop_producers(children: list[subprocess.Popen]) -> list[int]:
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    codes = []
    for child in children:
        try:
            codes.append(child.wait(30))
        except subprocess.TimeoutExpired:
            child.kill()
            codes.append(child.wait(30))
    return codes


def direct_run(data: Path, command: str) -> dict:
    """One run of our command on the broker's live log dir, with its window."""
    args = ["find-hanging", str(data), "--all", "--format", "json"] if command == "find-hanging" else [
        "abort-commands", str(data), "--bootstrap-server", "127.0.0.1:9"]
    start = truth.now_ms()
    r = forensics(*args)
    end = truth.now_ms()
    out = dict(run_summary(r), command=command, start_ms=start, end_ms=end)
    if command == "find-hanging":
        out["rows"] = [row_summary(row) for row in json_rows(r)]
    else:
        out["armed"], out["head"] = armed_lines(r.stdout), script_head(r.stdout)
    return out


def broker_file_events(logs: Path) -> list[dict]:
    """Rolls and deletions the broker logged (server.log; its times are the box's local time, here UTC)."""
    stamp = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]")
    events = []
    for path in sorted(logs.glob("server.log*")):
        for line in path.read_text(errors="replace").splitlines():
            m = stamp.match(line)
            kind = next((k for k, s in FILE_EVENTS.items() if s in line), None)
            if m and kind:
                t = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))
                events.append({"t": int(t * 1000) + int(m.group(2)), "kind": kind,
                               "partition": (re.search(r"partition=([^,\s]+)", line) or re.search(
                                   r"dir=\S*/([^/\s,]+)", line) or [None, None])[1]})
    return events


def file_events_in(events: list[dict], start_ms: int, end_ms: int) -> dict[str, int]:
    inside = [e for e in events if start_ms <= e["t"] <= end_ms]
    return {k: sum(1 for e in inside if e["kind"] == k) for k in FILE_EVENTS}


def copy_method(i: int, cp_a_every: int, slow_every: int) -> str:
    if slow_every and i % slow_every == slow_every - 1:
        return truth.SLOW_COPY
    return "cp -a" if cp_a_every and i % cp_a_every == cp_a_every - 2 else "cp -r"


def live_scene(out: Path, release: str | None = "3.9-IV0", copies: int = 28, cp_a_every: int = 6,
               slow_every: int = 7, direct_runs: int = 10, seed: int = 22, gap_s: tuple = (0.1, 1.2)) -> dict:
    """Scenes a and b on one broker; returns (and writes) ``truth.json``."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    broker = Broker(out / "kafka", release_version=release, extra=BROKER_SETTINGS)
    children: list[subprocess.Popen] = []
    copy_rows: list[dict] = []
    runs: list[dict] = []
    try:
        broker.format()
        broker.start()
        from kafka import KafkaAdminClient
        from kafka.admin import NewTopic

        with closing(KafkaAdminClient(bootstrap_servers=broker.bootstrap)) as admin:
            admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1, topic_configs=dict(TOPIC_SETTINGS))])
        logs = out / "producers"
        children.append(start_producer(broker, out, COMMITTER, "committer", seed, "--period-ms", str(COMMIT_PERIOD_MS),
                                        "--value-bytes", str(COMMIT_VALUE_BYTES)))
        children.append(start_producer(broker, out, HOLDER, "holder", seed + 1))
        wait_for(lambda: count_events(logs / f"{COMMITTER}.jsonl", "commit") >= 20
                 and count_events(logs / f"{HOLDER}.jsonl", "ack") >= 1, "the producers' first transactions", children)
        for i in range(copies):
            time.sleep(rng.uniform(*gap_s))
            method = copy_method(i, cp_a_every, slow_every)
            name = f"copy-{i:02d}"
            row = dict(truth.take_copy(broker.data, out / "copies" / name, method), copy=name)
            copy_rows.append(row)
        for j in range(direct_runs):
            runs.append(dict(direct_run(broker.data, "find-hanging" if j % 2 == 0 else "abort-commands"),
                             run=f"run-{j:02d}"))
        codes = stop_producers(children)
        time.sleep(truth.MARKER_GRACE_MS / 1000)  # the last markers and Complete* records land
        broker.stop()
        final = dict(truth.take_copy(broker.data, out / "copies" / "final", "cp -a"), copy="final")
    finally:
        stop_producers(children)
        broker.close()
    events = truth.read_events(sorted((out / "producers").glob("*.jsonl")))
    txns = truth.transactions(events, TOPIC)
    file_events = broker_file_events(broker.logs)
    for row in copy_rows + [final]:
        row.update(truth.window_truth(txns, row["start_ms"], row["end_ms"]))
        row["broker_file_events"] = file_events_in(file_events, row["start_ms"], row["end_ms"])
        row["file_times"] = truth.file_times(out / "copies" / row["copy"])
        truth.dump_json(out / "copies" / f"{row['copy']}.json", row)
    for run in runs:
        run.update(truth.window_truth(txns, run["start_ms"], run["end_ms"]))
        run["broker_file_events"] = file_events_in(file_events, run["start_ms"], run["end_ms"])
        truth.dump_json(out / "direct" / f"{run['run']}.json", run)
    scene = {
        "scene": "live", "release": release_name(release), "topic": TOPIC, "partitions": PARTITIONS,
        "txn_state_partitions": TXN_PARTITIONS, "broker_settings": BROKER_SETTINGS, "topic_settings": TOPIC_SETTINGS,
        "producers": {COMMITTER: "a transaction every ~50 ms on partitions 0,1,2",
                      HOLDER: "one on 1-3 partitions held 3-8 s, then commit (or abort, 30 %)"},
        "producer_exit_codes": codes, "grace_ms": truth.MARKER_GRACE_MS, "ms_per_commit": ms_per_commit(txns),
        "transactions": [t.as_json() for t in txns],
        "copies": [{k: v for k, v in r.items() if k != "file_times"} for r in copy_rows],
        "final": {k: v for k, v in final.items() if k != "file_times"},
        "direct_runs": [{k: v for k, v in r.items() if k not in ("stderr", "rows")} for r in runs],
    }
    truth.dump_json(out / "truth.json", scene)
    return dict(scene, direct_runs=runs)


def ms_per_commit(txns: list[truth.Txn]) -> float | None:
    ends = [t.ended_ms for t in txns if t.txid == COMMITTER and t.ended_ms is not None]
    return round((ends[-1] - ends[0]) / (len(ends) - 1), 1) if len(ends) > 1 else None


def analyse_scene(out: Path) -> dict[str, dict]:
    """Today's find-hanging and abort-commands on every copy of a scene (``copies/copy-NN.today.json``)."""
    results = {}
    for copy in sorted(p for p in (out / "copies").iterdir() if p.is_dir()):
        results[copy.name] = analyse([copy])
        truth.dump_json(out / "copies" / f"{copy.name}.today.json", results[copy.name])
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="a new directory (e.g. /work/scratch/live-evidence/live-tv0)")
    ap.add_argument("--release", default="3.9-IV0", help="kafka-storage --release-version, or 'default' (4.1, TV2)")
    ap.add_argument("--copies", type=int, default=28)
    ap.add_argument("--slow-every", type=int, default=7,
                    help=f"every N-th copy a {truth.SLOW_COPY!r} (file by file, {truth.SLOW_COPY_PAUSE_S} s apart)")
    ap.add_argument("--direct-runs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--no-analyse", action="store_true", help="do not run today's tool on the copies")
    args = ap.parse_args(argv)
    release = None if args.release == "default" else args.release
    scene = live_scene(args.out, release, copies=args.copies, slow_every=args.slow_every,
                       direct_runs=args.direct_runs, seed=args.seed)
    print(f"{len(scene['copies'])} copies, {len(scene['transactions'])} transactions -> {args.out}")
    if not args.no_analyse:
        analyse_scene(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
