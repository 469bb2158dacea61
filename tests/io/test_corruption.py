"""Damaged segments never raise out of the dump: damage becomes findings, every byte is accounted for.

Segments under test: real Kafka 4.1 segments (committed copies under ``fixtures/real``; more from
``/work/shared/real-kafka`` when present) and generator segments with every codec and with
legacy magic 0 and 1. Each case writes the damaged bytes to a temp ``.log`` and runs
``dump_file(path, DumpOptions(deep_iteration=True, print_data_log=True))``; then:

* nothing is raised;
* every batch of the undamaged original lying entirely outside the damaged byte range is still
  yielded at the same position with the same offsets (and a verified CRC);
* every byte of the file is inside a yielded batch or a finding's byte range
  (:func:`assert_bytes_accounted`);
* the damage is reported with the right finding kind where the kind is determined
  (CRC_MISMATCH for a flipped checksummed byte, TRUNCATED_TAIL for a cut batch, ZERO_FILL for
  zeroed batches / a preallocated tail, CORRUPT_REGION for garbage, a bad magic or a bad length).
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixtures import generator as gen
from forensics.findings import FindingKind
from forensics.report.dump import DumpOptions, dump_file
from forensics.report.dump_rows import BatchRow, FindingRow, TrailingBytes
from tests import tiers
from tests.tiers import examples

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real"
SHARED = REPO.parent / "shared" / "real-kafka" / "4.1.0" / "kraft-tv2" / "data"
SEGMENT_NAME = "00000000000000000000.log"
OPTIONS = DumpOptions(deep_iteration=True, print_data_log=True)
DECODER_OPTIONS = [OPTIONS] + [DumpOptions(deep_iteration=True, print_data_log=True, decoder=d)
                               for d in ("transaction-log", "offsets", "cluster-metadata")]

BYTE_DAMAGE = {FindingKind.CRC_MISMATCH, FindingKind.TRUNCATED_TAIL, FindingKind.ZERO_FILL,
               FindingKind.CORRUPT_REGION}
CUT = {FindingKind.TRUNCATED_TAIL, FindingKind.ZERO_FILL}

# real segments: committed copies first; the brief's b-txn-aborts-0 copy is used if it is committed,
# else read in place from the shared reference disks (read-only)
REAL_SEGMENTS = {
    "real-consumer-offsets-42": [REAL / "kraft-tv2" / "__consumer_offsets-42" / SEGMENT_NAME],
    "real-txn-state-21": [REAL / "kraft-tv2" / "__transaction_state-21" / SEGMENT_NAME],
    "real-txn-state-20-tv0": [REAL / "kraft-rv3.9-tv0" / "__transaction_state-20" / SEGMENT_NAME],
    "real-b-txn-aborts-0": [REAL / "kraft-tv2" / "b-txn-aborts-0" / SEGMENT_NAME,
                            SHARED / "b-txn-aborts-0" / SEGMENT_NAME],
    "real-f-comp-gzip-0": [SHARED / "f-comp-gzip-0" / SEGMENT_NAME],
    "real-f-comp-snappy-0": [SHARED / "f-comp-snappy-0" / SEGMENT_NAME],
    "real-f-comp-lz4-0": [SHARED / "f-comp-lz4-0" / SEGMENT_NAME],
    "real-f-comp-zstd-0": [SHARED / "f-comp-zstd-0" / SEGMENT_NAME],
}
GEN_SEGMENTS = {f"gen-v{magic}-{name}": (codec, magic)
                for magic in (2, 1, 0) for name, codec in gen.CODECS.items() if not (codec == gen.ZSTD and magic < 2)}
ALL_SEGMENTS = list(REAL_SEGMENTS) + list(GEN_SEGMENTS)

_cache: dict[str, bytes | None] = {}


def segment_bytes(name: str) -> bytes:
    if name not in _cache:
        data = None
        if name in GEN_SEGMENTS:
            codec, magic = GEN_SEGMENTS[name]
            data = gen.sample_segment(codec, magic)
        else:
            for candidate in REAL_SEGMENTS[name]:
                if candidate.is_file():
                    data = candidate.read_bytes()
                    break
        _cache[name] = data
    data = _cache[name]
    if data is None:
        pytest.skip(f"{name}: real segment not available here")
    return data


# --------------------------------------------------------------------------- helpers


class Batch(NamedTuple):
    position: int
    end: int
    magic: int
    base_offset: int
    last_offset: int


def frames(rows) -> list:
    return [r.frame for r in rows if type(r) is BatchRow]


def findings(rows) -> list:
    return [r.finding for r in rows if type(r) is FindingRow]


def assert_bytes_accounted(rows, file_size: int) -> None:
    """Every byte of the file lies in a yielded batch frame or in a finding's byte range."""
    spans = [(f.position, f.end) for f in frames(rows)]
    spans += [(f.position, f.end_position) for f in findings(rows)
              if f.position is not None and f.end_position is not None]
    reach = 0
    for start, end in sorted(spans):
        if start > reach:
            break
        reach = max(reach, end)
    if reach < file_size:
        gap_end = min([s for s, _ in spans if s > reach], default=file_size)
        raise AssertionError(f"bytes {reach}..{gap_end} of {file_size} are in no batch and no finding; "
                             f"findings: {[f.one_line() for f in findings(rows)]}")


