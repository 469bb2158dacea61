"""Differential test: our offline producer/transaction state against a live Kafka 4.1.0 broker's answers.

Disks: ``fixtures/real/<run>/disk/`` = the broker's whole log dir (byte-for-byte copy of
``/work/shared/real-kafka/4.1.0/<run>/data``). Broker answers: ``fixtures/real/<run>/ground-truth/
broker-view-{at-stop,before-d}/`` (``kafka-transactions.sh describe-producers / list / describe``), parsed
by :mod:`tests.analysis.ground_truth`. See fixtures/real/RECIPE.md.

What must agree (the broker was stopped cleanly right after the at-stop view):

* at-stop ``describe-producers`` (``d-txn-ongoing-0..2``), ``list`` (every id) and ``describe d-tx-ongoing``;
* before-d ``describe-producers`` for every partition except ``d-txn-ongoing-*`` (nothing else was written
  to data partitions after it), and before-d ``list``/``describe`` for every id (``d-tx-ongoing`` did not
  exist yet, so it is the only id ours may have in addition).
* Not compared: ``TransactionDurationMs`` (now - start on the live broker), our extra keys, ``history``.
* The bytes of ``--format text`` against the same answers: ``tests/render/test_kafka_text.py``.

Library under test: ``forensics.report.state`` (``describe_producers_rows``, ``list_rows``,
``describe_rows``) and the CLI commands registered by ``forensics.cli.state_cmd``. Both are imported
inside the tests so that collection works before they exist.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
from pathlib import Path
from typing import Any

import pytest

from tests.analysis import ground_truth as gt
from tests.machine_output import rows_of

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"
SHARED = REPO.parent / "shared" / "real-kafka" / "4.1.0"
RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")
AT_STOP, BEFORE_D = "broker-view-at-stop", "broker-view-before-d"
VIEWS = (AT_STOP, BEFORE_D)
SHORT = {AT_STOP: "at-stop", BEFORE_D: "before-d"}
BROKER_ID = 1  # node.id of the single KRaft node (broker/server.properties, meta.properties)
ONGOING_TOPIC = "d-txn-ongoing"  # written after the before-d view
ONGOING_TXID = "d-tx-ongoing"  # created after the before-d view
MISSING = "<absent>"

# describe-producers column -> key of describe_producers_rows()
PRODUCER_FIELDS = {
    "ProducerEpoch": "producerEpoch",
    "LatestCoordinatorEpoch": "latestCoordinatorEpoch",
    "LastSequence": "lastSequence",
    "LastTimestamp": "lastTimestamp",
    "CurrentTransactionStartOffset": "currentTransactionStartOffset",
}
# list column -> key of list_rows()
LIST_FIELDS = {"Coordinator": "coordinator", "ProducerId": "producerId", "TransactionState": "transactionState"}
# describe column -> key of describe_rows() (TransactionDurationMs is "now - start": not comparable offline)
DESCRIBE_FIELDS = {
    "CoordinatorId": "coordinator",
    "ProducerId": "producerId",
    "ProducerEpoch": "producerEpoch",
    "TransactionState": "transactionState",
    "TransactionTimeoutMs": "transactionTimeoutMs",
    "CurrentTransactionStartTimeMs": "currentTransactionStartTimeMs",
    "TopicPartitions": "topicPartitions",
}
DESCRIBE_PRODUCERS_HEADER = ("ProducerId\tProducerEpoch\tLatestCoordinatorEpoch\tLastSequence\tLastTimestamp\t"
                             "CurrentTransactionStartOffset\t")


def disk(run: str) -> Path:
    return REAL / run / "disk"


def paths(run: str) -> list[str]:
    return [str(disk(run))]


@functools.cache
def view(run: str, name: str) -> gt.BrokerView:
    return gt.load_view(REAL / run / "ground-truth" / name)


def state():
    return importlib.import_module("forensics.report.state")


@functools.cache
def rebuilt(run: str, data: bool = True):
    """The state of one run's disk (one rebuild per run)."""
    return importlib.import_module("forensics.runs.rebuild").load_state(paths(run), data=data)


# -- what the broker said (collected at import time from the committed fixtures only) ------------------


