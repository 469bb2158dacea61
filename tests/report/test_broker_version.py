"""The broker version range read off the disk: each rule on synthetic facts, the real Kafka 4.1 runs
(metadata.version 3.9-IV0 vs 4.1-IV1, checked against the live broker's kafka-features.sh answer and
against Kafka's own version mapping), ZooKeeper-era-looking dirs, scan's line and JSON object, and
--broker-version."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
import forensics.cli.scan_cmd  # noqa: F401
from forensics.analysis.broker_version import (
    METADATA_VERSIONS,
    Bound,
    DiskFacts,
    VersionFact,
    VersionSource,
    given_broker_version,
    infer_broker_version,
    parse_version,
)
from forensics.cli.app import app
from forensics.errors import UsageError
from forensics.layout.discovery import discover
from forensics.render.broker_version_text import metadata_version_name, version_evidence, version_label
from forensics.runs.broker_version import broker_version_of, kraft_versions

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"
EXAMPLE = REPO / "fixtures" / "example-disk"
SHARED = Path("/work/shared/real-kafka/4.1.0")
KAFKA_BIN = Path("/work/shared/kafka/kafka_2.13-4.1.0/bin")
runner = CliRunner()

TV2_LABEL = ("broker 4.1 or newer: KRaft, metadata.version 4.1-IV1, transaction.version 2, brokers support "
             "metadata.version up to 4.1-IV1")
TV0_LABEL = "broker 4.1 or newer: KRaft, metadata.version 3.9-IV0, brokers support metadata.version up to 4.1-IV1"
EXAMPLE_LABEL = "broker 4.1 or newer: KRaft, metadata.version 4.1-IV1, brokers support metadata.version up to 4.1-IV1"


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


# -- the rules ---------------------------------------------------------------------------------------


def test_nothing_release_specific_says_so():
    r = infer_broker_version(DiskFacts())
    assert (r.low, r.high, version_label(r), version_evidence(r)) == (
        None, None, "broker version unknown: nothing among the inputs is release-specific", ())
    assert r.at_least((0, 11)) is None


def test_zookeeper_era_facts_bound_from_both_sides():
    r = infer_broker_version(DiskFacts(meta_versions=frozenset({0}), clean_shutdown_empty=True, topic_ids=True,
                                       producer_state_files=True, magics=frozenset({2})))
    assert (r.low, r.high) == ((2, 8), (3, 6))
    assert version_label(r) == "broker 2.8 to 3.6: ZooKeeper mode, empty clean-shutdown file, topic ids"
    assert version_evidence(r) == (
        "meta.properties version 0 and no __cluster_metadata among the inputs (ZooKeeper mode, removed in 4.0): "
        "3.9 or older",
        ".kafka_cleanshutdown is empty (3.7 and later write a broker epoch): 3.6 or older",
        "partition.metadata with topic ids (KIP-516): 2.8 or newer",
        "producer-state snapshots, leader-epoch-checkpoint or .txnindex: 0.11 or newer",
        "message format v2 (magic 2): 0.11 or newer")
    assert (r.at_least((2, 8)), r.at_least((3, 0)), r.at_least((3, 7)), r.at_least((4, 0))) == (True, None, False,
                                                                                                 False)


def test_each_bound_is_a_fact_with_its_values():
    """The range keeps the facts it rests on (their words: tests/render/test_broker_version_text.py)."""
    r = infer_broker_version(DiskFacts(meta_versions=frozenset({0}), clean_shutdown_empty=True,
                                       features=(("metadata.version", 21),), supported_metadata=((2, 27), (1, 21))))
    assert r.bounds == (Bound(VersionFact.METADATA_VERSION, (3, 9), None, 21),
                        Bound(VersionFact.SUPPORTED_METADATA, (3, 9), None, supported=((1, 21), (2, 27))),
                        Bound(VersionFact.ZOOKEEPER, None, (3, 9)),
                        Bound(VersionFact.CLEAN_SHUTDOWN_EMPTY, None, (3, 6)))
    assert (r.low, r.high, r.source, r.consistent) == ((3, 9), (3, 6), VersionSource.DISK, False)


def test_contradicting_evidence_answers_nothing():
    r = infer_broker_version(DiskFacts(meta_versions=frozenset({0}), txn_value_versions=frozenset({0, 1})))
    assert not r.consistent and r.at_least((0, 11)) is None and r.at_least((4, 0)) is None
    assert version_label(r) == ("broker version unclear: the evidence contradicts itself (4.0 or newer, 3.9 or older): "
                       "ZooKeeper mode, __transaction_state values v1")


@pytest.mark.parametrize("supported, low, high", [
    (((1, 21),), (3, 9), (3, 9)),  # a 3.9 broker: 4.0 supports more
    (((1, 21), (2, 27)), (3, 9), None),  # a rolling upgrade: 3.9 and 4.1 brokers
    (((1, 27),), (4, 1), None),  # 4.1 or a later release supporting no more (none known)
    (((1, 30),), (4, 1), None),  # a level newer than this tool knows
])
def test_broker_registrations_bound_the_software(supported, low, high):
    r = infer_broker_version(DiskFacts(supported_metadata=supported))
    assert (r.low, r.high) == (low, high)


def test_metadata_version_names_follow_kafkas_enum():
    assert metadata_version_name(21) == "3.9-IV0" and metadata_version_name(27) == "4.1-IV1"
    assert metadata_version_name(7) == "3.3-IV3" and metadata_version_name(28) == "level 28 (newer than 4.1-IV1)"
    assert sorted(METADATA_VERSIONS) == list(range(1, 28))


@pytest.mark.jvm
@pytest.mark.skipif(not (KAFKA_BIN / "kafka-features.sh").exists() or shutil.which("java") is None,
                    reason="needs the Kafka 4.1.0 distribution in ../shared/kafka and a Java runtime")
def test_metadata_version_levels_match_kafkas_own_mapping():
    """kafka-features.sh version-mapping (Kafka 4.1.0) prints each release's metadata.version level."""
    for release in ("3.3-IV3", "3.7-IV4", "3.9-IV0", "4.0-IV3", "4.1-IV1"):
        out = subprocess.run([str(KAFKA_BIN / "kafka-features.sh"), "--bootstrap-server", "127.0.0.1:1",
                              "version-mapping", "--release-version", release], capture_output=True, text=True,
                             timeout=120).stdout
        level = int(re.search(r"^metadata\.version=(\d+) \((\S+)\)$", out, re.M).group(1))
        assert METADATA_VERSIONS[level] == release


