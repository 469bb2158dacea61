"""A reviewable shell script of abort commands. Never executes anything; knows no Kafka rules:
the rows carry the arguments, reasons and evidence, this module only lays them out."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from forensics.columns import ABSENT
from forensics.render.counts import count
from forensics.render.live_guard import guard_call, guard_functions
from forensics.render.selection_text import Chosen, selection_options, selection_words
from forensics.render.shell_text import command, comment, commented_command
from forensics.render.size_text import exact_size
from forensics.render.state_render import verdict_heading, verdict_label
from forensics.render.time_text import duration, stamp
from forensics.report.hanging import COMMAND_FORMS
from forensics.report.preview import AbortPreview
from forensics.report.rows import HangingRow


def _form(key: str) -> str:
    """The broker versions a command form works on, as comment lines."""
    text = COMMAND_FORMS[key].replace(">= ", ">=\0")  # a version stays beside its ">="
    lines = textwrap.wrap(text, 100, initial_indent="# ", subsequent_indent="#   ")
    return "\n".join(lines).replace("\0", " ")


def _comment_block(lines: Sequence[str]) -> str:
    return "".join(comment(line, "#   ") for line in lines)


def _preview_lines(p: AbortPreview) -> list[str]:
    """What the abort discards and frees (``abortPreview`` of a row)."""
    keys = p.keys if isinstance(p.keys, str) else ", ".join("null" if k is None else repr(k) for k in p.keys)
    if p.batches:
        lines = [f"the abort DISCARDS this producer's offsets {p.first_offset}..{p.last_offset}: "
                 f"{count(p.batches, 'batch')}, {count(p.records, 'record')}, {exact_size(p.bytes)}",
                 f"  record timestamps {stamp(p.first_timestamp)} .. {stamp(p.last_timestamp)}; first keys: "
                 f"{keys or '-'}"]
    else:
        lines = [f"the abort discards no data: none of this producer's batches from offset {p.first_offset} on "
                 "remains in the segments read (below the log start: DeleteRecords or retention removed them)"]
    blocker = p.next_blocking_transaction
    then = (f"the next open transaction (producer {blocker.producer_id} from offset {blocker.first_offset})"
            if blocker else "the high watermark (then past the marker)")
    lines.append(f"LSO {p.last_stable_offset} -> {p.lso_after_abort}: {then}")
    groups = p.stuck_consumer_groups
    if groups is None:
        lines.append("consumer groups behind it: unknown (no __consumer_offsets among the inputs)")
    else:
        names = ", ".join(f"{g.group} (committed {g.committed_offset})" for g in groups)
        lines.append(f"consumer groups committed at the LSO: {names or 'none'}")
    lines += [f"preview finding: {f}" for f in p.findings]
    return lines


def _known(value: int | None) -> str:
    return "unknown" if value is None else str(value)


def _evidence_lines(row: HangingRow) -> list[str]:
    ev = row.evidence
    lines = [f"partition dir: {ev.partition_dir} (broker {_known(ev.broker_id)})"]
    first = ev.first_batch
    if first is not None:
        lines.append(f"first batch of the open transaction: {first.path} @ byte {first.position}")
    txn = ev.open_transaction
    if txn is not None and txn.last_data_offset is None:
        lines.append(f"open transaction: starts at offset {txn.first_offset}, no data batch of it among the inputs "
                     "(known from the snapshot only)")
    elif txn is not None:
        epochs = ", ".join(map(str, txn.epochs))
        lines.append(f"open transaction: offsets {txn.first_offset}..{txn.last_data_offset}, "
                     f"{count(txn.batches, 'batch')}, {count(txn.records, 'record')}, "
                     f"{'epoch' if len(txn.epochs) == 1 else 'epochs'} {epochs}")
    lines.append(f"LSO {_known(ev.last_stable_offset)}, high watermark {_known(ev.high_watermark)}, "
                 f"log start {_known(ev.log_start_offset)}")
    rec = ev.coordinator_record
    if rec is not ABSENT:
        lines.append(f"coordinator: __transaction_state-{rec.partition} offset {rec.offset} "
                     f"({rec.state}, written {stamp(rec.timestamp)}) in {rec.path} @ byte "
                     f"{rec.position}")
    for gap in ev.gaps if ev.gaps is not ABSENT else ():
        lines.append(f"gap in the evidence: {gap.path}: {gap.text}")
    return lines


# said above the commands of a row whose producer entry holds no coordinator epoch yet
_NO_COORDINATOR_EPOCH = ("coordinator epoch: the partition's entry has none yet (LatestCoordinatorEpoch -1, as the "
                         "guard checks it), so the legacy form passes --coordinator-epoch 0: kafka-transactions.sh "
                         "replaces a negative value by 0 itself (TransactionsCommand.AbortTransactionCommand: 0 is "
                         "at most any coordinator epoch), and its --start-offset form takes the live entry's, else 0")
_HEADER = """\
# An abort discards the open transaction's data on that partition. The arguments follow the
# safe rule: producer epoch and coordinator epoch of the partition's own producer entry, never
# higher (a higher epoch fences the live producer and the coordinator's later markers).
# If the broker rejects an abort (INVALID_PRODUCER_EPOCH / TRANSACTION_COORDINATOR_FENCED)
# the disk copy is stale: compare with a live describe-producers before trying other values.
# Only proven hanging transactions are armed; every other open transaction is shown as comments
# with the reason and why it is not armed.
# Nothing runs unless this file is complete: the commands sit in main(), which runs only when
# called as the last line does.
"""
_LAST_LINE = "main end-of-script"
_MAIN = ("\nmain() {\n"
         "if [ \"${1:-}\" != end-of-script ]; then echo 'incomplete script: nothing run' >&2; exit 2; fi\n")


def _forms(r: HangingRow, armed: bool, bootstrap: str, command_config: str | None) -> str:
    """The abort command forms of a row: the active one (``activeForm``) first, armed when the row is,
    right after its live guard; every other one commented, each under the versions it works on."""
    forms = r.abort_forms or {}
    active = r.active_form or "abortArgs"
    out = [_form(active)]
    try:
        if armed:
            abort = command(forms[active])  # raises before anything is written
            out += [guard_call(r.as_json(), bootstrap, command_config), abort]
        else:
            out.append(commented_command(forms[active]).rstrip("\n"))
    except ValueError as exc:  # never written raw: shown escaped, commented out
        out.append(comment(f"NOT ARMED: {exc}").rstrip("\n"))
        out.append(commented_command(forms[active]).rstrip("\n"))
    for key in ("abortArgs", "abortArgsStartOffset", "kafkaPythonArgs"):
        if key != active:
            out += [_form(key), commented_command(forms[key]).rstrip("\n")]
    return "\n".join(out) + "\n"


def _last_write(r: HangingRow) -> str:
    """The producer's newest batch time (kafka-transactions.sh LastTimestamp) and how long ago it was."""
    ago = r.duration_ms
    return (f"last timestamp of the producer: {stamp(r.last_timestamp)}"
            + ("" if ago is None else f", {duration(ago)} before the as-of time"))


