"""Hostile and odd input (issue 7, item 3): one clear line, a documented exit code, never a traceback.

Nothing usable at all is an input error (exit 3: missing path, wrong file type, no Kafka content
anywhere, a broken or looping symlink given as input). Damage inside otherwise usable evidence is a
finding with path and byte position while everything else is still analysed (exit 0; ``--strict``
5; find-hanging 1 when something hangs): an unreadable file (the offsets it costs), a file that is
not Kafka, a length field claiming gigabytes, a record count that does not match, symlink loops
inside the tree, two disks claiming one broker id, a ``__transaction_state`` partition count that
does not fit. The whole-disk commands run with ``--engine local`` (two cases also on Spark); the
permission case runs as a real process for which file modes bind even as root. Two disks claiming one
broker id, ten thousand partitions and ``__transaction_state`` partition counts: test_hostile_inputs_scale.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from collections.abc import Sequence

import pytest
from typer.testing import CliRunner

import forensics.cli.dump_cmd  # noqa: F401  (registers the commands)
import forensics.cli.hanging_cmd  # noqa: F401
import forensics.cli.scan_cmd  # noqa: F401
import forensics.cli.state_cmd  # noqa: F401
from fixtures.generator import RecordSpec, encode_v2_batch
from forensics.cli.app import EXIT_CODES, app
from forensics.codec.crc import crc32c
from tests.readonly_support import without_permission_override
from tests.engine_lines import without_engine_line

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk" / "broker-1"
LOCAL = ("--engine", "local", "--no-progress")
WHOLE_DISK = ("scan", "find-hanging", "list")
runner = CliRunner()


# -- helpers -------------------------------------------------------------------------------------


def cli(*args) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def proc(*args, prefix: Sequence[str] = (), env: dict[str, str] = None) -> subprocess.CompletedProcess:
    env = env or {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_DEBUG"}
    return subprocess.run([*prefix, sys.executable, "-m", "forensics", *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)


def no_traceback(err: str) -> None:
    assert "Traceback" not in err and "Exception ignored" not in err and "internal error" not in err, err


def without_copy_note(err: str) -> str:
    """``err`` without the one line saying the file times are copy times (the disks here are written
    now, their records dated by the generator's clock: see analysis/clock.py)."""
    note = re.compile(r"file times look like copy times: \d+ d \d+ h after the newest record; using the newest "
                      r"record time\n")
    return note.sub("", err, count=1)


def fails_with(result, code: int, line: str) -> None:
    """Exit ``code`` (documented), nothing on stdout, exactly ``kafka-forensics: <line>`` on stderr."""
    got, out, err = (result.returncode, result.stdout, result.stderr) if hasattr(result, "returncode") else result
    assert code in EXIT_CODES
    assert (got, out, err) == (code, "", f"kafka-forensics: {line}\n")


def example(root: Path, name: str = "broker-1") -> Path:
    return Path(shutil.copytree(EXAMPLE, root / name))


def scan_json(*args, code: int = 0) -> dict:
    got, out, err = cli("scan", *LOCAL, "--format", "json", *args)
    assert got == code, err
    no_traceback(err)
    return json.loads(out)


def findings_of(doc) -> list[dict]:
    """Every finding object anywhere in a scan document."""
    if isinstance(doc, dict):
        own = [doc] if "kind" in doc and "severity" in doc else []
        return own + [f for v in doc.values() for f in findings_of(v)]
    return [f for v in doc for f in findings_of(v)] if isinstance(doc, list) else []


def partitions_of(doc: dict) -> dict[tuple[str, int], dict]:
    return {(p["topic"], p["partition"]): p for d in doc["logDirs"] for p in d["partitions"]}


def same_except(doc: dict, baseline: dict, damaged: Sequence[tuple[str, int]]) -> None:
    """Every partition but ``damaged`` analysed exactly as on the intact disk."""
    keys = ("bytes", "batches", "records", "firstOffset", "lastOffset", "lastStableOffset", "openTransactions")
    got, want = partitions_of(doc), partitions_of(baseline)
    assert got.keys() == want.keys()
    for tp in set(want) - set(damaged):
        assert {k: got[tp][k] for k in keys} == {k: want[tp][k] for k in keys}, tp


@pytest.fixture(scope="module")
def baseline():
    """scan JSON, find-hanging and list output of the intact example disk."""
    hang, lst = cli("find-hanging", *LOCAL, EXAMPLE), cli("list", *LOCAL, EXAMPLE)
    assert hang[0] == 1 and lst[0] == 0
    return {"scan": scan_json(EXAMPLE), "hanging": hang[1], "list": lst[1]}


def rewrite_batch(path: Path, position: int, **fields: int) -> None:
    """Set v2 header fields of the batch at ``position`` (``length`` at @8, ``count`` at @57); with
    ``crc=True`` the CRC-32C is recomputed (a writer's bug), else it no longer matches (damage)."""
    data = bytearray(path.read_bytes())
    size = 12 + struct.unpack_from(">i", data, position + 8)[0]
    if "count" in fields:
        struct.pack_into(">i", data, position + 57, fields["count"])
    if fields.get("crc"):
        struct.pack_into(">I", data, position + 17, crc32c(bytes(data[position + 21: position + size])))
    if "length" in fields:
        struct.pack_into(">i", data, position + 8, fields["length"])
    path.write_bytes(bytes(data))


# -- paths that cannot be used: exit 3 -----------------------------------------------------------


@pytest.mark.parametrize("command", WHOLE_DISK + ("dump",))
def test_path_that_does_not_exist(tmp_path, command):
    missing = tmp_path / "no-such-disk" / "00000000000000000000.log"
    args = (command, missing) if command == "dump" else (command, *LOCAL, missing)
    fails_with(cli(*args), 3, f"{missing}: " + ("no such file" if command == "dump" else "no such file or directory"))
    if command == "scan":  # and as a real process
        fails_with(proc(*args), 3, f"{missing}: no such file or directory")


@pytest.mark.parametrize("command", WHOLE_DISK)
def test_file_where_a_directory_is_expected(tmp_path, command):
    for name in ("notes.txt", "orders-0"):  # a stray file; a file named like a partition dir
        (tmp_path / name).write_text("not a directory\n")
        fails_with(cli(command, *LOCAL, tmp_path / name), 3, f"{tmp_path / name}: not a directory and not a "
                   "Kafka segment, index, snapshot or checkpoint file")
    segment = EXAMPLE / "orders-0" / "00000000000000000000.log"
    if command == "scan":  # scan reads single files
        assert scan_json(segment)["segmentFiles"][0]["batches"] == 5
    else:  # producer and coordinator state need partition directories
        fails_with(cli(command, *LOCAL, segment), 3, f"{segment}: a file where a log dir or partition dir is "
                   "expected (this command rebuilds state from partition directories; scan and dump read single files)")


def test_directory_where_a_file_is_expected(tmp_path, baseline):
    disk = example(tmp_path)
    fails_with(cli("dump", disk), 3, f"{disk}: is a directory; dump takes files (use scan for directories)")
    odd = disk / "orders-1" / "00000000000000000099.log"  # a directory named like a segment
    odd.mkdir()
    fails_with(cli("dump", odd), 3, f"{odd}: is a directory; dump takes files (use scan for directories)")
    doc = scan_json(disk)
    (f,) = [f for f in findings_of(doc) if f["path"] == str(odd)]
    assert (f["kind"], f["message"]) == ("unknown_file", "unexpected dir inside a partition dir")
    same_except(doc, baseline["scan"], damaged=())


@pytest.mark.parametrize("command", WHOLE_DISK)
def test_empty_directory_and_nothing_kafka_anywhere(tmp_path, command):
    empty, junk, deep = tmp_path / "empty", tmp_path / "junk", tmp_path / "deep"
    empty.mkdir()
    (junk / "notes").mkdir(parents=True)
    (junk / "notes" / "todo.txt").write_text("buy milk\n")
    shutil.copytree(EXAMPLE, deep / "a" / "b" / "c" / "broker-1")  # four levels down: beyond the search
    for path in (empty, junk, deep):
        fails_with(cli(command, *LOCAL, path), 3,
                   f"{path}: no Kafka log directory, partition directory or file found within 3 levels")
    fails_with(cli(command, *LOCAL, empty, junk), 3, "no Kafka log directory, partition directory or file "
               f"found within 3 levels of any input ({empty}, {junk})")


def test_empty_directory_next_to_a_disk_is_a_finding(tmp_path, baseline):
    (tmp_path / "empty").mkdir()
    doc = scan_json(tmp_path / "empty", EXAMPLE)
    assert [(f["kind"], f["path"]) for f in doc["findings"]] == [("not_kafka", str(tmp_path / "empty"))]
    same_except(doc, baseline["scan"], damaged=())
    code, out, err = cli("find-hanging", *LOCAL, tmp_path / "empty", EXAMPLE)
    assert (code, out) == (1, baseline["hanging"])
    no_traceback(err)


@pytest.mark.parametrize("command", ("find-hanging", "list"))
def test_state_commands_report_the_empty_input(tmp_path, command):
    (tmp_path / "empty").mkdir()
    _, _, err = cli(command, *LOCAL, tmp_path / "empty", EXAMPLE)
    assert f"warning: not_kafka: {tmp_path / 'empty'}: no Kafka log directory" in err


# -- permission denied on one file among many ------------------------------------------------------


@pytest.fixture
def no_override(tmp_path) -> list[str]:
    """The prefix under which file modes bind (as root: without CAP_DAC_*), checked on a 000 file."""
    prefix = without_permission_override()
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    denied = subprocess.run([*prefix, "cat", str(probe)], capture_output=True, text=True)
    probe.chmod(0o644)
    if denied.returncode == 0:
        pytest.skip("file modes do not bind here, even through " + " ".join(prefix or ["a plain process"]))
    return prefix


def test_permission_denied_on_one_segment(tmp_path, baseline, no_override):
    disk = example(tmp_path)
    locked, txn_locked = disk / "orders-1" / "00000000000000000007.log", disk / "__transaction_state-2" / \
        "00000000000000000000.log"
    for p in (locked, txn_locked):
        p.chmod(0)
    scanned = proc("scan", *LOCAL, "--format", "json", disk, prefix=no_override)
    assert scanned.returncode == 0 and without_copy_note(without_engine_line(scanned.stderr)) == "", scanned.stderr
    doc = json.loads(scanned.stdout)
    gap = [f for f in findings_of(doc) if f["kind"] == "unreadable_file"]
    assert [(f["path"], f["message"]) for f in gap] == [
        (str(txn_locked), "no read permission: this partition's offsets 0 and later cannot be analysed"),
        (str(locked), "no read permission: this partition's offsets 7 and later cannot be analysed")]
    same_except(doc, baseline["scan"], damaged=[("orders", 1), ("__transaction_state", 2)])
    orders1 = partitions_of(doc)[("orders", 1)]
    assert [(s["baseOffset"], s["batches"]) for s in orders1["segments"]] == [(0, 5), (7, 0)]
    # find-hanging: the same verdicts (the hanging transaction is on orders-0)
    hanging = proc("find-hanging", *LOCAL, disk, prefix=no_override)
    assert (hanging.returncode, hanging.stdout) == (1, baseline["hanging"])
    no_traceback(hanging.stderr)
    # list: payments-app lived in the unreadable partition; the others are listed, the gap is one line
    listed = proc("list", *LOCAL, "--format", "text", disk, prefix=no_override)
    assert listed.returncode == 0
    assert listed.stdout.splitlines()[1:] == [line for line in cli("list", *LOCAL, "--format", "text", EXAMPLE)[1]
                                              .splitlines()[1:] if not line.startswith("payments-app")]
    assert without_engine_line(listed.stderr) == (f"error: unreadable_file: {txn_locked}: no read permission: this partition's offsets "
                             "0 and later cannot be analysed\n")
    # dump: one line for the file it cannot open (after the header Kafka's tool prints first too)
    dumped = proc("dump", locked, prefix=no_override)
    assert (dumped.returncode, dumped.stderr) == (3, f"kafka-forensics: {locked}: permission denied\n")
    assert dumped.stdout == f"Dumping {locked}\nLog starting offset: 7\n"


def test_unreadable_input_directory(tmp_path, no_override):
    disk = example(tmp_path / "case")
    disk.chmod(0)
    fails_with(proc("scan", *LOCAL, disk, prefix=no_override), 3, f"{disk}: cannot list directory: Permission denied")
    fails_with(proc("find-hanging", *LOCAL, tmp_path / "case", prefix=no_override), 3, f"{tmp_path / 'case'}: no "
               "Kafka log directory, partition directory or file found within 3 levels; 1 path(s) could not be "
               f"read, e.g. {disk}: cannot list directory: Permission denied")
    disk.chmod(0o755)


def test_dump_goes_on_after_an_unreadable_file(tmp_path, no_override):
    disk = example(tmp_path)
    files = [disk / "orders-0" / f"{o:020d}.log" for o in (0, 9, 15)]
    files[1].chmod(0)
    done = proc("dump", *files, prefix=no_override)
    assert done.returncode == 3
    assert [line for line in done.stdout.splitlines() if line.startswith("Dumping")] == [f"Dumping {f}" for f in files]
    assert done.stderr == f"kafka-forensics: {files[1]}: permission denied\n"


def test_find_hanging_reports_the_unreadable_file(tmp_path, no_override):
    disk = example(tmp_path)
    (disk / "orders-1" / "00000000000000000007.log").chmod(0)
    done = proc("find-hanging", *LOCAL, disk, prefix=no_override)
    assert (f"error: unreadable_file: {disk / 'orders-1' / '00000000000000000007.log'}: no read permission: "
            "this partition's offsets 7 and later cannot be analysed") in done.stderr.splitlines()


@pytest.mark.spark
def test_permission_denied_with_spark(tmp_path, baseline, no_override):
    from forensics.pipeline.engine import spark_available

    ok, why = spark_available()
    if not ok:
        pytest.skip(why)
    disk = example(tmp_path)
    locked = disk / "orders-1" / "00000000000000000007.log"
    locked.chmod(0)
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORENSICS_DEBUG"}
    env["TMPDIR"] = str(tmp_path)
    done = proc("scan", "--engine", "spark", "--master", "local[2]", "--no-progress", "--format", "json", disk,
                prefix=no_override, env=env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [f["message"] for f in findings_of(doc) if f["kind"] == "unreadable_file"] == [
        "no read permission: this partition's offsets 7 and later cannot be analysed"]
    same_except(doc, baseline["scan"], damaged=[("orders", 1)])
    fails_with(proc("list", "--engine", "spark", "--no-progress", tmp_path / "nothing-here", env=env), 3,
               f"{tmp_path / 'nothing-here'}: no such file or directory")


# -- bytes that are not what the name says -------------------------------------------------------

TEXT = b"This is not a Kafka segment.\nJust some text somebody saved with the wrong name.\n" * 40


def test_non_kafka_file_named_like_a_segment(tmp_path, baseline):
    disk = example(tmp_path)
    fake, txn_fake = disk / "orders-1" / "00000000000000000007.log", disk / "__transaction_state-2" / \
        "00000000000000000000.log"
    for p in (fake, txn_fake):
        p.write_bytes(TEXT)
    doc = scan_json(disk)
    bad = [f for f in findings_of(doc) if f["kind"] in ("not_kafka", "corrupt_region")]
    assert [(f["kind"], f["path"], f["position"], f["end_position"]) for f in bad] == [
        ("not_kafka", str(txn_fake), 0, len(TEXT)), ("not_kafka", str(fake), 0, len(TEXT))]
    assert bad[1]["message"].startswith(f"not a Kafka segment: no valid batch in any of its {len(TEXT)} bytes (")
    same_except(doc, baseline["scan"], damaged=[("orders", 1), ("__transaction_state", 2)])
    assert scan_json("--strict", disk, code=5)["summary"]["findings"] >= 2
    # given directly: the same finding
    (f,) = findings_of(scan_json(fake))
    assert (f["kind"], f["path"], f["severity"]) == ("not_kafka", str(fake), "error")
    code, out, err = cli("list", *LOCAL, disk)
    assert code == 0 and "payments-app" not in out and "reporting-app" in out
    err = without_engine_line(err)
    assert err.startswith(f"error: not_kafka: {txn_fake}, bytes 0-{len(TEXT)}: not a Kafka segment: no valid batch "
                          f"in any of its {len(TEXT)} bytes (") and err.count("\n") == 1


GIB = 0x7FFFFFF0  # a length field claiming 2 GiB


def test_length_field_claiming_gigabytes(tmp_path, baseline):
    disk = example(tmp_path)
    seg = disk / "orders-0" / "00000000000000000000.log"  # batches at 0, 289 (offsets 3-4), 522, 600, 849
    intact = seg.read_bytes()
    rewrite_batch(seg, 289, length=GIB)
    doc = scan_json(disk)
    (f,) = [f for f in findings_of(doc) if f["path"] == str(seg) and f["severity"] != "info"]
    assert (f["kind"], f["position"], f["end_position"], f["first_offset"], f["last_offset"]) == (
        "corrupt_region", 289, 522, 3, 4)
    assert f["message"] == ("233 bytes skipped (entry size 2147483632 runs 2147482945 bytes past the end of the "
                            "file); resynced at byte 522")
    assert partitions_of(doc)[("orders", 0)]["segments"][0]["batches"] == 4  # all but the damaged one
    same_except(doc, baseline["scan"], damaged=[("orders", 0)])
    code, out, err = cli("find-hanging", *LOCAL, disk)  # the hanging transaction (offset 6) is still found
    assert (code, out) == (1, baseline["hanging"])
    no_traceback(err)
    code, out, err = cli("dump", seg)
    assert code == 0 and "position: 522 " in out and "position: 849 " in out and "position: 289 " not in out
    assert err == (f"error: corrupt_region: {seg}, bytes 289-522, offsets 3-4: 233 bytes skipped (entry size "
                   "2147483632 runs 2147482945 bytes past the end of the file); resynced at byte 522\n")
    # the last batch claiming gigabytes: a torn tail from its position
    seg.write_bytes(intact)
    rewrite_batch(seg, 849, length=GIB)
    (f,) = [f for f in findings_of(scan_json(seg)) if f["kind"] == "truncated_tail"]
    assert (f["position"], f["end_position"], f["first_offset"]) == (849, 988, 8)


def _count_mismatch_segment(part: Path) -> Path:
    """Three batches; the middle one (bytes 94-188, offsets 3-7) declares 5 records, holds 3, CRC valid."""
    recs = [RecordSpec(key=b"k%d" % i, value=b"v%d" % i) for i in range(3)]
    part.mkdir(parents=True)
    seg = part / "00000000000000000000.log"
    seg.write_bytes(encode_v2_batch(0, recs) + encode_v2_batch(3, recs, records_count=5, last_offset_delta=4)
                    + encode_v2_batch(8, recs))
    return seg


def test_batch_count_that_does_not_match_its_records(tmp_path, baseline):
    seg = _count_mismatch_segment(tmp_path / "t-0")
    line = f"error: corrupt_batch: {seg}, bytes 94-188, offsets 3-7: batch declares 5 records but its data ends after 3"
    code, out, err = cli("dump", "--deep-iteration", seg)
    assert code == 0 and err == line + " (byte 188)\n"
    assert "| offset: 10 " in out  # the batch after it is still decoded, record by record
    assert cli("dump", "--deep-iteration", "--strict", seg)[0] == 5
    # a count damaged after writing: the checksum catches it, header-only
    disk = example(tmp_path)
    rewrite_batch(disk / "orders-0" / "00000000000000000000.log", 289, count=7)
    doc = scan_json(disk)
    (f,) = [f for f in findings_of(doc) if f["kind"] == "crc_mismatch"]
    assert (f["path"], f["position"], f["end_position"]) == (str(disk / "orders-0" / "00000000000000000000.log"),
                                                            289, 522)
    same_except(doc, baseline["scan"], damaged=[("orders", 0)])
    # in __transaction_state, where records are decoded: the ids before the damage still count
    txn = disk / "__transaction_state-1" / "00000000000000000000.log"  # last batch: bytes 1265-1384, offset 9
    rewrite_batch(txn, 1265, count=2, crc=True)
    code, out, err = cli("list", *LOCAL, disk)
    assert (code, out) == (0, baseline["list"])
    assert without_engine_line(err) == (f"error: corrupt_batch: {txn}, bytes 1265-1384, offset 9: batch records do not decode: batch "
                   "declares 2 records but its data ends after 1\n")


def test_scan_flags_a_count_its_batch_cannot_hold(tmp_path):
    seg = _count_mismatch_segment(tmp_path / "t-0")
    (f,) = [f for f in findings_of(scan_json(seg)) if f["kind"] == "corrupt_batch"]
    assert (f["position"], f["end_position"], f["first_offset"]) == (94, 188, 3)


# -- symlinks ------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", WHOLE_DISK)
def test_symlinks_given_as_input(tmp_path, baseline, command):
    prev = example(tmp_path)
    for i in range(45):  # Linux follows at most 40 links while resolving one path
        (tmp_path / f"l{i}").symlink_to(prev)
        prev = tmp_path / f"l{i}"
    (tmp_path / "cyc1").symlink_to(tmp_path / "cyc2")
    (tmp_path / "cyc2").symlink_to(tmp_path / "cyc1")
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    for link in (tmp_path / "l44", tmp_path / "cyc1"):
        fails_with(cli(command, *LOCAL, link), 3, f"{link}: symbolic link loop, or a chain of links deeper than "
                   "the system follows (too many levels of symbolic links)")
    fails_with(cli(command, *LOCAL, tmp_path / "gone"), 3,
               f"{tmp_path / 'gone'}: dangling symbolic link (its target {tmp_path / 'nowhere'} does not exist)")
    if command == "scan":  # a chain the system does follow is the disk itself
        same_except(scan_json(tmp_path / "l29"), baseline["scan"], damaged=())


def test_cyclic_symlinks_inside_the_evidence(tmp_path, baseline):
    case = tmp_path / "case"
    disk = example(case)
    (case / "loop").symlink_to(case)  # back to the top
    (disk / "orders-0" / "up").symlink_to(disk)  # a partition dir pointing at its log dir
    (disk / "orders-5").symlink_to(disk / "orders-0")  # one partition under two names
    (disk / "self").symlink_to(disk / "self")
    doc = scan_json(case)
    assert len(doc["logDirs"]) == 1
    same_except(doc, baseline["scan"], damaged=())  # every partition once, orders-5 not among them
    said = {f["path"]: f["message"] for f in findings_of(doc)}
    assert said[str(case / "loop")] == f"already visited as {case} (symlink cycle or repeated input); not followed"
    assert said[str(disk / "orders-5")] == (f"already visited as {disk / 'orders-0'} (symlink cycle or repeated "
                                            "input); not followed")
    assert said[str(disk / "orders-0" / "up")] == "unexpected dir inside a partition dir"
    assert said[str(disk / "self")] == "symlink loop or chain too deep, not followed: Too many levels of symbolic links"
    assert cli("find-hanging", *LOCAL, case)[:2] == (1, baseline["hanging"])
    assert cli("list", *LOCAL, case)[:2] == (0, baseline["list"])
