"""The broker version range of the inputs (see :mod:`forensics.analysis.broker_version`).

:func:`broker_version_of` gathers the facts: from the layout (no bytes read), from what a scan or
a state rebuild already read (message formats, ``__transaction_state`` value versions), and from
the few KRaft metadata records that name feature levels and broker registrations:
``bootstrap.checkpoint``, the newest ``__cluster_metadata`` snapshot and the log after it (only
``FeatureLevelRecord`` and ``RegisterBrokerRecord`` values are decoded; anything that does not
decode is skipped here: ``scan`` and ``dump`` report damage).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, Iterator, NamedTuple, Optional, Tuple

from forensics.analysis.broker_version import (
    BrokerVersionRange,
    DiskFacts,
    Version,
    given_broker_version,
    infer_broker_version,
)
from forensics.codec.metadata_records import decode_metadata_record
from forensics.errors import ForensicsError
from forensics.findings import FindingKind
from forensics.io.segment import SegmentWalk
from forensics.layout import Inventory, LogDir, PartitionDir, PartitionStatus
from forensics.model import CLUSTER_METADATA_TOPIC

FEATURE_LEVEL_RECORD = 12  # MetadataRecordType.FEATURE_LEVEL_RECORD
REGISTER_BROKER_RECORD = 0  # MetadataRecordType.REGISTER_BROKER_RECORD
_WANTED = (FEATURE_LEVEL_RECORD, REGISTER_BROKER_RECORD)


def _empty_clean_shutdown(d: LogDir) -> bool:
    cs = d.clean_shutdown
    if cs is None or cs.version is not None or cs.broker_epoch is not None:
        return False
    return not any(f.kind is FindingKind.CORRUPT_CHECKPOINT and (f.path or "").endswith(".kafka_cleanshutdown")
                   for f in d.findings)


def layout_facts(inv: Inventory) -> DiskFacts:
    """The facts discovery already holds (file names and small text files)."""
    parts = [p for _, p in inv.all_partitions()]
    return DiskFacts(
        meta_versions=frozenset(d.meta.version for d in inv.log_dirs if d.meta is not None),
        directory_id=any(d.directory_id for d in inv.log_dirs),
        clean_shutdown_json=any(d.clean_shutdown is not None and (d.clean_shutdown.version is not None
                                                                  or d.clean_shutdown.broker_epoch is not None)
                                for d in inv.log_dirs),
        clean_shutdown_empty=any(_empty_clean_shutdown(d) for d in inv.log_dirs),
        topic_ids=any(p.topic_id for p in parts),
        producer_state_files=any(p.snapshots or p.leader_epochs or any(s.txnindex for s in p.segments) for p in parts),
        stray_dirs=any(p.status is PartitionStatus.STRAY for p in parts),
        kraft_metadata=any(p.topic == CLUSTER_METADATA_TOPIC for p in parts),
        bootstrap_checkpoint=any(d.bootstrap_checkpoint for d in inv.log_dirs),
        quorum_state_versions=frozenset(p.quorum_state.data_version for p in parts if p.quorum_state is not None),
    )


# -- the KRaft metadata records that name versions --------------------------------------------------


class _Source(NamedTuple):
    """A file of metadata records: ``rank`` orders its records among the others (None: by their own
    offsets), records below ``start`` are older than a snapshot read before and skipped."""

    path: str
    base_offset: int
    rank: Optional[int]
    start: int = 0


def _metadata_files(inv: Inventory) -> Iterator[_Source]:
    """Each bootstrap.checkpoint (older than any log record), then per ``__cluster_metadata-0``
    replica its newest snapshot (the image at its end offset) and the log from that offset on."""
    for d in inv.log_dirs:
        if d.bootstrap_checkpoint:
            yield _Source(d.bootstrap_checkpoint, 0, -1)
    for _, p in inv.all_partitions():
        if p.topic == CLUSTER_METADATA_TOPIC and p.status is PartitionStatus.LIVE:
            yield from _replica_files(p)


def _replica_files(p: PartitionDir) -> Iterator[_Source]:
    start = 0
    if p.kraft_checkpoints:
        newest = max(p.kraft_checkpoints, key=lambda c: c.end_offset)
        start = newest.end_offset
        yield _Source(newest.path, 0, start - 1)
    segments = [s for s in p.segments if s.log is not None]
    for i, s in enumerate(segments):
        following = segments[i + 1].base_offset if i + 1 < len(segments) else None
        if s.log is not None and (following is None or following > start):
            yield _Source(s.log, s.base_offset, None, start)


def _records(source: _Source) -> Iterator[Tuple[int, bytes]]:
    """(offset, value) of the records of the wanted metadata types in one file."""
    try:
        walk = SegmentWalk(source.path, base_offset=source.base_offset)
    except ForensicsError:
        return
    with walk:
        for frame in walk.batches():
            h = frame.header
            if h.is_control or h.last_offset < source.start:
                continue
            for rec in walk.records(frame)[0]:  # a record that does not decode ends its batch, silently
                value = rec.value
                if rec.offset >= source.start and value is not None and len(value) > 2 and value[0] == 1 \
                        and value[1] in _WANTED:
                    yield rec.offset, bytes(value)


def kraft_versions(inv: Inventory) -> Tuple[Tuple[Tuple[str, int], ...], Tuple[Tuple[int, int], ...]]:
    """The finalized feature levels (the newest record of each feature) and, per broker id, the
    highest metadata.version its newest registration says it supports."""
    features: Dict[str, Tuple[Tuple[int, int], int]] = {}
    brokers: Dict[int, Tuple[Tuple[int, int], int]] = {}
    seq = 0
    for source in _metadata_files(inv):
        for offset, value in _records(source):
            try:
                record = decode_metadata_record(value)
            except ForensicsError:
                continue
            seq += 1
            when = (offset if source.rank is None else source.rank, seq)
            data = record.data
            if record.api_key == FEATURE_LEVEL_RECORD:
                if data["name"] not in features or features[data["name"]][0] <= when:
                    features[data["name"]] = (when, data["featureLevel"])
                continue
            level = next((f["maxSupportedVersion"] for f in data["features"] if f["name"] == "metadata.version"), None)
            if level is not None and (data["brokerId"] not in brokers or brokers[data["brokerId"]][0] <= when):
                brokers[data["brokerId"]] = (when, level)
    return (tuple(sorted((n, level) for n, (_, level) in features.items())),
            tuple(sorted((b, level) for b, (_, level) in brokers.items())))


# -- the range ---------------------------------------------------------------------------------------


def _read_facts(scan=None, state=None) -> Dict[str, frozenset]:
    """Message formats (from a scan) and __transaction_state value versions (from a state rebuild)."""
    out: Dict[str, frozenset] = {}
    if scan is not None:
        out["magics"] = frozenset(m for d in scan.log_dirs for p in d.partitions for m in p.magics)
    if state is not None:
        out["txn_value_versions"] = frozenset().union(*(c.state.value_versions
                                                        for c in state.coordinator.partitions.values()))
    return out


def broker_version_of(inventory: Inventory, *, scan=None, state=None,
                      given: Optional[Version] = None) -> BrokerVersionRange:
    """The broker version range of ``inventory``: inferred from the disks, or ``given``
    (``--broker-version X.Y``: the disks' own inference is kept in its evidence).

    ``scan`` (a ScanReport) and ``state`` (a StateReport) add what they already read."""
    features, supported = kraft_versions(inventory)
    facts = replace(layout_facts(inventory), features=features, supported_metadata=supported,
                    **_read_facts(scan, state))
    disk = infer_broker_version(facts)
    return given_broker_version(given, disk) if given is not None else disk


__all__ = ["broker_version_of", "kraft_versions", "layout_facts"]
