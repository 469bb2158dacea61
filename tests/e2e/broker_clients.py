"""Real clients against a real broker (kafka-python), for the e2e tests and the evidence generators: commit a
few records, read a partition's offsets as consumers see them, forget transactional ids on disk, run the
live ``kafka-transactions.sh`` queries the offline answers are compared with."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from contextlib import closing
from pathlib import Path

from tests.e2e.kafka_broker import Broker

CHILD = Path(__file__).with_name("txn_log_child.py")


def commit_records(broker: Broker, txid: str, topic: str, partitions: Sequence[int], n: int,
                   value: bytes = b"committed", key: str = "{txid}-{p}-{i}") -> None:
    """One committed transaction of ``n`` records on each of ``partitions``, keys ``key.format(txid, p, i)``."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id=txid, acks="all")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        for p in partitions:
            for i in range(n):
                producer.send(topic, key=key.format(txid=txid, p=p, i=i).encode(), value=value, partition=p)
        producer.commit_transaction()
    finally:
        producer.close()


def open_transaction(broker: Broker, work: Path, txid: str, topic: str, partitions: Sequence[int],
                     records: int) -> subprocess.Popen:
    """A child process (``txn_log_child.py open``) that wrote ``records`` records on each partition inside a
    transaction it leaves open; its steps logged to ``work/<txid>.jsonl``. SIGKILL it to make it die there."""
    err = open(work / f"{txid}.stderr", "wb")
    try:
        child = subprocess.Popen([sys.executable, str(CHILD), broker.bootstrap, txid, topic, "open",
                                  str(work / f"{txid}.jsonl"), "--partitions", ",".join(map(str, partitions)),
                                  "--records", str(records)],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, text=True)
    finally:
        err.close()
    line = child.stdout.readline().strip()
    assert line == "ready", f"{txid}: {line!r}; see {work / (txid + '.stderr')}"
    return child


def kill(child: subprocess.Popen) -> None:
    if child.poll() is None:
        child.kill()
    child.wait(30)


def forget_transactional_ids(data: Path | Iterable[Path], ids: list[str]) -> list[Path]:
    """Remove the ``__transaction_state`` partition dirs (in the log dir ``data``, or any of several) whose logs
    hold any of ``ids`` (found by their bytes): the coordinator's memory of them is lost, as after an unclean
    election on, or the loss of, a ``__transaction_state`` partition (docs/stuck-lso.md). The dirs removed."""
    gone = []
    for log_dir in [data] if isinstance(data, Path) else list(data):
        for d in sorted(log_dir.glob("__transaction_state-*")):
            if any(i.encode() in f.read_bytes() for f in d.glob("*.log") for i in ids):
                shutil.rmtree(d)
                gone.append(d)
    return gone


def offsets(broker: Broker, topic: str, partition: int = 0) -> tuple[int, int]:
    """(last stable offset, high watermark) of a partition, as kafka-python's consumers see them."""
    from kafka import KafkaConsumer, TopicPartition

    tp = TopicPartition(topic, partition)
    out = []
    for isolation in ("read_committed", "read_uncommitted"):
        with closing(KafkaConsumer(bootstrap_servers=broker.bootstrap, isolation_level=isolation)) as c:
            out.append(c.end_offsets([tp])[tp])
    return out[0], out[1]


def committed_records(broker: Broker, topic: str, partition: int, until: int,
                      wait_s: float = 30, to_lso: bool = False) -> list[tuple[int, str]]:
    """(offset, key) of every record a read_committed consumer gets from the log start up to offset ``until``,
    polling at most ``wait_s`` seconds. ``to_lso``: also done once it has read up to the partition's last
    stable offset as the broker says it after each poll (the end offset a read_committed consumer is given:
    the broker returns it nothing at or above it), instead of polling on until ``wait_s`` behind an open
    transaction; False: the whole ``wait_s`` (a test that nothing appears behind one waits for it)."""
    from kafka import KafkaConsumer, TopicPartition

    tp = TopicPartition(topic, partition)
    got: list[tuple[int, str]] = []
    with closing(KafkaConsumer(bootstrap_servers=broker.bootstrap, isolation_level="read_committed",
                               enable_auto_commit=False)) as c:
        c.assign([tp])
        c.seek_to_beginning(tp)
        deadline = time.monotonic() + wait_s
        while c.position(tp) < until and time.monotonic() < deadline:
            if to_lso and c.position(tp) >= c.end_offsets([tp])[tp]:
                break
            for records in c.poll(timeout_ms=500).values():
                got += [(r.offset, r.key.decode()) for r in records]
    return got


def partition_answers(broker: Broker, topic: str, partition: int, wait_s: float = 5) -> dict:
    """What the live broker says of one partition: earliest / latest offsets (its ListOffsets answers, as
    kafka-get-offsets.sh prints them: ``topic:partition:offset``), the LSO and HW a read_committed /
    read_uncommitted consumer sees, the records read_committed gets, describe-producers.

    The offsets are asked with kafka-python's consumer (the same ListOffsets request, earliest and latest,
    that kafka-get-offsets.sh sends) rather than two JVM starts of the tool per partition: 16 of the
    DeleteRecords scene's 31 tool runs, ~73 of its ~170 s at load 4."""
    def get_offsets(spec: str) -> str:
        from kafka import KafkaConsumer, TopicPartition

        tp = TopicPartition(topic, partition)
        try:
            with closing(KafkaConsumer(bootstrap_servers=broker.bootstrap)) as c:
                got = (c.beginning_offsets if spec == "earliest" else c.end_offsets)([tp])[tp]
        except Exception as exc:  # noqa: BLE001 - recorded as the answer, as the tool's stderr was
            return f"{type(exc).__name__}: {exc}"[-500:]
        return f"{topic}:{partition}:{got}"

    lso, hw = offsets(broker, topic, partition)
    return {
        "earliest": get_offsets("earliest"), "latest": get_offsets("latest"),
        "lastStableOffset": lso, "highWatermark": hw,
        "readCommitted": [list(r) for r in committed_records(broker, topic, partition, hw, wait_s=wait_s,
                                                             to_lso=True)],
        "describeProducers": tool_lines(broker, "describe-producers", "--topic", topic, "--partition", str(partition)),
    }


def tool_lines(broker: Broker, *args: str) -> dict[str, object]:
    """``kafka-transactions.sh ARGS`` on the live broker: exit code and its stdout lines (stderr's tail)."""
    r = broker.run_tool(["kafka-transactions.sh", "--bootstrap-server", broker.bootstrap, *args])
    return {"rc": r.returncode, "stdout": r.stdout.splitlines(), "stderr": r.stderr.splitlines()[-5:]}


def find_hanging_live(broker: Broker) -> dict[str, object]:
    """Kafka's own find-hanging, every open transaction considered (``--max-transaction-timeout 0``)."""
    return tool_lines(broker, "find-hanging", "--broker-id", "1", "--max-transaction-timeout", "0")


def log_dirs_live(broker: Broker) -> dict:
    """``kafka-log-dirs.sh --describe``: every log dir of broker 1 and the partitions it holds."""
    r = broker.run_tool(["kafka-log-dirs.sh", "--bootstrap-server", broker.bootstrap, "--describe",
                         "--broker-list", "1"])
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("{")), "{}")
    return json.loads(line)
