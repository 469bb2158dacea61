"""Is the evidence one quiescent moment, and if not, when was each partition copied at the earliest?

A verdict that a marker will never come rests on the *absence* of a record: of a marker in a data
partition, or of a transaction in the coordinator's ``__transaction_state`` partition. On a copy of a
running broker each partition dir is copied at its own moment, while the broker writes: a data
partition copied a few ms before the COMMIT markers landed, beside a ``__transaction_state`` copied a
few ms after the coordinator's CompleteCommit, looks exactly like a hanging transaction.

**Quiescent** (proven per log dir): the broker stopped cleanly and the files say so and agree:

* ``.kafka_cleanshutdown`` exists (``LogManager`` writes it at a clean stop, after every log is
  flushed and closed, and deletes it when it starts: a running or crashed broker has none);
* it is of the broker's newest run: its ``brokerEpoch`` (3.7+) is the epoch of the broker's newest
  registration in ``__cluster_metadata`` (a broker registers anew each time it starts, after deleting the
  file: an older epoch is an earlier stop's file, a newer one a metadata copy older than the stop);
* no process holds the log dir's ``.lock`` (a running broker does: ``LogManager.lockLogDirs``);
* no file changed while this run read it.

On a quiescent log dir nothing was written after the copy's moment: a partition there is final when its
log ends where the ``recovery-point-offset-checkpoint`` says (a clean stop checkpoints each log's end as its
recovery point, ``LogManager.shutdown``); one that ends elsewhere is a gap in the evidence
(:mod:`forensics.analysis.evidence_gaps`), judged as such.

**Not quiescent**: a partition's copy was taken no earlier than the newest record it holds, nor than
its files' modification times where those are real (a ``cp -r`` sets them to the copy time, ``cp -a``
keeps the broker's last write: both no later than the copy; ignored when the incident clock found them
to be copy times of a later copy, more than 1 h after every record), nor than ``--copy-start``. A
verdict resting on the absence of a record in partition X, given a record at time t elsewhere, needs
X copied at least a *settling window* after t (``--max-transaction-timeout``, 15 min by default, as
Kafka's own find-hanging only judges transactions older than that): markers follow the coordinator's
decision within that time, and the coordinator records a transaction before its data is written.
Younger than that, the verdict is "too recent to judge from this copy" (see docs/stuck-lso.md).
"""

from __future__ import annotations

from dataclasses import field
from forensics.dataclass_fast import dataclass
from enum import Enum
from typing import NamedTuple
from collections.abc import Iterable, Mapping, Sequence


class UnsettledKind(str, Enum):
    """Why the evidence is not proven to be one quiescent moment."""

    NO_CLEAN_SHUTDOWN = "no_clean_shutdown"
    LOCK_HELD = "lock_held"
    STALE_CLEAN_SHUTDOWN = "stale_clean_shutdown"
    CHANGED_WHILE_READ = "changed_while_read"
    NO_LOG_DIR = "no_log_dir"


class LogDirFacts(NamedTuple):
    """What a log dir's own files say about how it was left."""

    path: str
    broker_id: int | None
    clean_shutdown: bool
    lock_pid: int | None  # a process holding .lock; 0 none; None: no .lock or cannot tell
    shutdown_epoch: int | None = None  # the brokerEpoch .kafka_cleanshutdown records (None: none recorded)
    registered_epoch: int | None = None  # the epoch of the broker's newest registration (None: no metadata)


class ChangedFile(NamedTuple):
    """A file whose size changed (or that vanished) between the listing and the end of the run."""

    path: str
    size_before: int | None
    size_after: int | None  # None: gone


@dataclass(frozen=True, slots=True)
class Unsettled:
    """One reason why the evidence is not proven to be one quiescent moment, with the values its kind names
    (its words: :func:`forensics.render.quiescence_text.unsettled_text`)."""

    kind: UnsettledKind
    path: str  # the log dir (or partition dir) it is about
    lock_pid: int = 0  # LOCK_HELD: the process holding .lock
    broker_id: int | None = None  # STALE_CLEAN_SHUTDOWN: the log dir's broker,
    shutdown_epoch: int = -1  # the broker epoch its .kafka_cleanshutdown records
    registered_epoch: int = -1  # and that of the broker's newest registration in __cluster_metadata
    changed: tuple[ChangedFile, ...] = ()  # CHANGED_WHILE_READ: the files, in the order read
    others: tuple[str, ...] = ()  # NO_LOG_DIR: the other partition dirs given without their log dirs


