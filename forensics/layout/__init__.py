"""layout layer: log dirs, partition dirs, effective segment sets, checkpoint files.

Never reads record bytes; see :mod:`forensics.layout.discover`.
"""

from forensics.layout.discover import DEFAULT_MAX_DEPTH, discover
from forensics.layout.names import FileKind, PartitionStatus
from forensics.layout.records import (
    Inventory,
    KraftSnapshotFile,
    LogDir,
    LooseFile,
    PartitionDir,
    SegmentFiles,
    SnapshotFile,
)
from forensics.layout.segments import SwapNextOffset

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