def test_parse_and_override():
    assert parse_version("3.9") == (3, 9) and parse_version("4.1.0") == (4, 1) and parse_version("2.8.2") == (2, 8)
    with pytest.raises(UsageError) as e:
        parse_version("4")
    assert str(e.value) == "--broker-version '4': give a Kafka release such as 3.9 or 4.1.0"
    disk = infer_broker_version(DiskFacts(meta_versions=frozenset({1})))
    r = given_broker_version((3, 5), disk)
    assert (r.low, r.high, r.source, r.disk) == ((3, 5), (3, 5), VersionSource.GIVEN, disk)
    assert version_label(r) == "broker 3.5 (--broker-version; the disks say broker 2.8 or newer: KRaft)"
    assert r.at_least((3, 0)) is True and r.at_least((3, 6)) is False


# -- real disks --------------------------------------------------------------------------------------


@pytest.mark.parametrize("run_name, label", [("kraft-tv2", TV2_LABEL), ("kraft-rv3.9-tv0", TV0_LABEL)])
def test_real_runs(run_name, label):
    r = broker_version_of(discover([str(REAL / run_name / "disk")]))
    assert version_label(r) == label and (r.low, r.high) == ((4, 1), None)
    assert r.at_least((3, 0)) is True and r.at_least((4, 1)) is True and r.at_least((4, 2)) is None


def _live_features(run_name: str) -> dict:
    """The live broker's kafka-features.sh describe, saved before the stop."""
    text = (REAL / run_name / "ground-truth" / "broker-view-before-d" / "features.txt").read_text()
    return {m.group(1): (m.group(2), m.group(3)) for m in re.finditer(
        r"^Feature: (\S+)\tSupportedMinVersion: \S+\tSupportedMaxVersion: (\S+)\tFinalizedVersionLevel: (\S+)", text,
        re.M)}


@pytest.mark.parametrize("run_name", ["kraft-tv2", "kraft-rv3.9-tv0"])
def test_feature_levels_decoded_from_disk_match_the_live_broker(run_name):
    features, supported = kraft_versions(discover([str(REAL / run_name / "disk")]))
    levels = dict(features)
    live = _live_features(run_name)
    assert metadata_version_name(levels["metadata.version"]) == live["metadata.version"][1]
    assert str(levels.get("transaction.version", 0)) == live["transaction.version"][1]  # level 0 is not written
    [(broker, top)] = supported
    assert broker == 1 and metadata_version_name(top) == live["metadata.version"][0]


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared real Kafka disks are not on this machine")
@pytest.mark.parametrize("run_name, label", [("kraft-tv2", TV2_LABEL), ("kraft-rv3.9-tv0", TV0_LABEL)])
def test_shared_real_disks(run_name, label):
    assert version_label(broker_version_of(discover([str(SHARED / run_name / "data")]))) == label


def test_example_disk():
    assert version_label(broker_version_of(discover([str(EXAMPLE)]))) == EXAMPLE_LABEL


def _zk_era(root: Path, clean: bytes = b"") -> Path:
    """A ZooKeeper-era-looking log dir: meta.properties version 0, an empty clean-shutdown marker
    (<= 3.6), a partition with a leader-epoch-checkpoint and a producer snapshot, no partition.metadata."""
    log_dir = root / "kafka-logs"
    shutil.copytree(EXAMPLE / "broker-1" / "orders-0", log_dir / "orders-0")
    os.unlink(log_dir / "orders-0" / "partition.metadata")
    (log_dir / "meta.properties").write_text("#\n#Tue Mar 01 10:00:00 UTC 2022\ncluster.id=ZkClusterAAAAAAAAAAAAAA\n"
                                             "version=0\nbroker.id=3\n")
    (log_dir / ".kafka_cleanshutdown").write_bytes(clean)
    return log_dir


