"""Compressed batch payloads: gzip, snappy, lz4 and zstd.

Mirrors the readers Kafka uses (``clients/src/main/java/org/apache/kafka/common/compress/``):

* ``GzipCompression.java`` -> JDK ``GZIPInputStream``: concatenated members are read; bytes after a
  complete member that do not start with the gzip magic ``1f 8b`` are ignored, as the JDK does.
* ``SnappyCompression.java`` -> xerial ``SnappyInputStream``: 16-byte ``\\x82SNAPPY\\0`` header and
  int32-length-prefixed raw blocks, concatenated streams; an input shorter than 16 bytes or without the
  magic is one raw snappy block. Like snappy-java, 1-3 trailing bytes where a chunk length would be and
  a concatenated header with a wrong magic tail end the stream silently.
* ``Lz4Compression.java`` / ``Lz4BlockInputStream.java`` / ``Lz4BlockOutputStream.java``: our own
  LZ4 frame parser. Version 1, independent blocks, zero reserved bits, BD 4..7 are required; the HC
  byte is skipped for magic 0 (KAFKA-3160: old Kafka hashed magic+FLG+BD) and checked for magic 1/2;
  block checksums are checked, the content checksum and content size are not (Kafka does not either);
  bytes after the end mark are ignored.
* ``ZstdCompression.java`` -> zstd-jni ``ZstdInputStreamNoFinalizer``: frames are read back to back;
  a truncated frame is an error, an empty input is an empty plaintext.

Every failure raises :class:`CompressionError` (never a library exception); positions inside the
compressed payload are given in the message, the caller fills ``position`` with the file position.
"""

from __future__ import annotations

import struct
import threading
import zlib

import lz4.block
import snappy
import zstandard

from forensics.errors import CompressionError, UnsupportedCodecError
from forensics.speedups import native

Buffer = bytes | bytearray | memoryview

CODEC_NAMES: dict[int, str] = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


def codec_name(codec: int) -> str:
    """Kafka's lowercase codec name (``CompressionType.name``); ``invalid(N)`` for undefined ids."""
    return CODEC_NAMES.get(codec, f"invalid({codec})")
ZSTD_MIN_MAGIC = 2  # zstd is only valid inside v2 batches (KIP-110)

_CHUNK = 64 * 1024
_LIB_ERRORS = (zlib.error, snappy.UncompressError, lz4.block.LZ4BlockError, zstandard.ZstdError, ValueError)

_GZIP_MAGIC = b"\x1f\x8b"
_XERIAL_MAGIC = b"\x82SNAPPY\x00"  # SnappyCodec.MAGIC_HEADER
_XERIAL_HEADER_SIZE = 16  # magic + int32 version + int32 min compatible version
_XERIAL_MAGIC_HEAD = struct.unpack(">i", _XERIAL_MAGIC[:4])[0]  # 0x82534E41 as a signed int32
_INT32_BE = struct.Struct(">i")
_UINT32_LE = struct.Struct("<I")
_UINT16_LE = struct.Struct("<H")

_LZ4_MAGIC = 0x184D2204  # Lz4BlockOutputStream.MAGIC, little-endian on disk
_LZ4_UNCOMPRESSED = 0x80000000  # LZ4_FRAME_INCOMPRESSIBLE_MASK
_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE = 0x184D2A50  # low 4 bits free

