"""The evidence-consistency mutation sweep (issue 22, "Tests that must exist", last item): partial, stale,
foreign, edited and contradictory evidence never arms an abort the undamaged disk does not justify and
never reads as all clear.

Each disk of ``evidence_disks.catalog()`` is analysed undamaged first, then once per mutation of
``evidence_mutations`` (one at a time, undone after), in-process (``find-hanging --all --format json``
through typer's ``CliRunner``, as an operator's run with the same ``--as-of`` as the undamaged run).

The oracle, per mutated run:

(a) **armed, unjustified**: a row with ``armed: true`` whose abort — (topic, partition, producer id,
    producer epoch, coordinator epoch) of its legacy form and the start offset of its ``--start-offset``
    form — is not armed on the undamaged disk. ``abort-commands`` arms exactly the rows
    ``find-hanging`` marks ``armed`` (both call ``report.hanging.is_armed``; test_evidence_sweep.py
    checks it on a sample).

(b) **wrong all-clear**: exit 0 where one of these holds:

    W1. the undamaged disk's exit is not 0: a mutation never turns "needs a person" or "hanging" into
        "nothing to do" (no mutation here adds evidence a broker would write to close a transaction);
    W2. the mutation contradicts the evidence of a partition the undamaged disk has an open transaction
        on, or of the ``__transaction_state`` partition holding that transaction's id (``contradicts``:
        a state no broker writes — an edited snapshot, a checkpoint a clean shutdown would not leave, a
        duplicated batch — as opposed to one a broker does write: a log start moved by DeleteRecords
        within [first offset, high watermark], a new leader epoch starting at the log end, a lagging
        recovery point or high watermark on a copy without ``.kafka_cleanshutdown``, where only W1 applies);
        removing ``.kafka_cleanshutdown`` is such a state (a running or crashed broker's copy: a verdict
        that needs no one, ``ongoing``, may stand on it), adding it to a log dir without one is not;
    W3. the mutation leaves out a piece a verdict's scope needs, while the remaining files name it. The
        scope needs (issue 22, "No all clear without whole evidence"): every partition's leader copy (a
        data partition's copy on the only broker, or on the leader the metadata names: its content is
        unknown, so nothing proves it holds no open transaction); every coordinator partition an open
        transaction's id hashes to (a ``__transaction_state-N`` holding none of them is not needed: every
        open transaction is matched to its id elsewhere, and producer ids are never shared between ids,
        so the disk itself proves nothing of the verdicts is in it); ``__cluster_metadata-0`` on a KRaft
        log dir whose ``bootstrap.checkpoint`` makes it the metadata dir (the only record of which
        brokers, log dirs and partitions exist: without it nothing proves none is missing); a broker that
        the metadata makes the leader of some partition; every JBOD log dir the metadata registers.
        "Named": a root checkpoint line, a metadata record (``registered`` disks), ``bootstrap.checkpoint``.

    A missing piece that no remaining file names (a second broker of a disk without metadata) is counted
    as **undetectable**, not as a wrong all-clear: the remaining disk is then byte for byte a whole disk
    of a smaller cluster, and no tool can tell the two apart. A wrong all-clear with nothing on stderr
    but the engine and as-of lines is also counted **silent**.

(c) **unnamed**: an ``unverifiable`` row whose reason names no partition of the disk (``topic-N``; the
    coordinators' ``__transaction_state`` also as a whole, "partitions 43 are not among the inputs") and no
    file (a segment, snapshot or index by its 20-digit name, a checkpoint, ``meta.properties``,
    ``.kafka_cleanshutdown``, ``__cluster_metadata``, a log dir). A witness named without its file ("at or
    above the high watermark 6") does not count: the reader must be able to open what the reason rests on.

Also counted: runs that raised (a traceback, or output that is not JSON) as **errors**.

Every mutation of every generated and fixture disk is run; on the four real-broker disks, whose runs cost
8-19 times a generated disk's, the largest classes are sampled per class (``CAPS``: which, why, and what
each sample keeps), 5,214 runs in all; ``--whole`` runs every one (5,954).

A run decodes again only what its mutation changed: the partition dirs, work units, cluster image and
producer and coordinator folds of files left byte for byte as they were are made once per disk and shared
by its runs (``Memo``: pure functions of those bytes, keyed by them; the walk over the disk, the evidence
model, the verdicts and the rows run every time), a third to a sixth of a run's CPU on the real-broker
disks; ``--no-memo`` makes everything on every run, and test_evidence_sweep.py checks on a sample that
every run gives the same exit, rows and stderr both ways.

The disks are independent: with ``jobs`` > 1 (``--jobs``; the slow tier's fixture takes one per core)
each disk is swept in a process of a pool, on its own working copy, and the tallies are merged in the
catalog's order, so that counts and the examples kept are those of one process.

Command line::

    python -m tests.analysis.evidence_sweep [--disk SUBSTRING ...] [--scratch DIR] [--examples N] [--sample K]
                                            [--whole] [--jobs N] [--no-memo]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import multiprocessing
import os
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import typer.main
import typer.testing
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
import forensics.layout.discovery
import forensics.pipeline.local
import forensics.report.state
import forensics.runs.broker_version
import forensics.runs.hanging
from forensics.cli.app import app
from forensics.pipeline.cluster_metadata import metadata_copies
from tests.analysis.evidence_disks import (
    METADATA,
    ROOT_CHECKPOINTS,
    TXN_STATE,
    SweepDisk,
    Workspace,
    catalog,
    make_disk,
    partitions,
)
from tests.analysis.evidence_mutations import CLASSES, Mutation, mutations
from tests.machine_output import rows_of

runner = CliRunner()
_CLI: list = []


def _command_made_once(typer_app):
    """The app's click command, made on the first run only: ``CliRunner.invoke`` makes it again on every run
    (the group, find-hanging's command and its options from the function's signature), ~10 ms of a run on a
    generated disk (~25 ms in all). Used by :func:`analyse` alone (nothing here patches a command)."""
    if not _CLI:
        _CLI.append(typer.main.get_command(typer_app))
    return _CLI[0]
ArmedKey = tuple[str, int, str, str, str, str]
ROUTINE = ("kafka-forensics: engine", "as of ")  # the stderr lines every run prints
FILE_NAME = re.compile(r"\b\d{20}\.(log|index|timeindex|txnindex|snapshot)\b")
ROOT_FILES = ROOT_CHECKPOINTS + ("meta.properties", ".kafka_cleanshutdown", "leader-epoch-checkpoint",
                                 "bootstrap.checkpoint", "quorum-state", "__cluster_metadata", "log dir",
                                 "__transaction_state")  # the coordinators' topic, named as a whole


@dataclass(frozen=True)
class Run:
    exit_code: int
    rows: tuple[dict, ...]
    notes: tuple[str, ...]  # stderr lines besides the routine ones
    error: str | None
    cpu_s: float


def analyse(disk: SweepDisk) -> Run:
    t = time.process_time()
    with mock.patch.object(typer.testing, "_get_command", _command_made_once):
        r = runner.invoke(app, ["find-hanging", str(disk.root), "--all", "--format", "json", "--no-progress",
                                "--as-of", str(disk.as_of)])
    cpu = time.process_time() - t
    notes = tuple(ln for ln in r.stderr.splitlines() if ln.strip() and not ln.startswith(ROUTINE))
    error = None
    rows: tuple[dict, ...] = ()
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        error = f"{type(r.exception).__name__}: {r.exception}"
    else:
        try:
            rows = tuple(rows_of(r.stdout))
        except ValueError:
            error = f"not JSON (exit {r.exit_code}): {r.stdout[:200]!r} {r.stderr[-300:]!r}"
    return Run(r.exit_code, rows, notes, error, cpu)


# --------------------------------------------------------------------------- the same bytes, read once per disk


def _digest(path: str | None) -> tuple:
    """What a file holds: its bytes' BLAKE2b, or the error reading it gives (a missing file, a dir)."""
    if path is None:
        return ()
    try:
        with open(path, "rb") as f:
            return (hashlib.blake2b(f.read(), digest_size=16).digest(),)
    except OSError as exc:
        return (type(exc).__name__, exc.errno)


