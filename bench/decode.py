"""Decode benchmark: our segment decoding against kafka-python, aiokafka, a bare mmap+struct loop
and (when ``KAFKA_HOME`` is set) Java's ``kafka-dump-log.sh``.

    .venv/bin/python bench/decode.py                      # everything, 1,000,000 batches per segment
    .venv/bin/python bench/decode.py --quick              # 20,000 batches, smaller growth segments: a few minutes
    .venv/bin/python bench/decode.py --only header,crc --repeat 5 --json /tmp/decode.json
    .venv/bin/python bench/decode.py --only e2e --disk /work/bench-data/disk-2g
    .venv/bin/python bench/decode.py --growth             # private memory, ~100 MiB vs ~2 GiB segment

Segments come from ``bench/segments.py`` (written into ``--data`` once, reused afterwards). Every
measurement runs in a fresh subprocess (so memory is per run), implementations alternating round
by round (``--repeat`` rounds, medians reported) on the same, page-cache-warm file:

* ``header``: visit every batch of ``v2-none``, read base/last offset, producer id, record count,
  transactional flag (batches/s);
* ``crc``: the same plus the batch CRC-32C (batches/s);
* ``decode``: every record of each segment kind (``v2-none`` .. ``v2-zstd``, legacy ``v1-none``,
  ``v1-gzip``): offset, timestamp, key, value, headers (records/s);
* ``dump``: ``python -m forensics dump --deep-iteration --print-data-log`` on ``v2-none`` against
  ``$KAFKA_HOME/bin/kafka-dump-log.sh`` with the same flags (wall clock, output to /dev/null);
* ``e2e``: ``python -m forensics find-hanging DISK --format json --engine local`` on ``--disk`` (MB/s);
* ``growth``: our CRC scan and our full decode on a small and a large ``v2-none`` segment: peak
  private memory of each, which should not grow with the file.

Memory is the peak of ``RssAnon`` (private anonymous pages; mapped file pages are not counted)
of the process and its descendants, polled from ``/proc`` every 10 ms. Our side is called only
through ``bench/ours.py``; the peers live in ``bench/peers.py``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

import dumpcmp  # noqa: E402
import segments  # noqa: E402

PARTS = ("header", "crc", "decode", "dump", "e2e", "growth")
MEASURES = {"header": "header_scan", "crc": "crc_scan", "decode": "decode_records"}
UNITS = {"header": "batches", "crc": "batches", "decode": "records"}
# name -> (module in bench/, class in it or None for the module itself)
IMPLS = {
    "ours": ("ours", None),
    "ours-records": ("ours", "FullRecords"),
    "bare": ("peers", "Bare"),
    "kafka-python": ("peers", "KafkaPython"),
    "aiokafka": ("peers", "AioKafka"),
}
PEERS_OF = {"header": ("ours", "bare", "kafka-python", "aiokafka"), "crc": ("ours", "bare", "kafka-python", "aiokafka"),
            "decode": ("ours", "ours-records", "kafka-python", "aiokafka")}
POLL_S = 0.01
QUICK_BATCHES = 20_000
GROWTH_MIB = (100, 2048)
QUICK_GROWTH_MIB = (10, 200)
FLAT_MIB = 10.0  # "flat": the large segment's peak is at most this much above the small one's
PYTHON = sys.executable


# ---------------------------------------------------------------------------------------------
# the child: one measurement in a fresh interpreter


def resolve(name: str):
    """The implementation object of ``IMPLS[name]`` (a module or a class of static methods)."""
    module, cls = IMPLS[name]
    mod = importlib.import_module(module)
    return getattr(mod, cls) if cls else mod


def own_anon_kib() -> int:
    """This process's private anonymous memory in KiB."""
    return anon_kib(os.getpid())


def child_main(spec: dict) -> int:
    """Run one measurement and print one JSON line: result, timed seconds, memory before timing.

    ``load`` (untimed) prepares the input: the path itself for ours and bare (they open the file
    inside the timed region), the mmap for kafka-python, the file's bytes for aiokafka."""
    impl = resolve(spec["impl"])
    out = {"describe": impl.describe()}
    if spec["measure"] != "describe":
        fn = getattr(impl, MEASURES[spec["measure"]])
        load = getattr(impl, "load", None)
        src = load(spec["path"]) if load else spec["path"]
        out["anon_kib_before"] = own_anon_kib()
        c0, t0 = time.process_time(), time.perf_counter()
        result = fn(src)
        out["seconds"] = time.perf_counter() - t0
        out["cpu_seconds"] = time.process_time() - c0
        out["anon_kib_after"] = own_anon_kib()
        out["result"] = [x if isinstance(x, int) else None for x in result]  # the last record's fields: touched only
    print(json.dumps(out), flush=True)
    return 0


