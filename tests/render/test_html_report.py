"""The HTML incident report: self-contained (no URL, no script, nothing to fetch), every text from
the evidence escaped (hostile transactional ids, topic names and paths), byte-identical output for
the same model, and the pictures present with what they must show."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import TypeVar

import pytest

from fixtures.generator import Produce, TopicSpec, Txn, build_disk
from fixtures.scenario_specs import disk, txn_producer
from forensics.render.html_report import CSP, html_report
from forensics.render.html_text import esc
from forensics.render.time_text import duration, iso
from forensics.render.reasons import worded_row
from forensics.report.hanging import find_hanging
from forensics.report.incident import build_incident
from forensics.runs.rebuild import load_state
from forensics.render.clock_text import as_of_source
from tests.render.test_no_python_words import _page_text

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
AS_OF = 1767225620000
HOSTILE_ID = '<script>alert("id")</script>&\u202eevil\x1b'
HOSTILE_TOPIC = "</svg><script>alert('topic')</script>"
HOSTILE_PATH = "/evidence/\"'><img src=x onerror=alert(1)>"
ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4", "div", "nav",
                "a", "section", "ul", "li", "dl", "dt", "dd", "span", "code", "br", "p", "q", "article", "pre",
                "figure", "figcaption", "svg", "rect", "text", "tspan", "strong", "line", "path", "circle", "details", "summary",
                "table", "thead", "tbody", "tr", "th", "td", "footer"}
URL_ATTRS = {"src", "srcset", "href", "xlink:href", "action", "formaction", "poster", "data", "background", "ping",
             "style"}


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)


P = TypeVar("P", bound=HTMLParser)


def fed(parser: P, page: str) -> P:
    """``parser`` after reading all of ``page``."""
    parser.feed(page)
    parser.close()
    return parser


def parse(page: str) -> Tags:
    return fed(Tags(), page)


def incident(path: Path, as_of: int = AS_OF, **kw):
    rep = load_state([str(path)])
    verdicts, when = find_hanging(rep, as_of=as_of)
    kw.setdefault("rows", [worded_row(v, when) for v in verdicts])
    return build_incident(rep, verdicts, when, as_of_source=as_of_source(when), inputs=[str(path)], **kw)


@pytest.fixture(scope="module")
def example():
    return incident(EXAMPLE)


@pytest.fixture(scope="module")
def page(example):
    return html_report(example)


def assert_self_contained(page: str) -> None:
    assert "http://" not in page and "https://" not in page and "ftp:" not in page
    lowered = page.lower()
    for forbidden in ("<script", "<link", "<img", "<iframe", "<object", "<embed", "<base", "<form", "url(",
                      "@import", "@font-face", "javascript:", " on"):
        if forbidden == " on":
            assert not re.search(r"<[^>]*\son\w+\s*=", page), "event handler attribute"
        else:
            assert forbidden not in lowered, forbidden
    tags = parse(page).tags
    assert {t for t, _ in tags} <= ALLOWED_TAGS, {t for t, _ in tags} - ALLOWED_TAGS
    for tag, attrs in tags:
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            if name == "href":  # only in-page links: href="#section"
                assert value.startswith("#"), (tag, name, value)
            elif name == "style":  # colours only: no url(), no expression
                assert re.fullmatch(r"background:#[0-9a-f]{6}", value), (tag, value)
            else:
                assert name not in URL_ATTRS, (tag, name, value)


def test_page_is_self_contained_and_forbids_fetching(page):
    assert page.startswith("<!DOCTYPE html>\n")
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in page
    assert "default-src 'none'" in CSP and "script" not in CSP
    assert_self_contained(page)


def test_page_shows_inputs_summary_transactions_pictures_and_findings(page, example):
    p = parse(page)
    text = " ".join(p.text)
    headings = [t for t in ("Inputs", "Summary", "LSO lag per partition", "Timelines per transactional id",
                            "Hanging transactions", "Findings") if f"<h2>{t}</h2>" in page]
    assert len(headings) == 6
    assert str(EXAMPLE) in text and "none written" in text  # no --manifest: the inputs still shown
    [t] = example.transactions
    for c in t.commands:
        assert esc(" ".join(a if a != "<bootstrap-server>" else "'<bootstrap-server>'" for a in c.argv)) in page
    assert page.count('<svg class="timeline"') == len(example.timelines) == 3
    assert page.count('<svg class="lso-chart"') == 1
    assert page.count('class="span tone-hanging"') == 1  # the one hanging transaction, on orders-0
    assert t.active_form is not None and t.commands[0].key == t.active_form  # first, as in abort-commands' script
    assert page.count("<strong>Run this form for these brokers (abort-commands arms it):</strong> ") == 1
    lagging = [i for i in example.lso if i.lag_offsets > 0 or i.open_transactions]
    assert [(i.topic, i.partition) for i in lagging] == [("orders", 0)]  # the hanging transaction's
    assert page.count('class="bar"') == 1 == len(lagging)  # one LSO bar per partition with lag
    assert "2 partitions without lag (LSO at the high watermark, no open transaction) not drawn." in text
    assert '<text class="lane" text-anchor="end"><tspan x=' in page
    assert "orders-0" in text and "broker 1" in text and "10 offsets" in text
    assert "CompleteCommit" in text and "reporting-app" in text


def test_timeline_draws_each_coordinator_record_and_marker(page, example):
    svg = page[page.index('<svg class="timeline"'):]
    svg = svg[:svg.index("</svg>")]
    t = example.timelines[0]
    assert svg.count('class="state tone-') == len(t.coordinator) == 4
    assert svg.count('class="grid" x1=') - len(t.lanes) == len(t.coordinator)  # a dashed line per record
    assert svg.count('class="marker tone-commit"') == 1  # orders-1's COMMIT
    assert svg.count('class="open-end"') == 1  # orders-0 runs off the right edge
    assert svg.count('class="named') == 2  # Ongoing and PrepareCommit list orders-1


def test_same_model_same_bytes(example):
    assert html_report(example) == html_report(example) == html_report(incident(EXAMPLE))


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory):
    """A disk whose transactional id is hostile (as the coordinator log can hold any string), then
    hostile topic names and paths put into the model as a damaged or crafted disk could."""
    root = tmp_path_factory.mktemp("hostile") / "broker-1"
    build_disk(root, disk([TopicSpec("evil", 1)], [txn_producer(HOSTILE_ID, 4242)],
                          [Txn(HOSTILE_ID, (Produce("evil", 0, 2),), outcome="open")]))
    inc = incident(root.parent, as_of=1767916800000)
    assert inc.timelines[0].transactional_id == HOSTILE_ID  # the id really came from the disk
    lane = dataclasses.replace(inc.timelines[0].lanes[0], name=HOSTILE_TOPIC)
    timeline = dataclasses.replace(inc.timelines[0], lanes=(lane,))
    txn = dataclasses.replace(inc.transactions[0], topic=HOSTILE_TOPIC, abortable=True, reason=HOSTILE_ID,
                              evidence=inc.transactions[0].evidence + (dataclasses.replace(
                                  inc.transactions[0].evidence[0], value=HOSTILE_PATH),))
    lso = dataclasses.replace(inc.lso[0], topic=HOSTILE_TOPIC)
    return html_report(dataclasses.replace(inc, inputs=(HOSTILE_PATH,), timelines=(timeline,), transactions=(txn,),
                                           lso=(lso,)))


def test_hostile_text_is_escaped_everywhere(hostile_page):
    assert_self_contained(hostile_page)
    for raw in (HOSTILE_ID, HOSTILE_TOPIC, HOSTILE_PATH, "<script", "<img", "\u202e", "\x1b"):
        assert raw not in hostile_page, raw
    assert hostile_page.count("&lt;script&gt;alert(&quot;id&quot;)&lt;/script&gt;") >= 3  # heading, svg, reason
    assert "&lt;/svg&gt;&lt;script&gt;alert(&#x27;topic&#x27;)" in hostile_page
    assert "\\u202eevil\\x1b" in hostile_page  # made visible, not obeyed
    text = " ".join(parse(hostile_page).text)
    assert HOSTILE_TOPIC in text and HOSTILE_PATH in text  # shown as text, as it is


def test_text_helpers():
    assert iso(1767225606251) == "2026-01-01T00:00:06.251Z" and iso(None) == iso(-1) == "unknown"
    assert duration(6749) == "6.749 s" and duration(200_000) == "3 min 20 s"
    assert duration(90_061_000) == "1 d 1 h" and duration(None) == "unknown"
    assert esc('<a b="c">&\'') == "&lt;a b=&quot;c&quot;&gt;&amp;&#x27;"
    assert esc("a\u2066b\x00") == "a\\u2066b\\x00"


def test_the_log_bytes_card_says_what_it_counts(page, example):
    """issue 24: one size form, and each count says what it counts once: the partitions card leaves the
    internal partitions out (and says so), the log bytes card counts every partition's segments, as
    scan and the engine line do, and gives the exact count beside the binary units."""
    text = " ".join(parse(page).text)
    n = example.summary.log_bytes
    assert n >= 1024 and example.summary.not_counted
    assert (f"{n / 1024:.1f} KiB log bytes {n:,} bytes: the .log segments of every partition, internal topics "
            "included (as scan)") in " ".join(text.split())


def test_a_card_counting_one_thing_names_it_in_the_singular(page, example):
    """issue 24: the example disk has one broker and one open transaction: "1 broker", not "1 brokers"."""
    text = " ".join(" ".join(parse(page).text).split())
    assert len(example.summary.brokers) == 1 and example.summary.open_transactions == 1
    assert "1 broker ids" in text and "1 open transaction " in text
    assert "1 brokers" not in text and "1 open transactions" not in text
    assert f"{example.summary.partitions} partitions" in text


def test_a_transaction_without_data_batches_reads_in_words():
    """issue 24: on the real Kafka 4.1 disk, compaction left g-compact-txn-0 a COMMIT marker at offset 30
    without its data batches; the timeline's table said ``offsets 30-None``."""
    page = html_report(incident(REPO / "fixtures" / "real" / "kraft-tv2" / "disk", as_of=1795215600000))
    text = " ".join(parse(page).text)
    assert "-None" not in page and not _page_text(page).count("None")
    assert "from offset 30, no data batch among the inputs COMMIT producer 16; marker at offset 30" in text
