"""Inline SVG pictures of the HTML report: the LSO lag bar chart and the per-id timeline.

Pure layout over the incident model (:mod:`forensics.report.incident`): no Kafka rules here. Each
element carries a ``<title>`` (the browser's tooltip) with the full facts; every text is escaped.
Labels are never cut: the label column is as wide as its longest label (up to a limit past which
names wrap), measured by :mod:`forensics.render.html_measure`, and every text lies inside the
viewBox, so the picture scales with the page and keeps them whole. Coordinates are rounded to
0.1 px so the output is byte-identical for the same model.
"""

from __future__ import annotations

from collections.abc import Sequence

from forensics.render.html_measure import LINE_H, text_width, wrap
from forensics.render.html_style import tone_colour
from forensics.render.html_text import esc
from forensics.render.time_text import clock, duration, iso
from forensics.report.incident_model import (
    CoordinatorEvent,
    Lane,
    LsoLag,
    SpanEvent,
    Timeline,
)

WIDTH = 1000
MAX_BARS = 40
MIN_LABEL_W, MAX_LABEL_W, LABEL_PAD = 110.0, 320.0, 16.0
MIN_BAR_W = 240.0  # the LSO chart widens (and scales down) rather than squeeze its bars below this


def _n(x: float) -> str:
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _rect(x: float, y: float, w: float, h: float, fill: str, cls: str, title: str, extra: str = "") -> str:
    return (f'<rect class="{cls}" x="{_n(x)}" y="{_n(y)}" width="{_n(max(w, 0))}" height="{_n(h)}" '
            f'fill="{fill}"{extra}><title>{esc(title)}</title></rect>')


def _text(x: float, y: float, text: str, cls: str = "", anchor: str = "start") -> str:
    c = f' class="{cls}"' if cls else ""
    a = f' text-anchor="{anchor}"' if anchor != "start" else ""
    return f'<text x="{_n(x)}" y="{_n(y)}"{c}{a}>{esc(text)}</text>'


def _fits(text: str, width: float) -> bool:
    return text_width(text) + 6 <= width


class _Labels:
    """A label column sized to its longest line (at most ``MAX_LABEL_W``; longer names wrap). Each
    label: the name in bold (one ``<text class="lane">``, a ``<tspan>`` per line, so its text is
    the whole name), then an optional note line below it."""

    def __init__(self, labels: Sequence[tuple[str, str]]) -> None:
        self.lines = [wrap(name, MAX_LABEL_W - LABEL_PAD) for name, _ in labels]
        self.notes = [note for _, note in labels]
        widest = max((text_width(t) for lines, note in zip(self.lines, self.notes, strict=True)
                      for t in (*lines, note)), default=0.0)
        self.width = max(MIN_LABEL_W, min(MAX_LABEL_W, widest + LABEL_PAD))

    def height(self, k: int) -> float:
        return (len(self.lines[k]) + bool(self.notes[k])) * LINE_H

    def draw(self, k: int, centre: float) -> list[str]:
        x, y = self.width - 8, centre - self.height(k) / 2 + LINE_H - 3
        spans = "".join(f'<tspan x="{_n(x)}" y="{_n(y + i * LINE_H)}">{esc(t)}</tspan>'
                        for i, t in enumerate(self.lines[k]))
        out = [f'<text class="lane" text-anchor="end">{spans}</text>']
        if self.notes[k]:
            out.append(_text(x, y + len(self.lines[k]) * LINE_H, self.notes[k], "lane-note", "end"))
        return out


# -- LSO lag ----------------------------------------------------------------------------------------


def _lso_note(i: LsoLag) -> str:
    note = f"{i.lag_offsets} offset" + ("" if i.lag_offsets == 1 else "s")
    if i.lag_ms is not None:
        note += f" · {duration(i.lag_ms)} of data"
    if i.age_ms is not None:
        note += f" · stuck {duration(i.age_ms)}"
    return note


def lso_drawn(items: Sequence[LsoLag]) -> list[LsoLag]:
    """The partitions the chart is about: those with lag (high watermark above the LSO) or an open
    transaction, the largest lags first."""
    return sorted((i for i in items if i.lag_offsets > 0 or i.open_transactions),
                  key=lambda i: (-i.lag_offsets, i.topic, i.partition))


