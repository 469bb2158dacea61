"""Dump benchmark on real producers' data: ``kafka-forensics dump`` against Java's ``kafka-dump-log.sh``,
output to a file, as a user runs them.

    .venv/bin/python bench/dumpbench.py                                 # every real kind, 3 rounds
    .venv/bin/python bench/dumpbench.py --kinds java-txn --repeat 5 --json /tmp/dump.json
    .venv/bin/python bench/dumpbench.py --kinds java-txn,txn-state --callgrind-mib 4
    .venv/bin/python bench/dumpbench.py --kinds gen-v2-none,gen-v2-zstd --mib 128   # the generated kinds

Kinds: the real ones of ``bench/real_segments.py`` (a real segment's batches repeated to ``--mib``
MiB, offsets rebased; by default 256 MiB, 32-64 MiB for the compressed kinds, whose text is 14-27
times their size) and ``gen-<kind>`` for the generated kinds of ``bench/segments.py`` (as many
batches as make about ``--mib`` MiB of ``v2-none``, default 128). Each kind is dumped with
``--deep-iteration --print-data-log`` and its own decoder flag (``--transaction-log-decoder`` for
``txn-state``, ...), by both tools:

* ``ours``: ``python -m forensics dump FLAGS FILE`` (``--python``: the interpreter, default this one);
* ``java``: ``kafka-dump-log.sh FLAGS --files FILE`` (``$KAFKA_HOME``, else the Kafka 4.1.0
  distribution in ``../shared/kafka``; the JVM's start-up is in its time, as for a user).

Every run is a fresh process started from the segment's directory with the file's bare name (both
tools print it in their first line), stdout to a new file under ``--out`` (the previous one is
deleted first, by this script, outside the run), stderr to another. ``--repeat`` rounds, the tools
alternating and the order rotating from round to round. Per run: wall clock; CPU time (user and
sys of the process and everything it started: ``RUSAGE_CHILDREN``, so a JVM's every thread
counts); peak resident memory (``ru_maxrss``: the mapped segment's pages count too); the load
average (1 min) before it. Then the two outputs of the last round are compared byte for byte (their
sizes, the first differing line); any difference, or an exit code other than 0, is a failure.

``--callgrind-mib N``: ours also runs once under ``valgrind --tool=callgrind`` on an N-MiB segment of
the kind and once on the kind's source segment (real kinds) or a 1-MiB one (generated), stdout to
/dev/null: instructions executed (``Ir``), whole process and, from the difference of the two,
per record (start-up cancels out). Instruction counts do not depend on the machine's load.

Output: the machine and load, per run a line, then a table per kind: median / min-max wall and CPU
seconds of each tool, the ratios java/ours (of the medians, and the median of the per-round ratios),
output bytes, identical or not. ``--json FILE`` keeps everything.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

import dumpcmp  # noqa: E402
import real_segments  # noqa: E402

DEFAULT_OUT = Path("/work/bench-data/dump-out")
GEN_DATA = Path("/work/bench-data/decode")
LABELS = ("ours", "before", "java")
GEN_MIB = 128


@dataclass
class Segment:
    kind: str
    path: Path
    flags: tuple[str, ...]
    small: Path | None  # the callgrind baseline (source segment, or a small generated one)


@dataclass
class Run:
    kind: str
    label: str
    round: int
    wall: float
    cpu: float
    user: float
    sys: float
    maxrss_kib: int
    load_before: float
    rc: int
    out_bytes: int
    error: str = ""


def segment(kind: str, mib: int | None, data: Path, gen_data: Path = GEN_DATA) -> Segment:
    if kind.startswith("gen-"):
        import segments

        gen_kind = kind[4:]
        batches = segments.batches_for_bytes((mib or GEN_MIB) << 20)
        info = segments.ensure_segment(gen_data, gen_kind, batches)
        small = segments.ensure_segment(gen_data, gen_kind, segments.batches_for_bytes(1 << 20)).path
        return Segment(kind, info.path, (), small)
    seg = real_segments.ensure_real_segment(kind, mib, data)
    return Segment(kind, seg.path, seg.flags, real_segments.source_segment(kind))


def commands(seg: Segment, python: str, script: Path | None, before: Path | None = None) -> dict[str, list[str]]:
    flags = [*dumpcmp.DUMP_FLAGS, *seg.flags]
    cmds = {"ours": [python, "-m", "forensics", "dump", *flags, seg.path.name]}
    if before:  # the same interpreter, the other checkout first on its path (label_env)
        cmds["before"] = list(cmds["ours"])
    if script is not None:
        cmds["java"] = [str(script), *flags, "--files", seg.path.name]
    return cmds


def label_env(env: dict, label: str, before: Path | None) -> dict:
    """The environment of a run: ``before`` runs the other checkout's forensics (PYTHONPATH)."""
    return dict(env, PYTHONPATH=str(before)) if label == "before" and before else env


