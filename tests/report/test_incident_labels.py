"""The incident report's label table (``forensics.report.incident_labels``) against the rows
``find-hanging --format json`` writes, and the pages built from them.

Rows come from the example disk, every hanging scenario, a disk where another producer's open
transaction sits behind the hanging one and a consumer group waits at its LSO (both optional
records of the abort preview filled), and the real Kafka 4.1 disks in ../shared when present.
Every key of every row has an entry in the table (the test fails on a new key until it gets a
label), and the pages say in words what each value is: no raw key, no bare null / true / false,
times as ISO-8601 UTC with their epoch ms and age.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple

import pytest

from fixtures import hanging_scenarios as hs
from fixtures.generator import Produce, RecordSpec, TopicSpec, Txn, build_disk, encode_v2_batch
from fixtures.scenario_specs import disk, txn_producer
from forensics.render.html_report import html_report
from forensics.render.time_text import duration, iso
from forensics.render.reasons import worded_row
from forensics.report.hanging import find_hanging
from forensics.report.incident import build_incident, flatten
from forensics.report.incident_labels import LABELS, table_key
from forensics.runs.hanging import with_previews
from forensics.runs.rebuild import load_state
from forensics.render.clock_text import as_of_source
from tests.render.test_html_report import fed
from tests.report.test_abort_preview import _commit_key, _commit_value

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
REAL = REPO.parent / "shared" / "real-kafka" / "4.1.0"
LSO_AT = 1767225600000  # the scenario frame's first timestamp (fixtures.scenario_specs)


class Case(NamedTuple):
    rows: list[dict]
    page: str
    as_of: int


def _case(path: Path, as_of=None) -> Case:
    rep = load_state([str(path)])
    verdicts, when = find_hanging(rep, as_of=as_of)
    # every key find-hanging --all --format json writes
    rows = with_previews(verdicts, [worded_row(v, when, as_of=when) for v in verdicts], rep.inventory, False)
    inc = build_incident(rep, verdicts, when, as_of_source=as_of_source(when), inputs=[str(path)], rows=rows)
    return Case([r.as_json() for r in rows], html_report(inc), when.time_ms)


def _behind_and_waiting(root: Path) -> Path:
    """t-0: stuck-app's transaction hangs from offset 0 (its coordinator logged only u-0); busy-app's
    open one follows at offset 2 (the LSO moves only there); group g-waiting committed offset 0 on
    t-0 (in __consumer_offsets-7), i.e. it waits at the LSO."""
    broker = build_disk(root / "broker-1", disk(
        [TopicSpec("t", 1), TopicSpec("u", 1)], [txn_producer("stuck-app", 300), txn_producer("busy-app", 301)],
        [Txn("stuck-app", (Produce("t", 0, 2), Produce("u", 0, 1)), coordinator_partitions=(("u", 0),)),
         Txn("busy-app", (Produce("t", 0, 1),), outcome="open")]))
    offsets = broker / "__consumer_offsets-7"
    offsets.mkdir()
    (offsets / "00000000000000000000.log").write_bytes(encode_v2_batch(0, [
        RecordSpec(key=_commit_key("g-waiting", "t", 0), value=_commit_value(0, LSO_AT + 5))]))
    return root


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, Case]:
    out = {"example-disk": _case(EXAMPLE, 1767225620000)}
    for name in sorted(hs.SCENARIOS):
        out[name] = _case(hs.build(name, tmp_path_factory.mktemp(name)), hs.expected(name)["asOf"])
    out["behind-and-waiting"] = _case(_behind_and_waiting(tmp_path_factory.mktemp("behind")), LSO_AT + 60_000)
    for run in sorted(REAL.glob("*/data")) if REAL.is_dir() else ():
        out[f"real-{run.parent.name}"] = _case(run)
    return out


def _keys(rows: list[dict]) -> dict[str, str]:
    return {table_key(f.key): f.key for r in rows for f in flatten(r)}


def test_every_row_key_has_a_label(cases):
    seen = {k: (name, path) for name, c in cases.items() for k, path in _keys(c.rows).items()}
    assert not {k: v for k, v in seen.items() if k not in LABELS}, "add these keys to forensics/report/incident_labels.py"
    # the optional records of the abort preview and of the evidence were really there
    for k in ("abortPreview.nextBlockingTransaction.producerId", "abortPreview.stuckConsumerGroups[].group",
              "abortPreview.stuckConsumerGroups[].commitTimestamp", "evidence.gaps[].text",
              "evidence.coordinatorRecord.timestamp", "evidence.openTransaction.fromSnapshot", "asOfMs"):
        assert k in seen, k


class Page(HTMLParser):
    """The text a reader sees: label/value pairs of the cards, and all text but the reasons and the
    findings' messages."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pairs: list[tuple[str, str]] = []
        self.text: list[str] = []
        self._stack: list[tuple[str, str]] = []
        self._cell: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in ("br", "meta"):
            self._stack.append((tag, dict(attrs).get("class") or ""))
        if tag in ("dt", "dd"):
            self._cell = []

    def handle_endtag(self, tag):
        while self._stack and self._stack.pop()[0] != tag:
            pass
        if tag == "dt":
            self.pairs.append(("".join(self._cell), ""))
        elif tag == "dd" and self.pairs:
            self.pairs[-1] = (self.pairs[-1][0], "".join(self._cell))

    def handle_data(self, data):
        if any(t in ("style", "title") for t, _ in self._stack):
            return
        self._cell.append(data)
        if not any(c in ("reason", "finding") for _, c in self._stack):
            self.text.append(data)  # not the reasons and findings: the analysis words them, as for every command


