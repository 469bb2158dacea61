"""The evidence model: whether the evidence is of one quiescent moment (:mod:`forensics.analysis.quiescence`)
and whether it holds what the disk says should be there (:mod:`forensics.analysis.coverage`), judged once
per run before any verdict; every later step reads it instead of guessing."""

from __future__ import annotations

from collections.abc import Mapping
from forensics.dataclass_fast import dataclass
from typing import NamedTuple

from forensics.analysis.coverage import Coverage, names
from forensics.analysis.coverage import describe as describe_coverage
from forensics.analysis.filters import Filters
from forensics.analysis.gap_facts import Gap, LogDamage
from forensics.analysis.quiescence import Quiescence
from forensics.analysis.quiescence import describe as describe_quiescence
from forensics.model import TopicPartition


class TornLog(NamedTuple):
    """A partition whose log (the copy verdicts read) disagrees with what its own files say it held, or a coordinator
    partition holding other partitions' records: what it lacks may be an open transaction."""

    topic_partition: TopicPartition
    parts: tuple[LogDamage | Gap, ...]  # its log's end gaps, a replica's contradiction, its misplaced records
    # (their words: forensics.render.gap_text.torn_text, "the log of orders-0 ends at offset 3, below ...")


@dataclass(frozen=True)
class EvidenceModel:
    quiescence: Quiescence
    coverage: Coverage
    torn: tuple[TornLog, ...] = ()

    def lines(self, brokers: Mapping[str, int | None]) -> list[str]:
        """What weakens the verdicts, one line each (``brokers``: log dir path -> broker id), but for the torn logs
        (:func:`forensics.render.gap_text.torn_warning` writes theirs, said after these)."""
        moment = describe_quiescence(self.quiescence, brokers)
        return ([moment] if moment else []) + describe_coverage(self.coverage)

    def unproven_all_clear(self, selection: Filters) -> str | None:
        """Why no all-clear of ``selection`` is proven by this evidence (None: it is)."""
        c = self.coverage
        uncovered = c.uncovered_in(selection)
        if c.metadata_missing:
            return "the log dir holding __cluster_metadata is missing"
        if c.metadata_incomplete:
            return "the __cluster_metadata log read is incomplete"
        if c.metadata_copies_missing:
            return "a metadata log dir is given without its __cluster_metadata-0"
        if uncovered:
            listed = names([u.topic_partition for u in uncovered])
            return f"{len(uncovered)} partition(s) lack the copy that matters ({listed})"
        torn = [t for t in self.torn if selection.selects(t.topic_partition.topic, t.topic_partition.partition, None)]
        if torn:
            listed = names([t.topic_partition for t in torn])
            return f"{len(torn)} partition(s) whose log disagrees with their own files ({listed})"
        return None  # a missing broker or log dir that leads nothing in the selection holds no copy it needs
