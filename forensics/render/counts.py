"""Counted nouns in the text outputs: ``1 batch``, ``2 batches``, ``0 records``."""

from __future__ import annotations

from collections.abc import Sequence

_IRREGULAR = {"batch": "batches", "index": "indexes", "entry": "entries", "is": "are"}


def count(n: int | None, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 (``None``: "? records")."""
    if n == 1:
        return f"1 {noun}"
    many = _IRREGULAR.get(noun, noun if noun.endswith("s") else noun + "s")
    return f"{'?' if n is None else n} {many}"


def by_topic(counts: Sequence[tuple[str, int]]) -> str:
    """``__cluster_metadata 1, __transaction_state 50``: partitions per topic, by name (topic names
    as the caller made them safe to print)."""
    return ", ".join(f"{t} {n}" for t, n in sorted(counts))


def not_counted(counts: Sequence[tuple[str, int]]) -> str:
    """What a count of data partitions leaves out, said once where it is given: ``not counted: the 51
    partitions of __cluster_metadata 1, __transaction_state 50 (scan counts them)``; "" for none."""
    n = sum(c for _, c in counts)
    if not n:
        return ""
    the = "the " if n > 1 else ""
    return f"not counted: {the}{count(n, 'partition')} of {by_topic(counts)} (scan counts them)"


__all__ = ["by_topic", "count", "not_counted"]
