"""Start-up: ``kafka-forensics --version``, ``--help`` and a ``dump`` of one small segment, each as a
ratio to ``python -c "import typer, rich.console"`` (the price of the two libraries every command
line of this kind pays), measured in one run on this machine.

Each round runs the baseline and the three commands once, in an order that rotates from round to
round, so that a drift of the machine (other work, frequency) hits them all alike; a command's
ratio is taken round by round against that round's baseline, and the medians are printed: wall
time and CPU time (user + sys, from the kernel's accounting of the finished child), with the load
average before and after. Bytecode is cached first (``PYTHONDONTWRITEBYTECODE`` is dropped for the
children and untimed warm-up rounds write it), as an installed package has it.

    .venv/bin/python bench/startup.py                  # 20 rounds
    .venv/bin/python bench/startup.py --rounds 40 --json startup.json
    PYTHONPATH=/path/to/other/checkout .venv/bin/python bench/startup.py --cli ".venv/bin/python -P -m forensics"

The goal (issue 23): every ratio within 1.6x. Nothing here asserts it; docs/performance.md,
"Start-up", has the figures measured.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEGMENT = "fixtures/example-disk/broker-1/orders-0/00000000000000000000.log"
GOAL = 1.6
BASELINE = "import typer, rich.console"


def _cli() -> list[str]:
    """The ``kafka-forensics`` script beside this interpreter (what a user runs), else ``python -m forensics``."""
    script = Path(sys.executable).parent / "kafka-forensics"
    return [str(script)] if script.exists() else [sys.executable, "-m", "forensics"]


def commands(cli: list[str]) -> dict[str, list[str]]:
    return {
        "baseline": [sys.executable, "-c", BASELINE],
        "--version": cli + ["--version"],
        "--help": cli + ["--help"],
        "dump": cli + ["dump", SEGMENT],
    }


def _once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``argv``, its output read and thrown away."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode(errors='replace')}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(rounds: int, warmup: int, cli: list[str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("KAFKA_FORENSICS_PURE", None)
    cmds = commands(cli)
    names = list(cmds)
    runs: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    load_before = os.getloadavg()
    for r in range(warmup + rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        got = {n: _once(cmds[n], env) for n in order}
        if r >= warmup:
            for n in names:
                runs[n].append(got[n])
    load_after = os.getloadavg()
    base = runs["baseline"]
    out = {"rounds": rounds, "cpus": os.cpu_count(), "load_before": load_before, "load_after": load_after,
           "python": sys.version.split()[0], "cli": " ".join(cli), "baseline": f'python -c "{BASELINE}"',
           "commands": {}}
    for n in names:
        walls = [w for w, _ in runs[n]]
        cpus = [c for _, c in runs[n]]
        row = {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus)}
        if n != "baseline":
            row["wall_ratio"] = statistics.median(w / b for (w, _), (b, _) in zip(runs[n], base))
            row["cpu_ratio"] = statistics.median(c / b for (_, c), (_, b) in zip(runs[n], base) if b > 0)
        out["commands"][n] = row
    return out


def show(result: dict) -> str:
    lines = [f"start-up, {result['rounds']} interleaved rounds, {result['cpus']} CPUs, Python {result['python']}; "
             f"load average {result['load_before'][0]:.2f} before, {result['load_after'][0]:.2f} after",
             f"baseline: {result['baseline']}; the command line: {result['cli']}",
             "",
             f"{'command':<12} {'wall (median)':>14} {'CPU (median)':>13} {'wall ratio':>11} {'CPU ratio':>10}  "
             f"goal <= {GOAL}x"]
    for name, row in result["commands"].items():
        if name == "baseline":
            lines.append(f"{name:<12} {row['wall_s']:>12.3f} s {row['cpu_s']:>11.3f} s {'1':>11} {'1':>10}")
            continue
        worst = max(row["wall_ratio"], row["cpu_ratio"])
        lines.append(f"{name:<12} {row['wall_s']:>12.3f} s {row['cpu_s']:>11.3f} s {row['wall_ratio']:>10.2f}x "
                     f"{row['cpu_ratio']:>9.2f}x  {'met' if worst <= GOAL else 'NOT met'}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="timed rounds (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds first (default 2; they write bytecode)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--cli", metavar="COMMAND", help="the command line to time instead of the kafka-forensics "
                        "script beside this interpreter (e.g. \".venv/bin/python -P -m forensics\" with PYTHONPATH "
                        "set to another checkout, to time it the same way)")
    args = parser.parse_args()
    result = measure(args.rounds, args.warmup, shlex.split(args.cli) if args.cli else _cli())
    print(show(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
