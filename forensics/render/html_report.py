"""The incident report as one self-contained HTML page.

Inline CSS, inline SVG, no script, no image, no font and no URL of any kind: the page opens from
a USB stick on an air-gapped machine and renders the same. A Content-Security-Policy of
``default-src 'none'`` tells the browser to fetch nothing even if some text slipped through.
Every text comes from evidence and is escaped (:func:`~forensics.render.html_text.esc`). Knows
nothing of Kafka rules: it lays out :class:`~forensics.report.incident.Incident`. The same model
gives byte-identical output.
"""

from __future__ import annotations

import json
import shlex
from typing import TextIO
from collections.abc import Iterable, Sequence

from forensics.findings import Finding
from forensics.render.clock_text import file_times_note
from forensics.render.counts import count, not_counted
from forensics.render.html_style import CSS, TONES, tone_colour
from forensics.render.html_svg import coordinator_producer, lso_bars, lso_drawn, no_data_text, timeline_svg
from forensics.render.html_text import esc, value_text
from forensics.render.size_text import size
from forensics.render.selection_text import attention_words, left_out_words, selection_options, selection_words
from forensics.render.time_text import age, duration, iso, moment
from forensics.columns import LINES, QUOTED
from forensics.report.incident_labels import GROUP_LABELS
from forensics.report.incident_model import (
    Field,
    Incident,
    LsoLag,
    OpenTransaction,
    Selection,
    Timeline,
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
MAX_LSO_ROWS = 1000


def html_report(inc: Incident) -> str:
    body = [_header(inc), _inputs(inc), _summary(inc), _lso(inc), _timelines(inc), _transactions(inc),
            _findings(inc), _footer(inc)]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>Kafka incident report{esc(_title_suffix(inc))}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


def render_html_report(inc: Incident, out: TextIO) -> None:
    out.write(html_report(inc))


def _title_suffix(inc: Incident) -> str:
    chosen = f": {selection_words(inc.selection)} only" if inc.selection is not None else ""
    return chosen + (f" as of {iso(inc.as_of_ms)}" if inc.as_of_ms is not None else "")


def _selection(s: Selection) -> str:
    """The banner of a report narrowed to some partitions: which, what it leaves out, what stays whole."""
    return (f'<p class="warning">SELECTION: {esc(selection_words(s))} only '
            f"(<code>{esc(selection_options(s))}</code>). This report shows these partitions alone; left out: "
            f"{esc(left_out_words(s))}; {esc(count(s.findings_left_out, 'finding'))} on their replicas; "
            f"{esc(count(s.timelines_left_out, 'transactional id'))} with nothing in the selection. It is no "
            f"verdict on the whole cluster: the report without {_option('--topic')}, {_option('--partition')} "
            f"and {_option('--broker-id')} gives that. Still from all the inputs: the as-of time, the brokers, the "
            "coordinators' records (<code>__transaction_state</code> partitions, transactional ids, their "
            "states), the findings about the inputs, log dirs and coordinators, and the log bytes read.</p>")


def _option(name: str) -> str:
    return f'<code style="white-space:nowrap">{esc(name)}</code>'


def _only(inc: Incident, what: str) -> str:
    """A section's note that it shows the selection's ``what`` alone (nothing without a selection)."""
    if inc.selection is None:
        return ""
    return f'<p class="muted">{esc(what)} of {esc(selection_words(inc.selection))} only (see the top).</p>'


def _kv(pairs: Iterable[tuple[str, str]], cls: str = "kv") -> str:
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in pairs)
    return f'<dl class="{cls}">{rows}</dl>' if rows else ""


def _value(f: Field, as_of: int | None) -> str:
    """A field's value as escaped HTML: what a missing value means, never a bare null."""
    if f.value is None or f.value == ():
        return f'<span class="unknown">{esc(f.none)}</span>'
    if not isinstance(f.value, tuple):
        return f'<span class="mono">{esc(value_text(f.value, f.kind, as_of))}</span>'
    items = [json.dumps(v, ensure_ascii=False) if f.kind == QUOTED and isinstance(v, str)
             else value_text(v, f.kind, as_of) for v in f.value]
    return ("<br>" if f.kind == LINES else ", ").join(f'<span class="mono">{esc(i)}</span>' for i in items)


