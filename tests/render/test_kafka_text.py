"""``--format text`` is byte for byte the table ``kafka-transactions.sh`` 4.1 prints, where the disk gives
the same facts as the live broker had.

Oracles: the real tool's answers saved while the broker of each disk was up
(``/work/shared/real-kafka/4.1.0/<run>/ground-truth/broker-view-*/``; copied into
``fixtures/real/<run>/ground-truth/``, see fixtures/real/RECIPE.md), and the headers compiled into the
real 4.1.0 tool (``kafka-tools-4.1.0.jar``, ``TransactionsCommand$*Command.HEADERS``). The at-stop
answers match the disk exactly (clean stop right after them); the before-d answers match it except
``d-txn-ongoing-*`` and ``d-tx-ongoing`` (written after them). Never comparable: ``TransactionDurationMs``
(the live clock minus the start; ours: the as-of time) and the order of ``list``'s rows (the
coordinators' caches). The fixture tests run everywhere; the full comparison of every saved answer
needs ``/work/shared``.
"""

from __future__ import annotations

import re
import struct
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.hanging_cmd  # noqa: F401  (registers the commands)
import forensics.cli.state_cmd  # noqa: F401
from forensics.cli.app import app
from forensics.render.kafka_text import (
    DESCRIBE_TEXT,
    HANGING_TEXT,
    LIST_TEXT,
    PRODUCERS_TEXT,
    java_hash_order,
    java_long_hash,
    java_string_hash,
)
from forensics.render.rows import KafkaColumn, KafkaLayout, kafka_table

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "real"
SHARED = REPO.parent / "shared" / "real-kafka" / "4.1.0"
TOOLS_JAR = REPO.parent / "shared" / "kafka" / "kafka_2.13-4.1.0" / "libs" / "kafka-tools-4.1.0.jar"
RUNS = ("kraft-tv2", "kraft-rv3.9-tv0")
AT_STOP, BEFORE_D = "broker-view-at-stop", "broker-view-before-d"
LATER = "d-txn-ongoing", "d-tx-ongoing"  # the topic and the id written after the before-d answers
DURATION = DESCRIBE_TEXT.columns.index(next(c for c in DESCRIBE_TEXT.columns if c.header == "TransactionDurationMs"))


def _disk(root: Path, run: str) -> Path:
    return root / run / ("disk" if root == FIXTURES else "data")


def _shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent (the fixture copies in fixtures/real are compared instead)")
    return SHARED


def _ours(*args) -> str:
    r = CliRunner().invoke(app, [*map(str, args), "--format", "text", "--no-progress", "--engine", "local"],
                           env={"COLUMNS": "60"})  # a narrow screen: text never folds
    assert r.exit_code == 0, (r.exit_code, r.stdout, r.stderr)
    return r.stdout


def _tables(path: Path) -> list[tuple[str, list[str]]]:
    """The saved tables of ``path`` with the line before each (``$ command`` or ``# topic-N``)."""
    found: list[tuple[str, list[str]]] = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith(("$ ", "# ")):
            found.append((line[2:], []))
        elif line.endswith("\t"):
            if not found:
                found.append(("", []))
            found[-1][1].append(line)
    return [(context, lines) for context, lines in found if lines]


def _topic_partition(context: str) -> tuple[str, int]:
    m = re.search(r"--topic (\S+) --partition (\d+)", context) or re.fullmatch(r"(\S+)-(\d+)", context)
    assert m, context
    return m.group(1), int(m.group(2))


def _lines(text: str) -> list[str]:
    assert text.endswith("\n") and "\n\n" not in text, repr(text)
    return text[:-1].split("\n")


def _without_duration(line: str) -> list[str]:
    cells = line.split("\t")
    cells[DURATION] = " " * len(cells[DURATION])  # the live clock's, not the disk's
    return cells


# -- the saved answers: every one the disk agrees with --------------------------------------------


