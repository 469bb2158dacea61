"""Differential test: our dump against Kafka 4.1's own kafka-dump-log.sh output.

Every file under ../shared/real-kafka/4.1.0/<run>/data that Kafka dumped (dumps/<partition>/<file>.dump.txt,
first line = the exact command) is dumped by us with the same options; stdout must be identical,
with the text written per batch and in runs (the C run writer), with and without the accelerator.
The committed copies under fixtures/real/ run the same comparison when ../shared is absent.
"""

from __future__ import annotations

import io
import os
from dataclasses import replace
from pathlib import Path

import pytest

from forensics.render.dump_text import render_dump_text
from forensics.report.dump import DumpOptions, dump_file
from tests.fuzz.strategies import pure_python
from tests.oracle import shared_dir

REPO = Path(__file__).resolve().parents[2]
SHARED = shared_dir() / "real-kafka" / "4.1.0"
FIXTURES = REPO / "fixtures" / "real"


def options_from_command(line: str) -> DumpOptions:
    words = line.lstrip("# ").split()
    decoder = None
    for flag, name in (("--transaction-log-decoder", "transaction-log"), ("--offsets-decoder", "offsets"),
                       ("--cluster-metadata-decoder", "cluster-metadata")):
        if flag in words:
            decoder = name
    return DumpOptions(deep_iteration="--deep-iteration" in words, print_data_log="--print-data-log" in words,
                       decoder=decoder)


def dump_cases(root: Path):
    cases = []
    if not root.is_dir():
        return cases
    for run in sorted(p for p in root.iterdir() if p.is_dir()):
        dumps = run / "dumps"
        if not dumps.is_dir():
            continue
        for dump in sorted(dumps.glob("*/*.dump.txt")):
            rel = str(dump.relative_to(dumps))[: -len(".dump.txt")]
            if (run / "data" / rel).exists() or (run / rel).exists():
                cases.append(pytest.param(run, rel, dump, id=f"{run.name}/{rel}"))
    return cases


def our_dump(data_dir: Path, rel: str, options: DumpOptions) -> tuple:
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(data_dir)
    try:
        render_dump_text(dump_file(rel, options), out, err)
    finally:
        os.chdir(cwd)
    return out.getvalue(), err.getvalue()


def check(run: Path, rel: str, dump: Path) -> None:
    """Kafka's text, from the rows of each batch (``--format json``'s path) and from runs of
    batches (the text dump of the command line: ``native.dump_batches``), in C and in pure Python."""
    lines = dump.read_text(encoding="utf-8").split("\n")
    options = options_from_command(lines[0])
    expected = "\n".join(lines[1:]).rstrip("\n")
    data_dir = run / "data" if (run / "data").is_dir() else run
    runs = replace(options, batch_runs=True)
    for name, opts in (("rows", options), ("runs", runs)):
        got, err = our_dump(data_dir, rel, opts)
        assert got.rstrip("\n") == expected, f"{rel}: dump ({name}) differs from kafka-dump-log.sh\n{err}"
    with pure_python():
        got, err = our_dump(data_dir, rel, runs)
    assert got.rstrip("\n") == expected, f"{rel}: dump (runs, pure Python) differs from kafka-dump-log.sh\n{err}"


@pytest.mark.parametrize("run,rel,dump", dump_cases(SHARED))
def test_shared_real_kafka_dumps(run, rel, dump):
    check(run, rel, dump)


@pytest.mark.parametrize("run,rel,dump", dump_cases(FIXTURES))
def test_committed_real_fixture_dumps(run, rel, dump):
    check(run, rel, dump)


def test_some_real_dumps_exist():
    """The committed fixtures alone must give this test something to compare."""
    assert len(dump_cases(FIXTURES)) >= 5