def run_once(seg: Segment, label: str, cmd: Sequence[str], rnd: int, out_dir: Path, env: dict) -> Run:
    out, err = out_dir / f"{seg.kind}.{label}.txt", out_dir / f"{seg.kind}.{label}.err"
    for p in (out, err):
        if p.exists():
            p.unlink()
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "wb") as fo, open(err, "wb") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, cwd=seg.path.parent, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, sys_ = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    error = "" if proc.returncode == 0 else err.read_bytes()[-400:].decode("utf-8", "replace")
    return Run(seg.kind, label, rnd, wall, user + sys_, user, sys_, usage.ru_maxrss, load, proc.returncode,
               out.stat().st_size, error)


def compare_files(a: Path, b: Path) -> tuple[bool, str, int]:
    """Byte for byte: (same, detail, record lines of ``a``)."""
    records = lines = compared = 0
    line_start = True
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            ca, cb = fa.read(1 << 22), fb.read(1 << 22)
            if ca != cb:
                n = min(len(ca), len(cb))
                at = next((k for k in range(n) if ca[k] != cb[k]), n)
                line = lines + ca.count(b"\n", 0, at) + 1
                start = ca.rfind(b"\n", 0, at) + 1
                return False, (f"differ at byte {compared + at:,} (line {line:,}): {a.name} "
                               f"{ca[start:start + 160]!r}; {b.name} {cb[start:start + 160]!r}"), records
            if not ca:
                return True, f"identical: {compared:,} bytes, {lines:,} lines", records
            lines += ca.count(b"\n")
            records += ca.count(b"\n| ") + (line_start and ca.startswith(b"| "))
            line_start = ca.endswith(b"\n")
            compared += len(ca)


