"""The evidence model: whether the evidence is of one quiescent moment (:mod:`forensics.analysis.quiescence`)
and whether it holds what the disk says should be there (:mod:`forensics.analysis.coverage`), judged once
per run before any verdict; every later step reads it instead of guessing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Mapping, Optional

from forensics.analysis.coverage import Coverage
from forensics.analysis.coverage import describe as describe_coverage
from forensics.analysis.filters import Filters
from forensics.analysis.quiescence import Quiescence
from forensics.analysis.quiescence import describe as describe_quiescence


@dataclass(frozen=True)
class EvidenceModel:
    quiescence: Quiescence
    coverage: Coverage

    def lines(self, brokers: Mapping[str, Optional[int]]) -> List[str]:
        """What weakens the verdicts, one line each (``brokers``: log dir path -> broker id)."""
        moment = describe_quiescence(self.quiescence, brokers)
        return ([moment] if moment else []) + describe_coverage(self.coverage)

    def unproven_all_clear(self, selection: Filters) -> Optional[str]:
        """Why no all-clear of ``selection`` is proven by this evidence (None: it is)."""
        c = self.coverage
        uncovered = c.uncovered_in(selection)
        if c.metadata_missing:
            return "the log dir holding __cluster_metadata is missing"
        if c.metadata_incomplete:
            return "the __cluster_metadata log read is incomplete"
        if uncovered:
            names = ", ".join(str(u.topic_partition) for u in uncovered[:3])
            more = f" and {len(uncovered) - 3} more" if len(uncovered) > 3 else ""
            return f"{len(uncovered)} partition(s) lack the copy that matters ({names}{more})"
        return None  # a missing broker or log dir that leads nothing in the selection holds no copy it needs
