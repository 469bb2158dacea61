"""A golden run: every command, in each of its output formats, on every disk we hold (the example disk,
the committed fixtures, the generated scenario disks, the real disks of ../shared), written to a
directory, so that a change meant to keep output byte-identical can be shown to (docs/developer.md).

    python -m tests.golden run OUT [--filter REGEX] [--jobs N]   # one run of the installed CLI
    python -m tests.golden compare BASE NEW [--subset]            # same=… diff=…, then each diff

Each case writes ``NAME.out``, ``NAME.err`` and ``NAME.rc`` (and the report's HTML, a manifest where
one is asked for). The checkout's path and the temporary directory of the generated disks are
replaced by fixed words, so that two checkouts (or two runs) compare."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# ../shared of the main checkout, also from a worktree beside it (/work/wt/NAME)
SHARED_ROOT = next((p.resolve() for p in (REPO.parent / "shared", REPO.parent.parent / "shared") if p.is_dir()),
                   REPO.parent / "shared")
SHARED = SHARED_ROOT / "real-kafka" / "4.1.0"
# Every path a case names has the same text (so the same length, so the same wrapping of the lines that
# show it) in every checkout: the checkout's fixtures relative to the checkout (the cases run there), the
# shared disks by their resolved path, the generated disks and the written files under one temporary
# directory (its name as long in every run), normalised afterwards.
FIXTURES = Path("fixtures")
# The output depends on these; the run sets them (as tests/conftest.py does for the suite).
ENV = {"COLUMNS": "120", "LINES": "40", "TERM": "xterm-256color", "TZ": "UTC", "LC_ALL": "C.UTF-8",
       "LANG": "C.UTF-8", "NO_COLOR": "1"}
FORMATS = {"scan": ("table", "json"), "find-hanging": ("table", "text", "json", "jsonl", "csv"),
           "list": ("table", "json", "csv"), "describe": ("table", "json"),
           "describe-producers": ("table", "json")}
DUMP_SUFFIXES = (".log", ".index", ".timeindex", ".snapshot", ".checkpoint")
DUMPS_PER_DISK = 6


def disks(scratch: Path) -> list[tuple[str, Path, list[str]]]:
    """(name, directory, extra arguments) of every disk, the generated ones built into ``scratch``."""
    out: list[tuple[str, Path, list[str]]] = [("example", FIXTURES / "example-disk", [])]
    for kind in ("kraft-tv2", "kraft-rv3.9-tv0"):
        out.append((f"real-{kind}", FIXTURES / "real" / kind / "disk", []))
        if (SHARED / kind / "data").is_dir():
            out.append((f"shared-{kind}", SHARED / kind / "data", []))
    for d in sorted((REPO / FIXTURES / "live").iterdir()):
        if d.is_dir() and d.name != "truth":
            out.append((f"live-{d.name}", FIXTURES / "live" / d.name, []))
    for module, folder in (("fixtures.scenarios", "scenarios"), ("fixtures.hanging_scenarios", "hanging-scenarios")):
        target = scratch / folder
        subprocess.run([sys.executable, "-m", module, "all", str(target)], cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL)
        for d in sorted(target.iterdir()):
            extra: list[str] = []
            expected = REPO / "fixtures" / folder / d.name / "expected.json"
            if expected.is_file():
                as_of = json.loads(expected.read_text()).get("asOf")
                if as_of is not None:
                    extra = ["--as-of", str(as_of)]
            out.append((f"{folder}-{d.name}", d, extra))
    return [(n, p, e) for n, p, e in out if (REPO / p).is_dir()]


def cases(scratch: Path, out: Path) -> list[tuple[str, list[str]]]:
    cli = [sys.executable, "-m", "forensics"]
    found: list[tuple[str, list[str]]] = []
    for name, disk, extra in disks(scratch):
        timed = extra  # --as-of, for the commands that take it
        for fmt in FORMATS["scan"]:
            found.append((f"{name}.scan.{fmt}", cli + ["scan", str(disk), "--format", fmt, "--no-progress"]))
        for fmt in FORMATS["find-hanging"]:
            found.append((f"{name}.find-hanging.{fmt}",
                          cli + ["find-hanging", str(disk), "--all", "--format", fmt, "--no-progress"] + timed))
        for fmt in FORMATS["list"]:
            found.append((f"{name}.list.{fmt}", cli + ["list", str(disk), "--format", fmt, "--no-progress"] + timed))
        aborts = cli + ["abort-commands", str(disk), "--bootstrap-server", "kafka-1:9092", "--no-progress"] + timed
        found.append((f"{name}.abort-commands", aborts))
        found.append((f"{name}.abort-commands.armed", aborts + ["--arm-unverifiable", "--redact"]))
        found.append((f"{name}.report", cli + ["report", str(disk), "--out", str(out / f"{name}.report.html"),
                                               "--overwrite", "--bootstrap-server", "kafka-1:9092",
                                               "--no-progress"] + timed))
        found.append((f"{name}.manifest", cli + ["find-hanging", str(disk), "--no-progress", "--manifest",
                                                 str(out / f"{name}.manifest.json")] + timed))
        txn_id, partition = first_ids(cli, disk, timed)
        if txn_id is not None:
            for fmt in FORMATS["describe"]:
                found.append((f"{name}.describe.{fmt}", cli + ["describe", str(disk), "--transactional-id", txn_id,
                                                               "--format", fmt, "--no-progress"] + timed))
        if partition is not None:
            topic, number = partition
            for fmt in FORMATS["describe-producers"]:
                found.append((f"{name}.describe-producers.{fmt}",
                              cli + ["describe-producers", str(disk), "--topic", topic, "--partition", str(number),
                                     "--format", fmt, "--no-progress", "--timeline"]))
        files = sorted(p.relative_to(REPO) if p.is_relative_to(REPO) else p
                       for p in (REPO / disk).rglob("*") if p.is_file() and not p.is_symlink() and p.suffix in DUMP_SUFFIXES)
        for i, f in enumerate(files[:: max(1, len(files) // DUMPS_PER_DISK)][:DUMPS_PER_DISK]):
            decoder = (["--transaction-log-decoder"] if "__transaction_state" in str(f)
                       else ["--cluster-metadata-decoder"] if "__cluster_metadata" in str(f) else [])
            found.append((f"{name}.dump{i}", cli + ["dump", "--files", str(f)]))
            found.append((f"{name}.dump{i}.deep", cli + ["dump", "--files", str(f), "--deep-iteration",
                                                         "--print-data-log"] + decoder))
            found.append((f"{name}.dump{i}.jsonl", cli + ["dump", "--files", str(f), "--format", "jsonl",
                                                          "--deep-iteration"] + decoder))
    return found


def first_ids(cli: list[str], disk: Path, timed: list[str]) -> tuple[str | None, tuple[str, int] | None]:
    """A transactional id the coordinators hold and a partition of a data topic, to describe."""
    env = {**os.environ, **ENV}
    txn_id = None
    listed = subprocess.run(cli + ["list", str(disk), "--format", "json", "--no-progress"] + timed,
                            capture_output=True, text=True, env=env, cwd=REPO)
    try:
        rows = json.loads(listed.stdout)
        rows = rows.get("rows", []) if isinstance(rows, dict) else rows
        txn_id = next((r.get("transactionalId") for r in rows if isinstance(r, dict)), None)
    except (ValueError, AttributeError):
        pass
    partition = None
    scanned = subprocess.run(cli + ["scan", str(disk), "--format", "json", "--no-progress"],
                             capture_output=True, text=True, env=env, cwd=REPO)
    try:
        doc = json.loads(scanned.stdout)
        for p in (p for d in doc.get("logDirs", []) for p in d.get("partitions", [])):
            if not str(p.get("topic", "_")).startswith("_"):
                partition = (p["topic"], int(p["partition"]))
                break
    except (ValueError, AttributeError, KeyError, TypeError):
        pass
    return txn_id, partition


def run(out: Path, pattern: str | None, jobs: int) -> int:
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="golden-", dir="/tmp"))
    written = scratch / "written"
    written.mkdir()
    try:
        todo = [(n, a) for n, a in cases(scratch, written) if pattern is None or re.search(pattern, n)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_FORENSICS_")} | ENV

        def one(case: tuple[str, list[str]]) -> None:
            name, argv = case
            done = subprocess.run(argv, capture_output=True, env=env, cwd=REPO)
            for suffix, data in (("out", done.stdout), ("err", done.stderr), ("rc", b"%d\n" % done.returncode)):
                (out / f"{name}.{suffix}").write_bytes(normalise(data, scratch, written))

        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, todo))
        for file in written.iterdir():
            data = normalise(file.read_bytes(), scratch, written)
            (out / file.name).write_bytes(normalise_manifest(data) if file.name.endswith(".manifest.json") else data)
        print(f"{len(todo)} cases in {out}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


# The manifest's digest, as its writer reports it on stderr.
MANIFEST_DIGEST = re.compile(rb"(manifest: \S+ \(sha256\s+)[0-9a-f]{64}")
# How far a checkout's file times (when it was checked out) are from the newest record
CHECKOUT_AGE = re.compile(rb"(file times look like copy times: )[^;<]*?( after the newest record)")
# A manifest's run times and file times (a checkout's own), and the digest over them.
RUN_TIMES = re.compile(rb'("(?:started|ended|mtime)(?:Ms|Ns)?": )("[^"]*"|\d+)')
SELF_DIGEST = re.compile(rb'("algorithm": "sha256",\s*"value": )"[0-9a-f]{64}"(\s*}\s*}?\s*)$')


def normalise(data: bytes, scratch: Path, out: Path) -> bytes:
    for path, word in ((str(out), "<OUT>"), (str(scratch), "<GENERATED>"), (str(SHARED_ROOT), "<SHARED>"),
                       (str(REPO), "<REPO>")):
        data = data.replace(path.encode(), word.encode())
    return CHECKOUT_AGE.sub(rb"\1<AGE>\2", MANIFEST_DIGEST.sub(rb"\1<DIGEST>", data))


def normalise_manifest(data: bytes) -> bytes:
    return SELF_DIGEST.sub(rb'\1"<DIGEST>"\2', RUN_TIMES.sub(rb"\1<TIME>", data))


def compare(base: Path, new: Path, subset: bool = False) -> int:
    """Every file of both runs (``subset``: of ``new`` alone, a ``--filter`` run against a whole one)."""
    names = sorted({p.name for p in new.iterdir()} | (set() if subset else {p.name for p in base.iterdir()}))
    same = diff = 0
    for name in names:
        a, b = base / name, new / name
        if a.is_file() and b.is_file() and a.read_bytes() == b.read_bytes():
            same += 1
            continue
        diff += 1
        print(f"--- {name}")
        if a.is_file() and b.is_file():
            lines = difflib.unified_diff(a.read_text(errors="replace").splitlines(),
                                         b.read_text(errors="replace").splitlines(), lineterm="", n=1)
            print("\n".join(list(lines)[2:40]))
        else:
            print("only in", base if a.is_file() else new)
            sys.stdout.flush()
    print(f"same={same} diff={diff}")
    return 1 if diff else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("--filter")
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    c = sub.add_parser("compare")
    c.add_argument("base", type=Path)
    c.add_argument("new", type=Path)
    c.add_argument("--subset", action="store_true", help="only the cases NEW holds (NEW made with --filter)")
    args = ap.parse_args(argv)
    if args.what == "run":
        return run(args.out, args.filter, args.jobs)
    return compare(args.base, args.new, args.subset)


if __name__ == "__main__":
    sys.exit(main())