def _fields(fields: Sequence[Field], as_of: int | None) -> str:
    """Labelled facts; the row's JSON key is the label's tooltip (to match find-hanging --format json)."""
    rows = "".join(f'<dt title="{esc(f.key)}">{esc(f.label or f.key)}</dt><dd>{_value(f, as_of)}</dd>'
                   for f in fields)
    return f'<dl class="kv">{rows}</dl>' if rows else ""


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], nums: Sequence[int] = ()) -> str:
    """``rows`` hold already-escaped cells; columns in ``nums`` are right-aligned."""
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f'<td class="num">{c}</td>' if i in nums else f"<td>{c}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _badge(text: str, tone: str) -> str:
    return f'<span class="badge" style="background:{tone_colour(tone)}">{esc(text)}</span>'


def _legend(tones: Iterable[str]) -> str:
    items = "".join(f'<span><span class="swatch" style="background:{TONES[t][0]}"></span>{esc(TONES[t][1])}</span>'
                    for t in dict.fromkeys(tones) if t in TONES)
    return f'<div class="legend">{items}</div>'


# -- sections ---------------------------------------------------------------------------------------


def _header(inc: Incident) -> str:
    s = inc.summary
    verdict = f"{s.hanging} hanging transaction(s)" if s.hanging else "no transaction proven hanging"
    if inc.selection is not None:
        verdict += f" in {selection_words(inc.selection)}"
    if s.unverifiable:
        verdict += f" · {s.unverifiable} unverifiable (not armed)"
    if s.attention:
        verdict += f" · {s.attention} stuck, fenced or overdue (not armed)"
    if inc.selection is not None and inc.selection.needs_attention_left_out:
        verdict += f" · left out, not shown: {attention_words(inc.selection)}"
    note = file_times_note(inc.clock) if inc.clock is not None else None
    warnings = "".join(f'<p class="warning">WARNING: {esc(w)}</p>' for w in inc.warnings + ((note,) if note else ()))
    links = "".join(f'<a href="#{a}">{esc(t)}</a>' for a, t in (
        ("inputs", "Inputs"), ("summary", "Summary"), ("lso-lag", "LSO lag"), ("timelines", "Timelines"),
        ("transactions", "Open transactions"), ("findings", "Findings")))
    chosen = _selection(inc.selection) if inc.selection is not None else ""
    return (f'<header><h1>Kafka incident report</h1><div>{esc(verdict)} · as of {esc(iso(inc.as_of_ms))}'
            f' · {s.findings} finding(s)</div><nav>{links}</nav>{chosen}{warnings}</header>')


def _inputs(inc: Incident) -> str:
    items = "".join(f"<li><code>{esc(p)}</code></li>" for p in inc.inputs)
    if inc.manifest_path is not None:
        manifest = (f"<code>{esc(inc.manifest_path)}</code>, SHA-256 "
                    f'<code class="digest">{esc(inc.manifest_sha256)}</code> '
                    '<span class="muted">(check it with <code>kafka-forensics verify-manifest</code>)</span>')
    else:
        manifest = ('<span class="muted">none written: run with <code>--manifest FILE</code> to record the '
                    'SHA-256 of every input file</span>')
    facts = [("analysis time (as of)", f"{esc(moment(inc.as_of_ms))} <span class=\"muted\">({esc(inc.as_of_source)})"
                                       "</span>"),
             ("evidence manifest", manifest), ("tool", f"kafka-forensics {esc(inc.tool_version)}")]
    if inc.brokers is not None:
        facts.insert(1, ("brokers", esc(inc.brokers)))
    return f'<section id="inputs"><h2>Inputs</h2><ul>{items}</ul>{_kv(facts)}</section>'


def _card(label: str, value: object, note: str = "", alert: bool = False, caution: bool = False) -> str:
    cls = "card alert" if alert else "card caution" if caution else "card"
    extra = f'<span class="muted">{esc(note)}</span>' if note else ""
    return f'<div class="{cls}"><span class="n">{esc(value)}</span>{esc(label)}<br>{extra}</div>'


def _counted(n: int, noun: str, note: str = "") -> str:
    """A card counting ``noun``s, its label singular for one (``1 broker``, ``3 brokers``: counts.count)."""
    return _card(count(n, noun).split(" ", 1)[1], n, note)


