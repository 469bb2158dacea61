"""The generator's KRaft metadata writer (``fixtures/diskgen/kraft_records.py``, ``kraft_log.py``) against the
real thing.

* every record of the real 4.1.0 metadata logs of the types the writer writes (TopicRecord, PartitionRecord
  v1/v2, PartitionChangeRecord v1/v2, RegisterBrokerRecord, RegisterControllerRecord, FeatureLevelRecord,
  BrokerRegistrationChangeRecord, ProducerIdsRecord, the metadata transaction, NoOp) and the LeaderChange
  control record, written again from its field values, is byte for byte the real record; the field values come
  from our decoder and, with ``/work/shared`` present, from ``kafka-dump-log.sh --cluster-metadata-decoder``'s
  own text (the same, record by record);
* the small files of a generated ``__cluster_metadata-0`` (quorum-state, leader-epoch-checkpoint,
  partition.metadata, the empty producer snapshot) are the real broker's bytes;
* a generated log decodes with our decoder without a finding, and (``jvm``) Kafka's own ``kafka-dump-log.sh``
  prints for every record the text our decoder prints;
* the option is off by default: no spec writes a metadata log unless asked (the pinned digests of
  ``fixtures/generated.sha256`` and the committed example disk stay as they are: tests/io/test_generator*.py).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from fixtures.diskgen import kraft_records as k
from fixtures.diskgen.builder import build_disk, kraft_model
from fixtures.diskgen.canned import example_spec
from fixtures.diskgen.files import encode_producer_snapshot
from fixtures.diskgen.kraft_log import quorum_state
from fixtures.diskgen.spec import ClusterMetadataSpec, DiskSpec
from forensics.codec import control
from forensics.codec import metadata_records as mr
from tests.oracle import dump_tails, iter_v2_records

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"
SHARED = Path("/work/shared/real-kafka/4.1.0")
KAFKA_BIN = Path("/work/shared/kafka/kafka_2.13-4.1.0/bin")
RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")
META = "__cluster_metadata-0"
LOG = "00000000000000000000.log"


def _endpoints(d):
    return [(e["name"], e["host"], e["port"], e["securityProtocol"]) for e in d["endPoints"]]


def _features(d):
    return [(f["name"], f["minSupportedVersion"], f["maxSupportedVersion"]) for f in d["features"]]


def written(kind: str, version: int, d: dict) -> bytes | None:
    """The writer's bytes for a record of ``kind`` with the field values ``d`` (Kafka's JSON names)."""
    if kind == "TOPIC_RECORD":
        return k.topic_record(d["name"], d["topicId"])
    if kind == "PARTITION_RECORD":
        assert d["removingReplicas"] == d["addingReplicas"] == [] and "leaderRecoveryState" not in d
        return k.partition_record(d["topicId"], d["partitionId"], d["replicas"], d["isr"], d["leader"],
                                  d["leaderEpoch"], d["partitionEpoch"], d.get("directories", ()),
                                  elr=d.get("eligibleLeaderReplicas"), last_known_elr=d.get("lastKnownElr"),
                                  version=version)
    if kind == "PARTITION_CHANGE_RECORD":
        return k.partition_change_record(d["topicId"], d["partitionId"], leader=d.get("leader", -2), isr=d.get("isr"),
                                         elr=d.get("eligibleLeaderReplicas"), last_known_elr=d.get("lastKnownElr"),
                                         directories=d.get("directories"), version=version)
    if kind == "REGISTER_BROKER_RECORD":
        return k.register_broker_record(d["brokerId"], d["incarnationId"], d["brokerEpoch"], _endpoints(d),
                                        _features(d), d.get("logDirs", ()), rack=d["rack"], fenced=d["fenced"],
                                        in_controlled_shutdown=d["inControlledShutdown"], version=version)
    if kind == "REGISTER_CONTROLLER_RECORD":
        return k.register_controller_record(d["controllerId"], d["incarnationId"], _endpoints(d), _features(d))
    if kind == "BROKER_REGISTRATION_CHANGE_RECORD":
        return k.broker_registration_change_record(d["brokerId"], d["brokerEpoch"], fenced=d.get("fenced", 0),
                                                   in_controlled_shutdown=d.get("inControlledShutdown", 0),
                                                   version=version)
    if kind == "FEATURE_LEVEL_RECORD":
        return k.feature_level_record(d["name"], d["featureLevel"])
    if kind == "PRODUCER_IDS_RECORD":
        return k.producer_ids_record(d["brokerId"], d["brokerEpoch"], d["nextProducerId"])
    if kind == "BEGIN_TRANSACTION_RECORD":
        return k.begin_transaction_record(d["name"])
    if kind == "END_TRANSACTION_RECORD":
        return k.end_transaction_record()
    if kind == "NO_OP_RECORD":
        return k.no_op_record()
    return None  # ConfigRecord, ClearElrRecord: not written by the generator


def real_records(run: str) -> Iterator[tuple[int, bytes | None, bytes | None, bool]]:
    yield from iter_v2_records((REAL / run / "disk" / META / LOG).read_bytes())


@pytest.mark.parametrize("run", RUNS)
def test_real_metadata_records_rewritten_from_their_fields_are_the_real_bytes(run):
    kafka: dict[int, str] = {}
    dump = SHARED / run / "dumps" / META / f"{LOG}.dump.txt"
    if dump.is_file():  # Kafka's own decoding of the same records
        kafka = {o: t[len(" payload: "):] for o, t in dump_tails(dump, "--cluster-metadata-decoder")
                 if t.startswith(" payload: ")}
    counts: dict[str, int] = {}
    for offset, key, value, is_control in real_records(run):
        if is_control:
            assert (key, value) == k.leader_change(1, [1]) and offset == 0
            continue
        text = mr.format_metadata_record(value, offset)  # our decoder's
        if kafka:
            assert kafka[offset] == text
        doc = json.loads(text)
        ours = written(doc["type"], doc["version"], doc["data"])
        if ours is not None:
            assert ours == value, f"{run} offset {offset} {doc['type']}"
            counts[doc["type"]] = counts.get(doc["type"], 0) + 1
    assert counts["PARTITION_RECORD"] == counts["PARTITION_CHANGE_RECORD"] == 136
    assert counts["TOPIC_RECORD"] == 16 and counts["REGISTER_BROKER_RECORD"] == 1
    assert set(counts) == {"TOPIC_RECORD", "PARTITION_RECORD", "PARTITION_CHANGE_RECORD", "REGISTER_BROKER_RECORD",
                           "REGISTER_CONTROLLER_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD", "FEATURE_LEVEL_RECORD",
                           "PRODUCER_IDS_RECORD", "BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "NO_OP_RECORD"}


def spec(**meta) -> DiskSpec:
    return replace(example_spec(), cluster_metadata=ClusterMetadataSpec(**meta))


def test_small_files_are_the_real_brokers_bytes(tmp_path):
    real = REAL / "kraft-tv2" / "disk" / META
    root = build_disk(tmp_path / "b", spec())
    ours = root / META
    assert quorum_state(1, 1) == (real / "quorum-state").read_bytes()
    for name in ("quorum-state", "leader-epoch-checkpoint", "partition.metadata"):
        assert (ours / name).read_bytes() == (real / name).read_bytes(), name
    assert encode_producer_snapshot([]) == (real / "00000000000000000833.snapshot").read_bytes()
    model = kraft_model(spec())
    assert (ours / f"{model.end_offset:020d}.snapshot").read_bytes() == encode_producer_snapshot([])
    meta_props = (root / "meta.properties").read_text()
    assert f"directory.id={model.broker.log_dirs[0]}\n" in meta_props


@pytest.mark.parametrize("meta", [dict(), dict(metadata_version=21), dict(metadata_version=14, snapshot=True),
                                  dict(controlled_shutdown=False, snapshot=True)])
def test_generated_logs_decode_cleanly(tmp_path, meta):
    root = build_disk(tmp_path / "b", spec(**meta))
    files = sorted((root / META).glob("*.log")) + sorted((root / META).glob("*.checkpoint"))
    assert len(files) == 1 + bool(meta.get("snapshot"))
    types = set()
    for path in files:
        for offset, key, value, is_control in iter_v2_records(path.read_bytes()):
            if is_control:
                assert control.format_control_record(key, value)
            else:
                types.add(mr.decode_metadata_record(value).type_name)
    assert {"TOPIC_RECORD", "PARTITION_RECORD", "REGISTER_BROKER_RECORD", "FEATURE_LEVEL_RECORD"} <= types
    version = 2 if meta.get("metadata_version", 27) >= 27 else 1 if meta.get("metadata_version", 27) >= 17 else 0
    first = next(v for _, _, v, c in iter_v2_records(files[0].read_bytes()) if not c and v[1] == 3)
    assert mr.decode_metadata_record(first).version == version


def test_the_option_is_off_by_default_and_on_for_the_example_disk(tmp_path):
    assert DiskSpec(topics=()).cluster_metadata is None and example_spec().cluster_metadata is not None
    assert not (build_disk(tmp_path / "b", replace(example_spec(), cluster_metadata=None)) / META).exists()
    assert (build_disk(tmp_path / "c", example_spec()) / META).is_dir()


@pytest.mark.jvm
@pytest.mark.skipif(not (KAFKA_BIN / "kafka-dump-log.sh").is_file(), reason="no Kafka 4.1.0 distribution here")
def test_kafka_dump_log_reads_the_generated_log_as_our_decoder_does(tmp_path):
    disk = spec(snapshot=True, transaction_state_partitions=50, extra_topics=(("__consumer_offsets", 50),))
    root, model = build_disk(tmp_path / "b", disk), kraft_model(disk)
    for name in (LOG, model.snapshot):
        path = root / META / name
        out = subprocess.run([str(KAFKA_BIN / "kafka-dump-log.sh"), "--deep-iteration", "--print-data-log",
                              "--cluster-metadata-decoder", "--files", str(path)],
                             capture_output=True, text=True, timeout=120, check=True).stdout
        dump = tmp_path / f"{name}.dump.txt"
        dump.write_text("# kafka-dump-log.sh --cluster-metadata-decoder\n" + out)
        tails = dump_tails(dump, "--cluster-metadata-decoder")
        ours = [(o, " " + control.format_control_record(key, v) if c else " payload: " + mr.format_metadata_record(v, o))
                for o, key, v, c in iter_v2_records(path.read_bytes())]
        assert tails == ours and "Error" not in out
        data_partitions = sum(t.partitions for t in example_spec().topics)
        assert sum(t.startswith(' payload: {"type":"PARTITION_RECORD"') for _, t in tails) == 50 + 50 + data_partitions
