"""discover(): synthetic broker trees built in tmp_path, plus the real broker disks."""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forensics.codec.broker_files import parse_meta_properties
from forensics.codec.checkpoints import (
    EpochEntry,
    parse_offset_checkpoint,
)
from forensics.errors import InputError
from forensics.findings import Finding, FindingKind
from forensics.layout import evidence
from forensics.layout.discovery import discover
from forensics.layout.evidence import DirEntry
from forensics.layout.names import (
    FileKind,
    PartitionStatus,
    TempSuffix,
    classify_file_name,
    parse_partition_dir_name,
)
from forensics.layout.inventory import Inventory, LogDir, PartitionDir
from forensics.layout.segments import NamedFile, resolve_segments
from forensics.model import TopicPartition
from tests.tiers import examples

REAL = Path("/work/shared/real-kafka/4.1.0")
RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")
UUID32 = "0123456789abcdef0123456789abcdef"
TOPIC_ID = "Pe2yS4LsQP6h33OMDhPjPg"

Content = bytes | str | int  # int: that many zero bytes


def o(offset: int) -> str:
    return f"{offset:020d}"


def write_tree(root: Path, files: dict[str, Content]) -> Path:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, int):
            p.write_bytes(b"\0" * content)
        elif isinstance(content, str):
            p.write_text(content)
        else:
            p.write_bytes(content)
    return root


def meta(
    node: int = 1, dir_id: str | None = "lMXTcDlVjZjX-4CQmJ2Liw", cluster: str = "TW9-1HLgQpieFawninaYyg"
) -> str:
    lines = ["#", "#Fri Nov 20 21:46:38 UTC 2026", f"node.id={node}", "version=1", f"cluster.id={cluster}"]
    if dir_id:
        lines.append(f"directory.id={dir_id}")
    return "\n".join(lines) + "\n"


def offsets(entries: dict[str, int]) -> str:
    lines = ["0", str(len(entries))] + [
        f"{tp.rsplit('-', 1)[0]} {tp.rsplit('-', 1)[1]} {v}" for tp, v in entries.items()
    ]
    return "\n".join(lines) + "\n"


def partition_files(
    name: str, segments: Iterable[int] = (0,), topic_id: str = TOPIC_ID, size: int = 100
) -> dict[str, Content]:
    files: dict[str, Content] = {
        f"{name}/partition.metadata": f"version: 0\ntopic_id: {topic_id}",
        f"{name}/leader-epoch-checkpoint": "0\n2\n0 0\n3 40\n",
    }
    for base in segments:
        files[f"{name}/{o(base)}.log"] = size
        files[f"{name}/{o(base)}.index"] = 0
        files[f"{name}/{o(base)}.timeindex"] = 12
    return files


def broker(
    node: int = 1, dir_id: str | None = "lMXTcDlVjZjX-4CQmJ2Liw", partitions: Iterable[str] = ("orders-0",)
) -> dict[str, Content]:
    files: dict[str, Content] = {
        "meta.properties": meta(node, dir_id),
        ".kafka_cleanshutdown": '{"version":0,"brokerEpoch":10}',
        "replication-offset-checkpoint": offsets({p: 10 for p in partitions}),
        "recovery-point-offset-checkpoint": offsets({p: 5 for p in partitions}),
        "log-start-offset-checkpoint": "0\n0\n",
        "cleaner-offset-checkpoint": "",
    }
    for p in partitions:
        files.update(partition_files(p))
    return files


def kinds(findings: Iterable[Finding]) -> list[FindingKind]:
    return [f.kind for f in findings]


def find(findings: Iterable[Finding], kind: FindingKind) -> list[Finding]:
    return [f for f in findings if f.kind is kind]


def only_log_dir(inv: Inventory) -> LogDir:
    assert len(inv.log_dirs) == 1, inv
    return inv.log_dirs[0]


def part(d: LogDir, name: str) -> PartitionDir:
    matches = [p for p in d.partitions if p.name == name]
    assert len(matches) == 1, [p.name for p in d.partitions]
    return matches[0]


