"""forensics.codec.compression against independent encoders (kafka-python, python-lz4 frame,
zstandard, zlib/gzip) and hand-made byte vectors; corruption must only raise our own errors."""

from __future__ import annotations

import gzip
import io
import mmap
import random
import struct
import tracemalloc
import zlib
from collections.abc import Callable

import lz4.frame
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka import codec as kc

from forensics.codec.compression import CODEC_NAMES, decompress, xxh32
from forensics.errors import CompressionError, UnsupportedCodecError
from tests.kafka_python_support import XXHashModule
from tests.tiers import examples

_RND = random.Random(20240611)
_RANDOM = _RND.randbytes(100_000)
PAYLOADS: dict[str, bytes] = {
    "empty": b"",
    "one-byte": b"\x00",
    "text": b"kafka-forensics: hello, broker disk",
    "200k-random+repetitive": _RANDOM + b"transactional.id=forensics;" * 3704,
}
SMALL = b"abcdefgh" * 20 + _RANDOM[:120]  # ~280 bytes: compressible head, random tail
KAFKA_LZ4_HEADER = bytes.fromhex("04224d18604082")  # FLG 0x60, BD 0x40, correct HC 0x82


def xxh32_oracle(data: bytes) -> int:
    """Independent XXH32: the content checksum liblz4 appends to a frame."""
    frame = lz4.frame.compress(data, content_checksum=True, block_linked=False)
    return int.from_bytes(frame[-4:], "little")


@pytest.fixture
def old_kafka_lz4(monkeypatch: pytest.MonkeyPatch) -> Callable[[bytes], bytes]:
    monkeypatch.setattr(kc, "xxhash", XXHashModule)
    return kc.lz4_encode_old_kafka


def lz4_frame(data: bytes, **kw: object) -> bytes:
    return lz4.frame.compress(data, block_linked=False, **kw)


def zstd_streamed(data: bytes, *, checksum: bool = False) -> bytes:
    """zstd-jni style: a streaming compressor, no content size in the frame header."""
    buf = io.BytesIO()
    with zstandard.ZstdCompressor(write_checksum=checksum).stream_writer(buf, closefd=False) as w:
        for i in range(0, len(data), 7000):
            w.write(data[i : i + 7000])
    return buf.getvalue()


# (name, codec, magic, encoder) with independent encoders; lz4 magic 0 needs the fixture.
ENCODERS: list[tuple[str, int, int, Callable[[bytes], bytes]]] = [
    ("gzip", 1, 2, kc.gzip_encode),
    ("gzip-v0", 1, 0, kc.gzip_encode),
    ("snappy-xerial", 2, 2, kc.snappy_encode),
    ("snappy-xerial-1k-chunks", 2, 1, lambda d: kc.snappy_encode(d, xerial_blocksize=1024)),
    ("snappy-raw", 2, 2, lambda d: kc.snappy_encode(d, xerial_compatible=False)),
    ("lz4-v1", 3, 1, kc.lz4_encode),
    ("lz4-v2", 3, 2, kc.lz4_encode),
    ("zstd", 4, 2, kc.zstd_encode),
    ("zstd-streamed", 4, 2, zstd_streamed),
]


def as_mmap_view(data: bytes, tmp_path) -> tuple[memoryview, Callable[[], None]]:
    path = tmp_path / "segment.bin"
    path.write_bytes(b"HEAD" + data + b"TAIL")
    f = open(path, "rb")
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(m)[4 : 4 + len(data)]

    def close() -> None:
        view.release()
        m.close()
        f.close()

    return view, close


# --------------------------------------------------------------------------------------- API


