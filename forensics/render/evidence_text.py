"""The words of the evidence model (:mod:`forensics.analysis.evidence_model`): the lines every verdict run says
first about what weakens its verdicts, and why nothing hanging is no all-clear."""

from __future__ import annotations

from collections.abc import Mapping

from forensics.analysis.evidence_model import EvidenceModel, NoAllClear, NoAllClearWhy
from forensics.render.coverage_text import coverage_lines, names
from forensics.render.gap_text import torn_warning
from forensics.render.quiescence_text import quiescence_line

_NO_ALL_CLEAR = {NoAllClearWhy.METADATA_MISSING: "the log dir holding __cluster_metadata is missing",
                 NoAllClearWhy.METADATA_INCOMPLETE: "the __cluster_metadata log read is incomplete",
                 NoAllClearWhy.METADATA_COPY_MISSING: "a metadata log dir is given without its __cluster_metadata-0"}


NO_COORDINATOR_WARNING = ("no __transaction_state partition among the inputs: verdicts are UNVERIFIABLE and rest "
                          "on age alone, as Kafka's find-hanging; add the coordinators' disks.")


def evidence_lines(model: EvidenceModel, brokers: Mapping[str, int | None]) -> list[str]:
    """What weakens the verdicts, one line each (``brokers``: log dir path -> broker id): no coordinator, the
    quiescence, the coverage, then the torn logs."""
    moment = quiescence_line(model.quiescence, brokers)
    return (([NO_COORDINATOR_WARNING] if model.no_coordinator else []) + ([moment] if moment else [])
            + coverage_lines(model.coverage) + torn_warning(model.torn))


def no_all_clear_text(n: NoAllClear) -> str:
    """``1 partition(s) lack the copy that matters (b-txn-aborts-1)``."""
    if n.why is NoAllClearWhy.COPIES_MISSING:
        return f"{len(n.partitions)} partition(s) lack the copy that matters ({names(n.partitions)})"
    if n.why is NoAllClearWhy.LOGS_TORN:
        return f"{len(n.partitions)} partition(s) whose log disagrees with their own files ({names(n.partitions)})"
    return _NO_ALL_CLEAR[n.why]