def dump(path: Path, data: bytes, case: str, options: DumpOptions = OPTIONS) -> list:
    path.write_bytes(data)
    try:
        return list(dump_file(str(path), options))
    except Exception as exc:  # any exception is a failure: say which case raised it
        raise AssertionError(f"{case}: dump raised {type(exc).__name__}: {exc}") from exc


def original_batches(path: Path, data: bytes) -> list[Batch]:
    rows = dump(path, data, "original")
    assert not [f for f in findings(rows) if f.kind in BYTE_DAMAGE], "the undamaged segment must be clean"
    out = [Batch(f.position, f.end, f.magic, f.base_offset, f.last_offset) for f in frames(rows)]
    assert out and out[-1].end == len(data)
    return out


def assert_survivors(rows, original: Sequence[Batch], damaged: tuple[int, int], case: str, shift: int = 0) -> None:
    """Original batches entirely outside ``damaged`` are still there, intact, at ``position + shift``."""
    got = {(f.position, f.end, f.base_offset, f.last_offset) for f in frames(rows) if f.crc_ok}
    lo, hi = damaged
    for b in original:
        if b.end <= lo or b.position >= hi:
            key = (b.position + shift, b.end + shift, b.base_offset, b.last_offset)
            assert key in got, f"{case}: undamaged batch {b} is missing; findings: " + \
                "; ".join(f.one_line() for f in findings(rows))


def protected(b: Batch, p: int) -> bool:
    """Would a change of byte ``p`` of batch ``b`` be detectable? (offset field never; v2
    partitionLeaderEpoch is not covered by the CRC)."""
    rel = p - b.position
    if rel < 8:
        return False
    return not (b.magic == 2 and 12 <= rel < 16)


def assert_damage_reported(rows, original: Sequence[Batch], changed: Iterable[int], case: str) -> None:
    changed = sorted(set(changed))
    reported = [f for f in findings(rows) if f.kind in BYTE_DAMAGE]
    for b in original:
        hits = [p for p in changed if b.position <= p < b.end and protected(b, p)]
        if hits and not any(f.position < b.end and f.end_position > b.position for f in reported):
            raise AssertionError(f"{case}: change at byte {hits[0]} of batch {b} is not reported")


def check(rows, data: bytes, original, damaged, changed, case: str) -> None:
    assert_bytes_accounted(rows, len(data))
    assert_survivors(rows, original, damaged, case)
    assert_damage_reported(rows, original, changed, case)


def batch_at(original: Sequence[Batch], p: int) -> Batch | None:
    for b in original:
        if b.position <= p < b.end:
            return b
    return None


@pytest.fixture
def seg_path(tmp_path: Path) -> Path:
    return tmp_path / SEGMENT_NAME


# --------------------------------------------------------------------------- truncation


SAMPLED_TRUNCATION = {"real-f-comp-gzip-0", "real-f-comp-snappy-0", "real-f-comp-lz4-0", "real-f-comp-zstd-0"}
# The fast tier (tests/tiers.py) cuts and flips fewer bytes of each segment: every length and every byte up to
# FAST_HEAD (the first batches' headers, every field, and their first records), the cuts around every batch boundary,
# and a quarter of the random ones. The full suite: the lengths and bytes below.
FAST_HEAD = 200


