"""Hypothesis strategies and helpers shared by the decoder fuzz tests (tests/codec/test_fuzz_entry_points.py)."""

from __future__ import annotations

import contextlib

from hypothesis import strategies as st

from forensics.codec import batch, compression, crc, legacy
from forensics.errors import ForensicsError
from forensics.io import frames
from forensics.pipeline import units
from forensics.render import dump_text


def mutate(draw, buf: bytearray, count: int, splice_from=None) -> bytes:
    """``count`` byte-level mutations of ``buf`` (flip, set, insert, delete, truncate, zero fill,
    duplicate, and with ``splice_from`` a piece of another seed inserted)."""
    ops = ["flip", "set", "insert", "delete", "truncate", "zero", "dup"] + (["splice"] if splice_from else [])
    for _ in range(count):
        if not buf:
            buf += draw(st.binary(min_size=1, max_size=8))
            continue
        i = draw(st.integers(0, len(buf) - 1))
        op = draw(st.sampled_from(ops))
        if op == "flip":
            buf[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "set":
            buf[i] = draw(st.integers(0, 255))
        elif op == "insert":
            buf[i:i] = draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del buf[i: i + draw(st.integers(1, 16))]
        elif op == "truncate":
            del buf[i:]
        elif op == "zero":
            n = draw(st.integers(1, 32))
            buf[i: i + n] = bytes(len(buf[i: i + n]))
        elif op == "dup":
            buf[i:i] = buf[i: i + draw(st.integers(1, 24))]
        else:
            other = draw(st.sampled_from(splice_from))
            j = draw(st.integers(0, len(other) - 1))
            buf[i:i] = other[j: j + draw(st.integers(1, 64))]
    return bytes(buf)


@st.composite
def mutated(draw, seeds):
    """A real seed with 0-4 byte-level mutations (see :func:`mutate`)."""
    return mutate(draw, bytearray(draw(st.sampled_from(seeds))), draw(st.integers(0, 4)))


def maybe_none(strategy):
    return st.one_of(st.none(), strategy)


def ours(fn, *args, **kwargs):
    """Call ``fn``; a ForensicsError is returned (the contract allows it), anything else propagates."""
    try:
        return fn(*args, **kwargs)
    except ForensicsError as exc:
        return exc


@contextlib.contextmanager
def pure_python():
    """The pure-Python scanner and record decoders in this process (the accelerator switched off)."""
    users = (frames, batch, legacy, compression, dump_text, units)  # every module that calls into the accelerator
    entries = ((batch, "record_tuples", batch.python_record_tuples),  # names bound to C functions
               (legacy, "deep_tuples", legacy.python_deep_tuples))
    saved = [m.native for m in users], [getattr(m, name) for m, name, _ in entries]
    for m in users:
        m.native = None
    for m, name, python in entries:
        setattr(m, name, python)
    try:
        yield
    finally:
        for m, native in zip(users, saved[0]):
            m.native = native
        for (m, name, _), fn in zip(entries, saved[1]):
            setattr(m, name, fn)


def recrc(buf: bytearray) -> None:
    """Recompute a v2 batch's CRC-32C in place, so that damage reaches the record decoders."""
    if len(buf) >= 61 and buf[16] == 2:
        buf[17:21] = crc.crc32c(bytes(buf[21:])).to_bytes(4, "big")


def outcome(fn):
    """("ok", result) or (error class, message): comparable across the accelerated and pure paths."""
    try:
        return ("ok", fn())
    except ForensicsError as exc:
        return (type(exc).__name__, exc.message)
