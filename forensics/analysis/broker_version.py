"""Which Kafka release wrote the disk: a version range inferred from what is on it.

Each fact of :class:`DiskFacts` that only some releases produce gives a lower bound ("3.7 or
newer"), a few give an upper bound ("3.6 or older"); the range is the tightest the facts allow,
with one evidence line per fact. Sources (the Kafka classes and KIPs named per rule):

* ``meta.properties`` ``version=1`` (KRaft, ``MetaPropertiesVersion``): 2.8 or newer (KRaft
  itself is production-ready from 3.3); ``version=0`` with no ``__cluster_metadata`` among the
  inputs: ZooKeeper mode, which ends with 3.9 (a broker migrated to KRaft keeps version 0, but
  then its metadata log dir holds ``__cluster_metadata``); ``directory.id`` (KIP-858): 3.7+.
* ``.kafka_cleanshutdown`` (``CleanShutdownFileHandler``): JSON with a broker epoch from 3.7
  (KIP-966); an empty file was written by 3.6 or older.
* ``partition.metadata`` with a topic id (KIP-516): 2.8+; producer ``.snapshot`` files,
  ``leader-epoch-checkpoint``, ``.txnindex`` and message format v2: 0.11+; ``-stray`` dirs
  (KAFKA-15605): 3.7+; ``bootstrap.checkpoint`` (KIP-778): 3.3+; ``quorum-state``
  ``data_version`` 1 (``FileQuorumStateStore``): 3.8+.
* ``__transaction_state`` values of version 1 (``TransactionLogValue``, written with
  ``transaction.version`` >= 1): 4.0+.
* KRaft ``__cluster_metadata`` (``FeatureLevelRecord``): ``metadata.version`` level N is the
  release ``MetadataVersion`` names for N (3.9-IV0 = 21: 3.9 or newer); ``transaction.version``
  >= 1: 4.0+; ``kraft.version`` >= 1: 3.9+. A broker's registration (``RegisterBrokerRecord``)
  names the highest ``metadata.version`` its software supports: that release or newer, and no
  newer than that release when a later release is known to support more (levels up to 21).

Unstable metadata versions (``unstable.feature.versions.enable``, a test-only setting that lets a
release run the next release's levels) are not considered.
"""

from __future__ import annotations

import re
from enum import Enum
from forensics.dataclass_fast import dataclass

from forensics.errors import UsageError

Version = tuple[int, int]

# Kafka's MetadataVersion (server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java):
# feature level -> release name; 1-25 as in trunk 2024-10, 26-27 as the 4.1.0 tools print them
# (kafka-features.sh version-mapping).
METADATA_VERSIONS: dict[int, str] = {
    1: "3.0-IV1", 2: "3.1-IV0", 3: "3.2-IV0", 4: "3.3-IV0", 5: "3.3-IV1", 6: "3.3-IV2", 7: "3.3-IV3",
    8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0", 13: "3.6-IV1", 14: "3.6-IV2",
    15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2", 18: "3.7-IV3", 19: "3.7-IV4", 20: "3.8-IV0", 21: "3.9-IV0",
    22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2", 25: "4.0-IV3", 26: "4.1-IV0", 27: "4.1-IV1",
}
# MetadataVersion.LATEST_PRODUCTION (the highest level a release supports) of the releases whose
# successor is known to support more: a broker registered with exactly this maximum runs that release.
LATEST_PRODUCTION: dict[int, Version] = {7: (3, 3), 8: (3, 4), 11: (3, 5), 14: (3, 6), 19: (3, 7), 20: (3, 8),
                                         21: (3, 9)}
NEWEST_KNOWN: Version = (4, 1)


def parse_version(value: str) -> Version:
    """``3.9``, ``4.1.0`` or ``2.8.2`` -> (major, minor); UsageError otherwise."""
    m = re.fullmatch(r"\s*(\d{1,2})\.(\d{1,2})(?:\.\d{1,3})?\s*", value)
    if m is None:
        raise UsageError(f"--broker-version {value!r}: give a Kafka release such as 3.9 or 4.1.0")
    return int(m.group(1)), int(m.group(2))


def _release(level: int) -> Version | None:
    """The release a metadata.version level belongs to (newer than known: the newest known)."""
    name = METADATA_VERSIONS.get(level)
    if name is None:
        return NEWEST_KNOWN if level > max(METADATA_VERSIONS) else None
    major, minor = name.split("-")[0].split(".")
    return int(major), int(minor)