class Memo:
    """The results of two pure functions of file bytes, kept while one disk is swept, so that a run does not
    decode again what the mutation left byte for byte as it was (a mutation edits one piece: the other
    ~136 partition dirs of a real broker and its metadata log are what the undamaged run read):

    - a partition dir as discovery reads it (``layout.partition_dir.scan_partition_dir``: its listing and
      the files in it), keyed by its path, its entries (name, kind, size, symlink or not), the listing's
      findings, the swap-file reader and the bytes of every file in it;
    - a work unit's result (``pipeline.units.run_unit``: it reads the one file ``unit.path``, from the
      unit's byte range), keyed by the unit and that file's bytes;
    - the cluster image (``pipeline.cluster_metadata.read_cluster_image``), keyed by the metadata copies
      as discovery found them (every field of each ``__cluster_metadata-0`` :class:`PartitionDir`, in
      inventory order), the log dirs' ``bootstrap.checkpoint`` paths, the arguments, and the bytes of
      every file it can read (each copy's segments and snapshots, the bootstrap checkpoints).

    Everything else (the walk over the log dirs and their root files, the producer-state fold, the evidence model, the verdicts, the rows) runs
    on every run. Both results are immutable (named tuples and frozen dataclasses of tuples), so a run
    given one cannot change it for the next; ``test_evidence_sweep`` checks that every run of a sample
    gives the same exit, rows and stderr with and without the memo."""

    def __init__(self) -> None:
        self.dirs: dict = {}
        self.units: dict = {}
        self.images: dict = {}
        self.folds: dict = {}
        self.hits = self.misses = 0
        self._digests: dict = {}  # of this run (a file does not change during a run)

    def new_run(self) -> None:
        """Before each run: the files may have changed since the last one (a mutation, its undo)."""
        self._digests.clear()

    def digest(self, path: str | None) -> tuple:
        got = self._digests.get(path)
        if got is None:
            got = self._digests[path] = _digest(path)
        return got

    def partition_dir(self, path, entries, swap_next_offset=None, listing_findings=()):
        key = (path, tuple(entries), swap_next_offset, tuple(listing_findings),
               tuple(self.digest(e.path) if e.kind == "file" else () for e in entries))
        got = self.dirs.get(key)
        if got is None:
            self.misses += 1
            got = self.dirs[key] = _SCAN_PARTITION_DIR(path, entries, swap_next_offset, listing_findings)
        else:
            self.hits += 1
        return got

    def _folded(self, fold, *args):
        try:
            got = self.folds.get((fold, *args))
        except TypeError:  # (an input that does not hash: not kept)
            return fold(*args)
        if got is None:
            self.misses += 1
            got = self.folds[(fold, *args)] = fold(*args)
        else:
            self.hits += 1
        return got

    def rebuild_partition(self, inputs, lean=False):
        return self._folded(_REBUILD_PARTITION, inputs, lean)

    def fold_replica(self, inputs, keep_history=None):
        return self._folded(_FOLD_REPLICA, inputs, keep_history)

    def run_unit(self, unit):
        key = (unit, self.digest(unit.path))
        got = self.units.get(key)
        if got is None:
            self.misses += 1
            got = self.units[key] = _RUN_UNIT(unit)
        else:
            self.hits += 1
        return got

    def cluster_image(self, inventory, *, until_offset=None, record_types=None):
        copies = tuple(metadata_copies(inventory))
        boots = tuple(d.bootstrap_checkpoint for d in inventory.log_dirs)
        files = [s.log for p in copies for s in p.segments] + [c.path for p in copies for c in p.kraft_checkpoints]
        key = (until_offset, None if record_types is None else frozenset(record_types), copies, boots,
               tuple(self.digest(f) for f in [*files, *boots]))
        got = self.images.get(key)
        if got is None:
            self.misses += 1
            got = self.images[key] = _READ_CLUSTER_IMAGE(inventory, until_offset=until_offset,
                                                         record_types=record_types)
        else:
            self.hits += 1
        return got

    @contextlib.contextmanager
    def used(self):
        """The analysis, while in this block, takes both results from this memo."""
        with mock.patch.object(forensics.layout.discovery, "scan_partition_dir", self.partition_dir), \
                mock.patch.object(forensics.pipeline.local, "run_unit", self.run_unit), \
                mock.patch.object(forensics.report.state, "rebuild_partition", self.rebuild_partition), \
                mock.patch.object(forensics.report.state, "fold_replica", self.fold_replica), \
                mock.patch.object(forensics.runs.hanging, "read_cluster_image", self.cluster_image), \
                mock.patch.object(forensics.runs.broker_version, "read_cluster_image", self.cluster_image):
            yield self


