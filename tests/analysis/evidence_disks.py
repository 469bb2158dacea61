"""The evidence sweep's disks and the files it edits (see ``evidence_sweep.py`` for the oracle).

A :class:`Workspace` is one working copy of a disk, edited in place by one mutation at a time and put
back after it byte for byte and mtime for mtime (a journal of what each edit replaced; removed files
and dirs are moved aside, never deleted), so that thousands of runs cost one copy per disk.

The disks: the real Kafka 4.1.0 log dirs (``fixtures/real/<run>/disk``, whole: every partition, so
that what ``__cluster_metadata`` and the checkpoints name is all there), the example disk, every
hanging scenario (``fixtures/hanging_scenarios.py``) and state scenario (``fixtures/scenarios.py``),
and disks made here from the real ``kraft-tv2`` log dir: three brokers (the same files under node
ids 1-3, the metadata log extended to register brokers 2 and 3 and to make them the leaders of some
partitions) and one broker whose partitions are split over three JBOD log dirs (each with its own
``meta.properties`` ``directory.id``, the metadata log extended to register the three directories
and assign every partition to the one that holds it).

Nothing here reads through ``forensics`` except the metadata record encoder (``schema_encode``)
and, in ``evidence_mutations``, the producer-snapshot decoder: the batch headers, checkpoints and
control records are parsed with the few lines below, so the sweep measures the analysis with its
own eyes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from crc32c import crc32c

from fixtures.diskgen.files import encode_meta_properties, encode_offset_checkpoint
from fixtures.diskgen.records import RecordSpec, encode_v2_batch

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"
EXAMPLE = REPO / "fixtures" / "example-disk"
# ~10 s after each disk's newest record (tests/analysis/test_damage_sweep.py); the example disk's as-of
# is the one its tests use
REAL_AS_OF = {"kraft-tv2": 1795211459934, "kraft-rv3.9-tv0": 1795211736934}
EXAMPLE_AS_OF = 1767229200000
ROOT_CHECKPOINTS = ("replication-offset-checkpoint", "recovery-point-offset-checkpoint",
                    "log-start-offset-checkpoint", "cleaner-offset-checkpoint")
PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
TXN_STATE = "__transaction_state"
METADATA = "__cluster_metadata-0"


# --------------------------------------------------------------------------- a working copy, edited and undone


class Workspace:
    """A disk under ``root``, edited one mutation at a time: :meth:`write` and :meth:`remove` journal what they
    replace, :meth:`undo` puts it all back (contents and mtimes)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.trash = root.parent / f".{root.name}.aside"
        self._journal: list[tuple] = []

    def path(self, rel: str) -> Path:
        return self.root / rel

    def read(self, rel: str) -> bytes:
        return self.path(rel).read_bytes()

    def exists(self, rel: str) -> bool:
        return self.path(rel).exists()

    def write(self, rel: str, data: bytes, like: str | None = None) -> None:
        """``rel`` now holds ``data``; its mtime stays (a new file takes ``like``'s, else its dir's newest)."""
        p = self.path(rel)
        if p.exists():
            st = p.stat()
            self._journal.append(("restore", p, p.read_bytes(), st.st_atime_ns, st.st_mtime_ns))
            times = (st.st_atime_ns, st.st_mtime_ns)
        else:
            self._journal.append(("unlink", p))
            ref = self.path(like) if like else max(p.parent.iterdir(), key=lambda f: f.stat().st_mtime_ns, default=None)
            times = (ref.stat().st_atime_ns, ref.stat().st_mtime_ns) if ref is not None else None
        p.write_bytes(data)
        if times is not None:
            os.utime(p, ns=times)

    def remove(self, rel: str) -> None:
        """``rel`` (a file or a dir) is not part of the copy: moved aside."""
        p = self.path(rel)
        self.trash.mkdir(exist_ok=True)
        aside = self.trash / str(len(os.listdir(self.trash)))
        os.rename(p, aside)
        self._journal.append(("back", aside, p))

    def undo(self) -> None:
        while self._journal:
            step = self._journal.pop()
            if step[0] == "restore":
                _, p, data, atime, mtime = step
                p.write_bytes(data)
                os.utime(p, ns=(atime, mtime))
            elif step[0] == "unlink":
                step[1].unlink()
            else:
                os.rename(step[1], step[2])


