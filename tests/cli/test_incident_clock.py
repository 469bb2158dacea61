"""The incident clock on disks as they are handed over: copied without their modification times.

Disks: the real Kafka 4.1.0 log dirs (``fixtures/real/<run>/disk`` and, when present,
``../shared/real-kafka/4.1.0/<run>/data``), the example disk, each copied and its file times reset to
a copy time. The expected as-of time is read independently: the newest batch max timestamp of every
``.log`` of the disk by kafka-python's reader (and, with ``../shared``, by Kafka's own
``kafka-dump-log.sh`` output), then held against the live broker's facts (fixtures/real/RECIPE.md,
../shared/real-kafka/README.md): ``d-tx-ongoing``'s open transaction was about 12 s old when its
broker stopped, and its ``describe`` said 4975 ms a few seconds before the stop.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.test_hostile_inputs import EXAMPLE, LOCAL, REPO, cli, findings_of, partitions_of
from tests.engine_lines import BY_OPTION as ENGINE
from tests.machine_output import rows_of

REAL = REPO / "fixtures" / "real"
SHARED = REPO.parent / "shared" / "real-kafka" / "4.1.0"
RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")
# fixtures/real/RECIPE.md and ../shared/real-kafka/<run>/ground-truth/broker-stop-requested-at.txt
STOP_REQUESTED = {"kraft-tv2": "2026-11-20T21:50:59.915Z", "kraft-rv3.9-tv0": "2026-11-20T21:55:36.967Z"}
ONGOING_LAST_TIMESTAMP = {"kraft-tv2": 1795211447928, "kraft-rv3.9-tv0": 1795211725765}  # at-stop describe-producers
ONGOING_START = {"kraft-tv2": 1795211447934, "kraft-rv3.9-tv0": 1795211725766}  # at-stop describe
COPY_GAP_MS = ((4 * 24 + 19) * 60 + 7) * 60_000 + 5_000  # 4 d 19 h 7 min 5 s: a copy made days later
COPY_NOTE = "file times look like copy times: 4 d 19 h after the newest record; using the newest record time"
FAR_FUTURE = 253402300799000  # 9999-12-31T23:59:59Z


def epoch_ms(iso: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def iso_ms(ms: int) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def when(ms: int) -> str:
    """A time as our screens write it where no age applies: ISO-8601 UTC with its epoch ms."""
    return f"{iso_ms(ms)} ({ms})"


def copied(src: Path, dst: Path, mtime_ms: int) -> Path:
    """``src`` copied to ``dst`` with every file and directory time set to ``mtime_ms``, as a copy
    that keeps no times leaves them (all alike: the copy time)."""
    shutil.copytree(src, dst)
    for root, dirs, files in os.walk(dst):
        for name in files + dirs:
            ns = mtime_ms * 1_000_000
            os.utime(os.path.join(root, name), ns=(ns, ns))
    return dst


def newest_batch(disk: Path) -> tuple[int, Path]:
    """The newest batch max timestamp among the disk's segments, read by kafka-python (not our decoder)."""
    from kafka.record import MemoryRecords

    best = (-1, disk)
    for log in sorted(disk.glob("*/*.log")):
        records = MemoryRecords(log.read_bytes())
        while (batch := records.next_batch()) is not None:
            best = max(best, (batch.max_timestamp, log))
    return best


def newest_in_dumps(run: str) -> int:
    """The same from Kafka's own kafka-dump-log.sh output of every segment of the run."""
    times = [int(m) for dump in (SHARED / run / "dumps").glob("*/*.log.dump.txt")
             for m in re.findall(r"(?:CreateTime|LogAppendTime): (\d+)", dump.read_text())]
    return max(times)


def disk_sources() -> list:
    out = [pytest.param(REAL / run / "disk", run, id=f"fixtures-{run}") for run in RUNS]
    reason = f"{SHARED} is absent (the team's reference disks)"
    out += [pytest.param(SHARED / run / "data", run, id=f"shared-{run}",
                         marks=pytest.mark.skipif(not SHARED.is_dir(), reason=reason)) for run in RUNS]
    return out


def as_of_line(ms: int, source: str) -> str:
    return f"as of {iso_ms(ms)} ({ms}): {source}"