def tree_state(root: Path) -> dict[str, tuple]:
    """Everything about a tree that reading must not change (atime excluded)."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for n in sorted(dirnames + filenames):
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            state[os.path.relpath(p, root)] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    return state


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "name, expected",
    [
        ("orders-3", ("orders", 3, PartitionStatus.LIVE, None)),
        ("my-topic.v2-17", ("my-topic.v2", 17, PartitionStatus.LIVE, None)),
        (f"my-topic.v2-17.{UUID32}-delete", ("my-topic.v2", 17, PartitionStatus.DELETE, UUID32)),
        (f"t-0.{UUID32}-future", ("t", 0, PartitionStatus.FUTURE, UUID32)),
        (f"t-0.{UUID32}-stray", ("t", 0, PartitionStatus.STRAY, UUID32)),
        ("__transaction_state-49", ("__transaction_state", 49, PartitionStatus.LIVE, None)),
        ("orders", None),
        ("-3", None),
        ("orders-x", None),
        ("orders-", None),
        ("orders-0-delete", None),  # no ".<uuid>": DeleteDirPattern does not match
        ("orders-99999999999", None),
        ("", None),
    ],
)
def test_parse_partition_dir_name(name, expected):
    parsed = parse_partition_dir_name(name)
    assert (tuple(parsed) if parsed else None) == expected


@pytest.mark.parametrize(
    "name, kind, offset, temp",
    [
        (f"{o(5)}.log", FileKind.LOG, 5, None),
        (f"{o(5)}.index.swap", FileKind.INDEX, 5, TempSuffix.SWAP),
        (f"{o(5)}.timeindex.cleaned", FileKind.TIMEINDEX, 5, TempSuffix.CLEANED),
        (f"{o(5)}.txnindex.deleted", FileKind.TXNINDEX, 5, TempSuffix.DELETED),
        (f"{o(7)}.snapshot.deleted", FileKind.SNAPSHOT, 7, TempSuffix.DELETED),
        (f"{o(100)}-0000000003.checkpoint", FileKind.KRAFT_SNAPSHOT, 100, None),
        (f"{o(100)}-0000000003.checkpoint.deleted", FileKind.KRAFT_SNAPSHOT, 100, TempSuffix.DELETED),
        (f"{o(100)}-0000000003-8841234.checkpoint.part", FileKind.KRAFT_SNAPSHOT, 100, TempSuffix.PART),
        ("replication-offset-checkpoint.tmp", FileKind.OFFSET_CHECKPOINT, None, TempSuffix.TMP),
        ("leader-epoch-checkpoint", FileKind.LEADER_EPOCH_CHECKPOINT, None, None),
        ("bootstrap.checkpoint", FileKind.BOOTSTRAP_CHECKPOINT, None, None),
    ],
)
def test_classify_file_name(name, kind, offset, temp):
    parsed = classify_file_name(name)
    assert parsed is not None and (parsed.kind, parsed.offset, parsed.temp) == (kind, offset, temp)


@pytest.mark.parametrize("name", ["foo.log", "0.log.bak", "notes.txt", "00000000000000000000.log.swap.deleted"])
def test_classify_unknown(name):
    assert classify_file_name(name) is None


# --------------------------------------------------------------------------- a synthetic broker


def test_synthetic_broker(tmp_path):
    long_topic = "t" * 249
    suffix = f"-1.{UUID32}-delete"
    truncated = long_topic[: 255 - len(suffix)] + suffix  # like logDirNameWithSuffixCappedLength
    assert len(truncated) == 255
    files = broker(partitions=("orders-0", "orders-1"))
    files.update(partition_files(f"orders-0.{UUID32}-future", segments=(0,)))
    files.update(partition_files(f"orders-2.{UUID32}-stray", segments=(0,)))
    files.update(partition_files(f"{long_topic}-0", segments=(0,), topic_id="AAAAAAAAAAAAAAAAAAAAAg"))
    files.update(partition_files(truncated, segments=(0,), topic_id="AAAAAAAAAAAAAAAAAAAAAg"))
    files.update(
        {
            "orders-0/00000000000000000040.log": 50,
            "orders-0/00000000000000000040.index": 0,  # no .timeindex: MISSING_INDEX
            "orders-0/00000000000000000040.snapshot": 10,
            "orders-0/00000000000000000010.snapshot": 10,
            "orders-0/00000000000000000000.log.deleted": 7,
            "orders-0/00000000000000000000.snapshot.deleted": 7,
            "orders-0/00000000000000000080.index": 0,  # orphan
            "orders-0/00000000000000000080.timeindex": 0,
            "orders-0/leader-epoch-checkpoint.tmp": "0\n",
            "orders-0/notes.txt": "hi",
            "replication-offset-checkpoint.tmp": "0\n",
            "README": "unknown root file",
            ".lock": "",
            "bootstrap.checkpoint": 20,
            "not_a_partition/x": "y",
            "remote-log-index-cache/whatever": "z",
        }
    )
    write_tree(tmp_path, files)
    before = tree_state(tmp_path)
    inv = discover([str(tmp_path)])
    assert tree_state(tmp_path) == before
    d = only_log_dir(inv)
    assert d.broker_id == 1 and d.cluster_id == "TW9-1HLgQpieFawninaYyg" and d.directory_id == "lMXTcDlVjZjX-4CQmJ2Liw"
    assert d.clean_shutdown is not None and d.clean_shutdown.broker_epoch == 10
    assert d.high_watermarks == {TopicPartition("orders", 0): 10, TopicPartition("orders", 1): 10}
    assert d.recovery_points[TopicPartition("orders", 1)] == 5
    assert d.log_start_offsets == {} and d.cleaner_offsets == {}
    assert d.bootstrap_checkpoint == str(tmp_path / "bootstrap.checkpoint")
    assert [p.status for p in d.partitions].count(PartitionStatus.LIVE) == 3
    assert len(d.partitions) == 6

    o0 = part(d, "orders-0")
    assert o0.topic_partition == TopicPartition("orders", 0) and o0.topic_id == TOPIC_ID
    assert o0.leader_epochs == (EpochEntry(0, 0), EpochEntry(3, 40))
    assert [s.base_offset for s in o0.segments] == [0, 40]
    assert o0.segments[0].log_size == 100 and o0.segments[0].index and o0.segments[0].timeindex
    assert o0.segments[1].timeindex is None
    assert [s.offset for s in o0.snapshots] == [10, 40]
    assert [s.base_offset for s in o0.orphan_indexes] == [80] and o0.orphan_indexes[0].log is None
    assert sorted(os.path.basename(p) for p in o0.deleted_files) == [f"{o(0)}.log.deleted", f"{o(0)}.snapshot.deleted"]
    ks = kinds(o0.findings)
    assert ks.count(FindingKind.DELETED_FILE) == 2
    assert ks.count(FindingKind.ORPHAN_INDEX) == 2
    assert FindingKind.MISSING_INDEX in ks and FindingKind.STALE_TMP_FILE in ks
    assert find(o0.findings, FindingKind.UNKNOWN_FILE)[0].path.endswith("notes.txt")

    fut = part(d, f"orders-0.{UUID32}-future")
    assert (fut.status, fut.topic, fut.partition, fut.uuid_suffix) == (PartitionStatus.FUTURE, "orders", 0, UUID32)
    stray = part(d, f"orders-2.{UUID32}-stray")
    assert stray.status is PartitionStatus.STRAY and stray.topic_partition == TopicPartition("orders", 2)
    deleted = part(d, truncated)
    assert deleted.status is PartitionStatus.DELETE and deleted.name_may_be_truncated
    assert (
        deleted.name_topic == long_topic[: 255 - len(suffix)] and deleted.topic == long_topic
    )  # resolved through the topic id

    root = kinds(d.findings)
    assert root.count(FindingKind.UNKNOWN_FILE) == 2  # README and not_a_partition/
    assert FindingKind.STALE_TMP_FILE in root
    assert inv.findings == ()


def test_corrupt_checkpoints_become_findings(tmp_path):
    files = broker()
    files["replication-offset-checkpoint"] = "0\n2\norders 0 10\n"
    files["meta.properties"] = "version=1\nnode.id=one\ncluster.id=x\n"
    files[".kafka_cleanshutdown"] = "{garbage"
    files["orders-0/partition.metadata"] = "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA"
    files["orders-0/leader-epoch-checkpoint"] = "0\n2\n5 10\n2 20\n"
    write_tree(tmp_path, files)
    d = only_log_dir(discover([str(tmp_path)]))
    assert d.meta is None and d.broker_id is None
    assert d.high_watermarks == {}
    assert d.clean_shutdown is not None and d.clean_shutdown.broker_epoch is None  # present = clean, for Kafka too
    assert d.recovery_points == {TopicPartition("orders", 0): 5}  # the rest is still analysed
    corrupt = {os.path.basename(f.path): f for f in find(d.findings, FindingKind.CORRUPT_CHECKPOINT)}
    assert set(corrupt) == {"replication-offset-checkpoint", "meta.properties", ".kafka_cleanshutdown"}
    assert corrupt["replication-offset-checkpoint"].position == 2
    assert corrupt["meta.properties"].position == len("version=1\n") and "line 2" in corrupt["meta.properties"].message
    o0 = part(d, "orders-0")
    assert o0.topic_id is None and len(o0.segments) == 1
    assert o0.leader_epochs == (EpochEntry(5, 10), EpochEntry(2, 20))
    messages = [f.message for f in find(o0.findings, FindingKind.CORRUPT_CHECKPOINT)]
    assert any("all-zero" in m for m in messages) and any("not increasing" in m for m in messages)


def test_oversized_and_special_files(tmp_path, monkeypatch):
    write_tree(tmp_path, broker())
    os.mkfifo(tmp_path / "orders-0" / "quorum-state")  # must never be opened (would block)
    os.mkfifo(tmp_path / "orders-0" / "notes")
    monkeypatch.setattr(evidence, "MAX_TEXT_BYTES", 4)
    d = only_log_dir(discover([str(tmp_path)]))
    assert d.meta is None
    assert any("limit" in f.message for f in find(d.findings, FindingKind.CORRUPT_CHECKPOINT))
    o0 = part(d, "orders-0")
    said = {os.path.basename(f.path): (f.kind, f.message) for f in o0.findings}
    # named like a Kafka file: a file the analysis lacks; any other name: an unknown file
    assert said["quorum-state"] == (FindingKind.UNREADABLE_FILE, "a FIFO (named pipe), not a regular file: not opened")
    assert said["notes"] == (FindingKind.UNKNOWN_FILE, "a FIFO (named pipe), not a Kafka file and not a regular file: not opened")


# --------------------------------------------------------------------------- swap / cleaned / deleted


def named(*names_and_sizes) -> list[NamedFile]:
    out = []
    for name, size in names_and_sizes:
        parsed = classify_file_name(name)
        assert parsed is not None, name
        out.append(NamedFile(parsed, DirEntry(name, f"/p/{name}", "file", size, False)))
    return out


def seg_files(base: int, size: int = 100, suffix: str = "") -> list:
    return [(f"{o(base)}.log{suffix}", size), (f"{o(base)}.index{suffix}", 8), (f"{o(base)}.timeindex{suffix}", 12)]


def test_swap_without_next_offset_replaces_same_base_only():
    # the cleaner cleaned [0, 20, 40] into a swap at 0; crash after 0 was renamed .deleted? no: before any delete
    files = named(
        *seg_files(0),
        *seg_files(20),
        *seg_files(40),
        *seg_files(60),
        *seg_files(0, 150, ".swap"),
        (f"{o(20)}.snapshot", 5),
    )
    res = resolve_segments(files)
    assert [s.base_offset for s in res.segments] == [0, 20, 40, 60]
    assert res.segments[0].swapped_in and res.segments[0].log == f"/p/{o(0)}.log.swap"
    assert res.segments[0].index == f"/p/{o(0)}.index.swap" and res.segments[0].log_size == 150
    assert not res.segments[1].swapped_in
    assert f"/p/{o(0)}.log" in res.replaced_files and len(res.replaced_files) == 3
    assert [s.offset for s in res.snapshots] == [20]
    (swap,) = find(res.findings, FindingKind.SWAP_FILE)
    assert "[0, 1)" in swap.message and "20, 40, 60" in swap.message and "unknown" in swap.message


def test_swap_with_next_offset_is_exact():
    files = named(
        *seg_files(0),
        *seg_files(20),
        *seg_files(40),
        *seg_files(60),
        *seg_files(0, 150, ".swap"),
        (f"{o(20)}.snapshot", 5),
        (f"{o(60)}.snapshot", 5),
    )
    seen = []

    def next_offset(path: str) -> int:
        seen.append(path)
        return 55

    res = resolve_segments(files, next_offset)
    assert seen == [f"/p/{o(0)}.log.swap"]
    assert [s.base_offset for s in res.segments] == [0, 60]
    assert [s.offset for s in res.snapshots] == [60]  # LogLoader also deletes .snapshot files in the range
    assert f"/p/{o(20)}.snapshot" in res.replaced_files and f"/p/{o(40)}.log" in res.replaced_files
    (swap,) = find(res.findings, FindingKind.SWAP_FILE)
    assert "[0, 55)" in swap.message and (swap.first_offset, swap.last_offset) == (0, 54)


def test_swap_after_partial_delete():
    # crash after old segment 0 was renamed to .deleted but before 20 was: 20 stays (rule keeps it), reported
    files = named(*seg_files(0, suffix=".deleted"), *seg_files(20), *seg_files(60), *seg_files(0, 150, ".swap"))
    res = resolve_segments(files)
    assert [s.base_offset for s in res.segments] == [0, 20, 60]
    assert res.segments[0].swapped_in
    assert len(res.deleted_files) == 3 and res.replaced_files == ()


def test_swap_invalid_when_cleaned_is_lower():
    files = named(*seg_files(0), *seg_files(20), *seg_files(20, 5, ".cleaned"), *seg_files(30, 5, ".swap"))
    res = resolve_segments(files)
    assert [s.base_offset for s in res.segments] == [0, 20]
    assert not any(s.swapped_in for s in res.segments)
    assert len(res.swap_files) == 3 and len(res.cleaned_files) == 3
    swaps = find(res.findings, FindingKind.SWAP_FILE)
    assert len(swaps) == 3 and all("KAFKA-6264" in f.message for f in swaps)
    assert kinds(res.findings).count(FindingKind.CLEANED_FILE) == 3


def test_split_swaps_and_empty_swap():
    # a split of segment 0 into swaps at 0 and 5 (both valid: no .cleaned left)
    files = named(*seg_files(0), *seg_files(10), *seg_files(0, 50, ".swap"), *seg_files(5, 50, ".swap"))
    res = resolve_segments(files)
    assert [(s.base_offset, s.swapped_in) for s in res.segments] == [(0, True), (5, True), (10, False)]
    # an empty swap: nextOffset == base, the range is empty, only the rename replaces files
    res = resolve_segments(named(*seg_files(0), *seg_files(10), (f"{o(0)}.log.swap", 0)))
    assert [(s.base_offset, s.swapped_in, s.log_size) for s in res.segments] == [(0, True, 0), (10, False, 100)]
    assert res.segments[0].index == f"/p/{o(0)}.index"
    (swap,) = find(res.findings, FindingKind.SWAP_FILE)
    assert "[0, 0)" in swap.message


def test_swap_resolver_failure_is_a_finding():
    from forensics.errors import CorruptBatchError

    def broken(path: str) -> int:
        raise CorruptBatchError("bad header", position=0)

    res = resolve_segments(named(*seg_files(0), *seg_files(0, 10, ".swap")), broken)
    assert [s.swapped_in for s in res.segments] == [True]
    assert any("cannot determine" in f.message for f in res.findings)


def test_swap_through_discover(tmp_path):
    files = broker()
    files.update(
        {
            f"orders-0/{o(0)}.log.swap": 30,
            f"orders-0/{o(0)}.index.swap": 0,
            f"orders-0/{o(0)}.timeindex.swap": 12,
            f"orders-0/{o(0)}.log.cleaned": 30,
            f"orders-0/{o(50)}.log": 30,
        }
    )
    write_tree(tmp_path, files)
    before = tree_state(tmp_path)
    inv = discover([str(tmp_path)])
    assert tree_state(tmp_path) == before  # nothing renamed, unlike the broker
    o0 = part(only_log_dir(inv), "orders-0")
    # the .cleaned at 0 makes the swap at 0 invalid (0 >= min cleaned offset 0)
    assert [(s.base_offset, s.swapped_in) for s in o0.segments] == [(0, False), (50, False)]
    assert len(o0.swap_files) == 3 and len(o0.cleaned_files) == 1
    os.remove(tmp_path / "orders-0" / f"{o(0)}.log.cleaned")
    o0 = part(only_log_dir(discover([str(tmp_path)], swap_next_offset=lambda p: 60)), "orders-0")
    assert [(s.base_offset, s.swapped_in) for s in o0.segments] == [(0, True)]


def test_kraft_metadata_partition(tmp_path):
    files = broker(partitions=())
    files.update(partition_files("__cluster_metadata-0", topic_id="AAAAAAAAAAAAAAAAAAAAAQ"))
    files.update(
        {
            "__cluster_metadata-0/quorum-state": '{"leaderId":1,"leaderEpoch":4,"votedId":-1,"data_version":1}',
            "__cluster_metadata-0/quorum-state.tmp": "{",
            f"__cluster_metadata-0/{o(833)}.snapshot": 10,
            f"__cluster_metadata-0/{o(500)}-0000000003.checkpoint": 100,
            f"__cluster_metadata-0/{o(100)}-0000000001.checkpoint": 100,
            f"__cluster_metadata-0/{o(50)}-0000000001.checkpoint.deleted": 100,
            f"__cluster_metadata-0/{o(900)}-0000000004-12345.checkpoint.part": 3,
        }
    )
    write_tree(tmp_path, files)
    cm = part(only_log_dir(discover([str(tmp_path)])), "__cluster_metadata-0")
    assert cm.quorum_state is not None and cm.quorum_state.leader_epoch == 4
    assert [(k.end_offset, k.epoch) for k in cm.kraft_checkpoints] == [(100, 1), (500, 3)]
    assert [s.offset for s in cm.snapshots] == [833]
    assert any(p.endswith(".checkpoint.deleted") for p in cm.deleted_files)
    assert kinds(cm.findings).count(FindingKind.STALE_TMP_FILE) == 2


# --------------------------------------------------------------------------- inputs


def test_several_brokers_under_one_folder(tmp_path):
    write_tree(tmp_path / "case" / "broker-1" / "data", broker(1, "AAAAAAAAAAAAAAAAAAAAEQ"))
    # JBOD: one broker's log dirs hold disjoint partitions; fine
    write_tree(tmp_path / "case" / "broker-1" / "data2", broker(1, "AAAAAAAAAAAAAAAAAAAAEg", partitions=("orders-1",)))
    write_tree(tmp_path / "case" / "broker-2" / "data", broker(2, "AAAAAAAAAAAAAAAAAAAAIQ"))
    write_tree(tmp_path / "case" / "copy-of-2", broker(2, "AAAAAAAAAAAAAAAAAAAAIQ"))
    write_tree(tmp_path / "case" / "a" / "b" / "c" / "too-deep", broker(3, "AAAAAAAAAAAAAAAAAAAAMQ"))
    inv = discover([str(tmp_path / "case")])
    assert sorted((d.broker_id, os.path.relpath(d.path, tmp_path / "case")) for d in inv.log_dirs) == [
        (1, "broker-1/data"),
        (1, "broker-1/data2"),
        (2, "broker-2/data"),
        (2, "copy-of-2"),
    ]
    (dup,) = find(inv.findings, FindingKind.DUPLICATE_BROKER)
    assert "broker 2" in dup.message and "AAAAAAAAAAAAAAAAAAAAIQ" in dup.message
    assert len(inv.findings) == 1
    deeper = discover([str(tmp_path / "case")], max_depth=4)
    assert len(deeper.log_dirs) == 5


def test_same_broker_id_on_two_disks(tmp_path):
    """Two log dirs claiming one broker id that are not one broker's JBOD dirs: both kept, one finding."""
    write_tree(tmp_path / "zk-a", broker(0, None, partitions=("orders-0", "orders-1")))  # ZooKeeper era: no dir id
    write_tree(tmp_path / "zk-b", broker(0, None, partitions=("orders-1", "orders-2")))
    inv = discover([str(tmp_path / "zk-a"), str(tmp_path / "zk-b")])
    assert [d.path for d in inv.log_dirs] == [str(tmp_path / "zk-a"), str(tmp_path / "zk-b")]
    (dup,) = find(inv.findings, FindingKind.DUPLICATE_BROKER)
    assert dup.path == str(tmp_path / "zk-a") and str(tmp_path / "zk-b") in dup.message
    assert "broker id 0" in dup.message and "orders-1" in dup.message and "orders-0" not in dup.message
    # KRaft brokers with different directory ids but the same live partitions: two disks, not JBOD
    write_tree(tmp_path / "k-a", broker(1, "AAAAAAAAAAAAAAAAAAAAEQ"))
    write_tree(tmp_path / "k-b", broker(1, "AAAAAAAAAAAAAAAAAAAAEg"))
    (dup,) = find(discover([str(tmp_path / "k-a"), str(tmp_path / "k-b")]).findings, FindingKind.DUPLICATE_BROKER)
    assert "broker id 1" in dup.message and "orders-0" in dup.message
    # without shared partitions: JBOD of an old broker, no finding
    write_tree(tmp_path / "j", broker(0, None, partitions=("orders-7",)))
    assert find(discover([str(tmp_path / "zk-a"), str(tmp_path / "j")]).findings, FindingKind.DUPLICATE_BROKER) == []
    # two clusters using the same broker id
    other = tmp_path / "other-cluster"
    write_tree(other, broker(0, None, partitions=("billing-0",)))
    (other / "meta.properties").write_text(meta(0, None, cluster="T3RoZXItY2x1c3Rlci1pZA"))
    (dup,) = find(discover([str(tmp_path / "j"), str(other)]).findings, FindingKind.DUPLICATE_BROKER)
    assert "2 clusters" in dup.message and "T3RoZXItY2x1c3Rlci1pZA" in dup.message


