"""The HTML report's look: one inline style sheet and the colour of each tone.

No web fonts, no images, no ``url(...)``: the page must render identically with no network.
"""

from __future__ import annotations

# tone -> (fill colour, legend text). Tones are the model's vocabulary (forensics.report.incident).
TONES = {
    "idle": ("#9aa5b1", "idle / empty"),
    "open": ("#3b82f6", "open (in flight)"),
    "prepare": ("#f59e0b", "preparing / markers pending"),
    "commit": ("#16a34a", "committed"),
    "abort": ("#7c3aed", "aborted"),
    "dead": ("#4b5563", "expired (tombstone)"),
    "hanging": ("#dc2626", "hanging"),
    "unverified": ("#ea580c", "unverifiable (not armed)"),
    "unknown": ("#a16207", "unknown state"),
}
BACKGROUND = "#ffffff"


def tone_colour(tone: str) -> str:
    return TONES.get(tone, TONES["unknown"])[0]


CSS = """
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; padding: 0 24px 48px; background: #ffffff; color: #1f2933; overflow-wrap: anywhere;
       font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
header { border-bottom: 3px solid #1f2933; padding: 18px 0 10px; margin-bottom: 8px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 28px 0 10px; border-bottom: 1px solid #d5dbe1; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 18px 0 6px; }
h4 { font-size: 14px; margin: 12px 0 4px; }
nav a { margin-right: 14px; color: #1d4ed8; }
code, pre, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
pre.cmd { background: #0f172a; color: #e2e8f0; padding: 8px 10px; border-radius: 4px; white-space: pre-wrap;
          word-break: break-all; margin: 2px 0 8px; }
.muted { color: #64748b; }
.unknown { color: #64748b; font-style: italic; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; }
.card { border: 1px solid #d5dbe1; border-radius: 6px; padding: 8px 12px; min-width: 150px; background: #f8fafc; }
.card .n { font-size: 22px; font-weight: 600; display: block; }
.card.alert { border-color: #dc2626; background: #fef2f2; }
.card.alert .n { color: #b91c1c; }
.card.caution { border-color: #ea580c; background: #fff7ed; }
.card.caution .n { color: #c2410c; }
.warning { border: 2px solid #ea580c; background: #fff7ed; color: #7c2d12; border-radius: 6px;
           padding: 8px 12px; margin: 12px 0; font-weight: 600; }
article.txn { border: 1px solid #d5dbe1; border-left: 6px solid #9aa5b1; border-radius: 6px; padding: 4px 14px 10px;
              margin: 12px 0; }
article.txn.tone-hanging { border-left-color: #dc2626; }
article.txn.tone-unverified { border-left-color: #ea580c; }
article.txn.tone-prepare { border-left-color: #f59e0b; }
article.txn.tone-open { border-left-color: #3b82f6; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-size: 12px;
         vertical-align: middle; margin-left: 6px; }
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 0 28px; }
dl.kv { display: grid; grid-template-columns: fit-content(45%) 1fr; gap: 2px 14px; margin: 4px 0; }
dl.kv dt { color: #52606d; }
dl.kv dd { margin: 0; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { border: 1px solid #d5dbe1; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f1f5f9; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 10px 0 22px; }
figcaption { margin: 4px 0; }
svg { display: block; max-width: 100%; height: auto; background: #ffffff; }
svg text { font: 12px system-ui, "DejaVu Sans", sans-serif; fill: #1f2933; }
svg text.light { fill: #ffffff; }
svg text.muted { fill: #64748b; font-style: italic; }
svg text.lane { font-weight: 600; }
svg text.lane-note { fill: #52606d; }
svg .grid { stroke: #cbd2d9; stroke-dasharray: 3 3; }
svg .axis { stroke: #52606d; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 4px 0; font-size: 12px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -2px;
          margin-right: 4px; }
details { margin: 6px 0; }
summary { cursor: pointer; color: #1d4ed8; }
footer { margin-top: 36px; border-top: 1px solid #d5dbe1; padding-top: 8px; color: #64748b; font-size: 12px; }
"""