def callgrind(seg: Segment, mib: int, data: Path, gen_data: Path, out: Path, python: str, env: dict) -> dict:
    """Instructions of a dump of an ``mib`` MiB segment and of the small one; per record from the two."""
    big = segment(seg.kind, mib, data, gen_data)
    got = {}
    for name, path in (("small", big.small), ("big", big.path)):
        with open(os.devnull, "wb") as null:
            cg_out = out / f"callgrind.{seg.kind}.{name}.out"
            cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg_out}", python, "-m", "forensics",
                   "dump", *dumpcmp.DUMP_FLAGS, *seg.flags, path.name]
            subprocess.run(cmd, stdout=null, stderr=subprocess.DEVNULL, cwd=path.parent, env=env, check=True)
        ir = None
        for line in cg_out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                ir = int(line.split()[1])
        cg_out.unlink()
        proc = subprocess.run([python, "-m", "forensics", "dump", *dumpcmp.DUMP_FLAGS, *seg.flags, path.name],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=path.parent, env=env)
        got[name] = {"path": str(path), "ir": ir, "records": proc.stdout.count(b"\n| "),
                     "bytes": path.stat().st_size}
    d_rec = got["big"]["records"] - got["small"]["records"]
    got["ir_per_record"] = (got["big"]["ir"] - got["small"]["ir"]) / d_rec if d_rec > 0 else None
    return got


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", default=",".join(real_segments.KINDS),
                    help="comma-separated: real kinds (%(default)s) or gen-<kind> of bench/segments.py")
    ap.add_argument("--mib", type=int, help="segment size in MiB (default: the kind's, see real_segments.py; "
                                            "128 for gen-<kind>)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds (default %(default)s)")
    ap.add_argument("--data", type=Path, default=real_segments.DEFAULT_DATA, help="segments (default %(default)s)")
    ap.add_argument("--gen-data", type=Path, default=GEN_DATA, help="generated segments (default %(default)s)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="outputs (default %(default)s)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs ours (default this one)")
    ap.add_argument("--before", type=Path, help="also run another revision, as 'before': a checkout with its "
                                                "accelerator built in place (setup.py build_ext --inplace)")
    ap.add_argument("--no-java", action="store_true", help="ours only")
    ap.add_argument("--keep", action="store_true", help="keep the outputs (default: deleted once compared)")
    ap.add_argument("--callgrind-mib", type=int, default=0, help="also count ours' instructions on N MiB")
    ap.add_argument("--json", type=Path, help="write every figure here")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    script, why = (None, "--no-java") if a.no_java else dumpcmp.kafka_script(os.environ.get("KAFKA_HOME"))
    env = dict(os.environ)
    print(f"# {platform.node()}: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"# ours: {a.python} -m forensics (git {_git_rev()}); java: {script or why}")
    runs: list[Run] = []
    summary = {}
    for kind in a.kinds.split(","):
        seg = segment(kind.strip(), a.mib, a.data, a.gen_data)
        cmds = commands(seg, a.python, script, a.before)
        print(f"## {seg.kind}: {seg.path} ({seg.path.stat().st_size / 1e6:,.1f} MB) flags "
              f"{' '.join(cmds['ours'][4:-1])}", flush=True)
        labels = [label for label in LABELS if label in cmds]
        for rnd in range(a.repeat):
            k = rnd % len(labels)
            for label in labels[k:] + labels[:k]:
                run = run_once(seg, label, cmds[label], rnd, a.out, label_env(env, label, a.before))
                runs.append(run)
                print(f"   round {rnd + 1} {label:<5} wall {run.wall:6.2f} s  cpu {run.cpu:6.2f} s (user "
                      f"{run.user:.2f} sys {run.sys:.2f})  rss {run.maxrss_kib / 1024:5.0f} MiB  "
                      f"load {run.load_before:.2f}  {run.out_bytes:,} bytes" + (f"  FAILED rc {run.rc}: "
                                                                                 f"{run.error}" if run.rc else ""),
                      flush=True)
        entry = {}
        mine = [r for r in runs if r.kind == seg.kind]
        for label in labels:
            rs = [r for r in mine if r.label == label]
            entry[label] = {"wall": med([r.wall for r in rs]), "cpu": med([r.cpu for r in rs]),
                            "wall_min": min(r.wall for r in rs), "wall_max": max(r.wall for r in rs),
                            "maxrss_mib": max(r.maxrss_kib for r in rs) / 1024, "ok": all(r.rc == 0 for r in rs)}
        if "before" in entry:
            entry["speedup_wall"] = entry["before"]["wall"] / entry["ours"]["wall"]
            entry["speedup_cpu"] = entry["before"]["cpu"] / entry["ours"]["cpu"]
            print(f"   before/ours: wall {entry['speedup_wall']:.2f}x, cpu {entry['speedup_cpu']:.2f}x", flush=True)
        if "java" in entry:
            pairs = [(o, j) for o in mine if o.label == "ours" for j in mine if j.label == "java" and j.round == o.round]
            entry["ratio_wall"] = entry["java"]["wall"] / entry["ours"]["wall"]
            entry["ratio_cpu"] = entry["java"]["cpu"] / entry["ours"]["cpu"]
            entry["ratio_wall_per_round"] = med([j.wall / o.wall for o, j in pairs])
            same, detail, records = compare_files(a.out / f"{seg.kind}.ours.txt", a.out / f"{seg.kind}.java.txt")
            if same and "before" in entry:
                same_before, detail_before, _ = compare_files(a.out / f"{seg.kind}.before.txt",
                                                              a.out / f"{seg.kind}.java.txt")
                same, detail = same_before, detail if same_before else "before: " + detail_before
            entry.update(same=same and all(r.rc == 0 for r in mine), detail=detail, records=records)
            print(f"   java/ours: wall {entry['ratio_wall']:.2f}x (per round {entry['ratio_wall_per_round']:.2f}x), "
                  f"cpu {entry['ratio_cpu']:.2f}x; output {detail}", flush=True)
        for label in (("ours", "before") if a.callgrind_mib else ()):
            if label not in cmds:
                continue
            cg = callgrind(seg, a.callgrind_mib, a.data, a.gen_data, a.out, a.python, label_env(env, label, a.before))
            entry["callgrind" if label == "ours" else "callgrind_before"] = cg
            print(f"   callgrind {label}: {cg['big']['ir']:,} Ir on {cg['big']['bytes'] / 1e6:.1f} MB "
                  f"({cg['big']['records']:,} records), {cg['small']['ir']:,} Ir on the small one: "
                  f"{cg['ir_per_record'] or float('nan'):,.0f} Ir per record", flush=True)
        if not a.keep:
            for label in labels:
                (a.out / f"{seg.kind}.{label}.txt").unlink(missing_ok=True)
        summary[seg.kind] = entry
    print("\n| kind | ours wall s (min-max) | java wall s (min-max) | java/ours wall | ours cpu s | java cpu s "
          "| java/ours cpu | before wall / cpu s | output |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind, e in summary.items():
        o, j, b = e["ours"], e.get("java"), e.get("before")
        jw = f"{j['wall']:.2f} ({j['wall_min']:.2f}-{j['wall_max']:.2f})" if j else "-"
        bw = f"{b['wall']:.2f} / {b['cpu']:.2f}" if b else "-"
        print(f"| {kind} | {o['wall']:.2f} ({o['wall_min']:.2f}-{o['wall_max']:.2f}) | {jw} | "
              f"{e.get('ratio_wall', float('nan')):.2f}x | {o['cpu']:.2f} | {j['cpu'] if j else float('nan'):.2f} | "
              f"{e.get('ratio_cpu', float('nan')):.2f}x | {bw} | {e.get('detail', '-')} |")
    print(f"# load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if a.json:
        a.json.write_text(json.dumps({"runs": [asdict(r) for r in runs], "summary": summary,
                                      "load_end": os.getloadavg()}, indent=1, default=str) + "\n")
    bad = [k for k, e in summary.items() if e.get("same") is False]
    return 1 if bad else 0


def _git_rev() -> str:
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "forensics", "csrc"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" + modified" if dirty else "")
    except OSError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