def fingerprint(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every file under ``root``: (size, mtime ns, CRC-32C) — what an undo must give back."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns, crc32c(p.read_bytes()))
            for p in sorted(root.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------- the files, parsed with our own eyes


class Batch(NamedTuple):
    """A v2 batch header (``DefaultRecordBatch``) and, for a control batch, its marker."""

    pos: int
    end: int
    base_offset: int
    last_offset_delta: int
    leader_epoch: int
    attributes: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int
    marker: tuple[bool, int] | None  # (commit, coordinator epoch) of an end-transaction marker

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def transactional(self) -> bool:
        return bool(self.attributes & 0x10)

    @property
    def control(self) -> bool:
        return bool(self.attributes & 0x20)


_HEAD = struct.Struct(">qiibIhiqqqhii")  # baseOffset .. recordsCount: 61 bytes


def batches(data: bytes) -> list[Batch]:
    """The whole v2 batches of a segment, in file order (stops at the first one that is not)."""
    out, pos = [], 0
    while pos + 61 <= len(data):
        (base, length, ple, magic, _crc, attrs, delta, _bts, mts, pid, epoch, seq, count) = _HEAD.unpack_from(data, pos)
        end = pos + 12 + length
        if magic != 2 or length < 49 or end > len(data):
            break
        marker = None
        if attrs & 0x20 and count == 1 and end - pos >= 61 + 12:
            kind = struct.unpack_from(">h", data, end - 10)[0]
            marker = (kind == 1, struct.unpack_from(">i", data, end - 5)[0])
        out.append(Batch(pos, end, base, delta, ple, attrs, mts, pid, epoch, seq, count, marker))
        pos = end
    return out


def renumbered(data: bytes, batch: Batch, base_offset: int) -> bytes:
    """``batch``'s bytes with another base offset (outside the CRC: the copy stays valid)."""
    raw = bytearray(data[batch.pos:batch.end])
    struct.pack_into(">q", raw, 0, base_offset)
    return bytes(raw)


def recrc(raw: bytearray) -> bytes:
    """A batch whose CRC-covered part (attributes on) was edited, its CRC-32C written again."""
    struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
    return bytes(raw)


def read_offset_checkpoint(data: bytes) -> list[tuple[str, int, int]]:
    """The lines of an offset checkpoint (``OffsetCheckpointFile``); none when it is not one (a live copy can
    catch a checkpoint while it is rewritten: empty)."""
    try:
        lines = data.decode().splitlines()
        return [(ln.rsplit(" ", 2)[0], int(ln.rsplit(" ", 2)[1]), int(ln.rsplit(" ", 2)[2]))
                for ln in lines[2:2 + int(lines[1])]]
    except (ValueError, IndexError):
        return []


def read_epochs(data: bytes) -> list[tuple[int, int]]:
    try:
        lines = data.decode().splitlines()
        return [(int(a), int(b)) for a, b in (ln.split() for ln in lines[2:2 + int(lines[1])])]
    except (ValueError, IndexError):
        return []


def encode_epochs(entries: Sequence[tuple[int, int]]) -> bytes:
    return ("0\n%d\n" % len(entries) + "".join(f"{e} {o}\n" for e, o in entries)).encode()


# --------------------------------------------------------------------------- a disk and what is on it


@dataclass(frozen=True)
class SweepDisk:
    """A disk of the sweep: ``root`` is what the analysis is given, ``as_of`` the analysis time (the same
    for the undamaged and every mutated copy), ``log_dirs`` relative to ``root`` (``""``: root itself)."""

    name: str
    root: Path
    as_of: int
    log_dirs: tuple[str, ...]
    brokers: dict[str, int]  # log dir -> node.id
    registered: bool  # a __cluster_metadata log names every broker and log dir of the disk
    leaders: dict[str, int]  # partition -> its leader's node id where several brokers hold it (else: the one)

    def leader(self, partition: str, default: int) -> int:
        return self.leaders.get(partition, default)


def log_dirs_of(root: Path) -> tuple[str, ...]:
    if (root / "meta.properties").is_file():
        return ("",)
    return tuple(str(p.parent.relative_to(root)) for p in sorted(root.rglob("meta.properties")))


def node_id(meta: Path) -> int:
    return int(re.search(r"^node\.id=(\d+)", meta.read_text(), re.M).group(1))


def partitions(root: Path, log_dir: str) -> list[str]:
    """The partition dirs of a log dir (names ``topic-N``), the metadata log left out."""
    base = root / log_dir
    return sorted(d.name for d in base.iterdir() if d.is_dir() and PARTITION_DIR.match(d.name) and d.name != METADATA)


def segments(root: Path, rel_dir: str, ext: str = ".log") -> list[str]:
    d = root / rel_dir
    return sorted(f"{rel_dir}/{f.name}" if rel_dir else f.name for f in d.iterdir() if f.name.endswith(ext))


def sweep_disk(name: str, root: Path, as_of: int) -> SweepDisk:
    dirs = log_dirs_of(root)
    brokers = {d: node_id(root / d / "meta.properties") for d in dirs}
    registered = _REGISTERED.get(str(root), False) or (
        len(set(brokers.values())) == 1 and any((root / d / METADATA).is_dir() for d in dirs))
    return SweepDisk(name, root, as_of, dirs, brokers, registered, _LEADERS.get(str(root), {}))


_REGISTERED: dict[str, bool] = {}  # roots whose metadata log this module extended to name every broker/dir
_LEADERS: dict[str, dict[str, int]] = {}  # root -> partition -> leader, as that metadata says


# --------------------------------------------------------------------------- disks made here from a real log dir


def _metadata_value(api_key: int, version: int, data: dict) -> bytes:
    from forensics.codec.metadata_schemas import METADATA_MESSAGES
    from forensics.codec.schema_encode import encode_message

    return bytes([1, api_key, version]) + encode_message(METADATA_MESSAGES[api_key], version, data)


def _topic_ids(log_dir: Path) -> dict[str, str]:
    """topic -> its id, from each partition dir's ``partition.metadata`` (``topic_id: ...``)."""
    out = {}
    for d in sorted(log_dir.iterdir()):
        m = PARTITION_DIR.match(d.name)
        pm = d / "partition.metadata"
        if m and pm.is_file() and d.name != METADATA:
            out[m.group("topic")] = re.search(r"topic_id: (\S+)", pm.read_text()).group(1)
    return out


def _kafka_id(seed: str) -> str:
    import base64
    import hashlib

    return base64.urlsafe_b64encode(hashlib.sha256(seed.encode()).digest()[:16]).decode().rstrip("=")


def append_metadata(log_dir: Path, values: Sequence[bytes]) -> None:
    """Append one batch of metadata records to ``__cluster_metadata-0`` after its last batch (same leader
    epoch, a timestamp 1 ms after the newest), as the active controller would."""
    log = sorted((log_dir / METADATA).glob("*.log"))[-1]
    data = log.read_bytes()
    last = batches(data)[-1]
    batch = encode_v2_batch(last.last_offset + 1, [RecordSpec(key=None, value=v) for v in values],
                            partition_leader_epoch=last.leader_epoch, base_timestamp=last.max_timestamp + 1)
    st = log.stat()
    log.write_bytes(data + batch)
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))


