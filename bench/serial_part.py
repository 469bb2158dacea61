"""What a pool of processes can and cannot spread: each command's CPU split into its serial part and
its job, and the job's split between the driver and the workers, measured inside the process, in
one run of interleaved rounds.

    .venv/bin/python bench/serial_part.py --disk DISK --rounds 5
    .venv/bin/python bench/serial_part.py --disk DISK --baseline OTHER/.venv/bin/python --jobs 1,2

Each configuration (this checkout's or ``--baseline``'s Python, each command, each ``--jobs``) runs
``kafka-forensics CMD DISK --format json --no-progress --engine local --jobs N`` in a fresh process
whose ``Opened.run_units`` (the job) and ``discover`` are wrapped with the process's own CPU clock
and its reaped children's (the workers, reaped when the job ends): per run the process's CPU (its
start, imports, discovery, analysis and output: all of it), the driver's CPU during the job, the
workers' CPU, the job's wall time. Each round runs every configuration once, the order rotating.

From them, load-independent figures for two idle cores (CPU seconds, not wall times, which another
session's load stretches): ``serial`` = the process's CPU less the driver's during the job (with
``--jobs 1``, the job is all the driver's); with N workers, the job cannot end before the driver has
folded what it folds, nor before the workers' CPU (and the driver's beside it) is spread over the
cores, so the whole run takes at least ``serial + max(driver, workers / cores, (driver + workers) /
cores)`` (the job's CPU: the driver's and the workers') and at least every process's CPU / cores:
``bound`` = the ``--jobs 1`` run's CPU over the larger of the two, the most the pool can gain on that
many idle cores. Peak memory (MiB): the driver's, and the largest worker's (the largest reaped child).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HARNESS = r"""
import json, os, resource, sys, time
def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime
out, argv = sys.argv[1], sys.argv[2:]
import forensics.runs.context as context
phases = {"discovery": 0.0, "driver_job": 0.0, "workers": 0.0, "job_wall": 0.0, "before_job": None}
real_run, real_discover = context.Opened.run_units, context.discover
def run_units(self, *a, **k):
    c0, w0, t0 = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    if phases["before_job"] is None:
        phases["before_job"] = c0
    try:
        return real_run(self, *a, **k)
    finally:
        phases["driver_job"] += cpu(resource.RUSAGE_SELF) - c0
        phases["workers"] += cpu(resource.RUSAGE_CHILDREN) - w0
        phases["job_wall"] += time.perf_counter() - t0
def discover(*a, **k):
    c0 = cpu(resource.RUSAGE_SELF)
    try:
        return real_discover(*a, **k)
    finally:
        phases["discovery"] += cpu(resource.RUSAGE_SELF) - c0
context.Opened.run_units, context.discover = run_units, discover
from forensics.cli.app import main
sys.argv = ["kafka-forensics", *argv]
code = 0
try:
    main()
except SystemExit as e:
    code = e.code if isinstance(e.code, int) else 0
sys.stdout.flush()
phases["process"] = cpu(resource.RUSAGE_SELF)
phases["driver_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
phases["worker_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest
phases["after_job"] = phases["process"] - (phases["before_job"] or 0.0) - phases["driver_job"]
with open(out, "w") as f:
    json.dump(phases, f)
os._exit(code)
"""

OK = {"find-hanging": {0, 1}, "scan": {0}}


def run(python: str, cmd: str, disk: Path, jobs: str, work: Path, i: int) -> dict:
    out = work / f"phases-{i}.json"
    env = {k: v for k, v in os.environ.items() if k not in ("KAFKA_FORENSICS_JOBS", "KAFKA_FORENSICS_STATS")}
    with open(work / f"{i}.out", "wb") as f:
        done = subprocess.run([python, "-c", HARNESS, str(out), cmd, str(disk), "--format", "json", "--no-progress",
                               "--engine", "local", "--jobs", jobs], stdout=f, stderr=subprocess.DEVNULL, env=env,
                              cwd=work)  # (not a checkout: ``-c`` puts the working directory first on the path)
    if done.returncode not in OK[cmd]:
        raise SystemExit(f"{python} {cmd} --jobs {jobs} exited {done.returncode}")
    doc = json.loads(out.read_text())
    doc["out"] = (work / f"{i}.out").read_bytes()
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--disk", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--cores", type=int, default=2, help="the cores of the bound (default 2)")
    ap.add_argument("--commands", default="find-hanging,scan")
    ap.add_argument("--baseline", default=None, help="another checkout's Python (its venv's), in the same rounds")
    args = ap.parse_args(argv)
    pythons = {"this": sys.executable}
    if args.baseline:
        pythons["baseline"] = args.baseline
    configs = [(who, cmd, jobs) for who in pythons for cmd in args.commands.split(",") for jobs in args.jobs.split(",")]
    runs: dict[tuple, list[dict]] = {c: [] for c in configs}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run(["cat", *map(str, args.disk.rglob("*.log"))], stdout=subprocess.DEVNULL, check=False)
        n = 0
        for r in range(args.rounds):
            loads.append(os.getloadavg()[0])
            order = configs[r % len(configs):] + configs[:r % len(configs)]
            for c in order:
                runs[c].append(run(pythons[c[0]], c[1], args.disk, c[2], work, n))
                n += 1
            print(f"  round {r + 1}/{args.rounds}  load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    loads.append(os.getloadavg()[0])
    med = {c: {k: statistics.median(x[k] for x in v) for k in ("process", "driver_job", "workers", "discovery",
                                                               "job_wall", "before_job", "after_job", "driver_mib", "worker_mib")} for c, v in runs.items()}
    print(f"{args.rounds} rounds, medians, CPU seconds; load average {min(loads):.2f}-{max(loads):.2f}")
    print(f"{'what':34} {'process':>8} {'serial':>7} {'before':>7} {'disc.':>6} {'after':>6} {'drv job':>8} "
          f"{'workers':>8} {'job wall':>9} {'bound':>7} {'MiB drv':>8} {'MiB wkr':>8}  same stdout")
    for who in pythons:
        for cmd in args.commands.split(","):
            one = med[(who, cmd, args.jobs.split(",")[0])]
            first = runs[(who, cmd, args.jobs.split(",")[0])][0]["out"]
            for jobs in args.jobs.split(","):
                m = med[(who, cmd, jobs)]
                serial = m["process"] - m["driver_job"]
                job = max(m["driver_job"], m["workers"] / args.cores, (m["driver_job"] + m["workers"]) / args.cores)
                floor = max(serial + job, (m["process"] + m["workers"]) / args.cores)
                bound = one["process"] / floor if m["workers"] else 1.0
                same = all(x["out"] == first for x in runs[(who, cmd, jobs)])
                print(f"{who + ' ' + cmd + ' --jobs ' + jobs:34} {m['process']:8.3f} {serial:7.3f} "
                      f"{m['before_job']:7.3f} {m['discovery']:6.3f} {m['after_job']:6.3f} {m['driver_job']:8.3f} {m['workers']:8.3f} {m['job_wall']:9.3f} "
                      f"{bound:6.2f}x {m['driver_mib']:8.1f} {m['worker_mib']:8.1f}  {'yes' if same else 'NO'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