# ---------------------------------------------------------------------------------------------
# /proc: private memory of a process tree


def anon_kib(pid: int) -> int:
    """``RssAnon`` of ``pid`` in KiB (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants (from ``/proc/<pid>/task/*/children``)."""
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return pids


class PeakPoller(threading.Thread):
    """Polls the summed ``RssAnon`` of a process tree every ``POLL_S`` until stopped."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_kib = pid, 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.peak_kib = max(self.peak_kib, sum(anon_kib(p) for p in tree(self.pid)))
            self._stop_event.wait(POLL_S)

    def stop(self) -> int:
        self._stop_event.set()
        self.join()
        return self.peak_kib


@dataclass
class Proc:
    """A finished subprocess: wall seconds, exit code, peak private KiB of its tree, output."""

    wall: float
    rc: int
    peak_kib: int
    stdout: str
    stderr_tail: str


def run_process(cmd: Sequence[str], *, env: dict | None = None, keep_stdout: bool = True) -> Proc:
    """Run ``cmd`` to completion, polling its private memory; stdout kept or sent to /dev/null."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE if keep_stdout else subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=env, cwd=BENCH)
    # cwd is not the repository: `python -m forensics` puts the cwd first on sys.path, and the
    # commands must import forensics from where the children do (editable install or PYTHONPATH)
    poller = PeakPoller(p.pid)
    poller.start()
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    peak = poller.stop()
    tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
    return Proc(wall, p.returncode, peak, (out or b"").decode("utf-8", "replace"), " | ".join(tail))


# ---------------------------------------------------------------------------------------------
# runs


@dataclass
class Run:
    """One run of one implementation (or command) in one round; what ``--json`` lists."""

    part: str
    segment: str
    impl: str
    round: int
    wall: float
    peak_kib: int
    ok: bool
    seconds: float | None = None  # timed region (child measurements; --clock) or wall (commands)
    wall_seconds: float | None = None  # timed region, wall clock (child measurements)
    cpu_seconds: float | None = None  # timed region, CPU time of the process (child measurements)
    count: int | None = None  # batches or records handled
    result: list | None = None
    anon_kib_before: int | None = None
    describe: str = ""
    error: str = ""


def measure(part: str, impl: str, info: segments.SegmentInfo, rnd: int, clock: str = "wall") -> Run:
    """One child run of ``impl`` for ``part`` on the segment ``info``; ``seconds`` is its timed
    region by ``clock`` (``wall``, or ``cpu``: the process's CPU time, less sensitive to other load)."""
    spec = {"impl": impl, "measure": part, "path": str(info.path)}
    proc = run_process([PYTHON, str(Path(__file__).resolve()), "--child", json.dumps(spec)])
    run = Run(part, info.kind, impl, rnd, proc.wall, proc.peak_kib, ok=False)
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        run.error = f"exit {proc.rc}: {proc.stderr_tail or 'no output'}"
        return run
    run.ok, run.wall_seconds, run.cpu_seconds, run.result = True, out["seconds"], out["cpu_seconds"], out["result"]
    run.seconds = run.cpu_seconds if clock == "cpu" else run.wall_seconds
    run.anon_kib_before, run.describe = out["anon_kib_before"], out["describe"]
    run.peak_kib = max(run.peak_kib, out["anon_kib_before"], out["anon_kib_after"])  # a run shorter than a poll
    run.count = run.result[0]  # batches (header, crc) or records (decode)
    return run


def command_run(part: str, segment: str, label: str, rnd: int, cmd: Sequence[str], count: int,
                env: dict | None = None, ok_rc=(0,)) -> Run:
    """One run of an external command (dump, find-hanging), timed by its wall clock."""
    proc = run_process(cmd, env=env, keep_stdout=False)
    run = Run(part, segment, label, rnd, proc.wall, proc.peak_kib, ok=proc.rc in ok_rc, seconds=proc.wall, count=count)
    if not run.ok:
        run.error = f"exit {proc.rc}: {proc.stderr_tail}"
    return run