def lso_bars(items: Sequence[LsoLag], limit: int = MAX_BARS) -> tuple[str, int]:
    """A horizontal bar per partition with lag or an open transaction (the largest lags first, at
    most ``limit``): high watermark minus LSO in offsets, with the time lag beside it. Returns
    (svg, partitions with lag left out); no svg ("") when none lags."""
    drawn = lso_drawn(items)
    shown = drawn[:limit]
    if not shown:
        return "", 0
    labels = _Labels([(f"{i.topic}-{i.partition}", "") for i in shown])
    notes = [_lso_note(i) for i in shown]
    note_w = max(text_width(n) for n in notes) + 12
    width = max(WIDTH, labels.width + MIN_BAR_W + note_w)
    bar_w = width - labels.width - note_w
    peak = max(i.lag_offsets for i in shown) or 1
    rows = [max(24.0, labels.height(k) + 10) for k in range(len(shown))]
    height = 16 + sum(rows)
    out = [f'<svg class="lso-chart" viewBox="0 0 {_n(width)} {_n(height)}" width="{_n(width)}" '
           f'height="{_n(height)}" role="img" aria-label="LSO lag per partition">']
    y = 8.0
    for k, (i, note) in enumerate(zip(shown, notes, strict=True)):
        centre = y + rows[k] / 2
        out.extend(labels.draw(k, centre))
        w = max(bar_w * i.lag_offsets / peak, 2)
        tip = (f"{i.topic}-{i.partition}: high watermark {i.high_watermark} - LSO {i.last_stable_offset} = "
               f"{i.lag_offsets} offsets" + (f"; pinned by producer {i.pinned_by} from offset {i.pinned_offset} "
                                            f"since {iso(i.pinned_since_ms)}" if i.pinned_by is not None else ""))
        out.append(_rect(labels.width, centre - 8, w, 16, tone_colour(i.tone), "bar", tip))
        out.append(_text(labels.width + w + 6, centre + 4, note, "bar-note"))
        y += rows[k]
    out.append("</svg>")
    return "".join(out), len(drawn) - len(shown)


# -- timeline ---------------------------------------------------------------------------------------

RIGHT_W, AXIS_H, LANE_H, BAR_H = 110, 30, 34, 20


class _Scale:
    """Time to x: the timeline's range, padded 3% each side, over the plot area (``x0`` to ``x1``)."""

    def __init__(self, start: int | None, end: int | None, x0: float) -> None:
        lo, hi = (start or 0), (end or 0)
        if hi <= lo:
            lo, hi = lo - 500, hi + 500
        pad = (hi - lo) * 0.03
        self.lo, self.hi = lo - pad, hi + pad
        self.x0, self.x1 = x0, WIDTH - RIGHT_W

    def x(self, t: int | None, default: float | None = None) -> float:
        if t is None or t < 0:
            return self.x0 if default is None else default
        return self.x0 + (t - self.lo) / (self.hi - self.lo) * (self.x1 - self.x0)

    def ticks(self, n: int = 5) -> list[tuple[float, int]]:
        step = (self.hi - self.lo) / n
        return [(self.x(int(self.lo + step * k)), int(self.lo + step * k)) for k in range(n + 1)]


def _coordinator_lane(events: Sequence[CoordinatorEvent], s: _Scale, y: float) -> list[str]:
    out = []
    for k, e in enumerate(events):
        x = s.x(e.time_ms)
        nxt = s.x(events[k + 1].time_ms) if k + 1 < len(events) else WIDTH - 14  # holds until now
        w = max(nxt - x, 3)
        tip = (f"__transaction_state offset {e.offset} at {iso(e.time_ms)}: {e.state}; coordinator epoch "
               f"{e.coordinator_epoch}; {coordinator_producer(e, 'producer id')}; partitions "
               f"{', '.join(e.partitions) or 'none'}")
        out.append(_rect(x, y, w, BAR_H, tone_colour(e.tone), f"state tone-{e.tone}", tip, ' stroke="#ffffff"'))
        label = next((t for t in (f"{e.state} [{', '.join(e.partitions)}]", e.state)
                      if _fits(t, w) and (t == e.state or e.partitions)), None)
        if label is not None:
            out.append(_text(x + 3, y + 14, label, "light"))
    return out


def coordinator_producer(e: CoordinatorEvent, word: str = "producer") -> str:
    """``producer id 20 epoch 0``; a tombstone's none: ``no producer (tombstone)``, never ``None``."""
    if e.producer_id is None:
        return "no producer (tombstone)"
    return f"{word} {e.producer_id} epoch {'unknown' if e.producer_epoch is None else e.producer_epoch}"


def no_data_text(p: SpanEvent) -> str:
    """A transaction none of whose data batches is among the inputs (compaction or retention removed
    them, or it opened before the snapshot the replay starts from): where it starts, and that, never
    ``offsets 30-None``."""
    return f"from offset {p.first_offset}, no data batch among the inputs"


