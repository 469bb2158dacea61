"""The KRaft cluster image of the inputs: ``__cluster_metadata`` read off the disk and folded.

:func:`read_cluster_image` picks one ``__cluster_metadata-0`` replica (several brokers' or controllers'
log dirs each hold one: the one whose log reaches furthest, by the (leader epoch, end offset) of its
newest batch), then reads it as a controller loads it (``KafkaRaftClient``, ``MetadataLoader``): the
newest valid snapshot ``<end offset>-<epoch>.checkpoint`` (a record-batch file framed by a
``SnapshotHeader`` and a ``SnapshotFooter`` control record, ``RecordsSnapshotReader``), then the log
segments from its end offset on, and folds the records (:mod:`forensics.state.cluster_replay`).

Damage never raises. A snapshot that is damaged (a batch that does not verify, no header or footer) is
a ``corrupt_snapshot`` finding and the previous snapshot, or the log from offset 0, is read instead;
when nothing older covers the history, the damaged snapshot's readable records are used and the image
is marked incomplete. The log is read up to its first damaged byte (where Kafka's own recovery would
cut it); records missing between the origin and the log (deleted segments, a gap between segments) or
after damage make the image incomplete, each with a ``metadata_incomplete`` finding. Without any log,
``bootstrap.checkpoint`` (the records a controller writes first) gives the features.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import NamedTuple

from forensics.codec.batch import Record
from forensics.codec.control import ControlRecordType, decode_control_key, decode_control_record
from forensics.codec.metadata_records import CorruptMetadataRecordError, decode_metadata_record
from forensics.errors import ForensicsError
from forensics.findings import Finding, FindingKind
from forensics.io.frames import HeadedFrame, V2Frame
from forensics.io.segment import SegmentWalk
from forensics.layout import Inventory, KraftSnapshotFile, PartitionDir, PartitionStatus
from forensics.model import CLUSTER_METADATA_TOPIC
from forensics.state.cluster_image import ClusterImage, MetadataCopy, MetadataFile
from forensics.state.cluster_replay import ClusterReplay, MetadataEntry


class _Reading(NamedTuple):
    """What to read of the chosen replica: a snapshot (or none), the log from ``start`` on, and why
    that misses part of the history (None: it does not)."""

    snapshot: KraftSnapshotFile | None
    start: int
    missing: str | None = None


def metadata_copies(inventory: Inventory) -> list[PartitionDir]:
    """The live ``__cluster_metadata-0`` replicas among the inputs, in inventory order."""
    return [p for _, p in inventory.all_partitions()
            if p.topic == CLUSTER_METADATA_TOPIC and p.status is PartitionStatus.LIVE]


def copy_tip(p: PartitionDir) -> MetadataCopy:
    """How far a replica reaches: its newest batch's (leader epoch, last offset + 1), read from the batch
    headers of its last non-empty segment; its newest snapshot's when no batch follows it."""
    for seg in reversed(p.segments):
        if seg.log is None:
            continue
        last = None
        try:
            with SegmentWalk(seg.log, base_offset=seg.base_offset, verify_crc=False) as walk:
                for frame in walk.frames():
                    if frame.magic == 2 and frame.header is not None:
                        last = frame.header
        except ForensicsError:
            continue
        if last is not None:
            snap = max(p.kraft_checkpoints, key=lambda c: c.end_offset, default=None)
            if snap is None or snap.end_offset <= last.last_offset + 1:
                return MetadataCopy(p.path, last.partition_leader_epoch, last.last_offset + 1)
            break
    snap = max(p.kraft_checkpoints, key=lambda c: (c.end_offset, c.epoch), default=None)
    return MetadataCopy(p.path, -1, 0) if snap is None else MetadataCopy(p.path, snap.epoch, snap.end_offset)


# -- snapshots ---------------------------------------------------------------------------------------------


