"""Worker processes for the in-process engine: the same work units as one process, on every core.

The plan is cut into *tasks* in plan order (:func:`schedule`), each a few consecutive *pieces*: a
whole replica (read and finalized in the worker, as a Spark task finalizes a small replica) or a run
of consecutive units of a large one (their parts merged in the worker, the replica finalized on the
driver once its last piece is back, with the same associative :func:`~forensics.pipeline.merge.merge`
as :mod:`forensics.pipeline.spark`). Tasks shrink towards the end of the plan (guided
self-scheduling: each about a quarter of what remains per worker), so that the workers finish
together, and are handed to whichever worker is free; their results are taken in plan order, so the
driver hands each replica to ``consume`` exactly as one process does, and holds the results (pickled)
that arrived ahead of their turn: a few tasks' per worker, and past those, while they hold less than
:data:`AHEAD_BYTES`, as many as the other workers make while one works on a slow task. A ``consume`` that may run anywhere
(:func:`~forensics.pipeline.executor.in_worker`: the state and scan folders) is applied to a whole
replica by the worker that read it, which sends back what it made (a partition's summary, not its
events): the driver only assembles, and folds only the replicas split across tasks.

Workers are forked from the driver when the job starts (a fork costs milliseconds where ``spawn``
or ``forkserver`` cost a third of a second of start-up: docs/performance.md): they share the
driver's imported modules, open the evidence themselves (read-only, as every unit does) and never
write to the terminal or the driver's streams (they leave with ``os._exit``, so nothing the driver
buffered is flushed twice). Ctrl-C reaches the driver only (the workers ignore SIGINT); the driver
then ends them. A worker that dies (killed, out of memory) ends the job with one line naming it and
what it was reading; an exception in a unit is raised again in the driver, as in one process.

Where a fork is safe (:func:`fork_safe`): on Linux only. A forked child holds a copy of every lock
as it was at the fork, and only the forking thread; the driver may have other threads by then (the
progress bar's refresh thread writing to stderr, pyarrow's allocator thread in an export), so a
child must touch nothing they may hold. Ours run only the reading code (our C accelerator, mmap,
the codecs, all imported before the fork; glibc's malloc is made consistent across fork by glibc
itself), log nothing and write nothing: their ``sys.stdout``/``sys.stderr`` are fresh ``/dev/null``
streams, so that not even a message Python prints itself can wait on a stream lock another thread
held at the fork. macOS is left out (its system libraries are not fork-safe, CPython spawns there
by default), and so is every system without ``os.fork``: there the units run in one process.
"""

from __future__ import annotations

import os
import pickle
import signal
import socket
import sys
from multiprocessing.connection import Connection, wait
from typing import Any, NamedTuple
from collections.abc import Callable, Generator, Sequence

from forensics.errors import ForensicsError
from forensics.exit_codes import EXIT_INTERNAL
from forensics.pipeline.merge import ReplicaParts, ReplicaResult, finalize, merge_all, part_of
from forensics.pipeline.plan import WorkUnit
from forensics.pipeline.units import run_unit

MIN_TASK_BYTES = 4 << 20  # the smallest task worth a round trip to a worker
MAX_TASK_BYTES = 64 << 20  # the largest: results come back in pieces, progress moves
MAX_TASK_UNITS = 128  # units per task (many tiny partitions): a task message stays small
UNIT_COST = 128 << 10  # what a unit costs beyond its bytes (opening and mapping its file: 35-39 us, as long as
# 120-136 KiB of segment take at 0.30 s/GiB; snapshots and indexes count 0 bytes): docs/performance.md, "Every core"
WINDOW = 4  # tasks per worker that may be out (sent or back before their turn) at once, at least
AHEAD_BYTES = 16 << 20  # past the window, tasks go on out while the results held ahead of their turn are
# smaller than this: one slow task (a __transaction_state replica's coordinator fold costs ~100x its bytes)
# holds up its own worker only, not the others, whose results (folded summaries) wait in the driver
_QUEUE_BYTES = 48 << 10  # a second task is queued to a busy worker only below this (the socket never blocks)