@dataclass(frozen=True)
class Quiescence:
    """What the disks prove about when they were copied."""

    unsettled: tuple[Unsettled, ...]
    quiet_dirs: frozenset[str]  # log dirs proven quiescent
    copied_by: Mapping[str, int] = field(default_factory=dict)  # partition dir -> earliest copy time (ms)
    window_ms: int = 15 * 60_000
    dir_of: Mapping[str, str] = field(default_factory=dict)  # partition dir -> its log dir

    @property
    def proven(self) -> bool:
        return not self.unsettled

    def final(self, partition_dir: str) -> bool:
        """Nothing was written to this partition after its copy (its log dir is quiescent)."""
        return self.dir_of.get(partition_dir) in self.quiet_dirs

    def copy_time(self, partition_dir: str) -> int | None:
        """The earliest moment this partition's copy can have been taken (None: nothing tells)."""
        return self.copied_by.get(partition_dir)

    def settled_after(self, partition_dir: str, event_ms: int | None) -> bool:
        """Was this partition copied at least the settling window after ``event_ms`` (or is it final)?"""
        if self.final(partition_dir):
            return True
        copied = self.copy_time(partition_dir)
        return event_ms is not None and event_ms >= 0 and copied is not None and copied - event_ms >= self.window_ms


def _dir_problems(d: LogDirFacts) -> Iterable[Unsettled]:
    if d.lock_pid:
        yield Unsettled(UnsettledKind.LOCK_HELD, d.path, lock_pid=d.lock_pid)
    if not d.clean_shutdown:
        yield Unsettled(UnsettledKind.NO_CLEAN_SHUTDOWN, d.path)
    elif d.shutdown_epoch is not None and d.registered_epoch is not None and d.shutdown_epoch != d.registered_epoch:
        yield Unsettled(UnsettledKind.STALE_CLEAN_SHUTDOWN, d.path, broker_id=d.broker_id,
                        shutdown_epoch=d.shutdown_epoch, registered_epoch=d.registered_epoch)


def assess(log_dirs: Sequence[LogDirFacts], loose_partitions: Sequence[str], changed: Sequence[ChangedFile],
           copied_by: Mapping[str, int], dir_of: Mapping[str, str], window_ms: int) -> Quiescence:
    """The quiescence of the evidence: ``log_dirs`` (their facts), ``loose_partitions`` (partition dirs given
    outside any log dir: nothing tells how they were left), ``changed`` (files that changed while read),
    ``copied_by`` (each partition dir's earliest copy time), ``dir_of`` (partition dir -> log dir)."""
    unsettled = []
    quiet = set()
    moved: dict[str, list[ChangedFile]] = {}
    for c in changed:
        moved.setdefault(dir_of.get(_parent(c.path), ""), []).append(c)
    for d in log_dirs:
        problems = list(_dir_problems(d))
        if d.path in moved:
            problems.append(Unsettled(UnsettledKind.CHANGED_WHILE_READ, d.path, changed=tuple(moved[d.path])))
        unsettled.extend(problems)
        if not problems:
            quiet.add(d.path)
    if loose_partitions:
        unsettled.append(Unsettled(UnsettledKind.NO_LOG_DIR, loose_partitions[0], others=tuple(loose_partitions[1:])))
    return Quiescence(tuple(unsettled), frozenset(quiet), dict(copied_by), window_ms, dict(dir_of))


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else path


def earliest_copy(record_ms: int | None, file_ms: Iterable[int], as_of_ms: int | None,
                  trust_file_times: bool, copy_start_ms: int | None = None) -> int | None:
    """The earliest moment a partition's copy can have been taken: the newest record it holds, its
    files' modification times where they are real (``trust_file_times``; never past the as-of time),
    and the copy's start when the investigator gives it."""
    candidates = [t for t in (record_ms, copy_start_ms) if t is not None and t >= 0]
    if trust_file_times:
        candidates += [min(t, as_of_ms) if as_of_ms is not None else t for t in file_ms]
    return max(candidates) if candidates else None