def _span_shapes(p: SpanEvent, s: _Scale, y: float) -> list[str]:
    if p.first_time_ms is None and p.marker_time_ms is None and p.last_time_ms is None:
        return []  # no time to place it by (listed in the table below the picture)
    x = s.x(p.first_time_ms, s.x0)
    end = s.x(p.marker_time_ms) if p.marker_time_ms is not None else WIDTH - 14
    offsets = f"{p.first_offset}" + (f"-{p.last_data_offset}" if p.last_data_offset not in (None, p.first_offset)
                                     else "")
    what = (f"{p.outcome} marker at offset {p.marker_offset}, {iso(p.marker_time_ms)}" if p.outcome else
            f"no marker: open ({p.verdict or 'open'})")
    data = (f"data at offsets {offsets} from {iso(p.first_time_ms)}" if p.last_data_offset is not None
            else no_data_text(p))
    tip = f"producer {p.producer_id} epochs {','.join(map(str, p.epochs)) or '?'}: {data}; {what}"
    colour = tone_colour(p.tone)
    out = [_rect(x, y + 3, max(end - x, 3), BAR_H - 6, colour, f"span tone-{p.tone}", tip)]
    if p.outcome is not None:
        out.append(_rect(end - 2, y - 2, 5, BAR_H + 4, colour, f"marker tone-{p.tone}", tip))
        out.append(_text(end + 5, y + 14, p.outcome[0]))
    else:
        out.append(f'<path class="open-end" d="M{_n(end)} {_n(y)}l10 {_n(BAR_H / 2)}l-10 {_n(BAR_H / 2)}z" '
                   f'fill="{colour}"><title>{esc(tip)}</title></path>')
        out.append(_text(end - 4, y - 3, (p.verdict or "open").upper(), "", "end"))
    if _fits(offsets, end - x):
        out.append(_text(x + 3, y + 14, offsets, "light"))
    return out


def _named_marks(events: Sequence[CoordinatorEvent], name: str, s: _Scale, y: float) -> list[str]:
    """A dot on the lane at each coordinator record whose partition set lists the lane's partition."""
    out = []
    for e in events:
        if name in e.partitions:
            tip = esc(f"coordinator record at offset {e.offset} ({e.state}) lists {name}")
            out.append(f'<circle class="named tone-{e.tone}" cx="{_n(s.x(e.time_ms))}" cy="{_n(y - 2)}" r="3.5" '
                       f'fill="{tone_colour(e.tone)}" stroke="#1f2933" stroke-width=".6"><title>{tip}</title></circle>')
    return out


def _lane_note(lane: Lane) -> str:
    if not lane.present:
        return "not among the inputs"
    return f"broker {lane.broker_id}" if lane.broker_id is not None else ""


def timeline_svg(t: Timeline) -> str:
    """The coordinator's records in the first lane, one lane per partition below (its name, and its
    broker under it); dashed lines at each coordinator record run across every lane; an open
    transaction runs off the right edge."""
    labels = _Labels([("coordinator", "")] + [(lane.name, _lane_note(lane)) for lane in t.lanes])
    s = _Scale(t.start_ms, t.end_ms, labels.width)
    heights = [max(float(LANE_H), labels.height(k) + 8) for k in range(1 + len(t.lanes))]
    tops = [AXIS_H + sum(heights[:k]) for k in range(len(heights) + 1)]
    bottom = tops[-1]
    out = [f'<svg class="timeline" viewBox="0 0 {WIDTH} {_n(bottom + 8)}" width="{WIDTH}" height="{_n(bottom + 8)}" '
           f'role="img" aria-label="timeline of {esc(t.title)}">']
    span = int(s.hi - s.lo)
    for x, ms in s.ticks():
        out.append(f'<line class="axis" x1="{_n(x)}" y1="{AXIS_H - 6}" x2="{_n(x)}" y2="{AXIS_H}"/>')
        out.append(_text(x, AXIS_H - 10, clock(ms, span), "", "middle"))
    for e in t.coordinator:
        gx = _n(s.x(e.time_ms))
        out.append(f'<line class="grid" x1="{gx}" y1="{AXIS_H}" x2="{gx}" y2="{_n(bottom)}"/>')
    out.extend(labels.draw(0, tops[0] + heights[0] / 2))
    bar_y = tops[0] + (heights[0] - BAR_H) / 2
    if t.coordinator:
        out.extend(_coordinator_lane(t.coordinator, s, bar_y))
    else:
        out.append(_text(s.x0 + 4, bar_y + 14, "no coordinator record names this producer", "muted"))
    for k, lane in enumerate(t.lanes, start=1):
        y = tops[k] + (heights[k] - BAR_H) / 2
        out.append(f'<line class="grid" x1="0" y1="{_n(tops[k])}" x2="{WIDTH}" y2="{_n(tops[k])}"/>')
        out.extend(labels.draw(k, tops[k] + heights[k] / 2))
        out.extend(_named_marks(t.coordinator, lane.name, s, y))
        for p in lane.spans:
            out.extend(_span_shapes(p, s, y))
        if lane.present and not lane.spans:
            out.append(_text(s.x0 + 4, y + 14, "no transaction of this producer here", "muted"))
    out.append("</svg>")
    return "".join(out)
