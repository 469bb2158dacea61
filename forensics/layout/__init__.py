"""layout layer: log dirs, partition dirs, effective segment sets, checkpoint files.

Never reads record bytes; see :mod:`forensics.layout.discovery` (:func:`discover`). The names below are loaded from their
modules when first asked for (``from forensics.layout import Inventory``), so that a command that
needs only the names of files (dump: :mod:`forensics.layout.names`) does not load discovery.
"""

from importlib import import_module
from typing import TYPE_CHECKING

_WHERE = {
    "DEFAULT_MAX_DEPTH": "discovery",
    "discover": "discovery",
    "FileKind": "names",
    "PartitionStatus": "names",
    "Inventory": "inventory",
    "KraftSnapshotFile": "inventory",
    "LogDir": "inventory",
    "LooseFile": "inventory",
    "PartitionDir": "inventory",
    "SegmentFiles": "inventory",
    "SnapshotFile": "inventory",
    "SwapNextOffset": "segments",
}

if TYPE_CHECKING:
    from forensics.layout.discovery import DEFAULT_MAX_DEPTH, discover
    from forensics.layout.names import FileKind, PartitionStatus
    from forensics.layout.inventory import (
        Inventory,
        KraftSnapshotFile,
        LogDir,
        LooseFile,
        PartitionDir,
        SegmentFiles,
        SnapshotFile,
    )
    from forensics.layout.segments import SwapNextOffset


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_MAX_DEPTH",
    "FileKind",
    "Inventory",
    "KraftSnapshotFile",
    "LogDir",
    "LooseFile",
    "PartitionDir",
    "PartitionStatus",
    "SegmentFiles",
    "SnapshotFile",
    "SwapNextOffset",
    "discover",
]