def test_zookeeper_era_looking_dirs(tmp_path):
    r = broker_version_of(discover([str(_zk_era(tmp_path))]))
    assert (r.low, r.high) == ((0, 11), (3, 6))
    assert version_label(r) == "broker 0.11 to 3.6: ZooKeeper mode, empty clean-shutdown file, producer state files"
    damaged = broker_version_of(discover([str(_zk_era(tmp_path / "b", clean=b"{not json"))]))
    assert damaged.high == (3, 9)  # a damaged marker is no evidence of an empty one


# -- the commands ------------------------------------------------------------------------------------


def test_scan_shows_the_range_as_a_line_and_a_json_object():
    table = run("scan", REAL / "kraft-rv3.9-tv0" / "disk")
    assert table.exit_code == 0
    lines = table.stdout.splitlines()
    as_of = lines.index(next(x for x in lines if x.startswith("As of ")))
    assert lines[lines.index(next(x for x in lines if x.startswith("Partitions"))) - 1] == TV0_LABEL
    assert lines.index(TV0_LABEL) > as_of  # below the as-of line
    doc = json.loads(run("scan", REAL / "kraft-tv2" / "disk", "--format", "json").stdout)
    assert list(doc)[:5] == ["format", "formatVersion", "inputs", "asOf", "brokerVersion"]
    v = doc["brokerVersion"]
    assert (v["low"], v["high"], v["label"], v["source"]) == ("4.1", None, TV2_LABEL, "disk")
    assert v["evidence"][0] == "metadata.version 4.1-IV1 (level 27): 4.1 or newer"


def test_broker_version_option_overrides_and_is_shown_as_the_source():
    doc = json.loads(run("scan", EXAMPLE, "--format", "json", "--broker-version", "3.9").stdout)
    assert doc["brokerVersion"]["label"] == f"broker 3.9 (--broker-version; the disks say {EXAMPLE_LABEL})"
    assert doc["brokerVersion"]["source"] == "--broker-version"
    for command in (("scan",), ("find-hanging",), ("abort-commands", "--bootstrap-server", "h:1")):
        bad = run(command[0], EXAMPLE, *command[1:], "--broker-version", "three")
        assert bad.exit_code == 2 and bad.stdout == ""
        assert bad.stderr.splitlines() == ["kafka-forensics: --broker-version 'three': give a Kafka release such as "
                                           "3.9 or 4.1.0"]
    plain, given = run("find-hanging", EXAMPLE), run("find-hanging", EXAMPLE, "--broker-version", "2.8")
    assert (given.exit_code, given.stdout, given.stderr) == (plain.exit_code, plain.stdout, plain.stderr)


def _feature_level(name: str, level: int) -> bytes:
    """A FeatureLevelRecord value: frame version 1, api key 12, version 0, compact name, int16 level, no tags."""
    return bytes([1, 12, 0, len(name) + 1]) + name.encode() + level.to_bytes(2, "big") + b"\x00"


def test_the_newest_metadata_record_wins_snapshot_then_log(tmp_path):
    """The image of the newest KRaft snapshot, then the log from its end offset on; records the snapshot
    already holds (below its end offset) are not read again, whatever their offsets say. (A snapshot is
    framed by a SnapshotHeader and a SnapshotFooter: one without them is damaged and not read.)"""
    from fixtures.diskgen.kraft_records import snapshot_footer, snapshot_header
    from fixtures.generator import RecordSpec, encode_v2_batch

    meta = tmp_path / "logs" / "__cluster_metadata-0"
    meta.mkdir(parents=True)
    (tmp_path / "logs" / "meta.properties").write_text("node.id=1\nversion=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\n")
    log = encode_v2_batch(0, [RecordSpec(value=_feature_level("metadata.version", 14))])
    (meta / "00000000000000000005-0000000001.checkpoint").write_bytes(
        encode_v2_batch(0, [RecordSpec(*snapshot_header(0))], control=True)
        + encode_v2_batch(1, [RecordSpec(value=_feature_level("metadata.version", 21))])
        + encode_v2_batch(2, [RecordSpec(*snapshot_footer())], control=True))
    (meta / "00000000000000000000.log").write_bytes(log)
    assert dict(kraft_versions(discover([str(tmp_path / "logs")]))[0]) == {"metadata.version": 21}
    (meta / "00000000000000000000.log").write_bytes(
        log + encode_v2_batch(7, [RecordSpec(value=_feature_level("metadata.version", 27))]))
    assert dict(kraft_versions(discover([str(tmp_path / "logs")]))[0]) == {"metadata.version": 27}
