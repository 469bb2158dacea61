"""The broker version range of the inputs (see :mod:`forensics.analysis.broker_version`).

:func:`broker_version_of` gathers the facts: from the layout (no bytes read), from what a scan or
a state rebuild already read (message formats, ``__transaction_state`` value versions), and from
the few KRaft metadata records that name feature levels and broker registrations:
the KRaft cluster image (:mod:`forensics.pipeline.cluster_metadata`: the newest valid
``__cluster_metadata`` snapshot and the log after it, ``bootstrap.checkpoint`` without a log; only
``FeatureLevelRecord`` and ``RegisterBrokerRecord`` values are decoded here; anything that does not
decode is left out: ``scan`` and ``dump`` report damage).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypedDict

from forensics.analysis.broker_version import (
    BrokerVersionRange,
    DiskFacts,
    Version,
    given_broker_version,
    infer_broker_version,
)
from forensics.findings import FindingKind
from forensics.layout import Inventory, LogDir, PartitionStatus
from forensics.model import CLUSTER_METADATA_TOPIC
from forensics.pipeline.cluster_metadata import read_cluster_image

FEATURE_LEVEL_RECORD = 12  # MetadataRecordType.FEATURE_LEVEL_RECORD
REGISTER_BROKER_RECORD = 0  # MetadataRecordType.REGISTER_BROKER_RECORD
_WANTED = frozenset({FEATURE_LEVEL_RECORD, REGISTER_BROKER_RECORD})


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


def kraft_versions(inv: Inventory) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[int, int], ...]]:
    """The finalized feature levels and, per broker id, the highest metadata.version its newest
    registration says it supports: the cluster image of the inputs
    (:func:`~forensics.pipeline.cluster_metadata.read_cluster_image`), of only those two record types."""
    image = read_cluster_image(inv, record_types=_WANTED)
    supported = ((b.broker_id, b.supported("metadata.version")) for b in image.brokers.values())
    return (tuple(sorted(image.features.items())),
            tuple(sorted((broker, r.max_supported) for broker, r in supported if r is not None)))


# -- the range ---------------------------------------------------------------------------------------


class _ReadFacts(TypedDict, total=False):
    """The DiskFacts fields that what was read anyway gives."""

    magics: frozenset[int]
    txn_value_versions: frozenset[int]


def _read_facts(scan=None, state=None) -> _ReadFacts:
    """Message formats (from a scan) and __transaction_state value versions (from a state rebuild)."""
    out: _ReadFacts = {}
    if scan is not None:
        out["magics"] = frozenset(m for d in scan.log_dirs for p in d.partitions for m in p.magics)
    if state is not None:
        out["txn_value_versions"] = frozenset().union(*(c.state.value_versions
                                                        for c in state.coordinator.partitions.values()))
    return out


def broker_version_of(inventory: Inventory, *, scan=None, state=None,
                      given: Version | None = None) -> BrokerVersionRange:
    """The broker version range of ``inventory``: inferred from the disks, or ``given``
    (``--broker-version X.Y``: the disks' own inference is kept in its evidence).

    ``scan`` (a ScanReport) and ``state`` (a StateReport) add what they already read."""
    features, supported = kraft_versions(inventory)
    facts = replace(layout_facts(inventory), features=features, supported_metadata=supported,
                    **_read_facts(scan, state))
    disk = infer_broker_version(facts)
    return given_broker_version(given, disk) if given is not None else disk


__all__ = ["broker_version_of", "kraft_versions", "layout_facts"]