def truncation_lengths(name: str, data: bytes, original: Sequence[Batch]) -> list[int]:
    """Every length; for the large shared compressed segments (time budget) every length up to
    600, around every batch boundary, and 150 random ones."""
    if name not in SAMPLED_TRUNCATION and not tiers.FAST:
        return list(range(len(data)))
    lengths = set(range(min(FAST_HEAD if tiers.FAST else 600, len(data))))
    near = (-2, -1, 0, 1, 2, 17, 18, 61)
    lengths |= {b.position + d for b in original for d in near if 0 <= b.position + d < len(data)}
    lengths |= set(random.Random(name).sample(range(len(data)), min(examples(150), len(data))))
    return sorted(lengths)


@pytest.mark.parametrize("name", ALL_SEGMENTS)
def test_truncation_at_every_length(name: str, seg_path: Path) -> None:
    data = segment_bytes(name)
    original = original_batches(seg_path, data)
    for length in truncation_lengths(name, data, original):
        cut = data[:length]
        case = f"{name} truncated to {length}"
        rows = dump(seg_path, cut, case)
        assert_bytes_accounted(rows, length)
        assert_survivors(rows, original, (length, len(data)), case)
        b = batch_at(original, length)
        if b is None or b.position == length:
            assert not [f for f in findings(rows) if f.kind in BYTE_DAMAGE], case
            continue
        reported = [f for f in findings(rows) if f.kind in BYTE_DAMAGE and f.position == b.position]
        assert reported, f"{case}: the cut batch at {b.position} is not reported"
        first = reported[0]
        if not any(cut[b.position:]):
            assert (first.kind, first.end_position) == (FindingKind.ZERO_FILL, length), case
        elif first.end_position == length:
            assert first.kind is FindingKind.TRUNCATED_TAIL, f"{case}: {first.one_line()}"
        else:
            # only a legacy wrapper can hold entries that verify on their own: snappy and lz4 store
            # the first copy of each inner message literally, so the resync may recover inner ones
            nested = [f for f in frames(rows) if b.position < f.position < length]
            assert b.magic < 2 and nested and first.kind is FindingKind.CORRUPT_REGION, \
                f"{case}: {[f.one_line() for f in findings(rows)]}"
        trailing = [r for r in rows if type(r) is TrailingBytes]
        assert trailing and trailing[0].byte_count <= length - b.position, case


# --------------------------------------------------------------------------- bit flips


def flip_positions(size: int, seed: int, head: int = 600, extra: int = 150) -> list[int]:
    if tiers.FAST:
        head, extra = FAST_HEAD, examples(extra)
    positions = list(range(min(size, head)))
    if size > head:
        positions += random.Random(seed).sample(range(head, size), min(extra, size - head))
    return positions


@pytest.mark.parametrize("name", ALL_SEGMENTS)
def test_single_bit_flips(name: str, seg_path: Path) -> None:
    data = segment_bytes(name)
    original = original_batches(seg_path, data)
    rng = random.Random(name)
    for p in flip_positions(len(data), seed=len(data)):
        bit = rng.randrange(8)
        damaged = bytearray(data)
        damaged[p] ^= 1 << bit
        case = f"{name}: bit {bit} of byte {p} flipped"
        rows = dump(seg_path, bytes(damaged), case)
        check(rows, data, original, (p, p + 1), [p], case)
        b = batch_at(original, p)
        rel = p - b.position
        checksummed = rel >= 17 if b.magic == 2 else (rel >= 12 and rel != 16)
        if checksummed:
            crc = [f for f in findings(rows) if f.kind is FindingKind.CRC_MISMATCH
                   and (f.position, f.end_position) == (b.position, b.end)]
            assert crc, f"{case}: no CRC_MISMATCH for batch {b}: " + "; ".join(f.one_line() for f in findings(rows))


# --------------------------------------------------------------------------- zero fill