def alternate(labels: Sequence[str], repeat: int, one: Callable[[str, int], Run], log) -> list[Run]:
    """``repeat`` rounds; inside each round every label runs once, the order rotating per round."""
    runs = []
    for rnd in range(repeat):
        k = rnd % len(labels)
        for label in list(labels[k:]) + list(labels[:k]):
            run = one(label, rnd)
            runs.append(run)
            what = f"{run.seconds:.2f} s" if run.ok else f"FAILED ({run.error})"
            log(f"    round {rnd + 1}/{repeat} {label:<13} {what}, peak {run.peak_kib / 1024:.0f} MiB")
    return runs


def warm(path: Path) -> None:
    """Read a file once so that every run sees it in the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        while os.read(fd, 8 << 20):
            pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------
# summaries


@dataclass
class Row:
    """The summary of the rounds of one implementation on one segment: a table line."""

    part: str
    segment: str
    impl: str
    rate: float | None  # units per second, from the median timed seconds
    median_s: float | None
    min_s: float | None
    max_s: float | None
    peak_mib: float | None  # max over the rounds
    count: int | None
    runs: int
    failed: int
    result: list | None = None
    describe: str = ""
    error: str = ""
    extra: dict[str, float] = field(default_factory=dict)


def summarize(runs: Sequence[Run]) -> Row:
    """Median / min / max seconds of the successful runs, rate from the median, peak over all."""
    good = [r for r in runs if r.ok]
    first = runs[0]
    row = Row(first.part, first.segment, first.impl, None, None, None, None, None, None, len(runs), len(runs) - len(good))
    if not good:
        row.error = runs[-1].error
        return row
    secs = [r.seconds for r in good]
    row.median_s, row.min_s, row.max_s = statistics.median(secs), min(secs), max(secs)
    row.count = good[0].count
    row.rate = row.count / row.median_s if row.median_s else None
    row.peak_mib = max(r.peak_kib for r in good) / 1024
    row.result, row.describe = good[0].result, good[0].describe
    return row


def fmt_rate(x: float | None) -> str:
    """A rate with thousands separators ("error" when the runs failed)."""
    return "error" if x is None else f"{x:,.0f}"


def fmt_ratio(x: float | None) -> str:
    """A ratio as ``1.23x`` ("n/a" when either side is missing)."""
    return "n/a" if x is None else f"{x:.2f}x"


def ratio(a: Row | None, b: Row | None) -> float | None:
    """Rate of ``a`` over rate of ``b``: how many times faster ``a`` is."""
    if a is None or b is None or not a.rate or not b.rate:
        return None
    return a.rate / b.rate


def print_rows(title: str, unit: str, rows: Sequence[Row], notes: dict[str, str], scale: float = 1.0) -> None:
    """One table: rate (divided by ``scale``), timed seconds, peak private memory, ours / impl."""
    print(f"\n{title}")
    print(f"  {'segment':<9} {'impl':<17} {unit + '/s':>14} {'median s':>9} {'min-max s':>13} {'peak MiB':>9} "
          f"{'ours/impl':>10}")
    by_segment: dict[str, list[Row]] = {}
    for r in rows:
        by_segment.setdefault(r.segment, []).append(r)
    for segment, group in by_segment.items():
        ours = next((r for r in group if r.impl == "ours"), None)
        for i, r in enumerate(group):
            spread = f"{r.min_s:.2f}-{r.max_s:.2f}" if r.min_s is not None else "-"
            med = f"{r.median_s:.2f}" if r.median_s is not None else "-"
            peak = f"{r.peak_mib:.1f}" if r.peak_mib is not None else "-"
            rel = "" if r.impl == "ours" else fmt_ratio(ratio(ours, r))
            err = f"  {r.error}" if r.error else (f"  ({r.failed} of {r.runs} runs failed)" if r.failed else "")
            rate = None if r.rate is None else r.rate / scale
            print(f"  {segment if i == 0 else '':<9} {r.impl:<17} {fmt_rate(rate):>14} {med:>9} {spread:>13} "
                  f"{peak:>9} {rel:>10}{err}")
    for impl, note in notes.items():
        if any(r.impl == impl for r in rows):
            print(f"  {impl}: {note}")


def check_agreement(rows: Sequence[Row], expected: dict[str, dict], part: str) -> list[str]:
    """Every implementation must report the same counts and last offsets, and those of the segment
    (header/crc: batches, records, base and last offset, producer id, transactional batches, and
    CRCs verified; decode: records, last offset, last timestamp)."""
    problems = []
    width = {"header": 6, "crc": 7, "decode": 3}[part]
    by_segment: dict[str, list[Row]] = {}
    for r in rows:
        if r.result is not None:
            by_segment.setdefault(r.segment, []).append(r)
    for segment, group in by_segment.items():
        ref = group[0]
        for r in group[1:]:
            if r.result[:width] != ref.result[:width]:
                problems.append(f"{part} {segment}: {r.impl} reports {r.result[:width]}, {ref.impl} {ref.result[:width]}")
        stats = expected.get(segment)
        if not stats:
            continue
        if part == "decode":
            want, got = (stats["records"], stats["last_offset"]), tuple(ref.result[:2])
        else:
            want, got = (stats["batches"], stats["records"], stats["last_offset"]), (ref.result[0], ref.result[1], ref.result[3])
        if got != want:
            problems.append(f"{part} {segment}: {ref.impl} reports {got}, the segment holds {want}")
        if part == "crc" and ref.result[6] != stats["batches"]:
            problems.append(f"crc {segment}: {ref.result[6]} of {stats['batches']} checksums verified")
    return problems


# ---------------------------------------------------------------------------------------------
# the parts


@dataclass
class Context:
    """State of one benchmark invocation: arguments, segments, runs, summaries, skips."""

    args: argparse.Namespace
    batches: int
    segs: dict[str, segments.SegmentInfo] = field(default_factory=dict)
    runs: list[Run] = field(default_factory=list)
    rows: dict[str, list[Row]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    growth: dict[str, dict] = field(default_factory=dict)
    dump_outputs: dict[str, dict] = field(default_factory=dict)
    warmed: set = field(default_factory=set)

    def log(self, msg: str) -> None:
        print(msg, flush=True)

    def segment(self, kind: str, batches: int | None = None) -> segments.SegmentInfo:
        """The segment of ``kind`` (generated if missing), read once into the page cache."""
        info = segments.ensure_segment(self.args.data, kind, batches or self.batches, self.args.seed, log=self.log)
        if info.path not in self.warmed:
            warm(info.path)
            self.warmed.add(info.path)
        if batches is None:
            self.segs[kind] = info
        return info

    def impls(self, part: str) -> list[str]:
        """The implementations that take part in ``part`` (narrowed by ``--impls``)."""
        return [i for i in PEERS_OF[part] if i in self.args.impls]


NOTES = {
    "ours": "opens the file itself (mmap) inside the timed region, via bench/ours.py",
    "bare": "mmap + struct.unpack_from loop (+ crc32c of a memoryview slice): no checks, v2 only",
    "kafka-python": "gets the mmap, mapped outside the timed region; record count from its count field",
    "aiokafka": "needs bytes: file read outside the timed region (its peak includes the file); "
                "record count = lastOffsetDelta + 1 (count field not exposed)",
}


def part_scan(ctx: Context, part: str) -> None:
    """``header`` or ``crc`` on ``v2-none``, or ``decode`` on every segment kind."""
    kinds = ["v2-none"] if part in ("header", "crc") else ctx.args.kinds
    rows = []
    for kind in kinds:
        info = ctx.segment(kind)
        ctx.log(f"  {part} {kind}: {info.size / 1e6:,.0f} MB, {info.batches:,} batches, {info.records:,} records")
        runs = alternate(ctx.impls(part), ctx.args.repeat,
                         lambda impl, rnd: measure(part, impl, info, rnd, ctx.args.clock), ctx.log)
        ctx.runs += runs
        for impl in ctx.impls(part):
            rows.append(summarize([r for r in runs if r.impl == impl]))
    ctx.rows[part] = rows
    ctx.problems += check_agreement(rows, {k: s.stats for k, s in ctx.segs.items()}, part)


def part_dump(ctx: Context) -> None:
    """Our ``dump --deep-iteration --print-data-log`` against Java's kafka-dump-log.sh on every
    ``--dump-kinds`` segment (wall clock, start-up included), then one untimed run of both with
    their outputs compared byte for byte."""
    env = dict(os.environ, KAFKA_FORENSICS_ENGINE="local")
    script, why = dumpcmp.kafka_script(os.environ.get("KAFKA_HOME"))
    if script is None:
        ctx.skipped["dump-java"] = why
    rows = []
    for kind in ctx.args.dump_kinds:
        info = ctx.segment(kind)
        cmds = dumpcmp.dump_commands(PYTHON, info.path, script)
        ctx.log(f"  dump {kind}: {info.size / 1e6:,.0f} MB, {info.records:,} records; {', '.join(cmds)}")
        runs = alternate(list(cmds), ctx.args.repeat, lambda label, rnd: command_run(
            "dump", kind, label, rnd, cmds[label], info.records, env), ctx.log)
        ctx.runs += runs
        rows += [summarize([r for r in runs if r.impl == label]) for label in cmds]
        same, detail = dumpcmp.compare_outputs(cmds, env, BENCH)
        ctx.dump_outputs[kind] = {"same": same, "detail": detail}
        ctx.log(f"    output: {detail}")
        if not same:
            ctx.problems.append(f"dump {kind}: {detail}")
    ctx.rows["dump"] = rows


def disk_bytes(disk: Path) -> int:
    """Bytes of every file under ``disk``."""
    return sum(p.stat().st_size for p in disk.rglob("*") if p.is_file())


def part_e2e(ctx: Context) -> None:
    """``find-hanging`` on a whole synthetic disk (MB/s over every file of the disk)."""
    disk = ctx.args.disk
    if disk is None:
        ctx.skipped["e2e"] = "no --disk given (e.g. --disk /work/bench-data/disk-2g from bench/synth_disk.py)"
        return
    if not disk.is_dir():
        ctx.skipped["e2e"] = f"--disk {disk} is not a directory"
        return
    size = disk_bytes(disk)
    for p in disk.rglob("*.log"):
        warm(p)
    cmd = [PYTHON, "-m", "forensics", "find-hanging", str(disk), "--format", "json", "--engine", "local"]
    ctx.log(f"  e2e find-hanging {disk}: {size / 1e6:,.0f} MB")
    runs = alternate(["ours"], ctx.args.repeat,
                     lambda label, rnd: command_run("e2e", disk.name, label, rnd, cmd, size, ok_rc=(0, 1)), ctx.log)
    ctx.runs += runs
    ctx.rows["e2e"] = [summarize(runs)]


def part_growth(ctx: Context) -> None:
    """Our CRC scan and full decode on a small and a large ``v2-none`` segment: peak private memory."""
    sizes = ctx.args.growth_mib
    for mib in sizes:
        batches = segments.batches_for_bytes(mib << 20, ctx.args.seed)
        info = ctx.segment("v2-none", batches)
        ctx.log(f"  growth {mib} MiB: {info.path.parent.name}, {info.size / 1e6:,.0f} MB")
        for part in ("crc", "decode"):
            run = measure(part, "ours", info, 0)
            run.segment = f"v2-none {mib} MiB"
            ctx.runs.append(run)
            ctx.growth.setdefault(part, {})[mib] = {"bytes": info.size, "peak_kib": run.peak_kib, "ok": run.ok,
                                                     "seconds": run.seconds, "anon_kib_before": run.anon_kib_before,
                                                     "error": run.error}
            what = f"{run.seconds:.2f} s" if run.ok else f"FAILED ({run.error})"
            ctx.log(f"    ours {part:<6} {what}, peak {run.peak_kib / 1024:.1f} MiB")


# ---------------------------------------------------------------------------------------------
# report


def print_report(ctx: Context) -> list[dict]:
    """Tables per part, then the issue's targets with PASS / FAIL / SKIP."""
    units = {"header": "batches", "crc": "batches", "decode": "records", "dump": "records", "e2e": "MB"}
    titles = {
        "header": "Header-only iteration (base/last offset, producer id, count, transactional flag)",
        "crc": "Header + CRC-32C check",
        "decode": "Full record decode (offset, timestamp, key, value, headers of every record)",
        "dump": "dump --deep-iteration --print-data-log, output to /dev/null (wall clock, incl. start-up)",
        "e2e": "find-hanging --format json --engine local (wall clock; MB of every file of the disk / s)",
    }
    print(f"\n=== Results: medians of {ctx.args.repeat} rounds; timed region only for header/crc/decode "
          f"({'CPU time' if ctx.args.clock == 'cpu' else 'wall clock'}); "
          "peak = max private (RssAnon) over the rounds ===")
    for part in ("header", "crc", "decode", "dump", "e2e"):
        if part in ctx.rows:
            print_rows(titles[part], units[part], ctx.rows[part], NOTES if part in MEASURES else {},
                       scale=1e6 if part == "e2e" else 1.0)
    for kind, out in ctx.dump_outputs.items():
        print(f"  dump output {kind}: {'SAME' if out['same'] else 'DIFFERENT'}, {out['detail']}")
    if ctx.growth:
        print("\nPrivate memory growth (ours, one run each; peak RssAnon of the process)")
        small, large = ctx.args.growth_mib
        for part, by_size in ctx.growth.items():
            a, b = by_size.get(small), by_size.get(large)
            cells = [f"{mib} MiB segment ({v['bytes'] / 1e6:,.0f} MB): {v['peak_kib'] / 1024:.1f} MiB"
                     + ("" if v["ok"] else " FAILED") for mib, v in ((small, a), (large, b)) if v]
            print(f"  {part:<6} " + "; ".join(cells))
    for key, why in ctx.skipped.items():
        print(f"\nSKIPPED {key}: {why}")
    if ctx.problems:
        print("\nDISAGREEMENTS (results are not comparable until fixed):")
        for p in ctx.problems:
            print(f"  {p}")
    elif any(part in ctx.rows for part in MEASURES):
        print("\nEvery implementation reported the same counts and last offsets as the segments hold.")
    targets = evaluate_targets(ctx)
    print("\nTargets (issue)")
    for t in targets:
        print(f"  {t['status']:<4}  {t['target']}: {t['detail']}")
    return targets


