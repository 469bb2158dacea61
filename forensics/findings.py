"""Findings: damage and anomalies reported as data, next to the results.

A finding never stops the analysis; it records what was seen, where (file path,
byte range, offset range) and why it matters. Plain frozen data, JSON-able through
:meth:`Finding.to_dict`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Dict, Optional


class Severity(str, Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class FindingKind(str, Enum):
    # byte-level damage in .log files
    TRUNCATED_TAIL = "truncated_tail"  # last entry extends past end of file
    ZERO_FILL = "zero_fill"  # zero bytes where a batch should start (preallocation, crash)
    CORRUPT_REGION = "corrupt_region"  # bytes that frame no valid batch; skipped by resync
    CRC_MISMATCH = "crc_mismatch"
    CORRUPT_BATCH = "corrupt_batch"  # framed batch whose header or records do not decode
    UNSUPPORTED_MAGIC = "unsupported_magic"
    UNSUPPORTED_CODEC = "unsupported_codec"
    OFFSET_REGRESSION = "offset_regression"  # batch offsets going backwards in one segment
    OFFSET_OVERFLOW = "offset_overflow"  # lastOffset - segment base does not fit in int32
    BATCH_BEFORE_BASE = "batch_before_base"  # batch offset below the segment's base offset
    # other files
    CORRUPT_INDEX = "corrupt_index"
    INDEX_ZERO_TAIL = "index_zero_tail"
    CORRUPT_SNAPSHOT = "corrupt_snapshot"
    CORRUPT_CHECKPOINT = "corrupt_checkpoint"
    CORRUPT_TRANSACTION_LOG = "corrupt_transaction_log"
    UNREADABLE_FILE = "unreadable_file"
    NOT_KAFKA = "not_kafka"
    # layout
    UNKNOWN_FILE = "unknown_file"
    DELETED_FILE = "deleted_file"
    CLEANED_FILE = "cleaned_file"
    SWAP_FILE = "swap_file"
    STALE_TMP_FILE = "stale_tmp_file"
    DUPLICATE_BROKER = "duplicate_broker"
    ORPHAN_INDEX = "orphan_index"  # index file without its .log
    MISSING_INDEX = "missing_index"


_DEFAULT_SEVERITY = {
    FindingKind.TRUNCATED_TAIL: Severity.WARNING,
    FindingKind.ZERO_FILL: Severity.WARNING,
    FindingKind.CORRUPT_REGION: Severity.ERROR,
    FindingKind.CRC_MISMATCH: Severity.ERROR,
    FindingKind.CORRUPT_BATCH: Severity.ERROR,
    FindingKind.UNSUPPORTED_MAGIC: Severity.ERROR,
    FindingKind.UNSUPPORTED_CODEC: Severity.ERROR,
    FindingKind.OFFSET_REGRESSION: Severity.ERROR,
    FindingKind.OFFSET_OVERFLOW: Severity.WARNING,
    FindingKind.BATCH_BEFORE_BASE: Severity.ERROR,
    FindingKind.CORRUPT_INDEX: Severity.WARNING,
    FindingKind.INDEX_ZERO_TAIL: Severity.INFO,
    FindingKind.CORRUPT_SNAPSHOT: Severity.WARNING,
    FindingKind.CORRUPT_CHECKPOINT: Severity.WARNING,
    FindingKind.CORRUPT_TRANSACTION_LOG: Severity.ERROR,
    FindingKind.UNREADABLE_FILE: Severity.ERROR,
    FindingKind.NOT_KAFKA: Severity.WARNING,
    FindingKind.UNKNOWN_FILE: Severity.INFO,
    FindingKind.DELETED_FILE: Severity.INFO,
    FindingKind.CLEANED_FILE: Severity.INFO,
    FindingKind.SWAP_FILE: Severity.INFO,
    FindingKind.STALE_TMP_FILE: Severity.INFO,
    FindingKind.DUPLICATE_BROKER: Severity.WARNING,
    FindingKind.ORPHAN_INDEX: Severity.INFO,
    FindingKind.MISSING_INDEX: Severity.INFO,
}


@dataclass(frozen=True, slots=True)
class Finding:
    kind: FindingKind
    message: str
    path: Optional[str] = None
    position: Optional[int] = None  # first byte concerned
    end_position: Optional[int] = None  # exclusive end of the byte range concerned
    first_offset: Optional[int] = None
    last_offset: Optional[int] = None
    severity: Optional[Severity] = None

    @property
    def level(self) -> Severity:
        return self.severity or _DEFAULT_SEVERITY.get(self.kind, Severity.WARNING)

    @property
    def byte_count(self) -> Optional[int]:
        if self.position is None or self.end_position is None:
            return None
        return self.end_position - self.position

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "kind": self.kind.value,
            "severity": self.level.value,
            "message": self.message,
        }
        for name in ("path", "position", "end_position", "first_offset", "last_offset"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out

    def one_line(self) -> str:
        where = []
        if self.path:
            where.append(self.path)
        if self.position is not None:
            if self.end_position is not None and self.end_position != self.position:
                where.append(f"bytes {self.position}-{self.end_position}")
            else:
                where.append(f"byte {self.position}")
        if self.first_offset is not None:
            if self.last_offset is not None and self.last_offset != self.first_offset:
                where.append(f"offsets {self.first_offset}-{self.last_offset}")
            else:
                where.append(f"offset {self.first_offset}")
        loc = ", ".join(where)
        return f"{self.level.value}: {self.kind.value}: {loc}: {self.message}" if loc else (
            f"{self.level.value}: {self.kind.value}: {self.message}"
        )
