"""The name and version of every machine output (``--format json`` and ``jsonl``): one constant per
output, here only. Each is published as ``docs/schemas/<command>.schema.json`` (its ``format`` and
``formatVersion`` are ``const`` there; tests/render/test_machine_schemas.py holds the two equal).

Named as ``_export.json`` names its own (``format``, ``formatVersion``). A JSON document starts with
:meth:`MachineFormat.header`'s two keys; a JSONL stream's first line is that header alone. What a
version may change is in docs/cli.md ("Machine outputs"): a key added keeps the version; a key
removed, renamed or retyped, a changed meaning or a new value of a closed set (a verdict) bumps it.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class MachineFormat(NamedTuple):
    """The JSON/JSONL output of one command, at one version."""

    command: str
    version: int

    @property
    def name(self) -> str:
        """``kafka-forensics-find-hanging``: the ``format`` key's value."""
        return f"kafka-forensics-{self.command}"

    def header(self) -> dict[str, Any]:
        """The keys every document of this output starts with (and a JSONL stream's first line)."""
        return {"format": self.name, "formatVersion": self.version}


# Version 1: the first published. Before it (no formatVersion), the row reports' JSON was a bare array.
SCAN = MachineFormat("scan", 1)
FIND_HANGING = MachineFormat("find-hanging", 1)
DESCRIBE_PRODUCERS = MachineFormat("describe-producers", 1)
LIST = MachineFormat("list", 1)
DESCRIBE = MachineFormat("describe", 1)
DUMP = MachineFormat("dump", 1)
VERIFY_MANIFEST = MachineFormat("verify-manifest", 1)

MACHINE_FORMATS = (SCAN, FIND_HANGING, DESCRIBE_PRODUCERS, LIST, DESCRIBE, DUMP, VERIFY_MANIFEST)

__all__ = ["DESCRIBE", "DESCRIBE_PRODUCERS", "DUMP", "FIND_HANGING", "LIST", "MACHINE_FORMATS", "SCAN",
           "VERIFY_MANIFEST", "MachineFormat"]