@dataclass(frozen=True)
class DiskFacts:
    """What the inputs show that only some releases write (layout, and what was read anyway)."""

    meta_versions: frozenset[int] = frozenset()  # meta.properties version of each log dir
    directory_id: bool = False  # a meta.properties names a directory.id
    clean_shutdown_json: bool = False  # a .kafka_cleanshutdown holds JSON
    clean_shutdown_empty: bool = False  # a .kafka_cleanshutdown is empty (and not damaged)
    topic_ids: bool = False  # a partition.metadata names a topic id
    producer_state_files: bool = False  # .snapshot, leader-epoch-checkpoint or .txnindex
    stray_dirs: bool = False  # a -stray partition dir
    kraft_metadata: bool = False  # a __cluster_metadata-0 dir
    bootstrap_checkpoint: bool = False
    quorum_state_versions: frozenset[int] = frozenset()
    magics: frozenset[int] = frozenset()  # message formats seen (empty: not read)
    txn_value_versions: frozenset[int] = frozenset()  # __transaction_state value versions (empty: not read)
    features: tuple[tuple[str, int], ...] = ()  # finalized feature levels, the newest record of each
    supported_metadata: tuple[tuple[int, int], ...] = ()  # (broker id, max metadata.version level supported)


class VersionFact(Enum):
    """A fact of the inputs that only some releases write (its words: :mod:`forensics.render.broker_version_text`)."""

    KRAFT_META_PROPERTIES = "kraft_meta_properties"  # meta.properties version 1: KRaft mode
    KRAFT_METADATA_LOG = "kraft_metadata_log"  # a __cluster_metadata-0 dir (no meta.properties version 1)
    ZOOKEEPER = "zookeeper"  # meta.properties version 0 and no __cluster_metadata
    BOOTSTRAP_CHECKPOINT = "bootstrap_checkpoint"
    DIRECTORY_ID = "directory_id"
    CLEAN_SHUTDOWN_EPOCH = "clean_shutdown_epoch"  # a .kafka_cleanshutdown holding a broker epoch
    CLEAN_SHUTDOWN_EMPTY = "clean_shutdown_empty"
    STRAY_DIRS = "stray_dirs"
    QUORUM_STATE_V1 = "quorum_state_v1"
    TOPIC_IDS = "topic_ids"
    PRODUCER_STATE_FILES = "producer_state_files"
    MESSAGE_FORMAT_V2 = "message_format_v2"
    TXN_VALUES_V1 = "txn_values_v1"
    METADATA_VERSION = "metadata_version"  # finalized metadata.version (its level)
    TRANSACTION_VERSION = "transaction_version"  # finalized transaction.version (its level)
    KRAFT_VERSION = "kraft_version"  # finalized kraft.version (its level)
    SUPPORTED_METADATA = "supported_metadata"  # the highest metadata.version each broker registered with


MODES = frozenset({VersionFact.KRAFT_META_PROPERTIES, VersionFact.KRAFT_METADATA_LOG, VersionFact.ZOOKEEPER})


@dataclass(frozen=True, slots=True)
class Bound:
    """The release range one fact allows (None: unbounded on that side)."""

    fact: VersionFact
    low: Version | None
    high: Version | None
    level: int = 0  # METADATA_VERSION, TRANSACTION_VERSION, KRAFT_VERSION: the finalized level
    supported: tuple[tuple[int, int], ...] = ()  # SUPPORTED_METADATA: (broker id, level), by broker id


