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
from dataclasses import field
from forensics.dataclass_fast import dataclass
from typing import NamedTuple

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


def text(v: Version) -> str:
    return f"{v[0]}.{v[1]}"


def parse_version(value: str) -> Version:
    """``3.9``, ``4.1.0`` or ``2.8.2`` -> (major, minor); UsageError otherwise."""
    m = re.fullmatch(r"\s*(\d{1,2})\.(\d{1,2})(?:\.\d{1,3})?\s*", value)
    if m is None:
        raise UsageError(f"--broker-version {value!r}: give a Kafka release such as 3.9 or 4.1.0")
    return int(m.group(1)), int(m.group(2))


def metadata_version_name(level: int) -> str:
    name = METADATA_VERSIONS.get(level)
    if name is not None:
        return name
    return f"level {level} (newer than {METADATA_VERSIONS[max(METADATA_VERSIONS)]})" if level > 0 else f"level {level}"


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


class _Bound(NamedTuple):
    low: Version | None
    high: Version | None
    short: str  # for the one-line label
    evidence: str


def _bound_text(low: Version | None, high: Version | None) -> str:
    if low is not None and high is not None:
        return text(low) if low == high else f"{text(low)} to {text(high)}"
    if low is not None:
        return f"{text(low)} or newer"
    if high is not None:
        return f"{text(high)} or older"
    return "any version"


def _b(low: Version | None, high: Version | None, short: str, fact: str) -> _Bound:
    return _Bound(low, high, short, f"{fact}: {_bound_text(low, high)}")


def _layout_bounds(f: DiskFacts) -> list[_Bound]:
    out: list[_Bound] = []
    if 1 in f.meta_versions or f.kraft_metadata:
        fact = "meta.properties version 1" if 1 in f.meta_versions else "__cluster_metadata-0"
        out.append(_b((2, 8), None, "KRaft", f"{fact} (KRaft mode; production-ready from 3.3)"))
    elif 0 in f.meta_versions:
        out.append(_b(None, (3, 9), "ZooKeeper mode", "meta.properties version 0 and no __cluster_metadata among the "
                      "inputs (ZooKeeper mode, removed in 4.0)"))
    if f.bootstrap_checkpoint:
        out.append(_b((3, 3), None, "bootstrap.checkpoint", "bootstrap.checkpoint (KIP-778)"))
    if f.directory_id:
        out.append(_b((3, 7), None, "directory.id", "meta.properties directory.id (KIP-858)"))
    if f.clean_shutdown_json:
        out.append(_b((3, 7), None, "clean-shutdown broker epoch", ".kafka_cleanshutdown holds a broker epoch "
                      "(KIP-966)"))
    if f.clean_shutdown_empty:
        out.append(_b(None, (3, 6), "empty clean-shutdown file", ".kafka_cleanshutdown is empty (3.7 and later "
                      "write a broker epoch)"))
    if f.stray_dirs:
        out.append(_b((3, 7), None, "-stray dirs", "-stray partition dirs (KAFKA-15605)"))
    if 1 in f.quorum_state_versions:
        out.append(_b((3, 8), None, "quorum-state v1", "quorum-state data_version 1"))
    if f.topic_ids:
        out.append(_b((2, 8), None, "topic ids", "partition.metadata with topic ids (KIP-516)"))
    if f.producer_state_files:
        out.append(_b((0, 11), None, "producer state files", "producer-state snapshots, leader-epoch-checkpoint or "
                      ".txnindex"))
    if 2 in f.magics:
        out.append(_b((0, 11), None, "message format v2", "message format v2 (magic 2)"))
    if 1 in f.txn_value_versions:
        out.append(_b((4, 0), None, "__transaction_state values v1", "__transaction_state values of version 1 "
                      "(written with transaction.version >= 1)"))
    return out