def _row(ctx: Context, part: str, impl: str, segment: str | None = None) -> Row | None:
    """The summary row of ``impl`` in ``part`` (on ``segment``), if it was measured."""
    return next((r for r in ctx.rows.get(part, []) if r.impl == impl and (segment is None or r.segment == segment)), None)


def _target(name: str, value: float | None, threshold: float, *, strict: bool = False, missing: str = "") -> dict:
    """PASS when ``value`` reaches ``threshold`` (exceeds it if ``strict``), FAIL if not, SKIP if unmeasured."""
    if value is None:
        return {"target": name, "status": "SKIP", "detail": missing or "not measured", "value": None}
    ok = value > threshold if strict else value >= threshold
    return {"target": name, "status": "PASS" if ok else "FAIL", "detail": f"{value:.2f}x", "value": value}


def _per_kind(ctx: Context, part: str, peer: str, kinds: Sequence[str]) -> dict[str, float | None]:
    """ours / ``peer`` per segment kind of ``part`` that ours was measured on."""
    return {k: ratio(_row(ctx, part, "ours", k), _row(ctx, part, peer, k)) for k in kinds if _row(ctx, part, "ours", k)}


def _worst(name: str, per: dict[str, float | None], need: float, kinds: Sequence[str], *, strict: bool = False,
           missing: str = "") -> dict:
    """The target on the worst of ``per`` (every kind listed); SKIP when a kind is missing."""
    if not per or any(v is None for v in per.values()):
        return _target(name, None, need, missing=missing or "not run, or a run failed")
    worst = min(per, key=lambda k: per[k])
    t = _target(name, per[worst], need, strict=strict)
    t["detail"] = ", ".join(f"{k} {v:.2f}x" for k, v in per.items()) + f" (worst {worst})"
    if len(per) < len(kinds):
        t["detail"] += "; not every kind measured"
        t["status"] = "SKIP" if t["status"] == "PASS" else t["status"]
    return t