def _log_bytes_note(n: int, partitions_leave_some_out: bool) -> str:
    """What the log bytes card counts, said on it: the exact count (``219,613 bytes``, as ``du -b`` and
    scan's JSON give it) and that every partition's segments count, internal ones included, as scan's
    and the engine line's figures do, where the partitions card leaves them out."""
    exact = f"{n:,} bytes: " if n >= 1024 else ""
    also = ", internal topics included (as scan)" if partitions_leave_some_out else ""
    return f"{exact}the .log segments of every partition{also}"


def _summary(inc: Incident) -> str:
    s = inc.summary
    brokers = ", ".join("?" if b is None else str(b) for b in s.brokers) or "none"
    cards = [
        _counted(len(s.brokers), "broker", f"ids {brokers}"),
        _counted(s.partitions, "partition", f"{s.topics} topic(s), {s.replicas} replica(s)"
                 + (f"; {not_counted(s.not_counted)}" if s.not_counted else "")),
        _counted(s.txn_state_partitions, "__transaction_state partition", f"of {s.txn_state_partition_count}"),
        _counted(s.transactional_ids, "transactional id"),
        _counted(s.open_transactions, "open transaction", ", ".join(f"{n} {v}" for v, n in s.verdicts)),
        _card("hanging", s.hanging, "proven: abort armed" if s.hanging else "", alert=s.hanging > 0),
        _card("unverifiable", s.unverifiable, "the evidence cannot decide: not armed" if s.unverifiable else "",
              caution=s.unverifiable > 0),
        _card("need a person", s.attention, "stuck, fenced or overdue: not armed" if s.attention else "",
              caution=s.attention > 0),
        _counted(s.findings, "finding", ", ".join(f"{n} {k}" for k, n in s.findings_by_severity)),
        _card("log bytes", size(s.log_bytes), _log_bytes_note(s.log_bytes, bool(s.not_counted))),
    ]
    chosen = inc.selection
    if chosen is not None:
        cards.append(_card("partitions left out", chosen.partitions_left_out,
                           f"{count(chosen.open_left_out, 'open transaction')} left out, not shown"
                           + (f": {attention_words(chosen)}" if chosen.needs_attention_left_out else ""),
                           alert=chosen.hanging_left_out > 0, caution=chosen.needs_attention_left_out > 0))
    if s.batches is not None:
        cards.append(_counted(s.batches, "batch", f"{count(s.records, 'record')} in {count(s.segments, 'segment')}"))
    return f'<section id="summary"><h2>Summary</h2><div class="cards">{"".join(cards)}</div></section>'


def _transaction(t: OpenTransaction, as_of: int | None) -> str:
    who = f" · transactional id <q>{esc(t.transactional_id)}</q>" if t.transactional_id is not None else ""
    parts = [f'<article class="txn tone-{esc(t.tone)}"><h3>{esc(t.topic)}-{esc(t.partition)} · producer '
             f'{esc(t.producer_id)}{who}{_badge(t.verdict, t.tone)}</h3>',
             f'<p class="reason">{esc(t.reason)}</p>', _fields(t.facts, as_of)]
    if t.advice:
        parts.append("<h4>What to do</h4><ul>" + "".join(f"<li>{esc(a)}</li>" for a in t.advice) + "</ul>")
    if t.commands and t.armed:
        parts.append("<h4>Proposed commands</h4><p class=\"muted\">Review before running: an abort discards the "
                     "transaction's data on this partition. Nothing here runs anything.</p>")
    elif t.commands:
        parts.append(f"<h4>Commands, NOT armed</h4><p class=\"muted\">{esc(t.not_armed_because or '')}</p>")
    if t.commands:
        for c in t.commands:
            mark = (f'<strong>{"Run this form" if t.armed else "The form"} for these brokers '
                    f'({"abort-commands arms it" if t.armed else "not armed"}):</strong> '
                    if c.key == t.active_form else "")
            parts.append(f'<div class="muted">{mark}{esc(c.label)}</div><pre class="cmd">{esc(shlex.join(c.argv))}</pre>')
    cols = [f"<div><h4>{esc(g.label)}</h4>{_fields(g.fields, as_of)}</div>" for g in t.extras]
    if t.evidence:
        cols.append(f"<div><h4>{esc(GROUP_LABELS['evidence'])}</h4>{_fields(t.evidence, as_of)}</div>")
    parts.append(f'<div class="cols">{"".join(cols)}</div>')
    parts.append("</article>")
    return "".join(parts)


