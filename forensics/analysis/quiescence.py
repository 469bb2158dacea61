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
from typing import NamedTuple
from collections.abc import Iterable, Mapping, Sequence

from forensics.model import first_few


NO_CLEAN_SHUTDOWN = "no_clean_shutdown"
LOCK_HELD = "lock_held"
STALE_CLEAN_SHUTDOWN = "stale_clean_shutdown"
CHANGED_WHILE_READ = "changed_while_read"
NO_LOG_DIR = "no_log_dir"
_SHOWN = 3  # partitions or files named per reason


class Unsettled(NamedTuple):
    """One reason why the evidence is not proven to be one quiescent moment."""

    kind: str  # one of the constants above
    path: str  # the log dir (or partition dir, file) it is about
    text: str  # "has no .kafka_cleanshutdown", "is locked by a running process (pid 4242)"


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


def _names(items: Sequence[str]) -> str:
    return first_few(items, _SHOWN)


def _dir_problems(d: LogDirFacts) -> Iterable[Unsettled]:
    if d.lock_pid:
        yield Unsettled(LOCK_HELD, d.path, f"is in use: its .lock is held by a running process (pid {d.lock_pid}), "
                        "a live broker's log dir")
    if not d.clean_shutdown:
        yield Unsettled(NO_CLEAN_SHUTDOWN, d.path, "has no .kafka_cleanshutdown: the broker was running, or did "
                        "not stop cleanly, when it was copied")
    elif d.shutdown_epoch is not None and d.registered_epoch is not None and d.shutdown_epoch != d.registered_epoch:
        why = ("the broker registered again after that stop (it deletes the file when it starts): the file is an "
               "earlier stop's, mixed into this copy" if d.registered_epoch > d.shutdown_epoch else
               "the metadata copy is older than that stop: files of different moments")
        yield Unsettled(STALE_CLEAN_SHUTDOWN, d.path, f"has a .kafka_cleanshutdown of broker epoch {d.shutdown_epoch}, "
                        f"but the newest registration of broker {d.broker_id} in __cluster_metadata has epoch "
                        f"{d.registered_epoch}: {why}")


def assess(log_dirs: Sequence[LogDirFacts], loose_partitions: Sequence[str], changed: Sequence[ChangedFile],
           copied_by: Mapping[str, int], dir_of: Mapping[str, str], window_ms: int) -> Quiescence:
    """The quiescence of the evidence: ``log_dirs`` (their facts), ``loose_partitions`` (partition dirs given
    outside any log dir: nothing tells how they were left), ``changed`` (files that changed while read),
    ``copied_by`` (each partition dir's earliest copy time), ``dir_of`` (partition dir -> log dir)."""
    unsettled = []
    quiet = set()
    moved: dict[str, list] = {}
    for c in changed:
        moved.setdefault(dir_of.get(_parent(c.path), ""), []).append(c)
    for d in log_dirs:
        problems = list(_dir_problems(d))
        if d.path in moved:
            files = [f"{c.path.rsplit('/', 1)[-1]} " + ("vanished" if c.size_after is None else
                                                        f"{c.size_before} -> {c.size_after} bytes")
                     for c in moved[d.path]]
            problems.append(Unsettled(CHANGED_WHILE_READ, d.path, f"changed while it was read ({_names(files)})"))
        unsettled.extend(problems)
        if not problems:
            quiet.add(d.path)
    if loose_partitions:
        others = list(loose_partitions[1:])
        names = _names(others) if len(others) > _SHOWN else " and ".join([", ".join(others[:-1]), others[-1]] if
                                                                         len(others) > 1 else others)
        also = f", as are {names}: nothing tells whether their brokers" if others else \
            ": nothing tells whether its broker"
        unsettled.append(Unsettled(NO_LOG_DIR, loose_partitions[0], f"given without its log dir{also} had stopped"))
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


def describe(q: Quiescence, brokers: Mapping[str, int | None]) -> str | None:
    """One line for every output: why the evidence is not one quiescent moment and what that does to the
    verdicts (None when it is)."""
    if q.proven:
        return None
    parts = []
    for u in q.unsettled:
        broker = brokers.get(u.path)
        who = f"broker {broker}'s log dir {u.path}" if broker is not None else u.path
        parts.append(f"{who} {u.text}")
    return ("evidence: not one quiescent moment: " + first_few(parts, _SHOWN, "; ") + ": a copy of a running broker (or "
            f"of one that crashed) holds each partition as of its own copy, so a transaction, Prepare state or "
            f"completion less than {q.window_ms // 60_000} min older than its partition's copy is too recent to "
            "judge (unverifiable, never armed)")
