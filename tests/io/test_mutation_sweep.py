"""Ten thousand seeded mutations of the real Kafka 4.1.0 segments: no traceback, no hang, a finding for
every damaged batch, every undamaged batch still decoded (issue 7, "Done means").

The sweep (``tests/fuzz/sweep.py``) draws each case from ``random.Random(f"{seed}:{i}")``: a mutation kind
(bit flips, byte sets, truncations, zero fills, zeroed or preallocated tails, splices with other real
segments, inserts, deletes, header-field damage including lengths claiming gigabytes and offsets at the
int64 limits, and 2-4 of these at once) and one of the distinct non-empty segments under
``fixtures/real``. Each mutated file is read by the dump report and by the scan/rebuild unit reader,
under a per-case time limit (SIGALRM, plus a watchdog thread that ends the process with every stack if
C code loops), and checked by ``tests/fuzz/segment_oracle.py`` (its docstring defines "intact",
"damaged", "uncovered" and "removed" batches and what each requires).

``KAFKA_FORENSICS_SWEEP_CASES`` (default 10000, about 40 s; the pure-Python path, ``KAFKA_FORENSICS_PURE=1``,
takes about a third longer) and ``KAFKA_FORENSICS_SWEEP_SEED`` (default 7) choose the sample;
``python -m tests.fuzz.sweep`` runs the same sweep from the command line (tests/fuzz/README.md).
The last tests check that the oracle itself fails on a reader that hides damage or loses a batch.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from forensics.io.frames import Frame
from tests.fuzz import segment_oracle as oracle
from tests.fuzz import sweep
from tests.fuzz.mutations import KINDS, Mutant, real_sources

CASES = int(os.environ.get("KAFKA_FORENSICS_SWEEP_CASES", "10000"))
SEED = int(os.environ.get("KAFKA_FORENSICS_SWEEP_SEED", "7"))


@pytest.fixture(scope="module")
def report() -> sweep.Report:
    return sweep.sweep(range(CASES), SEED)


@pytest.mark.slow  # the 10,000-case sweep: about a minute
def test_no_traceback_no_hang_no_missed_damage_no_lost_batch(report):
    shown = "\n".join(f"case {f.index} [{f.kind}] {f.source}: {f.mutation}\n    {f.problem}" for f in report.failures[:25])
    assert not report.failures, f"{len(report.failures)} problems (replay: python -m tests.fuzz.sweep --seed {SEED} " \
                                f"--case N -v):\n{shown}"
    assert report.slowest < sweep.DEFAULT_TIME_LIMIT


@pytest.mark.slow  # the 10,000-case sweep: about a minute
def test_every_mutation_kind_ran_and_damaged_something(report):
    assert sum(report.cases.values()) == CASES
    assert set(report.cases) == set(KINDS) and min(report.cases.values()) >= CASES // len(KINDS)
    total = Counter()
    for kind in KINDS:
        tally = report.tally[kind]
        total.update(tally)
        assert tally["intact"] > 0, kind
        assert sum(report.findings[kind].values()) > 0, f"{kind}: no finding at all"
        assert tally["damaged: reported"] + tally["removed: reported between its neighbours"] > 0, kind
    assert report.tally["splice"]["spliced-in or shifted batch decoded"] > 0
    assert report.tally["truncate"]["removed whole on batch boundaries (undetectable)"] > 0
    assert report.tally["header"]["uncovered: decoded showing the changed field"] > 0
    assert total["intact"] > 10 * CASES  # undamaged batches checked: header and records, one by one


# -- the oracle can fail ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """A real segment with a bit of one batch's records flipped, read for real (the oracle accepts it)."""
    work = tmp_path_factory.mktemp("oracle")
    src = next(s for s in sweep.prepare(work, real_sources()) if s.name.endswith("b-txn-aborts-0/00000000000000000000.log"))
    p, e = src.batches[2]
    m = Mutant(src.data)
    m.flip((p + e) // 2, 0)
    path = work / src.file_name
    path.write_bytes(bytes(m.data))
    got = oracle.read(str(path), src)
    assert not oracle.check(src, sweep._BASELINES[src.sha256], m, got, sweep._GENUINE).problems
    return src, m, got, (p, e)


def verdict(case, got):
    src, m, _, _ = case
    return oracle.check(src, sweep._BASELINES[src.sha256], m, got, sweep._GENUINE).problems


def test_oracle_fails_a_reader_that_hides_damage(case):
    got = case[2]
    problems = verdict(case, got._replace(findings=[]))
    assert any("has no finding" in p for p in problems), problems


def test_oracle_fails_a_reader_that_loses_an_undamaged_batch(case):
    got, e = case[2], case[3][1]
    frames = [f for f in got.frames if f.position != e]  # the batch after the damaged one
    assert any("is not framed" in x for x in verdict(case, got._replace(frames=frames)))
    headers = dict(got.headers)
    headers[e] = headers[e]._replace(producer_epoch=headers[e].producer_epoch + 1)
    assert any("another header" in x for x in verdict(case, got._replace(headers=headers)))
    records = dict(got.records)
    records[e] = records[e][:-1]
    assert any("other records" in x for x in verdict(case, got._replace(records=records)))


def test_oracle_fails_a_reader_that_calls_damaged_bytes_valid(case):
    got, p = case[2], case[3][0]
    frames = [f._replace(crc_ok=True) if f.position == p else f for f in got.frames]
    assert any("verifies but is no batch Kafka wrote" in x for x in verdict(case, got._replace(frames=frames)))
    fake = Frame(p + 1, 30, 2, 0, 0, True)
    frames = sorted(got.frames + [fake], key=lambda f: f.position)
    assert any(x.startswith(f"frame at {p + 1} (30 bytes) verifies") for x in verdict(case, got._replace(frames=frames)))
