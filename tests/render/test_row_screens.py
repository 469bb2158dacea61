"""The screens for people of find-hanging, list, describe and describe-producers (``--format table``, the
default) at 80, 100 and 160 columns (COLUMNS pins the width, as a terminal would): every line fits, the
key numbers (the abort's arguments: partition as topic-N, producer id, epochs, coordinator epoch, start
offset; and the duration) appear whole in their row, long texts fold under the table or within their
cell, ``--wide`` shows every column whatever the screen. On the example disk and the real disks; the
values are read from the same run's JSON."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
import forensics.cli.state_cmd  # noqa: F401
from forensics.cli.app import app
from forensics.render.time_text import short_duration
from tests.screen_disks import DISKS, EXAMPLE
from tests.machine_output import rows_of as json_rows

WIDTHS = (80, 100, 160)
KEYS = ("Partition", "ProducerId", "Epoch", "CoordEpoch", "StartOffset")  # find-hanging's, never left out


def run(*args, width: int | None = None) -> tuple[int, str, str]:
    env = {"COLUMNS": str(width) if width else None}  # None: unset (a pipe, no width), whatever the shell says
    r = CliRunner().invoke(app, [*map(str, args), "--no-progress", "--engine", "local"], env=env)
    assert r.exit_code in (0, 1, 7), r.output
    return r.exit_code, r.stdout, r.stderr


def rows_of(*args) -> list[dict]:
    return json_rows(run(*args, "--format", "json")[1])


def present(disk: Path) -> Path:
    if not disk.is_dir():
        pytest.skip(f"{disk} is absent")
    return disk


def fits(out: str, width: int) -> None:
    assert max(cell_len(line) for line in out.splitlines()) <= width, out


def table(out: str, title: str | None = None) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of a box table (the first, or the one titled ``title``): cells stripped, a
    row's folded lines joined to it (a continuation line has an empty cell in the first column that
    never wraps)."""
    lines = out.splitlines()
    start = 0 if title is None else next(i for i, ln in enumerate(lines) if ln.startswith(title)) + 1
    start = next(i for i in range(start, len(lines)) if lines[i].startswith("┏"))
    heads: list[list[str]] = []
    i = start + 1
    while lines[i].startswith("┃"):
        heads.append([c.strip() for c in lines[i].strip("┃").split("┃")])
        i += 1
    header = ["".join(parts) for parts in zip(*heads)]
    whole = next(header.index(h) for h in ("ProducerId", "Offset", header[0]) if h in header)
    body: list[list[str]] = []
    for ln in lines[i + 1:]:
        if not ln.startswith("│"):
            break
        cells = [c.strip() for c in ln.strip("│").split("│")]
        if body and not cells[whole]:
            body[-1] = [a + (" " if a.endswith(",") and b else "") + b for a, b in zip(body[-1], cells)]
        else:
            body.append(cells)
    return header, [dict(zip(header, r)) for r in body]


def text(value) -> str:
    return "-" if value is None else str(value)


# -- find-hanging ------------------------------------------------------------------------------------


@pytest.mark.parametrize("disk", DISKS)
@pytest.mark.parametrize("width", WIDTHS)
def test_find_hanging_fits_and_keeps_the_abort_arguments_whole(disk, width):
    disk = present(disk)
    expected = rows_of("find-hanging", disk, "--all")
    _, out, _ = run("find-hanging", disk, "--all", width=width)
    fits(out, width)
    header, rows = table(out)
    assert set(KEYS) <= set(header)
    if width >= 100:
        assert header == ["Partition", "ProducerId", "Epoch", "CoordEpoch", "StartOffset", "Duration", "Verdict"]
    assert [{k: r[k] for k in KEYS} for r in rows] == [
        {"Partition": f"{e['topic']}-{e['partition']}", "ProducerId": str(e["producerId"]),
         "Epoch": str(e["producerEpoch"]), "CoordEpoch": str(e["coordinatorEpoch"]),
         "StartOffset": str(e["startOffset"])} for e in expected]
    if "Duration" in header:
        assert [r["Duration"] for r in rows] == [short_duration(e["durationMs"]) for e in expected]
    under = " ".join(ln.strip() for ln in out.splitlines() if not ln.startswith(("┏", "┃", "┡", "│", "└")))
    for e in expected:  # each reason whole once its folded lines are joined, the last timestamp's ms beside it
        assert f"reason: {e['reason']}" in under and f"({e['lastTimestamp']})" in under