def test_log_dir_without_meta_properties(tmp_path):
    write_tree(tmp_path / "d", partition_files("orders-0") | partition_files("orders-1"))
    d = only_log_dir(discover([str(tmp_path / "d")]))
    assert d.meta is None and d.broker_id is None and len(d.partitions) == 2


def test_single_partition_dir_and_overlap(tmp_path):
    write_tree(tmp_path, broker(partitions=("orders-0", "orders-1")))
    p = str(tmp_path / "orders-0")
    inv = discover([p])
    assert inv.log_dirs == () and len(inv.partitions) == 1
    assert inv.partitions[0].topic_partition == TopicPartition("orders", 0)
    assert [lp for lp, _ in inv.all_partitions()] == [None]
    # given alone first, then claimed by its log dir: listed once
    inv = discover([p, str(tmp_path)])
    assert inv.partitions == () and len(inv.log_dirs[0].partitions) == 2
    inv = discover([str(tmp_path), p])
    assert inv.partitions == () and len(inv.log_dirs[0].partitions) == 2
    assert len(list(inv.all_partitions())) == 2
    # a copied partition dir whose name does not parse
    write_tree(tmp_path / "evidence" / "p0", {f"{o(0)}.log": 5})
    inv = discover([str(tmp_path / "evidence" / "p0")])
    assert inv.partitions[0].topic_partition is None and len(inv.partitions[0].segments) == 1


