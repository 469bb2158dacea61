"""The mutation sweep: seeded mutations of every distinct real Kafka segment, each checked by the
oracle of :mod:`tests.fuzz.segment_oracle` under a per-case time limit.

Run from the repository root::

    .venv/bin/python -m tests.fuzz.sweep --cases 10000 --seed 7     # the full sweep (C accelerator)
    KAFKA_FORENSICS_PURE=1 .venv/bin/python -m tests.fuzz.sweep --cases 2000
    .venv/bin/python -m tests.fuzz.sweep --seed 7 --case 1234 -v    # replay one case, print its findings

Case ``i`` of seed ``s`` draws from ``random.Random(f"{s}:{i}")``: any case can be replayed alone.
Kinds rotate through :data:`tests.fuzz.mutations.KINDS`. A case that raises, exceeds the time limit or
breaks a rule of the oracle is a failure; exit status 1 if any. ``tests/io/test_mutation_sweep.py`` runs a
sample of the same sweep in the normal suite.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import random
import signal
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from forensics.speedups import describe  # noqa: E402
from tests.fuzz import segment_oracle as oracle  # noqa: E402
from tests.fuzz.mutations import KINDS, Mutant, Source, mutate, real_sources  # noqa: E402

DEFAULT_TIME_LIMIT = 10.0  # seconds per case; the slowest healthy case takes well under 0.5 s


def scratch_dir() -> str | None:
    """A RAM-backed directory for the mutated files when there is one (one file written per case)."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


class CaseTimeout(Exception):
    pass


class Watchdog(threading.Thread):
    """Ends the process, with every thread's stack on stderr, when a case runs far past its limit: a
    loop inside C code cannot be interrupted by SIGALRM. Arming it costs one assignment per case."""

    def __init__(self, limit: float) -> None:
        super().__init__(daemon=True, name="sweep-watchdog")
        self.limit = limit
        self.case: str | None = None
        self.since: float | None = None
        self.stopped = threading.Event()

    def arm(self, case: str) -> None:
        self.case, self.since = case, time.monotonic()

    def disarm(self) -> None:
        self.since = None

    def run(self) -> None:
        while not self.stopped.wait(0.5):
            since = self.since
            if since is not None and time.monotonic() - since > self.limit:
                sys.stderr.write(f"\nHANG: {self.case}: no result after {self.limit:.0f} s\n")
                faulthandler.dump_traceback(all_threads=True)
                os._exit(3)


class Failure(NamedTuple):
    index: int
    kind: str
    source: str
    mutation: str
    problem: str


class Report(NamedTuple):
    cases: Counter  # kind -> cases run
    seconds: dict[str, float]  # kind -> time spent
    tally: dict[str, Counter]  # kind -> oracle tallies
    findings: dict[str, Counter]  # kind -> finding kinds reported
    failures: list[Failure]
    slowest: float
    engine: str

    def lines(self) -> list[str]:
        out = [f"{'kind':<10} {'cases':>6} {'failed':>6} {'seconds':>8}  batches checked"]
        failed = Counter(f.kind for f in self.failures)
        for kind in sorted(self.cases):
            tally = ", ".join(f"{k}: {v}" for k, v in sorted(self.tally.get(kind, Counter()).items()))
            out.append(f"{kind:<10} {self.cases[kind]:>6} {failed[kind]:>6} {self.seconds[kind]:>8.1f}  {tally}")
            found = ", ".join(f"{k.value}: {v}" for k, v in self.findings.get(kind, Counter()).most_common())
            out.append(f"{'':<10} findings: {found}")
        out.append(f"total {sum(self.cases.values())} cases, {len(self.failures)} failed, "
                   f"{sum(self.seconds.values()):.1f} s, slowest case {self.slowest:.3f} s ({self.engine})")
        return out


def prepare(workdir: Path, sources: list[Source] | None = None) -> list[Source]:
    """Sources with their batch positions, each checked to read cleanly; their baselines are cached."""
    out = []
    for src in sources if sources is not None else real_sources():
        path = workdir / src.file_name
        path.write_bytes(src.data)
        original = oracle.baseline(oracle.read(str(path), src))
        src = src._replace(batches=tuple((b.position, b.end) for b in original))
        _BASELINES[src.sha256] = original
        _GENUINE.update(oracle.covered_bytes(src.data, b.position, b.end, b.magic) for b in original)
        out.append(src)
    return out


