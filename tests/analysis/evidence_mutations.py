"""The evidence sweep's mutation classes (issue 22, "Tests that must exist"): each a generator of concrete
mutations over one disk, read from the disk's own files (the oracle is in ``evidence_sweep.py``).

Every :class:`Mutation` says what it touches (partition dirs, by name, or a whole log dir), whether it
leaves a piece of the evidence out (``missing``: then whether the remaining files still name that piece,
``named``, and whether a verdict's scope needs it, ``needed``), and whether the result is a state no broker
writes (``contradicts``) or one a broker does write (a DeleteRecords log start, a new leader epoch at the
log end, a lagging recovery point on a copy without clean shutdown): only the first kinds may be held to
"never all clear".
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from collections.abc import Callable, Iterator, Sequence

from fixtures.diskgen.files import SnapshotEntrySpec, encode_offset_checkpoint, encode_producer_snapshot
from forensics.codec.snapshot import decode_snapshot
from tests.analysis.evidence_disks import (
    METADATA,
    PARTITION_DIR,
    TXN_STATE,
    Batch,
    SweepDisk,
    Workspace,
    batches,
    encode_epochs,
    partitions,
    read_epochs,
    read_offset_checkpoint,
    recrc,
    renumbered,
    segments,
)

HW, RP, LSO_CP = "replication-offset-checkpoint", "recovery-point-offset-checkpoint", "log-start-offset-checkpoint"
CLASSES = (
    "1a missing data partition", "1b missing __transaction_state-N", "1c missing highest __transaction_state",
    "1d missing __cluster_metadata-0", "2 broker left out", "3 JBOD log dir left out", "4a stale snapshot",
    "4b foreign snapshot", "4c edited snapshot (CRC fixed)", "5a offset checkpoint raised/lowered",
    "5b leader-epoch-checkpoint edited", "5c .kafka_cleanshutdown removed/added",
    "6 coordinator record re-appended/duplicated", "7a data batch duplicated + renumbered",
    "7b other-epoch batch in open txn", "8 segment of another partition",
)


@dataclass(frozen=True)
class Mutation:
    cls: str
    what: str
    apply: Callable[[Workspace], None]
    touches: frozenset[str]  # partition dir names the mutation edits or removes
    missing: bool = False  # leaves a piece of the evidence out
    named: bool = True  # (missing) the remaining files still name the piece
    needed: bool = True  # (missing) a verdict's scope needs the piece (see evidence_sweep's rule W3)
    contradicts: bool = True  # the mutated disk is a state no broker writes


@dataclass
class Part:
    """One partition dir of a log dir as the undamaged disk has it."""

    name: str
    rel: str  # relative to the disk's root
    logs: list[str]  # segment files, oldest first
    batches: list[Batch]  # of the last segment
    snapshots: list[str]
    history: list[Batch]  # of every segment, oldest first

    @property
    def transactional(self) -> bool:
        return any(b.transactional for b in self.batches)

    @property
    def log_end(self) -> int:
        return self.batches[-1].last_offset + 1 if self.batches else int(self.logs[-1].rsplit("/", 1)[1][:20]) \
            if self.logs else 0


def _rel(log_dir: str, name: str) -> str:
    return f"{log_dir}/{name}" if log_dir else name


def scan_parts(ws: Workspace, log_dir: str) -> dict[str, Part]:
    out = {}
    for name in partitions(ws.root, log_dir):
        rel = _rel(log_dir, name)
        logs = segments(ws.root, rel)
        every = [batches(ws.read(log)) for log in logs]
        out[name] = Part(name, rel, logs, every[-1] if every else [], segments(ws.root, rel, ".snapshot"),
                         [b for seg in every for b in seg])
    return out


def _set_checkpoint(ws: Workspace, log_dir: str, name: str, part: str, value: int) -> None:
    rel = _rel(log_dir, name)
    if not ws.exists(rel):
        return
    lines = {(t, p): o for t, p, o in read_offset_checkpoint(ws.read(rel))}
    m = PARTITION_DIR.match(part)
    lines[(m.group("topic"), int(m.group("partition")))] = value
    ws.write(rel, encode_offset_checkpoint(sorted((t, p, o) for (t, p), o in lines.items())))


def _checkpoint_value(ws: Workspace, log_dir: str, name: str, part: str) -> int | None:
    rel = _rel(log_dir, name)
    if not ws.exists(rel):
        return None
    m = PARTITION_DIR.match(part)
    found = [o for t, p, o in read_offset_checkpoint(ws.read(rel)) if (t, p) == (m.group("topic"), int(m.group("partition")))]
    return found[0] if found else None


def _append(ws: Workspace, log_dir: str, part: Part, raw: bytes, end: int) -> None:
    """``raw`` appended to the last segment; the high watermark and recovery point follow to ``end`` when given."""
    ws.write(part.logs[-1], ws.read(part.logs[-1]) + raw)
    if end >= 0:
        for name in (HW, RP):
            if _checkpoint_value(ws, log_dir, name, part.name) is not None:
                _set_checkpoint(ws, log_dir, name, part.name, end)


# --------------------------------------------------------------------------- 1-3: left out


def named_by_checkpoints(ws: Workspace, log_dir: str, part: str) -> bool:
    return any(_checkpoint_value(ws, log_dir, n, part) is not None for n in (HW, RP, LSO_CP))


def missing(disk: SweepDisk, ws: Workspace, log_dir: str, parts: dict[str, Part], open_parts: Sequence[str],
            id_partitions: Sequence[int]) -> Iterator[Mutation]:
    broker = disk.brokers[log_dir]
    data = [p for p in parts.values() if not p.name.startswith(TXN_STATE)]
    chosen = [p for p in data if p.transactional or p.name in open_parts]
    chosen += [p for p in data if p not in chosen][:3]
    for p in chosen:
        yield Mutation("1a missing data partition", f"{p.rel} left out", lambda w, r=p.rel: w.remove(r),
                       frozenset([p.name]), missing=True,
                       named=disk.registered or named_by_checkpoints(ws, log_dir, p.name),
                       needed=disk.leader(p.name, broker) == broker)
    coord = sorted((p for p in parts.values() if p.name.startswith(TXN_STATE)), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    for p in coord:
        n = int(p.name.rsplit("-", 1)[1])
        highest = p is coord[-1]
        if not (p.batches or highest):
            continue
        yield Mutation("1c missing highest __transaction_state" if highest else "1b missing __transaction_state-N",
                       f"{p.rel} left out" + (" (holds an id)" if p.batches else " (holds no id)"),
                       lambda w, r=p.rel: w.remove(r), frozenset([p.name]), missing=True,
                       named=disk.registered or named_by_checkpoints(ws, log_dir, p.name),
                       needed=n in id_partitions and disk.leader(p.name, broker) == broker)
    if ws.exists(_rel(log_dir, METADATA)):
        yield Mutation("1d missing __cluster_metadata-0", f"{_rel(log_dir, METADATA)} left out",
                       lambda w, r=_rel(log_dir, METADATA): w.remove(r), frozenset([METADATA]), missing=True,
                       named=ws.exists(_rel(log_dir, "bootstrap.checkpoint")))


def left_out_dirs(disk: SweepDisk, ws: Workspace) -> Iterator[Mutation]:
    """Class 2 (a broker: every log dir of a node id) and 3 (one of a broker's JBOD log dirs)."""
    by_node: dict[int, list[str]] = {}
    for d, node in disk.brokers.items():
        by_node.setdefault(node, []).append(d)
    if len(by_node) > 1:
        for node, dirs in sorted(by_node.items()):
            leads = [p for p, lead in disk.leaders.items() if lead == node]
            yield Mutation("2 broker left out", f"broker {node} ({', '.join(dirs)}) left out",
                           lambda w, ds=tuple(dirs): [w.remove(d) for d in ds],
                           frozenset(p for d in dirs for p in partitions(ws.root, d)), missing=True,
                           named=disk.registered, needed=bool(leads) or not disk.leaders)
    for node, dirs in sorted(by_node.items()):
        if len(dirs) > 1:
            for d in dirs:
                yield Mutation("3 JBOD log dir left out", f"broker {node}'s log dir {d} left out",
                               lambda w, r=d: w.remove(r), frozenset(partitions(ws.root, d)), missing=True,
                               named=disk.registered, needed=True)


# --------------------------------------------------------------------------- 4: producer snapshots


def _entries(data: bytes) -> list[SnapshotEntrySpec]:
    return [SnapshotEntrySpec(*e.raw) for e in decode_snapshot(data).entries]


def fold(bs: Sequence[Batch], below: int) -> list[SnapshotEntrySpec]:
    """The producer state of the batches whose last offset is below ``below``, as a snapshot taken there
    holds it (``ProducerStateManager``: a data batch sets epoch, sequence, offsets, time and opens a
    transaction; a marker sets epoch, coordinator epoch and time and closes it)."""
    state: dict[int, list[int]] = {}
    for b in bs:
        if b.last_offset >= below or b.producer_id < 0:
            continue
        e = state.setdefault(b.producer_id, [b.producer_id, b.producer_epoch, -1, -1, 0, b.max_timestamp, -1, -1])
        if b.control and b.marker is not None:
            if b.producer_epoch != e[1]:
                e[2], e[3], e[4] = -1, -1, 0
            e[1], e[5], e[6], e[7] = b.producer_epoch, b.max_timestamp, b.marker[1], -1
        elif not b.control:
            if b.transactional and e[7] < 0:
                e[7] = b.base_offset
            e[1:6] = [b.producer_epoch, b.base_sequence + b.last_offset_delta, b.last_offset, b.last_offset_delta,
                      b.max_timestamp]
    return [SnapshotEntrySpec(*v) for _, v in sorted(state.items())]


def snapshots(log_dir: str, parts: dict[str, Part], targets: Sequence[Part], ws: Workspace) -> Iterator[Mutation]:
    donors = [p for p in parts.values() if p.snapshots and p.transactional]
    for p in targets:
        if not p.snapshots:
            continue
        newest = p.snapshots[-1]
        current = ws.read(newest)
        for older in p.snapshots[:-1][-2:]:
            yield Mutation("4a stale snapshot", f"{older} renamed to {newest}",
                           lambda w, n=newest, o=older: w.write(n, w.read(o)), frozenset([p.name]))
        moments = sorted({b.base_offset for b in p.history if b.transactional and b.base_offset < int(newest[-29:-9])})
        for x in moments[-3:]:
            stale = encode_producer_snapshot(fold(p.history, x))
            if stale != current:
                yield Mutation("4a stale snapshot", f"{newest} holding the state below offset {x}",
                               lambda w, n=newest, d=stale: w.write(n, d), frozenset([p.name]))
        others = [d for d in donors if d.name != p.name and ws.read(d.snapshots[-1]) != current]
        for d in others[:2]:
            yield Mutation("4b foreign snapshot", f"{d.snapshots[-1]} in place of {newest}",
                           lambda w, n=newest, s=d.snapshots[-1]: w.write(n, w.read(s)), frozenset([p.name]))
        try:
            entries = _entries(current)
        except Exception:  # a snapshot the scenario damaged on purpose: nothing to edit
            continue
        ranked = sorted(range(len(entries)), key=lambda i: (entries[i].current_txn_first_offset < 0,
                                                             -entries[i].last_offset))
        for i in ranked[:3]:
            e = entries[i]
            edits = [("epoch +1", e._replace(epoch=e.epoch + 1)),
                     ("coordinator epoch +1", e._replace(coordinator_epoch=e.coordinator_epoch + 1)),
                     ("producer id +1000", e._replace(producer_id=e.producer_id + 1000))]
            if e.epoch > 0:
                edits.append(("epoch -1", e._replace(epoch=e.epoch - 1)))
            if e.current_txn_first_offset >= 0:
                edits += [("currentTxnFirstOffset cleared", e._replace(current_txn_first_offset=-1)),
                          ("currentTxnFirstOffset +1", e._replace(current_txn_first_offset=e.current_txn_first_offset + 1))]
            elif e.last_offset >= 0:
                edits.append(("currentTxnFirstOffset set to its last offset", e._replace(current_txn_first_offset=e.last_offset)))
            for label, edited in edits:
                data = encode_producer_snapshot(entries[:i] + [edited] + entries[i + 1:])
                yield Mutation("4c edited snapshot (CRC fixed)", f"{newest}: producer {e.producer_id} {label}",
                               lambda w, n=newest, d=data: w.write(n, d), frozenset([p.name]))


# --------------------------------------------------------------------------- 5: checkpoints


def checkpoints(disk: SweepDisk, ws: Workspace, log_dir: str, targets: Sequence[Part],
                open_start: dict[str, int]) -> Iterator[Mutation]:
    clean = ws.exists(_rel(log_dir, ".kafka_cleanshutdown"))
    cls = "5a offset checkpoint raised/lowered"
    for p in targets:
        end, first = p.log_end, (p.history[0].base_offset if p.history else p.log_end)  # the log's, not its last segment's
        for name in (HW, RP):
            v = _checkpoint_value(ws, log_dir, name, p.name)
            if v is None:
                continue
            values = {v + 1, v - 1, end + 5}
            if p.name in open_start and open_start[p.name] < v:
                values.add(open_start[p.name])
            for new in sorted(x for x in values if x >= 0 and x != v):
                yield Mutation(cls, f"{name}: {p.name} {v} -> {new}",
                               lambda w, n=name, t=p.name, x=new: _set_checkpoint(w, log_dir, n, t, x),
                               frozenset([p.name]), contradicts=clean or new > end)
        v = _checkpoint_value(ws, log_dir, LSO_CP, p.name) or 0
        hw = _checkpoint_value(ws, log_dir, HW, p.name)
        hw = end if hw is None else hw
        values = {v + 1, v - 1, end, end + 3}
        if p.name in open_start:
            values.add(open_start[p.name] + 1)
        for new in sorted(x for x in values if x >= 0 and x != v):
            yield Mutation(cls, f"{LSO_CP}: {p.name} {v} -> {new}",
                           lambda w, t=p.name, x=new: _set_checkpoint(w, log_dir, LSO_CP, t, x),
                           frozenset([p.name]), contradicts=not first <= new <= hw)
        rel = f"{p.rel}/leader-epoch-checkpoint"
        if not ws.exists(rel) or not p.batches:
            continue
        epochs = read_epochs(ws.read(rel))
        if not epochs:
            continue
        (le, lo) = epochs[-1]
        edits = [(f"last entry {le} {lo} -> {le} {lo + 1}", epochs[:-1] + [(le, lo + 1)], True),
                 (f"entry {le + 1} {end} added (a new leader at the log end)", epochs + [(le + 1, end)], False)]
        if end - 1 > lo:
            edits.append((f"entry {le + 1} {end - 1} added (below the last batch)", epochs + [(le + 1, end - 1)], True))
        if len(epochs) > 1:
            edits.append((f"last entry {le} {lo} removed", epochs[:-1], True))
        for label, new_epochs, bad in edits:
            yield Mutation("5b leader-epoch-checkpoint edited", f"{rel}: {label}",
                           lambda w, r=rel, d=encode_epochs(new_epochs): w.write(r, d), frozenset([p.name]),
                           contradicts=bad)
    marker = _rel(log_dir, ".kafka_cleanshutdown")
    every = frozenset(partitions(ws.root, log_dir))
    if clean:
        yield Mutation("5c .kafka_cleanshutdown removed/added", f"{marker} removed", lambda w: w.remove(marker), every,
                       contradicts=False)  # a running or crashed broker's copy: a state brokers leave
    else:
        yield Mutation("5c .kafka_cleanshutdown removed/added", f"{marker} added",
                       lambda w: w.write(marker, b'{"version":0,"brokerEpoch":99}', like=_rel(log_dir, "meta.properties")),
                       every)


# --------------------------------------------------------------------------- 6-8: records and segments


def coordinator_records(ws: Workspace, log_dir: str, coord: Sequence[Part]) -> Iterator[Mutation]:
    cls = "6 coordinator record re-appended/duplicated"
    for p in coord:
        if not p.batches:
            continue
        data, end = ws.read(p.logs[-1]), p.log_end
        last = p.batches[-1]
        picks = [("duplicated", last)] + [("re-appended", b) for b in p.batches[:-1][-3:]]
        if len(p.batches) > 4:
            picks.append(("re-appended", p.batches[0]))
        for label, b in picks:
            raw = renumbered(data, b, end)
            yield Mutation(cls, f"{p.logs[-1]}: record at offset {b.base_offset} {label} at {end}",
                           lambda w, r=raw, q=p, e=end: _append(w, log_dir, q, r, e + 1), frozenset([p.name]))
            fresh = bytearray(raw)
            struct.pack_into(">qq", fresh, 27, last.max_timestamp + 1, last.max_timestamp + 1)
            yield Mutation(cls, f"{p.logs[-1]}: record at offset {b.base_offset} {label} at {end}, newest time",
                           lambda w, r=recrc(fresh), q=p, e=end: _append(w, log_dir, q, r, e + 1), frozenset([p.name]))


def data_batches(ws: Workspace, log_dir: str, targets: Sequence[Part], open_start: dict[str, int]) -> Iterator[Mutation]:
    for p in targets:
        data, end = ws.read(p.logs[-1]) if p.logs else b"", p.log_end
        txn = [b for b in p.batches if b.transactional and not b.control]
        for b in txn[-2:]:
            raw = renumbered(data, b, end)
            for follow, label in ((-1, ""), (end + 1 + b.last_offset_delta, ", checkpoints follow")):
                yield Mutation("7a data batch duplicated + renumbered",
                               f"{p.logs[-1]}: batch {b.base_offset} (producer {b.producer_id} epoch {b.producer_epoch}) "
                               f"copied to {end}{label}", lambda w, r=raw, f=follow, q=p: _append(w, log_dir, q, r, f),
                               frozenset([p.name]))
        first = [b for b in txn if b.base_offset == open_start.get(p.name)]
        for b in first[:1]:
            for delta in (1, -1):
                if b.producer_epoch + delta < 0:
                    continue
                raw = bytearray(renumbered(data, b, end))
                struct.pack_into(">hi", raw, 51, b.producer_epoch + delta, 0 if delta > 0 else b.base_sequence)
                yield Mutation("7b other-epoch batch in open txn",
                               f"{p.logs[-1]}: a batch of producer {b.producer_id} at epoch {b.producer_epoch + delta} "
                               f"inside its open transaction (from {b.base_offset}) at {end}",
                               lambda w, r=recrc(raw), q=p, f=end + 1 + b.last_offset_delta: _append(w, log_dir, q, r, f),
                               frozenset([p.name]))


def foreign_segments(ws: Workspace, targets: Sequence[Part], donors: Sequence[Part]) -> Iterator[Mutation]:
    for p in targets:
        if not p.logs:
            continue
        log = p.logs[-1]
        others = [d for d in donors if d.name != p.name and d.logs and ws.read(d.logs[-1]) != ws.read(log)]
        picks = others[:1] + [d for d in others[1:] if not d.transactional][:1]
        for d in picks:
            yield Mutation("8 segment of another partition", f"{d.logs[-1]} in place of {log}",
                           lambda w, s=d.logs[-1], t=log: w.write(t, w.read(s)), frozenset([p.name]))
            idx = [(log[:-4] + ext, d.logs[-1][:-4] + ext) for ext in (".index", ".timeindex")]
            if all(ws.exists(a) and ws.exists(b) for a, b in idx):
                def both(w, s=d.logs[-1], pairs=tuple(idx), t=log):
                    w.write(t, w.read(s))
                    for a, b in pairs:
                        w.write(a, w.read(b))
                yield Mutation("8 segment of another partition", f"{d.logs[-1]} and its indexes in place of {log}",
                               both, frozenset([p.name]))


# --------------------------------------------------------------------------- all of them, for one disk


def mutations(disk: SweepDisk, ws: Workspace, open_rows: Sequence[tuple[str, int, int | None]]) -> list[Mutation]:
    """Every mutation of every class over ``disk``; ``open_rows``: (partition name, start offset, coordinator
    partition) of each open transaction the undamaged disk shows. On a disk of several log dirs the
    per-partition classes edit the log dir holding the first open transaction's leader copy (else the first)."""
    open_start = {name: start for name, start, _ in open_rows}
    id_partitions = sorted({c for _, _, c in open_rows if c is not None})
    out: list[Mutation] = list(left_out_dirs(disk, ws))
    dirs = list(disk.log_dirs)
    if len(dirs) > 1:
        holding = [d for d in dirs if any(n in partitions(ws.root, d) and disk.leader(n, disk.brokers[d]) == disk.brokers[d]
                                          for n in open_start)]
        dirs = holding[:1] or dirs[:1]
        coord_dirs = [d for d in disk.log_dirs if any(n.startswith(TXN_STATE) for n in partitions(ws.root, d))]
        dirs += [d for d in coord_dirs[:1] if d not in dirs]
    for log_dir in dirs:
        parts = scan_parts(ws, log_dir)
        coord = [p for p in parts.values() if p.name.startswith(TXN_STATE) and p.batches]
        data = [p for p in parts.values() if not p.name.startswith(TXN_STATE)]
        targets = [p for p in data if p.transactional or p.name in open_start]
        held = [p for p in coord if int(p.name.rsplit("-", 1)[1]) in id_partitions]
        out += missing(disk, ws, log_dir, parts, list(open_start), id_partitions)
        out += snapshots(log_dir, parts, targets, ws)
        out += checkpoints(disk, ws, log_dir, targets + held, open_start)
        out += coordinator_records(ws, log_dir, held + [p for p in coord if p not in held][:6])
        out += data_batches(ws, log_dir, targets, open_start)
        out += foreign_segments(ws, targets, data)
        out += foreign_segments(ws, held, coord)
    return out


__all__ = ["CLASSES", "Mutation", "fold", "mutations", "scan_parts"]