def _transactions(inc: Incident) -> str:
    hanging = [t for t in inc.transactions if t.abortable]
    unverified = [t for t in inc.transactions if not t.abortable and t.tone == "unverified"]
    others = [t for t in inc.transactions if not t.abortable and t.tone != "unverified"]
    parts = ['<section id="transactions"><h2>Hanging transactions</h2>', _only(inc, "The open transactions")]
    none = "None proven: no abort is armed." if inc.selection is None else "None proven here: no abort is armed."
    parts += [_transaction(t, inc.as_of_ms) for t in hanging] or [f"<p>{none}</p>"]
    if unverified:
        parts.append("<h2>Unverifiable: not armed</h2><p class=\"muted\">The evidence cannot decide: the "
                     "coordinator's records are missing, or the records a verdict rests on are damaged or "
                     "incomplete (see each reason). A torn copy and a lost marker look alike on disk.</p>")
        parts += [_transaction(t, inc.as_of_ms) for t in unverified]
    if others:
        parts.append("<h2>Other open transactions</h2><p class=\"muted\">Not to be aborted from here: the "
                     "coordinator will finish them, or it is stuck itself (see each reason).</p>")
        parts += [_transaction(t, inc.as_of_ms) for t in others]
    parts.append("</section>")
    return "".join(parts)


def _timeline_table(t: Timeline) -> str:
    rows: list[Sequence[str]] = [
        (esc(iso(e.time_ms)), "coordinator", esc(f"offset {e.offset}"), esc(e.state),
         esc(f"coordinator epoch {e.coordinator_epoch}; {coordinator_producer(e)}; "
             f"partitions {', '.join(e.partitions) or 'none'}")) for e in t.coordinator]
    for lane in t.lanes:
        for p in lane.spans:
            where = (f"offsets {p.first_offset}-{p.last_data_offset}" if p.last_data_offset is not None
                     else no_data_text(p))
            rows.append((esc(iso(p.first_time_ms)), esc(lane.name), esc(where),
                         esc(p.outcome or (p.verdict or "open").upper()),
                         esc(f"producer {p.producer_id}; marker at offset {p.marker_offset}, "
                             f"{iso(p.marker_time_ms)}" if p.outcome else f"producer {p.producer_id}; no marker")))
        if not lane.present:
            rows.append(("", esc(lane.name), "", "", "named by the coordinator, not among the inputs"))
        if lane.omitted:
            rows.append(("", esc(lane.name), "", "", esc(f"{lane.omitted} older transaction(s) left out")))
    rows.sort(key=lambda r: r[0] or "~")
    return _table(("time (UTC)", "lane", "where", "state / outcome", "details"), rows)


def _timeline(t: Timeline, index: int, as_of: int | None) -> str:
    tones = ["idle", "open", "prepare", "commit", "abort", "dead", "hanging"]
    state = f" · coordinator state now: {t.state}" if t.state else ""
    if t.coordinator_partition is not None:
        state += f" (__transaction_state-{t.coordinator_partition})"
    pids = ", ".join(map(str, t.producer_ids))
    span = (f"{iso(t.start_ms)} to {iso(t.end_ms)} ({duration(t.end_ms - t.start_ms)}"
            + (f"; ends {age(t.end_ms, as_of)})" if as_of is not None else ")")
            if t.start_ms is not None and t.end_ms is not None else "no timestamps")
    omitted = (f" The {t.coordinator_omitted} oldest coordinator record(s) are left out."
               if t.coordinator_omitted else "")
    flag = _badge("hanging", "hanging") if t.hanging else ""
    return (f'<figure class="timeline-figure" id="timeline-{index}"><h3>{esc(t.title)}{flag}</h3>'
            f'<figcaption class="muted">{esc(f"producer id(s) {pids}{state}. {span}.{omitted}")}</figcaption>'
            f"{timeline_svg(t)}{_legend(tones)}<details><summary>every record of this timeline</summary>"
            f"{_timeline_table(t)}</details></figure>")


