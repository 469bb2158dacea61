"""``find-hanging`` and ``abort-commands`` end to end: the example disk (one hanging transaction),
the real Kafka 4.1 disks (none hanging; d-tx-ongoing legitimately ongoing), a disk without
coordinator data (unverifiable: age alone), exit codes, JSON keys and the safe abort rule."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
from forensics.cli.app import app
from tests.machine_output import rows_of

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
REAL = REPO / "fixtures" / "real"
KEYS = ["topic", "partition", "producerId", "producerEpoch", "coordinatorEpoch", "startOffset", "lastTimestamp",
        "durationMs", "verdict", "reason", "transactionalId", "abortArgs", "evidence"]
runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_example_disk_has_one_hanging_transaction_and_exit_1():
    r = run("find-hanging", EXAMPLE, "--format", "json", "--no-progress")
    assert r.exit_code == 1, r.output
    [row] = rows_of(r.stdout)
    assert list(row)[:len(KEYS)] == KEYS
    assert (row["topic"], row["partition"], row["producerId"], row["startOffset"]) == ("orders", 0, 2002, 6)
    assert row["verdict"] == "hanging" and row["transactionalId"] == "reporting-app"
    assert "CompleteCommit" in row["reason"]
    # safe rule: the partition entry's epoch (1) and max(coordinator epoch -1, 0) = 0
    assert row["abortArgs"][-10:] == ["--topic", "orders", "--partition", "0", "--producer-id", "2002",
                                      "--producer-epoch", "1", "--coordinator-epoch", "0"]
    ev = row["evidence"]
    assert ev["firstBatch"]["path"].endswith("orders-0/00000000000000000000.log")
    assert ev["coordinatorRecord"]["state"] == "CompleteCommit" and ev["lastStableOffset"] == 6


def test_as_of_sets_duration_and_table_header():
    r = run("find-hanging", EXAMPLE, "--as-of", "1767225606251", "--no-progress", "--format", "text")
    assert r.exit_code == 1
    assert r.stdout == (  # kafka-transactions.sh find-hanging's table, its columns only
        "Topic \tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\tLastTimestamp\tDuration(min)\t\n"
        "orders\t0        \t2002      \t1            \t-1              \t6          \t1767225606251\t0            \t\n")
    narrow = runner.invoke(app, ["find-hanging", str(EXAMPLE), "--as-of", "1767225606251", "--no-progress",
                                 "--format", "text"], env={"COLUMNS": "60"})
    assert narrow.stdout == r.stdout  # never folded
    for as_of, minutes in (("1767225667251", "1"), ("1767225576251", "0"), ("1767225486251", "-2")):
        line = run("find-hanging", EXAMPLE, "--as-of", as_of, "--no-progress", "--format", "text").stdout.split("\n")[1]
        assert line.split("\t")[7].strip() == minutes, as_of  # TimeUnit.toMinutes: toward zero (-30 s is 0)
    iso = run("find-hanging", EXAMPLE, "--as-of", "2026-01-01T00:00:16.251Z", "--format", "json", "--no-progress")
    assert rows_of(iso.stdout)[0]["durationMs"] == 10_000
    assert run("find-hanging", EXAMPLE, "--as-of", "yesterday").exit_code == 2


@pytest.mark.parametrize("run_name", ["kraft-tv2", "kraft-rv3.9-tv0"])
def test_real_disks_have_nothing_hanging_and_d_is_ongoing(run_name):
    r = run("find-hanging", REAL / run_name / "disk", "--all", "--format", "json", "--no-progress")
    assert r.exit_code == 0, r.output
    rows = rows_of(r.stdout)
    assert {(x["topic"], x["partition"], x["producerId"], x["startOffset"], x["verdict"]) for x in rows} == {
        ("d-txn-ongoing", 0, 20, 2, "ongoing"), ("d-txn-ongoing", 1, 20, 2, "ongoing")}
    assert all(x["abortArgs"] is None for x in rows)
    plain = run("find-hanging", REAL / run_name / "disk", "--format", "json", "--no-progress")
    assert plain.exit_code == 0 and rows_of(plain.stdout) == []


def test_without_coordinator_data_verdicts_are_unverifiable_and_age_gated(tmp_path):
    part = tmp_path / "orders-0"
    shutil.copytree(EXAMPLE / "broker-1" / "orders-0", part)
    young = run("find-hanging", part, "--as-of", "1767225606251", "--format", "json", "--no-progress")
    assert young.exit_code == 7  # not "all clear": nothing can be verified
    [row] = rows_of(young.stdout)
    assert (row["verdict"], row["armed"], row["abortArgs"]) == ("unverifiable", False, None)
    assert "WARNING: no __transaction_state partition among the inputs: verdicts are UNVERIFIABLE" in young.stderr
    old_as_of = str(1767225606251 + 16 * 60_000)
    old = run("find-hanging", part, "--as-of", old_as_of, "--format", "json", "--no-progress")
    assert old.exit_code == 7  # nor "abort these"
    [row] = rows_of(old.stdout)
    assert (row["verdict"], row["armed"], row["abortArgs"]) == ("unverifiable", False, None)
    assert row["reason"].startswith("no __transaction_state in the inputs: the coordinator may still complete "
                                    "this transaction")
    assert row["abortForms"]["abortArgs"][-6:] == ["--producer-id", "2002", "--producer-epoch", "1",
                                                   "--coordinator-epoch", "0"]
    script = run("abort-commands", part, "--as-of", old_as_of, "--bootstrap-server", "k:9092", "--no-progress")
    assert script.exit_code == 0 and not [ln for ln in script.stdout.splitlines() if ln.startswith("kafka-")]
    assert "# NOT ARMED (unverifiable): unverifiable: the evidence cannot prove it hangs (see the reason); " \
           "--arm-unverifiable arms it\n" in script.stdout
    assert script.stdout.splitlines()[2] == ("# WARNING: no __transaction_state partition among the inputs: "
                                             "verdicts are UNVERIFIABLE and rest on age alone, as Kafka's "
                                             "find-hanging; add the coordinators' disks.")
    armed = run("abort-commands", part, "--as-of", old_as_of, "--bootstrap-server", "k:9092", "--no-progress",
                "--arm-unverifiable")
    assert [ln for ln in armed.stdout.splitlines() if ln.startswith("kafka-")] == [
        "kafka-transactions.sh --bootstrap-server k:9092 abort --topic orders --partition 0 --producer-id 2002 "
        "--producer-epoch 1 --coordinator-epoch 0"]
    young_armed = run("abort-commands", part, "--as-of", "1767225606251", "--bootstrap-server", "k:9092",
                      "--no-progress", "--arm-unverifiable")
    assert not [ln for ln in young_armed.stdout.splitlines() if ln.startswith("kafka-")]  # the age gate holds
    assert "younger than the --max-transaction-timeout age gate" in young_armed.stdout


def test_abort_commands_script_never_aborts_non_hanging(tmp_path):
    r = run("abort-commands", EXAMPLE, "--bootstrap-server", "kafka:9092", "--no-progress")
    assert r.exit_code == 0
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("kafka-transactions.sh")]
    # the example disk's brokers are 3.7 or newer: the --start-offset form is the one armed
    assert "# brokers: broker 4.1 or newer: KRaft, metadata.version 4.1-IV1, brokers support metadata.version up to 4.1-IV1\n" in r.stdout
    assert lines == ["kafka-transactions.sh --bootstrap-server kafka:9092 abort --topic orders --partition 0 "
                     "--start-offset 6"]
    assert "# kafka-transactions.sh --bootstrap-server kafka:9092 abort --topic orders --partition 0 " \
           "--producer-id 2002 --producer-epoch 1 --coordinator-epoch 0" in r.stdout
    older = run("abort-commands", EXAMPLE, "--bootstrap-server", "kafka:9092", "--no-progress",
                "--broker-version", "2.8")
    assert [ln for ln in older.stdout.splitlines() if ln.startswith("kafka-transactions.sh")] == [
        "kafka-transactions.sh --bootstrap-server kafka:9092 abort --topic orders --partition 0 --producer-id 2002 "
        "--producer-epoch 1 --coordinator-epoch 0"]
    assert "# brokers: broker 2.8 (--broker-version; the disks say broker 4.1 or newer" in older.stdout
    real = run("abort-commands", REAL / "kraft-tv2" / "disk", "--bootstrap-server", "k:9092", "--no-progress")
    assert real.exit_code == 0
    assert not [ln for ln in real.stdout.splitlines() if ln.startswith("kafka-transactions.sh")]
    assert "nothing to abort" in real.stdout