def _compare_producers(root: Path, run: str, view: str, name: str) -> int:
    compared = 0
    for context, kafka in _tables(root / run / "ground-truth" / view / name):
        topic, partition = _topic_partition(context)
        if view == BEFORE_D and topic == LATER[0]:
            continue
        ours = _lines(_ours("describe-producers", _disk(root, run), "--topic", topic, "--partition", partition))
        assert ours == kafka, f"{run} {view} {topic}-{partition}"  # bytes: padding, TABs, order, None
        compared += 1
    return compared


def _compare_describe(root: Path, run: str, view: str, name: str) -> int:
    compared = 0
    for context, kafka in _tables(root / run / "ground-truth" / view / name):
        txid = re.search(r"--transactional-id (\S+)", context)
        txid = txid.group(1) if txid else LATER[1]  # at-stop's file answers describe d-tx-ongoing
        if view == BEFORE_D and txid == LATER[1]:
            continue
        ours = _lines(_ours("describe", _disk(root, run), "--transactional-id", txid))
        assert ours[0] == kafka[0] and [_without_duration(x) for x in ours] == [_without_duration(x) for x in kafka], \
            f"{run} {view} {txid}"
        compared += 1
    return compared


def _compare_list(root: Path, run: str, view: str) -> None:
    [(_, kafka)] = _tables(root / run / "ground-truth" / view / "transactions-list.txt")
    ours = _lines(_ours("list", _disk(root, run)))
    if view == BEFORE_D:  # d-tx-ongoing came later; it widens no column
        ours = [x for x in ours if not x.startswith(LATER[1] + " ")]
    assert ours[0] == kafka[0]
    assert Counter(ours[1:]) == Counter(kafka[1:])  # each row's bytes; the order is the coordinators' caches'


def _compare_find_hanging(root: Path, run: str) -> None:
    for name, options in (("find-hanging-default.txt", ()), ("find-hanging-1min.txt", ("--max-transaction-timeout", "1"))):
        [(context, kafka)] = _tables(root / run / "ground-truth" / BEFORE_D / name)
        assert "find-hanging" in context
        assert _lines(_ours("find-hanging", _disk(root, run), "--broker-id", "1", *options)) == kafka, name


@pytest.mark.parametrize("run", RUNS)
def test_fixture_answers_at_stop_byte_for_byte(run):
    """The answers copied into fixtures/real: describe-producers of d-txn-ongoing-0..2, describe
    d-tx-ongoing (its partition set in the client's HashSet order), list, find-hanging."""
    assert _compare_producers(FIXTURES, run, AT_STOP, "describe-producers-d.txt") == 3
    assert _compare_describe(FIXTURES, run, AT_STOP, "describe-d-tx-ongoing.txt") == 1
    _compare_list(FIXTURES, run, AT_STOP)
    _compare_find_hanging(FIXTURES, run)


# ~60 commands a run: the second run (the same workload and answer files as kraft-tv2, the same
# renderers; its at-stop answers are compared above in the fast tier too) is in the slow tier
@pytest.mark.parametrize("run", [RUNS[0], pytest.param(RUNS[1], marks=pytest.mark.slow)])
def test_every_shared_answer_byte_for_byte(run):
    """Every answer kept in /work/shared the disk gives the same facts for, the disk read there too."""
    root = _shared()
    assert _compare_producers(root, run, BEFORE_D, "describe-producers.txt") >= 30
    assert _compare_producers(root, run, AT_STOP, "describe-producers-d.txt") == 3
    assert _compare_describe(root, run, BEFORE_D, "transactions-describe.txt") >= 14
    assert _compare_describe(root, run, AT_STOP, "describe-d-tx-ongoing.txt") == 1
    for view in (AT_STOP, BEFORE_D):
        _compare_list(root, run, view)
    _compare_find_hanging(root, run)


# -- the tool's own layout ---------------------------------------------------------------------------


