"""A filter that matches nothing is an error: ``--topic``, ``--partition``, ``--broker-id``,
``--transactional-id`` and ``--state`` checked against what the evidence holds.

One function, :func:`check_filters`, for every command. Topics, partitions and broker ids come
from the inventory (discovery already knows them: the check runs before any segment is read);
transactional ids from the coordinators' rebuilt view. A value that names nothing raises
:class:`~forensics.errors.UsageError` (exit 2) with one line saying what exists: a close match
("did you mean 'orders'?", :mod:`difflib`), else the values themselves when they are few, else
how many there are. A value that names something real but selects no row (a topic with no open
transaction, a state no id is in) is an answer, not an error.

Matching follows Kafka: topic names and transactional ids are case-sensitive (``Orders`` and
``orders`` are two topics); transaction state names are matched case-insensitively (they differ
beyond case, so ``ongoing`` can only mean ``Ongoing``; Kafka's own ``TransactionState.parse`` is
exact, but it has no user-typed filter to be forgiving about).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import replace
from forensics.dataclass_fast import dataclass

from forensics.analysis.coordinator import CoordinatorView
from forensics.codec.txnlog import TransactionStatus
from forensics.errors import UsageError
from forensics.layout import Inventory, PartitionStatus
from forensics.model import first_few

LISTED = 12  # at most this many values are named in a message
STATE_NAMES = tuple(s.kafka_name for s in TransactionStatus)  # Kafka's TransactionState names


@dataclass(frozen=True)
class Filters:
    """The selection options of a command (None: not given)."""

    topic: str | None = None
    partition: int | None = None
    broker_id: int | None = None
    transactional_id: str | None = None
    state: str | None = None

    @property
    def narrows_partitions(self) -> bool:
        """Whether ``topic``, ``partition`` or ``broker_id`` leaves some partition replicas out."""
        return self.topic is not None or self.partition is not None or self.broker_id is not None

    def selects(self, topic: str | None, partition: int | None, broker_id: int | None) -> bool:
        """Whether the replica of ``topic``-``partition`` on broker ``broker_id`` (None: a log dir naming
        no broker) is selected by ``topic``, ``partition`` and ``broker_id``."""
        return ((self.topic is None or topic == self.topic) and (self.partition is None or partition == self.partition)
                and (self.broker_id is None or broker_id == self.broker_id))


def _close(value: str, names: Sequence[str]) -> list[str]:
    """Up to three names ``value`` may have meant: the same name in another case first."""
    folded = [n for n in names if n.lower() == value.lower() and n != value]
    rest = [m for m in difflib.get_close_matches(value, names, n=3, cutoff=0.6) if m not in folded]
    return (folded + rest)[:3]


def _spans(numbers: Iterable[int]) -> list[str]:
    """``[0, 1, 2, 5]`` -> ``["0-2", "5"]``."""
    out: list[str] = []
    ordered = sorted(set(numbers))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return out


def _listing(items: Sequence[str], what: str) -> str:
    return f"{what}: {first_few(items, LISTED)}"


def _unknown_name(kind: str, value: str, known: Iterable[str], plural: str) -> UsageError:
    names = sorted(set(known))
    close = _close(value, names)
    if close:
        return UsageError(f"no {kind} {value!r} in the evidence; did you mean {' or '.join(repr(c) for c in close)}?")
    if len(names) <= LISTED:
        return UsageError(f"no {kind} {value!r} in the evidence; {plural}: {', '.join(names)}")
    return UsageError(f"no {kind} {value!r} in the evidence ({len(names)} {plural}; scan lists them)")


class _Replicas:
    """Live partition replicas of the inventory: topic -> partition -> broker ids (None: not known)."""

    def __init__(self, inventory: Inventory) -> None:
        self.live: dict[str, dict[int, set[int | None]]] = {}
        self.other: set[str] = set()  # topics seen only as -delete/-stray/-future copies
        self.brokers: set[int] = {d.broker_id for d in inventory.log_dirs if d.broker_id is not None}
        for log_dir, p in inventory.all_partitions():
            if p.topic is None or p.partition is None:
                continue
            if p.status is PartitionStatus.LIVE:
                broker = log_dir.broker_id if log_dir is not None else None
                self.live.setdefault(p.topic, {}).setdefault(p.partition, set()).add(broker)
            else:
                self.other.add(p.topic)

    def holders(self, topic: str, partition: int | None) -> set[int]:
        parts = self.live[topic]
        chosen = [parts[partition]] if partition is not None else parts.values()
        return {b for bs in chosen for b in bs if b is not None}


def _check_topic(r: _Replicas, f: Filters) -> None:
    if f.partition is not None and f.topic is None:
        raise UsageError("--partition needs --topic")
    if f.topic is not None and f.topic not in r.live:
        if f.topic in r.other:
            raise UsageError(f"topic {f.topic!r} is in the evidence only as -delete, -stray or -future "
                             "directories, which this command does not analyse")
        raise _unknown_name("topic", f.topic, r.live, "topics")
    if f.topic is not None and f.partition is not None and f.partition not in r.live[f.topic]:
        raise UsageError(f"no partition {f.partition} of topic {f.topic!r} in the evidence; "
                         + _listing(_spans(r.live[f.topic]), "partitions"))


def _check_broker(r: _Replicas, f: Filters) -> None:
    if f.broker_id is None:
        return
    if not r.brokers:
        raise UsageError(f"no broker {f.broker_id} in the evidence: no log dir among the inputs names its broker "
                         "(meta.properties)")
    if f.broker_id not in r.brokers:
        raise UsageError(f"no broker {f.broker_id} in the evidence; " + _listing(_spans(r.brokers), "brokers"))
    if f.topic is not None:
        holders = r.holders(f.topic, f.partition)
        if f.broker_id not in holders:
            what = f"{f.topic}-{f.partition}" if f.partition is not None else f"topic {f.topic!r}"
            where = _listing(_spans(holders), "brokers holding it") if holders else \
                "no log dir holding it names its broker"
            raise UsageError(f"no replica of {what} on broker {f.broker_id} in the evidence; {where}")


def canonical_state(value: str) -> str:
    """Kafka's name of a transaction state given in any case; UsageError if it is none."""
    for name in STATE_NAMES:
        if name.lower() == value.lower():
            return name
    close = _close(value, STATE_NAMES)
    if close:
        raise UsageError(f"no transaction state {value!r}; did you mean {close[0]!r}?")
    raise UsageError(f"no transaction state {value!r}; states: {', '.join(STATE_NAMES)}")


