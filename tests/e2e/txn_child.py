"""A transactional kafka-python producer in a process of its own, for the real-broker tests.

``python txn_child.py BOOTSTRAP TRANSACTIONAL_ID TOPIC N``: init_transactions, begin_transaction, N
records to partition 0 of TOPIC, flush, then prints ``ready`` and leaves the transaction open. Each
``more K`` line on stdin sends K more records inside that same transaction and prints ``sent`` with
their offsets (or ``error`` and the exception). The test ends it with SIGKILL: a producer that dies
mid-transaction, as a crashed application does.
"""

import sys

from kafka import KafkaProducer


def main() -> None:
    bootstrap, txid, topic, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    # transaction timeout = the broker's default transaction.max.timeout.ms (15 min): the coordinator
    # does not abort it on its own while the test runs
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txid, transaction_timeout_ms=900_000,
                             acks="all", linger_ms=0, retries=100, request_timeout_ms=30_000)
    producer.init_transactions()
    producer.begin_transaction()
    for i in range(n):
        producer.send(topic, key=f"{txid}-{i}".encode(), value=b"open", partition=0)
    producer.flush()
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if words and words[0] == "more":
            futures = [producer.send(topic, key=f"{txid}-more-{i}".encode(), value=b"later", partition=0)
                       for i in range(int(words[1]))]
            producer.flush()
            try:
                print("sent", *[f.get(timeout=60).offset for f in futures], flush=True)
            except Exception as exc:  # the test prints it
                print("error", repr(exc), flush=True)


if __name__ == "__main__":
    main()