def _metadata_bounds(f: DiskFacts) -> list[_Bound]:
    out: list[_Bound] = []
    levels = dict(f.features)
    mv = levels.get("metadata.version")
    if mv is not None:
        out.append(_b(_release(mv), None, f"metadata.version {metadata_version_name(mv)}",
                      f"metadata.version {metadata_version_name(mv)} (level {mv})"))
    tv = levels.get("transaction.version")
    if tv is not None:
        out.append(_b((4, 0) if tv >= 1 else None, None, f"transaction.version {tv}", f"transaction.version {tv}"))
    kv = levels.get("kraft.version")
    if kv:
        out.append(_b((3, 9), None, f"kraft.version {kv}", f"kraft.version {kv}"))
    if f.supported_metadata:
        top = sorted({level for _, level in f.supported_metadata})
        lows = [_release(level) for level in top]
        highs = [LATEST_PRODUCTION.get(level) for level in top]
        low = min((v for v in lows if v is not None), default=None)
        known = [h for h in highs if h is not None]
        high = max(known) if len(known) == len(highs) else None  # a level with no release known: no bound
        brokers = ", ".join(f"{b}: {metadata_version_name(level)}" for b, level in sorted(f.supported_metadata))
        names = " to ".join(dict.fromkeys(metadata_version_name(level) for level in (top[0], top[-1])))
        out.append(_b(low, high, f"brokers support metadata.version up to {names}",
                      f"highest metadata.version each broker registered with (RegisterBrokerRecord; {brokers})"))
    return out


@dataclass(frozen=True)
class BrokerVersionRange:
    """The Kafka release range of the brokers that wrote the inputs (or the one given)."""

    low: Version | None  # the brokers run this release or newer (None: nothing tells)
    high: Version | None  # ... and this release or older (None: nothing tells)
    label: str  # one line: "broker 3.9 or newer: KRaft, metadata.version 3.9-IV0"
    evidence: tuple[str, ...] = field(default=())  # one line per fact
    source: str = "disk"  # "disk" or "--broker-version"

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

    def as_json(self) -> dict:
        return {"low": text(self.low) if self.low else None, "high": text(self.high) if self.high else None,
                "label": self.label, "source": self.source, "evidence": list(self.evidence)}


def infer_broker_version(facts: DiskFacts) -> BrokerVersionRange:
    bounds = _metadata_bounds(facts) + _layout_bounds(facts)
    low = max((b.low for b in bounds if b.low is not None), default=None)
    high = min((b.high for b in bounds if b.high is not None), default=None)
    evidence = tuple(b.evidence for b in bounds)
    if not bounds:
        return BrokerVersionRange(None, None, "broker version unknown: nothing among the inputs is release-specific",
                                  evidence)
    named = [b.short for b in bounds if b.short in ("KRaft", "ZooKeeper mode")]  # the mode first
    named += [b.short for b in bounds if b.short.startswith(("metadata.version", "transaction.version"))]
    named += [b.short for b in bounds if (b.low is not None and b.low == low) or (b.high is not None and b.high == high)]
    reasons = ", ".join(dict.fromkeys(named))
    if low is not None and high is not None and low > high:
        return BrokerVersionRange(low, high, f"broker version unclear: the evidence contradicts itself "
                                  f"({text(low)} or newer, {text(high)} or older): {reasons}", evidence)
    return BrokerVersionRange(low, high, f"broker {_bound_text(low, high)}: {reasons}", evidence)


def given_broker_version(version: Version, disk: BrokerVersionRange | None = None) -> BrokerVersionRange:
    """The range ``--broker-version`` sets; the disk's own inference kept as evidence."""
    said = f"; the disks say {disk.label}" if disk is not None else ""
    label = f"broker {text(version)} (--broker-version{said})"
    evidence = (f"--broker-version {text(version)}",) + (disk.evidence if disk is not None else ())
    return BrokerVersionRange(version, version, label, evidence, "--broker-version")


__all__ = ["BrokerVersionRange", "DiskFacts", "LATEST_PRODUCTION", "METADATA_VERSIONS", "Version",
           "given_broker_version", "infer_broker_version", "metadata_version_name", "parse_version", "text"]
