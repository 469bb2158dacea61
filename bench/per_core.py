"""Per-core speed near the bytes: our whole-disk commands beside two anchors over the same bytes,
measured in one run of interleaved rounds.

    .venv/bin/python bench/per_core.py --disk DISK                     # 5 rounds, --jobs 1 and --jobs 2
    .venv/bin/python bench/per_core.py --disk DISK --rounds 9 --jobs 1,2 --json per-core.json
    .venv/bin/python bench/per_core.py --disk DISK --jobs 1,default --baseline OTHER/.venv/bin/kafka-forensics
    .venv/bin/python bench/per_core.py --disk DISK --jobs 1,default --baseline OTHER/... --baseline-jobs 1

``--jobs default`` runs the command without ``--jobs`` (the CLI's default: one process per core);
``--baseline CLI`` also runs each command with another ``kafka-forensics`` (another checkout, e.g.
main's), without ``--jobs``, in the same rounds.

The anchors: the page-cache read of every ``.log`` file (``cat`` to /dev/null: what reading the
bytes costs at all) and one CRC-32C pass over them with the ``crc32c`` package (what checking them
costs: every batch's checksum is verified, so no reader of the disk can go below it on one core;
timed inside its process, mapped files, start-up left out), and the same pass dealt over one process
per core (the most that N cores of this machine give, at the moment's load: the ceiling of the
``--jobs`` ratios; a VM's cores may share what a real core has). Then ``kafka-forensics find-hanging``
and ``scan`` of the same disk (``--format json --no-progress --engine local``) with each ``--jobs``.
Each round runs every configuration once, the order rotating from round to round; the disk is read
once before. Per run: wall time and CPU time (user + sys of the process and every child, from the
kernel's accounting of the reaped children), the load average; the command's own job time
(``runSeconds`` of ``KAFKA_FORENSICS_STATS``: the work units, without start-up, discovery and the
report). Printed: medians, GiB/s per core (log bytes / CPU seconds), and each figure's ratio to the
CRC-32C pass; the commands' stdout is compared across ``--jobs`` (byte-identical or not).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = [str(Path(sys.executable).parent / "kafka-forensics")]
OK = {"find-hanging": {0, 1}, "scan": {0}}

CRC_PASS = r"""
import mmap, os, sys, time
from crc32c import crc32c
paths = sys.argv[1:]
start_at = float(os.environ.get("CRC_START_AT", "0"))  # the processes of one pass start together
while time.time() < start_at:
    time.sleep(0.001)
t0, c0 = time.perf_counter(), time.process_time()
n = 0
for p in paths:
    with open(p, "rb") as f:
        if os.fstat(f.fileno()).st_size:
            m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            crc32c(m)
            n += len(m)
            m.close()
print(time.perf_counter() - t0, time.process_time() - c0, n, t0 + time.time() - time.perf_counter(), time.time())
"""


def logs(disk: Path) -> list[str]:
    return sorted(str(p) for p in disk.rglob("*.log") if p.is_file())


def _run(argv: list[str], env: dict[str, str], stdout) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=stdout, stderr=subprocess.DEVNULL, check=False, cwd=REPO)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def anchors(paths: list[str]) -> dict[str, tuple[float, float]]:
    """(wall, CPU) of the two anchors: cat of every file, the CRC-32C pass inside its process."""
    with tempfile.TemporaryFile() as names:
        names.write(b"\0".join(p.encode() for p in paths))
        names.seek(0)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(["xargs", "-0", "cat"], stdin=names, stdout=subprocess.DEVNULL, check=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = subprocess.run([sys.executable, "-c", CRC_PASS, *paths], capture_output=True, text=True, check=True)
    crc_wall, crc_cpu = (float(x) for x in out.stdout.split()[:2])
    return {"cat": (wall, cpu), "crc32c": (crc_wall, crc_cpu), "crc32c_cores": crc_on_every_core(paths)}


def crc_on_every_core(paths: list[str]) -> float:
    """The wall time of the same CRC-32C pass cut over one process per core (the files dealt out by
    size), all starting the pass at one moment, to the last one's end: what N cores of this
    machine give a job that is all bytes, at this moment's load (the ceiling of any N-process ratio)."""
    n = os.cpu_count() or 1
    shares: list[list[str]] = [[] for _ in range(n)]
    loads = [0] * n
    for path in sorted(paths, key=os.path.getsize, reverse=True):
        k = loads.index(min(loads))
        shares[k].append(path)
        loads[k] += os.path.getsize(path)
    env = dict(os.environ, CRC_START_AT=str(time.time() + 0.5))  # after every interpreter has started
    procs = [subprocess.Popen([sys.executable, "-c", CRC_PASS, *share], stdout=subprocess.PIPE, text=True, env=env)
             for share in shares if share]
    spans = [tuple(float(x) for x in p.communicate()[0].split()[3:5]) for p in procs]
    return max(end for _, end in spans) - min(start for start, _ in spans)