class Piece(NamedTuple):
    """Consecutive units of one replica: all of them (``whole``: finalized in the worker), or some
    (their parts merged in the worker; ``last``: the replica's last piece)."""

    key: str
    units: tuple[WorkUnit, ...]
    whole: bool
    last: bool


Task = tuple[Piece, ...]


class PoolError(ForensicsError):
    """A worker process ended before it answered (killed, out of memory): one line, exit 70."""

    exit_code = EXIT_INTERNAL


def fork_safe() -> bool:
    """Whether worker processes are forked here (see the module's docstring): Linux, with ``os.fork``."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def cost(units: Sequence[WorkUnit]) -> int:
    """What reading ``units`` costs, in bytes of segment: their bytes and :data:`UNIT_COST` each."""
    return sum(u.size for u in units) + UNIT_COST * len(units)


def _replicas(units: Sequence[WorkUnit]) -> list[tuple[str, list[WorkUnit]]]:
    groups: dict[str, list[WorkUnit]] = {}
    for u in units:
        groups.setdefault(u.key, []).append(u)
    return list(groups.items())


def schedule(units: Sequence[WorkUnit], workers: int, min_task_bytes: int | None = None) -> list[Task]:
    """The tasks of ``units`` in plan order (see the module's docstring); ``min_task_bytes``: the
    smallest task (default :data:`MIN_TASK_BYTES`)."""
    floor = MIN_TASK_BYTES if min_task_bytes is None else min_task_bytes
    remaining = cost(units)
    tasks: list[Task] = []
    current: list[Piece] = []
    load = count = 0

    def target() -> int:
        return min(MAX_TASK_BYTES, max(floor, remaining // (4 * max(1, workers))))

    def pieces(key: str, group: list[WorkUnit]) -> list[Piece]:
        runs: list[list[WorkUnit]] = [[]]
        if cost(group) > target():
            for u in group:
                run = runs[-1]
                # a unit of no bytes (a snapshot, an index) rides with the run before it: cut off alone
                # it would balance nothing, and would make a replica that fits one task a split one
                # (merged and folded in the driver) and a task of its own
                if run and ((u.size and cost(run) + cost((u,)) > target()) or len(run) >= MAX_TASK_UNITS):
                    runs.append([])
                runs[-1].append(u)
        else:
            runs[0] = group
        if len(runs) == 1:
            return [Piece(key, tuple(group), True, True)]
        return [Piece(key, tuple(run), False, i == len(runs) - 1) for i, run in enumerate(runs)]

    for key, group in _replicas(units):
        for piece in pieces(key, group):
            weight = cost(piece.units)
            if current and (load + weight > target() or count + len(piece.units) > MAX_TASK_UNITS):
                tasks.append(tuple(current))
                remaining -= load
                current, load, count = [], 0, 0
            current.append(piece)
            load += weight
            count += len(piece.units)
    if current:
        tasks.append(tuple(current))
    return tasks


# -- the worker ----------------------------------------------------------------------------------------


def run_task(task: Task, consume: Callable[[str, ReplicaResult], Any] | None = None) -> list[Any]:
    """What a worker returns for one task: per piece, the finalized replica (whole; ``consume(key, replica)``
    with ``consume`` given: folded where it was read) or its merged parts."""
    out: list[Any] = []
    for piece in task:
        merged = merge_all(part_of(run_unit(u)) for u in piece.units)
        if not piece.whole:
            out.append(merged)
            continue
        replica = finalize(merged)
        del merged
        out.append(replica if consume is None else consume(piece.key, replica))
        del replica  # (what was read is dropped before the next replica is read, as in one process)
    return out


def _rebuilt(cls: type, args: tuple, state: dict) -> BaseException:
    """An exception made again without its ``__init__`` (whose signature pickle does not know:
    ``EvidenceError(message, path)``), with its arguments and attributes (path, byte, exit code)."""
    exc = cls.__new__(cls, *args)
    exc.args = args
    exc.__dict__.update(state)
    return exc


class _AsState:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __reduce__(self):
        return _rebuilt, (type(self.exc), self.exc.args, dict(self.exc.__dict__))


def _failure(exc: BaseException) -> bytes:
    """An exception as it travels back: itself when it pickles, else rebuilt from its state (so that
    one of ours keeps its one line and exit code), else its type's name and text."""
    for form in (exc, _AsState(exc)):
        try:
            blob = pickle.dumps(form, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.loads(blob)
            return blob
        except Exception:  # noqa: BLE001 - whatever it is, the driver gets at least its name and text
            continue
    return pickle.dumps((type(exc).__name__, str(exc)), protocol=pickle.HIGHEST_PROTOCOL)


def _serve(conn: Connection, consume: Callable[[str, ReplicaResult], Any] | None) -> None:
    while True:
        try:
            message = conn.recv_bytes()
        except EOFError:  # the driver is gone
            return
        if not message:
            return  # the driver's "stop"
        index, task = pickle.loads(message)
        try:
            reply = pickle.dumps((index, True, run_task(task, consume)), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # noqa: BLE001 - the driver raises it again
            reply = pickle.dumps((index, False, _failure(exc)), protocol=pickle.HIGHEST_PROTOCOL)
        conn.send_bytes(reply)


def _worker_main(conn: Connection, inherited: Sequence[Connection], mask,
                 consume: Callable[[str, ReplicaResult], Any] | None) -> None:
    """A forked worker: Ctrl-C is the driver's, the driver's ends of the sockets are closed (so that
    each worker sees the driver go), then tasks until told to stop (whole replicas handed to
    ``consume``, when given, inherited with the fork); ``os._exit`` always."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        sys.stdout = sys.stderr = open(os.devnull, "w")  # never the driver's streams (their locks)
        for c in inherited:
            c.close()
        _serve(conn, consume)
        code = 0
    except BaseException:  # noqa: BLE001 - never unwind into the driver's code in a child
        code = 1
    finally:
        os._exit(code)


# -- the driver ----------------------------------------------------------------------------------------


class _Worker:
    __slots__ = ("pid", "conn", "out")

    def __init__(self, pid: int, conn: Connection) -> None:
        self.pid, self.conn = pid, conn
        self.out: list[int] = []  # indexes of the tasks sent and not answered, oldest first


def _start(n: int, workers: list[_Worker], consume: Callable[[str, ReplicaResult], Any] | None) -> None:
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is copied into a child
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # no Ctrl-C between fork and SIG_IGN
    try:
        for _ in range(n):
            mine, theirs = socket.socketpair()
            driver_end, worker_end = Connection(mine.detach()), Connection(theirs.detach())
            pid = os.fork()
            if pid == 0:  # pragma: no cover  (the child; coverage does not follow it)
                _worker_main(worker_end, [driver_end] + [w.conn for w in workers], mask, consume)
            worker_end.close()
            workers.append(_Worker(pid, driver_end))
    except BaseException:
        _stop(workers, kill=True)
        raise
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a Ctrl-C held back is delivered here


def _stop(workers: Sequence[_Worker], kill: bool) -> None:
    """Tell each worker to stop (or, after an error or Ctrl-C, kill it) and reap it."""
    for w in workers:
        if w.pid and kill:
            try:
                os.kill(w.pid, signal.SIGKILL)
            except OSError:
                pass
        elif w.pid:
            try:
                w.conn.send_bytes(b"")
            except OSError:
                pass
        w.conn.close()
    for w in workers:
        if w.pid:
            try:
                os.waitpid(w.pid, 0)
            except (ChildProcessError, InterruptedError):
                pass
            w.pid = 0


def _died(w: _Worker, tasks: Sequence[Task]) -> PoolError:
    pid, w.pid = w.pid, 0  # reaped here: never signalled again
    try:
        _, status = os.waitpid(pid, 0)
        how = _signal_name(os.WTERMSIG(status)) if os.WIFSIGNALED(status) else f"exit code {os.WEXITSTATUS(status)}"
    except ChildProcessError:
        how = "status unknown"
    reading = f" while reading {tasks[w.out[0]][0].units[0].path}" if w.out else ""
    return PoolError(f"worker process {pid} of the in-process engine ended ({how}){reading}; "
                     "--jobs 1 reads in this process alone")


def _signal_name(number: int) -> str:
    try:
        return f"killed by {signal.Signals(number).name}"  # SIGKILL: the OOM killer's, or kill -9
    except ValueError:
        return f"killed by signal {number}"


def _raise_failure(blob: bytes) -> None:
    value = pickle.loads(blob)
    if isinstance(value, BaseException):
        raise value
    name, text = value
    raise type(name, (Exception,), {})(text)


def start(workers: int, pool: list[_Worker], consume: Callable[[str, ReplicaResult], Any] | None = None) -> None:
    """Fork ``workers`` processes into ``pool`` (raises OSError when the system refuses: the caller runs
    in-process). Each is in ``pool`` as soon as it is forked, so that the caller's :func:`stop` ends it
    however the start ends (a Ctrl-C held back during the forks lands as they end). ``consume``: what
    the workers make of each whole replica they read (see :func:`run_task`; None: the replica itself)."""
    _start(workers, pool, consume)


def stop(pool: Sequence[_Worker]) -> None:
    """Kill and reap what is left of ``pool`` (nothing once :func:`run_tasks` ended)."""
    _stop(pool, kill=True)


def run_tasks(pool: list[_Worker], tasks: Sequence[Task], progress: Callable[[int], None] | None = None
              ) -> Generator[tuple[Task, list[Any], int], None, None]:
    """Each task with its results and the bytes they took on the way back, in the order of
    ``tasks``, computed by the workers of ``pool`` (:func:`start`; stopped however the iteration
    ends: killed when it ends early, by an error, Ctrl-C or ``close()``)."""
    done: dict[int, bytes] = {}
    sent = taken = held = 0  # held: the bytes of the results in done
    window = WINDOW * len(pool)
    clean = False

    def limit() -> int:
        return len(tasks) if held < AHEAD_BYTES else taken + window

    try:
        while taken < len(tasks):
            sent = _feed(pool, tasks, sent, limit())
            for conn in wait([w.conn for w in pool if w.out]):
                w = next(w for w in pool if w.conn is conn)
                try:
                    blob = w.conn.recv_bytes()  # (conn, typed as wait() gives it)
                except (EOFError, OSError):
                    raise _died(w, tasks) from None
                index = w.out.pop(0)
                sent = _feed(pool, tasks, sent, limit())  # the worker's next task before this result is read
                done[index] = blob
                held += len(blob)
                if progress is not None:
                    progress(sum(u.size for piece in tasks[index] for u in piece.units))
            while taken in done:
                blob = done.pop(taken)
                held -= len(blob)
                _, ok, value = pickle.loads(blob)
                if not ok:
                    _raise_failure(value)
                yield tasks[taken], value, len(blob)
                taken += 1
        clean = True
    finally:
        _stop(pool, kill=not clean)


def _feed(pool: Sequence[_Worker], tasks: Sequence[Task], sent: int, limit: int) -> int:
    """Send tasks to idle workers (and a small second one to busy ones), up to ``limit``."""
    for depth in (0, 1):
        for w in pool:
            if sent >= min(limit, len(tasks)) or len(w.out) != depth:
                continue
            message = pickle.dumps((sent, tasks[sent]), protocol=pickle.HIGHEST_PROTOCOL)
            if depth and len(message) > _QUEUE_BYTES:
                continue  # it could block while the worker writes its answer: sent when it is idle
            w.out.append(sent)
            try:
                w.conn.send_bytes(message)
            except OSError:  # never a BrokenPipeError out of here: the CLI takes those for its stdout's
                raise _died(w, tasks) from None
            sent += 1
    return sent


def merge_parts(parts: dict[str, list[ReplicaParts]], piece: Piece, value: Any):
    """The finalized replica once ``piece`` completes it (None while pieces of it are still to come)."""
    if piece.whole:
        return value
    parts.setdefault(piece.key, []).append(value)
    if not piece.last:
        return None
    return finalize(merge_all(parts.pop(piece.key)))