def test_codec_names() -> None:
    assert CODEC_NAMES == {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_none_returns_bytes(magic: int) -> None:
    out = decompress(0, memoryview(b"xxabcxx")[2:5], magic=magic)
    assert out == b"abc" and type(out) is bytes


@pytest.mark.parametrize("magic", [0, 1])
def test_zstd_rejected_below_magic_2(magic: int) -> None:
    with pytest.raises(UnsupportedCodecError):
        decompress(4, kc.zstd_encode(b"valid zstd"), magic=magic)


@pytest.mark.parametrize("codec", [5, 6, 7, 8, -1, 255])
@pytest.mark.parametrize("magic", [0, 1, 2])
def test_unknown_codec_ids(codec: int, magic: int) -> None:
    with pytest.raises(UnsupportedCodecError):
        decompress(codec, kc.gzip_encode(b"x"), magic=magic)


# ------------------------------------------------------------------------------ round trips


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
@pytest.mark.parametrize("name,codec,magic,encode", ENCODERS, ids=[e[0] for e in ENCODERS])
def test_round_trip(name: str, codec: int, magic: int, encode: Callable[[bytes], bytes], payload: bytes) -> None:
    out = decompress(codec, encode(payload), magic=magic)
    assert type(out) is bytes and out == payload


@pytest.mark.parametrize("name,codec,magic,encode", ENCODERS, ids=[e[0] for e in ENCODERS])
def test_round_trip_from_mmap_slice(name, codec, magic, encode, tmp_path) -> None:
    payload = PAYLOADS["200k-random+repetitive"]
    view, close = as_mmap_view(encode(payload), tmp_path)
    try:
        assert decompress(codec, view, magic=magic) == payload
    finally:
        close()


# -------------------------------------------------------------------------------------- gzip


def test_gzip_concatenated_members() -> None:
    a, b = PAYLOADS["200k-random+repetitive"], b"second member"
    data = kc.gzip_encode(a) + gzip.compress(b"") + kc.gzip_encode(b)
    assert decompress(1, data, magic=1) == a + b


def test_gzip_header_fields_and_zlib_encoder() -> None:
    buf = io.BytesIO()
    with gzip.GzipFile(filename="records.bin", mode="wb", fileobj=buf, mtime=1) as g:
        g.write(b"named member")
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    data = buf.getvalue() + z.compress(b"zlib member") + z.flush()
    assert decompress(1, data, magic=2) == b"named memberzlib member"


def test_gzip_trailing_non_member_bytes_are_ignored_like_gzipinputstream() -> None:
    assert decompress(1, kc.gzip_encode(b"abc") + b"\x00\x00junk", magic=2) == b"abc"


def test_gzip_trailing_truncated_member_is_an_error() -> None:
    second = kc.gzip_encode(b"second")
    with pytest.raises(CompressionError):
        decompress(1, kc.gzip_encode(b"abc") + second[:-3], magic=2)


def test_gzip_crc_mismatch() -> None:
    data = bytearray(kc.gzip_encode(b"payload" * 10))
    data[-8] ^= 0xFF  # CRC32 in the trailer
    with pytest.raises(CompressionError):
        decompress(1, bytes(data), magic=2)


# ------------------------------------------------------------------------------------ snappy


def test_snappy_concatenated_xerial_streams() -> None:
    a, b = PAYLOADS["200k-random+repetitive"], b"next stream"
    data = kc.snappy_encode(a) + kc.snappy_encode(b"") + kc.snappy_encode(b)
    assert decompress(2, data, magic=2) == a + b


def test_snappy_hand_made_raw_blocks() -> None:
    assert decompress(2, b"\x05\x10hello", magic=0) == b"hello"  # one literal
    assert decompress(2, b"\x09\x08abc\x09\x03", magic=1) == b"abcabcabc"  # literal + copy
    framed = kc.snappy_encode(b"")[:16] + struct.pack(">i", 7) + b"\x05\x10hello"
    assert decompress(2, framed, magic=2) == b"hello"


def test_snappy_xerial_header_only_is_empty_and_version_not_checked() -> None:
    header = kc.snappy_encode(b"")
    assert len(header) == 16 and decompress(2, header, magic=2) == b""
    little_endian_versions = header[:8] + struct.pack("<ii", 1, 1) + struct.pack(">i", 7) + b"\x05\x10hello"
    assert decompress(2, little_endian_versions, magic=2) == b"hello"


def test_snappy_short_magic_prefix_is_raw_and_fails() -> None:
    with pytest.raises(CompressionError):
        decompress(2, b"\x82SNAPPY\x00\x00\x00", magic=2)


def test_snappy_like_snappy_java_at_chunk_boundaries() -> None:
    data = kc.snappy_encode(b"abc" * 100)
    assert decompress(2, data + b"\x00\x00\x00", magic=2) == b"abc" * 100  # < 4 bytes: end
    bad_concat = data + b"\x82SNAPxxxx" + b"\x00" * 8  # concatenated header, wrong magic tail: end
    assert decompress(2, bad_concat, magic=2) == b"abc" * 100


@pytest.mark.parametrize(
    "tail",
    [struct.pack(">i", -5), struct.pack(">i", 100) + b"short", struct.pack(">i", 0), b"\x82SNA" + b"PPY\x00"],
    ids=["negative-length", "chunk-past-end", "empty-chunk", "truncated-concat-header"],
)
def test_snappy_bad_chunks(tail: bytes) -> None:
    with pytest.raises(CompressionError):
        decompress(2, kc.snappy_encode(b"abc") + tail, magic=2)


def test_snappy_empty_input_is_an_error() -> None:
    with pytest.raises(CompressionError):
        decompress(2, b"", magic=2)


# --------------------------------------------------------------------------------------- lz4


def test_xxh32_matches_liblz4() -> None:
    assert xxh32(b"") == 0x02CC5D05
    for n in list(range(0, 40)) + [1000, 65536 + 3]:
        data = _RANDOM[:n]
        assert xxh32(data) == xxh32_oracle(data), n
        assert xxh32(memoryview(data)) == xxh32_oracle(data)


@given(st.binary(max_size=300))
def test_xxh32_property(data: bytes) -> None:
    assert xxh32(data) == xxh32_oracle(data)


def test_lz4_kafka_default_header_constant() -> None:
    assert lz4_frame(b"", store_size=False)[:7] == KAFKA_LZ4_HEADER


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize(
    "flags",
    [
        {},
        {"store_size": True},
        {"block_checksum": True},
        {"content_checksum": True, "block_checksum": True, "store_size": True},
        {"block_size": lz4.frame.BLOCKSIZE_MAX256KB, "content_checksum": True},
        {"block_size": lz4.frame.BLOCKSIZE_MAX1MB},
        {"block_size": lz4.frame.BLOCKSIZE_MAX4MB, "block_checksum": True},
    ],
    ids=["plain", "size", "block-xxh", "all-checks", "256k", "1m", "4m-block-xxh"],
)
def test_lz4_frame_options(flags: dict[str, object], magic: int) -> None:
    for payload in PAYLOADS.values():
        assert decompress(3, lz4_frame(payload, **flags), magic=magic) == payload


def test_lz4_uncompressed_blocks() -> None:
    frame = lz4_frame(_RANDOM[:5000], store_size=False)  # incompressible: stored block
    assert struct.unpack_from("<I", frame, 7)[0] & 0x80000000
    assert decompress(3, frame, magic=2) == _RANDOM[:5000]
    hand_made = KAFKA_LZ4_HEADER + struct.pack("<I", 0x80000005) + b"hello" + b"\x00" * 4
    assert decompress(3, hand_made, magic=1) == b"hello"


def test_lz4_magic0_broken_header_checksum(old_kafka_lz4) -> None:
    for payload in PAYLOADS.values():
        frame = old_kafka_lz4(payload)
        assert frame[6] != lz4_frame(b"", store_size=False)[6] or frame[4] & 0x08  # really broken
        assert decompress(3, frame, magic=0) == payload
        for magic in (1, 2):
            with pytest.raises(CompressionError, match="broken checksum"):
                decompress(3, frame, magic=magic)


def test_lz4_magic0_ignores_header_checksum_entirely() -> None:
    frame = bytearray(lz4_frame(b"some records", store_size=False))
    frame[6] ^= 0x5A
    assert decompress(3, bytes(frame), magic=0) == b"some records"
    with pytest.raises(CompressionError, match="descriptor checksum"):
        decompress(3, bytes(frame), magic=1)


def test_lz4_dependent_blocks_rejected() -> None:
    frame = lz4.frame.compress(b"x" * 100_000, block_linked=True)  # > 1 block: FLG bit 5 clear
    assert not frame[4] & 0x20
    with pytest.raises(CompressionError, match="independent"):
        decompress(3, frame, magic=2)


@pytest.mark.parametrize(
    "flg_bd",
    [b"\x61\x40", b"\x20\x40", b"\xa0\x40", b"\x60\x30", b"\x60\x41", b"\x60\xc0"],
    ids=["reserved-flg", "version-0", "version-2", "bd-block-size-3", "reserved-bd-low", "reserved-bd-high"],
)
def test_lz4_invalid_descriptor(flg_bd: bytes) -> None:
    hc = bytes([(xxh32_oracle(flg_bd) >> 8) & 0xFF])
    frame = b"\x04\x22\x4d\x18" + flg_bd + hc + struct.pack("<I", 0x80000001) + b"x" + b"\x00" * 4
    for magic in (0, 2):
        with pytest.raises(CompressionError):
            decompress(3, frame, magic=magic)


def test_lz4_block_checksum_mismatch() -> None:
    frame = bytearray(lz4_frame(b"hello hello hello", block_checksum=True, store_size=False))
    frame[-5] ^= 0x01  # last byte of the block checksum, before the end mark
    with pytest.raises(CompressionError, match="block checksum"):
        decompress(3, bytes(frame), magic=2)


def test_lz4_content_checksum_not_verified_like_kafka() -> None:
    frame = bytearray(lz4_frame(b"hello", content_checksum=True))
    frame[-1] ^= 0xFF
    assert decompress(3, bytes(frame), magic=2) == b"hello"
    with pytest.raises(CompressionError):  # but it must be present
        decompress(3, bytes(frame[:-2]), magic=2)


def test_lz4_bytes_after_end_mark_ignored_like_kafka() -> None:
    assert decompress(3, kc.lz4_encode(b"hello") + b"trailing", magic=1) == b"hello"


def test_lz4_block_larger_than_maximum() -> None:
    frame = KAFKA_LZ4_HEADER + struct.pack("<I", 0x80010001) + b"x" * 65537 + b"\x00" * 4
    with pytest.raises(CompressionError, match="exceeds maximum"):
        decompress(3, frame, magic=2)


# -------------------------------------------------------------------------------------- zstd


def test_zstd_multi_frame_and_no_content_size() -> None:
    a, b = PAYLOADS["200k-random+repetitive"], b"second frame"
    s = zstd_streamed(a)
    assert zstandard.get_frame_parameters(s).content_size == zstandard.CONTENTSIZE_UNKNOWN
    obj = zstandard.ZstdCompressor(level=3).compressobj()
    o = obj.compress(b) + obj.flush()
    skippable = struct.pack("<II", 0x184D2A5E, 4) + b"meta"
    assert decompress(4, s + skippable + o + kc.zstd_encode(b""), magic=2) == a + b


def test_zstd_empty_input_is_empty_like_zstd_jni() -> None:
    assert decompress(4, b"", magic=2) == b""


def test_zstd_checksum_mismatch_and_trailing_garbage() -> None:
    data = bytearray(zstd_streamed(b"checksummed " * 50, checksum=True))
    data[-1] ^= 0x01
    with pytest.raises(CompressionError):
        decompress(4, bytes(data), magic=2)
    with pytest.raises(CompressionError):
        decompress(4, kc.zstd_encode(b"x") + b"garbage!", magic=2)


# ------------------------------------------------------------------------------- corruption


def _small_cases() -> list[tuple[str, int, int, bytes]]:
    shim = XXHashModule
    saved, kc.xxhash = kc.xxhash, shim
    try:
        old = kc.lz4_encode_old_kafka(SMALL)
    finally:
        kc.xxhash = saved
    return [
        ("gzip", 1, 1, kc.gzip_encode(SMALL)),
        ("snappy-xerial", 2, 2, kc.snappy_encode(SMALL, xerial_blocksize=100)),
        ("snappy-raw", 2, 0, kc.snappy_encode(SMALL, xerial_compatible=False)),
        ("lz4-v0-broken-hc", 3, 0, old),
        ("lz4-v2-all-checks", 3, 2, lz4_frame(SMALL, content_checksum=True, block_checksum=True, store_size=True)),
        ("lz4-v1", 3, 1, kc.lz4_encode(SMALL)),
        ("zstd-checksum", 4, 2, zstd_streamed(SMALL, checksum=True)),
        ("zstd", 4, 2, kc.zstd_encode(SMALL)),
    ]


SMALL_CASES = _small_cases()


@pytest.mark.parametrize("name,codec,magic,data", SMALL_CASES, ids=[c[0] for c in SMALL_CASES])
def test_every_truncation(name: str, codec: int, magic: int, data: bytes) -> None:
    assert decompress(codec, data, magic=magic) == SMALL
    for cut in range(len(data)):
        try:
            out = decompress(codec, data[:cut], magic=magic)
        except CompressionError:
            continue
        # Only xerial snappy can end cleanly at a chunk boundary (as snappy-java does) and an
        # empty zstd input is an empty plaintext (as zstd-jni); everything else must fail.
        assert name == "snappy-xerial" or (codec == 4 and cut == 0), (name, cut)
        assert SMALL.startswith(out) and len(out) < len(SMALL), (name, cut)


def _checked_region(name: str, data: bytes) -> range:
    """Byte range where any bit flip must be detected (checksummed or structural bytes)."""
    if name == "gzip":
        return range(10, len(data))  # deflate body + CRC32 + ISIZE
    if name == "lz4-v2-all-checks":
        return range(15, len(data) - 8)  # the one block (with XXH32) up to the end mark
    if name == "zstd-checksum":
        return range(6, len(data))  # blocks + XXH64 content checksum
    return range(0)


@pytest.mark.parametrize("name,codec,magic,data", SMALL_CASES, ids=[c[0] for c in SMALL_CASES])
def test_every_bit_flip(name: str, codec: int, magic: int, data: bytes) -> None:
    must_fail = _checked_region(name, data)
    for i in range(len(data)):
        for bit in range(8):
            flipped = bytearray(data)
            flipped[i] ^= 1 << bit
            try:
                out = decompress(codec, bytes(flipped), magic=magic)
            except CompressionError:
                continue
            if name == "lz4-v2-all-checks" and (i, bit) == (18, 7):
                continue  # the "stored" flag of the block size is outside the block checksum
            assert i not in must_fail or out == SMALL, (name, i, bit)


PREFIXES = [
    b"",
    b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff",
    kc.snappy_encode(b""),
    KAFKA_LZ4_HEADER,
    lz4_frame(b"", store_size=True, content_checksum=True, block_checksum=True)[:15],
    b"\x28\xb5\x2f\xfd",
] + [c[3][: len(c[3]) // 2] for c in SMALL_CASES]


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    codec=st.integers(min_value=-1, max_value=8),
    magic=st.integers(min_value=0, max_value=2),
    prefix=st.sampled_from(PREFIXES),
    tail=st.binary(max_size=200),
)
def test_fuzz_only_our_errors(codec: int, magic: int, prefix: bytes, tail: bytes) -> None:
    try:
        out = decompress(codec, prefix + tail, magic=magic, max_output=1 << 20)
    except (CompressionError, UnsupportedCodecError):
        return
    assert type(out) is bytes and len(out) <= 1 << 20


@settings(max_examples=examples(300), deadline=None)
@given(case=st.sampled_from(SMALL_CASES), data=st.data())
def test_fuzz_mutated_streams(case: tuple[str, int, int, bytes], data: st.DataObject) -> None:
    _, codec, magic, good = case
    buf = bytearray(good)
    for _ in range(data.draw(st.integers(1, 4))):
        buf[data.draw(st.integers(0, len(buf) - 1))] = data.draw(st.integers(0, 255))
    try:
        decompress(codec, bytes(buf), magic=magic)
    except CompressionError:
        pass


# ------------------------------------------------------------------------------ max_output

BOMB = b"\x00" * (10 * 1024 * 1024)
BOMB_ENCODERS = [
    ("gzip", 1, 2, kc.gzip_encode),
    ("snappy-xerial", 2, 2, kc.snappy_encode),
    ("snappy-raw", 2, 2, lambda d: kc.snappy_encode(d, xerial_compatible=False)),
    ("lz4", 3, 2, kc.lz4_encode),
    ("zstd", 4, 2, zstd_streamed),
    ("none", 0, 2, bytes),
]


@pytest.mark.parametrize("name,codec,magic,encode", BOMB_ENCODERS, ids=[e[0] for e in BOMB_ENCODERS])
def test_max_output_guard_streams(name, codec, magic, encode) -> None:
    data = encode(BOMB)
    tracemalloc.start()
    try:
        with pytest.raises(CompressionError, match="max_output"):
            decompress(codec, data, magic=magic, max_output=1024 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    if codec != 0:  # the guard fires while streaming, not after a full 10 MB plaintext
        assert peak < 4 * 1024 * 1024, peak
    assert decompress(codec, data, magic=magic, max_output=len(BOMB)) == BOMB
    with pytest.raises(CompressionError, match="max_output"):
        decompress(codec, data, magic=magic, max_output=len(BOMB) - 1)



def _pinning_cases() -> list[tuple[str, int, int, bytes]]:
    """Streams that fail while a slice of the input (or a zstd reader on it) is alive."""
    cases = [(n + "-truncated", c, m, d[: len(d) // 2]) for n, c, m, d in SMALL_CASES]
    by_name = {n: (c, m, d) for n, c, m, d in SMALL_CASES}
    for name, at in [("gzip", None), ("lz4-v2-all-checks", None), ("zstd-checksum", None), ("snappy-xerial", 30)]:
        codec, magic, data = by_name[name]
        at = len(data) // 2 if at is None else at
        cases.append((name + "-corrupt", codec, magic, data[:at] + b"\xff" * 4 + data[at + 4 :]))
    return cases


PINNING_CASES = _pinning_cases()


@pytest.mark.parametrize("name,codec,magic,data", PINNING_CASES, ids=[c[0] for c in PINNING_CASES])
def test_stored_error_does_not_pin_the_mmap(name, codec, magic, data, tmp_path) -> None:
    view, close = as_mmap_view(data, tmp_path)
    with pytest.raises(CompressionError) as info:
        decompress(codec, view, magic=magic)
    kept = info.value  # e.g. stored in a finding, traceback and cause included
    close()  # BufferError here if a traceback frame still held a view of the mmap
    assert isinstance(kept, CompressionError)
