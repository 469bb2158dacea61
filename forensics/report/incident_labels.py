"""What the incident report calls each key of a ``find-hanging`` row: one table, in one place.

:data:`LABELS` is keyed by the key's path in the row (``evidence.openTransaction.fromSnapshot``;
list items as ``[]``: ``evidence.gaps[].text``). Each entry says how a person reads it (``text``,
where ``{n}`` is the list item's number), what a missing value means (``none``: never a bare
``null``), what an empty list means (``empty``), how to show the value (``kind``) and where the
card shows it (``place``). Rows grow keys over time: :func:`label` humanises a key the table does
not know yet (``brandNewFact`` -> "brand new fact"), so it still shows; a test fails while a key
of a real row has no entry here.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# kinds: how a value is shown
TIME, DURATION, BYTES, LINES, QUOTED, PLAIN = "time", "duration", "bytes", "lines", "quoted", ""
# places: where the transaction's card shows a top-level key (a nested key shows in its record's group)
FACT, ELSEWHERE, MORE = "fact", "elsewhere", "more"


class Label(NamedTuple):
    text: str
    none: str = "unknown"  # what a missing value (JSON null) means
    kind: str = PLAIN
    place: str = MORE  # of a top-level key
    empty: str = "none"  # what an empty list means
    skip_none: bool = False  # a missing value says nothing worth a line (the key is left out)


def _elsewhere(text: str) -> Label:
    return Label(text, place=ELSEWHERE)


_NO_DATA = "unknown: no data batch of it among the inputs (known from the producer snapshot only)"

LABELS: dict[str, Label] = {
    # -- the card's heading, badge, reason, advice and commands show these --------------------------------
    "topic": _elsewhere("topic"),
    "partition": _elsewhere("partition"),
    "transactionalId": _elsewhere("transactional id"),
    "verdict": _elsewhere("verdict"),
    "verdictState": _elsewhere("verdict state (the badge shows it: ongoing, overdue)"),
    "reason": _elsewhere("why"),
    "armed": _elsewhere("abort armed"),
    "notArmedBecause": _elsewhere("not armed because"),
    "advice": _elsewhere("what to do"),
    "abortForms": _elsewhere("abort commands"),
    "activeForm": _elsewhere("the abort form for these brokers (first among the commands)"),
    "abortForms.abortArgs": _elsewhere("kafka-transactions.sh abort (legacy form)"),
    "abortForms.abortArgsStartOffset": _elsewhere("kafka-transactions.sh abort --start-offset"),
    "abortForms.kafkaPythonArgs": _elsewhere("kafka-python admin abort"),
    "abortArgs": _elsewhere("kafka-transactions.sh abort (legacy form), armed"),
    "abortArgsStartOffset": _elsewhere("kafka-transactions.sh abort --start-offset, armed"),
    "kafkaPythonArgs": _elsewhere("kafka-python admin abort, armed"),
    "asOfMs": _elsewhere("as of"),
    "asOfSource": _elsewhere("where the as-of time came from"),
    "durationS": _elsewhere("open for (seconds)"),
    "durationMin": _elsewhere("open for (minutes, as kafka-transactions.sh find-hanging prints it)"),
    "evidence": _elsewhere("evidence"),  # its own group, last
    "abortPreview": Label("what the abort discards", skip_none=True),  # its own group
    # -- the card's facts, in this order ---------------------------------------------------------------------
    "brokerId": Label("broker", "unknown: its log dir has no meta.properties", place=FACT),
    "startOffset": Label("start offset (first offset of the transaction)", place=FACT),
    "producerId": Label("producer id", place=FACT),
    "producerEpoch": Label("producer epoch", place=FACT),
    "coordinatorEpoch": Label("coordinator epoch (-1: none yet)", place=FACT),
    "lastSequence": Label("last sequence", place=FACT),
    "lastTimestamp": Label("last timestamp (the producer's newest batch)", kind=TIME, place=FACT),
    "durationMs": Label("open for (as-of time minus last timestamp)", "unknown: no timestamp", DURATION, FACT),
    "overdueMs": Label("past its own transaction timeout by", kind=DURATION, place=FACT, skip_none=True),
    "coordinatorPartition": Label("coordinator partition (__transaction_state)",
                                  "unknown: no coordinator record names this producer", place=FACT),
    # -- evidence --------------------------------------------------------------------------------------------
    "evidence.partitionDir": Label("partition directory"),
    "evidence.brokerId": Label("broker id of the log dir", "unknown: no meta.properties in the log dir"),
    "evidence.firstBatch": Label("first batch of the transaction", _NO_DATA),
    "evidence.firstBatch.path": Label("first batch of the transaction: segment file"),
    "evidence.firstBatch.position": Label("first batch: byte position in that file"),
    "evidence.snapshot": Label("producer snapshot the replay starts from",
                               "none: replayed from the start of the log"),
    "evidence.logStartOffset": Label("log start offset"),
    "evidence.highWatermark": Label("high watermark"),
    "evidence.lastStableOffset": Label("last stable offset (LSO)"),
    "evidence.openTransaction": Label("the open transaction", _NO_DATA),
    "evidence.openTransaction.firstOffset": Label("open transaction: first offset"),
    "evidence.openTransaction.lastDataOffset": Label("open transaction: last data offset", _NO_DATA),
    "evidence.openTransaction.batches": Label("open transaction: data batches read"),
    "evidence.openTransaction.records": Label("open transaction: records read"),
    "evidence.openTransaction.bytes": Label("open transaction: bytes read", kind=BYTES),
    "evidence.openTransaction.epochs": Label("open transaction: producer epochs of its batches",
                                             empty="none: no data batch of it read"),
    "evidence.openTransaction.fromSnapshot": Label("open transaction: opened before the snapshot the replay "
                                                   "starts from"),
    "evidence.coordinatorRecord": Label("coordinator record", "none: no coordinator record names this "
                                        "transactional id"),
    "evidence.coordinatorRecord.partition": Label("coordinator record: __transaction_state partition"),
    "evidence.coordinatorRecord.offset": Label("coordinator record: offset"),
    "evidence.coordinatorRecord.state": Label("coordinator record: state"),
    "evidence.coordinatorRecord.timestamp": Label("coordinator record: time", kind=TIME),
    "evidence.coordinatorRecord.path": Label("coordinator record: segment file"),
    "evidence.coordinatorRecord.position": Label("coordinator record: byte position"),
    "evidence.gaps": Label("evidence gaps", empty="none"),
    "evidence.gaps[].kind": Label("evidence gap {n}: kind"),
    "evidence.gaps[].text": Label("evidence gap {n}: the log"),
    "evidence.gaps[].path": Label("evidence gap {n}: file"),
    "evidence.gaps[].position": Label("evidence gap {n}: byte position", skip_none=True),
    "evidence.gaps[].log_end": Label("evidence gap {n}: the log read ends at offset", skip_none=True),
    "evidence.gaps[].partition_dir": Label("evidence gap {n}: partition directory"),
    # -- the abort preview -------------------------------------------------------------------------------------
    "abortPreview.firstOffset": Label("first offset discarded", "unknown: no data batch of it among the inputs"),
    "abortPreview.lastOffset": Label("last offset discarded", "unknown: no data batch of it among the inputs"),
    "abortPreview.batches": Label("batches discarded"),
    "abortPreview.records": Label("records discarded"),
    "abortPreview.bytes": Label("bytes discarded", kind=BYTES),
    "abortPreview.firstTimestamp": Label("first record discarded: time", "unknown: no data batch read",
                                         TIME),
    "abortPreview.lastTimestamp": Label("last record discarded: time", "unknown: no data batch read",
                                        TIME),
    "abortPreview.keys": Label("record keys discarded (the first ones)", kind=QUOTED,
                               empty="none read"),
    "abortPreview.segments": Label("segment files holding them", kind=LINES,
                                   empty="none read"),
    "abortPreview.lastStableOffset": Label("last stable offset now"),
    "abortPreview.highWatermark": Label("high watermark"),
    "abortPreview.lsoAfterAbort": Label("last stable offset after the abort marker"),
    "abortPreview.nextBlockingTransaction": Label("next transaction holding the LSO back",
                                                  "none: the LSO moves up to the high watermark"),
    "abortPreview.nextBlockingTransaction.producerId": Label("next transaction holding the LSO back: producer id"),
    "abortPreview.nextBlockingTransaction.firstOffset": Label("next transaction holding the LSO back: first "
                                                              "offset"),
    "abortPreview.stuckConsumerGroups": Label("consumer groups committed at the LSO (waiting on it)",
                                              "unknown: no __consumer_offsets in the inputs",
                                              empty="none: no group committed at the LSO"),
    "abortPreview.stuckConsumerGroups[].group": Label("waiting group {n}"),
    "abortPreview.stuckConsumerGroups[].committedOffset": Label("waiting group {n}: committed offset"),
    "abortPreview.stuckConsumerGroups[].commitTimestamp": Label("waiting group {n}: committed at", kind=TIME),
    "abortPreview.findings": Label("findings while reading that data", kind=LINES,
                                   empty="none: read as Kafka wrote it"),
}

# the heading of a nested record's group on the card ("": the row's other keys)
GROUP_LABELS = {"abortPreview": "What the abort discards, and where the LSO moves", "evidence": "Evidence",
                "": "More facts of the row"}
_INDEX = re.compile(r"\[(\d+)\]")
_TIME_SUFFIXES = ("timestamp", "timems", "startms", "updatems")


def table_key(path: str) -> str:
    """The table's key of a flattened path: list indices dropped (``gaps[0].text`` -> ``gaps[].text``)."""
    return _INDEX.sub("[]", path)


def is_time_key(key: str) -> bool:
    """Keys of epoch-millisecond values in our JSON rows (``lastTimestamp``, ``startTimeMs``, ...)."""
    return key.rsplit(".", 1)[-1].lower().endswith(_TIME_SUFFIXES)


def humanise(path: str) -> str:
    """A key the table does not know, readable: ``newRecord.someFactMs`` -> "new record › some fact ms"."""
    words = [re.sub(r"(?<=[a-z0-9])(?=[A-Z])|_", " ", part).lower().strip() for part in table_key(path).split(".")]
    text = " › ".join(w.replace("[]", "") for w in words if w)
    return text or "(unnamed)"


def label(path: str) -> Label:
    """The table's entry for a flattened row path, ``{n}`` filled with the list item's number; a key
    the table does not know gets a humanised one (shown under "More", times recognised by name)."""
    known = LABELS.get(table_key(path))
    if known is None:
        return Label(humanise(path), kind=TIME if is_time_key(path) else PLAIN, place=MORE)
    n = _INDEX.findall(path)
    return known._replace(text=known.text.format(n=int(n[-1]) + 1)) if n and "{n}" in known.text else known
