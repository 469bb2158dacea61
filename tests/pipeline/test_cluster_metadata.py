"""forensics.pipeline.cluster_metadata: the KRaft cluster image read off real and generated disks.

* both real Kafka 4.1.0 disks (``fixtures/real/<run>/disk``; ``/work/shared`` when present): the image at
  the live broker's metadata high watermark equals what the broker answered (``kafka-topics.sh --describe``:
  every topic's id, partition count, leader, replicas, ISR, ELR; ``kafka-features.sh describe``: finalized
  levels and the broker's supported ranges); the image at the log end is the clean stop's;
* generated disks (``DiskSpec.cluster_metadata``): snapshot then log, a damaged or cut snapshot (the log is
  read instead), damage and gaps in the log, bootstrap.checkpoint alone, several copies, ``until_offset``.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from fixtures.diskgen.builder import build_disk, kraft_model
from fixtures.diskgen.canned import example_spec
from fixtures.diskgen.kraft_records import feature_level_record, no_op_record
from fixtures.diskgen.spec import ClusterMetadataSpec
from fixtures.generator import RecordSpec, encode_v2_batch
from forensics.render.broker_version_text import metadata_version_name
from forensics.findings import FindingKind
from forensics.layout import discover
from forensics.pipeline.cluster_metadata import read_cluster_image, snapshot_problem

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"
SHARED = Path("/work/shared/real-kafka/4.1.0")
RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")
META = "__cluster_metadata-0"
LOG = "00000000000000000000.log"


def real_disks():
    out = [pytest.param(REAL / run / "disk", REAL / run / "ground-truth", id=f"fixtures-{run}") for run in RUNS]
    out += [pytest.param(SHARED / run / "data", SHARED / run / "ground-truth", id=f"shared-{run}",
                         marks=pytest.mark.skipif(not SHARED.is_dir(), reason="no /work/shared/real-kafka here"))
            for run in RUNS]
    return out


# -- the live broker's answers ------------------------------------------------------------------------------

_TOPIC = re.compile(r"^Topic: (\S+)\tTopicId: (\S+)\tPartitionCount: (\d+)\t")
_PART = re.compile(r"^\tTopic: (\S+)\tPartition: (\d+)\tLeader: (-?\d+|none)\tReplicas: ([\d,]*)\tIsr: ([\d,]*)"
                   r"\tElr: ([\d,]*)\tLastKnownElr: ([\d,]*)$")
_FEATURE = re.compile(r"^Feature: (\S+)\tSupportedMinVersion: (\S+)\tSupportedMaxVersion: (\S+)\t"
                      r"FinalizedVersionLevel: (\S+)\tEpoch: \d+$")


def _ids(cell: str) -> tuple[int, ...]:
    return tuple(int(x) for x in cell.split(",") if x)


def live_topics(view: Path):
    topics: dict[str, tuple[str, int]] = {}
    parts: dict[tuple[str, int], tuple] = {}
    for name in ("topics.txt", "topics-internal.txt"):
        for line in (view / name).read_text().splitlines():
            if m := _TOPIC.match(line):
                topics[m[1]] = (m[2], int(m[3]))
            elif m := _PART.match(line):
                leader = -1 if m[3] == "none" else int(m[3])
                parts[(m[1], int(m[2]))] = (leader, _ids(m[4]), _ids(m[5]), _ids(m[6]), _ids(m[7]))
    return topics, parts


def live_high_watermark(view: Path) -> int:
    return int(re.search(r"^HighWatermark:\s+(\d+)$", (view / "metadata-quorum.txt").read_text(), re.M)[1])


@pytest.mark.parametrize("disk, truth", real_disks())
def test_real_image_at_the_high_watermark_is_what_the_live_broker_described(disk: Path, truth: Path):
    view = truth / "broker-view-before-d"
    image = read_cluster_image(discover([str(disk)]), until_offset=live_high_watermark(view) - 1)
    topics, parts = live_topics(view)
    assert {n: (t.topic_id, t.partition_count) for n, t in image.topics.items()} == topics
    ours = {p.topic_partition: (p.leader, p.replicas, p.isr, p.elr, p.last_known_elr) for p in image.partitions()}
    assert ours == parts
    assert image.partition_count("__transaction_state") == 50 and image.partition_count("__consumer_offsets") == 50
    assert image.complete and image.origin == "log" and not image.findings


@pytest.mark.parametrize("disk, truth", real_disks())
def test_real_features_and_the_brokers_registration(disk: Path, truth: Path):
    inv = discover([str(disk)])
    image = read_cluster_image(inv)
    [broker] = image.brokers.values()
    assert broker.broker_id == 1 and broker.log_dirs == (inv.log_dirs[0].directory_id,)
    assert image.log_dirs() == ((1, inv.log_dirs[0].directory_id),)
    lines = (truth / "broker-view-before-d" / "features.txt").read_text().splitlines()
    features = [m.groups() for line in lines if (m := _FEATURE.match(line))]
    assert len(features) == 6
    for name, low, high, level in features:
        supported = broker.supported(name)
        if name == "metadata.version":
            assert metadata_version_name(image.metadata_version) == level
            assert (metadata_version_name(supported.min_supported), metadata_version_name(supported.max_supported)) \
                == (low, high)
        else:  # kraft.version is no FeatureLevelRecord (a static quorum: 0); unwritten levels read 0
            assert (image.feature(name), supported.min_supported, supported.max_supported) == \
                (int(level), int(low), int(high))


@pytest.mark.parametrize("disk, truth", real_disks())
def test_real_image_at_the_log_end_is_the_clean_stop(disk: Path, truth: Path):
    inv = discover([str(disk)])
    image = read_cluster_image(inv)
    meta = inv.log_dirs[0].partition("__cluster_metadata", 0)
    [segment] = meta.segments
    assert image.copy == image.copies[0] and image.copy.path == meta.path
    assert (image.copy.epoch, image.copy.end_offset) == (1, image.newest_offset + 1)
    assert [(f.role, f.path, f.first_offset, f.last_offset) for f in image.files] == [
        ("segment", segment.log, 1, image.newest_offset)]
    broker = image.brokers[1]
    assert broker.fenced and broker.in_controlled_shutdown and broker.epoch == broker.registered_offset
    for p in image.partitions():  # the controlled shutdown left every partition leaderless
        assert (p.leader, p.last_leader, p.leader_directory) == (-1, 1, broker.log_dirs[0])
    on_disk = {(p.topic_partition, p.topic_id) for _, p in inv.all_partitions() if p.topic != "__cluster_metadata"}
    assert on_disk == {(p.topic_partition, p.topic_id) for p in image.partitions()}
    assert image.next_producer_id == 1000 and image.complete and not image.findings


# -- generated disks ------------------------------------------------------------------------------------------


def generated(tmp_path: Path, name: str = "broker-1", **meta) -> tuple[Path, object]:
    spec = replace(example_spec(), cluster_metadata=ClusterMetadataSpec(**meta))
    root = build_disk(tmp_path / name, spec)
    return root, kraft_model(spec)


def view(image) -> tuple:
    """What the image says, without where it read it."""
    parts = {p.topic_partition: (p.topic_id, p.replicas, p.isr, p.leader, p.leader_epoch, p.partition_epoch,
                                 p.directories, p.elr, p.last_known_elr) for p in image.partitions()}
    brokers = {b.broker_id: (b.epoch, b.incarnation_id, b.log_dirs, b.fenced, b.in_controlled_shutdown)
               for b in image.brokers.values()}
    return dict(image.features), brokers, parts, image.next_producer_id, image.newest_offset


def model_view(model) -> tuple:
    b = model.broker
    parts = {tp: (p.topic_id, p.replicas, p.isr, p.leader, p.leader_epoch, p.partition_epoch, p.directories, p.elr,
                  p.last_known_elr) for tp, p in model.partitions.items()}
    return (model.features, {b.broker_id: (b.epoch, b.incarnation_id, b.log_dirs, b.fenced, b.in_controlled_shutdown)},
            parts, model.next_producer_id, model.end_offset - 1)


def image_of(*roots: Path, **kw):
    return read_cluster_image(discover([str(r) for r in roots]), **kw)


def test_generated_log_and_snapshot_give_the_generators_model(tmp_path):
    root, model = generated(tmp_path, snapshot=True, extra_topics=(("__consumer_offsets", 50),),
                            transaction_state_partitions=50)
    image = image_of(root)
    assert image.origin == "snapshot" and image.complete and not image.findings
    assert [f.role for f in image.files] == ["snapshot", "segment"] and image.files[1].records == 0
    assert view(image) == model_view(model)
    assert image.partition_count("__transaction_state") == 50  # three written as dirs, fifty in the log
    (root / META / model.snapshot).unlink()
    from_log = image_of(root)
    assert from_log.origin == "log" and view(from_log) == model_view(model)


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_damaged_snapshot_is_a_finding_and_the_log_is_read_instead(tmp_path):
    root, model = generated(tmp_path, snapshot=True)
    snap = root / META / model.snapshot
    _flip(snap, 200)
    assert snapshot_problem(str(snap))[0] == "the batch at byte 83 does not verify"  # header batch: 83 bytes
    image = image_of(root)
    assert image.origin == "log" and image.complete and view(image) == model_view(model)
    assert [(f.kind, f.path) for f in image.findings] == [(FindingKind.CORRUPT_SNAPSHOT, str(snap))]


def test_a_snapshot_cut_before_its_footer_is_not_trusted(tmp_path):
    root, model = generated(tmp_path, snapshot=True)
    snap = root / META / model.snapshot
    data = snap.read_bytes()
    snap.write_bytes(data[:len(data) - 75])  # the footer batch (75 bytes) gone: cut at a batch boundary
    problem, ts = snapshot_problem(str(snap))
    assert problem == "it does not end with a SnapshotFooter control record (cut short?)" and ts > 0
    assert image_of(root).origin == "log"
    (root / META / LOG).unlink()  # nothing else covers the history: its readable records, marked incomplete
    image = image_of(root)
    assert image.origin == "snapshot" and not image.complete and view(image) == model_view(model)
    assert [f.kind for f in image.findings] == [FindingKind.CORRUPT_SNAPSHOT, FindingKind.METADATA_INCOMPLETE]


def test_damage_in_the_log_stops_the_image_where_kafkas_recovery_would(tmp_path):
    root, _ = generated(tmp_path)
    log = root / META / LOG
    _flip(log, 1400)  # inside the batch of the first topic
    image = image_of(root)
    assert not image.complete and image.newest_offset == 13 and not image.topics and image.brokers
    [f] = image.findings
    assert f.kind is FindingKind.METADATA_INCOMPLETE and (f.path, f.position) == (str(log), 1303)


def _hand_made(root: Path, *batches: bytes, name: str = LOG) -> Path:
    meta = root / META
    meta.mkdir(parents=True, exist_ok=True)
    (root / "meta.properties").write_text("node.id=1\nversion=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\n")
    (meta / name).write_bytes(b"".join(batches))
    return root


def _record(offset: int, value: bytes, epoch: int = 1) -> bytes:
    return encode_v2_batch(offset, [RecordSpec(value=value)], partition_leader_epoch=epoch)


def test_a_gap_in_the_log_and_a_log_without_its_beginning_are_incomplete(tmp_path):
    root = _hand_made(tmp_path / "gap", _record(0, feature_level_record("metadata.version", 21)),
                      _record(5, feature_level_record("metadata.version", 27)))
    image = image_of(root)
    assert image.metadata_version == 27 and not image.complete
    assert image.findings[0].message.startswith("offsets 1..4 of the metadata log are not among the inputs")
    late = _hand_made(tmp_path / "late", _record(7, no_op_record()), name="00000000000000000007.log")
    shutil.copy(REAL / "kraft-tv2" / "disk" / "bootstrap.checkpoint", late / "bootstrap.checkpoint")
    image = image_of(late)
    assert image.origin == "log" and not image.complete and image.metadata_version == 27
    assert [f.role for f in image.files] == ["bootstrap", "segment"]
    assert "starts at offset 7 and no snapshot covers offsets 0..6" in image.findings[0].message


def test_bootstrap_checkpoint_alone_gives_the_features(tmp_path):
    (tmp_path / "logs").mkdir()
    shutil.copy(REAL / "kraft-tv2" / "disk" / "bootstrap.checkpoint", tmp_path / "logs" / "bootstrap.checkpoint")
    (tmp_path / "logs" / "meta.properties").write_text("node.id=1\nversion=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\n")
    image = image_of(tmp_path / "logs")
    assert image.origin == "bootstrap" and image.copy is None and not image.topics
    assert dict(image.features) == {"eligible.leader.replicas.version": 1, "group.version": 1,
                                    "metadata.version": 27, "transaction.version": 2}
    assert read_cluster_image(discover([str(REAL / "kraft-tv2" / "b-txn-aborts-0")])).origin == ""


def test_of_several_copies_the_one_that_reaches_furthest_is_read(tmp_path):
    a, _ = generated(tmp_path, "broker-1")
    b = tmp_path / "broker-2"
    shutil.copytree(a, b)
    log_b = b / META / LOG
    data = log_b.read_bytes()
    log_b.write_bytes(data[:1303])  # broker 2's copy ends before the topics
    image = image_of(b, a)
    assert image.copy.path == str(a / META) and [c.path for c in image.copies] == [str(b / META), str(a / META)]
    assert [c.end_offset for c in image.copies] == [14, image.newest_offset + 1]
    ahead = data[:1303] + _record(14, no_op_record(), epoch=2)  # a newer leader epoch wins over a longer log
    log_b.write_bytes(ahead)
    assert image_of(a, b).copy.path == str(b / META) and image_of(a, b).copy.epoch == 2


def test_until_offset_and_record_types(tmp_path):
    root, model = generated(tmp_path, snapshot=True)
    early = image_of(root, until_offset=13)  # the snapshot (end offset past 13) is not used
    assert early.origin == "log" and early.newest_offset == 13 and not early.topics and not early.brokers[1].fenced
    some = image_of(root, record_types=frozenset({12}))
    assert dict(some.features) == model.features and not some.brokers and not some.topics


def test_inputs_without_metadata_give_an_empty_image(tmp_path):
    root = build_disk(tmp_path / "broker-1", replace(example_spec(), cluster_metadata=None))
    image = read_cluster_image(discover([str(root)]))
    assert image.empty and image.origin == "" and image.copies == () and image.complete


def test_every_partition_of_the_generated_log_is_in_the_image(tmp_path):
    root, model = generated(tmp_path, controlled_shutdown=False)
    image = image_of(root)
    expected: list = sorted(model.partitions)
    assert sorted(p.topic_partition for p in image.partitions()) == expected
    assert all(p.leader == 1 and p.isr == (1,) for p in image.partitions())
    assert not image.brokers[1].fenced and not image.brokers[1].in_controlled_shutdown