def command(cmd: str, disk: Path, jobs: str, work: Path, i: int, cli: list[str] | None = None) -> dict:
    """One run of ``cmd``: ``jobs`` a number, ``default`` (no ``--jobs``) or ``baseline`` (``cli``, no ``--jobs``;
    ``baseline:N``: with ``--jobs N``)."""
    stats = work / f"stats-{i}.json"
    env = dict(os.environ, KAFKA_FORENSICS_STATS=str(stats))
    env.pop("KAFKA_FORENSICS_JOBS", None)
    theirs, _, n = jobs.partition(":") if jobs.startswith("baseline") else ("", "", jobs)
    flag = ["--jobs", n] if n not in ("default", "") else []
    out = work / f"{cmd}-{jobs.replace(':', '-')}-{i}.out"
    with open(out, "wb") as f:
        wall, cpu, rc = _run([*(cli if theirs and cli else CLI), cmd, str(disk), "--format", "json",
                              "--no-progress", "--engine", "local", *flag], env, f)
    if rc not in OK[cmd]:
        raise SystemExit(f"{cmd} --jobs {jobs} exited {rc}")
    doc = json.loads(stats.read_text()) if stats.exists() else {}
    return {"wall": wall, "cpu": cpu, "job": doc.get("runSeconds"), "slots": doc.get("slots", 1),
            "out": out.read_bytes()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--disk", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--jobs", default="1,2", help="values of --jobs (default 1,2; 'default': no --jobs)")
    ap.add_argument("--cli", default=None, help="the kafka-forensics command measured (default: the one beside "
                    "this interpreter)")
    ap.add_argument("--baseline", default=None, help="another kafka-forensics command, run without --jobs too")
    ap.add_argument("--baseline-jobs", default="", help="values of --jobs for the baseline too (e.g. 1)")
    ap.add_argument("--commands", default="find-hanging,scan")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    if a.cli:
        CLI[:] = a.cli.split()
    paths = logs(a.disk)
    size = sum(os.path.getsize(p) for p in paths)
    gib = size / (1 << 30)
    jobs = a.jobs.split(",") + (["baseline"] + [f"baseline:{n}" for n in a.baseline_jobs.split(",") if n]
                                if a.baseline else [])
    baseline = a.baseline.split() if a.baseline else None
    cmds = a.commands.split(",")
    configs = ["anchors"] + [f"{c} --jobs {j}" for c in cmds for j in jobs]
    anchors(paths)  # the page cache warm, the package loaded once
    rows: dict[str, list[dict]] = {c: [] for c in configs}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="kf-per-core-") as tmp:
        work = Path(tmp)
        for c in cmds:  # warm-up, untimed
            for j in jobs:
                command(c, a.disk, j, work, 0, baseline)
        i = 0
        for r in range(a.rounds):
            order = configs[r % len(configs):] + configs[:r % len(configs)]
            for cfg in order:
                i += 1
                if cfg == "anchors":
                    rows[cfg].append(anchors(paths))
                else:
                    c, _, j = cfg.partition(" --jobs ")
                    rows[cfg].append(command(c, a.disk, j, work, i, baseline))
            loads.append(os.getloadavg()[0])
            print(f"  round {r + 1}/{a.rounds}  load {loads[-1]:.2f}", file=sys.stderr, flush=True)
    med = statistics.median
    cat_wall, cat_cpu = med(x["cat"][0] for x in rows["anchors"]), med(x["cat"][1] for x in rows["anchors"])
    crc_wall, crc_cpu = med(x["crc32c"][0] for x in rows["anchors"]), med(x["crc32c"][1] for x in rows["anchors"])
    print(f"\n{gib:.2f} GiB of .log files in {len(paths)} files; {a.rounds} rounds, medians; "
          f"load average {min(loads):.2f}-{max(loads):.2f}")
    print(f"{'what':<34}{'wall s':>8}{'CPU s':>8}{'GiB/s/core':>12}{'CPU / CRC':>11}{'job s':>8}{'job / CRC':>11}"
          f"  same stdout")
    print(f"{'cat (page cache)':<34}{cat_wall:8.3f}{cat_cpu:8.3f}{gib / cat_cpu:12.2f}{cat_cpu / crc_cpu:11.2f}")
    print(f"{'CRC-32C pass (crc32c)':<34}{crc_wall:8.3f}{crc_cpu:8.3f}{gib / crc_cpu:12.2f}{1.0:11.2f}")
    cores = os.cpu_count() or 1
    crc_cores = med(x["crc32c_cores"] for x in rows["anchors"])
    print(f"{f'CRC-32C pass, {cores} processes':<34}{crc_cores:8.3f}")
    summary = {"gib": gib, "files": len(paths), "loads": loads, "cat": [cat_wall, cat_cpu], "crc32c": [crc_wall, crc_cpu],
               "crc32c_cores": crc_cores}
    for c in cmds:
        reference = rows[f"{c} --jobs {jobs[0]}"][0]["out"]
        for j in jobs:
            runs = rows[f"{c} --jobs {j}"]
            wall, cpu = med(x["wall"] for x in runs), med(x["cpu"] for x in runs)
            times = [x["job"] for x in runs if x["job"] is not None]
            job = med(times) if times else None
            same = "yes" if all(x["out"] == reference for x in runs) else "NO"
            one = all(x["slots"] == 1 for x in runs)  # one process: its job's wall is its CPU
            per_crc = f"{job / crc_cpu:11.2f}" if one and job is not None else f"{'-':>11}"
            label = (f"{c} (baseline)" if j == "baseline" else f"{c} (baseline) --jobs {j[9:]}"
                     if j.startswith("baseline:") else f"{c} --jobs {j}")
            print(f"{label:<34}{wall:8.3f}{cpu:8.3f}{gib / cpu:12.2f}{cpu / crc_cpu:11.2f}"
                  f"{job if job is not None else float('nan'):8.3f}{per_crc}  {same}")
            summary[label] = {"wall": wall, "cpu": cpu, "job": job, "same": same}
        for j in jobs[1:]:
            first, other = (med(x["wall"] for x in rows[f"{c} --jobs {k}"]) for k in (jobs[0], j))
            print(f"  {c}: --jobs {jobs[0]} / {j}: {first / other:.2f}x (wall; >1: {j} faster)")
    print("job / CRC: the work units' time in one process over the CRC-32C pass's CPU")
    print(f"the machine's ceiling now: one CRC-32C pass / the same over {cores} processes = "
          f"{crc_wall / crc_cores:.2f}x (wall; what {cores} cores give a job of bytes alone at this load)")
    if a.json:
        a.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