def _read(page: str) -> Page:
    return fed(Page(), page)


def test_the_pages_show_labels_never_raw_keys_or_null(cases):
    for name, c in cases.items():
        p = _read(c.page)
        keys = _keys(c.rows)
        leaves = {leaf for k in keys.values() for leaf in re.split(r"[.\[\]0-9]+", k) if re.search(r"[a-z][A-Z]", leaf)}
        text = " ".join(p.text)
        for dt, dd in p.pairs:
            assert dt not in keys.values() and dd.strip() not in ("null", "None", "true", "false", ""), (name, dt, dd)
        for leaf in leaves:  # camelCase keys (fromSnapshot, stuckConsumerGroups, ...) are nowhere on the page
            assert not re.search(rf"(?<![-\w]){leaf}\b", text), (name, leaf)  # --transactionalId is Kafka's option


def _pairs(case: Case) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for dt, dd in _read(case.page).pairs:
        out.setdefault(dt, []).append(dd)
    return out


def test_a_missing_value_says_what_unknown_means(cases):
    example = _pairs(cases["example-disk"])  # no __consumer_offsets among its inputs
    assert example["consumer groups committed at the LSO (waiting on it)"] == [
        "unknown: no __consumer_offsets in the inputs"]
    assert example["next transaction holding the LSO back"] == ["none: the LSO moves up to the high watermark"]
    waiting = _pairs(cases["behind-and-waiting"])
    assert waiting["waiting group 1"] == ["g-waiting"]
    assert waiting["waiting group 1: committed offset"] == ["0"]
    assert waiting["next transaction holding the LSO back: producer id"] == ["301"]
    assert waiting["next transaction holding the LSO back: first offset"] == ["2"]
    assert waiting["last stable offset after the abort marker"] == ["2"]
    assert "open transaction: opened before the snapshot the replay starts from" in waiting
    assert set(waiting["open transaction: opened before the snapshot the replay starts from"]) <= {"yes", "no"}


def test_times_show_iso_utc_their_epoch_ms_and_their_age(cases):
    c = cases["example-disk"]
    [row] = [r for r in c.rows if r["verdict"] == "hanging"]
    ts = row["lastTimestamp"]
    shown = _pairs(c)["last timestamp (the producer's newest batch)"]
    assert f"{iso(ts)} ({ts}) · {duration(c.as_of - ts)} before as-of" in shown
    assert _pairs(c)["open for (as-of time minus last timestamp)"][0] == duration(row["durationMs"])
    for name, case in cases.items():  # every epoch-ms number stands beside its ISO time
        text = " ".join(_read(case.page).text)
        for m in re.finditer(r"(?<![\d.])1\d{12}(?!\d)", text):
            assert text[:m.start()].endswith(f"{iso(int(m.group()))} ("), (name, text[m.start() - 60:m.end() + 5])


def test_the_table_labels_are_people_words():
    for key, lab in LABELS.items():
        assert lab.text and not re.search(r"[a-z][A-Z]", lab.text), (key, lab.text)  # no camelCase key
        assert lab.none and lab.none != "null" and lab.empty, key

