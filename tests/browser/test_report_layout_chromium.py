"""No label of the report is cut at 800 or 1600 px: measured by Chromium's own layout.

The report runs no script (its policy forbids it). The test loads a *copy* of a report, its policy
removed and a measuring script added at the end, in headless Chromium at 800 and 1600 px wide
(``--dump-dom`` prints the DOM after the script ran). The script opens every ``<details>`` and
records, for every text of every SVG picture, its extent (``getBBox``, ``getComputedTextLength``
per line) and where it lands on the screen, and whether the page scrolls sideways. Then:

* every text lies inside its picture's viewBox and on the screen inside the picture;
* every label of the LSO chart is the full name of a partition with lag, and every lane label of
  every timeline the full name of its partition ("coordinator" for the top lane): no "…";
* the page does not scroll sideways (tables and long paths wrap);
* no line is wider than :func:`forensics.render.html_measure.text_width` says (the estimate the
  label columns are sized by errs wide in this browser).

The pages: a generated disk with a 249-character topic name (the longest Kafka allows), a
partition with lag whose transaction is still open and 20 without lag
(``tests/render/test_html_svg.py``), and a real Kafka 4.1 disk from ../shared (its
``__consumer_offsets-42`` lane) when present. KAFKA_FORENSICS_SCREENSHOT_DIR=DIR keeps a screenshot
of each page at each width there.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from forensics.render.html_measure import text_width
from forensics.render.html_report import html_report
from forensics.render.html_svg import MAX_BARS, lso_drawn
from forensics.report.incident_model import Incident
from tests.browser import chromium, png
from tests.render.test_html_svg import LONG, MEDIUM, incident_of, long_names_disk

REPO = Path(__file__).resolve().parents[2]
REAL = REPO.parent / "shared" / "real-kafka" / "4.1.0" / "kraft-tv2" / "data"
WIDTHS = (800, 1600)
MEASURE = """
(function () {
  for (const d of document.querySelectorAll('details')) d.open = true;
  const root = document.documentElement;
  const out = {viewport: root.clientWidth, scroll: root.scrollWidth, svgs: []};
  document.querySelectorAll('svg').forEach(svg => {
    const vb = svg.viewBox.baseVal, box = svg.getBoundingClientRect(), texts = [];
    svg.querySelectorAll('text').forEach(t => {
      const b = t.getBBox(), c = t.getBoundingClientRect(), spans = t.querySelectorAll('tspan');
      const lines = spans.length ? Array.from(spans, s => [s.textContent, s.getComputedTextLength()])
                                 : [[t.textContent, t.getComputedTextLength()]];
      texts.push({cls: t.getAttribute('class') || '', text: t.textContent, lines: lines, x: b.x, y: b.y,
                  w: b.width, h: b.height, left: c.left, right: c.right});
    });
    out.svgs.push({cls: svg.getAttribute('class'), w: vb.width, h: vb.height, left: box.left, right: box.right,
                   texts: texts});
  });
  const pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Incident]:
    out = {"long-names": incident_of(long_names_disk(tmp_path_factory.mktemp("long")))}
    if REAL.is_dir():
        out["real-kraft-tv2"] = incident_of(REAL, None)
    return out


def _measure(browser: str, page: str, width: int, tmp_path: Path) -> dict:
    tmp_path.mkdir(exist_ok=True)
    probe = tmp_path / f"probe-{width}.html"
    probe.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
                     .replace("</body>", f"<script>{MEASURE}</script></body>"), encoding="utf-8")
    profile = tmp_path / f"profile-{width}"
    profile.mkdir()
    p = chromium.run(browser, [f"--window-size={width},2000", "--dump-dom", probe.as_uri()], profile)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    found = re.search(r'<pre id="measured">(.*?)</pre>', p.stdout.decode("utf-8"), re.S)
    assert found, "the measuring script did not run"
    return json.loads(html.unescape(found.group(1)))


