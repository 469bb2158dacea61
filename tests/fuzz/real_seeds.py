"""Seeds for the decoder fuzz tests taken from the real Kafka 4.1.0 files under ``fixtures/real``:
v2 batches of every codec, record keys and values of ``__transaction_state``, ``__consumer_offsets`` and
``__cluster_metadata`` (data and control records), producer snapshots, index files and the text
checkpoint / properties files of the broker directories.

Every list is deterministic (sorted paths, distinct contents, bounded sizes) and cached.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from forensics.codec.batch import iter_records
from forensics.io.frames import FrameScanner
from tests.fuzz.mutations import REAL, real_sources, topic_of

KeyValue = tuple[bytes | None, bytes | None]


def _distinct(items, limit: int) -> list:
    seen, out = set(), []
    for item in items:
        digest = hashlib.sha256(repr(item).encode()).digest()
        if digest not in seen:
            seen.add(digest)
            out.append(item)
        if len(out) >= limit:
            break
    return out


@cache
def v2_batches(limit: int = 80) -> tuple[bytes, ...]:
    """Whole v2 batches: every compressed and control batch first, then plain ones."""
    special, plain = [], []
    for src in real_sources():
        for f in FrameScanner(src.data, src.name, headers=True):
            batch = src.data[f.position: f.end]
            if len(batch) > 4096:
                continue
            (special if f.header.codec or f.header.is_control else plain).append(batch)
    return tuple(_distinct(special + plain, limit))


@cache
def records(topic: str | None, control: bool = False, limit: int = 120) -> tuple[KeyValue, ...]:
    """(key, value) of the data records (or of the control records) of every real log of ``topic``
    (None: of every topic); KRaft snapshots (``bootstrap.checkpoint``) count as ``__cluster_metadata``."""
    logs = [(src.data, topic_of(src.name.rsplit("/", 2)[-2])) for src in real_sources()]
    logs += [(p.read_bytes(), "__cluster_metadata") for p in sorted(REAL.glob("**/bootstrap.checkpoint"))]
    out: list[KeyValue] = []
    for data, log_topic in logs:
        if topic is not None and log_topic != topic:
            continue
        for f in FrameScanner(data, "seed", headers=True):
            if f.header.is_control == control:
                out.extend((r.key, r.value) for r in iter_records(data, f.position, f.header))
    return tuple(_distinct(out, limit))


def _files(pattern: str, limit: int, max_size: int) -> tuple[bytes, ...]:
    paths = sorted(p for p in REAL.glob(f"**/{pattern}") if 0 < p.stat().st_size <= max_size)
    return tuple(_distinct((p.read_bytes() for p in paths), limit))


@cache
def files(kind: str) -> tuple[bytes, ...]:
    """Contents of real files of one kind (see :data:`FILE_PATTERNS`), distinct, at most 40."""
    return _files(FILE_PATTERNS[kind], 40, 1 << 16)


FILE_PATTERNS: dict[str, str] = {
    "snapshot": "*.snapshot",
    "index": "*.index",
    "timeindex": "*.timeindex",
    "txnindex": "*.txnindex",
    "offset-checkpoint": "*-offset-checkpoint",
    "leader-epoch-checkpoint": "leader-epoch-checkpoint",
    "partition.metadata": "partition.metadata",
    "meta.properties": "meta.properties",
    "quorum-state": "quorum-state",
    "clean-shutdown": ".kafka_cleanshutdown",
}


def example_path(kind: str) -> Path:
    """One real file of a kind (for messages)."""
    return next(p for p in sorted(REAL.glob(f"**/{FILE_PATTERNS[kind]}")) if p.stat().st_size)
