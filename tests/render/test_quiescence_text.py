"""The words of the quiescence (render/quiescence_text.py): why the evidence is not one quiescent moment."""

from __future__ import annotations

from forensics.analysis.quiescence import ChangedFile, Quiescence, Unsettled, UnsettledKind, assess
from forensics.render.quiescence_text import quiescence_line, unsettled_text

K = UnsettledKind


def test_each_kind_in_words() -> None:
    assert unsettled_text(Unsettled(K.LOCK_HELD, "/d/1", lock_pid=4242)) == (
        "is in use: its .lock is held by a running process (pid 4242), a live broker's log dir")
    assert unsettled_text(Unsettled(K.NO_CLEAN_SHUTDOWN, "/d/1")) == (
        "has no .kafka_cleanshutdown: the broker was running, or did not stop cleanly, when it was copied")
    assert unsettled_text(Unsettled(K.STALE_CLEAN_SHUTDOWN, "/d/1", broker_id=1, shutdown_epoch=11,
                                    registered_epoch=12)) == (
        "has a .kafka_cleanshutdown of broker epoch 11, but the newest registration of broker 1 in __cluster_metadata "
        "has epoch 12: the broker registered again after that stop (it deletes the file when it starts): the file is "
        "an earlier stop's, mixed into this copy")
    assert unsettled_text(Unsettled(K.STALE_CLEAN_SHUTDOWN, "/d/1", broker_id=1, shutdown_epoch=13,
                                    registered_epoch=12)).endswith(
        "has epoch 12: the metadata copy is older than that stop: files of different moments")
    changed = tuple(ChangedFile(f"/d/1/t-0/{n}.log", 10, None if n == 2 else 20) for n in range(5))
    assert unsettled_text(Unsettled(K.CHANGED_WHILE_READ, "/d/1", changed=changed[:3])) == (
        "changed while it was read (0.log 10 -> 20 bytes, 1.log 10 -> 20 bytes, 2.log vanished)")
    assert unsettled_text(Unsettled(K.CHANGED_WHILE_READ, "/d/1", changed=changed)).endswith("and 2 more)")


def test_partition_dirs_given_alone() -> None:
    """issue 24: each named once, the first as the reason's path."""
    [one] = assess([], ["/p/t-0"], [], {}, {}, 60_000).unsettled
    assert unsettled_text(one) == "given without its log dir: nothing tells whether its broker had stopped"
    [three] = assess([], ["/p/t-0", "/p/t-1", "/q/u-0"], [], {}, {}, 60_000).unsettled
    assert unsettled_text(three) == ("given without its log dir, as are /p/t-1 and /q/u-0: nothing tells whether "
                                     "their brokers had stopped")
    [five] = assess([], [f"/p/t-{i}" for i in range(5)], [], {}, {}, 60_000).unsettled
    assert unsettled_text(five).startswith("given without its log dir, as are /p/t-1, /p/t-2, /p/t-3 and 1 more: nothing")


def test_the_quiescence_line() -> None:
    assert quiescence_line(Quiescence((), frozenset()), {}) is None
    q = Quiescence((Unsettled(K.NO_CLEAN_SHUTDOWN, "/d/1"), Unsettled(K.NO_LOG_DIR, "/p/t-0")), frozenset(),
                   window_ms=30 * 60_000)
    assert quiescence_line(q, {"/d/1": 1}) == (
        "evidence: not one quiescent moment: broker 1's log dir /d/1 has no .kafka_cleanshutdown: the broker was "
        "running, or did not stop cleanly, when it was copied; /p/t-0 given without its log dir: nothing tells whether "
        "its broker had stopped: a copy of a running broker (or of one that crashed) holds each partition as of its "
        "own copy, so a transaction, Prepare state or completion less than 30 min older than its partition's copy is "
        "too recent to judge (unverifiable, never armed)")