def _timelines(inc: Incident) -> str:
    parts = ['<section id="timelines"><h2>Timelines per transactional id</h2><p class="muted">Top lane: the '
             "transaction coordinator's records for the id (state, epoch, partitions; dashed lines mark each "
             "record across the lanes). Below: the id's transactions on each partition, from their first data "
             "batch to their marker (C commit, A abort); an open transaction runs off the right edge.</p>",
             _only(inc, "The transactional ids with a transaction or coordinator record on the partitions")]
    parts += ([_timeline(t, k, inc.as_of_ms) for k, t in enumerate(inc.timelines, start=1)]
              or ["<p>No transactional id.</p>"])
    if inc.timelines_omitted:
        parts.append(f'<p class="muted">{inc.timelines_omitted} more transactional id(s) not drawn.</p>')
    parts.append("</section>")
    return "".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _lso_row(i: LsoLag, as_of: int | None) -> Sequence[str]:
    hw = f"{i.high_watermark}" + ("" if i.high_watermark_known else " (log end: no checkpoint)")
    pinned = (f"producer {i.pinned_by} from offset {i.pinned_offset}, since {moment(i.pinned_since_ms, as_of)}"
              if i.pinned_by is not None else "")
    return (esc(f"{i.topic}-{i.partition}"), esc(i.broker_id), esc(i.log_start_offset), esc(i.last_stable_offset),
            esc(hw), esc(i.log_end_offset), esc(i.lag_offsets),
            esc(duration(i.lag_ms) if i.lag_ms is not None else ""), esc(pinned))


def _lso(inc: Incident) -> str:
    svg, left_out = lso_bars(inc.lso)
    quiet = len(inc.lso) - len(lso_drawn(inc.lso))
    notes = ([f"{_count(left_out, 'partition')} with smaller lags not drawn."] if left_out else []) + (
        [f"{_count(quiet, 'partition')} without lag (LSO at the high watermark, no open transaction) not drawn."]
        if quiet and svg else [])
    figure = (f"<figure>{svg}{_legend(('hanging', 'open', 'idle'))}</figure>" if svg else
              f"<p>No lag: the last stable offset is at the high watermark on all {_count(len(inc.lso), 'partition')}"
              ", and no transaction is open.</p>")
    rows = [_lso_row(i, inc.as_of_ms) for i in inc.lso[:MAX_LSO_ROWS]]
    more = (f'<p class="muted">{len(inc.lso) - MAX_LSO_ROWS} more partition(s) not listed.</p>'
            if len(inc.lso) > MAX_LSO_ROWS else "")
    table = _table(("partition", "broker", "log start", "LSO", "high watermark", "log end", "lag (offsets)",
                    "lag (time)", "pinned by"), rows, nums=(2, 3, 4, 5, 6))
    return ('<section id="lso-lag"><h2>LSO lag per partition</h2><p class="muted">High watermark minus last '
            "stable offset: what read_committed consumers cannot read yet. Time: the partition's newest batch "
            "minus the first batch of the transaction holding the LSO; stuck: the as-of time minus it.</p>"
            f"{_only(inc, 'The partitions')}{figure}" + "".join(f'<p class="muted">{esc(n)}</p>' for n in notes) +
            f"<details><summary>every partition</summary>{table}{more}</details></section>")


def _where(f: Finding) -> str:
    parts = [f.path or ""]
    if f.position is not None:
        parts.append(f"byte {f.position}" + (f"-{f.end_position}" if f.end_position not in (None, f.position)
                                             else ""))
    if f.first_offset is not None:
        parts.append(f"offset {f.first_offset}" + (f"-{f.last_offset}" if f.last_offset not in (None, f.first_offset)
                                                   else ""))
    return ", ".join(p for p in parts if p)


def _findings(inc: Incident) -> str:
    only = _only(inc, "Findings about the inputs, log dirs and coordinators; those of the partitions")
    if not inc.findings:
        none = ("None: every input read as Kafka wrote it." if inc.selection is None or not
                inc.selection.findings_left_out else "None here: these partitions read as Kafka wrote them.")
        return f'<section id="findings"><h2>Findings</h2>{only}<p>{esc(none)}</p></section>'
    rows = [(esc(f.level.value), esc(f.kind.value), f'<span class="mono">{esc(_where(f))}</span>',
             f'<span class="finding">{esc(f.message)}</span>')
            for f in inc.findings]
    more = (f'<p class="muted">{inc.findings_omitted} more finding(s): see <code>scan</code> or the JSON '
            "output.</p>" if inc.findings_omitted else "")
    return (f'<section id="findings"><h2>Findings</h2>{only}{_table(("severity", "kind", "where", "what"), rows)}'
            f"{more}</section>")


def _footer(inc: Incident) -> str:
    return (f"<footer>kafka-forensics {esc(inc.tool_version)} · offline analysis of copies of broker disks; "
            "this page is self-contained (no script, no network).</footer>")
