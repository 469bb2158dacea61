"""The in-process engine over a pool of worker processes (``--jobs``): the same results, handed over
in the same order, as one process; failures as in one process; Ctrl-C and dead workers end the job
with no process left behind.

* :func:`schedule` covers the plan exactly once, in plan order, each replica's units contiguous;
* on every fixture disk and scenario (whole and split into byte ranges), ``consume`` sees the same
  replicas with equal results in the same order from 1 and from 2 or 3 workers;
* every command prints the same bytes with ``--jobs 1`` and ``--jobs 2`` (its engine line aside), and
  on the pure-Python path (``KAFKA_FORENSICS_PURE=1``) over two processes;
* an exception in a unit is raised in the driver as itself; a killed worker is one line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from forensics.layout import discover
from forensics.pipeline import pool as pool_mod
from forensics.pipeline.local import POOL_FROM_BYTES, LocalExecutor
from forensics.pipeline.plan import Scope, plan
from tests.engine_lines import split_engine_line

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"
CLI = [sys.executable, "-m", "forensics"]




def _children() -> set:
    """The live (not zombie) child processes of this process."""
    me = str(os.getpid())
    out = set()
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            out.add(int(pid))
    return out


def _units(root: Path, split_bytes: int = 256 << 20):
    return plan(discover([str(root)]), Scope(stats=True, split_bytes=split_bytes))


def test_schedule_covers_the_plan_once_in_order(disks) -> None:
    for name, root in disks.items():
        units = _units(root, split_bytes=4096)
        for workers, floor in ((2, 1), (3, 1), (2, None), (16, 1)):
            tasks = pool_mod.schedule(units, workers, floor)
            flat = [u for task in tasks for piece in task for u in piece.units]
            assert flat == list(units), name
            keys = [piece.key for task in tasks for piece in task]
            for key in set(keys):  # each replica's pieces contiguous, only its last one marked so
                where = [i for i, k in enumerate(keys) if k == key]
                assert where == list(range(where[0], where[-1] + 1)), (name, key)
            pieces = [piece for task in tasks for piece in task]
            for piece in pieces:
                same = [p for p in pieces if p.key == piece.key]
                assert piece.whole == (len(same) == 1)
                assert piece.last == (piece is same[-1])
            assert all(sum(len(p.units) for p in task) <= pool_mod.MAX_TASK_UNITS for task in tasks)


def test_schedule_shrinks_towards_the_end() -> None:
    from forensics.pipeline.plan import UnitKind, WorkUnit

    units = [WorkUnit(UnitKind.EVENTS, f"p{i}", f"p{i}/0.log", 0, size=1 << 20) for i in range(2000)]
    tasks = pool_mod.schedule(units, 2)
    sizes = [sum(u.size for p in t for u in p.units) for t in tasks]
    assert max(sizes) <= pool_mod.MAX_TASK_BYTES and sizes[0] >= sizes[-1]
    assert sizes[-1] <= pool_mod.MIN_TASK_BYTES and sizes == sorted(sizes, reverse=True)


def test_units_of_no_bytes_ride_with_the_run_before_them() -> None:
    """A snapshot or an index (0 bytes of segment) never starts a piece: cut off alone it balances
    nothing and makes a replica that fits one task a split one (folded in the driver)."""
    from forensics.pipeline.plan import UnitKind, WorkUnit

    units = []
    for i in range(40):
        sizes = (48 << 20, 0, 48 << 20, 0, 0) if i % 4 == 0 else ((6 << 20) + i, 0, 0)
        units += [WorkUnit(UnitKind.EVENTS if size else UnitKind.SNAPSHOT, f"p{i}", f"p{i}/{j}", 0, size=size)
                  for j, size in enumerate(sizes)]
    tasks = pool_mod.schedule(units, 2)
    pieces = [p for t in tasks for p in t]
    assert [u for p in pieces for u in p.units] == units
    assert all(p.whole or p.units[0].size for p in pieces)  # a piece of a split replica starts with bytes
    assert all(p.whole for p in pieces if int(p.key[1:]) % 4)  # the small replicas: whole
    assert any(not p.whole for p in pieces)


def _consumed(executor: LocalExecutor, units):
    seen = []
    results = executor.run(units, consume=lambda key, result: seen.append((key, result)) or key)
    return seen, results


@pytest.mark.parametrize("split_bytes", [256 << 20, 4096], ids=["whole", "split"])
def test_pool_hands_over_what_one_process_does(disks, split_bytes) -> None:
    before = _children()
    for name, root in disks.items():
        units = _units(root, split_bytes)
        one, one_results = _consumed(LocalExecutor(), units)
        for workers in (2, 3):
            executor = LocalExecutor(workers, forced=True, min_task_bytes=1)
            assert executor.processes(units) == min(workers, len(pool_mod.schedule(units, workers, 1))), name
            many, many_results = _consumed(executor, units)
            assert [k for k, _ in many] == [k for k, _ in one], name
            assert many == one, name
            assert list(many_results.items()) == list(one_results.items())
            if executor.processes(units) > 1:
                assert executor.stats.slots == executor.processes(units) and executor.stats.bytes_to_driver > 0
    assert _children() <= before  # every worker reaped


def test_a_slow_task_holds_up_its_own_worker_only(disks, monkeypatch, tmp_path) -> None:
    """The first task is slow (as a __transaction_state replica's coordinator fold is): the other
    worker goes on past the window of WINDOW tasks per worker while its results wait in the driver
    (held below AHEAD_BYTES), and they are still handed over in plan order, as one process's."""
    units = _units(disks["real-tv2"])
    tasks = pool_mod.schedule(units, 2, 1)
    assert len(tasks) > 2 * pool_mod.WINDOW + 2, "too few tasks on the disk to pass the window"
    first = {tasks[0][0].units[0].path}  # the first task's first unit
    log = tmp_path / "ran"

    def slow_first(u):
        if u.path in first:
            time.sleep(1.0)
        with open(log, "a") as f:  # each worker appends a line per unit: its pid, the time, the file
            f.write(f"{os.getpid()} {time.monotonic()} {u.path}\n")
        return real(u)

    real = pool_mod.run_unit
    one, one_results = _consumed(LocalExecutor(), units)
    monkeypatch.setattr(pool_mod, "run_unit", slow_first)  # the fork inherits it
    many, many_results = _consumed(LocalExecutor(2, forced=True, min_task_bytes=1), units)
    assert many == one and list(many_results.items()) == list(one_results.items())
    lines = [line.split(" ", 2) for line in log.read_text().splitlines()]
    slow_pid = next(pid for pid, _, path in lines if path in first)
    slow_done = max(float(t) for pid, t, path in lines if path in first)
    other = {path for pid, t, path in lines if pid != slow_pid and float(t) < slow_done}
    other_tasks = [t for t in tasks[1:] if {u.path for piece in t for u in piece.units} <= other]
    assert len(other_tasks) > 2 * pool_mod.WINDOW, (len(other_tasks), len(tasks))


def test_small_inputs_run_in_this_process(disks) -> None:
    units = _units(disks["example"])
    assert sum(u.size for u in units) < POOL_FROM_BYTES
    assert LocalExecutor(8).processes(units) == 1  # one per core by default, but not on so little
    assert LocalExecutor(1, forced=True).processes(units) == 1  # --jobs 1: today's path
    assert LocalExecutor(2, forced=True).processes(units) == 2  # --jobs 2: as asked


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_no_fork_where_it_is_unsafe(disks, monkeypatch, platform) -> None:
    """macOS (system libraries that are not fork-safe) and systems without fork: one process, even
    with --jobs given, and the results of one process."""
    units = _units(disks["example"])
    monkeypatch.setattr(pool_mod.sys, "platform", platform)
    executor = LocalExecutor(2, forced=True)
    assert executor.processes(units) == 1
    before = _children()
    assert executor.run(units) == LocalExecutor().run(units) and executor.stats.slots == 1
    assert _children() <= before


def test_a_failing_unit_raises_in_the_driver_as_itself(disks, monkeypatch) -> None:
    units = _units(disks["example"])
    target = units[len(units) // 2].path

    def failing(u):
        if u.path == target:
            raise ValueError(f"cannot read {u.path}")
        return real(u)

    real = pool_mod.run_unit
    monkeypatch.setattr(pool_mod, "run_unit", failing)  # the fork inherits it
    before = _children()
    with pytest.raises(ValueError, match="cannot read"):
        LocalExecutor(2, forced=True, min_task_bytes=1).run(units)
    assert _children() <= before


def test_an_evidence_error_keeps_its_line_and_exit_code(disks, monkeypatch) -> None:
    """An error of ours whose __init__ pickle cannot call again (``EvidenceError(message, path)``)
    still reaches the driver as itself: the one line with its path, its exit code (3), not an
    internal error."""
    from forensics.io.files import EvidenceError

    units = _units(disks["example"])

    def vanished(u):
        raise EvidenceError("no such file", u.path, "No such file or directory")

    monkeypatch.setattr(pool_mod, "run_unit", vanished)
    with pytest.raises(EvidenceError) as info:
        LocalExecutor(2, forced=True, min_task_bytes=1).run(units)
    assert str(info.value) == f"{units[0].path}: no such file" and info.value.exit_code == 3
    assert info.value.strerror == "No such file or directory"


def test_an_unpicklable_failure_keeps_its_name_and_text(disks, monkeypatch) -> None:
    class Odd(Exception):
        def __init__(self, a, b):  # pickles, but does not unpickle
            super().__init__(f"{a}/{b}")

    def failing(u):
        raise Odd("x", "y")

    monkeypatch.setattr(pool_mod, "run_unit", failing)
    with pytest.raises(Exception) as info:
        LocalExecutor(2, forced=True, min_task_bytes=1).run(_units(disks["example"]))
    assert type(info.value).__name__ == "Odd" and str(info.value) == "x/y"


def test_a_killed_worker_ends_the_job_in_one_line(disks, monkeypatch) -> None:
    units = _units(disks["example"])

    def dying(u):
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(pool_mod, "run_unit", dying)
    before = _children()
    with pytest.raises(pool_mod.PoolError) as info:
        LocalExecutor(2, forced=True, min_task_bytes=1).run(units)
    text = str(info.value)
    assert "\n" not in text and "killed by SIGKILL" in text and "while reading" in text and "fixtures" in text, text
    assert info.value.exit_code == 70
    assert _children() <= before


def test_a_ctrl_c_held_back_during_the_forks_leaves_no_worker(disks, monkeypatch) -> None:
    """Ctrl-C is blocked while the workers are forked and lands as the last fork ends: the workers
    forked by then are killed and reaped, never left waiting for a driver that is gone."""
    units = _units(disks["example"])
    real_fork, forks = os.fork, []

    def fork():
        pid = real_fork()
        if pid:
            forks.append(pid)
            if len(forks) == 2:
                signal.raise_signal(signal.SIGINT)  # blocked: delivered when the forks are done
        return pid

    monkeypatch.setattr(pool_mod.os, "fork", fork)
    # Python's own Ctrl-C, whatever this process began with: a suite started in the background by a
    # non-interactive shell (`cmd &`) inherits SIGINT ignored, and no KeyboardInterrupt came
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    before = _children()
    try:
        LocalExecutor(2, forced=True, min_task_bytes=1).run(units)
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(forks) == 2, f"{len(forks)} workers forked"
    assert interrupted, "the Ctrl-C held back during the forks never landed"
    assert _children() <= before
    assert all(not os.path.exists(f"/proc/{pid}") or _zombie(pid) for pid in forks)


_SLOW_RUN = textwrap.dedent("""
    import sys, time
    from forensics.cli.app import main
    from forensics.pipeline import pool

    real = pool.run_unit
    def slow(u):
        time.sleep(0.2)  # long enough for the Ctrl-C to land while the workers read
        return real(u)
    pool.run_unit = slow
    sys.argv = ["kafka-forensics", *sys.argv[1:]]
    main()
""")


def test_ctrl_c_reaches_the_driver_only_and_ends_every_worker(disks) -> None:
    """A terminal's Ctrl-C goes to the whole process group: the workers ignore it, the driver says
    "interrupted" (exit 130) and no worker outlives it."""
    p = subprocess.Popen([sys.executable, "-c", _SLOW_RUN, "scan", str(disks["example"]), "--jobs", "2",
                          "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, cwd=REPO)
    deadline = time.monotonic() + 30
    workers: set = set()
    while time.monotonic() < deadline and len(workers) < 2:
        workers = {int(c) for c in _child_pids(p.pid)}
        time.sleep(0.02)
    assert len(workers) == 2, "the workers did not start"
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, (p.returncode, err)
    assert "Traceback" not in err and "interrupted" in err, err
    for pid in workers:
        assert not os.path.exists(f"/proc/{pid}") or _zombie(pid), pid


_DYING_RUN = textwrap.dedent("""
    import os, signal, sys
    from forensics.cli.app import main
    from forensics.pipeline import pool

    real = pool.run_unit
    def unit(u):
        print("from a worker", file=sys.stderr)  # never reaches the driver's streams
        print("from a worker")
        if os.environ.get("DIE") and u.path.endswith(".log"):
            os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer ends a process
        return real(u)
    pool.run_unit = unit
    sys.argv = ["kafka-forensics", *sys.argv[1:]]
    main()
""")


def test_a_killed_worker_is_one_line_and_exit_70_from_the_cli(disks) -> None:
    args = [sys.executable, "-c", _DYING_RUN, "find-hanging", str(disks["example"]), "--jobs", "2", "--no-progress"]
    done = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=60, env=dict(os.environ, DIE="1"))
    line, rest = split_engine_line(done.stderr)
    assert line.startswith("kafka-forensics: engine local (2 processes): ")
    assert done.returncode == 70 and done.stdout == "", (done.returncode, done.stderr)
    assert rest.count("\n") == 1 and rest.startswith("kafka-forensics: worker process "), rest
    assert "killed by SIGKILL" in rest and "--jobs 1" in rest and "from a worker" not in rest, rest
    # what a worker prints goes nowhere: the output is the one process's
    alive = subprocess.run(args[:-3] + ["--jobs", "2", "--no-progress"], capture_output=True, text=True, cwd=REPO,
                           timeout=60)
    one = subprocess.run([*CLI, *args[3:-3], "--jobs", "1", "--no-progress"], capture_output=True, text=True,
                         cwd=REPO, timeout=60)
    assert (alive.returncode, alive.stdout, split_engine_line(alive.stderr)[1]) == \
        (one.returncode, one.stdout, split_engine_line(one.stderr)[1])


def _child_pids(pid: int):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return f.read().split()
    except OSError:
        return []


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


COMMANDS = [
    ["scan", "--format", "json"],
    ["find-hanging", "--all", "--format", "json"],
    ["list", "--format", "json"],
    ["describe-producers", "--topic", "TOPIC", "--partition", "PARTITION", "--format", "json"],
    ["abort-commands", "--bootstrap-server", "b:9092"],
]


# Fifteen CLI processes per disk: the fast tier runs them on one hanging scenario (every command has rows
# to print, abort-commands its lines); the order the pool hands results over in is checked on every disk,
# in-process, by test_pool_hands_over_what_one_process_does. The other disks: slow tier.
@pytest.mark.parametrize("disk", [pytest.param("example", marks=pytest.mark.slow),
                                  pytest.param("real-tv2", marks=pytest.mark.slow),
                                  "h-kafka-9144",
                                  pytest.param("h-ongoing", marks=pytest.mark.slow)])
def test_every_command_prints_the_same_bytes_on_two_processes(disks, disk) -> None:
    topic, partition = next(p.topic_partition for _, p in discover([str(disks[disk])]).all_partitions()
                            if p.topic_partition is not None and not p.topic.startswith("__"))
    pooled = []
    for command in COMMANDS:
        command = [{"TOPIC": topic, "PARTITION": str(partition)}.get(word, word) for word in command]
        runs = []
        for jobs, pure in (("1", ""), ("2", ""), ("2", "1")):  # the last: pure Python (no C accelerator)
            env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_PURE"}
            done = subprocess.run([*CLI, command[0], str(disks[disk]), *command[1:], "--jobs", jobs, "--no-progress"],
                                  capture_output=True, cwd=REPO, text=True, timeout=120,
                                  env=dict(env, KAFKA_FORENSICS_PURE=pure) if pure else env)
            line, rest = split_engine_line(done.stderr)
            runs.append((done.returncode, done.stdout, rest, line))
        (rc1, out1, err1, line1), (rc2, out2, err2, line2), pure_run = runs
        assert (rc2, out2, err2) == (rc1, out1, err1), (disk, command)
        assert pure_run[:3] == (rc1, out1, err1), (disk, command, "pure Python")
        assert line1 == "kafka-forensics: engine local (in-process): KAFKA_FORENSICS_ENGINE=local"
        assert line2 in (line1, "kafka-forensics: engine local (2 processes): KAFKA_FORENSICS_ENGINE=local"), line2
        pooled.append(line2 != line1)
    assert pooled[0], "scan reads every file: its units make more than one task"
