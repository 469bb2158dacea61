"""Ground truth for real-broker evidence: the producers' own logs, copies' time windows, file times.

No broker, no Kafka client here (the fast tier imports it for the committed fixtures under
``fixtures/live/``). The producers (``tests/e2e/txn_log_child.py``) log each step with its wall-clock ms;
:func:`transactions` joins a log into one :class:`Txn` per transaction, :func:`in_flight` says which were
in flight during a time window (a copy, or a run of the tool on the live log dir).

A transaction counts as in flight during ``[start, end]`` when it began before ``end`` and had not surely
ended before ``start``. "Surely ended" is ``ended_ms + MARKER_GRACE_MS < start``: ``commit_transaction``
returns once the coordinator has logged PrepareCommit, and the coordinator writes the markers and then
CompleteCommit after that (Kafka's ``TransactionCoordinator.endTransaction``: the response is sent,
then ``TransactionMarkerChannelManager`` sends the markers), so the client's end is not the disk's end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

MARKER_GRACE_MS = 2000  # client end -> markers and Complete* on disk: ms on an idle single node; 2 s is generous


class Txn(NamedTuple):
    txid: str
    txn: int  # the producer's own count from 0
    pid: int
    epoch: int
    topic: str
    begin_ms: int  # before begin_transaction
    end_start_ms: int | None  # before commit_transaction / abort_transaction
    ended_ms: int | None  # the call returned; None: never ended (killed, or still open at the end)
    outcome: str | None  # "commit", "abort" or None
    offsets: dict[int, tuple[int, int]]  # partition -> (first, last) data offset the broker acknowledged

    @property
    def key(self) -> str:
        return f"{self.txid}#{self.txn}"

    def as_json(self) -> dict:
        d = self._asdict()
        d["offsets"] = {str(p): list(r) for p, r in sorted(self.offsets.items())}
        d["key"] = self.key
        return d


def now_ms() -> int:
    return int(time.time() * 1000)


def read_events(paths: Iterable[Path]) -> list[dict]:
    events = []
    for path in paths:
        with open(path) as f:
            events += [json.loads(line) for line in f if line.strip()]
    return sorted(events, key=lambda e: (e["t"], e["txid"]))


def transactions(events: Sequence[dict], topic: str) -> list[Txn]:
    """One Txn per (txid, txn) that began, in begin order."""
    rows: dict[tuple[str, int], dict] = {}
    for e in events:
        k = (e["txid"], e["txn"])
        if e["ev"] == "begin":
            rows[k] = {"txid": e["txid"], "txn": e["txn"], "pid": e["pid"], "epoch": e["epoch"], "topic": topic,
                       "begin_ms": e["t"], "end_start_ms": None, "ended_ms": None, "outcome": None, "offsets": {}}
        elif k not in rows:
            continue
        elif e["ev"] == "ack":
            first, last = rows[k]["offsets"].get(e["partition"], (e["offset"], e["offset"]))
            rows[k]["offsets"][e["partition"]] = (min(first, e["offset"]), max(last, e["offset"]))
        elif e["ev"] in ("commit_start", "abort_start"):
            rows[k]["end_start_ms"] = e["t"]
        elif e["ev"] in ("commit", "abort"):
            rows[k]["ended_ms"], rows[k]["outcome"] = e["t"], e["ev"]
            rows[k]["pid"], rows[k]["epoch"] = e["pid"], e["epoch"]
    return sorted((Txn(**r) for r in rows.values()), key=lambda t: (t.begin_ms, t.txid))


def txn_from_json(d: dict) -> Txn:
    fields = {k: d[k] for k in Txn._fields}
    fields["offsets"] = {int(p): (r[0], r[1]) for p, r in d["offsets"].items()}
    return Txn(**fields)


def in_flight(txns: Iterable[Txn], start_ms: int, end_ms: int, grace_ms: int = MARKER_GRACE_MS) -> list[Txn]:
    return [t for t in txns if t.begin_ms <= end_ms and (t.ended_ms is None or t.ended_ms + grace_ms >= start_ms)]


def window_truth(txns: Sequence[Txn], start_ms: int, end_ms: int) -> dict:
    """What the producers' logs say about a time window: in-flight keys, how many had ended before it."""
    flying = in_flight(txns, start_ms, end_ms)
    keys = {t.key for t in flying}
    finished = [t for t in txns if t.key not in keys and t.begin_ms <= end_ms]
    return {"start_ms": start_ms, "end_ms": end_ms, "grace_ms": MARKER_GRACE_MS,
            "in_flight": [t.key for t in flying],
            "in_flight_by_client": [t.key for t in in_flight(txns, start_ms, end_ms, grace_ms=0)], "finished_before": len(finished),
            "finished_last": finished[-1].key if finished else None,
            "begun_after": sum(1 for t in txns if t.begin_ms > end_ms)}