@pytest.mark.parametrize("src, run", disk_sources())
def test_real_disk_copied_without_times(tmp_path, src, run):
    newest, newest_log = newest_batch(src)
    assert newest_log.parent.name == "__cluster_metadata-0"  # KRaft: the controller's last records at the stop
    if SHARED.is_dir():
        assert newest == newest_in_dumps(run)
        assert (SHARED / run / "ground-truth" / "broker-stop-requested-at.txt").read_text().strip() == \
            STOP_REQUESTED[run]
    assert 0 <= newest - epoch_ms(STOP_REQUESTED[run]) < 2_000  # the broker's shutdown records
    disk = copied(src, tmp_path / "data", newest + COPY_GAP_MS)
    source = (f"newest batch timestamp, in {disk / newest_log.parent.name / newest_log.name}; file times ignored "
              "(copy times); clean shutdown recorded (.kafka_cleanshutdown)")

    code, out, err = cli("find-hanging", *LOCAL, "--all", "--format", "json", disk)
    assert (code, err.splitlines()) == (0, [ENGINE, as_of_line(newest, source), COPY_NOTE])
    rows = rows_of(out)
    assert {(r["topic"], r["partition"], r["verdict"]) for r in rows} == {("d-txn-ongoing", 0, "ongoing"),
                                                                         ("d-txn-ongoing", 1, "ongoing")}
    for r in rows:  # the transaction was ~12 s old at the stop (4 d 19 h with the copy's file times)
        assert (r["asOfMs"], r["asOfSource"]) == (newest, source)
        assert r["durationMs"] == newest - ONGOING_LAST_TIMESTAMP[run]
        assert 11_000 < r["durationMs"] < 13_000

    code, out, err = cli("scan", *LOCAL, "--format", "json", disk)
    doc = json.loads(out)
    assert (code, err.splitlines(), doc["asOf"]) == (0, [ENGINE, COPY_NOTE], {"timeMs": newest, "source": source})
    for p in (0, 1):
        part = partitions_of(doc)[("d-txn-ongoing", p)]
        assert (part["maxActiveTransactionDurationMs"], part["lateTransaction"]) == (
            newest - ONGOING_LAST_TIMESTAMP[run], False)
    assert doc["logDirs"][0]["partitionsWithLateTransactions"] == 0

    code, out, err = cli("describe", *LOCAL, "--transactional-id", "d-tx-ongoing", "--format", "json", disk)
    (row,) = rows_of(out)
    assert (code, err.splitlines(), row["transactionDurationMs"]) == (0, [ENGINE, COPY_NOTE], newest - ONGOING_START[run])
    live = int((REAL / run / "ground-truth" / "broker-view-at-stop" / "describe-d-tx-ongoing.txt").read_text()
               .splitlines()[1].split()[7])  # TransactionDurationMs, seconds before the stop
    assert live < row["transactionDurationMs"] < live + 10_000


def test_real_disk_with_its_times_kept(tmp_path):
    """A copy that kept the broker's file times (cp -a): they agree with the records, no note."""
    src = REAL / "kraft-tv2" / "disk"
    newest, newest_log = newest_batch(src)
    disk = copied(src, tmp_path / "data", newest + 412)  # .kafka_cleanshutdown written right after the last record
    code, _, err = cli("find-hanging", *LOCAL, "--all", disk)
    source = (f"newest batch timestamp, in {disk / '__cluster_metadata-0' / newest_log.name}; file times agree "
              "(within 1 h); clean shutdown recorded (.kafka_cleanshutdown)")
    assert (code, err.splitlines()) == (0, [ENGINE, as_of_line(newest, source)])
    code, out, err = cli("scan", *LOCAL, "--format", "json", disk)
    assert (code, err, json.loads(out)["asOf"]) == (0, ENGINE + "\n", {"timeMs": newest, "source": source})