_SCAN_PARTITION_DIR = forensics.layout.discovery.scan_partition_dir
_RUN_UNIT = forensics.pipeline.local.run_unit
_REBUILD_PARTITION = forensics.report.state.rebuild_partition
_FOLD_REPLICA = forensics.report.state.fold_replica
_READ_CLUSTER_IMAGE = forensics.runs.hanging.read_cluster_image


def _arg(args: Sequence[str], name: str) -> str:
    return args[args.index(name) + 1] if args and name in args else "-"


def armed_keys(run: Run) -> set[ArmedKey]:
    out = set()
    for row in run.rows:
        if row.get("armed"):
            legacy, start = row.get("abortArgs") or [], row.get("abortArgsStartOffset") or []
            out.add((row["topic"], row["partition"], _arg(legacy, "--producer-id"), _arg(legacy, "--producer-epoch"),
                     _arg(legacy, "--coordinator-epoch"), _arg(start, "--start-offset")))
    return out


def names_something(reason: str, known: Iterable[str]) -> bool:
    if FILE_NAME.search(reason) or any(f in reason for f in ROOT_FILES):
        return True
    return any(re.search(rf"(?<![\w.-]){re.escape(k)}(?![\w-])", reason) for k in known)


@dataclass(frozen=True)
class Baseline:
    run: Run
    armed: set[ArmedKey]
    open_parts: set[str]  # partition dir names holding an open transaction (any replica)
    id_parts: set[str]  # __transaction_state-N holding an open transaction's id
    known: tuple[str, ...]  # every partition dir name of the disk

    @property
    def open_rows(self) -> list[tuple[str, int, int | None]]:
        return [(f"{r['topic']}-{r['partition']}", r["startOffset"], r.get("coordinatorPartition"))
                for r in self.run.rows]