@pytest.mark.parametrize("name", ALL_SEGMENTS)
def test_zero_fill_random_ranges(name: str, seg_path: Path) -> None:
    data = segment_bytes(name)
    original = original_batches(seg_path, data)
    rng = random.Random("zero:" + name)
    for _ in range(60):
        a = rng.randrange(len(data))
        b = min(len(data), a + rng.choice((1, 4, 8, 13, 40, 100, 300, 2000)))
        damaged = data[:a] + bytes(b - a) + data[b:]
        case = f"{name}: bytes {a}..{b} zeroed"
        rows = dump(seg_path, damaged, case)
        check(rows, data, original, (a, b), [p for p in range(a, b) if data[p]], case)


@pytest.mark.parametrize("name", ALL_SEGMENTS)
def test_zero_fill_whole_batches(name: str, seg_path: Path) -> None:
    """Zeroed whole batches (a crash after extending the file, or a hole) are ZERO_FILL, and the
    batches after them are found again; zeroing to the end is a ZERO_FILL tail."""
    data = segment_bytes(name)
    original = original_batches(seg_path, data)
    n = len(original)
    spans = [(0, 1), (n // 2, n // 2 + 1), (1, max(2, n - 1)), (n // 2, n)]
    for i, j in spans:
        if not 0 <= i < j <= n:
            continue
        a, b = original[i].position, original[j - 1].end
        case = f"{name}: batches {i}..{j - 1} (bytes {a}..{b}) zeroed"
        rows = dump(seg_path, data[:a] + bytes(b - a) + data[b:], case)
        check(rows, data, original, (a, b), [p for p in range(a, b) if data[p]], case)
        zero = [f for f in findings(rows) if f.kind is FindingKind.ZERO_FILL]
        assert [(f.position, f.end_position) for f in zero] == [(a, b)], case


def test_preallocated_zero_tail(seg_path: Path) -> None:
    for name in ALL_SEGMENTS:
        try:
            data = segment_bytes(name)
        except pytest.skip.Exception:
            continue
        original = original_batches(seg_path, data)
        padded = data + bytes(1 << 20)
        case = f"{name} + 1 MiB of zeros"
        rows = dump(seg_path, padded, case)
        assert_bytes_accounted(rows, len(padded))
        assert_survivors(rows, original, (len(data), len(padded)), case)
        kinds = [(f.kind, f.position, f.end_position) for f in findings(rows) if f.kind in BYTE_DAMAGE]
        assert kinds == [(FindingKind.ZERO_FILL, len(data), len(padded))], case
        assert [r.byte_count for r in rows if type(r) is TrailingBytes] == [1 << 20], case


# --------------------------------------------------------------------------- header damage


@pytest.mark.parametrize("name", ALL_SEGMENTS)
def test_length_claiming_two_gib(name: str, seg_path: Path) -> None:
    data = segment_bytes(name)
    original = original_batches(seg_path, data)
    for k, b in enumerate(original):
        damaged = bytearray(data)
        damaged[b.position + 8 : b.position + 12] = (0x7FFFFFF0).to_bytes(4, "big")
        case = f"{name}: batch {k} at {b.position} claims 2 GiB"
        rows = dump(seg_path, bytes(damaged), case)
        check(rows, data, original, (b.position, b.end), range(b.position + 8, b.position + 12), case)
        first = [f for f in findings(rows) if f.position == b.position and f.kind in BYTE_DAMAGE]
        expected = FindingKind.TRUNCATED_TAIL if k == len(original) - 1 else FindingKind.CORRUPT_REGION
        assert first and first[0].kind is expected, f"{case}: {[f.one_line() for f in findings(rows)]}"


@pytest.mark.parametrize("name", ALL_SEGMENTS)
@pytest.mark.parametrize("magic", [3, 0x7F, 0xFF])
def test_unknown_magic(name: str, magic: int, seg_path: Path) -> None:
    data = segment_bytes(name)
    original = original_batches(seg_path, data)
    for k, b in enumerate(original):
        damaged = bytearray(data)
        damaged[b.position + 16] = magic
        case = f"{name}: batch {k} at {b.position} has magic {magic}"
        rows = dump(seg_path, bytes(damaged), case)
        check(rows, data, original, (b.position, b.end), [b.position + 16], case)
        first = [f for f in findings(rows) if f.position == b.position and f.kind in BYTE_DAMAGE]
        assert first and first[0].kind is FindingKind.CORRUPT_REGION, case


# --------------------------------------------------------------------------- splices

SPLICES = [
    ("real-consumer-offsets-42", "gen-v2-zstd"),
    ("gen-v2-gzip", "real-txn-state-21"),
    ("real-b-txn-aborts-0", "gen-v2-lz4"),
    ("gen-v0-snappy", "gen-v1-lz4"),
    ("gen-v1-gzip", "gen-v2-snappy"),  # message format upgrade order: legacy, then v2
    ("gen-v2-none", "gen-v1-none"),  # down-converted appends after a format downgrade
    ("gen-v2-none", "gen-v0-gzip"),
]
CR, ZF, CRC = FindingKind.CORRUPT_REGION, FindingKind.ZERO_FILL, FindingKind.CRC_MISMATCH
GARBAGE = [  # (bytes between the two segments, finding expected for them)
    (b"", None),
    (b"\xff" * 7, CR),
    (bytes(range(256)) * 2, CR),
    (bytes(100), ZF),  # a zero hole
    (b"\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x01\x00\x00\x00\x00\x00\x02junk" * 3, CR),  # fake v2 headers
    # a well-framed legacy entry with a wrong CRC, exactly filling the gap: framed, CRC mismatch
    (b"\x00" * 8 + b"\x00\x00\x00\x20" + b"\x00" * 4 + b"\x01" + b"\x00" * 27, CRC),
]


@pytest.mark.parametrize("first,second", SPLICES)
def test_spliced_segments(first: str, second: str, seg_path: Path) -> None:
    a, b = segment_bytes(first), segment_bytes(second)
    orig_a, orig_b = original_batches(seg_path, a), original_batches(seg_path, b)
    rng = random.Random(first + second)
    randoms = [(bytes(rng.randrange(256) for _ in range(n)), CR) for n in (1, 17, 61, 500)]
    for garbage, expected in GARBAGE + randoms:
        data = a + garbage + b
        shift = len(a) + len(garbage)
        case = f"{first} + {len(garbage)} bytes of garbage + {second}"
        rows = dump(seg_path, data, case)
        assert_bytes_accounted(rows, len(data))
        assert_survivors(rows, orig_a, (len(a), len(data)), case)
        assert_survivors(rows, orig_b, (-1, -1), case, shift=shift)
        if garbage:
            hole = [(f.kind, f.position, f.end_position) for f in findings(rows) if f.kind in BYTE_DAMAGE]
            assert hole == [(expected, len(a), shift)], f"{case}: {[f.one_line() for f in findings(rows)]}"


# --------------------------------------------------------------------------- fuzzing


@pytest.fixture(scope="module")
def fuzz_path(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / SEGMENT_NAME


_FUZZ = settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FUZZ
@given(data=st.binary(max_size=2048))
def test_arbitrary_bytes_never_raise(fuzz_path: Path, data: bytes) -> None:
    for options in DECODER_OPTIONS:
        rows = dump(fuzz_path, data, "arbitrary bytes", options)
        assert_bytes_accounted(rows, len(data))


_SEEDS = [gen.sample_segment(c, m, n_batches=5) for c, m in GEN_SEGMENTS.values()]


@_FUZZ
@given(seed=st.sampled_from(range(len(_SEEDS))),
       edits=st.lists(st.tuples(st.integers(0, 4095), st.integers(0, 255)), max_size=6),
       cut=st.one_of(st.none(), st.integers(0, 4095)),
       insert=st.binary(max_size=40), at=st.integers(0, 4095))
def test_mutated_segments_never_raise(fuzz_path: Path, seed: int, edits, cut, insert: bytes, at: int) -> None:
    data = bytearray(_SEEDS[seed])
    for p, v in edits:
        data[p % len(data)] = v
    at %= len(data) + 1
    data[at:at] = insert
    if cut is not None:
        del data[cut % (len(data) + 1):]
    for options in DECODER_OPTIONS:
        rows = dump(fuzz_path, bytes(data), "mutated segment", options)
        assert_bytes_accounted(rows, len(data))


_header = st.tuples(st.text(max_size=8), st.one_of(st.none(), st.binary(max_size=16)))
_record = st.builds(gen.RecordSpec, key=st.one_of(st.none(), st.binary(max_size=48)),
                    value=st.one_of(st.none(), st.binary(max_size=96)),
                    headers=st.lists(_header, max_size=3).map(tuple),
                    timestamp_delta=st.integers(-5, 5))


@_FUZZ
@given(records=st.lists(_record, min_size=0, max_size=4), control=st.booleans(),
       codec=st.sampled_from([0, 0, 1, 2, 3, 4]), legacy=st.sampled_from([None, 0, 1]))
def test_valid_batches_with_arbitrary_contents_never_raise(fuzz_path: Path, records, control: bool, codec: int,
                                                           legacy) -> None:
    """Well-framed batches whose keys/values/headers are arbitrary: every decoder (default,
    transaction-log, offsets, cluster-metadata) must print or report them, never raise."""
    if legacy is not None:
        codec = codec if codec != gen.ZSTD else gen.GZIP
        if codec and records:
            data = gen.encode_legacy_message(len(records) - 1, magic=legacy, codec=codec, inner=records)
        else:
            r = records[0] if records else gen.RecordSpec()
            data = gen.encode_legacy_message(0, r.key, r.value, magic=legacy)
    else:
        data = gen.encode_v2_batch(0, records, control=control, transactional=control, producer_id=5 if control else -1,
                                   codec=0 if control else codec)
    for options in DECODER_OPTIONS:
        rows = dump(fuzz_path, data, "arbitrary contents", options)
        assert_bytes_accounted(rows, len(data))
        assert frames(rows) and frames(rows)[0].crc_ok


_prefixed_key = st.one_of(
    st.tuples(st.integers(-2, 8), st.integers(-2, 8), st.binary(max_size=24)).map(
        lambda t: struct.pack(">hh", t[0], t[1]) + t[2]),
    st.tuples(st.integers(-1, 3), st.binary(max_size=40)).map(lambda t: struct.pack(">h", t[0]) + t[1]),
    st.binary(max_size=8),
    st.none())
_prefixed_value = st.one_of(
    st.tuples(st.integers(-1, 2), st.integers(-1, 30), st.binary(max_size=60)).map(
        lambda t: struct.pack(">h", t[0]) + bytes([t[1] & 0xFF]) + t[2]),  # version / frame version + api key
    st.tuples(st.integers(-1, 2), st.binary(max_size=60)).map(lambda t: struct.pack(">h", t[0]) + t[1]),
    st.binary(max_size=16),
    st.none())


@_FUZZ
@given(key=_prefixed_key, value=_prefixed_value, control=st.booleans())
def test_decoders_on_near_valid_keys_and_values_never_raise(fuzz_path: Path, key, value, control: bool) -> None:
    """Keys and values that start like a control key, a transaction-log / offsets key or a
    metadata record frame and continue arbitrarily, in a valid batch, through every decoder."""
    data = gen.encode_v2_batch(0, [gen.RecordSpec(key, value)], control=control, transactional=control,
                               producer_id=9 if control else -1)
    for options in DECODER_OPTIONS:
        rows = dump(fuzz_path, data, f"key={key!r} value={value!r} control={control}", options)
        assert_bytes_accounted(rows, len(data))


def test_zero_length_record_at_end_of_file(seg_path: Path) -> None:
    """A record whose length varint is 0, as the very last byte of the file: the record decoder
    must report it (it used to index one byte past the end of the mmap)."""
    recs = [gen.RecordSpec(b"k", b"v")]
    good = gen.encode_v2_batch(0, recs)
    bad = bytearray(gen.encode_v2_batch(1, recs, records_count=2))
    bad += b"\x00"  # a second "record": length 0, nothing after it
    bad[8:12] = (len(bad) - 12).to_bytes(4, "big")
    from forensics.codec.crc import crc32c
    bad[17:21] = crc32c(bytes(bad[21:])).to_bytes(4, "big")
    data = good + bytes(bad)
    rows = dump(seg_path, data, "zero-length record at EOF")
    assert_bytes_accounted(rows, len(data))
    assert [f.kind for f in findings(rows)] == [FindingKind.CORRUPT_BATCH]
    assert [f.crc_ok for f in frames(rows)] == [True, True]