def test_real_disk_copied_just_now(tmp_path):
    """The copy's own times (os.utime to now): the same as-of time, the note says how far off they are."""
    src = REAL / "kraft-rv3.9-tv0" / "disk"
    newest, _ = newest_batch(src)
    disk = copied(src, tmp_path / "data", int(time.time() * 1000))
    code, out, err = cli("find-hanging", *LOCAL, "--all", "--format", "json", disk)
    assert (code, [r["verdict"] for r in rows_of(out)]) == (0, ["ongoing", "ongoing"])
    engine, first, note = err.splitlines()
    assert engine == ENGINE
    assert first.startswith(f"as of {iso_ms(newest)} ({newest}): newest batch timestamp, in ")
    assert re.fullmatch(r"file times look like copy times: \d+ d \d+ h after the newest record; using the newest "
                        r"record time", note), note


def test_example_disk(tmp_path):
    """README command 1 on a checkout of the example disk: the duration is the transaction's age at the
    disk's newest record (seconds), not the time since the checkout (months)."""
    newest, newest_log = newest_batch(EXAMPLE)
    disk = copied(EXAMPLE, tmp_path / "broker-1", newest + COPY_GAP_MS)
    code, out, err = cli("find-hanging", *LOCAL, "--format", "json", disk)
    (row,) = rows_of(out)
    source = (f"newest batch timestamp, in {disk / newest_log.parent.name / newest_log.name}; file times ignored "
              "(copy times); clean shutdown recorded (.kafka_cleanshutdown)")
    assert (code, err.splitlines()) == (1, [ENGINE, as_of_line(newest, source), COPY_NOTE])
    assert (row["verdict"], row["lastTimestamp"], row["durationMs"]) == ("hanging", 1767225606251,
                                                                         newest - 1767225606251)
    assert row["durationMs"] < 10_000
    code, out, err = cli("abort-commands", *LOCAL, "--bootstrap-server", "localhost:9092", disk)
    assert (code, err.splitlines()) == (0, [ENGINE, COPY_NOTE])
    assert f"# as of: {iso_ms(newest)} ({newest}): {source}\n" in out
    given = cli("find-hanging", *LOCAL, "--as-of", "2026-01-01T01:00:00Z", "--format", "json", disk)
    (row,) = rows_of(given[1])
    assert (given[0], given[2].splitlines()) == (1, [ENGINE, "as of 2026-01-01T01:00:00.000Z (1767229200000): --as-of"])
    assert row["durationMs"] == 1767229200000 - 1767225606251


def forge_max_timestamp(log: Path, timestamp: int) -> int:
    """Set the last batch's max timestamp of ``log`` and recompute its CRC (kafka-python's CRC-32C): a
    batch a forger or a bad writer made, valid to every reader. Returns its byte position."""
    from kafka.record.util import calc_crc32c

    data = bytearray(log.read_bytes())
    pos = last = 0
    while pos < len(data):
        last, pos = pos, pos + 12 + struct.unpack_from(">i", data, pos + 8)[0]
    struct.pack_into(">q", data, last + 35, timestamp)  # maxTimestamp
    end = last + 12 + struct.unpack_from(">i", data, last + 8)[0]
    struct.pack_into(">I", data, last + 17, calc_crc32c(bytes(data[last + 21:end])))
    log.write_bytes(bytes(data))
    return last


def test_forged_far_future_batch_is_not_the_clock(tmp_path):
    src = REAL / "kraft-tv2" / "disk"
    newest, newest_log = newest_batch(src)
    disk = copied(src, tmp_path / "data", newest + COPY_GAP_MS)
    forged = disk / "c-plain-0" / "00000000000000000000.log"
    forge_max_timestamp(forged, FAR_FUTURE)
    assert newest_batch(disk) == (FAR_FUTURE, forged)  # kafka-python reads the forged batch as valid
    finding = (f"warning: future_timestamp: {forged}: batch timestamp 9999-12-31T23:59:59.000Z ({FAR_FUTURE}) is "
               f"more than 1 h after the newest file time of the inputs ({when(newest + COPY_GAP_MS)}, "
               f"{disk / 'replication-offset-checkpoint'}): "
               "not used for the as-of time (a damaged or forged record, or a producer clock far ahead)")
    source = (f"newest batch timestamp, in {disk / '__cluster_metadata-0' / newest_log.name}; file times ignored "
              "(copy times); clean shutdown recorded (.kafka_cleanshutdown)")
    code, out, err = cli("find-hanging", *LOCAL, "--all", "--format", "json", disk)
    assert (code, err.splitlines()) == (0, [ENGINE, as_of_line(newest, source), COPY_NOTE, finding])
    assert [r["durationMs"] for r in rows_of(out)] == [newest - ONGOING_LAST_TIMESTAMP["kraft-tv2"]] * 2
    code, out, err = cli("scan", *LOCAL, "--format", "json", disk)
    doc = json.loads(out)
    assert (code, err.splitlines(), doc["asOf"]["timeMs"]) == (0, [ENGINE, COPY_NOTE], newest)
    assert [f for f in findings_of(doc) if f["kind"] == "future_timestamp"] == [
        {"kind": "future_timestamp", "severity": "warning", "path": str(forged),
         "message": finding.split(f"{forged}: ", 1)[1]}]
    assert cli("scan", *LOCAL, "--strict", disk)[0] == 5