def _registration(broker: int, dirs: Sequence[str]) -> bytes:
    return _metadata_value(0, 3, {"brokerId": broker, "incarnationId": _kafka_id(f"inc:{broker}"),
                                  "brokerEpoch": 1000 + broker, "endPoints": [], "features": [], "rack": None,
                                  "fenced": False, "logDirs": list(dirs)})


def _set_meta(meta: Path, node: int, directory_id: str) -> None:
    text = meta.read_text()
    cluster = re.search(r"^cluster\.id=(\S+)", text, re.M).group(1)
    st = meta.stat()
    meta.write_bytes(encode_meta_properties(node, cluster, directory_id))
    os.utime(meta, ns=(st.st_atime_ns, st.st_mtime_ns))


def three_brokers(dst: Path, src: Path = REAL / "kraft-tv2" / "disk") -> Path:
    """Brokers 1-3, each a whole copy of ``src`` under its own node and directory id (every partition on
    every broker); the metadata log (on each copy: the same controller log) registers 2 and 3 and makes 2
    the leader of the d-txn-ongoing partitions and 3 the leader of a-txn-orders-*, replicas [1, 2, 3]."""
    ids = _topic_ids(src)
    leaders = {"d-txn-ongoing": 2, "a-txn-orders": 3}
    values = [_registration(b, [_kafka_id(f"dir:{b}")]) for b in (2, 3)]
    first = re.search(r"^directory\.id=(\S+)", (src / "meta.properties").read_text(), re.M).group(1)
    directories = [first, _kafka_id("dir:2"), _kafka_id("dir:3")]
    led: dict[str, int] = {}
    for name in partitions(src, ""):
        m = PARTITION_DIR.match(name)
        topic, part = m.group("topic"), int(m.group("partition"))
        # v1: three replicas need three directories (PartitionRegistration.merge refuses a change without them)
        values.append(_metadata_value(5, 1, {"partitionId": part, "topicId": ids[topic],
                                             "replicas": [1, 2, 3], "isr": [1, 2, 3],
                                             "leader": leaders.get(topic, 1), "directories": directories}))
        led[name] = leaders.get(topic, 1)
    for b in (1, 2, 3):
        d = dst / f"broker-{b}"
        shutil.copytree(src, d)
        if b != 1:
            _set_meta(d / "meta.properties", b, _kafka_id(f"dir:{b}"))
        append_metadata(d, values)
    _REGISTERED[str(dst)] = True
    _LEADERS[str(dst)] = led
    return dst