def test_find_hanging_on_the_example_disk_at_100_columns():
    _, out, _ = run("find-hanging", EXAMPLE, "--as-of", "2026-01-01T01:00:00Z", width=100)
    assert out.splitlines()[3] == "│ orders-0  │ 2002       │ 1     │ -1         │ 6           │ 59 min 53 s │ hanging │"
    assert out.splitlines()[5:] == [
        "orders-0, producer 2002 (reporting-app): hanging",
        "    last timestamp: 2026-01-01T00:00:06.251Z (1767225606251), 59 min 53 s before the as-of time",
        "    reason: coordinator has 'reporting-app' in CompleteCommit (epoch 1): no transaction in flight,",
        "        no marker will come"]


def test_a_narrow_screen_leaves_out_what_the_lines_under_the_table_say():
    _, out, _ = run("find-hanging", EXAMPLE, "--as-of", "2026-01-01T01:00:00Z", width=70)
    assert table(out)[0] == ["Partition", "ProducerId", "Epoch", "CoordEpoch", "StartOffset"]
    assert "(Duration, Verdict left out to fit 70 columns: --wide shows every " in out.splitlines()
    assert "orders-0, producer 2002 (reporting-app): hanging" in out.splitlines()  # still said under the table


@pytest.fixture(scope="module")
def long_topic(tmp_path_factory) -> Path:
    """The example disk with orders renamed to a topic of 120 characters (Kafka allows 249)."""
    root = tmp_path_factory.mktemp("long") / "broker-1"
    shutil.copytree(EXAMPLE / "broker-1", root)
    for part in ("orders-0", "orders-1"):
        (root / part).rename(root / part.replace("orders", "o" * 120))
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint", "log-start-offset-checkpoint"):
        ckpt = root / name
        if ckpt.exists():
            ckpt.write_text(ckpt.read_text().replace("orders ", "o" * 120 + " "))
    return root


@pytest.mark.parametrize("width", WIDTHS)
def test_a_long_topic_folds_in_its_cell_and_never_widens_the_table(long_topic, width):
    expected = rows_of("find-hanging", long_topic, "--all")
    assert expected
    _, out, _ = run("find-hanging", long_topic, "--all", width=width)
    fits(out, width)
    _, rows = table(out)
    assert [(r["Partition"], r["ProducerId"], r["StartOffset"]) for r in rows] == [
        ("o" * 120 + f"-{e['partition']}", str(e["producerId"]), str(e["startOffset"])) for e in expected]


@pytest.mark.parametrize("width", WIDTHS)
def test_wide_shows_every_column_whatever_the_screen(width):
    _, out, _ = run("find-hanging", EXAMPLE, "--wide", width=width)
    assert table(out)[0] == ["Partition", "Broker", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                             "LastTimestamp", "Duration", "Verdict", "TransactionalId"]
    assert "left out" not in out and "│ 2026-01-01T00:00:06.251Z │" in out
    _, out, _ = run("list", EXAMPLE, "--wide", width=width)
    assert table(out)[0] == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState", "ProducerEpoch",
                             "TransactionTimeoutMs", "LastUpdateTime", "TopicPartitions"]
    _, out, _ = run("describe-producers", EXAMPLE, "--topic", "orders", "--partition", "0", "--wide", width=width)
    assert table(out)[0] == ["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
                             "CurrentTransactionStartOffset", "LastOffset", "Broker"]


def test_a_pipe_without_columns_gets_every_line_whole():
    _, out, _ = run("find-hanging", EXAMPLE)
    assert ("    reason: coordinator has 'reporting-app' in CompleteCommit (epoch 1): no transaction in flight, no "
            "marker will come") in out.splitlines()


def test_text_is_still_kafkas_layout():
    _, out, _ = run("find-hanging", EXAMPLE, "--format", "text")
    assert out.splitlines()[0].split("\t")[:3] == ["Topic ", "Partition", "ProducerId"]  # each padded to its column