def producer_tables(run: str, name: str) -> dict[tuple[str, int], list[gt.Row]]:
    tables = view(run, name).describe_producers
    if name == BEFORE_D:  # d wrote to its partitions after this view
        tables = {tp: rows for tp, rows in tables.items() if tp[0] != ONGOING_TOPIC}
    return tables


def list_view(run: str, name: str) -> dict[str, gt.Row]:
    return {str(r["TransactionalId"]): r for r in view(run, name).list_rows}


def _have_fixtures() -> bool:
    return all((REAL / run / "ground-truth" / v).is_dir() and disk(run).is_dir() for run in RUNS for v in VIEWS)


def partition_cases():
    if not _have_fixtures():
        return []
    return [pytest.param(run, name, topic, part, id=f"{run}/{SHORT[name]}/{topic}-{part}")
            for run in RUNS for name in VIEWS for (topic, part) in sorted(producer_tables(run, name))]


def describe_id_cases():
    if not _have_fixtures():
        return []
    return [pytest.param(run, name, txid, id=f"{run}/{SHORT[name]}/{txid}")
            for run in RUNS for name in VIEWS for txid in sorted(view(run, name).describe)]


def field_diffs(fields: dict[str, str], broker: gt.Row, ours: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """{our key: (broker's value, ours)} of every column of ``fields`` on which the two differ."""
    diffs = {}
    for column, key in fields.items():
        b, o = broker[column], ours.get(key, MISSING)
        if column == "TopicPartitions":
            b, o = norm_partitions(b), norm_partitions(o) if o is not MISSING else MISSING
        if b != o:
            diffs[key] = (b, o)
    return diffs


# -- what we say (cached: one library call per partition / run / id) ---------------------------------


@functools.cache
def our_producers(run: str, topic: str, partition: int) -> tuple[dict[str, Any], ...]:
    return tuple(r.as_json() for r in state().describe_producers_rows(rebuilt(run), topic, partition))


@functools.cache
def our_list(run: str) -> tuple[dict[str, Any], ...]:
    return tuple(r.as_json() for r in state().list_rows(rebuilt(run, False)))


@functools.cache
def our_describe(run: str, txid: str) -> tuple[dict[str, Any], ...]:
    return tuple(r.as_json() for r in state().describe_rows(rebuilt(run, False), txid))


def by_pid(rows, key: str = "producerId") -> dict[Any, dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = {}
    for row in rows:
        assert row[key] not in out, f"producer {row[key]} listed twice: {rows}"
        out[row[key]] = row
    return out


def norm_partitions(value: Any) -> Any:
    """TopicPartitions compared as a set of "topic-partition" strings."""
    if value is None:
        return set()
    if isinstance(value, str):
        return {p for p in value.split(",") if p}
    return {str(p) for p in value}


# -- the parser of the broker's tables (runs without forensics.report.state) ---------------------------


def test_fixtures_present():
    assert _have_fixtures(), "fixtures/real/<run>/disk and ground-truth/ copies are missing (see RECIPE.md)"
    for run in RUNS:
        assert (disk(run) / "meta.properties").is_file()
        assert (disk(run) / ".kafka_cleanshutdown").is_file()


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs /work/shared/real-kafka")
@pytest.mark.parametrize("run", RUNS)
def test_fixture_copy_is_byte_identical_to_shared(run):
    def tree(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(root.rglob("*")) if p.is_file()}
    assert tree(disk(run)) == tree(SHARED / run / "data")
    for name in VIEWS:
        assert tree(REAL / run / "ground-truth" / name) == tree(SHARED / run / "ground-truth" / name)


@pytest.mark.parametrize("run", RUNS)
def test_ground_truth_parser(run):
    stop, before = view(run, AT_STOP), view(run, BEFORE_D)
    assert sorted(stop.describe_producers) == [(ONGOING_TOPIC, p) for p in range(3)]
    assert stop.describe_producers[(ONGOING_TOPIC, 0)][0]["CurrentTransactionStartOffset"] == 2
    assert stop.describe_producers[(ONGOING_TOPIC, 2)][0]["CurrentTransactionStartOffset"] is None
    assert stop.describe_producers[(ONGOING_TOPIC, 0)][0]["topic"] == ONGOING_TOPIC
    assert len(before.describe_producers) == 33 and not any(t == ONGOING_TOPIC for t, _ in before.describe_producers)
    assert before.describe_producers[("c-plain", 0)] == []  # non-idempotent producer: no entry (pid -1)
    assert {r["ProducerId"]: r["LatestCoordinatorEpoch"] for r in before.describe_producers[("f-comp-gzip", 1)]} \
        == {8: 0, 9: -1}
    assert len(stop.list_rows) == 16 and len(before.list_rows) == 15
    assert list_view(run, AT_STOP)[ONGOING_TXID]["TransactionState"] == "Ongoing"
    assert ONGOING_TXID not in list_view(run, BEFORE_D)
    assert stop.describe[ONGOING_TXID]["TopicPartitions"] == [f"{ONGOING_TOPIC}-1", f"{ONGOING_TOPIC}-0"]
    assert len(before.describe) == 15 and all(r["TopicPartitions"] == [] for r in before.describe.values())
    assert before.describe["b-tx-fenced"]["ProducerEpoch"] == 2
    assert list(before.describe_errors) == ["TransactionalId"]  # the capture script also "described" the header
    assert gt.strip_padding(gt.describe_producers_raw(REAL / run / "ground-truth" / AT_STOP
                                                      / "describe-producers-d.txt")[(ONGOING_TOPIC, 0)][0]) \
        == DESCRIBE_PRODUCERS_HEADER


# -- describe-producers ------------------------------------------------------------------------------------


def compare_producers(broker_rows: list[gt.Row], ours, topic: str, partition: int) -> None:
    ours = list(ours)
    for row in ours:
        assert (row.get("topic"), row.get("partition")) == (topic, partition), f"row for another partition: {row}"
    broker_sorted = sorted(broker_rows, key=lambda r: r["ProducerId"])
    ours_sorted = sorted(ours, key=lambda r: r["producerId"])
    assert [r["producerId"] for r in ours_sorted] == [r["ProducerId"] for r in broker_sorted], "producer ids"
    for b, o in zip(broker_sorted, ours_sorted):
        for column, key in PRODUCER_FIELDS.items():
            assert o.get(key, MISSING) == b[column], f"producer {b['ProducerId']} {key}: broker {b[column]!r}, ours {o.get(key, MISSING)!r}"


# One test per partition, transactional id or view compares every column (a failure names each column that
# differs, with both values): once one test per column, 906 ids for the same comparisons.


@pytest.mark.parametrize("run,name,topic,partition", partition_cases())
def test_describe_producers(run, name, topic, partition):
    broker = {r["ProducerId"]: r for r in producer_tables(run, name)[(topic, partition)]}
    ours = our_producers(run, topic, partition)
    for row in ours:
        assert (row.get("topic"), row.get("partition")) == (topic, partition), f"row for another partition: {row}"
    ours_rows = by_pid(ours)
    assert sorted(ours_rows) == sorted(broker), "producer ids"
    diffs = {pid: d for pid, b in broker.items() if (d := field_diffs(PRODUCER_FIELDS, b, ours_rows[pid]))}
    assert not diffs, f"{run} {topic}-{partition}: {{producerId: {{key: (broker, ours)}}}} = {diffs}"


# -- list --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("run,name", [pytest.param(r, n, id=f"{r}/{SHORT[n]}") for r in RUNS for n in VIEWS])
def test_list_ids(run, name):
    ours = by_pid(our_list(run), key="transactionalId")
    broker = set(list_view(run, name))
    got = set(ours) - ({ONGOING_TXID} if name == BEFORE_D else set())
    assert got == broker, f"only ours: {sorted(got - broker)}, only broker: {sorted(broker - got)}"


@pytest.mark.parametrize("run,name", [pytest.param(r, n, id=f"{r}/{SHORT[n]}") for r in RUNS for n in VIEWS])
def test_list_fields(run, name):
    ours_rows = by_pid(our_list(run), key="transactionalId")
    broker = list_view(run, name)
    assert not set(broker) - set(ours_rows), f"missing from our list: {sorted(set(broker) - set(ours_rows))}"
    diffs = {txid: d for txid, b in sorted(broker.items()) if (d := field_diffs(LIST_FIELDS, b, ours_rows[txid]))}
    assert not diffs, f"{run} {SHORT[name]}: {{transactionalId: {{key: (broker, ours)}}}} = {diffs}"


# -- describe ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("run,name,txid", describe_id_cases())
def test_describe(run, name, txid):
    rows = our_describe(run, txid)
    assert len(rows) == 1, f"describe_rows({txid!r}) returned {len(rows)} rows: {rows}"
    assert rows[0].get("transactionalId") == txid
    diffs = field_diffs(DESCRIBE_FIELDS, view(run, name).describe[txid], rows[0])
    assert not diffs, f"{run} {txid}: {{key: (broker, ours)}} = {diffs}"


@pytest.mark.parametrize("run", RUNS)
def test_describe_unknown_id(run):
    """The broker answered "could not be found" for ``TransactionalId``: we must not invent a row."""
    from forensics.errors import ForensicsError

    try:
        rows = state().describe_rows(rebuilt(run, False), "TransactionalId")
    except (ForensicsError, LookupError, ValueError):
        return
    assert list(rows) == []


# -- the same through the CLI --------------------------------------------------------------------------------


def cli(*args: str):
    from typer.testing import CliRunner

    import forensics.cli.state_cmd  # noqa: F401  (registers the commands)
    from forensics.cli.app import app

    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}\n{result.exception!r}"
    return result


def cli_json(*args: str):
    out = cli(*args, "--format", "json").stdout
    return rows_of(out)


CLI_PARTITIONS = [
    ("kraft-tv2", AT_STOP, ONGOING_TOPIC, 0), ("kraft-tv2", AT_STOP, ONGOING_TOPIC, 2),
    ("kraft-rv3.9-tv0", AT_STOP, ONGOING_TOPIC, 1),
    ("kraft-tv2", BEFORE_D, "b-txn-aborts", 0), ("kraft-tv2", BEFORE_D, "b-txn-aborts", 1),
    ("kraft-tv2", BEFORE_D, "c-plain", 0), ("kraft-tv2", BEFORE_D, "f-comp-gzip", 1),
    ("kraft-tv2", BEFORE_D, "i-java-txn", 0), ("kraft-tv2", BEFORE_D, "g-compact-txn", 0),
    ("kraft-rv3.9-tv0", BEFORE_D, "b-txn-aborts", 0), ("kraft-rv3.9-tv0", BEFORE_D, "i-java-txn", 0),
]


@pytest.mark.parametrize("run,name,topic,partition",
                         [pytest.param(*c, id=f"{c[0]}/{SHORT[c[1]]}/{c[2]}-{c[3]}") for c in CLI_PARTITIONS])
def test_cli_describe_producers_json(run, name, topic, partition):
    ours = cli_json("describe-producers", *paths(run), "--topic", topic, "--partition", str(partition))
    compare_producers(producer_tables(run, name)[(topic, partition)], ours, topic, partition)


@pytest.mark.parametrize("run", RUNS)
def test_cli_list_json(run):
    ours = by_pid(cli_json("list", *paths(run)), key="transactionalId")
    broker = list_view(run, AT_STOP)
    assert set(ours) == set(broker)
    for txid, b in broker.items():
        for column, key in LIST_FIELDS.items():
            assert ours[txid].get(key, MISSING) == b[column], f"{txid} {key}: broker {b[column]!r}, ours {ours[txid].get(key, MISSING)!r}"


@pytest.mark.parametrize("run,name,txid", [pytest.param(r, n, t, id=f"{r}/{SHORT[n]}/{t}") for r in RUNS
                                           for n, t in ((AT_STOP, ONGOING_TXID), (BEFORE_D, "b-tx-fenced"),
                                                        (BEFORE_D, "b-tx-timeout"), (BEFORE_D, "i-java-perf-txn"))])
def test_cli_describe_json(run, name, txid):
    rows = cli_json("describe", *paths(run), "--transactional-id", txid)
    assert len(rows) == 1 and rows[0].get("transactionalId") == txid, rows
    broker = view(run, name).describe[txid]
    for column, key in DESCRIBE_FIELDS.items():
        b, o = broker[column], rows[0].get(key, MISSING)
        if column == "TopicPartitions":
            b, o = norm_partitions(b), norm_partitions(o) if o is not MISSING else MISSING
        assert o == b, f"{txid} {key}: broker {b!r}, ours {o!r}"