def _string_constants(data: bytes) -> list[str]:
    """The ``CONSTANT_String`` entries of a class file, in constant-pool order (JVMS 4.4)."""
    count, = struct.unpack_from(">H", data, 8)
    utf8: dict[int, str] = {}
    strings: list[int] = []
    pos, i = 10, 1
    sizes = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2}
    while i < count:
        tag = data[pos]
        if tag == 1:
            n, = struct.unpack_from(">H", data, pos + 1)
            utf8[i] = data[pos + 3:pos + 3 + n].decode("utf-8", "replace")
            pos += 3 + n
        else:
            if tag == 8:
                strings.append(struct.unpack_from(">H", data, pos + 1)[0])
            pos += 1 + sizes[tag]
        i += 2 if tag in (5, 6) else 1
    return [utf8[s] for s in strings]


@pytest.mark.parametrize("command,layout", [("FindHangingTransactionsCommand", HANGING_TEXT),
                                            ("ListTransactionsCommand", LIST_TEXT),
                                            ("DescribeTransactionsCommand", DESCRIBE_TEXT),
                                            ("DescribeProducersCommand", PRODUCERS_TEXT)])
def test_headers_are_those_compiled_into_the_real_tool(command, layout):
    if not TOOLS_JAR.is_file():
        pytest.skip(f"{TOOLS_JAR} is absent (the saved answers' headers are compared instead)")
    with zipfile.ZipFile(TOOLS_JAR) as jar:
        constants = _string_constants(jar.read(f"org/apache/kafka/tools/TransactionsCommand${command}.class"))
    headers = [c.header for c in layout.columns]
    starts = [i for i in range(len(constants)) if constants[i:i + len(headers)] == headers]
    assert starts, (headers, constants)  # HEADERS = asList(...): these strings, in this order


def test_pretty_print_table_pads_each_cell_and_ends_each_line_with_a_tab():
    layout = KafkaLayout((KafkaColumn("Topic", lambda r: r["t"]), KafkaColumn("P", lambda r: str(r["p"]))))
    assert kafka_table([], layout) == "Topic\tP\t\n"  # no row: Kafka's header alone
    assert kafka_table([{"t": "a", "p": 10}, {"t": "b\x1b", "p": 0}], layout) == \
        "Topic\tP \t\na    \t10\t\nb\\x1b\t0 \t\n"  # evidence text escaped, then padded
    # String.length(): a character outside the BMP is two UTF-16 units wide
    assert kafka_table([{"t": "\U0001f600", "p": 1}], layout).split("\n")[1] == "\U0001f600   \t1\t"


def test_java_hash_orders_are_javas():
    """Printed by OpenJDK 17 (``new HashSet<>()``/``HashMap`` filled in this order, then printed)."""
    assert java_string_hash("hello") == 99162322
    assert java_hash_order(["apple", "banana", "cherry"], java_string_hash) == ["banana", "apple", "cherry"]
    assert java_hash_order([f"k{i}" for i in range(20)], java_string_hash) == [
        "k0", "k1", "k2", "k3", "k4", "k5", "k11", "k6", "k10", "k7", "k13", "k8", "k12", "k9", "k15", "k14",
        "k17", "k16", "k19", "k18"]  # resized past 12 entries
    assert java_hash_order([20, 3, 1000, 17, 65536 * 65536 + 5, 36, 4], java_long_hash) == [
        17, 3, 20, 4294967301, 36, 4, 1000]


@pytest.mark.parametrize("args", [("find-hanging", "--all"), ("list",), ("describe", "--transactional-id", "d-tx-ongoing"),
                                  ("describe-producers", "--topic", "d-txn-ongoing", "--partition", "0")])
def test_text_is_the_table_alone_at_any_width(args):
    """Nothing of ours on stdout (no reason, no history, no line under a row), never folded."""
    disk = _disk(FIXTURES, "kraft-tv2")
    outs = []
    for width in ("40", "200"):
        r = CliRunner().invoke(app, [args[0], str(disk), *args[1:], "--format", "text", "--no-progress"],
                               env={"COLUMNS": width})
        assert r.exit_code == 0, r.output
        outs.append(r.stdout)
    assert outs[0] == outs[1]
    lines = _lines(outs[0])
    assert all(line.endswith("\t") and line.count("\t") == lines[0].count("\t") for line in lines), lines
