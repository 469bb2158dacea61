"""Engine benchmark: ``--engine local`` against ``--engine spark --master local[N]``, N = 1..cores,
and (``--standalone``) against a Spark standalone cluster on 127.0.0.1.

    .venv/bin/python bench/engines.py --disk /work/bench-data/disk-2g --command find-hanging --repeat 3
    .venv/bin/python bench/engines.py --disk /work/bench-data/disk-2g --cores 1,2 --standalone
    .venv/bin/python bench/engines.py --disk /work/bench-data/disk-2g --growth
    .venv/bin/python bench/engines.py --disk /work/bench-data/disk-2g --jobs 1,2 --cores none

``--jobs 1,2`` runs the in-process engine once per value of ``--jobs`` (the first the reference of
the byte comparison and of the ratios) instead of once with the CLI's default; ``--cores none``
runs no Spark configuration.

Generates the disk with ``bench/synth_disk.py`` when ``--disk`` does not exist (``--size-gb``,
``--brokers``, ``--partitions-per-broker``), reads it once so that every run sees a warm page
cache, then runs ``kafka-forensics <command> DISK --format json --no-progress`` as a subprocess per
configuration, configurations alternating within each round (one untimed warm-up round first).
``--command export`` runs ``kafka-forensics export DISK --out WORK/export-<configuration> --overwrite
--no-progress`` instead (stdout, the rows per table, compared with the directory's name left out).

``--standalone`` starts a master and ``--standalone-workers`` workers (1 core, 2g each) from the
PySpark wheel in a private scratch dir before the rounds (its start-up is not timed: a cluster is
already up when a user points ``--master`` at it), adds the configuration ``standalone NxC`` (``--engine
spark --master spark://127.0.0.1:PORT``), and stops every daemon, executor and Python worker of the
cluster when the benchmark ends, also on an error or SIGTERM.

Per run: wall time; CPU time (user + system) of every process of the run: the command and whatever
it started (each run is a session of its own, and each daemon of the standalone cluster leads its
own: the executors and their Python workers are counted through it, the daemons themselves not),
the larger of the reaped total (``wait4``) and the sum of each process's last polled utime + stime;
the 1-minute load average as the run started; the driver's peak memory (``VmHWM`` of the ``kafka-forensics`` process, polled
from ``/proc``), the largest ``VmHWM`` of a ``java`` descendant (the Spark JVM) and of another
python descendant (PySpark workers, or the in-process engine's forked workers); the tool's own figures from the stats file it writes when
``KAFKA_FORENSICS_STATS`` is set (units, tasks, bytes returned to the driver, Spark start-up and run
seconds, input bytes; "n/a" where the tool writes none); and whether stdout is byte-identical to
the local engine's. Printed: a table of medians, then local/spark wall-time ratios end to end and
without Spark's start-up. ``--growth`` instead compares the driver's peak memory on a disk of half
the size (generated next to ``--disk`` as ``<disk>-half``) and on the full one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
import contextlib
import shutil
import signal
from collections.abc import Iterator, Sequence

from synth_disk import generate  # noqa: E402  (synth_disk puts the repository root on sys.path)

from tests.spark.cluster import HOST, ClusterError, StandaloneCluster, java_problem  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CLI = REPO / ".venv" / "bin" / "kafka-forensics"
OK_EXIT = {"find-hanging": {0, 1}}  # 1 = something hangs
POLL_S, TREE_EVERY = 0.02, 10  # /proc/<driver>/status every 20 ms, the process tree every 10th poll
TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Config:
    label: str
    flags: tuple  # extra CLI flags (empty: an old CLI without --engine)
    env: tuple[tuple[str, str], ...] = ()  # extra environment of the run


@dataclass
class Run:
    config: Config
    wall: float
    cpu: float
    load: float
    rc: int
    driver_kb: int
    jvm_kb: int
    worker_kb: int
    stats: dict | None
    identical: bool | None
    stderr_tail: str = ""


@dataclass
class Peaks:
    driver: int = 0
    jvm: int = 0
    worker: int = 0
    seen: dict[int, str] = field(default_factory=dict)  # pid -> comm of every process of the run
    ticks: dict[int, int] = field(default_factory=dict)  # pid -> last polled utime + stime
    elsewhere: set = field(default_factory=set)  # pids outside the command's own session (the cluster's)

    def cpu(self, pids: set | None = None) -> float:
        return sum(t for p, t in self.ticks.items() if pids is None or p in pids) / TICK


# ---------------------------------------------------------------------------------------------
# /proc readers


def vm_hwm_kb(pid: int) -> int:
    """Peak resident set size of ``pid`` in kB (0 once it is gone or a zombie)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def process_table() -> dict[int, tuple]:
    """pid -> (ppid, comm, session, utime + stime ticks, zombie) of every process."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                raw = f.read()
        except OSError:
            continue
        head, _, tail = raw.rpartition(b")")
        comm = head.partition(b"(")[2].decode(errors="replace")
        f = tail.split()
        table[int(entry)] = (int(f[1]), comm, int(f[3]), int(f[11]) + int(f[12]), f[0] == b"Z")
    return table


def sample_sessions(peaks: Peaks, leader: int, daemons: set, ignore: set) -> set:
    """Every process of the run: in the session the command leads, or in one of the cluster's
    daemons' (whose processes from before the run, the daemons first, are in ``ignore``): its name
    and its CPU ticks so far. Returns the pids of those still running (not zombies: spark-class
    leaves one to its JVM, which never reaps it)."""
    found = set()
    for pid, (_, comm, sid, ticks, zombie) in process_table().items():
        if (sid == leader or sid in daemons) and pid not in ignore:
            if not zombie:
                found.add(pid)
            peaks.seen[pid] = comm
            peaks.ticks[pid] = max(peaks.ticks.get(pid, 0), ticks)
            if sid != leader:
                peaks.elsewhere.add(pid)
    return found


def sample(pid: int, peaks: Peaks, scan_tree: bool, daemons: set, ignore: set) -> None:
    peaks.driver = max(peaks.driver, vm_hwm_kb(pid))
    if scan_tree:
        sample_sessions(peaks, pid, daemons, ignore)
    for child, comm in peaks.seen.items():
        if child == pid:
            continue
        if comm == "java":
            peaks.jvm = max(peaks.jvm, vm_hwm_kb(child))
        elif comm.startswith("python") or comm == peaks.seen.get(pid):  # PySpark's workers; the pool's (forked)
            peaks.worker = max(peaks.worker, vm_hwm_kb(child))


# ---------------------------------------------------------------------------------------------
# one run


def run_once(cmd: Sequence[str], env: dict, out: Path, err: Path, daemons: set = frozenset()) -> tuple:
    """Run ``cmd`` in a session of its own; (wall seconds, CPU seconds, exit code, peaks). The child
    is reaped with ``wait4`` here; then, with ``daemons`` (a standalone cluster's), the processes the
    run left in their sessions (executors end a little after the application) are waited for."""
    daemons = set(daemons)
    ignore = daemons | {p for p, row in process_table().items() if row[2] in daemons}
    with open(out, "wb") as fo, open(err, "wb") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, env=env, start_new_session=True)
        peaks, n = Peaks(), 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            sample(proc.pid, peaks, n % TREE_EVERY == 0, daemons, ignore)
            n += 1
            time.sleep(POLL_S)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    settle(peaks, proc.pid, daemons, ignore)
    own = set(peaks.ticks) - peaks.elsewhere
    reaped = usage.ru_utime + usage.ru_stime
    cpu = max(reaped, peaks.cpu(own)) + peaks.cpu(peaks.elsewhere)
    return wall, cpu, proc.returncode, peaks


def settle(peaks: Peaks, leader: int, daemons: set, ignore: set, timeout: float = 30.0) -> None:
    """Poll until nothing the run started is left in its session or the daemons' (at most ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = sample_sessions(peaks, leader, daemons, ignore)
        if not left:
            return
        time.sleep(0.2)
    table = process_table()
    names = ", ".join(f"{p} {table[p][1]} (parent {table[p][0]})" for p in sorted(left) if p in table)
    print(f"  ! processes of the run still alive after {timeout:.0f} s: {names}", file=sys.stderr)


def read_stats(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def measure(cli: Sequence[str], command: str, disk: Path, config: Config, work: Path, i: int,
            reference: bytes | None, daemons: set = frozenset()) -> tuple:
    """One run of ``config``; returns (Run, stdout bytes)."""
    stem = f"{disk.name}-run-{i}"
    out, err, stats = work / f"{stem}.out", work / f"{stem}.err", work / f"{stem}.stats.json"
    env = dict(os.environ, KAFKA_FORENSICS_STATS=str(stats), **dict(config.env))
    if command == "export":  # the tables go to a directory of the configuration's own, replaced each round
        tables = work / ("export-" + "".join(ch if ch.isalnum() else "-" for ch in config.label))
        cmd = [*cli, command, str(disk), "--out", str(tables), "--overwrite", "--no-progress", *config.flags]
    else:
        cmd = [*cli, command, str(disk), "--format", "json", "--no-progress", *config.flags]
    load = os.getloadavg()[0]
    wall, cpu, rc, peaks = run_once(cmd, env, out, err, daemons)
    data = out.read_bytes()
    if command == "export":  # stdout: rows per table and the directory, the same once the directory is named alike
        data = data.replace(str(tables).encode(), b"OUT")
    tail = "" if rc in OK_EXIT.get(command, {0}) else err.read_text(errors="replace")[-2000:]
    same = None if reference is None else data == reference
    if same is False:
        print(f"  ! {config.label}: stdout differs from the local engine's, kept as {out}", file=sys.stderr)
    else:
        out.unlink()
    return Run(config, wall, cpu, load, rc, peaks.driver, peaks.jvm, peaks.worker, read_stats(stats), same,
               tail), data


# ---------------------------------------------------------------------------------------------
# configurations and rounds


def cli_has_engine(cli: Sequence[str], command: str) -> bool:
    env = dict(os.environ, COLUMNS="300", TERM="dumb", NO_COLOR="1")
    res = subprocess.run([*cli, command, "--help"], capture_output=True, text=True, env=env)
    return "--engine" in res.stdout


def configs(has_engine: bool, cores: Sequence[int], conf: Sequence[str],
            cluster: StandaloneCluster | None = None, jobs: Sequence[int] = ()) -> list[Config]:
    if not has_engine:
        return [Config("local (no --engine flag)", ())]
    extra = tuple(x for kv in conf for x in ("--conf", kv))
    local = [Config(f"local --jobs {n}", ("--engine", "local", "--jobs", str(n))) for n in jobs] or \
        [Config("local", ("--engine", "local"))]
    out = local + [
        Config(f"spark local[{n}]", ("--engine", "spark", "--master", f"local[{n}]", *extra)) for n in cores]
    if cluster is not None:  # the driver must bind where the executors can reach it
        out.append(Config(f"spark standalone {cluster.workers}x{cluster.cores}",
                          ("--engine", "spark", "--master", cluster.master_url, *extra),
                          (("SPARK_LOCAL_IP", HOST), ("SPARK_LOCAL_HOSTNAME", HOST))))
    return out


def _exit_on_signal(signum: int, _frame) -> None:
    raise SystemExit(128 + signum)  # unwinds through standalone()'s finally: the cluster is stopped


@contextlib.contextmanager
def standalone(a: argparse.Namespace) -> Iterator[StandaloneCluster | None]:
    """With ``--standalone``: a master and ``--standalone-workers`` workers of one core on 127.0.0.1,
    in a scratch dir of their own under ``--scratch``; stopped (and the dir removed) however the
    benchmark ends. Without: None."""
    if not a.standalone:
        yield None
        return
    problem = java_problem()
    if problem:
        raise SystemExit(f"--standalone: {problem}")
    scratch = Path(tempfile.mkdtemp(prefix="kf-bench-cluster-", dir=a.scratch))
    cluster = StandaloneCluster(scratch, cores=1, memory=a.standalone_memory, workers=a.standalone_workers)
    previous = {sig: signal.signal(sig, _exit_on_signal) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        t0 = time.perf_counter()
        try:
            cluster.start()
        except ClusterError as exc:
            raise SystemExit(f"--standalone: the cluster did not start: {exc}") from None
        print(f"standalone cluster {cluster.master_url}: {cluster.workers} workers x {cluster.cores} core, "
              f"{cluster.memory} each, up in {time.perf_counter() - t0:.1f} s (not timed)", file=sys.stderr)
        yield cluster
    finally:
        cluster.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        shutil.rmtree(scratch, ignore_errors=True)


def rounds(cli: Sequence[str], command: str, disk: Path, cfgs: Sequence[Config], repeat: int, warmup: int,
           work: Path, daemons: set = frozenset()) -> list[Run]:
    """``warmup`` untimed rounds then ``repeat`` timed ones, configurations alternating; the first
    configuration's stdout (the local engine's) is the reference of the byte comparison."""
    runs: list[Run] = []
    reference: bytes | None = None
    i = 0
    for r in range(warmup + repeat):
        for c in cfgs:
            i += 1
            run, data = measure(cli, command, disk, c, work, i, reference, daemons)
            if reference is None and c == cfgs[0] and run.rc in OK_EXIT.get(command, {0}):
                reference = data
                run.identical = True
                (work / f"{disk.name}-local-reference.out").write_bytes(data)
            tag = "warm-up" if r < warmup else f"round {r - warmup + 1}/{repeat}"
            print(f"  {tag:>12} {c.label:<26} {run.wall:8.2f} s wall {run.cpu:8.2f} s CPU  load {run.load:5.2f}"
                  f"  rc={run.rc}", file=sys.stderr, flush=True)
            if run.stderr_tail:
                print(run.stderr_tail, file=sys.stderr)
            if r >= warmup:
                runs.append(run)
    return runs


# ---------------------------------------------------------------------------------------------
# report


def disk_bytes(disk: Path) -> int:
    return sum(p.stat().st_size for p in disk.rglob("*") if p.is_file())


def warm_cache(disk: Path) -> None:
    for p in disk.rglob("*"):
        if p.is_file():
            with open(p, "rb") as f:
                while f.read(1 << 22):
                    pass


def stat_of(runs: Sequence[Run], key: str) -> float | None:
    values = [r.stats[key] for r in runs if r.stats and isinstance(r.stats.get(key), (int, float))]
    return statistics.median(values) if values else None


def fmt(value: float | None, spec: str = ".2f") -> str:
    return "n/a" if value is None else format(value, spec)


def mib(kb: int) -> str:
    return f"{kb / 1024:.0f}" if kb else "-"


def summarize(runs: Sequence[Run], cfg: Config, size: int) -> dict:
    mine = [r for r in runs if r.config == cfg]
    ok = [r for r in mine if r.identical is not None]
    wall = statistics.median(r.wall for r in mine)
    startup = stat_of(mine, "startupSeconds")
    return {"config": cfg.label, "wall": wall, "min": min(r.wall for r in mine), "max": max(r.wall for r in mine),
            "cpu": statistics.median(r.cpu for r in mine), "load": statistics.median(r.load for r in mine),
            "loads": [round(r.load, 2) for r in mine], "master": next((r.stats.get("master") for r in mine if r.stats), None),
            "mbps": size / 1e6 / wall, "startup": startup, "net": None if startup is None else wall - startup,
            "run": stat_of(mine, "runSeconds"),
            "driver": max(r.driver_kb for r in mine), "jvm": max(r.jvm_kb for r in mine),
            "worker": max(r.worker_kb for r in mine), "toDriver": stat_of(mine, "bytesToDriver"),
            "units": stat_of(mine, "units"), "tasks": stat_of(mine, "tasks"), "inputBytes": stat_of(mine, "inputBytes"),
            "engine": next((r.stats.get("engine") for r in mine if r.stats), None),
            "rcs": sorted({r.rc for r in mine}),
            "identical": "yes" if ok and all(r.identical for r in ok) else ("NO" if ok else "n/a")}


def print_table(rows: Sequence[dict], size: int, command: str) -> None:
    ok = OK_EXIT.get(command, {0})
    print(f"\n{command} on {size / 1e6:.0f} MB ({size} bytes of files); medians; memory = peak VmHWM in MiB")
    head = (f"{'configuration':<26}{'wall s':>8}{'min-max':>14}{'CPU s':>8}{'load':>6}{'MB/s':>8}{'start s':>9}{'wall-start':>11}{'run s':>7}"
            f"{'driver':>8}{'JVM':>7}{'worker':>8}{'to driver':>11}{'units':>7}{'tasks':>7}  same JSON")
    print(head)
    print("-" * len(head))
    for s in rows:
        spread = f"{s['min']:.2f}-{s['max']:.2f}"
        print(f"{s['config']:<26}{s['wall']:8.2f}{spread:>14}{s['cpu']:8.2f}{s['load']:6.2f}{s['mbps']:8.0f}{fmt(s['startup']):>9}"
              f"{fmt(s['net']):>11}{fmt(s['run']):>7}{mib(s['driver']):>8}{mib(s['jvm']):>7}{mib(s['worker']):>8}"
              f"{fmt(s['toDriver'], '.0f'):>11}{fmt(s['units'], '.0f'):>7}{fmt(s['tasks'], '.0f'):>7}  {s['identical']}")
    for s in rows:
        if not set(s["rcs"]) <= ok or (s["engine"] and s["engine"] not in s["config"]):
            print(f"  note: {s['config']}: exit codes {s['rcs']}, engine reported by the tool: {s['engine'] or 'n/a'}")


def print_ratios(rows: Sequence[dict]) -> None:
    local = rows[0]
    if len(rows) < 2:
        print("\nonly one configuration ran: no ratios")
        return
    print(f"\nspeed-up = {local['config']} / the other (>1: the other faster); CPU: {local['config']} CPU / the "
          "other's (>1: the other cheaper)")
    for s in rows[1:]:
        net = None if s["net"] is None or s["net"] <= 0 else local["wall"] / s["net"]
        print(f"  {s['config']:<26} end to end {local['wall'] / s['wall']:5.2f}x   "
              f"without start-up {fmt(net)}{'x' if net else ''}   CPU {local['cpu'] / s['cpu']:5.2f}x")


# ---------------------------------------------------------------------------------------------
# main


def ensure_disk(disk: Path, a: argparse.Namespace, size_gb: float) -> None:
    if disk.exists():
        return
    print(f"generating {disk} ({size_gb:g} GiB) ...", file=sys.stderr, flush=True)
    disk.mkdir(parents=True)
    generate(disk, size_gb, a.brokers, a.partitions_per_broker, segment_mb=a.segment_mb)


def check_load(when: str) -> None:
    """Other work on the machine skews every figure: say so."""
    load = os.getloadavg()[0]
    if load > 0.5:
        print(f"warning: load average {load:.2f} {when}: other processes compete for the "
              f"{os.cpu_count()} cores, figures are skewed", file=sys.stderr, flush=True)


def benchmark(a: argparse.Namespace, cli: list[str], disk: Path, cfgs: Sequence[Config], work: Path,
              daemons: set = frozenset()) -> list[dict]:
    size = disk_bytes(disk)
    if not a.no_warm_cache:
        warm_cache(disk)
    check_load("before the runs")
    runs = rounds(cli, a.command, disk, cfgs, a.repeat, a.warmup, work, daemons)
    sys.stdout.flush()
    return [summarize(runs, c, size) for c in cfgs]


def growth(a: argparse.Namespace, cli: list[str], disk: Path, cfgs: Sequence[Config], work: Path) -> dict:
    half = disk.with_name(disk.name + "-half")
    logs = sum(p.stat().st_size for p in disk.rglob("*.log"))
    brokers = sorted(disk.glob("broker-*"))
    if brokers:  # the half disk gets the full one's shape
        a.brokers = len(brokers)
        a.partitions_per_broker = sum(1 for b in brokers for d in b.iterdir()
                                      if d.is_dir() and not d.name.startswith("__")) // len(brokers)
    ensure_disk(half, a, logs / 2 / (1 << 30))
    picked = [c for c in cfgs if c.label in ("local", "spark local[2]", "local (no --engine flag)")
              or c.label.startswith("local --jobs")]
    out = {}
    for d in (half, disk):
        rows = benchmark(a, cli, d, picked, work)
        print_table(rows, disk_bytes(d), a.command)
        out[str(d)] = rows
    print("\ndriver peak memory (MiB), half size -> full size")
    for c in picked:
        small, big = (next(r for r in out[str(d)] if r["config"] == c.label)["driver"] for d in (half, disk))
        print(f"  {c.label:<26} {mib(small):>6} -> {mib(big):>6}   x{big / small if small else float('nan'):.2f}")
    return out


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--disk", type=Path, required=True, help="disk to read (generated if missing)")
    ap.add_argument("--command", default="find-hanging", choices=["find-hanging", "scan", "list", "export"])
    ap.add_argument("--repeat", type=int, default=3, help="timed rounds (median reported)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed rounds before")
    ap.add_argument("--cores", default=None, help="N values of local[N], e.g. 1,2 (default 1..os.cpu_count(); "
                    "none: no Spark run)")
    ap.add_argument("--jobs", default=None, help="N values of the in-process engine's --jobs, e.g. 1,2 (the first "
                    "is the reference of the byte comparison; default: one run with the CLI's default)")
    ap.add_argument("--conf", action="append", default=[], help="key=value passed to the Spark runs as --conf")
    ap.add_argument("--standalone", action="store_true",
                    help="also run on a standalone cluster on 127.0.0.1 started (and stopped) by the benchmark")
    ap.add_argument("--standalone-workers", type=int, default=2, help="its workers, one core each")
    ap.add_argument("--standalone-memory", default="2g", help="memory of each worker")
    ap.add_argument("--scratch", type=Path, default=None, help="where the cluster's dir goes (default: TMPDIR)")
    ap.add_argument("--cli", default=str(DEFAULT_CLI), help="the kafka-forensics command (split on spaces)")
    ap.add_argument("--growth", action="store_true", help="driver memory on a half-size disk and the full one")
    ap.add_argument("--json", type=Path, default=None, help="write the summary rows there as JSON")
    ap.add_argument("--no-warm-cache", action="store_true", help="do not read the disk once before")
    ap.add_argument("--size-gb", type=float, default=2.0, help="size of a generated disk")
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--partitions-per-broker", type=int, default=100)
    ap.add_argument("--segment-mb", type=float, default=64.0)
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    cli = a.cli.split()
    cores = [] if a.cores == "none" else [int(x) for x in a.cores.split(",")] if a.cores else \
        list(range(1, (os.cpu_count() or 1) + 1))
    jobs = [int(x) for x in a.jobs.split(",")] if a.jobs else []
    ensure_disk(a.disk, a, a.size_gb)
    has_engine = cli_has_engine(cli, a.command)
    if not has_engine:
        print("note: the CLI has no --engine option yet: measuring the local engine only", file=sys.stderr)
    with standalone(a) as cluster, tempfile.TemporaryDirectory(prefix="kf-bench-") as tmp:
        cfgs = configs(has_engine, cores, a.conf, cluster, jobs)
        daemons = set(cluster.daemon_pids()) if cluster else set()
        work = Path(tmp)
        result = growth(a, cli, a.disk, cfgs, work) if a.growth else benchmark(a, cli, a.disk, cfgs, work, daemons)
        if not a.growth:
            print_table(result, disk_bytes(a.disk), a.command)
            print_ratios(result)
        kept = list(work.glob("*-run-*.out"))
        if kept:
            kept += list(work.glob("*-local-reference.out"))
            keep = Path(tempfile.mkdtemp(prefix="kf-bench-diff-"))
            for p in kept:
                p.rename(keep / p.name)
            print(f"\noutputs that differ from the local engine's were kept in {keep}")
    if a.json:
        a.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