def baseline(disk: SweepDisk) -> Baseline:
    run = analyse(disk)
    if run.error:
        raise AssertionError(f"{disk.name}: the undamaged disk does not analyse: {run.error}")
    open_parts = {f"{r['topic']}-{r['partition']}" for r in run.rows}
    id_parts = {f"{TXN_STATE}-{r['coordinatorPartition']}" for r in run.rows if r.get("coordinatorPartition") is not None}
    known = sorted({p for d in disk.log_dirs for p in partitions(disk.root, d)} | {METADATA})
    return Baseline(run, armed_keys(run), open_parts, id_parts, tuple(known))


@dataclass(frozen=True)
class Judged:
    armed: tuple[ArmedKey, ...]
    wrong: str | None  # the rule (W1-W3) a wrong all-clear breaks
    undetectable: bool
    silent: bool
    unnamed: tuple[str, ...]  # reasons of unverifiable rows that name nothing


def judge(m: Mutation, base: Baseline, run: Run) -> Judged:
    armed = tuple(sorted(armed_keys(run) - base.armed))
    rule = None
    if run.exit_code == 0 and run.error is None:
        if base.run.exit_code != 0:
            rule = f"W1 (undamaged exit {base.run.exit_code})"
        elif m.missing and m.needed:
            rule = "W3 (a needed piece left out)"
        elif not m.missing and m.contradicts and m.touches & (base.open_parts | base.id_parts):
            rule = "W2 (contradicts an open transaction's evidence)"
    undetectable = rule is not None and m.missing and not m.named
    wrong = None if undetectable else rule
    unnamed = tuple(r["reason"] for r in run.rows if r.get("verdict") == "unverifiable"
                    and not names_something(r.get("reason") or "", base.known))
    return Judged(armed, wrong, undetectable, wrong is not None and not run.notes, unnamed)


