"""The evidence model: whether the evidence is of one quiescent moment (:mod:`forensics.analysis.quiescence`)
and whether it holds what the disk says should be there (:mod:`forensics.analysis.coverage`), judged once
per run before any verdict; every later step reads it instead of guessing."""

from __future__ import annotations

from enum import Enum
from forensics.dataclass_fast import dataclass
from typing import NamedTuple

from forensics.analysis.coverage import Coverage
from forensics.analysis.filters import Filters
from forensics.analysis.gap_facts import Gap, LogDamage
from forensics.analysis.quiescence import Quiescence
from forensics.model import TopicPartition


class TornLog(NamedTuple):
    """A partition whose log (the copy verdicts read) disagrees with what its own files say it held, or a coordinator
    partition holding other partitions' records: what it lacks may be an open transaction."""

    topic_partition: TopicPartition
    parts: tuple[LogDamage | Gap, ...]  # its log's end gaps, a replica's contradiction, its misplaced records
    # (their words: forensics.render.gap_text.torn_text, "the log of orders-0 ends at offset 3, below ...")


class NoAllClearWhy(Enum):
    """Why nothing hanging is no all-clear of a selection: what the evidence lacks."""

    METADATA_MISSING = "metadata_missing"  # the log dir holding __cluster_metadata is missing
    METADATA_INCOMPLETE = "metadata_incomplete"  # the __cluster_metadata log read is incomplete
    METADATA_COPY_MISSING = "metadata_copy_missing"  # a metadata log dir without its __cluster_metadata-0
    COPIES_MISSING = "copies_missing"  # partitions lack the copy that matters
    LOGS_TORN = "logs_torn"  # partitions whose log disagrees with their own files


@dataclass(frozen=True, slots=True)
class NoAllClear:
    """Why no all-clear of a selection is proven (its words: :func:`forensics.render.evidence_text.no_all_clear_text`)."""

    why: NoAllClearWhy
    partitions: tuple[TopicPartition, ...] = ()  # COPIES_MISSING, LOGS_TORN: the partitions, in the model's order


@dataclass(frozen=True)
class EvidenceModel:
    """What weakens the verdicts (its lines: :func:`forensics.render.evidence_text.evidence_lines`)."""

    quiescence: Quiescence
    coverage: Coverage
    torn: tuple[TornLog, ...] = ()
    no_coordinator: bool = False  # no __transaction_state partition among the inputs: verdicts rest on age alone

    def unproven_all_clear(self, selection: Filters) -> NoAllClear | None:
        """Why no all-clear of ``selection`` is proven by this evidence (None: it is)."""
        c = self.coverage
        uncovered = c.uncovered_in(selection)
        if c.metadata_missing:
            return NoAllClear(NoAllClearWhy.METADATA_MISSING)
        if c.metadata_incomplete:
            return NoAllClear(NoAllClearWhy.METADATA_INCOMPLETE)
        if c.metadata_copies_missing:
            return NoAllClear(NoAllClearWhy.METADATA_COPY_MISSING)
        if uncovered:
            return NoAllClear(NoAllClearWhy.COPIES_MISSING, tuple(u.topic_partition for u in uncovered))
        torn = [t for t in self.torn if selection.selects(t.topic_partition.topic, t.topic_partition.partition, None)]
        if torn:
            return NoAllClear(NoAllClearWhy.LOGS_TORN, tuple(t.topic_partition for t in torn))
        return None  # a missing broker or log dir that leads nothing in the selection holds no copy it needs
