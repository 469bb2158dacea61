"""The words of the evidence's quiescence (:mod:`forensics.analysis.quiescence`): why the evidence is not one
quiescent moment, and the line every output gives about it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from forensics.analysis.quiescence import ChangedFile, Quiescence, Unsettled, UnsettledKind
from forensics.model import first_few

_SHOWN = 3  # partitions or files named per reason


def _changed_text(c: ChangedFile) -> str:
    return f"{c.path.rsplit('/', 1)[-1]} " + ("vanished" if c.size_after is None else
                                              f"{c.size_before} -> {c.size_after} bytes")


def _loose_text(others: Sequence[str]) -> str:
    if not others:
        return ": nothing tells whether its broker"
    names = first_few(others, _SHOWN) if len(others) > _SHOWN else " and ".join(
        [", ".join(others[:-1]), others[-1]] if len(others) > 1 else others)
    return f", as are {names}: nothing tells whether their brokers"


def unsettled_text(u: Unsettled) -> str:
    """``has no .kafka_cleanshutdown: ...``, ``is in use: its .lock is held by a running process (pid 4242), ...``."""
    if u.kind is UnsettledKind.LOCK_HELD:
        return f"is in use: its .lock is held by a running process (pid {u.lock_pid}), a live broker's log dir"
    if u.kind is UnsettledKind.NO_CLEAN_SHUTDOWN:
        return "has no .kafka_cleanshutdown: the broker was running, or did not stop cleanly, when it was copied"
    if u.kind is UnsettledKind.STALE_CLEAN_SHUTDOWN:
        why = ("the broker registered again after that stop (it deletes the file when it starts): the file is an "
               "earlier stop's, mixed into this copy" if u.registered_epoch > u.shutdown_epoch else
               "the metadata copy is older than that stop: files of different moments")
        return (f"has a .kafka_cleanshutdown of broker epoch {u.shutdown_epoch}, but the newest registration of broker "
                f"{u.broker_id} in __cluster_metadata has epoch {u.registered_epoch}: {why}")
    if u.kind is UnsettledKind.CHANGED_WHILE_READ:
        return f"changed while it was read ({first_few([_changed_text(c) for c in u.changed], _SHOWN)})"
    return f"given without its log dir{_loose_text(u.others)} had stopped"


def quiescence_line(q: Quiescence, brokers: Mapping[str, int | None]) -> str | None:
    """One line for every output: why the evidence is not one quiescent moment and what that does to the
    verdicts (None when it is); ``brokers``: log dir path -> broker id."""
    if q.proven:
        return None
    parts = []
    for u in q.unsettled:
        broker = brokers.get(u.path)
        who = f"broker {broker}'s log dir {u.path}" if broker is not None else u.path
        parts.append(f"{who} {unsettled_text(u)}")
    return ("evidence: not one quiescent moment: " + first_few(parts, _SHOWN, "; ") + ": a copy of a running broker (or "
            f"of one that crashed) holds each partition as of its own copy, so a transaction, Prepare state or "
            f"completion less than {q.window_ms // 60_000} min older than its partition's copy is too recent to "
            "judge (unverifiable, never armed)")
