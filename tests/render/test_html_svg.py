"""The report's pictures without a browser: labels whole and inside the picture by the width
estimate the layout uses (tests/browser/test_report_layout_chromium.py measures the same in
Chromium), long names wrapped, and the LSO chart only for partitions with lag or an open
transaction, saying how many others it leaves out."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fixtures.generator import Produce, TopicSpec, Txn, build_disk
from fixtures.scenario_specs import disk, txn_producer
from forensics.render.html_measure import shown, text_width, wrap
from forensics.render.html_report import html_report
from forensics.render.html_svg import MAX_LABEL_W
from forensics.render.reasons import worded_row
from forensics.report.hanging import find_hanging
from forensics.report.incident import build_incident
from forensics.report.incident_model import Incident
from forensics.runs.rebuild import load_state
from forensics.render.clock_text import as_of_source
from tests.render.test_html_report import fed

LONG = ("com.example.settlement." + "eu-west-1.payments-ledger." * 9)[:249]  # Kafka's longest topic name
MEDIUM = "payments.eu-west-1.settlement-requests"
AS_OF = 1767225660000


def long_names_disk(root: Path) -> Path:
    """LONG-0: wide-app's transaction hangs (its coordinator logged only short-0); MEDIUM-0: busy-app's
    transaction is open, in time; quiet-0..19: nothing open, no lag."""
    build_disk(root / "broker-1", disk(
        [TopicSpec(LONG, 1), TopicSpec("short", 1), TopicSpec(MEDIUM, 1), TopicSpec("quiet", 20)],
        [txn_producer("wide-app", 500), txn_producer("busy-app", 501)],
        [Produce("quiet", p, 1) for p in range(20)]
        + [Txn("wide-app", (Produce(LONG, 0, 2), Produce("short", 0, 1)), coordinator_partitions=(("short", 0),)),
           Txn("busy-app", (Produce(MEDIUM, 0, 3),), outcome="open")]))
    return root


def incident_of(path: Path, as_of: int | None = AS_OF) -> Incident:
    rep = load_state([str(path)])
    verdicts, when = find_hanging(rep, as_of=as_of)
    return build_incident(rep, verdicts, when, as_of_source=as_of_source(when), inputs=[str(path)], rows=[worded_row(v, when) for v in verdicts])


@pytest.fixture(scope="module")
def long_names(tmp_path_factory) -> Incident:
    return incident_of(long_names_disk(tmp_path_factory.mktemp("long")))


class Svgs(HTMLParser):
    """Each ``<svg>``'s viewBox width and its texts: (x of each line, anchor, line texts, class)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.svgs: list[tuple[str, float, list[tuple[list[float], str, list[str], str]]]] = []
        self._text = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svgs.append((a.get("class", ""), float(a["viewbox"].split()[2]), []))
        elif tag == "text":
            x = [float(a["x"])] if "x" in a else []
            self._text = (x, a.get("text-anchor", "start"), [""] * len(x), a.get("class", ""))
            self.svgs[-1][2].append(self._text)
        elif tag == "tspan":
            self._text[0].append(float(a["x"]))
            self._text[2].append("")

    def handle_endtag(self, tag):
        if tag == "text":
            self._text = None

    def handle_data(self, data):
        if self._text is not None and self._text[2]:
            self._text[2][-1] += data


def svgs_of(page: str) -> Svgs:
    return fed(Svgs(), page)


def test_every_text_lies_inside_its_picture_by_the_estimate(long_names):
    page = html_report(long_names)
    svgs = svgs_of(page).svgs
    assert len(svgs) == 1 + len(long_names.timelines)
    for cls, width, texts in svgs:
        for xs, anchor, lines, tcls in texts:
            for x, line in zip(xs, lines, strict=True):
                w = text_width(line)
                left = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
                assert 0 <= left and left + w <= width, (cls, tcls, line, left, w, width)


def test_lane_labels_are_whole_names_wrapped_at_the_column_limit(long_names):
    page = html_report(long_names)
    svgs = svgs_of(page).svgs
    chart_labels = ["".join(lines) for _, _, lines, c in svgs[0][2] if c == "lane"]
    assert sorted(chart_labels) == sorted([f"{LONG}-0", f"{MEDIUM}-0"])  # the two with lag, whole
    lanes = [lines for _, _, texts in svgs[1:] for _, _, lines, c in texts if c == "lane"]
    assert [f"{LONG}-0" == "".join(lines) for lines in lanes].count(True) == 1
    [long_lines] = [lines for lines in lanes if "".join(lines) == f"{LONG}-0"]
    assert len(long_lines) > 1 and all(text_width(t) <= MAX_LABEL_W for t in long_lines)
    assert "…" not in page


def test_the_lso_chart_leaves_out_partitions_without_lag_and_says_how_many(long_names):
    page = html_report(long_names)
    assert page.count('class="bar"') == 2
    # quiet-0..19 and short-0 (its transaction committed): 21 partitions at their high watermark
    assert ("<p class=\"muted\">21 partitions without lag (LSO at the high watermark, no open transaction) not "
            "drawn.</p>") in page
    chart = page[page.index('<svg class="lso-chart"'):]
    assert "quiet-" not in chart[:chart.index("</svg>")]
    assert page.count("<td>quiet-") == 20  # still listed in the table of every partition


def test_without_lag_there_is_no_chart_but_a_sentence(tmp_path):
    root = tmp_path / "calm"
    build_disk(root / "broker-1", disk([TopicSpec("calm", 3)], [txn_producer("done-app", 600)],
                                       [Txn("done-app", (Produce("calm", 1, 2),))]))
    page = html_report(incident_of(root))
    assert '<svg class="lso-chart"' not in page
    assert ("<p>No lag: the last stable offset is at the high watermark on all 3 partitions, and no transaction is "
            "open.</p>") in page


def test_wrap_keeps_every_character_and_the_partition_with_its_name():
    for text in (f"{LONG}-0", f"{MEDIUM}-0", "x" * 300, "a\u202eb-0", "__consumer_offsets-42"):
        for width in (60.0, 120.0, 304.0):
            lines = wrap(text, width)
            assert "".join(lines) == shown(text)
            assert all(text_width(t) <= width for t in lines if len(t) > 1), (text, width, lines)
    assert wrap(f"{MEDIUM}-0", 304) == ["payments.eu-west-1.settlement-", "requests-0"]
    assert wrap("__consumer_offsets-42", 400) == ["__consumer_offsets-42"]
    assert re.fullmatch(r"\\u202e", wrap("\u202e", 100)[0])  # measured as shown: the escape, not the override
