"""Issue 22's properties as lists of problems (empty: holds), shared by the fast tests on ``fixtures/live/``
and the real-broker tests that make the same evidence afresh. Each takes what our CLI said
(``tests/e2e/forensics_cli.analyse`` or one run) and the ground truth recorded beside the evidence."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from tests.e2e import evidence_truth as truth
from tests.e2e.forensics_cli import forensics, json_rows, row_summary
from tests.evidence import claims

VERDICTS_NEVER_ON_IN_FLIGHT = ("hanging", "stuck-coordinator")
OUTPUTS = ("find_hanging", "find_hanging_all", "abort_commands")


def txns_of(scene: dict) -> list[truth.Txn]:
    return [truth.txn_from_json(t) for t in scene["transactions"]]


def armed(analysis: dict) -> list[str]:
    return list(analysis["abort_commands"]["armed"])


def verdicts_on_in_flight(rows: Sequence[dict], window: dict, txns: Iterable[truth.Txn]) -> list[str]:
    """Every hanging / stuck-coordinator row on a transaction in flight during the copy (or the run), and every
    such row on data no producer wrote."""
    index = truth.txn_index(txns)
    flying = set(window["in_flight"])
    problems = []
    for r in rows:
        if r["verdict"] not in VERDICTS_NEVER_ON_IN_FLIGHT:
            continue
        where = f"{r['verdict']} on {r['topic']}-{r['partition']} producer {r['producerId']} from {r['startOffset']}"
        t = index.get((r["topic"], r["partition"], r["producerId"], r["startOffset"]))
        if t is None:
            problems.append(f"{where}: no transaction the producers logged starts there ({r['reason']})")
        elif t.key in flying:
            problems.append(f"{where}: {t.key} was in flight during the copy (begun {t.begin_ms}, client end "
                            f"{t.ended_ms}, window {window['start_ms']}..{window['end_ms']}): {r['reason']}")
    return problems


def said(output: dict) -> list[str]:
    """What a run said to the operator: stderr, and an abort-commands script's opening comments."""
    return list(output["stderr"]) + [ln.lstrip("# ") for ln in output.get("head", [])]


def silent_on_running_broker(analysis: dict) -> list[str]:
    return [f"{out}: no line says the evidence comes from a running broker ({claims.RUNNING_BROKER!r})"
            for out in OUTPUTS if not claims.says_running_broker(said(analysis[out]))]


def tracebacks(analysis: dict) -> list[str]:
    return [f"{out}: traceback" for out in OUTPUTS if analysis[out]["traceback"]]


def kafka_7408_hints(analysis: dict) -> list[str]:
    found = [f"{out} row {r['topic']}-{r['partition']}: {r['reason']}" for out in ("find_hanging", "find_hanging_all")
             for r in analysis[out]["rows"] if claims.KAFKA_7408 in (r["reason"] or "")]
    found += [f"{out} stderr: {ln}" for out in OUTPUTS for ln in analysis[out]["stderr"] if claims.KAFKA_7408 in ln]
    return found + [f"abort-commands: {ln}" for ln in analysis["abort_commands"].get("comments", [])
                    if claims.KAFKA_7408 in ln]


def live_table(lines: Sequence[str]) -> list[tuple]:
    """kafka-transactions.sh find-hanging's rows: (topic, partition, producer id, epoch, coordinator epoch,
    start offset, last timestamp)."""
    return sorted((r["Topic"], int(r["Partition"]), int(r["ProducerId"]), int(r["ProducerEpoch"]),
                   int(r["CoordinatorEpoch"]), int(r["StartOffset"]), int(r["LastTimestamp"]))
                  for r in truth.table_rows(lines))


def our_table(rows: Sequence[dict], verdicts: Sequence[str] = ("hanging",)) -> list[tuple]:
    return sorted((r["topic"], r["partition"], r["producerId"], r["producerEpoch"], r["coordinatorEpoch"],
                   r["startOffset"], r["lastTimestamp"]) for r in rows if r["verdict"] in verdicts)