def test_forged_batch_in_a_copy_without_the_broker_files(tmp_path):
    """No checkpoint or clean-shutdown file left in the copy: the segments' own times bound the records."""
    src = REAL / "kraft-tv2" / "disk"
    newest, newest_log = newest_batch(src)
    disk = copied(src, tmp_path / "data", newest + COPY_GAP_MS)
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint", "log-start-offset-checkpoint",
                 "cleaner-offset-checkpoint", ".kafka_cleanshutdown"):
        (disk / name).unlink()
    forged = disk / "c-plain-0" / "00000000000000000000.log"
    forge_max_timestamp(forged, FAR_FUTURE)
    os.utime(forged, ns=((newest + COPY_GAP_MS) * 1_000_000,) * 2)
    code, out, err = cli("find-hanging", *LOCAL, "--all", "--format", "json", disk)
    newest_file = max(disk.glob("*/*.log"))  # every file has the copy time: the last path is named
    assert (code, err.splitlines()) == (0, [
        ENGINE,
        as_of_line(newest, f"newest batch timestamp, in {disk / '__cluster_metadata-0' / newest_log.name}; file times "
                   "ignored (copy times)"),
        COPY_NOTE,
        f"warning: future_timestamp: {forged}: batch timestamp 9999-12-31T23:59:59.000Z ({FAR_FUTURE}) is more than "
        f"1 h after the newest file time of the inputs ({when(newest + COPY_GAP_MS)}, {newest_file}): not used for "
        "the as-of time (a damaged or "
        "forged record, or a producer clock far ahead)",
        f"WARNING: evidence: not one quiescent moment: broker 1's log dir {disk} has no .kafka_cleanshutdown: the "
        "broker was running, or did not stop cleanly, when it was copied: a copy of a running broker (or of one "
        "that crashed) holds each partition as of its own copy, so a transaction, Prepare state or completion less "
        "than 15 min older than its partition's copy is too recent to judge (unverifiable, never armed)"])
    assert [r["durationMs"] for r in rows_of(out)] == [newest - ONGOING_LAST_TIMESTAMP["kraft-tv2"]] * 2


def test_the_script_keeps_a_hostile_path_in_its_as_of_comment(tmp_path):
    """The as-of source names a file of the evidence: a directory name holding a newline stays inside
    the abort script's comment (sh -n clean, no line of it runs)."""
    evil = "broker-1\necho PWNED; touch PWNED"
    newest, _ = newest_batch(EXAMPLE)
    disk = copied(EXAMPLE, tmp_path / "disks" / evil, newest)
    code, out, err = cli("abort-commands", *LOCAL, "--bootstrap-server", "localhost:9092", tmp_path / "disks")
    assert code == 0, err
    lines = out.splitlines()
    at = lines.index(f"# as of: {iso_ms(newest)} ({newest}): newest batch timestamp, in {tmp_path / 'disks'}/broker-1")
    assert lines[at + 1] == ("# echo PWNED; touch PWNED/__cluster_metadata-0/00000000000000000000.log; file times agree (within "
                             "1 h); clean shutdown recorded (.kafka_cleanshutdown)")
    assert not any(line.startswith("echo PWNED") for line in lines)
    assert subprocess.run(["sh", "-n"], input=out, text=True, capture_output=True).returncode == 0
    assert str(disk).endswith(evil)
