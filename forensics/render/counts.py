"""Counted nouns in the text outputs: ``1 batch``, ``2 batches``, ``0 records``."""

from __future__ import annotations

from typing import Optional

_IRREGULAR = {"batch": "batches", "index": "indexes", "entry": "entries", "is": "are"}


def count(n: Optional[int], noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 (``None``: "? records")."""
    if n == 1:
        return f"1 {noun}"
    many = _IRREGULAR.get(noun, noun if noun.endswith("s") else noun + "s")
    return f"{'?' if n is None else n} {many}"


__all__ = ["count"]
