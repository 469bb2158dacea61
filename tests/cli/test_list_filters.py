"""``list``'s filters from Kafka 4.1's ``kafka-transactions.sh list`` (issue 24, item 9), with the tool's
names and its coordinator's semantics (TransactionStateManager.listTransactionStates in the 4.1 broker):
``--duration-filter MS`` (< 0: every id; else only ids with ``now - txnStartTimestamp > MS``, now being
our --as-of) and ``--transactional-id-pattern REGEX`` (the whole id matches; empty: no filter)."""

from __future__ import annotations

from tests.machine_output import rows_of
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from forensics.cli.app import app
from forensics.report.state import _running_longer

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
AS_OF = 1767225620000  # 2026-01-01T00:00:20Z, after every transaction of the example disk began


def run(*args: str):
    return CliRunner().invoke(app, ["list", str(EXAMPLE), *args], env={"KAFKA_FORENSICS_ENGINE": "local"})


def rows(*args: str) -> list[dict]:
    done = run("--format", "json", *args)
    assert done.exit_code == 0, done.stderr
    return rows_of(done.stdout)


def ids(*args: str) -> list[str]:
    return [r["transactionalId"] for r in rows(*args)]


def started() -> dict[str, int]:
    """Each id's transaction start time, as the coordinator recorded it (-1: none)."""
    return {r["transactionalId"]: r["currentTransactionStartTimeMs"] if r["currentTransactionStartTimeMs"]
            is not None else -1 for r in rows()}


def test_duration_filter_keeps_the_ids_running_longer_than_it():
    starts = started()
    assert len(set(starts.values())) == len(starts) == 3  # three distinct ages to cut between
    for _, start in sorted(starts.items(), key=lambda kv: kv[1]):
        age = AS_OF - start
        for duration in (age - 1, age, age + 1):
            want = [tid for tid, s in starts.items() if AS_OF - s > duration]  # Kafka: <= is left out
            assert ids("--duration-filter", str(duration), "--as-of", str(AS_OF)) == want, duration
    assert ids("--duration-filter", str(AS_OF - min(starts.values())), "--as-of", str(AS_OF)) == []


def test_a_negative_duration_filter_lists_every_id():
    assert ids("--duration-filter", "-1") == ids() == list(started())


def test_the_duration_is_measured_to_the_as_of_time_and_says_it():
    done = run("--duration-filter", "0", "--as-of", "2026-01-01T00:00:20Z", "--format", "csv")
    assert done.exit_code == 0
    assert "as of 2026-01-01T00:00:20.000Z (1767225620000): --as-of" in done.stderr
    default = run("--duration-filter", "0", "--format", "csv")  # the newest time on the inputs
    assert "as of 2026-01-01T00:00:13.300Z" in default.stderr


def test_an_id_that_never_began_a_transaction_passes_every_duration():
    """Kafka's coordinator subtracts txnStartTimestamp -1: such an id is 'running longer' than any
    duration; an expired id (no metadata) is never listed by Kafka."""
    never = SimpleNamespace(metadata=SimpleNamespace(start_ms=-1))
    assert _running_longer(never, 10 ** 12, AS_OF)
    assert not _running_longer(SimpleNamespace(metadata=None), 0, AS_OF)
    assert not _running_longer(SimpleNamespace(metadata=SimpleNamespace(start_ms=AS_OF - 5)), 5, AS_OF)
    assert _running_longer(SimpleNamespace(metadata=SimpleNamespace(start_ms=AS_OF - 6)), 5, AS_OF)


@pytest.mark.parametrize("pattern, want", [
    ("pay.*", ["payments-app"]),
    ("pay", []),  # the whole id must match (Matcher.matches()), not a part
    (".*-app", ["orders-app", "payments-app", "reporting-app"]),
    ("(orders|reporting)-app", ["orders-app", "reporting-app"]),
    ("", ["orders-app", "payments-app", "reporting-app"]),  # empty: no filter, as Kafka's coordinator
])
def test_transactional_id_pattern_matches_whole_ids(pattern, want):
    assert ids("--transactional-id-pattern", pattern) == want


def test_the_filters_combine_with_each_other_and_with_state():
    assert ids("--transactional-id-pattern", "p.*", "--state", "completecommit") == ["payments-app"]
    starts = started()
    duration = AS_OF - starts["payments-app"] - 1
    want = [t for t in ("orders-app", "payments-app") if AS_OF - starts[t] > duration]
    assert ids("--transactional-id-pattern", "(orders|payments)-app", "--duration-filter", str(duration),
               "--as-of", str(AS_OF)) == want


def test_nothing_matched_says_what_was_asked():
    done = run("--transactional-id-pattern", "nobody", "--format", "csv")
    assert done.exit_code == 0
    assert done.stdout.count("\n") == 1  # the header line only
    assert "no transactional id matches 'nobody'; states in the evidence: CompleteCommit (3)" in done.stderr


def test_a_pattern_that_does_not_compile_is_refused_before_reading():
    done = run("--transactional-id-pattern", "(unclosed")
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.startswith("kafka-forensics: --transactional-id-pattern '(unclosed': not a regular "
                                  "expression: ")
    assert "engine" not in done.stderr  # nothing was read


def test_duration_filter_takes_an_integer():
    done = run("--duration-filter", "ten")
    assert done.exit_code == 2 and "--duration-filter" in done.stderr