def evaluate_targets(ctx: Context) -> list[dict]:
    """The issue's targets, computed from the summary rows and the growth figures."""
    out = []
    for peer, need in (("bare", 0.9), ("kafka-python", 3.0)):
        out.append(_target(f"header-only >= {need}x {peer}", ratio(_row(ctx, "header", "ours"), _row(ctx, "header", peer)),
                           need, missing="header part not run or failed"))
    out.append(_target("header+CRC faster than aiokafka", ratio(_row(ctx, "crc", "ours"), _row(ctx, "crc", "aiokafka")),
                       1.0, strict=True, missing="crc part not run or failed"))
    out.append(_worst("full decode >= 3x kafka-python on every v2 codec",
                      _per_kind(ctx, "decode", "kafka-python", segments.V2_KINDS), 3.0, segments.V2_KINDS))
    legacy = _per_kind(ctx, "decode", "kafka-python", segments.LEGACY_KINDS)
    if legacy:
        out.append({"target": "(info) legacy decode vs kafka-python", "status": "INFO", "value": None,
                    "detail": ", ".join(f"{k} {fmt_ratio(v)}" for k, v in legacy.items())})
    out.append(_worst("full decode faster than aiokafka on every codec and magic",
                      _per_kind(ctx, "decode", "aiokafka", segments.KINDS), 1.0, segments.KINDS, strict=True))
    dump = _worst("dump >= 3x Java kafka-dump-log.sh (same output) on every dumped segment",
                  _per_kind(ctx, "dump", "kafka-dump-log.sh", ctx.args.dump_kinds), 3.0, ctx.args.dump_kinds,
                  missing=ctx.skipped.get("dump-java", ""))
    differ = [k for k, v in ctx.dump_outputs.items() if not v["same"]]
    if differ and dump["status"] != "SKIP":  # a faster dump of other bytes is no result
        dump["status"], dump["detail"] = "FAIL", dump["detail"] + f"; output differs on {', '.join(differ)}"
    out.append(dump)
    small, large = ctx.args.growth_mib
    deltas = {p: (v[large]["peak_kib"] - v[small]["peak_kib"]) / 1024 for p, v in ctx.growth.items()
              if small in v and large in v and v[small]["ok"] and v[large]["ok"]}
    name = f"private memory flat from {small} MiB to {large} MiB (grows < {FLAT_MIB:.0f} MiB)"
    if len(deltas) == 2:
        ok = all(d < FLAT_MIB for d in deltas.values())
        out.append({"target": name, "status": "PASS" if ok else "FAIL", "value": max(deltas.values()),
                    "detail": ", ".join(f"{p} {d:+.1f} MiB" for p, d in deltas.items())})
    else:
        out.append({"target": name, "status": "SKIP", "value": None, "detail": "growth part not run or a run failed"})
    return out


