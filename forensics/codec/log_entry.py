"""What every entry of a ``.log`` starts with, whatever its magic: Kafka's ``Records`` interface.

Every entry (a v2 batch or a legacy message) begins with ``int64 offset``, ``int32 size`` (bytes
after this 12-byte prefix) and, at byte 16, the magic byte that selects how the rest is read. The
v2 layout is in :mod:`forensics.codec.batch` (``DefaultRecordBatch``), the legacy one in
:mod:`forensics.codec.legacy` (``LegacyRecord``).
"""

from __future__ import annotations

import struct

PREFIX = struct.Struct(">qi")  # Records.OFFSET_OFFSET @0, Records.SIZE_OFFSET @8
SIZE_OFFSET = 8
LOG_OVERHEAD = 12  # Records.LOG_OVERHEAD: offset + size
MAGIC_OFFSET = 16  # Records.MAGIC_OFFSET
HEADER_SIZE_UP_TO_MAGIC = 17  # Records.HEADER_SIZE_UP_TO_MAGIC
MAX_MAGIC = 2  # RecordBatch.CURRENT_MAGIC_VALUE


def nullable_size(data) -> int:
    """The size Kafka prints for a key or value (``keySize``/``valueSize``): -1 for null."""
    return -1 if data is None else len(data)