def _check_transactional_id(value: str, coordinator: CoordinatorView | None) -> None:
    if coordinator is None:
        raise ValueError("checking a transactional id needs the coordinators' view")
    if value in coordinator.ids:
        return
    if not coordinator.partitions:
        raise UsageError(f"no transactional id {value!r} in the evidence: no __transaction_state partition among "
                         "the inputs")
    if not coordinator.ids:
        raise UsageError(f"no transactional id {value!r} in the evidence: its __transaction_state partitions hold "
                         "no transactional id")
    raise _unknown_name("transactional id", value, coordinator.ids, "transactional ids")


def check_filters(inventory: Inventory, filters: Filters, coordinator: CoordinatorView | None = None) -> Filters:
    """``filters`` with ``state`` in Kafka's spelling, once every value names something in the
    evidence; raises :class:`UsageError` (exit 2) otherwise.

    ``coordinator``: the coordinators' rebuilt view, needed only to check ``transactional_id``."""
    replicas = _Replicas(inventory)
    _check_topic(replicas, filters)
    _check_broker(replicas, filters)
    if filters.transactional_id is not None:
        _check_transactional_id(filters.transactional_id, coordinator)
    if filters.state is not None:
        filters = replace(filters, state=canonical_state(filters.state))
    return filters


def states_present(coordinator: CoordinatorView) -> str:
    """``CompleteCommit (12), Ongoing (1)``: the states the transactional ids are in, with counts."""
    counts: dict[str, int] = {}
    for v in coordinator.ids.values():
        counts[v.state_name] = counts.get(v.state_name, 0) + 1
    return ", ".join(f"{s} ({n})" for s, n in sorted(counts.items())) or "none"


__all__ = ["Filters", "STATE_NAMES", "canonical_state", "check_filters", "states_present"]