def jbod(dst: Path, src: Path = REAL / "kraft-tv2" / "disk") -> Path:
    """Broker 1 with its partitions over three log dirs: ``dir-a`` keeps the original directory id, the
    metadata log, ``bootstrap.checkpoint`` and the ``__transaction_state`` partitions; ``dir-b`` takes
    d-txn-ongoing-*, b-txn-aborts-* and every third other data partition; ``dir-c`` the rest. Each dir has
    its own root checkpoints (its own partitions' lines), ``.kafka_cleanshutdown`` and ``meta.properties``;
    the metadata log re-registers broker 1 with the three directory ids and assigns each partition to its."""
    original = re.search(r"^directory\.id=(\S+)", (src / "meta.properties").read_text(), re.M).group(1)
    dir_ids = {"dir-a": original, "dir-b": _kafka_id("jbod:b"), "dir-c": _kafka_id("jbod:c")}
    data_parts = [p for p in partitions(src, "") if not p.startswith(TXN_STATE)]
    home: dict[str, str] = {p: "dir-a" for p in partitions(src, "") if p.startswith(TXN_STATE)}
    rest = [p for p in data_parts if not p.startswith(("d-txn-ongoing", "b-txn-aborts"))]
    home.update({p: "dir-b" for p in data_parts if p.startswith(("d-txn-ongoing", "b-txn-aborts"))})
    home.update({p: ("dir-b" if i % 3 == 0 else "dir-c") for i, p in enumerate(rest)})
    for d in dir_ids:
        (dst / d).mkdir(parents=True)
    for name in sorted(os.listdir(src)):
        s = src / name
        if s.is_dir():
            shutil.copytree(s, dst / home.get(name, "dir-a") / name)
        elif name in ROOT_CHECKPOINTS:
            lines = read_offset_checkpoint(s.read_bytes())
            for d in dir_ids:
                mine = [ln for ln in lines if home.get(f"{ln[0]}-{ln[1]}", "dir-a") == d]
                (dst / d / name).write_bytes(encode_offset_checkpoint(mine))
                shutil.copystat(s, dst / d / name)
        elif name in (".kafka_cleanshutdown", "meta.properties"):
            for d in dir_ids:
                shutil.copy2(s, dst / d / name)
        else:
            shutil.copy2(s, dst / "dir-a" / name)
    for d, did in dir_ids.items():
        if d != "dir-a":
            _set_meta(dst / d / "meta.properties", 1, did)
    ids = _topic_ids(src)
    values = [_registration(1, list(dir_ids.values()))]
    for name, d in sorted(home.items()):
        m = PARTITION_DIR.match(name)
        values.append(_metadata_value(5, 1, {"partitionId": int(m.group("partition")),
                                             "topicId": ids[m.group("topic")],
                                             "directories": [dir_ids[d]]}))
    append_metadata(dst / "dir-a", values)
    _REGISTERED[str(dst)] = True
    return dst