COLUMNS = ("runs", "armed", "wrong", "silent", "undetectable", "unnamed", "errors")


@dataclass
class Tally:
    counts: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(lambda: dict.fromkeys(COLUMNS, 0)))
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    cpu_s: float = 0.0

    def add(self, keys: Sequence[str], m: Mutation, j: Judged, run: Run, disk: str, keep: int) -> None:
        self.cpu_s += run.cpu_s
        hit = {"runs": 1, "armed": bool(j.armed), "wrong": j.wrong is not None, "silent": j.silent,
               "undetectable": j.undetectable, "unnamed": bool(j.unnamed), "errors": run.error is not None}
        for k in keys:
            for c, v in hit.items():
                self.counts[k][c] += int(v)
        for kind, bad in (("armed", j.armed), ("wrong", j.wrong), ("unnamed", j.unnamed), ("errors", run.error)):
            if bad and len(self.examples[f"{m.cls}|{kind}"]) < keep:
                self.examples[f"{m.cls}|{kind}"].append(example(disk, m, j, run, kind))

    def total(self, column: str) -> int:
        return sum(v[column] for k, v in self.counts.items() if k.startswith("class "))

    def plain(self) -> tuple[dict[str, dict[str, int]], dict[str, list[str]], float]:
        """What a pool's worker hands back (the defaultdicts' factories do not pickle)."""
        return {k: dict(v) for k, v in self.counts.items()}, {k: list(v) for k, v in self.examples.items()}, self.cpu_s

    def merge(self, plain: tuple[dict[str, dict[str, int]], dict[str, list[str]], float], keep: int) -> None:
        """Adds a tally of later disks (:meth:`plain`): the same counts and examples as one process that went on."""
        counts, examples, cpu_s = plain
        for k, v in counts.items():
            for c, n in v.items():
                self.counts[k][c] += n
        for k, found in examples.items():
            self.examples[k].extend(found[:max(0, keep - len(self.examples[k]))])
        self.cpu_s += cpu_s


def example(disk: str, m: Mutation, j: Judged, run: Run, kind: str) -> str:
    head = f"[{disk}] {m.what}: exit {run.exit_code}"
    if kind == "armed":
        lines = [f"  armed {r['topic']}-{r['partition']} {r['verdict']}: {' '.join(r.get('abortArgs') or [])}\n"
                 f"    reason: {r['reason'][:400]}" for r in run.rows if r.get("armed")]
    elif kind == "wrong":
        lines = [f"  rule {j.wrong}; rows: " + ("; ".join(f"{r['topic']}-{r['partition']} {r['verdict']}"
                                                          for r in run.rows) or "none"),
                 "  stderr: " + (" | ".join(n[:300] for n in run.notes) or "(nothing)")]
    elif kind == "unnamed":
        lines = [f"  unverifiable, reason: {r[:400]}" for r in j.unnamed]
    else:
        lines = [f"  {run.error}"]
    return "\n".join([head] + lines)


def sweep_disk(disk: SweepDisk, tally: Tally, pick=None, keep: int = 3, log=None, memo: bool | Memo = True,
               runs: list | None = None) -> int:
    """Every mutation of ``disk`` (those ``pick`` keeps), judged; returns the number of runs. ``memo``: what
    the runs read of unchanged files made once for the disk (:class:`Memo`; False: everything made again on
    every run); ``runs``: each mutation's description and run appended to it."""
    held = memo if isinstance(memo, Memo) else Memo() if memo else None
    with held.used() if held else contextlib.nullcontext():
        return _sweep_disk(disk, tally, pick, keep, log, runs, held)


