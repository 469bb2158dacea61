"""What a partition's index files say its log reached: witnesses for the torn-copy test
(:mod:`forensics.analysis.evidence_gaps`).

``LogSegment.append`` adds an offset index entry (the batch's largest offset, its byte position) and a
time index entry (the largest timestamp so far, its offset) every ``index.interval.bytes``: an entry
names an offset the log held when the entry was written. The indexes of a segment are read by
bisection for their last entry (a preallocated index of 10 MiB of zeros is touched in a few pages),
read-only, through the one evidence opener.
"""

from __future__ import annotations

from typing import NamedTuple

import os
from bisect import bisect_right
from collections.abc import Sequence

from forensics.codec.checkpoints import EpochEntry
from forensics.codec.indexes import last_offset_entry, last_time_entry
from forensics.errors import ForensicsError
from forensics.io.files import MappedFile, open_evidence
from forensics.io.frames import FrameScanner
from forensics.layout import PartitionDir


class Reach(NamedTuple):
    """An index entry naming an offset the log held: the next offset after it, and where it was read."""

    next_offset: int
    path: str
    what: str  # "offset index", "time index"


def index_reach(p: PartitionDir) -> Reach | None:
    """The furthest offset the last segment's indexes say the log held (None: no index, none that reads, or
    only an entry at the segment's base offset: it cannot be told from a preallocated index's zeros)."""
    segments = [s for s in p.segments if s.log is not None]
    if not segments:
        return None
    last = segments[-1]
    found = []
    for path, what, read in ((last.index, "offset index", last_offset_entry),
                             (last.timeindex, "time index", last_time_entry)):
        if path is None:
            continue
        try:
            with MappedFile(path) as f:
                entry = read(f.data, last.base_offset)
        except ForensicsError:
            continue  # an unreadable index is reported where indexes are dumped; it witnesses nothing
        if entry is not None and entry.offset > last.base_offset:  # entry 0 all zeros: a preallocated index
            found.append(Reach(entry.offset + 1, path, what))
    return max(found, default=None)


_CRC_AT = 17  # a v2 batch: baseOffset 8, batchLength 4, partitionLeaderEpoch 4, magic 1, then the CRC-32C


def batch_crc(path: str, position: int) -> int | None:
    """The CRC-32C a v2 batch at byte ``position`` of ``path`` carries (None: no v2 batch header there, or
    the file does not read). The CRC covers everything but the batch's offset and leader epoch: two batches
    with one CRC hold the same records."""
    try:
        fd, _ = open_evidence(path)
    except ForensicsError:
        return None
    try:
        head = os.pread(fd, _CRC_AT + 4, position)  # 21 bytes: no map of the segment for them
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(head) < _CRC_AT + 4 or head[16] != 2:
        return None
    return int.from_bytes(head[_CRC_AT:], "big")


class EpochMismatch(NamedTuple):
    """A batch whose partition leader epoch is not the one ``leader-epoch-checkpoint`` gives its offsets."""

    offset: int  # the first offset of the batch that counts (its base, or the log start inside it)
    batch_epoch: int
    expected: int | None  # None: no entry starts at or below the offset
    path: str
    position: int


def epoch_mismatch(segments: Sequence[str], entries: Sequence[EpochEntry], log_start: int) -> EpochMismatch | None:
    """The first v2 batch at or above ``log_start`` whose partition leader epoch is not the epoch the
    checkpoint's entries give its offset (``LeaderEpochFileCache.epochForOffset``: the entry with the largest
    start at or below it), or inside which an entry starts (entries start at a batch, but for the log start).
    A leader assigns an entry when it appends its epoch's first batch, and a follower copies both; an entry
    the batches contradict is an edited or stale checkpoint, or a log of another moment. Reads the batch
    headers only (called for the partitions a verdict rests on)."""
    if not entries:
        return None
    starts = [e.start_offset for e in entries]
    for path in segments:
        try:
            with MappedFile(path) as f:
                for frame in FrameScanner(f.data, path, verify_crc=False, headers=True, holes=f.holes):
                    h = frame.header
                    if h is None or h.partition_leader_epoch < 0 or frame.last_offset < log_start:
                        continue
                    at = max(frame.base_offset, log_start)
                    i = bisect_right(starts, at) - 1
                    expected = entries[i].epoch if i >= 0 else None
                    if expected != h.partition_leader_epoch:
                        return EpochMismatch(at, h.partition_leader_epoch, expected, path, frame.position)
                    j = bisect_right(starts, frame.last_offset) - 1  # an epoch starting inside the batch
                    if j > i and starts[j] != log_start:
                        return EpochMismatch(starts[j], h.partition_leader_epoch, entries[j].epoch, path,
                                             frame.position)
        except ForensicsError:
            return None  # what does not read is reported by the reading itself
    return None