# -- list, describe, describe-producers --------------------------------------------------------------


@pytest.mark.parametrize("disk", DISKS)
@pytest.mark.parametrize("width", WIDTHS)
def test_list_fits_and_keeps_ids_states_and_producers_whole(disk, width):
    disk = present(disk)
    expected = rows_of("list", disk)
    _, out, _ = run("list", disk, width=width)
    fits(out, width)
    header, rows = table(out)
    if width >= 100:
        assert header == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState", "ProducerEpoch",
                          "TopicPartitions"]
    assert [(r["TransactionalId"], r["ProducerId"], r["TransactionState"], r["TopicPartitions"]) for r in rows] == [
        (e["transactionalId"], str(e["producerId"]), e["transactionState"], ", ".join(e["topicPartitions"]) or "-")
        for e in expected]
    if "ProducerEpoch" in header:
        assert [r["ProducerEpoch"] for r in rows] == [str(e["producerEpoch"]) for e in expected]


def _ids(disk: Path) -> list[str]:
    return [r["transactionalId"] for r in rows_of("list", disk)]


@pytest.mark.parametrize("disk", DISKS)
@pytest.mark.parametrize("width", WIDTHS)
def test_describe_shows_the_metadata_as_fields_and_the_history_fitted(disk, width):
    disk = present(disk)
    txid = "d-tx-ongoing" if "d-tx-ongoing" in _ids(disk) else "reporting-app"
    [expected] = rows_of("describe", disk, "--transactional-id", txid)
    _, out, _ = run("describe", disk, "--transactional-id", txid, width=width)
    fits(out, width)
    fields = {ln.split()[0]: ln.split(None, 1)[1] for ln in out.split("\n\n")[0].splitlines() if ln[:1] != " "}
    assert {k: fields[k] for k in ("CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch",
                                   "TransactionState")} == {
        "CoordinatorId": str(expected["coordinatorId"]), "TransactionalId": txid,
        "ProducerId": str(expected["producerId"]), "ProducerEpoch": str(expected["producerEpoch"]),
        "TransactionState": expected["transactionState"]}
    assert fields["TransactionTimeoutMs"].startswith(f"{expected['transactionTimeoutMs']} (")
    assert fields["TopicPartitions"] == (", ".join(expected["topicPartitions"]) or "-")
    header, history = table(out, f"History in __transaction_state-{expected['transactionStatePartition']}")
    assert [(r["Offset"], r["TransactionState"]) for r in history] == [
        (str(h["offset"]), h["transactionState"]) for h in expected["history"]]


def test_describe_at_100_columns():
    _, out, _ = run("describe", EXAMPLE, "--transactional-id", "reporting-app", width=100)
    assert out.splitlines()[:9] == [
        "CoordinatorId                1",
        "TransactionalId              reporting-app",
        "ProducerId                   2002",
        "ProducerEpoch                1",
        "TransactionState             CompleteCommit",
        "TransactionTimeoutMs         30000 (30.000 s)",
        "CurrentTransactionStartTime  2026-01-01T00:00:06.000Z (1767225606000), 7.300 s before the as-of time",
        "TransactionDurationMs        7300 (7.300 s)",
        "TopicPartitions              -"]


@pytest.mark.parametrize("disk", DISKS)
@pytest.mark.parametrize("width", WIDTHS)
def test_describe_producers_fits_and_keeps_the_abort_arguments_whole(disk, width):
    disk = present(disk)
    topic = "d-txn-ongoing" if disk != EXAMPLE else "orders"
    expected = rows_of("describe-producers", disk, "--topic", topic, "--partition", "0")
    _, out, _ = run("describe-producers", disk, "--topic", topic, "--partition", "0", "--timeline", width=width)
    fits(out, width)
    header, rows = table(out, "Producers")
    assert out.startswith(f"Producers of {topic}-0 on broker {expected[0]['brokerId']}")
    assert [(r["ProducerId"], r["Epoch"], r["CoordEpoch"], r["StartOffset"]) for r in rows] == [
        (str(e["producerId"]), str(e["producerEpoch"]), str(e["latestCoordinatorEpoch"]),
         text(e["currentTransactionStartOffset"])) for e in expected]
    _, spans = table(out, "Transactions")
    assert [(r["ProducerId"], r["FirstOffset"], r["MarkerOffset"], r["Outcome"]) for r in spans] == [
        (str(e["producerId"]), str(s["firstOffset"]), text(s["markerOffset"]), s["outcome"])
        for e in expected for s in e["transactions"]]


