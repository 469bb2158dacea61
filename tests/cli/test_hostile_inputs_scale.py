"""Hostile and odd input, continued (see test_hostile_inputs.py): two disks claiming one broker id,
ten thousand partitions on one disk (time and peak memory measured per command), and
``__transaction_state`` with a partition count other than Kafka's default of 50.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple
from collections.abc import Sequence

import pytest

from fixtures.generator import RecordSpec, encode_v2_batch
from tests.engine_lines import without_engine_line
from tests.machine_output import rows_of
from tests.cli.test_hostile_inputs import (  # noqa: F401  (baseline: a fixture)
    EXAMPLE,
    LOCAL,
    REPO,
    WHOLE_DISK,
    baseline,
    cli,
    example,
    findings_of,
    no_traceback,
    partitions_of,
    scan_json,
    without_copy_note,
)

# -- two disks, one broker id ------------------------------------------------------------------


def test_two_disks_with_the_same_broker_id(tmp_path, baseline):  # noqa: F811
    """Two log dirs of one cluster claiming one broker id and holding the same partitions are copies of
    one disk, not two replicas: the newer is analysed and one stderr line says which and why (see
    layout/clusters.py; tests/layout/test_clusters.py covers the refusal when neither is ahead)."""
    from dataclasses import replace

    from fixtures.generator import Txn, build_disk, example_spec, write_meta_properties

    copy = example(tmp_path, "copy-of-broker-1")  # the same disk twice: same directory.id
    code, out, err = cli("scan", *LOCAL, "--format", "json", EXAMPLE, copy)
    assert code == 0
    assert [(d["brokerId"], d["path"]) for d in json.loads(out)["logDirs"]] == [(1, str(EXAMPLE))]
    assert err.splitlines()[0] == (
        "kafka-forensics: broker 1 of cluster a2Fma2EtZm9yZW5zaWNzLQ is in 2 log dirs holding the same partitions "
        f"(copies of one disk): using {EXAMPLE} (the copies have the same checkpoints and log sizes); left out {copy}")
    assert not [f for f in json.loads(out)["findings"] if f["kind"] == "duplicate_broker"]
    assert cli("find-hanging", *LOCAL, EXAMPLE, copy)[:2] == (1, baseline["hanging"])  # one verdict, not two
    # ZooKeeper-era disks (no directory.id) both claiming broker 1; on the second, a later copy,
    # reporting-app's COMMIT reached orders-0
    spec = example_spec()
    events = list(spec.events)
    events[6] = Txn("reporting-app", events[6].writes)
    other = build_disk(tmp_path / "other-broker-1", replace(spec, events=tuple(events)))
    for d in (copy, other):
        write_meta_properties(d / "meta.properties", 1, spec.cluster_id, None)
    code, out, err = cli("scan", *LOCAL, "--format", "json", copy, other)
    assert code == 0 and [d["path"] for d in json.loads(out)["logDirs"]] == [str(other)]
    assert err.splitlines()[0] == (
        "kafka-forensics: broker 1 of cluster a2Fma2EtZm9yZW5zaWNzLQ is in 2 log dirs holding the same partitions "
        f"(copies of one disk): using {other}, the newer (ahead on 2 of 7 shared partitions, e.g. "
        f"__transaction_state-0 log bytes 530 vs 522; not behind on any); left out {copy}")
    assert partitions_of(json.loads(out))[("orders", 0)]["openTransactions"] == 0
    assert cli("find-hanging", *LOCAL, copy, other)[0] == 0  # the newer copy: nothing hangs


# -- ten thousand partitions -----------------------------------------------------------------------

WIDE = 10_000


def _wide_disk(root: Path) -> Path:
    """One log dir of a broker that stopped cleanly: partitions wide-0..9999 with one single-record
    batch each (the last one an open transaction of wide-app), and __transaction_state-0 holding
    wide-app in CompleteCommit."""
    from fixtures.generator import (
        COMPLETE_COMMIT,
        encode_offset_checkpoint,
        encode_txn_log_key,
        encode_txn_log_value,
        write_meta_properties,
    )

    write_meta_properties(root / "meta.properties", 1, "d2lkZS1kaXNrLWNsdXN0ZXI", "AAAAAAAAAAAAAAAAAAAAAQ")
    plain = encode_v2_batch(0, [RecordSpec(key=b"k", value=b"v")])
    for i in range(WIDE):
        part = root / f"wide-{i}"
        part.mkdir()
        (part / "00000000000000000000.log").write_bytes(plain)
        (part / "00000000000000000000.index").write_bytes(b"")
        (part / "00000000000000000000.timeindex").write_bytes(b"")
    (root / f"wide-{WIDE - 1}" / "00000000000000000000.log").write_bytes(encode_v2_batch(
        0, [RecordSpec(key=b"k", value=b"v")], producer_id=7, producer_epoch=0, base_sequence=0, transactional=True))
    txn = root / "__transaction_state-0"
    txn.mkdir()
    value = encode_txn_log_value(7, 0, 60_000, COMPLETE_COMMIT, [], 1_700_000_000_000, 1_700_000_000_000)
    (txn / "00000000000000000000.log").write_bytes(encode_v2_batch(0, [RecordSpec(key=encode_txn_log_key(
        "wide-app"), value=value)]))
    (txn / "00000000000000000000.index").write_bytes(b"")
    (txn / "00000000000000000000.timeindex").write_bytes(b"")
    hw = [("wide", i, 1) for i in range(WIDE)] + [("__transaction_state", 0, 1)]
    (root / "replication-offset-checkpoint").write_bytes(encode_offset_checkpoint(hw))
    (root / ".kafka_cleanshutdown").write_bytes(b"")  # one quiescent moment: the verdict may be proven
    return root


class Run(NamedTuple):
    code: int
    out: str
    err: str
    seconds: float
    rss_mib: int  # peak resident set size of the process


def _measured(*args) -> Run:
    """One CLI process, its output through files (no pipe limits), its own peak RSS from wait4."""
    import tempfile
    import time

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        p = subprocess.Popen([sys.executable, "-m", "forensics", *map(str, args)], stdout=out, stderr=err, cwd=REPO)
        _, status, usage = os.wait4(p.pid, 0)
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return Run(os.waitstatus_to_exitcode(status), out.read(), err.read(), seconds, usage.ru_maxrss // 1024)


@pytest.mark.slow  # writes and reads 10,000 partition dirs three times
def test_ten_thousand_partitions(tmp_path):
    disk = _wide_disk(tmp_path / "broker-1")
    runs = {c: _measured(c, *LOCAL, "--format", "json", disk) for c in WHOLE_DISK}
    print("\n" + "; ".join(f"{c}: {r.seconds:.1f} s, {r.rss_mib} MiB peak RSS" for c, r in runs.items()))
    scan, hanging, listed = (runs[c] for c in WHOLE_DISK)
    assert scan.code == 0 and without_copy_note(without_engine_line(scan.err)) == "", scan.err
    doc = json.loads(scan.out)
    parts = partitions_of(doc)
    assert doc["summary"]["partitions"] == len(parts) == WIDE + 1
    assert all(parts[("wide", i)]["records"] == 1 and parts[("wide", i)]["highWatermark"] == 1 for i in range(WIDE))
    assert parts[("wide", WIDE - 1)]["openTransactions"] == 1
    assert [(f["kind"], f["path"]) for f in findings_of(doc)] == [("no_snapshot", str(disk / f"wide-{WIDE - 1}"))]
    (row,) = rows_of(hanging.out)
    assert hanging.code == 1 and (row["topic"], row["partition"], row["verdict"]) == ("wide", WIDE - 1, "hanging")
    assert listed.code == 0 and without_engine_line(listed.err) == "" and [r["transactionalId"] for r in rows_of(listed.out)] == [
        "wide-app"]
    for command, r in runs.items():  # sane: seconds and megabytes, not minutes and gigabytes
        assert r.seconds < 120 and r.rss_mib < 1024, (command, r.seconds, r.rss_mib)


# -- __transaction_state with another partition count than Kafka's default (50) --------------------

IDS = ("alpha-app", "bravo-app", "charlie-app", "delta-app", "echo-app")


def _coordinated_disk(root: Path, partitions: int, ids: Sequence[str] = IDS, keep: int = 0) -> Path:
    """pay-0/pay-1 and __transaction_state with ``partitions`` partitions (only the first ``keep`` kept,
    as on a broker holding a few of them); every id commits once, then the last one's transaction
    hangs on pay-0 (its coordinator logged only pay-1)."""
    from fixtures.generator import (
        DiskSpec,
        Produce,
        ProducerSpec,
        TopicSpec,
        Txn,
        build_disk,
    )

    producers = tuple(ProducerSpec(t, producer_id=100 + k, transactional_id=t) for k, t in enumerate(ids))
    events = tuple(Txn(t, (Produce("pay", 1, 1),)) for t in ids) + (
        Txn(ids[-1], (Produce("pay", 0, 1), Produce("pay", 1, 1)), coordinator_partitions=(("pay", 1),)),)
    build_disk(root, DiskSpec(topics=(TopicSpec("pay", 2),), producers=producers, events=events,
                              txn_state_partitions=partitions))
    for p in range(keep or partitions, partitions):
        shutil.rmtree(root / f"__transaction_state-{p}")
    return root


def _listed(*args) -> tuple[dict[str, int], str]:
    code, out, err = cli("list", *LOCAL, "--format", "json", *args)
    assert code == 0
    no_traceback(err)
    return {r["transactionalId"]: r["transactionStatePartition"] for r in rows_of(out)}, without_engine_line(err)


@pytest.mark.parametrize("count", [7, 3])
def test_transaction_state_with_another_partition_count(tmp_path, count):
    from fixtures.generator import transaction_partition

    disk = _coordinated_disk(tmp_path / "broker-1", count)
    expected = {t: transaction_partition(t, count) for t in IDS}  # the generator's own hash, not ours
    assert len(set(expected.values())) > 1 and expected != {t: transaction_partition(t, 50) for t in IDS}
    assert _listed(disk) == (expected, "")  # the count is read off the disk: every id where it belongs
    code, out, err = cli("find-hanging", *LOCAL, "--format", "json", disk)
    (row,) = rows_of(out)
    assert code == 1 and (row["partition"], row["transactionalId"], row["verdict"]) == (0, "echo-app", "hanging")
    # a count that contradicts the disk: said in one line; ids still listed, the verdict unchanged
    rows, err = _listed("--transaction-state-partitions", 50, disk)
    assert rows == expected
    wrong = sum(transaction_partition(t, 50) != p for t, p in expected.items())
    assert err.splitlines()[0] == (f"warning: txn_partition_count: --transaction-state-partitions 50: {wrong} of 5 "
                                   "stored transactional ids are not where abs(hash) % 50 puts them, but all are where "
                                   f"abs(hash) % {count} does: the count given is probably wrong")
    assert len(err.splitlines()) == 1 + wrong  # and one wrong_coordinator_partition line per misplaced id
    assert cli("find-hanging", *LOCAL, "--transaction-state-partitions", 50, "--format", "json", disk)[:2] == (1, out)
    rows, err = _listed("--transaction-state-partitions", count - 1, disk)
    last = f"__transaction_state-{count - 1}"
    assert err.splitlines()[0] == (f"warning: txn_partition_count: {disk / last}: --transaction-state-partitions "
                                   f"{count - 1}, but the inputs hold {last}: the count is at least {count}; the "
                                   f"stored transactional ids all fit {count} partitions")


def test_a_few_partitions_of_fifty_are_not_taken_for_all(tmp_path):
    """A broker holding __transaction_state-0..6 of 50: the count is not 7. Taken as 7, a producer whose
    coordinator partition is elsewhere would hang for want of its record; taken as 50 it is unverifiable."""
    from fixtures.generator import transaction_partition

    names = [f"app-{k}" for k in range(400)]
    here = [t for t in names if transaction_partition(t, 50) < 7][:4]
    away = next(t for t in names if transaction_partition(t, 50) >= 7)
    assert any(transaction_partition(t, 7) != transaction_partition(t, 50) for t in here)
    disk = _coordinated_disk(tmp_path / "broker-1", 50, here + [away], keep=7)
    rows, err = _listed(disk)
    assert rows == {t: transaction_partition(t, 50) for t in here}
    assert err == ("info: txn_partition_count: partition count taken as 50 (Kafka's default): all 4 stored "
                   "transactional ids sit where abs(hash) % 50 puts them, not % 7 (highest partition found + 1); 43 "
                   "partitions are not among the inputs; give --transaction-state-partitions if the cluster used "
                   "another count\n")
    day_later = "2026-01-02T00:00:00Z"  # the generator's records are from 2026-01-01T00:00Z
    code, out, err = cli("find-hanging", *LOCAL, "--all", "--as-of", day_later, "--format", "json", disk)
    (row,) = rows_of(out)
    assert (code, row["verdict"], row["armed"]) == (7, "unverifiable", False)  # shown, neither clear nor armed
    assert row["reason"].startswith(f"no coordinator record for producer id {100 + len(here)}, but "
                                    "__transaction_state partitions 7, 8, 9,")
    code, out, _ = cli("find-hanging", *LOCAL, "--all", "--transaction-state-partitions", 7, "--format", "json", disk)
    (row,) = rows_of(out)  # a wrong count given: the broker's checkpoints still name __transaction_state-7..49
    assert (code, row["verdict"], row["armed"]) == (7, "unverifiable", False)
    assert ("43 coordinator partition(s) lack the copy that matters (__transaction_state-7, __transaction_state-8, "
            "__transaction_state-9 and 40 more; broker 1's checkpoints list it") in row["reason"]