# ---------------------------------------------------------------------------------------------
# machine and versions


def machine() -> dict:
    """CPU model, cores, RAM, kernel, Python, load average."""
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / (1 << 20):.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)), "memory": mem,
            "kernel": platform.release(), "python": platform.python_version(), "loadavg": os.getloadavg()}


def versions() -> dict:
    """Installed versions of the project and of every package a measurement depends on."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for dist in ("kafka-forensics", "kafka-python", "aiokafka", "cramjam", "crc32c", "lz4", "python-snappy", "zstandard"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "forensics"], capture_output=True,
                               text=True).stdout.strip()
        out["kafka-forensics"] += f" (git {rev}{', forensics/ modified' if dirty else ''})"
    except OSError:
        pass
    return out


def describe_impls(names: Sequence[str]) -> dict[str, str]:
    """Ask a child per implementation which code it really runs (e.g. aiokafka's C extension)."""
    out = {}
    for name in names:
        proc = run_process([PYTHON, str(Path(__file__).resolve()), "--child", json.dumps({"impl": name, "measure": "describe"})])
        try:
            out[name] = json.loads(proc.stdout.strip().splitlines()[-1])["describe"]
        except (ValueError, IndexError):
            out[name] = f"UNAVAILABLE: {proc.stderr_tail}"
    return out


# ---------------------------------------------------------------------------------------------
# main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Options; ``--child`` (internal) runs one measurement instead of the benchmark."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=segments.DEFAULT_DATA, help="segment directory (default %(default)s)")
    ap.add_argument("--batches", type=int, default=None, help=f"batches per segment (default 1,000,000; --quick {QUICK_BATCHES:,})")
    ap.add_argument("--quick", action="store_true", help=f"{QUICK_BATCHES:,} batches, growth on "
                    f"{QUICK_GROWTH_MIB[0]} / {QUICK_GROWTH_MIB[1]} MiB: a fast smoke run")
    ap.add_argument("--repeat", type=int, default=3, help="rounds per measurement (medians reported)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="time of header/crc/decode runs: wall clock of the timed region (default), or the process's "
                         "CPU time in it (steadier on a machine shared with other work; dump and e2e stay wall clock)")
    ap.add_argument("--only", default=None, help=f"comma-separated parts: {','.join(PARTS)} (default: all)")
    ap.add_argument("--growth", action="store_true", help="only the memory-growth part (= --only growth)")
    ap.add_argument("--growth-mib", default=None, help="small,large segment sizes in MiB for growth "
                    f"(default {GROWTH_MIB[0]},{GROWTH_MIB[1]}; --quick {QUICK_GROWTH_MIB[0]},{QUICK_GROWTH_MIB[1]})")
    ap.add_argument("--kinds", default=",".join(segments.KINDS), help="segments for the decode part (default %(default)s)")
    ap.add_argument("--dump-kinds", default=",".join(segments.KINDS),
                    help="segments for the dump part (default %(default)s)")
    ap.add_argument("--impls", default=",".join(IMPLS), help="implementations to run (default %(default)s)")
    ap.add_argument("--disk", type=Path, default=None, help="synthetic disk for e2e (bench/synth_disk.py); e2e skipped without")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None, help="write every raw number to this file")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child is None:
        a.parts = ["growth"] if a.growth else [p.strip() for p in (a.only or ",".join(PARTS)).split(",") if p.strip()]
        bad = [p for p in a.parts if p not in PARTS] + [k for k in a.kinds.split(",") + a.dump_kinds.split(",")
                                                         if k not in segments.KINDS]
        bad += [i for i in a.impls.split(",") if i not in IMPLS]
        if bad:
            ap.error(f"unknown part / kind / implementation: {', '.join(bad)}")
        a.kinds = a.kinds.split(",")
        a.dump_kinds = a.dump_kinds.split(",")
        a.impls = a.impls.split(",")
        sizes = a.growth_mib or ",".join(map(str, QUICK_GROWTH_MIB if a.quick else GROWTH_MIB))
        a.growth_mib = tuple(int(x) for x in sizes.split(","))
        if len(a.growth_mib) != 2 or a.growth_mib[0] >= a.growth_mib[1]:
            ap.error("--growth-mib takes SMALL,LARGE with SMALL < LARGE")
    return a


