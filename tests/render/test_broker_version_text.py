"""The words of the broker version range (render/broker_version_text.py): the label, the evidence lines, scan's
JSON object."""

from __future__ import annotations

from forensics.analysis.broker_version import (
    Bound,
    BrokerVersionRange,
    DiskFacts,
    VersionFact,
    given_broker_version,
    infer_broker_version,
)
from forensics.render.broker_version_text import (
    bound_line,
    metadata_version_name,
    range_text,
    version_evidence,
    version_json,
    version_label,
)

F = VersionFact


def test_a_range_in_words() -> None:
    assert range_text((3, 9), (3, 9)) == "3.9" and range_text((2, 8), (3, 6)) == "2.8 to 3.6"
    assert range_text((0, 11), None) == "0.11 or newer" and range_text(None, (3, 6)) == "3.6 or older"
    assert range_text(None, None) == "any version"
    assert metadata_version_name(21) == "3.9-IV0" and metadata_version_name(0) == "level 0"


def test_each_fact_s_line() -> None:
    assert bound_line(Bound(F.METADATA_VERSION, (4, 1), None, 27)) == "metadata.version 4.1-IV1 (level 27): 4.1 or newer"
    assert bound_line(Bound(F.TRANSACTION_VERSION, None, None, 0)) == "transaction.version 0: any version"
    assert bound_line(Bound(F.KRAFT_VERSION, (3, 9), None, 1)) == "kraft.version 1: 3.9 or newer"
    assert bound_line(Bound(F.SUPPORTED_METADATA, (3, 9), None, supported=((1, 21), (2, 27)))) == (
        "highest metadata.version each broker registered with (RegisterBrokerRecord; 1: 3.9-IV0, 2: 4.1-IV1): 3.9 or "
        "newer")
    assert bound_line(Bound(F.KRAFT_METADATA_LOG, (2, 8), None)) == (
        "__cluster_metadata-0 (KRaft mode; production-ready from 3.3): 2.8 or newer")
    assert bound_line(Bound(F.STRAY_DIRS, (3, 7), None)) == "-stray partition dirs (KAFKA-15605): 3.7 or newer"


def test_the_label_names_the_mode_the_levels_and_the_facts_that_set_the_ends() -> None:
    r = infer_broker_version(DiskFacts(meta_versions=frozenset({0}), clean_shutdown_empty=True, topic_ids=True,
                                       features=(("metadata.version", 21),), supported_metadata=((2, 27), (1, 21))))
    assert version_label(r) == (
        "broker version unclear: the evidence contradicts itself (3.9 or newer, 3.6 or older): ZooKeeper mode, "
        "metadata.version 3.9-IV0, brokers support metadata.version up to 3.9-IV0 to 4.1-IV1, empty clean-shutdown "
        "file")
    kraft = infer_broker_version(DiskFacts(kraft_metadata=True, stray_dirs=True, magics=frozenset({2})))
    assert version_label(kraft) == "broker 3.7 or newer: KRaft, -stray dirs"
    assert version_label(BrokerVersionRange(None, None)) == (
        "broker version unknown: nothing among the inputs is release-specific")


def test_a_given_version_keeps_what_the_disks_say() -> None:
    disk = infer_broker_version(DiskFacts(kraft_metadata=True))
    given = given_broker_version((3, 5), disk)
    assert version_label(given) == "broker 3.5 (--broker-version; the disks say broker 2.8 or newer: KRaft)"
    assert version_evidence(given) == ("--broker-version 3.5",
                                       "__cluster_metadata-0 (KRaft mode; production-ready from 3.3): 2.8 or newer")
    assert version_json(given) == {"low": "3.5", "high": "3.5", "label": version_label(given),
                                   "source": "--broker-version", "evidence": list(version_evidence(given))}
    assert version_label(given_broker_version((4, 0))) == "broker 4.0 (--broker-version)"
    assert version_json(disk)["source"] == "disk" and version_json(disk)["high"] is None
