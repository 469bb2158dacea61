"""``report --topic/--partition/--broker-id``: the report of a selection shows its partitions alone
(LSO chart and table, open transactions and their commands, timelines, findings), judged exactly as
the report of every partition judges them, and says on the page (title, first line, banner, a card,
each section) and on stderr which selection it shows and what it left out, so that it is never read
as an all-clear of the cluster. A value that names nothing exits 2 as on every other command.

The expectations come from the report without the options (the whole), never from constants: the
selection's parts must be the whole's parts of those partitions, and what it counts as left out the
rest of the whole."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.report_cmd  # noqa: F401  (registers the command)
from forensics.cli.app import app
from forensics.render.html_report import html_report
from forensics.report.incident_model import Incident
from forensics.runs.context import EngineChoice, EngineName, Evidence
from forensics.runs.hanging import ReportRequest, VerdictRequest, incident_report

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
REAL_FIXTURE = REPO / "fixtures" / "real" / "kraft-tv2" / "disk"
REAL_SHARED = REPO.parent / "shared" / "real-kafka" / "4.1.0" / "kraft-tv2" / "data"
AS_OF = "2026-01-01T00:00:20Z"
runner = CliRunner()


def run(*args):
    return runner.invoke(app, ["report", *map(str, args), "--no-progress", "--engine", "local"])


def text(page: str) -> str:
    """The page's words as a reader sees them (no style, no tags, entities decoded, spaces folded)."""
    page = re.sub(r"<style>.*?</style>|<svg.*?</svg>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page))).strip()


def lso_table(page: str) -> list[str]:
    """The partitions of the "every partition" table."""
    table = page.split('<section id="lso-lag">', 1)[1].split("</section>", 1)[0].split("<tbody>", 1)[1]
    return re.findall(r"<tr><td>([^<]*)</td>", table)


def report(path: Path, topic=None, partition=None, broker_id=None) -> Incident:
    req = VerdictRequest(Evidence((str(path),)), EngineChoice(EngineName.local), topic=topic, partition=partition,
                         broker_id=broker_id)
    return incident_report(ReportRequest(req)).incident


# -- a value that names nothing ----------------------------------------------------------------------


@pytest.mark.parametrize("args, line", [
    (("--topic", "order"), "no topic 'order' in the evidence; did you mean 'orders'?"),
    (("--topic", "zzz"), "no topic 'zzz' in the evidence; topics: __cluster_metadata, __transaction_state, orders, payments"),
    (("--topic", "orders", "--partition", "5"), "no partition 5 of topic 'orders' in the evidence; partitions: 0-1"),
    (("--broker-id", "7"), "no broker 7 in the evidence; brokers: 1"),
    (("--partition", "1"), "--partition needs --topic"),
])
def test_a_value_that_names_nothing_exits_2_as_find_hanging_does_and_writes_nothing(tmp_path, args, line):
    out = tmp_path / "r.html"
    r = run(EXAMPLE, "--out", out, *args)
    assert r.exit_code == 2, r.output
    assert r.stderr.splitlines() == ["kafka-forensics: " + line]
    assert r.stdout == "" and not out.exists()
    same = runner.invoke(app, ["find-hanging", str(EXAMPLE), *args])
    assert same.exit_code == 2 and same.stderr == r.stderr


# -- the example disk, through the command ---------------------------------------------------------


def test_one_topic_shows_it_alone_and_says_what_it_left_out(tmp_path):
    whole_out, out = tmp_path / "whole.html", tmp_path / "payments.html"
    assert run(EXAMPLE, "--out", whole_out, "--as-of", AS_OF).exit_code == 0
    r = run(EXAMPLE, "--out", out, "--as-of", AS_OF, "--topic", "payments")
    assert r.exit_code == 0, r.output
    whole, page = whole_out.read_text(encoding="utf-8"), out.read_text(encoding="utf-8")
    everything = lso_table(whole)
    assert [p for p in everything if p.startswith("payments-")] == lso_table(page) == ["payments-0"]
    left = [p for p in everything if not p.startswith("payments-")]
    hanging_elsewhere = whole.count('<article class="txn tone-hanging">')
    assert hanging_elsewhere >= 1  # the example's hanging transaction is on orders-0: left out here
    assert '<article class="txn' not in page and "abort --topic" not in page
    words = text(page)
    assert "<title>Kafka incident report: topic &#x27;payments&#x27; only as of 2026-01-01T00:00:20.000Z</title>" in page
    assert words.startswith(
        "Kafka incident report: topic 'payments' only as of 2026-01-01T00:00:20.000Z Kafka incident report "
        f"no transaction proven hanging in topic 'payments' · left out, not shown: {hanging_elsewhere} proven hanging "
        "· as of 2026-01-01T00:00:20.000Z · 0 finding(s)")
    banner = ("SELECTION: topic 'payments' only ( --topic payments ). This report shows these partitions alone; "
              f"left out: {len(left)} other partitions (1 other topic), with 1 open transaction, of which "
              f"{hanging_elsewhere} proven hanging; 0 findings on their replicas; 1 transactional id with nothing in "
              "the selection. It is no verdict on the whole cluster: the report without --topic , --partition and "
              "--broker-id gives that.")
    assert banner in words
    assert f"{len(left)} partitions left out 1 open transaction left out, not shown: 1 proven hanging" in words
    for section in ("The partitions", "The open transactions", "The transactional ids with a transaction or "
                    "coordinator record on the partitions"):
        assert f"{section} of topic 'payments' only (see the top)." in words
    assert "None proven here: no abort is armed." in words
    summary = [line for line in r.stderr.splitlines() if line.startswith("report: ")]
    assert len(summary) == 1 and re.fullmatch(
        rf"report: {re.escape(str(out))}, \d+\.\d KiB \([\d,]+ bytes\): 0 hanging, 0 unverifiable, 0 open transaction\(s\), "
        rf"0 finding\(s\) for topic 'payments' only; left out: {len(left)} other partitions \(1 other topic\), with "
        rf"1 open transaction, of which 1 proven hanging; as of 2026-01-01T00:00:20\.000Z .*", summary[0])


def test_one_partition_keeps_its_hanging_transaction_and_commands(tmp_path):
    whole_out, out = tmp_path / "whole.html", tmp_path / "orders-0.html"
    assert run(EXAMPLE, "--out", whole_out, "--as-of", AS_OF, "--bootstrap-server", "kafka-1:9092").exit_code == 0
    r = run(EXAMPLE, "--out", out, "--as-of", AS_OF, "--bootstrap-server", "kafka-1:9092", "--topic", "orders",
            "--partition", "0")
    assert r.exit_code == 0, r.output
    whole, page = whole_out.read_text(encoding="utf-8"), out.read_text(encoding="utf-8")
    assert lso_table(page) == ["orders-0"]
    cards = re.findall(r'<article class="txn.*?</article>', page)
    assert cards and cards == [c for c in re.findall(r'<article class="txn.*?</article>', whole)
                               if "<h3>orders-0 " in c]
    assert "kafka-transactions.sh --bootstrap-server kafka-1:9092 abort --topic orders --partition 0" in page
    assert text(page).split(" · as of ")[0].endswith(
        f"{len(cards)} hanging transaction(s) in topic 'orders', partition 0")
    assert "SELECTION: topic 'orders', partition 0 only ( --topic orders --partition 0 )." in text(page)


def test_without_the_options_nothing_is_said_of_a_selection(tmp_path):
    out = tmp_path / "r.html"
    assert run(EXAMPLE, "--out", out, "--as-of", AS_OF).exit_code == 0
    page = out.read_text(encoding="utf-8")
    assert "SELECTION" not in page and "left out" not in page and " only (see the top)" not in page


def test_one_broker_counts_what_the_likely_leader_on_another_broker_shows(tmp_path):
    """unclean-election: broker 2 (the leader, without the marker) shows the transaction hanging, broker
    1 (with the marker) shows none: the report of broker 1 says the other broker's replicas hold one."""
    from fixtures.hanging_scenarios import build

    disk = build("unclean-election", tmp_path / "disk")
    whole = report(disk)
    assert whole.summary.hanging == 1 and {t.broker_id for t in whole.transactions} == {2}
    one, two = report(disk, broker_id=1), report(disk, broker_id=2)
    assert one.summary.hanging == 0 and one.selection.hanging_left_out == 1
    assert two.transactions == whole.transactions and two.selection.open_left_out == 0
    words = text(html_report(one))
    assert ("no transaction proven hanging in the replicas on broker 1 · left out, not shown: 1 proven hanging"
            in words)
    assert ("SELECTION: the replicas on broker 1 only ( --broker-id 1 ). This report shows these partitions alone; "
            "left out: the replicas on other brokers, with 1 open transaction, of which 1 proven hanging;") in words
    only = report(disk, "ue")  # the disk's one data topic: nothing left out, still said to be a selection
    assert (only.transactions, only.lso) == (whole.transactions, whole.lso)
    assert "left out: no other data partition among the inputs; 0 findings on their replicas;" in \
           text(html_report(only))


# -- real disks written by Kafka 4.1.0: the selection is the whole's part ----------------------------


def _real(path: Path) -> Path:
    if not path.is_dir():
        pytest.skip(f"{path} is absent (a real Kafka 4.1.0 disk, ../shared/real-kafka)")
    return path


# the shared disk is byte for byte the fixture's copy (tests/analysis/test_real_broker_state.py checks it): slow tier
@pytest.mark.parametrize("disk", [REAL_FIXTURE, pytest.param(REAL_SHARED, marks=pytest.mark.slow)],
                         ids=["fixture", "shared"])
def test_on_a_real_disk_each_topic_is_the_whole_reports_part(disk):
    disk = _real(disk)
    whole = report(disk)
    topics = sorted({lag.topic for lag in whole.lso})
    assert len(topics) > 3 and whole.selection is None
    open_topics = {t.topic for t in whole.transactions}
    assert open_topics  # the disk holds open transactions: the counts below are not all zero
    for topic in topics:
        part = report(disk, topic)
        s = part.selection
        assert (s.topic, s.partition, s.broker_id) == (topic, None, None)
        assert part.lso == tuple(lag for lag in whole.lso if lag.topic == topic)
        assert part.transactions == tuple(t for t in whole.transactions if t.topic == topic)
        assert part.summary.partitions + s.partitions_left_out == whole.summary.partitions
        assert part.summary.topics == 1 and s.topics_left_out == len(topics) - 1
        for mine, left, every in ((part.summary.open_transactions, s.open_left_out, whole.summary.open_transactions),
                                  (part.summary.hanging, s.hanging_left_out, whole.summary.hanging),
                                  (part.summary.unverifiable, s.unverifiable_left_out, whole.summary.unverifiable),
                                  (part.summary.attention, s.attention_left_out, whole.summary.attention)):
            assert mine + left == every, topic
        # whole: the coordinators, the brokers, the clock
        for name in ("brokers", "log_dirs", "txn_state_partitions", "transactional_ids", "log_bytes"):
            assert getattr(part.summary, name) == getattr(whole.summary, name)
        assert (part.as_of_ms, part.warnings) == (whole.as_of_ms, whole.warnings)
        # timelines: the ids that wrote to the topic, with its lanes alone
        assert all(t.lanes for t in part.timelines)  # none drawn without a lane in the selection
        lanes = {t.title: {lane.name for lane in t.lanes if lane.present} for t in part.timelines}
        assert all(name.rsplit("-", 1)[0] == topic for names in lanes.values() for name in names)
        wrote = {t.title for t in whole.timelines if any(lane.present and lane.spans and lane.name.rsplit("-", 1)[0]
                                                         == topic for lane in t.lanes)}
        assert wrote <= set(lanes)
        assert len(part.timelines) + s.timelines_left_out + part.timelines_omitted == \
            len(whole.timelines) + whole.timelines_omitted
        words = text(html_report(part))
        assert f"SELECTION: topic '{topic}' only ( --topic {topic} )." in words
        verdict = "hanging transaction(s)" if part.summary.hanging else "no transaction proven hanging"
        assert f"{verdict} in topic '{topic}'" in words


def test_on_a_real_disk_one_partition_and_its_broker(tmp_path):
    disk = _real(REAL_SHARED)
    whole = report(disk)
    topic = sorted(t.topic for t in whole.transactions)[0]
    partition = min(t.partition for t in whole.transactions if t.topic == topic)
    part = report(disk, topic, partition)
    assert [(lag.topic, lag.partition) for lag in part.lso] == [(topic, partition)]
    assert part.transactions == tuple(t for t in whole.transactions if (t.topic, t.partition) == (topic, partition))
    assert part.selection.partitions_left_out == whole.summary.partitions - 1
    broker = whole.summary.brokers[0]
    mine = report(disk, broker_id=broker)  # a one-broker disk: the broker holds every partition
    assert whole.summary.brokers == (broker,)
    assert (mine.lso, mine.transactions) == (whole.lso, whole.transactions)
    assert mine.selection.partitions_left_out == mine.selection.open_left_out == 0
    assert ("left out: the replicas on other brokers, with 0 open transactions; 0 findings on their replicas; "
            "0 transactional ids with nothing in the selection.") in text(html_report(mine))
    out = tmp_path / "r.html"
    r = run(disk, "--out", out, "--topic", topic, "--partition", partition)
    assert r.exit_code == 0, r.output
    assert lso_table(out.read_text(encoding="utf-8")) == [f"{topic}-{partition}"]
    r = run(disk, "--out", out, "--overwrite", "--topic", topic, "--partition", "99")
    assert r.exit_code == 2 and r.stderr.startswith(f"kafka-forensics: no partition 99 of topic '{topic}' in the "
                                                    "evidence; partitions: ")


def test_the_abort_script_of_a_selection_says_so():
    args = ["abort-commands", str(EXAMPLE), "--bootstrap-server", "h:9092", "--engine", "local", "--no-progress"]
    whole = runner.invoke(app, args)
    part = runner.invoke(app, [*args, "--topic", "payments"])
    assert whole.exit_code == part.exit_code == 0
    assert not [line for line in whole.stdout.splitlines() if line.startswith("# only ")]
    assert part.stdout.splitlines()[2] == ("# only topic 'payments' (--topic payments): the open transactions outside "
                                           "it are not in this script")
    assert "# nothing to abort" in part.stdout and "# nothing to abort" not in whole.stdout
    one = runner.invoke(app, [*args, "--topic", "orders", "--partition", "0", "--broker-id", "1"])
    assert one.stdout.splitlines()[2] == ("# only topic 'orders', partition 0, the replicas on broker 1 (--topic orders "
                                          "--partition 0 --broker-id 1): the open transactions outside it are not in "
                                          "this script")
    assert one.stdout.replace(one.stdout.splitlines()[2] + "\n", "", 1) == whole.stdout
