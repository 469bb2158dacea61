"""Engine benchmark: ``--engine local`` against ``--engine spark --master local[N]``, N = 1..cores.

    .venv/bin/python bench/engines.py --disk /work/bench-data/disk-2g --command find-hanging --repeat 3
    .venv/bin/python bench/engines.py --disk /work/bench-data/disk-2g --growth

Generates the disk with ``bench/synth_disk.py`` when ``--disk`` does not exist (``--size-gb``,
``--brokers``, ``--partitions-per-broker``), reads it once so that every run sees a warm page
cache, then runs ``kafka-forensics <command> DISK --format json --no-progress`` as a subprocess per
configuration, configurations alternating within each round (one untimed warm-up round first).

Per run: wall time; the driver's peak memory (``VmHWM`` of the ``kafka-forensics`` process, polled
from ``/proc``), the largest ``VmHWM`` of a ``java`` descendant (the Spark JVM) and of another
python descendant (PySpark workers); the tool's own figures from the stats file it writes when
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
from typing import Dict, List, Optional, Sequence

from synth_disk import generate

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CLI = REPO / ".venv" / "bin" / "kafka-forensics"
OK_EXIT = {"find-hanging": {0, 1}}  # 1 = something hangs
POLL_S, TREE_EVERY = 0.02, 10  # /proc/<driver>/status every 20 ms, the process tree every 10th poll


@dataclass(frozen=True)
class Config:
    label: str
    flags: tuple  # extra CLI flags (empty: an old CLI without --engine)


@dataclass
class Run:
    config: Config
    wall: float
    rc: int
    driver_kb: int
    jvm_kb: int
    worker_kb: int
    stats: Optional[dict]
    identical: Optional[bool]
    stderr_tail: str = ""


@dataclass
class Peaks:
    driver: int = 0
    jvm: int = 0
    worker: int = 0
    seen: Dict[int, str] = field(default_factory=dict)


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


def process_table() -> Dict[int, tuple]:
    """pid -> (ppid, comm) of every process."""
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
        table[int(entry)] = (int(tail.split()[1]), comm)
    return table


def descendants(root: int) -> Dict[int, str]:
    table = process_table()
    children: Dict[int, List[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = {}, list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        out[pid] = table[pid][1]
        todo.extend(children.get(pid, ()))
    return out


def sample(pid: int, peaks: Peaks, scan_tree: bool) -> None:
    peaks.driver = max(peaks.driver, vm_hwm_kb(pid))
    if scan_tree:
        peaks.seen.update(descendants(pid))
    for child, comm in peaks.seen.items():
        if comm == "java":
            peaks.jvm = max(peaks.jvm, vm_hwm_kb(child))
        elif comm.startswith("python"):
            peaks.worker = max(peaks.worker, vm_hwm_kb(child))


# ---------------------------------------------------------------------------------------------
# one run


def run_once(cmd: Sequence[str], env: dict, out: Path, err: Path) -> tuple:
    """Run ``cmd``; (wall seconds, exit code, peaks). The child is reaped with ``wait4`` here."""
    with open(out, "wb") as fo, open(err, "wb") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, env=env)
        peaks, n = Peaks(), 0
        while True:
            pid, status, _ = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            sample(proc.pid, peaks, n % TREE_EVERY == 0)
            n += 1
            time.sleep(POLL_S)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, proc.returncode, peaks


def read_stats(path: Path) -> Optional[dict]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def measure(cli: Sequence[str], command: str, disk: Path, config: Config, work: Path, i: int,
            reference: Optional[bytes]) -> tuple:
    """One run of ``config``; returns (Run, stdout bytes)."""
    stem = f"{disk.name}-run-{i}"
    out, err, stats = work / f"{stem}.out", work / f"{stem}.err", work / f"{stem}.stats.json"
    env = dict(os.environ, KAFKA_FORENSICS_STATS=str(stats))
    cmd = [*cli, command, str(disk), "--format", "json", "--no-progress", *config.flags]
    wall, rc, peaks = run_once(cmd, env, out, err)
    data = out.read_bytes()
    tail = "" if rc in OK_EXIT.get(command, {0}) else err.read_text(errors="replace")[-2000:]
    same = None if reference is None else data == reference
    if same is False:
        print(f"  ! {config.label}: stdout differs from the local engine's, kept as {out}", file=sys.stderr)
    else:
        out.unlink()
    return Run(config, wall, rc, peaks.driver, peaks.jvm, peaks.worker, read_stats(stats), same, tail), data


# ---------------------------------------------------------------------------------------------
# configurations and rounds


def cli_has_engine(cli: Sequence[str], command: str) -> bool:
    env = dict(os.environ, COLUMNS="300", TERM="dumb", NO_COLOR="1")
    res = subprocess.run([*cli, command, "--help"], capture_output=True, text=True, env=env)
    return "--engine" in res.stdout


def configs(has_engine: bool, cores: Sequence[int], conf: Sequence[str]) -> List[Config]:
    if not has_engine:
        return [Config("local (no --engine flag)", ())]
    extra = tuple(x for kv in conf for x in ("--conf", kv))
    return [Config("local", ("--engine", "local"))] + [
        Config(f"spark local[{n}]", ("--engine", "spark", "--master", f"local[{n}]", *extra)) for n in cores]


def rounds(cli: Sequence[str], command: str, disk: Path, cfgs: Sequence[Config], repeat: int, warmup: int,
           work: Path) -> List[Run]:
    """``warmup`` untimed rounds then ``repeat`` timed ones, configurations alternating; the first
    configuration's stdout (the local engine's) is the reference of the byte comparison."""
    runs: List[Run] = []
    reference: Optional[bytes] = None
    i = 0
    for r in range(warmup + repeat):
        for c in cfgs:
            i += 1
            run, data = measure(cli, command, disk, c, work, i, reference)
            if reference is None and c == cfgs[0] and run.rc in OK_EXIT.get(command, {0}):
                reference = data
                run.identical = True
                (work / f"{disk.name}-local-reference.out").write_bytes(data)
            tag = "warm-up" if r < warmup else f"round {r - warmup + 1}/{repeat}"
            print(f"  {tag:>12} {c.label:<26} {run.wall:8.2f} s  rc={run.rc}", file=sys.stderr, flush=True)
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


def stat_of(runs: Sequence[Run], key: str) -> Optional[float]:
    values = [r.stats[key] for r in runs if r.stats and isinstance(r.stats.get(key), (int, float))]
    return statistics.median(values) if values else None


def fmt(value: Optional[float], spec: str = ".2f") -> str:
    return "n/a" if value is None else format(value, spec)


def mib(kb: int) -> str:
    return f"{kb / 1024:.0f}" if kb else "-"


def summarize(runs: Sequence[Run], cfg: Config, size: int) -> dict:
    mine = [r for r in runs if r.config == cfg]
    ok = [r for r in mine if r.identical is not None]
    wall = statistics.median(r.wall for r in mine)
    startup = stat_of(mine, "startupSeconds")
    return {"config": cfg.label, "wall": wall, "min": min(r.wall for r in mine), "max": max(r.wall for r in mine),
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
    head = (f"{'configuration':<26}{'wall s':>8}{'min-max':>14}{'MB/s':>8}{'start s':>9}{'wall-start':>11}{'run s':>7}"
            f"{'driver':>8}{'JVM':>7}{'worker':>8}{'to driver':>11}{'units':>7}{'tasks':>7}  same JSON")
    print(head)
    print("-" * len(head))
    for s in rows:
        spread = f"{s['min']:.2f}-{s['max']:.2f}"
        print(f"{s['config']:<26}{s['wall']:8.2f}{spread:>14}{s['mbps']:8.0f}{fmt(s['startup']):>9}"
              f"{fmt(s['net']):>11}{fmt(s['run']):>7}{mib(s['driver']):>8}{mib(s['jvm']):>7}{mib(s['worker']):>8}"
              f"{fmt(s['toDriver'], '.0f'):>11}{fmt(s['units'], '.0f'):>7}{fmt(s['tasks'], '.0f'):>7}  {s['identical']}")
    for s in rows:
        if not set(s["rcs"]) <= ok or (s["engine"] and s["engine"] not in s["config"]):
            print(f"  note: {s['config']}: exit codes {s['rcs']}, engine reported by the tool: {s['engine'] or 'n/a'}")


def print_ratios(rows: Sequence[dict]) -> None:
    local = rows[0]
    if len(rows) < 2:
        print("\nno Spark configuration ran (the CLI has no --engine yet): no ratios")
        return
    print("\nspeed-up = local wall / spark wall (>1: Spark faster)")
    for s in rows[1:]:
        net = None if s["net"] is None or s["net"] <= 0 else local["wall"] / s["net"]
        print(f"  {s['config']:<20} end to end {local['wall'] / s['wall']:5.2f}x   "
              f"without start-up {fmt(net)}{'x' if net else ''}")


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


def benchmark(a: argparse.Namespace, cli: List[str], disk: Path, cfgs: Sequence[Config], work: Path) -> List[dict]:
    size = disk_bytes(disk)
    if not a.no_warm_cache:
        warm_cache(disk)
    check_load("before the runs")
    runs = rounds(cli, a.command, disk, cfgs, a.repeat, a.warmup, work)
    sys.stdout.flush()
    return [summarize(runs, c, size) for c in cfgs]


def growth(a: argparse.Namespace, cli: List[str], disk: Path, cfgs: Sequence[Config], work: Path) -> dict:
    half = disk.with_name(disk.name + "-half")
    logs = sum(p.stat().st_size for p in disk.rglob("*.log"))
    brokers = sorted(disk.glob("broker-*"))
    if brokers:  # the half disk gets the full one's shape
        a.brokers = len(brokers)
        a.partitions_per_broker = sum(1 for b in brokers for d in b.iterdir()
                                      if d.is_dir() and not d.name.startswith("__")) // len(brokers)
    ensure_disk(half, a, logs / 2 / (1 << 30))
    picked = [c for c in cfgs if c.label in ("local", "spark local[2]", "local (no --engine flag)")]
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


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--disk", type=Path, required=True, help="disk to read (generated if missing)")
    ap.add_argument("--command", default="find-hanging", choices=["find-hanging", "scan", "list"])
    ap.add_argument("--repeat", type=int, default=3, help="timed rounds (median reported)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed rounds before")
    ap.add_argument("--cores", default=None, help="N values of local[N], e.g. 1,2 (default 1..os.cpu_count())")
    ap.add_argument("--conf", action="append", default=[], help="key=value passed to the Spark runs as --conf")
    ap.add_argument("--cli", default=str(DEFAULT_CLI), help="the kafka-forensics command (split on spaces)")
    ap.add_argument("--growth", action="store_true", help="driver memory on a half-size disk and the full one")
    ap.add_argument("--json", type=Path, default=None, help="write the summary rows there as JSON")
    ap.add_argument("--no-warm-cache", action="store_true", help="do not read the disk once before")
    ap.add_argument("--size-gb", type=float, default=2.0, help="size of a generated disk")
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--partitions-per-broker", type=int, default=100)
    ap.add_argument("--segment-mb", type=float, default=64.0)
    return ap.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = parse_args(argv)
    cli = a.cli.split()
    cores = [int(x) for x in a.cores.split(",")] if a.cores else list(range(1, (os.cpu_count() or 1) + 1))
    ensure_disk(a.disk, a, a.size_gb)
    has_engine = cli_has_engine(cli, a.command)
    if not has_engine:
        print("note: the CLI has no --engine option yet: measuring the local engine only", file=sys.stderr)
    cfgs = configs(has_engine, cores, a.conf)
    with tempfile.TemporaryDirectory(prefix="kf-bench-") as tmp:
        work = Path(tmp)
        result = growth(a, cli, a.disk, cfgs, work) if a.growth else benchmark(a, cli, a.disk, cfgs, work)
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