def _sweep_disk(disk: SweepDisk, tally: Tally, pick, keep: int, log, runs: list | None, memo: Memo | None) -> int:
    base = baseline(disk)
    ws = Workspace(disk.root)
    muts = mutations(disk, ws, base.open_rows)
    if pick is not None:
        muts = pick(muts)
    for m in muts:
        try:
            m.apply(ws)
            if memo is not None:
                memo.new_run()
            run = analyse(disk)
        finally:
            ws.undo()
        if runs is not None:
            runs.append((m.what, run))
        j = judge(m, base, run)
        tally.add((f"class {m.cls}", f"disk {disk.name}"), m, j, run, disk.name, keep)
        if log and (j.armed or j.wrong or run.error):
            log(f"{disk.name}: {m.cls}: {m.what}: armed={len(j.armed)} wrong={j.wrong} error={run.error}")
    return len(muts)


def _first(k: int, muts: list[Mutation]) -> list[Mutation]:
    seen: dict[str, int] = defaultdict(int)
    out = []
    for m in muts:
        if seen[m.cls] < k:
            seen[m.cls] += 1
            out.append(m)
    return out


def first_per_class(k: int):
    """A deterministic sample: the first ``k`` mutations of each class (a callable a pool's worker can be sent)."""
    return functools.partial(_first, k)


def _spread(k: int, muts: list[Mutation]) -> list[Mutation]:
    by_class: dict[str, list[int]] = defaultdict(list)
    for i, m in enumerate(muts):
        by_class[m.cls].append(i)
    kept: set[int] = set()
    for idx in by_class.values():
        n = len(idx)
        kept.update(idx if n <= k else (idx[round(j * (n - 1) / (k - 1))] for j in range(k)))
    return [m for i, m in enumerate(muts) if i in kept]


def spread_per_class(k: int):
    """A deterministic sample: at most ``k`` mutations of each class, evenly spaced over the class's list in
    the order ``mutations`` makes it (its first and last kept; the list goes file by file and partition by
    partition, so every checkpoint file, snapshot and log the class edits keeps some of its edits)."""
    return functools.partial(_spread, k)


# Disks whose runs cost several times the others' (~170 ms a run on one whole real broker of 137 partition
# dirs, ~380 ms on three, against ~20 ms on a generated disk), sampled per class in the full sweep too:
# - three whole brokers: the first 40 mutations of each class (its per-partition classes repeat there the
#   edits of one broker: the same log dir as ``real/kraft-tv2``);
# - ``real/kraft-tv2`` and ``real/kraft-rv3.9-tv0``: at most 120 of each class, spread over the class
#   (``spread_per_class``). Only the three largest classes are cut (5a 285-294 checkpoint edits, 4c 203-207
#   snapshot edits, 8 124-128 foreign segments, none other above 110): what they repeat is one edit over the
#   three partitions of one topic and the three producers of one snapshot, the same workload each time;
# - ``real/kraft-tv2 jbod`` (kraft-tv2's log split over log dirs): at most 40 of each class, spread, as
#   for three brokers (its per-partition classes edit the partitions of ``real/kraft-tv2`` again; classes
#   2-3 and the ones that only a JBOD disk has, 1a-1d, 5c, 7b, stay whole, each below 40).
# Every mutation of every class is still run on every generated and fixture disk; the command line's
# ``--whole`` runs every mutation of the real disks too (5,954 runs). The full slow-tier sweep
# stays above 5,000 runs (issue 22): 5,214 of the 5,954 mutations (740 of the real disks' cut, ~130
# CPU-seconds).
CAPS = {"real/kraft-tv2 x3 brokers": first_per_class(40), "real/kraft-tv2": spread_per_class(120),
        "real/kraft-rv3.9-tv0": spread_per_class(120), "real/kraft-tv2 jbod": spread_per_class(40)}


def every_mutation(muts: list[Mutation]) -> list[Mutation]:
    """No sample (``--whole``): every mutation of every class."""
    return muts


def _sweep_one(name: str, scratch: Path, pick, keep: int, log, memo: bool = True) -> Tally:
    tally = Tally()
    disk = make_disk(name, scratch)
    try:
        sweep_disk(disk, tally, pick or CAPS.get(name), keep, log, memo)
    finally:
        shutil.rmtree(disk.root.parent / f".{disk.root.name}.aside", ignore_errors=True)
    return tally