def _layout_bounds(f: DiskFacts) -> list[Bound]:
    out: list[Bound] = []
    if 1 in f.meta_versions or f.kraft_metadata:
        fact = VersionFact.KRAFT_META_PROPERTIES if 1 in f.meta_versions else VersionFact.KRAFT_METADATA_LOG
        out.append(Bound(fact, (2, 8), None))
    elif 0 in f.meta_versions:
        out.append(Bound(VersionFact.ZOOKEEPER, None, (3, 9)))
    if f.bootstrap_checkpoint:
        out.append(Bound(VersionFact.BOOTSTRAP_CHECKPOINT, (3, 3), None))
    if f.directory_id:
        out.append(Bound(VersionFact.DIRECTORY_ID, (3, 7), None))
    if f.clean_shutdown_json:
        out.append(Bound(VersionFact.CLEAN_SHUTDOWN_EPOCH, (3, 7), None))
    if f.clean_shutdown_empty:
        out.append(Bound(VersionFact.CLEAN_SHUTDOWN_EMPTY, None, (3, 6)))
    if f.stray_dirs:
        out.append(Bound(VersionFact.STRAY_DIRS, (3, 7), None))
    if 1 in f.quorum_state_versions:
        out.append(Bound(VersionFact.QUORUM_STATE_V1, (3, 8), None))
    if f.topic_ids:
        out.append(Bound(VersionFact.TOPIC_IDS, (2, 8), None))
    if f.producer_state_files:
        out.append(Bound(VersionFact.PRODUCER_STATE_FILES, (0, 11), None))
    if 2 in f.magics:
        out.append(Bound(VersionFact.MESSAGE_FORMAT_V2, (0, 11), None))
    if 1 in f.txn_value_versions:
        out.append(Bound(VersionFact.TXN_VALUES_V1, (4, 0), None))
    return out


def _metadata_bounds(f: DiskFacts) -> list[Bound]:
    out: list[Bound] = []
    levels = dict(f.features)
    mv = levels.get("metadata.version")
    if mv is not None:
        out.append(Bound(VersionFact.METADATA_VERSION, _release(mv), None, mv))
    tv = levels.get("transaction.version")
    if tv is not None:
        out.append(Bound(VersionFact.TRANSACTION_VERSION, (4, 0) if tv >= 1 else None, None, tv))
    kv = levels.get("kraft.version")
    if kv:
        out.append(Bound(VersionFact.KRAFT_VERSION, (3, 9), None, kv))
    if f.supported_metadata:
        top = sorted({level for _, level in f.supported_metadata})
        lows = [_release(level) for level in top]
        highs = [LATEST_PRODUCTION.get(level) for level in top]
        low = min((v for v in lows if v is not None), default=None)
        known = [h for h in highs if h is not None]
        high = max(known) if len(known) == len(highs) else None  # a level with no release known: no bound
        out.append(Bound(VersionFact.SUPPORTED_METADATA, low, high, supported=tuple(sorted(f.supported_metadata))))
    return out


class VersionSource(str, Enum):
    """Where a range comes from (its value: the JSON's ``brokerVersion.source``)."""

    DISK = "disk"
    GIVEN = "--broker-version"


@dataclass(frozen=True)
class BrokerVersionRange:
    """The Kafka release range of the brokers that wrote the inputs (or the one given); its words (the one-line
    label, an evidence line per fact): :mod:`forensics.render.broker_version_text`."""

    low: Version | None  # the brokers run this release or newer (None: nothing tells)
    high: Version | None  # ... and this release or older (None: nothing tells)
    bounds: tuple[Bound, ...] = ()  # one per fact, in the order said (the metadata's, then the layout's)
    source: VersionSource = VersionSource.DISK
    disk: BrokerVersionRange | None = None  # GIVEN: what the disks themselves say (None: not inferred)

    @property
    def consistent(self) -> bool:
        return self.low is None or self.high is None or self.low <= self.high

    def at_least(self, version: Version) -> bool | None:
        """Is every broker ``version`` or newer? None when the evidence cannot tell."""
        if not self.consistent:
            return None
        if self.low is not None and self.low >= version:
            return True
        if self.high is not None and self.high < version:
            return False
        return None


def infer_broker_version(facts: DiskFacts) -> BrokerVersionRange:
    bounds = _metadata_bounds(facts) + _layout_bounds(facts)
    low = max((b.low for b in bounds if b.low is not None), default=None)
    high = min((b.high for b in bounds if b.high is not None), default=None)
    return BrokerVersionRange(low, high, tuple(bounds))


def given_broker_version(version: Version, disk: BrokerVersionRange | None = None) -> BrokerVersionRange:
    """The range ``--broker-version`` sets; the disk's own inference kept beside it."""
    return BrokerVersionRange(version, version, source=VersionSource.GIVEN, disk=disk)


__all__ = ["MODES", "Bound", "BrokerVersionRange", "DiskFacts", "LATEST_PRODUCTION", "METADATA_VERSIONS", "Version",
           "VersionFact", "VersionSource", "given_broker_version", "infer_broker_version", "parse_version"]