def test_loose_files(tmp_path):
    write_tree(tmp_path, broker())
    names = [f"orders-0/{o(0)}.log", f"orders-0/{o(0)}.index", "replication-offset-checkpoint"]
    write_tree(tmp_path / "x", {f"{o(7)}.snapshot.deleted": 3, "copy.log": 9})
    inv = discover(
        [str(tmp_path / n) for n in names]
        + [str(tmp_path / "x" / f"{o(7)}.snapshot.deleted"), str(tmp_path / "x" / "copy.log")]
    )
    assert inv.log_dirs == () and inv.partitions == ()
    got = [(lf.kind, lf.offset, lf.temp_suffix, lf.size) for lf in inv.loose_files]
    assert got == [
        (FileKind.LOG, 0, None, 100),
        (FileKind.INDEX, 0, None, 0),
        (FileKind.OFFSET_CHECKPOINT, None, None, len(offsets({"orders-0": 10}))),
        (FileKind.SNAPSHOT, 7, ".deleted", 3),
        (FileKind.LOG, None, None, 9),
    ]
    # meta.properties alone holds nothing to read: its log dir is asked for, as for any non-Kafka file
    with pytest.raises(InputError) as info:
        discover([str(tmp_path / "meta.properties")])
    assert info.value.path == str(tmp_path / "meta.properties") and f"give its log dir ({tmp_path})" in str(info.value)


