"""Reading the machine outputs (``--format json`` and ``jsonl``) in tests: one place that knows their
envelope (forensics/render/machine_format.py, docs/cli.md "Machine outputs"), so that the tests that
only want the rows read them through these helpers."""

from __future__ import annotations

import json
from typing import Any


def document(text: str) -> dict[str, Any]:
    """A ``--format json`` document, checked to name its format and version."""
    doc = json.loads(text)
    assert isinstance(doc, dict) and isinstance(doc.get("format"), str) and isinstance(doc.get("formatVersion"), int), \
        f"no format and formatVersion in {text[:200]!r}"
    return doc


def rows_of(text: str) -> list[dict[str, Any]]:
    """The rows of a row report's ``--format json`` (find-hanging, list, describe, describe-producers)."""
    return document(text)["rows"]


def jsonl_lines(text: str) -> list[dict[str, Any]]:
    """Every line of a ``--format jsonl`` stream after its header line (checked to be one)."""
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines and "formatVersion" in lines[0], f"no header line in {text[:200]!r}"
    return lines[1:]


def jsonl_rows(text: str) -> list[dict[str, Any]]:
    """The rows of a row report's ``--format jsonl``: without its header and manifest lines."""
    return [line for line in jsonl_lines(text) if set(line) != {"manifest"}]