# --------------------------------------------------------------------------- every disk of the sweep


def _hanging(name: str) -> Callable[[Path], tuple[Path, int]]:
    def make(dst: Path) -> tuple[Path, int]:
        from fixtures import hanging_scenarios as hs

        return hs.build(name, dst), hs.expected(name)["asOf"]
    return make


def _state(name: str) -> Callable[[Path], tuple[Path, int]]:
    def make(dst: Path) -> tuple[Path, int]:
        from fixtures import scenarios as sc

        sc.build(name, dst)
        return dst, _newest_record(dst) + 10_000
    return make


def _newest_record(root: Path) -> int:
    """The newest batch timestamp of the disk (the state scenarios' analysis time is 10 s after it)."""
    return max((b.max_timestamp for log in root.rglob("*.log") for b in batches(log.read_bytes())), default=0)


def _copied(src: Path, as_of: int) -> Callable[[Path], tuple[Path, int]]:
    def make(dst: Path) -> tuple[Path, int]:
        shutil.copytree(src, dst)
        return dst, as_of
    return make


def _live(name: str) -> Callable[[Path], tuple[Path, int | None]]:
    def make(dst: Path) -> tuple[Path, int | None]:
        from tests.e2e.live_fixtures import materialise

        dst.mkdir(parents=True)
        return materialise(name, dst), None  # the incident clock of the undamaged copy (its mtimes are the broker's)
    return make


LIVE = ("delete-records", "jbod", "live-tv0-cp-r-complete-commit", "live-tv2-cp-r-prepare-commit",
        "live-tv2-final-clean-stop", "live-tv2-slow-complete-commit", "restart")


def incident_clock(root: Path) -> int:
    """The as-of time find-hanging takes on ``root`` without ``--as-of`` (its stderr line ``as of ... (ms)``)."""
    from typer.testing import CliRunner

    import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
    from forensics.cli.app import app

    r = CliRunner().invoke(app, ["find-hanging", str(root), "--format", "json", "--no-progress"])
    return int(re.search(r"^as of \S+ \((\d+)\)", r.stderr, re.M).group(1))


def catalog() -> dict[str, Callable[[Path], tuple[Path, int | None]]]:
    """disk name -> make(dst) returning (the root to analyse, the analysis time)."""
    from fixtures import hanging_scenarios as hs
    from fixtures import scenarios as sc

    out: dict[str, Callable[[Path], tuple[Path, int]]] = {
        f"real/{run}": _copied(REAL / run / "disk", as_of) for run, as_of in sorted(REAL_AS_OF.items())}
    out["example"] = _copied(EXAMPLE, EXAMPLE_AS_OF)
    out["real/kraft-tv2 x3 brokers"] = lambda dst: (three_brokers(dst), REAL_AS_OF["kraft-tv2"])
    out["real/kraft-tv2 jbod"] = lambda dst: (jbod(dst), REAL_AS_OF["kraft-tv2"])
    out.update({f"hanging/{n}": _hanging(n) for n in sorted(hs.SCENARIOS)})
    out.update({f"state/{n}": _state(n) for n in sorted(sc.SCENARIOS)})
    if (REPO / "fixtures" / "live").is_dir():
        out.update({f"live/{n}": _live(n) for n in LIVE if (REPO / "fixtures" / "live" / n).is_dir()})
    return out


def make_disk(name: str, scratch: Path) -> SweepDisk:
    dst = scratch / re.sub(r"[^A-Za-z0-9.-]+", "_", name)
    if dst.exists():
        shutil.rmtree(dst)
    root, as_of = catalog()[name](dst)
    return sweep_disk(name, root, incident_clock(root) if as_of is None else as_of)


def describe(disk: SweepDisk) -> str:
    return json.dumps({"name": disk.name, "logDirs": list(disk.log_dirs), "brokers": disk.brokers,
                       "registered": disk.registered})
