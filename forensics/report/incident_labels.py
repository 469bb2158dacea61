"""What the incident report calls each key of a ``find-hanging`` row, in one place.

:data:`LABELS` is keyed by the key's path in the row (``evidence.openTransaction.fromSnapshot``;
list items as ``[]``: ``evidence.gaps[].text``). Each entry (a :class:`~forensics.columns.Label`) says how
a person reads it (``text``, where ``{n}`` is the list item's number), what a missing value means
(``none``: never a bare ``null``), what an empty list means (``empty``), how to show the value (``kind``)
and where the card shows it (``place``; the facts in their ``order``). A column of a typed row
(:class:`~forensics.report.rows.HangingRow`, :class:`~forensics.report.preview.AbortPreview` and its
records, its evidence's records) declares its label with its field (``column(label=...)``); the keys of the
mapping a row holds (``abortForms``) have theirs here. Rows grow keys over time: :func:`label` humanises a
key the table does not know yet (``brandNewFact`` -> "brand new fact"), so it still shows; a test
fails while a key of a real row has no entry.
"""

from __future__ import annotations

import re

from forensics.columns import ELSEWHERE, FACT, MORE, PLAIN, TIME, Label, columns
from forensics.report.preview import AbortPreview, BlockingTransaction, StuckGroup
from forensics.report.rows import (
    BatchPlace, CoordinatorRecordEvidence, GapEvidence, HangingRow, OpenTransactionEvidence, RowEvidence)


def _elsewhere(text: str) -> Label:
    return Label(text, place=ELSEWHERE)


def _declared(kind: type, prefix: str = "") -> dict[str, Label]:
    """The labels a row kind's columns declare, keyed by ``prefix`` + their JSON key."""
    return {prefix + c.key: c.spec.label for c in columns(kind) if c.spec.label is not None}


LABELS: dict[str, Label] = {
    **_declared(HangingRow),
    # -- the abort forms (the card's commands) -------------------------------------------------------------
    "abortForms.abortArgs": _elsewhere("kafka-transactions.sh abort (legacy form)"),
    "abortForms.abortArgsStartOffset": _elsewhere("kafka-transactions.sh abort --start-offset"),
    "abortForms.kafkaPythonArgs": _elsewhere("kafka-python admin abort"),
    # -- evidence --------------------------------------------------------------------------------------------
    **_declared(RowEvidence, "evidence."),
    **_declared(BatchPlace, "evidence.firstBatch."),
    **_declared(OpenTransactionEvidence, "evidence.openTransaction."),
    **_declared(CoordinatorRecordEvidence, "evidence.coordinatorRecord."),
    **_declared(GapEvidence, "evidence.gaps[]."),
    # -- the abort preview -------------------------------------------------------------------------------------
    **_declared(AbortPreview, "abortPreview."),
    **_declared(BlockingTransaction, "abortPreview.nextBlockingTransaction."),
    **_declared(StuckGroup, "abortPreview.stuckConsumerGroups[]."),
}
# the card's facts (top-level keys), in their order
FACTS: tuple[str, ...] = tuple(sorted((k for k, lab in LABELS.items() if lab.place == FACT),
                                      key=lambda k: LABELS[k].order))

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
