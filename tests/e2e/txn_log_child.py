"""A transactional kafka-python producer that logs every step, in a process of its own (real-broker evidence).

``python txn_log_child.py BOOTSTRAP TRANSACTIONAL_ID TOPIC MODE LOG.jsonl [OPTIONS]``, MODE one of

* ``committer``: a transaction every ``--period-ms`` (50): begin, one record to each of ``--partitions``
  (``0,1,2``), commit; until SIGTERM, which ends the current transaction first;
* ``holder``: begin, ``--records`` (2) records to a random non-empty subset of ``--partitions``, flush, hold
  the transaction open ``--hold-min-s``..``--hold-max-s`` (3..8) seconds, then commit (or abort, with
  probability ``--abort-ratio``, 0.3), pause 0.2..1 s; until SIGTERM;
* ``open``: begin, ``--records`` records to each of ``--partitions``, flush, print ``ready`` and leave the
  transaction open until killed (SIGKILL: an application that dies mid-transaction).

One JSON object a line, flushed at once, ``t`` the wall-clock epoch ms (``time.time``) at the step:
``{"t", "ev", "txid", "pid", "epoch", "txn", ...}`` with ``ev`` one of ``init`` (after init_transactions),
``begin`` (before begin_transaction), ``send`` (``partition``, before the send call), ``ack`` (``partition``,
``offset``; the broker acknowledged the write, from the producer's I/O thread), ``commit_start`` /
``abort_start`` (before the call), ``commit`` / ``abort`` (the call returned: the coordinator logged
PrepareCommit/PrepareAbort; the markers may land later), ``error`` (``error``: the exception), ``exit``.
``txn`` numbers this producer's transactions from 0. The producer id and epoch are read off kafka-python's
transaction manager (``producer_id_and_epoch``) at each step.
"""

import argparse
import json
import random
import signal
import sys
import threading
import time

from kafka import KafkaProducer


class Log:
    def __init__(self, path, txid):
        self.out = open(path, "a", buffering=1)
        self.txid = txid
        self.lock = threading.Lock()
        self.producer = None
        self.txn = -1

    def ids(self):
        pe = self.producer._transaction_manager.producer_id_and_epoch if self.producer else None
        return (pe.producer_id, pe.epoch) if pe is not None else (-1, -1)

    def __call__(self, ev, txn=None, **fields):
        pid, epoch = self.ids()
        row = {"t": int(time.time() * 1000), "ev": ev, "txid": self.txid, "pid": pid, "epoch": epoch,
               "txn": self.txn if txn is None else txn, **fields}
        with self.lock:
            self.out.write(json.dumps(row, sort_keys=True) + "\n")
            self.out.flush()


def parse(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("bootstrap")
    ap.add_argument("txid")
    ap.add_argument("topic")
    ap.add_argument("mode", choices=["committer", "holder", "open"])
    ap.add_argument("log")
    ap.add_argument("--partitions", default="0,1,2")
    ap.add_argument("--period-ms", type=int, default=50)
    ap.add_argument("--records", type=int, default=2)
    ap.add_argument("--hold-min-s", type=float, default=3.0)
    ap.add_argument("--hold-max-s", type=float, default=8.0)
    ap.add_argument("--abort-ratio", type=float, default=0.3)
    ap.add_argument("--transaction-timeout-ms", type=int, default=900_000)
    ap.add_argument("--value-bytes", type=int, default=0, help="record values of this size (0: the mode's name)")
    ap.add_argument("--seed", type=int, default=None)
    return ap.parse_args(argv)


def send_all(producer, log, topic, partitions, records, value):
    futures = []
    for p in partitions:
        for i in range(records):
            log("send", partition=p)
            txn = log.txn
            fut = producer.send(topic, key=f"{log.txid}-{txn}-{p}-{i}".encode(), value=value, partition=p)
            fut.add_callback(lambda md, txn=txn: log("ack", txn=txn, partition=md.partition, offset=md.offset))
            fut.add_errback(lambda exc, txn=txn: log("error", txn=txn, error=repr(exc)))
            futures.append(fut)
    return futures


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    rng = random.Random(args.seed)
    partitions = [int(p) for p in args.partitions.split(",")]
    value = (args.mode.encode() * args.value_bytes)[:args.value_bytes] if args.value_bytes else args.mode.encode()
    log = Log(args.log, args.txid)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    producer = KafkaProducer(bootstrap_servers=args.bootstrap, transactional_id=args.txid, acks="all",
                             linger_ms=0, retries=100, request_timeout_ms=30_000,
                             transaction_timeout_ms=args.transaction_timeout_ms)
    log.producer = producer
    producer.init_transactions()
    log("init")
    try:
        while not stop.is_set():
            log.txn += 1
            log("begin")
            producer.begin_transaction()
            if args.mode == "committer":
                started = time.monotonic()
                send_all(producer, log, args.topic, partitions, 1, value)
                log("commit_start")
                producer.commit_transaction()
                log("commit")
                stop.wait(max(0.0, args.period_ms / 1000 - (time.monotonic() - started)))
                continue
            chosen = partitions if args.mode == "open" else sorted(
                rng.sample(partitions, rng.randint(1, len(partitions))))
            futures = send_all(producer, log, args.topic, chosen, args.records, value)
            producer.flush()
            for fut in futures:
                fut.get(timeout=60)
            if args.mode == "open":
                print("ready", flush=True)
                stop.wait()
                return
            stop.wait(rng.uniform(args.hold_min_s, args.hold_max_s))
            if rng.random() < args.abort_ratio:
                log("abort_start")
                producer.abort_transaction()
                log("abort")
            else:
                log("commit_start")
                producer.commit_transaction()
                log("commit")
            stop.wait(rng.uniform(0.2, 1.0))
    except Exception as exc:  # logged for the ground truth, then the process ends with 1
        log("error", error=repr(exc))
        raise
    finally:
        log("exit")
        if args.mode != "open":
            producer.close(timeout=10)


if __name__ == "__main__":
    main()