def _control_type(walk: SegmentWalk[HeadedFrame], frame: V2Frame) -> tuple[int | None, Record | None]:
    """The type of the first control record of a control batch, and the record."""
    records, _ = walk.records(frame)
    if not records:
        return None, None
    try:
        return decode_control_key(records[0].key).type_id, records[0]
    except ForensicsError:
        return None, None


def snapshot_problem(path: str) -> tuple[str | None, int]:
    """Why the snapshot at ``path`` cannot be read whole (None: it can), and its header's
    ``lastContainedLogTimestamp`` (-1 when unknown). Batch checksums are verified; records not decoded."""
    try:
        walk = SegmentWalk(path, base_offset=0)
    except ForensicsError as exc:
        return f"cannot be read: {exc.message}", -1
    timestamp, first, last = -1, None, None
    with walk:
        for frame in walk.frames():
            if frame.magic != 2 or frame.crc_ok is False:
                return f"the batch at byte {frame.position} does not verify", timestamp
            if first is None:
                first = frame
                kind, rec = _control_type(walk, frame) if frame.header.is_control else (None, None)
                if kind != ControlRecordType.SNAPSHOT_HEADER or rec is None:  # (a kind comes with its record)
                    return "it does not begin with a SnapshotHeader control record", timestamp
                try:
                    data = decode_control_record(rec.key, rec.value).data
                    timestamp = data["lastContainedLogTimestamp"] if data else -1
                except ForensicsError:
                    return f"its SnapshotHeader at byte {frame.position} does not decode", timestamp
            last = frame
        if walk.first_invalid_position is not None:
            return f"it is damaged from byte {walk.first_invalid_position} on", timestamp
        if last is None:  # (first is None too)
            return "it holds no batch", timestamp
        kind = _control_type(walk, last)[0] if last.header.is_control and last is not first else None
    if kind != ControlRecordType.SNAPSHOT_FOOTER:
        return "it does not end with a SnapshotFooter control record (cut short?)", timestamp
    return None, timestamp


def _choose(p: PartitionDir, until: int | None, notes: list[Finding]) -> tuple[_Reading, int]:
    """The reading of replica ``p`` that covers the most history, and the snapshot's header timestamp.

    In order: the newest valid snapshot the log continues, the log from offset 0, the newest valid
    snapshot the log does not continue, the newest damaged snapshot, the log from its first offset."""
    logs = [s for s in p.segments if s.log is not None]
    log_start = logs[0].base_offset if logs else None
    valid: list[tuple[KraftSnapshotFile, int]] = []
    damaged: list[tuple[KraftSnapshotFile, int]] = []
    for snap in sorted(p.kraft_checkpoints, key=lambda c: (c.end_offset, c.epoch), reverse=True):
        if until is not None and snap.end_offset > until + 1:
            continue
        problem, ts = snapshot_problem(snap.path)
        (damaged if problem else valid).append((snap, ts))
        if problem:
            notes.append(Finding(FindingKind.CORRUPT_SNAPSHOT, f"KRaft snapshot: {problem}; an older snapshot or the "
                                 "log is read instead where it covers the same history", snap.path))
    covered = [(s, ts) for s, ts in valid if log_start is None or log_start <= s.end_offset]
    if covered:
        return _Reading(covered[0][0], covered[0][0].end_offset), covered[0][1]
    if log_start == 0:
        return _Reading(None, 0), -1
    if valid:  # the gap between it and the log is a finding of the log's reading
        return _Reading(valid[0][0], valid[0][0].end_offset), valid[0][1]
    if damaged:
        snap = damaged[0][0]
        return _Reading(snap, snap.end_offset, "no undamaged snapshot or log covers the history up to offset "
                        f"{snap.end_offset}: the damaged snapshot's readable batches are used"), damaged[0][1]
    if log_start is None:
        return _Reading(None, 0), -1
    return _Reading(None, log_start, f"the metadata log starts at offset {log_start} and no snapshot covers offsets "
                    f"0..{log_start - 1}: the image lacks what they said"), -1


