"""A reviewable shell script of abort commands. Never executes anything; knows no Kafka rules:
the rows carry the arguments, reasons and evidence, this module only lays them out."""

from __future__ import annotations

import shlex
import textwrap
from typing import Any, Dict, Optional, Sequence, TextIO

from forensics.render.live_guard import guard_call, guard_functions
from forensics.report.hanging import COMMAND_FORMS

Row = Dict[str, Any]

def _form(key: str) -> str:
    """The broker versions a command form works on, as comment lines."""
    text = COMMAND_FORMS[key].replace(">= ", ">=\0")  # a version stays beside its ">="
    lines = textwrap.wrap(text, 100, initial_indent="# ", subsequent_indent="#   ")
    return "\n".join(lines).replace("\0", " ")


def _comment_block(text: str) -> str:
    return "".join(f"#   {line}\n" for line in text.splitlines())


def _preview_lines(p: Row) -> str:
    """What the abort discards and frees (``abortPreview`` of a row)."""
    keys = p["keys"] if isinstance(p["keys"], str) else ", ".join("null" if k is None else repr(k) for k in p["keys"])
    lines = [f"the abort DISCARDS this producer's offsets {p['firstOffset']}..{p['lastOffset']}: {p['batches']} "
             f"batches, {p['records']} records, {p['bytes']} bytes",
             f"  record timestamps {p['firstTimestamp']} .. {p['lastTimestamp']}; first keys: {keys or '-'}"]
    if not p["batches"]:
        lines.append("  (none of its data batches remains in the segments read: below the log start, or deleted)")
    blocker = p.get("nextBlockingTransaction")
    then = (f"the next open transaction (producer {blocker['producerId']} from offset {blocker['firstOffset']})"
            if blocker else "the high watermark (then past the marker)")
    lines.append(f"LSO {p['lastStableOffset']} -> {p['lsoAfterAbort']}: {then}")
    groups = p.get("stuckConsumerGroups")
    if groups is None:
        lines.append("consumer groups behind it: unknown (no __consumer_offsets among the inputs)")
    else:
        names = ", ".join(f"{g['group']} (committed {g['committedOffset']})" for g in groups)
        lines.append(f"consumer groups committed at the LSO: {names or 'none'}")
    lines += [f"preview finding: {f}" for f in p.get("findings", ())]
    return "\n".join(lines)


def _evidence_lines(row: Row) -> str:
    ev = row.get("evidence") or {}
    lines = [f"partition dir: {ev.get('partitionDir')} (broker {ev.get('brokerId')})"]
    first = ev.get("firstBatch")
    if first:
        lines.append(f"first batch of the open transaction: {first['path']} @ byte {first['position']}")
    txn = ev.get("openTransaction")
    if txn:
        lines.append(f"open transaction: offsets {txn['firstOffset']}..{txn['lastDataOffset']}, "
                     f"{txn['batches']} batches, {txn['records']} records, epochs {txn['epochs']}")
    lines.append(f"LSO {ev.get('lastStableOffset')}, high watermark {ev.get('highWatermark')}, "
                 f"log start {ev.get('logStartOffset')}")
    rec = ev.get("coordinatorRecord")
    if rec:
        lines.append(f"coordinator: __transaction_state-{rec['partition']} offset {rec['offset']} "
                     f"({rec['state']}) in {rec['path']} @ byte {rec['position']}")
    return "\n".join(lines)


def render_abort_script(rows: Sequence[Row], out: TextIO, *, as_of: str, inputs: Sequence[str],
                        manifest: Optional[Row] = None, bootstrap: str = "<bootstrap-server>",
                        command_config: Optional[str] = None) -> None:
    out.write("#!/bin/sh\n# kafka-forensics abort-commands: REVIEW BEFORE RUNNING. Nothing here has been run.\n")
    out.write(f"# inputs: {' '.join(inputs)}\n")
    out.write("".join(f"# {line}\n" for line in f"as of: {as_of}".splitlines()))  # its source names a path
    if manifest is not None:
        out.write(f"# evidence manifest: {manifest['path']} (sha256 {manifest['sha256']})\n")
    out.write("# An abort discards the open transaction's data on that partition. The arguments follow the\n"
              "# safe rule: producer epoch and coordinator epoch of the partition's own producer entry, never\n"
              "# higher (a higher epoch fences the live producer and the coordinator's later markers).\n"
              "# If the broker rejects an abort (INVALID_PRODUCER_EPOCH / TRANSACTION_COORDINATOR_FENCED)\n"
              "# the disk copy is stale: compare with a live describe-producers before trying other values.\n")
    out.write("set -e\n")
    actionable = [r for r in rows if r.get("abortArgs")]
    if actionable:
        out.write("\n" + guard_functions())
    for r in rows:
        out.write(f"\n# {r['topic']}-{r['partition']} producer {r['producerId']} epoch {r['producerEpoch']} "
                  f"from offset {r['startOffset']}: {r['verdict']}\n")
        out.write(_comment_block(f"reason: {r['reason']}"))
        out.write(_comment_block(f"transactional id: {r.get('transactionalId')}"))
        out.write(_comment_block(_evidence_lines(r)))
        if r.get("abortPreview"):
            out.write(_comment_block(_preview_lines(r["abortPreview"])))
        if not r.get("abortArgs"):
            out.write(f"# NOT ABORTED ({r['verdict']}): not proven hanging; leave it to the coordinator.\n")
            continue
        out.write(guard_call(r, bootstrap, command_config) + "\n")
        out.write(_form("abortArgs") + "\n")
        out.write(shlex.join(r["abortArgs"]) + "\n")
        out.write(_form("abortArgsStartOffset") + "\n")
        out.write("# " + shlex.join(r["abortArgsStartOffset"]) + "\n")
        if r.get("kafkaPythonArgs"):
            out.write(_form("kafkaPythonArgs") + "\n")
            out.write("# " + shlex.join(r["kafkaPythonArgs"]) + "\n")
    if not actionable:
        out.write("\n# nothing to abort\n")