_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: Buffer, seed: int = 0) -> int:
    """XXH32 (the LZ4 frame checksum), pure Python."""
    n, pos = len(data), 0
    if n >= 16:
        v1, v2, v3, v4 = (seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32
        stripes = n // 16
        words = struct.unpack_from(f"<{stripes * 4}I", data)
        for i in range(0, stripes * 4, 4):
            v1 = _rotl((v1 + words[i] * _P2) & _M32, 13) * _P1 & _M32
            v2 = _rotl((v2 + words[i + 1] * _P2) & _M32, 13) * _P1 & _M32
            v3 = _rotl((v3 + words[i + 2] * _P2) & _M32, 13) * _P1 & _M32
            v4 = _rotl((v4 + words[i + 3] * _P2) & _M32, 13) * _P1 & _M32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M32
        pos = stripes * 16
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while pos + 4 <= n:
        h = _rotl((h + _UINT32_LE.unpack_from(data, pos)[0] * _P3) & _M32, 17) * _P4 & _M32
        pos += 4
    while pos < n:
        h = _rotl((h + data[pos] * _P5) & _M32, 11) * _P1 & _M32
        pos += 1
    h = (h ^ (h >> 15)) * _P2 & _M32
    h = (h ^ (h >> 13)) * _P3 & _M32
    return h ^ (h >> 16)


class _Sink:
    """Collects plaintext pieces and enforces ``max_output`` as they arrive."""

    def __init__(self, codec: str, limit: int) -> None:
        self.codec, self.limit, self.total = codec, limit, 0
        self.pieces: list[bytes] = []

    @property
    def room(self) -> int:
        return self.limit - self.total

    def check(self, size: int) -> None:
        if self.total + size > self.limit:
            raise CompressionError(f"{self.codec}: decompressed size exceeds max_output={self.limit} bytes")

    def add(self, piece: bytes) -> None:
        self.check(len(piece))
        self.total += len(piece)
        self.pieces.append(piece)

    def result(self) -> bytes:
        return self.pieces[0] if len(self.pieces) == 1 else b"".join(self.pieces)


def _need(codec: str, mv: memoryview, pos: int, size: int, what: str) -> None:
    if pos + size > len(mv):
        raise CompressionError(f"{codec}: stream truncated in {what} at byte {pos} of {len(mv)}")


def _gzip(mv: memoryview, sink: _Sink) -> None:
    n, pos = len(mv), 0
    if n == 0:
        raise CompressionError("gzip: empty stream")
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while not d.eof:
            chunk: Buffer = d.unconsumed_tail
            if not chunk and pos < n:
                chunk = mv[pos : pos + _CHUNK]
                pos += len(chunk)
            try:
                piece = d.decompress(chunk, sink.room + 1)
            except _LIB_ERRORS as exc:
                raise CompressionError(f"gzip: corrupt stream before byte {pos}: {exc}") from exc
            if not piece and not chunk:
                raise CompressionError(f"gzip: stream truncated at byte {n}")
            sink.add(piece)
        pos -= len(d.unused_data)  # start of whatever follows this member
        if pos >= n or mv[pos : pos + 2] != _GZIP_MAGIC:
            return  # GZIPInputStream ignores trailing bytes that are not another member


def _snappy_block(block: memoryview, sink: _Sink, where: int) -> None:
    declared, shift, i = 0, 0, 0
    while True:  # the raw block starts with its uncompressed length as a uvarint
        if i >= len(block) or i == 5:
            raise CompressionError(f"snappy: bad block length preamble at byte {where}")
        declared |= (block[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not block[i - 1] & 0x80:
            break
    sink.check(declared)
    try:
        sink.add(snappy.uncompress(block))
    except _LIB_ERRORS as exc:
        raise CompressionError(f"snappy: corrupt block at byte {where}") from exc


def _snappy(mv: memoryview, sink: _Sink) -> None:
    n = len(mv)
    if n == 0:
        raise CompressionError("snappy: empty stream")
    if n < _XERIAL_HEADER_SIZE or mv[:8] != _XERIAL_MAGIC:
        _snappy_block(mv, sink, 0)  # not xerial framed: one raw block (snappy-java readFully)
        return
    pos = _XERIAL_HEADER_SIZE
    while n - pos >= 4:  # SnappyInputStream.hasNextChunk: fewer than 4 bytes end the stream
        length = _INT32_BE.unpack_from(mv, pos)[0]
        pos += 4
        if length == _XERIAL_MAGIC_HEAD:  # concatenated stream: rest of a 16-byte header
            _need("snappy", mv, pos, _XERIAL_HEADER_SIZE - 4, "concatenated stream header")
            if mv[pos : pos + 4] != _XERIAL_MAGIC[4:]:
                return  # snappy-java ends the stream on an invalid concatenated header
            if _INT32_BE.unpack_from(mv, pos + 4)[0] < 1:
                raise CompressionError(f"snappy: incompatible xerial stream version at byte {pos + 4}")
            pos += _XERIAL_HEADER_SIZE - 4
            continue
        if length < 0:
            raise CompressionError(f"snappy: negative chunk length {length} at byte {pos - 4}")
        _need("snappy", mv, pos, length, "chunk")
        _snappy_block(mv[pos : pos + length], sink, pos)
        pos += length


def _lz4(mv: memoryview, sink: _Sink, magic: int) -> None:
    _need("lz4", mv, 0, 7, "frame header")
    if _UINT32_LE.unpack_from(mv, 0)[0] != _LZ4_MAGIC:
        raise CompressionError("lz4: not an LZ4 frame (bad magic)")
    flg, bd = mv[4], mv[5]
    if flg & 0x03 or (flg >> 6) != 1 or not flg & 0x20:
        raise CompressionError(f"lz4: unsupported FLG byte 0x{flg:02x} (need version 1, independent blocks)")
    if bd & 0x8F or not 4 <= (bd >> 4) & 7 <= 7:
        raise CompressionError(f"lz4: invalid BD byte 0x{bd:02x}")
    max_block = 1 << (2 * ((bd >> 4) & 7) + 8)
    pos = 14 if flg & 0x08 else 6  # optional 8-byte content size, not checked (as Kafka)
    _need("lz4", mv, pos, 1, "frame header")
    if magic != 0:  # magic 0: Kafka skips the HC byte (KAFKA-3160)
        hc = mv[pos]
        if hc != (xxh32(mv[4:pos]) >> 8) & 0xFF:
            broken = hc == (xxh32(mv[0:pos]) >> 8) & 0xFF
            hint = " (it is the pre-0.10 broken checksum, valid only for magic 0)" if broken else ""
            raise CompressionError(f"lz4: frame descriptor checksum mismatch for magic {magic}{hint}")
    pos += 1
    while True:
        _need("lz4", mv, pos, 4, "block size")
        size = _UINT32_LE.unpack_from(mv, pos)[0]
        pos += 4
        stored, size = bool(size & _LZ4_UNCOMPRESSED), size & ~_LZ4_UNCOMPRESSED
        if size == 0:
            if flg & 0x04:  # content checksum: read, not verified (Lz4BlockInputStream TODO)
                _need("lz4", mv, pos, 4, "content checksum")
            return
        if size > max_block:
            raise CompressionError(f"lz4: block size {size} at byte {pos - 4} exceeds maximum {max_block}")
        _need("lz4", mv, pos, size + (4 if flg & 0x10 else 0), "block")
        block = mv[pos : pos + size]
        if flg & 0x10 and xxh32(block) != _UINT32_LE.unpack_from(mv, pos + size)[0]:
            raise CompressionError(f"lz4: block checksum mismatch at byte {pos}")
        if stored:
            sink.add(bytes(block))
        else:
            try:
                sink.add(lz4.block.decompress(block, uncompressed_size=max_block))
            except _LIB_ERRORS as exc:
                raise CompressionError(f"lz4: corrupt block at byte {pos}") from exc
        pos += size + (4 if flg & 0x10 else 0)


def _zstd_check_frames(mv: memoryview) -> None:
    """Walk frame and block headers: the zstandard stream reader treats truncation as a clean end."""
    pos, n = 0, len(mv)
    while pos < n:
        _need("zstd", mv, pos, 5, "frame header")
        frame_magic = _UINT32_LE.unpack_from(mv, pos)[0]
        if frame_magic & 0xFFFFFFF0 == _ZSTD_SKIPPABLE:
            _need("zstd", mv, pos, 8, "skippable frame")
            pos += 8 + _UINT32_LE.unpack_from(mv, pos + 4)[0]
            continue
        if frame_magic != _ZSTD_MAGIC:
            raise CompressionError(f"zstd: unknown frame magic at byte {pos}")
        fhd = mv[pos + 4]
        single = (fhd >> 5) & 1
        pos += 5 + (1 - single) + (0, 1, 2, 4)[fhd & 3] + (single, 2, 4, 8)[fhd >> 6]
        last = 0
        while not last:
            _need("zstd", mv, pos, 3, "block header")
            header = _UINT16_LE.unpack_from(mv, pos)[0] | mv[pos + 2] << 16
            last, block_type, size = header & 1, (header >> 1) & 3, header >> 3
            pos += 3 + (1 if block_type == 1 else size)
        pos += 4 * ((fhd >> 2) & 1)  # content checksum
    if pos > n:
        raise CompressionError(f"zstd: stream truncated, last frame needs {pos - n} more bytes")


_local = threading.local()


def _zstd_decompressor() -> zstandard.ZstdDecompressor:
    """One decompressor per thread, reused: making one allocates a decompression context (most of
    the cost of a small batch); ``stream_reader`` starts each stream afresh on it."""
    d = getattr(_local, "zstd", None)
    if d is None:
        d = _local.zstd = zstandard.ZstdDecompressor()
    return d


def _zstd(mv: memoryview, sink: _Sink) -> None:
    _zstd_check_frames(mv)
    try:
        reader = _zstd_decompressor().stream_reader(mv, read_across_frames=True)
        while True:
            piece = reader.read(min(_CHUNK, sink.room + 1))
            if not piece:
                return
            sink.add(piece)
    except _LIB_ERRORS as exc:
        raise CompressionError(f"zstd: corrupt stream: {exc}") from exc


MAX_OUTPUT = 256 * 1024 * 1024  # plaintext limit of one payload (decompress's max_output)

# The codecs the C accelerator decompresses itself (``native.unframe``; inside ``native.records``
# for batch payloads, with MAX_OUTPUT): snappy and LZ4 framing (raw snappy blocks decoded in C,
# LZ4 blocks through lz4.block.decompress with ``uncompressed_size=`` the frame's maximum), zstd
# (frames walked in C, read by a per-thread zstandard.ZstdDecompressor), and gzip where it was
# built with zlib. Any damage: the parsers above run and raise.
NATIVE_CODECS: tuple = ()
if native is not None:
    native.register_codecs(snappy.uncompress, lz4.block.decompress, zstandard.ZstdDecompressor, MAX_OUTPUT)
    NATIVE_CODECS = native.codecs()


def _drop_tracebacks(exc: BaseException) -> None:
    """Inner frames (ours and the libraries') hold slices of the input: drop them so a stored
    error does not keep an mmap exported."""
    todo, seen = [exc], set()
    while todo:
        e = todo.pop()
        if id(e) not in seen:
            seen.add(id(e))
            e.__traceback__ = None
            todo.extend(x for x in (e.__cause__, e.__context__) if x is not None)


def decompress(codec: int, data: Buffer, *, magic: int, max_output: int = MAX_OUTPUT) -> bytes:
    """Return the plaintext of a batch payload compressed with ``codec`` inside a ``magic`` batch.

    ``data`` may be a memoryview slice of an mmap; it is read in place. Raises
    :class:`UnsupportedCodecError` for codec ids other than 0-4 and for zstd below magic 2,
    :class:`CompressionError` for any undecodable input or a plaintext longer than ``max_output``.
    """
    if max_output < 0:
        raise ValueError("max_output must not be negative")
    name = CODEC_NAMES.get(codec)
    if name is None:
        raise UnsupportedCodecError(f"unknown compression codec id {codec}")
    if codec == 4 and magic < ZSTD_MIN_MAGIC:
        raise UnsupportedCodecError(f"zstd compression is not valid in a magic {magic} batch")
    mv = memoryview(data).cast("B")
    if codec == 0:
        if len(mv) > max_output:
            raise CompressionError(f"none: payload size exceeds max_output={max_output} bytes")
        return bytes(mv)
    sink = _Sink(name, max_output)
    try:
        if native is not None and codec in NATIVE_CODECS:  # decompressed by the C accelerator, same rules
            out = native.unframe(codec, mv, magic, max_output)
            if out is not None:
                return out  # else the parser below runs and raises the exact error
        if codec == 1:
            _gzip(mv, sink)
        elif codec == 2:
            _snappy(mv, sink)
        elif codec == 3:
            _lz4(mv, sink, magic)
        else:
            _zstd(mv, sink)
    except CompressionError as exc:
        _drop_tracebacks(exc)
        raise
    finally:
        mv.release()
    return sink.result()