class _Reader:
    def __init__(self, until: int | None, wanted: AbstractSet[int] | None) -> None:
        self.until, self.wanted = until, wanted
        self.replay = ClusterReplay()
        self.files: list[MetadataFile] = []
        self.complete = True

    def incomplete(self, message: str, path: str | None = None, position: int | None = None) -> None:
        self.complete = False
        self.replay.note(Finding(FindingKind.METADATA_INCOMPLETE, message, path, position))

    def batch(self, walk: SegmentWalk[HeadedFrame], frame: V2Frame, log: bool, start: int = 0) -> tuple[int, int | None, int | None]:
        """Fold the records of one data batch (of the log: those from offset ``start`` up to ``until``);
        (records folded, first and last log offset folded). A type outside ``wanted`` is not decoded
        (``value[1]``: the api key, one byte below 128)."""
        records, error = walk.records(frame)
        wanted, until, replay = self.wanted, self.until, self.replay
        n, first, last, seen = 0, None, None, None
        for rec in records:
            if log and (rec.offset < start or (until is not None and rec.offset > until)):
                continue
            seen, value = rec, rec.value
            if wanted is not None and not (value is not None and len(value) > 2 and value[0] == 1
                                           and value[1] in wanted):
                continue
            try:
                record, problem = decode_metadata_record(value), None
            except CorruptMetadataRecordError as exc:
                record, problem = None, exc.kafka_message
            offset = rec.offset if log else None
            replay.apply(MetadataEntry(offset, rec.timestamp, record, walk.path, frame.position, problem))
            n += 1
            if offset is not None:
                first = offset if first is None else first
                last = offset
        if log and seen is not None and (replay.newest_offset is None or seen.offset > replay.newest_offset):
            replay.mark(seen.offset, seen.timestamp)  # the newest record read, folded or not
        if error is not None:
            replay.note(Finding(FindingKind.CORRUPT_METADATA_RECORD, f"the records of the batch at byte "
                                f"{frame.position} stop decoding: {error.message}; the rest of the batch is "
                                "skipped", walk.path, frame.position, frame.end, frame.base_offset, frame.last_offset))
        return n, first, last

    def records_file(self, path: str, role: str) -> None:
        """Every data record of a snapshot-format file (a snapshot, bootstrap.checkpoint)."""
        n = 0
        try:
            with SegmentWalk(path, base_offset=0) as walk:
                for frame in walk.batches():
                    if not frame.header.is_control:
                        n += self.batch(walk, frame, False)[0]
        except ForensicsError as exc:
            self.incomplete(f"cannot be read: {exc.message}", path, exc.position)
        self.files.append(MetadataFile(path, role, n))

    def bootstrap(self, inventory: Inventory) -> str:
        """Every log dir's ``bootstrap.checkpoint``; "bootstrap" when there was one."""
        paths = [d.bootstrap_checkpoint for d in inventory.log_dirs if d.bootstrap_checkpoint]
        for path in paths:
            self.records_file(path, "bootstrap")
        return "bootstrap" if paths else ""

    def log(self, p: PartitionDir, start: int) -> None:
        """The log of replica ``p`` from offset ``start`` on, up to its first damaged byte."""
        logs = [s for s in p.segments if s.log is not None]
        expected = start
        for i, seg in enumerate(logs):
            following = logs[i + 1].base_offset if i + 1 < len(logs) else None
            if following is not None and following <= start:
                continue
            if self.until is not None and seg.base_offset > self.until:
                break
            assert seg.log is not None
            after = self.segment(seg.log, seg.base_offset, start, expected)
            if after is None:
                return
            expected = after

    def segment(self, path: str, base: int, start: int, expected: int) -> int | None:
        """Fold one segment; the offset the next one should begin with, None when it ends in damage
        (nothing after it is read)."""
        n, first, last = 0, None, None
        try:
            walk = SegmentWalk(path, base_offset=base)
        except ForensicsError as exc:
            self.incomplete(f"cannot be read: {exc.message}; the image stops before it", path, exc.position)
            return None
        damaged = False
        with walk:
            for frame in walk.frames():
                bad = walk.first_invalid_position
                if frame.magic != 2 or frame.crc_ok is False or (bad is not None and bad < frame.position):
                    at = frame.position if bad is None else min(bad, frame.position)
                    self.incomplete(f"the log is damaged at byte {at}: the image stops at the record before it "
                                    "(where Kafka's recovery would cut the log)", path, at)
                    damaged = True
                    break
                if frame.last_offset < start or (self.until is not None and frame.base_offset > self.until):
                    continue
                if frame.base_offset > expected:
                    self.incomplete(f"offsets {expected}..{frame.base_offset - 1} of the metadata log are not among "
                                    "the inputs: the image lacks what they said", path, frame.position)
                expected = frame.last_offset + 1
                if frame.header.is_control:
                    continue
                folded, low, high = self.batch(walk, frame, True, start)
                n += folded
                first = low if first is None else first
                last = high if high is not None else last
            else:
                if walk.first_invalid_position is not None:
                    self.incomplete(f"the log is damaged from byte {walk.first_invalid_position} on: the image "
                                    "stops at the record before it", path, walk.first_invalid_position)
                    damaged = True
        self.files.append(MetadataFile(path, "segment", n, first, last))
        return None if damaged else expected