def _log_to_stderr(s: str) -> None:
    print(s, file=sys.stderr, flush=True)


def _sweep_in_worker(name: str, scratch: Path, pick, keep: int, verbose: bool, memo: bool = True):
    return _sweep_one(name, scratch, pick, keep, _log_to_stderr if verbose else None, memo).plain()


def run_sweep(names: Sequence[str], scratch: Path, pick=None, keep: int = 3, log=None, jobs: int = 1,
              memo: bool = True) -> Tally:
    """Every disk of ``names`` swept, one after the other, or with ``jobs`` > 1 over a pool of that many
    processes (each disk on its own copy under ``scratch``; in a worker ``log`` becomes stderr), merged in
    the order of ``names``: the same tally either way."""
    tally = Tally()
    jobs = max(1, min(jobs, len(names)))
    if jobs == 1:
        for name in names:
            tally.merge(_sweep_one(name, scratch, pick, keep, log, memo).plain(), keep)
        return tally
    # spawn, not fork: the caller may be a test session holding threads (a JVM's gateway, a pool of its own)
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        # submitted in catalog order (the real disks, the largest, first), collected in the same order
        futures = [pool.submit(_sweep_in_worker, name, scratch, pick, keep, log is not None, memo) for name in names]
        for f in futures:
            tally.merge(f.result(), keep)
    return tally


def table(tally: Tally) -> str:
    def rows(prefix: str, order: Sequence[str]) -> list[str]:
        out = []
        for k in order:
            v = tally.counts.get(f"{prefix} {k}")
            if v:
                out.append(f"{k:46.46s} " + " ".join(f"{v[c]:>12d}" for c in COLUMNS))
        return out

    head = f"{'':46s} " + " ".join(f"{c:>12s}" for c in COLUMNS)
    disks = sorted(k[5:] for k in tally.counts if k.startswith("disk "))
    total = f"{'total':46s} " + " ".join(f"{tally.total(c):>12d}" for c in COLUMNS)
    runs = max(tally.total("runs"), 1)
    return "\n".join(["per class", head] + rows("class", CLASSES) + [total, "", "per disk", head]
                     + rows("disk", disks) + ["", f"CPU per run: {tally.cpu_s / runs * 1000:.1f} ms (mean, "
                                                  f"analysis only, {runs} runs)"])


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.analysis.evidence_sweep", description=__doc__.split("\n")[0])
    ap.add_argument("--disk", action="append", default=[], help="only disks whose name holds this (repeatable)")
    ap.add_argument("--scratch", help="where the working copies go (default: a temporary dir)")
    ap.add_argument("--examples", type=int, default=3, help="examples kept per class and kind")
    ap.add_argument("--sample", type=int, help="only the first K mutations of each class on each disk")
    ap.add_argument("--whole", action="store_true",
                    help="every mutation of the real disks too (by default they are sampled per class: CAPS)")
    ap.add_argument("--verbose", action="store_true", help="print every failing run as it happens")
    ap.add_argument("--no-memo", action="store_true",
                    help="make everything again on every run (by default what a run reads of files the mutation "
                         "left unchanged is made once per disk: Memo)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="disks swept at once, one process each (default: one per core; 1: in this process)")
    args = ap.parse_args(argv)
    names = [n for n in catalog() if not args.disk or any(s in n for s in args.disk)]
    scratch = Path(args.scratch) if args.scratch else Path(tempfile.mkdtemp(prefix="evidence-sweep-"))
    scratch.mkdir(parents=True, exist_ok=True)
    started = time.time()
    pick = first_per_class(args.sample) if args.sample else every_mutation if args.whole else None
    tally = run_sweep(names, scratch, pick, args.examples,
                      _log_to_stderr if args.verbose else None, jobs=args.jobs, memo=not args.no_memo)
    print(table(tally))
    print(f"wall {time.time() - started:.0f} s")
    for key, found in sorted(tally.examples.items()):
        print(f"\n== {key}")
        print("\n".join(found))
    if not args.scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
