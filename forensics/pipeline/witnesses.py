"""What a partition's index files say its log reached: witnesses for the torn-copy test
(:mod:`forensics.analysis.evidence_gaps`).

``LogSegment.append`` adds an offset index entry (the batch's largest offset, its byte position) and a
time index entry (the largest timestamp so far, its offset) every ``index.interval.bytes``: an entry
names an offset the log held when the entry was written. The indexes of a segment are read by
bisection for their last entry (a preallocated index of 10 MiB of zeros is touched in a few pages),
read-only, through the one evidence opener.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

from forensics.codec.indexes import last_offset_entry, last_time_entry
from forensics.errors import ForensicsError
from forensics.io.files import MappedFile
from forensics.layout import PartitionDir


class Reach(NamedTuple):
    """An index entry naming an offset the log held: the next offset after it, and where it was read."""

    next_offset: int
    path: str
    what: str  # "offset index", "time index"


def index_reach(p: PartitionDir) -> Optional[Reach]:
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


def batch_crc(path: str, position: int) -> Optional[int]:
    """The CRC-32C a v2 batch at byte ``position`` of ``path`` carries (None: no v2 batch header there, or
    the file does not read). The CRC covers everything but the batch's offset and leader epoch: two batches
    with one CRC hold the same records."""
    try:
        with MappedFile(path) as f:
            head = bytes(f.data[position:position + _CRC_AT + 4])
    except ForensicsError:
        return None
    if len(head) < _CRC_AT + 4 or head[16] != 2:
        return None
    return int.from_bytes(head[_CRC_AT:], "big")
