"""The incident report of the example disk in a real headless browser (Debian's Chromium): the page
renders (the DOM Chromium built holds every section and the timelines), the screenshot is not
blank and shows the timeline (the coordinator's PrepareCommit bar with the hanging transaction's
bar right below it, found by colour), the page fetches nothing (Chromium's own net log, with a
page that does fetch as the control), and it renders the same inside a network namespace that
has no network at all.

The tests never install Chromium (``.ci/run`` does): where it is missing they skip, saying so.
They are marked ``browser`` (so ``-m "not slow"`` leaves them out).
KAFKA_FORENSICS_SCREENSHOT_DIR=DIR keeps the screenshot there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forensics.cli.report_cmd  # noqa: F401  (registers the command)
from forensics.cli.app import app
from forensics.render.html_report import CSP
from forensics.render.html_style import BACKGROUND, TONES
from tests.browser import chromium, png

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example-disk"
WIDTH, HEIGHT = 1100, 3000
PROBE = ('<!DOCTYPE html><html><head>{meta}<title>probe</title></head><body>'
         '<img src="http://kafka-forensics-probe.invalid/pixel.png">'
         '<link rel="stylesheet" href="https://kafka-forensics-probe.invalid/style.css"></body></html>')


pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    r = CliRunner().invoke(app, ["report", str(EXAMPLE), "--out", str(out), "--as-of", "2026-01-01T00:00:20Z",
                                 "--no-progress", "--engine", "local"])
    assert r.exit_code == 0, r.output
    return out


def _profile(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name
    d.mkdir()
    return d


def _dump_dom(browser: str, page: Path, tmp_path: Path, prefix=()) -> tuple:
    net = tmp_path / f"{page.stem}.netlog.json"
    p = chromium.run(browser, [f"--log-net-log={net}", "--dump-dom", page.as_uri()], _profile(tmp_path, page.stem),
                     prefix=prefix)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    return p.stdout.decode("utf-8"), chromium.load_net_log(net)


def assert_rendered(dom: str) -> None:
    for heading in ("Inputs", "Summary", "LSO lag per partition", "Timelines per transactional id",
                    "Hanging transactions", "Findings"):
        assert f"<h2>{heading}</h2>" in dom, heading
    assert dom.count('<svg class="timeline"') == 3 and dom.count('<svg class="lso-chart"') == 1
    timeline = dom[dom.index('<svg class="timeline"'):]
    timeline = timeline[:timeline.index("</svg>")]
    assert 'class="span tone-hanging"' in timeline and 'class="state tone-prepare"' in timeline
    assert ">orders-0</tspan>" in timeline and ">orders-1</tspan>" in timeline and ">broker 1</text>" in timeline
    assert "reporting-app" in dom and "kafka-transactions.sh" in dom


def test_the_report_renders_and_fetches_nothing(browser, report, tmp_path):
    dom, log = _dump_dom(browser, report, tmp_path)
    assert_rendered(dom)
    assert log["events"], "Chromium wrote no net log"
    assert chromium.page_requests(log) == [], chromium.page_requests(log)


def test_the_fetch_check_sees_a_page_that_fetches_and_the_policy_stops_it(browser, tmp_path):
    fetching = tmp_path / "fetching.html"
    fetching.write_text(PROBE.format(meta=""), encoding="utf-8")
    _, log = _dump_dom(browser, fetching, tmp_path)
    seen = chromium.page_requests(log)
    assert "http://kafka-forensics-probe.invalid/pixel.png" in seen, chromium.all_requests(log)
    assert "https://kafka-forensics-probe.invalid/style.css" in seen, chromium.all_requests(log)
    guarded = tmp_path / "guarded.html"  # the same page under the report's Content-Security-Policy
    guarded.write_text(PROBE.format(meta=f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'),
                       encoding="utf-8")
    _, log = _dump_dom(browser, guarded, tmp_path)
    assert chromium.page_requests(log) == []


def _rows_with_run(rows: list[bytes], colour: str, length: int) -> set[int]:
    """Rows holding at least ``length`` consecutive pixels of exactly ``colour`` (#rrggbb)."""
    rgb = bytes(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    pattern, out = rgb * length, set()
    for y, row in enumerate(rows):
        at = row.find(pattern)
        while at != -1 and at % 3:
            at = row.find(pattern, at + 1)
        if at != -1:
            out.add(y)
    return out


def test_the_screenshot_shows_the_timeline(browser, report, tmp_path):
    shot = tmp_path / "report.png"
    p = chromium.run(browser, [f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={shot}", report.as_uri()],
                     _profile(tmp_path, "shot"))
    assert p.returncode == 0 and shot.is_file(), p.stderr.decode(errors="replace")[-2000:]
    if os.environ.get("KAFKA_FORENSICS_SCREENSHOT_DIR"):
        shutil.copy(shot, Path(os.environ["KAFKA_FORENSICS_SCREENSHOT_DIR"]) / "report-example-disk.png")
    width, height, rows = png.decode(shot.read_bytes())
    assert (width, height) == (WIDTH, HEIGHT)
    background = bytes(int(BACKGROUND[i:i + 2], 16) for i in (1, 3, 5))
    sample = [row[x:x + 3] for row in rows[::5] for x in range(0, width * 3, 21)]
    assert sum(px != background for px in sample) > len(sample) * 0.03  # not blank
    assert len(set(sample)) > 20
    # the timeline of reporting-app: the coordinator lane's PrepareCommit bar (amber, wide), and one
    # lane below it the hanging transaction on orders-0 (red, running off the right edge)
    prepare = _rows_with_run(rows, TONES["prepare"][0], 40)
    hanging = _rows_with_run(rows, TONES["hanging"][0], 200)
    committed = _rows_with_run(rows, TONES["commit"][0], 40)
    pairs = [(a, h) for a in prepare for h in hanging if 20 <= h - a <= 60]
    assert pairs, (sorted(prepare)[:5], sorted(hanging)[:5])
    top = min(a for a, _ in pairs)
    assert any(top <= c <= top + 120 for c in committed)  # orders-1's committed transaction, further down


def test_it_renders_without_any_network(browser, report, tmp_path):
    prefix = chromium.network_namespace_prefix()
    if prefix is None:
        pytest.skip("unshare cannot create a network namespace here (needs root or user namespaces)")
    devices = subprocess.run([*prefix, "cat", "/proc/net/dev"], capture_output=True, text=True, timeout=30).stdout
    assert [line.split(":")[0].strip() for line in devices.splitlines()[2:]] == ["lo"]  # nothing to reach
    dom, log = _dump_dom(browser, report, tmp_path, prefix=prefix)
    assert_rendered(dom)
    assert chromium.page_requests(log) == []