def txn_index(txns: Iterable[Txn]) -> dict[tuple[str, int, int, int], Txn]:
    """(topic, partition, producer id, first offset) -> the transaction that wrote there."""
    return {(t.topic, p, t.pid, first): t for t in txns for p, (first, _last) in t.offsets.items()}


SLOW_COPY = "slow copy"  # file by file, SLOW_COPY_PAUSE_S apart: the time a big disk takes, on a small one
SLOW_COPY_PAUSE_S = 0.01


def slow_copy(src: Path, dst: Path) -> list[str]:
    """Each file with ``shutil.copy2``, a pause between files (dirs in sorted order); what could not be read."""
    errors = []
    for path in sorted(src.rglob("*")):
        target = dst / path.relative_to(src)
        try:
            if path.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
                time.sleep(SLOW_COPY_PAUSE_S)
        except OSError as exc:  # rolled or deleted under the copy, as cp reports it
            errors.append(f"{path}: {exc.strerror}")
    return errors


def table_rows(lines: Sequence[str]) -> list[dict[str, str]]:
    """A kafka-transactions.sh tab-separated table (header line first) as one dict a row."""
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        return []
    head = [h.strip() for h in lines[0].split("\t")]
    return [dict(zip(head, (c.strip() for c in ln.split("\t")))) for ln in lines[1:]]


def take_copy(src: Path, dst: Path, method: str = "cp -r") -> dict:
    """``cp -r`` / ``cp -a`` (or :data:`SLOW_COPY`) of a live dir, as an investigator does; its wall-clock
    window and exit."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    start = now_ms()
    if method == SLOW_COPY:
        errors = slow_copy(src, dst)
        rc = 1 if errors else 0
    else:
        r = subprocess.run(method.split() + [str(src), str(dst)], capture_output=True, text=True, timeout=300)
        rc, errors = r.returncode, r.stderr.strip().splitlines()
    end = now_ms()
    return {"method": method, "start_ms": start, "end_ms": end, "rc": rc, "stderr": errors[:20]}


def file_times(root: Path) -> dict[str, dict]:
    """Every file and dir under ``root``: relative path -> size, mtime_ns (git keeps neither time)."""
    out: dict[str, dict] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        out[path.relative_to(root).as_posix()] = {"size": st.st_size if path.is_file() else None,
                                                  "mtime_ns": st.st_mtime_ns}
    return out


def restore_times(root: Path, times: dict[str, dict]) -> int:
    """Set the recorded mtimes back (deepest first, so that dirs keep theirs); how many were set."""
    n = 0
    for rel in sorted(times, key=lambda r: -r.count("/")):
        path = root / rel
        if path.exists():
            ns = times[rel]["mtime_ns"]
            os.utime(path, ns=(ns, ns), follow_symlinks=False)
            n += 1
    return n


def copy_with_times(src: Path, dst: Path, times: dict[str, dict]) -> Path:
    """A tmp copy of a committed fixture with its original file times (what the broker's disk had)."""
    shutil.copytree(src, dst)
    restore_times(dst, times)
    return dst


def dump_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