_BASELINES: dict[str, list[oracle.Batch]] = {}
_GENUINE: set[bytes] = set()  # every batch of every source, byte for byte


def _alarm(signum, frame):
    raise CaseTimeout()


def draw(seed: int, index: int, sources: list[Source]) -> tuple:
    rng = random.Random(f"{seed}:{index}")
    kind = KINDS[index % len(KINDS)]
    src = rng.choice(sources)
    others = [s for s in sources if s.sha256 != src.sha256] or sources
    return kind, src, mutate(rng, kind, src, others)


def run_case(workdir: Path, src: Source, m: Mutant, time_limit: float, watchdog: Watchdog | None = None):
    """(read result or None, problems, seconds) for one mutated file."""
    path = workdir / src.file_name
    path.write_bytes(bytes(m.data))
    use_alarm = hasattr(signal, "setitimer") and signal.getsignal(signal.SIGALRM) is _alarm
    if watchdog is not None:
        watchdog.arm(f"{src.name}: {m.describe()}")
    start = time.perf_counter()
    try:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, time_limit)
        got = oracle.read(str(path), src)
    except CaseTimeout:
        return None, [f"no result after {time_limit} s (hang?)"], time.perf_counter() - start
    except Exception as exc:  # noqa: BLE001 - what the sweep hunts
        return None, [f"raised {type(exc).__name__}: {exc}"], time.perf_counter() - start
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if watchdog is not None:
            watchdog.disarm()
    took = time.perf_counter() - start
    verdict = oracle.check(src, _BASELINES[src.sha256], m, got, _GENUINE)
    problems = list(verdict.problems)
    if took > time_limit:
        problems.append(f"took {took:.1f} s (limit {time_limit} s)")
    return (got, verdict.tally), problems, took


def sweep(cases: Iterable[int], seed: int, time_limit: float = DEFAULT_TIME_LIMIT, workdir: Path | None = None,
          progress=None) -> Report:
    with tempfile.TemporaryDirectory(prefix="kf-sweep-", dir=scratch_dir()) as tmp:
        work = Path(workdir or tmp)
        sources = prepare(work)
        counts, seconds = Counter(), defaultdict(float)
        tally: dict[str, Counter] = defaultdict(Counter)
        found: dict[str, Counter] = defaultdict(Counter)
        failures: list[Failure] = []
        slowest = 0.0
        old = signal.signal(signal.SIGALRM, _alarm) if hasattr(signal, "SIGALRM") else None
        watchdog = Watchdog(time_limit * 3 + 5)
        watchdog.start()
        try:
            for done, i in enumerate(cases, 1):
                kind, src, m = draw(seed, i, sources)
                result, problems, took = run_case(work, src, m, time_limit, watchdog)
                counts[kind] += 1
                seconds[kind] += took
                slowest = max(slowest, took)
                if result is not None:
                    got, t = result
                    tally[kind].update(t)
                    found[kind].update(f.kind for f in got.findings)
                for p in problems:
                    failures.append(Failure(i, kind, src.name, m.describe(), p))
                if progress is not None and done % 1000 == 0:
                    progress(done, len(failures))
        finally:
            watchdog.stopped.set()
            if old is not None:
                signal.signal(signal.SIGALRM, old)
    return Report(counts, dict(seconds), dict(tally), dict(found), failures, slowest, describe())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--case", type=int, nargs="+", help="run only these case numbers")
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)
    parser.add_argument("-v", "--verbose", action="store_true", help="print every failure in full")
    args = parser.parse_args(argv)
    cases = args.case if args.case else range(args.cases)
    progress = None if args.case else (lambda n, f: print(f"{n} cases, {f} failures", file=sys.stderr))
    report = sweep(cases, args.seed, args.time_limit, progress=progress)
    for f in report.failures[: None if args.verbose else 20]:
        print(f"FAIL case {f.index} [{f.kind}] {f.source}: {f.mutation}\n    {f.problem}")
    if args.case and args.verbose:
        with tempfile.TemporaryDirectory(dir=scratch_dir()) as tmp:
            sources = prepare(Path(tmp))
            for i in args.case:
                _, src, m = draw(args.seed, i, sources)
                result, _, _ = run_case(Path(tmp), src, m, args.time_limit)
                if result is not None:
                    print(f"case {i}: {oracle.describe_findings(result[0], 50)}")
                    print(f"  frames: {oracle.frames_summary(result[0])}")
    print("\n".join(report.lines()))
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