def main(argv: Sequence[str] | None = None) -> int:
    """Print the machine, versions and implementations, run the parts, print the report."""
    a = parse_args(argv)
    if a.child is not None:
        return child_main(json.loads(a.child))
    batches = a.batches or (QUICK_BATCHES if a.quick else 1_000_000)
    ctx = Context(a, batches)
    m, v = machine(), versions()
    print(f"Machine: {m['cpu']}, {m['cores']} cores ({m['affinity']} usable), {m['memory']} RAM, "
          f"Linux {m['kernel']}, Python {m['python']}, load average {m['loadavg'][0]:.2f}")
    print("Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()))
    impls = describe_impls([i for i in a.impls if any(i in PEERS_OF[p] for p in a.parts if p in PEERS_OF)] or ["ours"])
    print("Implementations:")
    for name, d in impls.items():
        print(f"  {name:<13} {d}")
    if m["loadavg"][0] > 0.5:
        print(f"WARNING: load average {m['loadavg'][0]:.2f}: other work on this machine makes the figures noisy")
    print(f"Segments: {a.data} ({batches:,} batches each), parts: {', '.join(a.parts)}, {a.repeat} rounds")
    t0 = time.perf_counter()
    for part in a.parts:
        print(f"\n[{part}]", flush=True)
        if part in MEASURES:
            part_scan(ctx, part)
        elif part == "dump":
            part_dump(ctx)
        elif part == "e2e":
            part_e2e(ctx)
        elif part == "growth":
            part_growth(ctx)
    targets = print_report(ctx)
    print(f"\n(total {time.perf_counter() - t0:.0f} s; load average at the end {os.getloadavg()[0]:.2f})")
    if a.json:
        doc = {"machine": m, "versions": v, "implementations": impls, "batches": batches, "repeat": a.repeat,
               "segments": {k: {"path": str(s.path), **s.stats} for k, s in ctx.segs.items()},
               "runs": [asdict(r) for r in ctx.runs], "rows": {p: [asdict(r) for r in rows] for p, rows in ctx.rows.items()},
               "growth": ctx.growth, "dump_outputs": ctx.dump_outputs, "skipped": ctx.skipped, "problems": ctx.problems, "targets": targets}
        a.json.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"raw numbers: {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