def test_nonexistent_path(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(InputError) as info:
        discover([missing])
    assert info.value.path == missing and missing in str(info.value)
    os.symlink(tmp_path / "gone", tmp_path / "dangling")
    with pytest.raises(InputError):
        discover([str(tmp_path / "dangling")])
    with pytest.raises(InputError):
        discover(str(tmp_path))  # type: ignore[arg-type]


def test_file_where_a_dir_is_expected(tmp_path):
    (tmp_path / "orders-0").write_text("I am a file")
    with pytest.raises(InputError) as info:
        discover([str(tmp_path / "orders-0")])
    assert info.value.path == str(tmp_path / "orders-0")
    # inside a log dir, a file named like a partition dir is an unknown file, not a crash
    write_tree(tmp_path / "d", broker())
    (tmp_path / "d" / "orders-9").write_text("file")
    d = only_log_dir(discover([str(tmp_path / "d")]))
    assert any(f.path.endswith("orders-9") for f in find(d.findings, FindingKind.UNKNOWN_FILE))
    assert [p.name for p in d.partitions] == ["orders-0"]


def test_not_kafka_directory(tmp_path):
    write_tree(tmp_path / "junk", {"a/b.txt": "x"})
    write_tree(tmp_path / "d", broker())
    # nothing Kafka in any input: an input error
    with pytest.raises(InputError) as info:
        discover([str(tmp_path / "junk")])
    assert info.value.path == str(tmp_path / "junk")
    assert info.value.message == "no Kafka log directory, partition directory or file found within 3 levels"
    # next to an input with Kafka content: a finding, and the rest is analysed
    inv = discover([str(tmp_path / "junk"), str(tmp_path / "d")])
    assert kinds(inv.findings) == [FindingKind.NOT_KAFKA] and inv.findings[0].path == str(tmp_path / "junk")
    assert len(only_log_dir(inv).partitions) == 1
    # library callers may ask for the empty inventory
    assert kinds(discover([str(tmp_path / "junk")], allow_empty=True).findings) == [FindingKind.NOT_KAFKA]


def test_symlink_cycle(tmp_path):
    write_tree(tmp_path / "case" / "b1", broker())
    os.symlink(tmp_path / "case", tmp_path / "case" / "loop")
    os.symlink(tmp_path / "case" / "b1" / "orders-0", tmp_path / "case" / "b1" / "orders-5")  # alias partition
    inv = discover([str(tmp_path / "case")], max_depth=10)
    d = only_log_dir(inv)
    assert [p.name for p in d.partitions] == ["orders-0"]
    assert any("already visited" in f.message for f in d.findings)
    assert any("already visited" in f.message for f in inv.findings)


def test_symlink_self_loop_in_partition(tmp_path):
    write_tree(tmp_path / "d", broker())
    os.symlink(tmp_path / "d" / "orders-0", tmp_path / "d" / "orders-0" / "self")
    os.symlink(tmp_path / "d" / "orders-0" / "missing", tmp_path / "d" / "orders-0" / f"{o(90)}.log")
    os.symlink(tmp_path / "d" / "orders-0" / "loopy", tmp_path / "d" / "orders-0" / "loopy")
    o0 = part(only_log_dir(discover([str(tmp_path / "d")])), "orders-0")
    assert any(f.path.endswith("self") for f in find(o0.findings, FindingKind.UNKNOWN_FILE))
    assert [s.base_offset for s in o0.segments] == [0]
    dangling, loopy = find(o0.findings, FindingKind.UNREADABLE_FILE)
    assert dangling.path.endswith(f"{o(90)}.log") and "dangling" in dangling.message
    assert loopy.path.endswith("loopy") and "symlink loop" in loopy.message
    with pytest.raises(InputError):
        discover([str(tmp_path / "d" / "orders-0" / "loopy")])


def test_unlistable_partition_in_log_dir_without_markers(tmp_path, monkeypatch):
    write_tree(tmp_path, partition_files("orders-0") | partition_files("orders-1"))
    real_scandir = os.scandir

    def fake_scandir(path="."):
        if os.fspath(path) == str(tmp_path / "orders-1"):
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(evidence.os, "scandir", fake_scandir)
    d = only_log_dir(discover([str(tmp_path)]))
    assert [p.name for p in d.partitions] == ["orders-0"]
    assert [f.path for f in find(d.findings, FindingKind.UNREADABLE_FILE)] == [str(tmp_path / "orders-1")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a chmod 000 file anyway")
def test_unreadable_files(tmp_path):
    write_tree(tmp_path, broker(partitions=("orders-0", "orders-1")))
    locked = [tmp_path / "meta.properties", tmp_path / "orders-0" / f"{o(0)}.log", tmp_path / "orders-1"]
    for p in locked:
        p.chmod(0)
    try:
        d = only_log_dir(discover([str(tmp_path)]))
    finally:
        for p in locked:
            p.chmod(0o755)
    unreadable = {f.path for f in d.findings + part(d, "orders-0").findings if f.kind is FindingKind.UNREADABLE_FILE}
    assert str(locked[0]) in unreadable and str(locked[1]) in unreadable
    assert str(locked[2]) in {f.path for f in d.findings if f.kind is FindingKind.UNREADABLE_FILE}
    assert d.meta is None and d.high_watermarks  # the rest is still analysed
    assert len(part(d, "orders-0").segments) == 1


def test_unreadable_files_simulated(tmp_path, monkeypatch):
    """Same as above but works as root: the OS refuses through a patched open/access."""
    write_tree(tmp_path, broker(partitions=("orders-0",)))
    real_open, real_scandir = os.open, os.scandir
    deny = {str(tmp_path / "meta.properties"), str(tmp_path / "orders-0" / "partition.metadata")}

    def fake_open(path, flags, *args, **kwargs):
        if os.fspath(path) in deny:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *args, **kwargs)

    def fake_scandir(path="."):
        if os.fspath(path) == str(tmp_path / "orders-0"):
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(evidence.os, "open", fake_open)
    monkeypatch.setattr(evidence.os, "access", lambda p, m: not p.endswith(".log"))
    d = only_log_dir(discover([str(tmp_path)]))
    assert d.meta is None and d.high_watermarks
    o0 = part(d, "orders-0")
    paths = {f.path for f in find(d.findings + o0.findings, FindingKind.UNREADABLE_FILE)}
    assert str(tmp_path / "meta.properties") in paths
    assert str(tmp_path / "orders-0" / "partition.metadata") in paths
    assert str(tmp_path / "orders-0" / f"{o(0)}.log") in paths
    assert o0.topic_id is None and len(o0.segments) == 1
    monkeypatch.setattr(evidence.os, "scandir", fake_scandir)
    d = only_log_dir(discover([str(tmp_path)]))
    assert d.partitions == ()
    assert str(tmp_path / "orders-0") in {f.path for f in find(d.findings, FindingKind.UNREADABLE_FILE)}


# --------------------------------------------------------------------------- real broker disks


def real_data(run: str) -> Path:
    d = REAL / run / "data"
    if not d.is_dir():
        pytest.skip(f"real broker disk {d} not available")
    return d


@pytest.mark.parametrize("run", RUNS)
def test_real_broker_disk(run):
    data = real_data(run)
    before = tree_state(data)
    inv = discover([str(data)])
    assert tree_state(data) == before
    d = only_log_dir(inv)
    assert list(inv.all_findings()) == []
    expected_meta = parse_meta_properties((data / "meta.properties").read_bytes(), "m")
    assert (
        d.broker_id == 1 and d.cluster_id == expected_meta.cluster_id and d.directory_id == expected_meta.directory_id
    )
    assert d.clean_shutdown is not None and d.clean_shutdown.broker_epoch is not None
    assert len(d.partitions) == 137 == len([p for p in data.iterdir() if p.is_dir()])
    topics = [p.topic for p in d.partitions]
    assert topics.count("__transaction_state") == 50 and topics.count("__consumer_offsets") == 50
    assert all(p.status is PartitionStatus.LIVE and p.topic_id for p in d.partitions)
    assert len({p.topic_id for p in d.partitions}) == len(set(topics))
    hw = parse_offset_checkpoint((data / "replication-offset-checkpoint").read_bytes(), "x").offsets()
    assert d.high_watermarks == hw and d.high_watermarks[TopicPartition("g-compact-txn", 0)] == 35
    assert len(d.recovery_points) == 136 and d.cleaner_offsets == {TopicPartition("g-compact-txn", 0): 33}
    g = d.partition("g-compact-txn", 0)
    assert g is not None
    assert [(s.base_offset, s.log_size) for s in g.segments] == [(0, 1158), (33, 207)]
    assert [s.offset for s in g.snapshots] == [33, 35]
    assert g.leader_epochs == (EpochEntry(0, 0),)
    cm = d.partition("__cluster_metadata", 0)
    assert cm is not None and cm.quorum_state is not None and cm.quorum_state.leader_id == 1
    assert cm.topic_id == "AAAAAAAAAAAAAAAAAAAAAQ" and len(cm.segments) == 1 and len(cm.snapshots) == 1
    b0 = d.partition("b-txn-aborts", 0)
    assert b0 is not None and all(s.log and s.index and s.timeindex for s in b0.segments)


def test_real_disks_together_and_via_parent():
    real_data(RUNS[0])
    inv = discover([str(REAL)])
    assert len(inv.log_dirs) == 2
    # two single-broker clusters, both node 1: kept apart, and said so
    (dup,) = find(inv.findings, FindingKind.DUPLICATE_BROKER)
    assert "broker id 1" in dup.message and "2 clusters" in dup.message
    assert {d.broker_id for d in inv.log_dirs} == {1}


# --------------------------------------------------------------------------- differential: LogLoader on names

_KINDS = ("log", "index", "timeindex", "txnindex", "snapshot")
_SUFFIXES = ("", ".swap", ".cleaned", ".deleted")


def _simulate_log_loader(files: dict[str, int], next_offset) -> set:
    """The passes of LogLoader.load on an in-memory directory (names -> sizes)."""
    fs = dict(files)

    def off(name: str) -> int:
        return int(name.split(".", 1)[0])

    cleaned = [n for n in fs if n.endswith(".cleaned")]
    min_cleaned = min((off(n) for n in cleaned), default=float("inf"))
    for n in list(fs):
        if n.endswith((".deleted", ".cleaned")) or (n.endswith(".swap") and off(n) >= min_cleaned):
            del fs[n]
    valid = [n for n in fs if n.endswith(".swap")]
    log_swaps = [n for n in valid if n.endswith(".log.swap")]
    if log_swaps:
        low = min(off(n) for n in log_swaps)
        high = max(next_offset(n, fs[n]) for n in log_swaps)
        for n in list(fs):
            if not n.endswith(".swap") and low <= off(n) < high:
                del fs[n]
    for n in valid:
        fs[n[: -len(".swap")]] = fs.pop(n)
    for n in list(fs):
        if n.split(".", 1)[1] in ("index", "timeindex", "txnindex") and f"{o(off(n))}.log" not in fs:
            del fs[n]  # orphaned index
    return set(fs)


@settings(max_examples=examples(400), deadline=None)
@given(
    st.dictionaries(
        st.tuples(st.sampled_from([0, 10, 20, 30, 40]), st.sampled_from(_KINDS), st.sampled_from(_SUFFIXES)),
        st.sampled_from([0, 5]),
        max_size=25,
    ),
    st.integers(min_value=1, max_value=35),
)
def test_resolve_segments_matches_log_loader(spec, delta):
    files = {f"{o(off)}.{kind}{suffix}": size for (off, kind, suffix), size in spec.items()}

    def next_offset(name: str, size: int) -> int:
        base = int(name.split(".", 1)[0])
        return base if size == 0 else base + delta

    expected = _simulate_log_loader(files, next_offset)
    res = resolve_segments(
        named(*files.items()), lambda path: next_offset(os.path.basename(path), files[os.path.basename(path)])
    )

    def effective(path: str | None) -> str | None:
        return os.path.basename(path).removesuffix(".swap") if path else None

    got = {effective(s.path) for s in res.snapshots}
    for seg in res.segments:
        got |= {effective(p) for p in (seg.log, seg.index, seg.timeindex, seg.txnindex) if p}
        assert seg.swapped_in == seg.log.endswith(".swap")
    assert got == expected
    bases = [s.base_offset for s in res.segments]
    assert bases == sorted(set(bases))
    assert sorted(os.path.basename(p) for p in res.deleted_files) == sorted(n for n in files if n.endswith(".deleted"))
    survivors = {p for s in res.segments for p in (s.log, s.index, s.timeindex, s.txnindex) if p}
    assert not survivors & set(res.replaced_files)
    # without the next offset the rule only ever keeps MORE than the broker would, never less
    approx = resolve_segments(named(*files.items()))
    kept = {effective(s.path) for s in approx.snapshots}
    for seg in approx.segments:
        kept |= {effective(p) for p in (seg.log, seg.index, seg.timeindex, seg.txnindex) if p}
    assert expected <= kept


@given(st.text(max_size=300))
def test_name_parsers_never_raise(name):
    parse_partition_dir_name(name)
    classify_file_name(name)
