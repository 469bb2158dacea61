"""The C accelerator (csrc/, built as forensics._speedups): the signature of every function it exports.

Callers reach it through :data:`forensics.speedups.native` (``None`` without it). Its results hold
instances of the NamedTuple classes the Python side registers (``init_frames``, ``init_records``,
``init_legacy``); the accelerator sits below the floors that define them, so here they are named
aliases of ``Any``; arguments that are such instances are typed as the tuples they are. No
overloads: ``forensics.speedups.Accelerator`` wraps each function in ``staticmethod``, which keeps
one signature only. Positions
and offsets are ints; a buffer is any object of the buffer protocol (bytes, memoryview, mmap).
tests/codec/test_speedups_stub.py holds this file against the built module: the same functions,
with the parameters the module's own signatures give.
"""

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias, overload

from typing_extensions import Buffer

_Frame: TypeAlias = Any  # forensics.io.frames.Frame
_Record: TypeAlias = Any  # forensics.codec.batch.Record
_Header: TypeAlias = Any  # forensics.codec.batch.Header
_LegacyRecord: TypeAlias = Any  # forensics.codec.legacy.LegacyRecord
# forensics.codec.batch.RecordTuple: (offset, timestamp, key, value, headers)
_RecordTuple: TypeAlias = tuple[int, int, bytes | None, bytes | None, tuple[_Header, ...]]
_Tuple: TypeAlias = tuple[Any, ...]  # a BatchHeader, Frame or LegacyRecord given back

# -- registration: the types and Python functions the C side makes and hands back to --------------

def init_frames(frame_type: type[_Tuple], header_type: type[_Tuple], /) -> None: ...
def init_records(record_type: type[_Tuple], header_type: type[_Tuple], /) -> None: ...
def init_legacy(legacy_type: type[_Tuple], /) -> None: ...
def init_fallback(name: Literal["record_tuples", "deep_tuples"], function: Callable[..., Any], /) -> None: ...
def register_codecs(snappy_uncompress: Callable[[Buffer], bytes], lz4_block_decompress: Callable[..., bytes],
                    zstd_decompressor: Callable[..., Any], limit: int, /) -> None: ...

# -- checksums ----------------------------------------------------------------------------------------

def crc32c(data: Buffer, /) -> int: ...
def crc32(data: Buffer, /) -> int: ...
def xxh32(data: Buffer, /) -> int: ...
def hardware_crc() -> bool: ...

# -- BatchHeader's attribute properties ---------------------------------------------------------------

class _AttributeBits:
    """What attribute_bits() makes: a read-only descriptor, item ``index`` & ``mask`` of the tuple
    it is read on (a bool when ``as_bool``)."""

    @overload
    def __get__(self, obj: None, owner: type, /) -> _AttributeBits: ...
    @overload
    def __get__(self, obj: _Tuple, owner: type | None = None, /) -> int: ...

def attribute_bits(index: int, mask: int, as_bool: bool, /) -> _AttributeBits: ...

# -- framing a segment: (items, pos, next_offset, valid_bytes) -----------------------------------------

def scan(buf: Buffer, pos: int, end: int, verify_crc: bool, base_offset: int | None, next_offset: int | None,
         with_headers: bool, limit: int, /) -> tuple[list[_Frame], int, int | None, int]: ...
def scan_tuples(buf: Buffer, pos: int, end: int, verify_crc: bool, base_offset: int | None, next_offset: int | None,
                limit: int, /) -> tuple[list[_RecordTuple], int, int | None, int]: ...

# (pos, next_offset, valid_bytes, frames, first_base, next_after, max_ts, records, transactional,
#  control, first, last, codecs, runs): see csrc/fold.c
def fold(buf: Buffer, pos: int, end: int, verify_crc: bool, base_offset: int | None, next_offset: int | None,
         cuts: Sequence[int], txn_open: set[int] | None, stats: bool, /
         ) -> tuple[int, int | None, int, int, int, int, int, int, int, int, int, int, int, list[list[int]]]: ...

# -- v2 records: None when one breaks a rule (the Python decoder then says which) -----------------------

# records(..., plain=True), legacy_inner(..., True) and legacy_records(..., True) give _RecordTuple items
def records(data: Buffer, p: int, end: int, header: _Tuple, plain: bool = False, decompressed: bool = False,
            position_base: int = 0, /) -> list[_Record] | None: ...
def record_block(buf: Buffer, pos: int, header: _Tuple, /) -> bytes | None: ...
def record_tuples(buf: Buffer, pos: int, header: _Tuple, /) -> Sequence[_RecordTuple]: ...

# -- legacy messages (magic 0 and 1) ---------------------------------------------------------------------

def legacy_entry(buf: Buffer, pos: int, end: int, /) -> _LegacyRecord | None: ...
def legacy_inner(data: Buffer, wrapper: _Tuple, plain: bool = False, /) -> list[_LegacyRecord] | None: ...
def legacy_records(buf: Buffer, pos: int, plain: bool = False, /) -> Sequence[_LegacyRecord] | None: ...
def deep_tuples(buf: Buffer, pos: int, /) -> Sequence[_RecordTuple]: ...

# -- compressed payloads ----------------------------------------------------------------------------------

def unframe(codec: int, data: Buffer, magic: int, limit: int, /) -> bytes | None: ...
def codecs() -> tuple[int, ...]: ...

# -- the dump's text: None (or python=True) where Python must write it -----------------------------------

def batch_line(header: _Tuple, position: int, valid: bool, /) -> str | None: ...
def record_lines(data: Buffer, header: _Tuple, ts_label: str, print_contents: bool, skip_metadata: bool, /
                 ) -> str | None: ...
def legacy_lines(records: Sequence[_Tuple], ts_label: str, print_contents: bool, skip_metadata: bool, /
                 ) -> str | None: ...
# -> (text, next, python): the lines of frames[start:next]; python: frames[next] is Python's to write
def dump_batches(buf: Buffer, frames: Sequence[_Tuple], start: int, print_contents: bool, skip_metadata: bool,
                 decoder: str | None = None, /) -> tuple[str, int, bool]: ...