def _labels(svg: dict) -> list[str]:
    return [t["text"] for t in svg["texts"] if t["cls"] == "lane"]


@pytest.mark.parametrize("width", WIDTHS)
def test_no_label_is_cut(browser, pages, width, tmp_path):
    for name, inc in pages.items():
        m = _measure(browser, html_report(inc), width, tmp_path / f"{name}")
        assert m["viewport"] == width and m["scroll"] <= m["viewport"], (name, m["scroll"])  # no sideways scroll
        charts = [s for s in m["svgs"] if s["cls"] == "lso-chart"]
        timelines = [s for s in m["svgs"] if s["cls"] == "timeline"]
        assert len(timelines) == len(inc.timelines) and len(charts) == 1
        for svg in m["svgs"]:
            assert svg["right"] <= width, (name, svg["cls"], svg["right"])
            for t in svg["texts"]:
                where = (name, width, svg["cls"], t["text"])
                assert t["x"] >= -0.5 and t["x"] + t["w"] <= svg["w"] + 0.5, (where, t["x"], t["w"], svg["w"])
                assert t["y"] >= -0.5 and t["y"] + t["h"] <= svg["h"] + 0.5, (where, t["y"], t["h"], svg["h"])
                assert svg["left"] - 0.5 <= t["left"] and t["right"] <= svg["right"] + 0.5, where
                for line, drawn in t["lines"]:
                    assert drawn <= text_width(line), (where, line, drawn, text_width(line))
        # every label whole: the LSO chart's partitions with lag, each timeline's lanes
        assert _labels(charts[0]) == [f"{i.topic}-{i.partition}" for i in lso_drawn(inc.lso)[:MAX_BARS]]
        for svg, t in zip(timelines, inc.timelines, strict=True):
            assert _labels(svg) == ["coordinator"] + [lane.name for lane in t.lanes], (name, t.title)


def test_the_long_names_are_drawn_whole_and_wrapped(browser, pages, tmp_path):
    inc = pages["long-names"]
    assert sorted((i.topic, i.lag_offsets > 0) for i in lso_drawn(inc.lso)) == [(LONG, True), (MEDIUM, True)]
    m = _measure(browser, html_report(inc), 800, tmp_path)
    [chart] = [s for s in m["svgs"] if s["cls"] == "lso-chart"]
    [long_label] = [t for t in chart["texts"] if t["text"] == f"{LONG}-0"]
    assert len(long_label["lines"]) > 1  # wrapped, not cut
    lanes = [t for s in m["svgs"] if s["cls"] == "timeline" for t in s["texts"] if t["text"] == f"{LONG}-0"]
    assert lanes and all(len(t["lines"]) > 1 for t in lanes)


@pytest.mark.parametrize("width", WIDTHS)
def test_screenshots(browser, pages, width, tmp_path):
    """The pages render at both widths (not blank); kept for a person to look at with
    KAFKA_FORENSICS_SCREENSHOT_DIR."""
    keep = os.environ.get("KAFKA_FORENSICS_SCREENSHOT_DIR")
    for name, inc in pages.items():
        page = tmp_path / f"{name}.html"
        page.write_text(html_report(inc), encoding="utf-8")
        shot = tmp_path / f"{name}-{width}.png"
        profile = tmp_path / f"profile-{name}"
        profile.mkdir()
        p = chromium.run(browser, [f"--window-size={width},2400", f"--screenshot={shot}", page.as_uri()], profile)
        assert p.returncode == 0 and shot.is_file(), p.stderr.decode(errors="replace")[-2000:]
        w, h, rows = png.decode(shot.read_bytes())
        assert (w, h) == (width, 2400)
        assert len({row[x:x + 3] for row in rows[::7] for x in range(0, w * 3, 33)}) > 20  # not blank
        if keep:
            shutil.copy(shot, Path(keep) / f"report-{name}-{width}.png")
