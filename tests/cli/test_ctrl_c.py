"""Ctrl-C never lands where Python would lose it (a finalizer) or leave a lock held (logging)."""

import logging
import signal
import sys
import threading
import time

import pytest

from forensics.cli import boundary
from forensics.process_state import PROCESS


@pytest.fixture(autouse=True)
def _clear():
    PROCESS.interrupted.clear()
    yield
    PROCESS.interrupted.clear()


def test_ctrl_c_in_ordinary_code_raises_at_once() -> None:
    with pytest.raises(KeyboardInterrupt):
        boundary.on_ctrl_c(2, sys._getframe())
    assert PROCESS.interrupted.is_set()


def test_ctrl_c_inside_a_finalizer_is_deferred_to_a_safe_point() -> None:
    seen = {}

    class Finalized:
        def __del__(self) -> None:
            try:
                boundary.on_ctrl_c(2, sys._getframe())
                seen["raised_in_del"] = False
            except KeyboardInterrupt:
                seen["raised_in_del"] = True

    assert threading.current_thread() is threading.main_thread()
    # the handler the command installs: interrupt_main() does nothing where SIGINT is ignored, as in a
    # test process started in the background by a shell without job control
    previous = signal.signal(signal.SIGINT, boundary.on_ctrl_c)
    try:
        with pytest.raises(KeyboardInterrupt):  # interrupt_main() brings it back, outside __del__
            Finalized()  # dropped at once: __del__ runs here
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == {"raised_in_del": False} and PROCESS.interrupted.is_set()


def test_ctrl_c_inside_logging_is_deferred() -> None:
    frames = []

    class Grab(logging.Handler):
        def emit(self, record) -> None:
            frames.append(sys._getframe())

    logger = logging.getLogger("kafka-forensics-test")
    logger.addHandler(Grab())
    logger.propagate = False
    logger.setLevel(logging.DEBUG)  # whatever the root logger says (a Spark test may have silenced it)
    logger.warning("x")
    assert boundary._unsafe_to_interrupt(frames[0])
    assert not boundary._unsafe_to_interrupt(sys._getframe())