def find_hanging(paths: Sequence[Path], *extra: str) -> dict:
    r = forensics("find-hanging", *map(str, paths), "--format", "json", *extra)
    return {"rc": r.returncode, "rows": [row_summary(x) for x in json_rows(r)], "stderr": r.stderr.splitlines(),
            "traceback": "Traceback" in r.stderr}


def jbod_dirs(disk: Path, scene: dict, leave_out: str = "") -> list[Path]:
    return [disk / d for d in sorted(scene["log_dirs"]) if d != leave_out]


def jbod_left_out(disk: Path, scene: dict, name: str) -> list[str]:
    """One of the broker's log dirs left out: exit 7 and one line naming it (by directory id, with its
    partitions), or naming the missing metadata log when it is the dir that holds ``__cluster_metadata``."""
    got = find_hanging(jbod_dirs(disk, scene, name))
    held = scene["log_dirs"][name]
    problems = [] if got["rc"] == 7 else [f"exit {got['rc']}, not 7, with log dir {name} "
                                          f"(directory.id {held['directory_id']}: {held['partitions']}) left out"]
    if "__cluster_metadata-0" in held["partitions"]:
        if not claims.names_missing_metadata(got["stderr"]):
            problems.append(f"no line says the metadata log's dir is missing: {got['stderr']}")
    elif not claims.names_missing_log_dir(got["stderr"], held["directory_id"], held["partitions"]):
        problems.append(f"no line names log dir {held['directory_id']} and its partitions: {got['stderr']}")
    return problems


def preview_vs_broker(rows: Sequence[dict], scene: dict) -> dict[int, list[str]]:
    """DeleteRecords: per partition, what the abort preview and the LSO say against the broker's answers."""
    answers, after = scene["answers"]["after_delete"], scene["answers"]["after_abort"]
    acks = [e for e in scene["hanging"]["events"] if e["ev"] == "ack"]
    out: dict[int, list[str]] = {}
    for p in (0, 1):
        problems = out.setdefault(p, [])
        row = next((r for r in rows if r["topic"] == scene["topic"] and r["partition"] == p), None)
        if row is None:
            problems.append("no row")
            continue
        log_start = int(answers[str(p)]["earliest"].rsplit(":", 1)[1])
        data = sorted(e["offset"] for e in acks if e["partition"] == p)
        left = [o for o in data if o >= log_start]
        keys = [f"{scene['hanging']['transactionalId']}-0-{p}-{o - data[0]}" for o in left]
        preview = row.get("abortPreview") or {}
        if row["logStartOffset"] != log_start:
            problems.append(f"log start {row['logStartOffset']}, the broker's earliest offset {log_start}")
        lso = answers[str(p)]["lastStableOffset"]
        if row["lastStableOffset"] != lso or preview.get("lastStableOffset", lso) != lso:
            problems.append(f"LSO {row['lastStableOffset']} (preview {preview.get('lastStableOffset')}), the broker "
                            f"says {lso} (read_committed end offset)")
        if (preview.get("records") or 0) != len(left):
            problems.append(f"preview discards {preview.get('records')} records "
                            f"({preview.get('firstOffset')}..{preview.get('lastOffset')}), above the log start "
                            f"{log_start} only {len(left)} remain ({left})")
        elif left and (preview.get("firstOffset"), preview.get("lastOffset")) != (left[0], left[-1]):
            problems.append(f"preview offsets {preview.get('firstOffset')}..{preview.get('lastOffset')}, "
                            f"the remaining data {left[0]}..{left[-1]}")
        if left and preview.get("keys") is not None and list(preview["keys"]) != keys[:len(preview["keys"])]:
            problems.append(f"preview keys {preview['keys']}, the remaining records' keys {keys}")
        if preview.get("lsoAfterAbort") is not None and preview["lsoAfterAbort"] + 1 != after[str(p)]["lastStableOffset"]:
            problems.append(f"LSO after the abort {preview['lsoAfterAbort']} (+1 marker), the broker said "
                            f"{after[str(p)]['lastStableOffset']} after the real abort")
    return out
