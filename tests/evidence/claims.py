"""What the outputs must say, each expectation written once (issue 22): the one line every output prints on a
copy of a running broker or a log dir in use (``WARNING: evidence: not one quiescent moment: ... a copy of a
running broker ...``, analysis/quiescence.describe), the lines naming a missing log dir and a missing metadata
log (analysis/coverage.describe), the KAFKA-7408 hint."""

from __future__ import annotations

from collections.abc import Sequence

# says_running_broker() looks for these words on one line of stderr or of an abort-commands script's header
RUNNING_BROKER = "running broker"
# the hint that must not appear on a single-node restart or a DeleteRecords rewrite
KAFKA_7408 = "KAFKA-7408"


def lines(text) -> list:
    """stderr as whole lines: a note folded at the screen width (next lines indented four spaces,
    cli/console.write_note) joined back."""
    out: list = []
    for ln in text.splitlines() if isinstance(text, str) else list(text):
        if ln.startswith("    ") and out:
            out[-1] += " " + ln.strip()
        else:
            out.append(ln)
    return out


def says_running_broker(stderr) -> bool:
    """One line saying the evidence was taken from (or is) a running broker."""
    return any(RUNNING_BROKER in ln.lower() for ln in lines(stderr))


def names_missing_log_dir(stderr, directory_id: str, partitions: Sequence[str]) -> bool:
    """One line naming the missing log dir by its directory id and its partitions (their count, or at least one
    of them by name)."""
    count = f"{len(partitions)} partition"
    return any(directory_id in ln and (count in ln or any(p in ln for p in partitions)) for ln in lines(stderr))


def names_missing_metadata(stderr) -> bool:
    """One line saying the log dir holding ``__cluster_metadata`` is not among the inputs (without it no file
    names the broker's other log dirs by id)."""
    return any("__cluster_metadata" in ln and "missing" in ln.lower() for ln in lines(stderr))