def _transactional_id(r: HangingRow) -> str:
    txid = r.transactional_id
    if txid is None:
        return f"transactional id: unknown (no coordinator record names producer id {r.producer_id})"
    return f"transactional id: {txid}"


def _row(r: HangingRow, bootstrap: str, command_config: str | None) -> str:
    out = comment(f"{r.topic}-{r.partition} producer {r.producer_id} epoch {r.producer_epoch} "
                  f"from offset {r.start_offset}: {verdict_heading(r)}")
    out += _comment_block([f"reason: {r.reason}", _transactional_id(r), _last_write(r)])
    out += _comment_block(_evidence_lines(r))
    if isinstance(r.abort_preview, AbortPreview):
        out += _comment_block(_preview_lines(r.abort_preview))
    out += _comment_block([f"advice: {line}" for line in r.advice or ()])
    armed = bool(r.armed and r.abort_forms)
    if r.abort_forms and isinstance(r.coordinator_epoch, int) and r.coordinator_epoch < 0:
        out += comment(_NO_COORDINATOR_EPOCH, "#   ")
    if not armed:
        why = r.not_armed_because or "not proven hanging"
        out += comment(f"NOT ARMED ({verdict_label(r)}): {why}")
    if r.abort_forms:
        out += _forms(r, armed, bootstrap, command_config)
    return out


def render_abort_script(rows: Sequence[HangingRow], out: TextIO, *, as_of: str, inputs: Sequence[str],
                        manifest: Mapping[str, Any] | None = None, warnings: Sequence[str] = (),
                        bootstrap: str = "<bootstrap-server>", command_config: str | None = None,
                        brokers: str | None = None, selection: Chosen | None = None) -> None:
    """The script; ``selection``: the ``--topic``, ``--partition``, ``--broker-id`` given (said in a comment:
    the other partitions' transactions are not in it)."""
    text = "#!/bin/sh\n# kafka-forensics abort-commands: REVIEW BEFORE RUNNING. Nothing here has been run.\n"
    text += "".join(comment(f"WARNING: {w}") for w in warnings)
    if selection is not None:
        text += comment(f"only {selection_words(selection)} ({selection_options(selection)}): the open transactions "
                        "outside it are not in this script")
    text += comment(f"inputs: {' '.join(inputs)}")
    if brokers is not None:
        text += comment(f"brokers: {brokers}")
    text += "".join(comment(line) for line in f"as of: {as_of}".split("\n"))  # its source names a path
    if manifest is not None:
        text += comment(f"evidence manifest: {manifest['path']} (sha256 {manifest['sha256']})")
    armed = [r for r in rows if r.armed and r.abort_forms]
    text += _HEADER + "set -eu\n" + ("\n" + guard_functions() if armed else "") + _MAIN
    for r in rows:
        text += "\n" + _row(r, bootstrap, command_config)
    if not armed:
        text += "\n" + comment("nothing to abort: " + (f"{count(len(rows), 'open transaction')}, none armed (each above "
                                                    "says why)" if rows else "no open transaction"))
    out.write(text + f"}}\n\n{_LAST_LINE}\n")
