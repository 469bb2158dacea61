"""The words of the broker version range (:mod:`forensics.analysis.broker_version`): a release as ``3.9``, the
one-line label (``broker 3.9 or newer: KRaft, metadata.version 3.9-IV0``), one evidence line per fact and the
JSON object scan writes."""

from __future__ import annotations

from typing import Any

from forensics.analysis.broker_version import (
    METADATA_VERSIONS,
    MODES,
    Bound,
    BrokerVersionRange,
    Version,
    VersionFact,
    VersionSource,
)

F = VersionFact
# (short: in the label, fact: the evidence line before its range) of the facts that carry no value
_WORDS = {
    F.KRAFT_META_PROPERTIES: ("KRaft", "meta.properties version 1 (KRaft mode; production-ready from 3.3)"),
    F.KRAFT_METADATA_LOG: ("KRaft", "__cluster_metadata-0 (KRaft mode; production-ready from 3.3)"),
    F.ZOOKEEPER: ("ZooKeeper mode", "meta.properties version 0 and no __cluster_metadata among the inputs (ZooKeeper "
                  "mode, removed in 4.0)"),
    F.BOOTSTRAP_CHECKPOINT: ("bootstrap.checkpoint", "bootstrap.checkpoint (KIP-778)"),
    F.DIRECTORY_ID: ("directory.id", "meta.properties directory.id (KIP-858)"),
    F.CLEAN_SHUTDOWN_EPOCH: ("clean-shutdown broker epoch", ".kafka_cleanshutdown holds a broker epoch (KIP-966)"),
    F.CLEAN_SHUTDOWN_EMPTY: ("empty clean-shutdown file", ".kafka_cleanshutdown is empty (3.7 and later write a "
                             "broker epoch)"),
    F.STRAY_DIRS: ("-stray dirs", "-stray partition dirs (KAFKA-15605)"),
    F.QUORUM_STATE_V1: ("quorum-state v1", "quorum-state data_version 1"),
    F.TOPIC_IDS: ("topic ids", "partition.metadata with topic ids (KIP-516)"),
    F.PRODUCER_STATE_FILES: ("producer state files", "producer-state snapshots, leader-epoch-checkpoint or .txnindex"),
    F.MESSAGE_FORMAT_V2: ("message format v2", "message format v2 (magic 2)"),
    F.TXN_VALUES_V1: ("__transaction_state values v1", "__transaction_state values of version 1 (written with "
                      "transaction.version >= 1)"),
}


def version_text(v: Version) -> str:
    return f"{v[0]}.{v[1]}"


def metadata_version_name(level: int) -> str:
    """``3.9-IV0``; a level this tool does not know: ``level 28 (newer than 4.1-IV1)``."""
    name = METADATA_VERSIONS.get(level)
    if name is not None:
        return name
    return f"level {level} (newer than {METADATA_VERSIONS[max(METADATA_VERSIONS)]})" if level > 0 else f"level {level}"


def range_text(low: Version | None, high: Version | None) -> str:
    """``3.9``, ``2.8 to 3.6``, ``3.7 or newer``, ``3.6 or older``, ``any version``."""
    if low is not None and high is not None:
        return version_text(low) if low == high else f"{version_text(low)} to {version_text(high)}"
    if low is not None:
        return f"{version_text(low)} or newer"
    if high is not None:
        return f"{version_text(high)} or older"
    return "any version"


def _words(b: Bound) -> tuple[str, str]:
    """(what the label calls the fact, what its evidence line says before the range)."""
    if b.fact is F.METADATA_VERSION:
        name = f"metadata.version {metadata_version_name(b.level)}"
        return name, f"{name} (level {b.level})"
    if b.fact is F.TRANSACTION_VERSION:
        return f"transaction.version {b.level}", f"transaction.version {b.level}"
    if b.fact is F.KRAFT_VERSION:
        return f"kraft.version {b.level}", f"kraft.version {b.level}"
    if b.fact is F.SUPPORTED_METADATA:
        top = sorted({level for _, level in b.supported})
        names = " to ".join(dict.fromkeys(metadata_version_name(level) for level in (top[0], top[-1])))
        brokers = ", ".join(f"{broker}: {metadata_version_name(level)}" for broker, level in b.supported)
        return (f"brokers support metadata.version up to {names}",
                f"highest metadata.version each broker registered with (RegisterBrokerRecord; {brokers})")
    return _WORDS[b.fact]


def bound_line(b: Bound) -> str:
    """One evidence line: ``metadata.version 4.1-IV1 (level 27): 4.1 or newer``."""
    return f"{_words(b)[1]}: {range_text(b.low, b.high)}"


def version_evidence(r: BrokerVersionRange) -> tuple[str, ...]:
    """One line per fact (given: the option first, then what the disks say)."""
    if r.source is VersionSource.GIVEN:
        return (f"--broker-version {range_text(r.low, r.high)}",) + (version_evidence(r.disk) if r.disk is not None else ())
    return tuple(bound_line(b) for b in r.bounds)


def _reasons(r: BrokerVersionRange) -> str:
    """The facts the label names: the mode first, the finalized levels, then those that set either end."""
    named = [b for b in r.bounds if b.fact in MODES]
    named += [b for b in r.bounds if b.fact in (F.METADATA_VERSION, F.TRANSACTION_VERSION)]
    named += [b for b in r.bounds if (b.low is not None and b.low == r.low) or (b.high is not None and b.high == r.high)]
    return ", ".join(dict.fromkeys(_words(b)[0] for b in named))


def version_label(r: BrokerVersionRange) -> str:
    """One line: ``broker 3.9 or newer: KRaft, metadata.version 3.9-IV0``."""
    if r.source is VersionSource.GIVEN:
        said = f"; the disks say {version_label(r.disk)}" if r.disk is not None else ""
        return f"broker {range_text(r.low, r.high)} (--broker-version{said})"
    if not r.bounds:
        return "broker version unknown: nothing among the inputs is release-specific"
    low, high = r.low, r.high
    if low is not None and high is not None and low > high:
        return (f"broker version unclear: the evidence contradicts itself ({version_text(low)} or newer, "
                f"{version_text(high)} or older): {_reasons(r)}")
    return f"broker {range_text(low, high)}: {_reasons(r)}"


def version_json(r: BrokerVersionRange) -> dict[str, Any]:
    """scan's ``brokerVersion``."""
    return {"low": version_text(r.low) if r.low else None, "high": version_text(r.high) if r.high else None,
            "label": version_label(r), "source": r.source.value, "evidence": list(version_evidence(r))}