# -- an empty answer: one line on stdout for people; machine formats stay empty -----------------------

REAL_TV2 = Path(__file__).resolve().parents[2] / "fixtures" / "real" / "kraft-tv2" / "disk"


def test_nothing_hanging_says_so_and_what_else_is_open():
    """kraft-tv2: d-tx-ongoing is open on d-txn-ongoing-0 and -1, Ongoing and in time: nothing hangs."""
    ongoing = rows_of("find-hanging", REAL_TV2, "--all")
    assert [r["verdict"] for r in ongoing] == ["ongoing", "ongoing"]
    code, out, err = run("find-hanging", REAL_TV2, width=100)
    assert code == 0 and out == f"no hanging transaction; {len(ongoing)} ongoing: see --all\n"
    assert "see --all" not in err  # said once, on stdout
    _, out, _ = run("find-hanging", REAL_TV2, "--all", "--topic", "c-plain", width=100)
    assert out == "no open transaction\n"
    assert rows_of("find-hanging", REAL_TV2) == []  # JSON: the empty array
    _, csv, err = run("find-hanging", REAL_TV2, "--format", "csv")
    assert csv.count("\n") == 1 and csv.startswith("Topic,Partition,")  # the header row alone
    assert "2 other open transaction(s) (ongoing): see --all" in err.splitlines()  # beside a machine format
    _, kafka, err = run("find-hanging", REAL_TV2, "--format", "text")  # Kafka's tool: its header alone
    assert kafka == ("Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\tLastTimestamp\t"
                     "Duration(min)\t\n")
    assert "see --all" in err


def test_no_producer_and_no_id_say_so():
    _, out, _ = run("describe-producers", REAL_TV2, "--topic", "c-plain", "--partition", "1", width=100)
    assert out == "no active producer on c-plain-1\n"  # a plain producer keeps no producer state
    _, out, _ = run("describe-producers", REAL_TV2, "--topic", "c-plain", "--partition", "1", "--broker-id", "1")
    assert out == "no active producer on c-plain-1 on broker 1\n"
    assert rows_of("describe-producers", REAL_TV2, "--topic", "c-plain", "--partition", "1") == []
    _, out, err = run("list", REAL_TV2, "--state", "PrepareCommit", width=100)
    assert out.startswith("no transactional id is in state PrepareCommit; states in the evidence: ")
    assert "PrepareCommit" not in err  # said once
    _, out, err = run("list", REAL_TV2, "--state", "PrepareCommit", "--format", "text")
    assert out == "TransactionalId\tCoordinator\tProducerId\tTransactionState\t\n"
    assert "no transactional id is in state PrepareCommit" in err


@pytest.mark.parametrize("fmt", ["text", "csv"])
def test_the_timeline_is_the_tables_alone(fmt):
    r = CliRunner().invoke(app, ["describe-producers", str(EXAMPLE), "--topic", "orders", "--partition", "0",
                                 "--timeline", "--format", fmt, "--no-progress"])
    assert r.exit_code == 2 and r.stdout == ""
    assert "--timeline: the table format only" in r.stderr


def test_a_log_dir_without_partitions_says_so(tmp_path):
    import forensics.cli.scan_cmd  # noqa: F401  (registers scan)

    broker = tmp_path / "broker-1"
    broker.mkdir()
    for name in ("meta.properties", "cleaner-offset-checkpoint", "log-start-offset-checkpoint"):
        (broker / name).write_bytes((EXAMPLE / "broker-1" / name).read_bytes())
    _, out, _ = run("scan", tmp_path, width=100)
    assert "Partitions: none" in out.splitlines() and "Partitions\n" not in out
    _, full, _ = run("scan", EXAMPLE, width=100)
    assert "Partitions: none" not in full