# the records the evidence model reads (MetadataRecordType api keys): brokers and their log dirs, topics,
# partitions, their changes, feature levels; the bulk of a metadata log (NoOpRecord, ConfigRecord, ...)
# is never decoded
EVIDENCE_RECORD_TYPES = frozenset({
    0,  # RegisterBrokerRecord
    1,  # UnregisterBrokerRecord
    2,  # TopicRecord
    3,  # PartitionRecord
    5,  # PartitionChangeRecord
    7,  # FenceBrokerRecord
    8,  # UnfenceBrokerRecord
    9,  # RemoveTopicRecord
    12,  # FeatureLevelRecord
    17,  # BrokerRegistrationChangeRecord
    28,  # ClearElrRecord
})


def read_cluster_image(inventory: Inventory, *, until_offset: int | None = None,
                       record_types: AbstractSet[int] | None = None) -> ClusterImage:
    """The cluster image of ``inventory``'s KRaft metadata (an empty image when it has none).

    ``until_offset``: the image as of that log offset (records above it are not folded; a snapshot
    beyond it is not used). ``record_types``: fold only the records of these metadata api keys (the
    others are not decoded; the image then holds only what those say)."""
    copies = metadata_copies(inventory)
    tips = [copy_tip(p) for p in copies]
    reader = _Reader(until_offset, record_types)
    if not copies:
        origin = reader.bootstrap(inventory)
        return reader.replay.image(complete=reader.complete, origin=origin, files=tuple(reader.files),
                                   copies=tuple(tips))
    best = max(range(len(copies)), key=lambda i: (tips[i].epoch, tips[i].end_offset, -i))
    p = copies[best]
    notes: list[Finding] = []
    reading, snapshot_ts = _choose(p, until_offset, notes)
    for f in notes:
        reader.replay.note(f)
    logs = [s for s in p.segments if s.log is not None]
    if reading.snapshot is not None:
        reader.records_file(reading.snapshot.path, "snapshot")
        reader.replay.mark(reading.snapshot.end_offset - 1, snapshot_ts)
        origin = "snapshot"
    else:
        # a log that does not begin at 0 lacks the bootstrap records its controller wrote first
        booted = reader.bootstrap(inventory) if not logs or logs[0].base_offset > 0 else ""
        origin = "log" if logs else booted
    if reading.missing is not None:
        reader.incomplete(reading.missing, p.path)
    reader.log(p, reading.start)
    return reader.replay.image(complete=reader.complete, origin=origin, files=tuple(reader.files),
                               copy=tips[best], copies=tuple(tips))


__all__ = ["EVIDENCE_RECORD_TYPES", "copy_tip", "metadata_copies", "read_cluster_image", "snapshot_problem"]
