"""``find-hanging`` and ``abort-commands``: verdicts as rows, abort arguments by the safe rule.

The as-of time is never the analysing machine's clock: it is the newest timestamp on the inputs
(batch timestamps of every partition, ``__cluster_metadata`` and ``__transaction_state`` included,
and the times of the checkpoint and clean-shutdown files) unless the caller gives one.

Abort arguments (spec §11.5, safe rule): ``--producer-epoch`` = the leader replica's entry epoch,
``--coordinator-epoch`` = max(that entry's coordinator epoch, 0); never the coordinator's (possibly
higher) epoch, never an inflated coordinator epoch.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from forensics.analysis.clock import AsOf, given
from forensics.analysis.hanging import (
    DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
    Verdict,
    classify,
    evidence_of,
)
from forensics.analysis.replicas import group_replicas
from forensics.report.state import StateReport, newest_input_time, preferred_replica

Row = Dict[str, Any]
BOOTSTRAP_PLACEHOLDER = "<bootstrap-server>"
# Which brokers each command form works on (spec §11.5, kafka-versions.md), by the row key holding it.
COMMAND_FORMS = {
    "abortArgs": "kafka-transactions.sh, legacy form: any broker >= 0.11 with message format v2, run with a 3.x "
                 "(3.0-3.9) tool; a 4.x tool no longer speaks WriteTxnMarkers v0 and needs brokers >= 2.8",
    "abortArgsStartOffset": "kafka-transactions.sh --start-offset form: brokers >= 3.0 (the tool looks the producer "
                            "up with DescribeProducers)",
    "kafkaPythonArgs": "kafka-python admin CLI (pip install kafka-python; 3.x sends WriteTxnMarkers v1+ only): "
                       "brokers >= 2.8; the coordinator epoch is always given: its default -1 is rejected once the "
                       "broker holds one for the producer",
}


def leader_views(report: StateReport, topic: Optional[str] = None, partition: Optional[int] = None,
                 broker_id: Optional[int] = None):
    """One replica per partition: the one on ``broker_id`` if given, else the likely leader."""
    groups: Dict[Tuple[str, int], list] = {}
    for v in report.partitions:
        tp = v.topic_partition
        if (topic is not None and tp.topic != topic) or (partition is not None and tp.partition != partition):
            continue
        if broker_id is not None and v.inputs.broker_id != broker_id:
            continue
        groups.setdefault((tp.topic, tp.partition), []).append(v)
    return [preferred_replica(g) for _, g in sorted(groups.items())]


def find_hanging(report: StateReport, *, as_of: Optional[int] = None, topic: Optional[str] = None,
                 partition: Optional[int] = None, broker_id: Optional[int] = None,
                 max_timeout_ms: int = DEFAULT_MAX_TRANSACTION_TIMEOUT_MS) -> Tuple[List[Verdict], AsOf]:
    when = given(as_of) if as_of is not None else newest_input_time(report)
    views = leader_views(report, topic, partition, broker_id)
    coord = report.coordinator if report.coordinator.partitions else None
    return classify(views, coord, when.time_ms, max_timeout_ms, group_replicas(report.partitions)), when


def _abort_prefix(v: Verdict, bootstrap: str, command_config: Optional[str]) -> List[str]:
    tp = v.view.topic_partition
    args = ["kafka-transactions.sh", "--bootstrap-server", bootstrap]
    if command_config:
        args += ["--command-config", command_config]
    return args + ["abort", "--topic", tp.topic, "--partition", str(tp.partition)]


def abort_args(v: Verdict, bootstrap: str = BOOTSTRAP_PLACEHOLDER,
               command_config: Optional[str] = None) -> List[str]:
    """Legacy form (any broker >= 0.11 with a 3.x tool; a 4.x tool needs brokers >= 2.8)."""
    e = v.entry
    return _abort_prefix(v, bootstrap, command_config) + [
        "--producer-id", str(e.producer_id), "--producer-epoch", str(e.producer_epoch),
        "--coordinator-epoch", str(max(e.coordinator_epoch, 0))]


def start_offset_args(v: Verdict, bootstrap: str = BOOTSTRAP_PLACEHOLDER,
                      command_config: Optional[str] = None) -> List[str]:
    """``--start-offset`` form (brokers 3.0+: the tool looks the producer up with DescribeProducers)."""
    return _abort_prefix(v, bootstrap, command_config) + ["--start-offset", str(v.start_offset)]


def kafka_python_args(v: Verdict, bootstrap: str = BOOTSTRAP_PLACEHOLDER) -> List[str]:
    """kafka-python's admin CLI (``python -m kafka.admin``), always with an explicit coordinator epoch:
    its default of -1 is rejected by a broker that already holds a coordinator epoch for the producer."""
    tp, e = v.view.topic_partition, v.entry
    return ["python", "-m", "kafka.admin", "-b", bootstrap, "transactions", "abort", "-t", tp.topic,
            "-p", str(tp.partition), "--producer-id", str(e.producer_id), "--producer-epoch", str(e.producer_epoch),
            "--coordinator-epoch", str(max(e.coordinator_epoch, 0))]


def hanging_row(v: Verdict, bootstrap: str = BOOTSTRAP_PLACEHOLDER, command_config: Optional[str] = None) -> Row:
    tp = v.view.topic_partition
    e = v.entry
    return {
        "topic": tp.topic, "partition": tp.partition, "producerId": e.producer_id, "producerEpoch": e.producer_epoch,
        "coordinatorEpoch": e.coordinator_epoch if e.coordinator_epoch >= 0 else -1, "startOffset": v.start_offset,
        "lastTimestamp": e.last_timestamp, "durationMs": v.duration_ms, "verdict": v.verdict, "reason": v.reason, "transactionalId": v.transactional_id,
        "abortArgs": abort_args(v, bootstrap, command_config) if v.abortable else None,
        "evidence": evidence_of(v),
        "abortArgsStartOffset": start_offset_args(v, bootstrap, command_config) if v.abortable else None,
        "kafkaPythonArgs": kafka_python_args(v, bootstrap) if v.abortable else None, "brokerId": v.view.inputs.broker_id,
        "durationS": v.duration_ms // 1000 if v.duration_ms is not None else None,
        "lastSequence": e.last_sequence,  # with lastTimestamp: what the live guard compares besides the epochs
    }


def hanging_rows(verdicts: Sequence[Verdict], show_all: bool = False, as_of: Optional[AsOf] = None
                 ) -> List[Tuple[Row, Verdict]]:
    """(row, verdict) of every abortable verdict, or of all with ``show_all``."""
    pairs = [(hanging_row(v), v) for v in verdicts if show_all or v.abortable]
    if as_of is not None:
        for r, _ in pairs:
            r["asOfMs"], r["asOfSource"] = as_of.time_ms, as_of.source
    return pairs
