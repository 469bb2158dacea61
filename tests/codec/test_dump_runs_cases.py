"""The run writer in C (``native.dump_batches``) against the pure-Python dump, on the cases the
command line meets: the segments of tests/codec/dump_catalog.py (every codec, markers, legacy
v0/v1 entries and wrappers, coordinator records, every hostile payload in keys, values and
headers, bytes that are not UTF-8), the hostile disks of fixtures/hostile.py, the real segments,
``--max-bytes`` cut anywhere, damaged copies (tests/fuzz/strategies.mutate), the terminal sink,
and the command line itself with ``KAFKA_FORENSICS_PURE=1``. That C writes these (it does not hand
them all back to Python) is checked too, or the comparison would prove nothing. Kafka's own tool
on the same segments: tests/report/test_dump_vs_kafka_jvm.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures import hostile
from fixtures.diskgen.records import encode_v2_batch
from forensics.report.dump import DumpOptions, dump_file
from forensics.report.dump_rows import BatchRun
from forensics.speedups import native
from tests.codec import dump_catalog
from tests.codec.dump_ways import decoder_of, dump_one, dump_ways
from tests.fuzz.strategies import mutate, pure_python, recrc
from tests.tiers import examples

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real" / "kraft-tv2" / "disk"
needs_native = pytest.mark.skipif(native is None, reason="the C accelerator is not built (or KAFKA_FORENSICS_PURE)")
DEEP = (dict(deep_iteration=True, print_data_log=True),)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> dict[str, tuple[Path, str | None]]:
    return dump_catalog.write(tmp_path_factory.mktemp("catalog"))


@pytest.fixture(scope="module")
def hostile_logs(tmp_path_factory) -> list[Path]:
    roots = hostile.build_all(tmp_path_factory.mktemp("hostile"))
    return sorted(p for root in roots for p in root.rglob("*.log") if p.stat().st_size)


def _real(*names: str) -> list[Path]:
    return [REAL / name / "00000000000000000000.log" for name in names]


REAL_KINDS = _real("i-java-txn-1", "a-txn-orders-0", "c-idempotent-0", "c-plain-0", "f-comp-gzip-0", "f-comp-snappy-0",
                   "f-comp-lz4-0", "f-comp-zstd-0", "g-compact-txn-0", "j-kafka-python-txn-0", "h-eos-output-0",
                   "__transaction_state-15", "__consumer_offsets-42")


def handed_back(path: Path, decoder: str | None) -> tuple[int, int]:
    """(frames, frames the C writer hands back to Python) of the runs of a text dump of ``path``."""
    frames = back = 0
    opts = DumpOptions(deep_iteration=True, print_data_log=True, decoder=decoder, batch_runs=True)
    for row in dump_file(str(path), opts):
        if type(row) is BatchRun:
            frames += len(row.frames)
            i = 0
            while i < len(row.frames):
                _, i, python = native.dump_batches(row.walk.buf, row.frames, i, True, False, decoder)
                back += python
                i += python
    return frames, back


def test_the_catalog_dumps_the_same_every_way(catalog) -> None:
    for name, (path, decoder) in catalog.items():
        texts = dump_ways(path, decoder)
        if name != "numbers":  # offsets past base + 2^31: an offset_overflow finding, as meant
            assert all(not err and findings == 0 for _, err, findings in texts), name
        assert texts[1][0].count("\n| ") >= 6, name  # records were printed


def test_the_hostile_disks_dump_the_same_every_way(hostile_logs) -> None:
    assert len(hostile_logs) >= 4 * len(hostile.PAYLOADS)
    for path in hostile_logs:
        dump_ways(path, decoder_of(path), option_sets=DEEP)


def test_the_terminal_sink_escapes_the_same_from_c(catalog, hostile_logs) -> None:
    """To a terminal, C's text goes through the same escaping: nothing raw a terminal would run."""
    for path in [p for p, _ in catalog.values()] + hostile_logs:
        c = dump_one(path, True, decoder_of(path), terminal=True, **DEEP[0])
        with pure_python():
            python = dump_one(path, False, decoder_of(path), terminal=True, **DEEP[0])
        assert c == python, path
        assert "\x1b" not in c[0] and "\r" not in c[0] and "\u202e" not in c[0], path


@needs_native
@pytest.mark.parametrize("path", REAL_KINDS, ids=lambda p: p.parent.name)
def test_c_writes_every_batch_of_real_producers(path: Path) -> None:
    """The real clients' batches (every codec, markers, coordinator records) are written in C:
    none is handed back, so the comparisons above compare C's text with Python's."""
    frames, back = handed_back(path, decoder_of(path))
    assert frames > 0 and back == 0, (frames, back)


@needs_native
def test_c_writes_the_catalog_and_hands_back_only_what_python_must_write(catalog) -> None:
    got = {name: handed_back(path, decoder) for name, (path, decoder) in catalog.items()}
    assert all(frames > 0 for frames, _ in got.values())
    # coordinator strings that are not UTF-8 are Python's: the batches of the 5 ids (i % 4 == 2),
    # and of the 10 commits whose group or topic is one of the 8 texts that are not UTF-8
    assert got.pop("__transaction_state")[1] == 5
    assert got.pop("__consumer_offsets")[1] == 10
    assert {name: back for name, (_, back) in got.items()} == dict.fromkeys(got, 0)


def _cuts(data: bytes) -> list[int]:
    """Where ``--max-bytes`` cuts: 0, 1, each v2/legacy entry's start and end +-1, the middle of each."""
    cuts, pos = {0, 1, len(data), len(data) + 5}, 0
    while pos + 12 <= len(data):
        end = pos + 12 + int.from_bytes(data[pos + 8: pos + 12], "big")
        cuts.update((pos - 1, pos + 1, pos + 11, pos + 12, pos + 61, (pos + end) // 2, end - 1, end))
        pos = end
    return sorted(c for c in cuts if c >= 0)


@pytest.mark.parametrize("name", ["codecs", "transactions", "legacy-v1", "upgrade", "__consumer_offsets", "i-java-txn-1"])
def test_max_bytes_cuts_dump_the_same(catalog, name: str) -> None:
    path, decoder = catalog[name] if name in catalog else (_real(name)[0], None)
    data = path.read_bytes()
    cuts = _cuts(data)
    if len(cuts) > 60:  # the real segment: its first entries and a spread of the rest
        cuts = cuts[:30] + cuts[30::len(cuts) // 30]
    for cut in cuts:
        dump_ways(path, decoder, option_sets=DEEP, max_bytes=cut)


def _seeds() -> list[bytes]:
    seeds = [data for data, _ in dump_catalog.catalog().values()]
    return seeds + [p.read_bytes() for p in _real("i-java-txn-0", "f-comp-zstd-1", "b-txn-aborts-0")]


SEEDS = _seeds()


@settings(max_examples=examples(150), deadline=None)
@given(data=st.data(), which=st.integers(0, len(SEEDS) - 1), count=st.integers(1, 4), fix_crc=st.booleans())
def test_damaged_segments_dump_the_same(tmp_path_factory, data, which: int, count: int, fix_crc: bool) -> None:
    """Byte flips, sets, inserts, deletes, truncations, zeroed runs, duplicated pieces (and the
    first batch's CRC made good again, so that the damage reaches its records)."""
    buf = bytearray(mutate(data.draw, bytearray(SEEDS[which]), count))
    if fix_crc and buf[16:17] == b"\x02":
        end = 12 + int.from_bytes(buf[8:12], "big", signed=True)
        if 61 <= end <= len(buf):
            first = bytearray(buf[:end])
            recrc(first)
            buf[:end] = first
    path = tmp_path_factory.mktemp("damaged") / "00000000000000000000.log"
    path.write_bytes(bytes(buf))
    dump_ways(path, option_sets=DEEP)
    dump_ways(path, "transaction-log", option_sets=DEEP)


def test_the_command_line_dumps_the_same_with_kafka_forensics_pure(catalog, hostile_logs) -> None:
    """``kafka-forensics dump`` as a process, accelerated and with ``KAFKA_FORENSICS_PURE=1``:
    the same stdout bytes, stderr and exit code, plain, cut by ``--max-bytes`` and with a decoder."""
    plain = [str(p) for p, decoder in catalog.values() if decoder is None]
    txn = [str(catalog["__transaction_state"][0])] + [str(p) for p in hostile_logs if decoder_of(p) == "transaction-log"]
    deep = ["dump", "--deep-iteration", "--print-data-log"]
    for args in ([*deep, "--", *plain, *map(str, REAL_KINDS[:11])],
                 [*deep, "--skip-record-metadata", "--max-bytes", "3000", "--", *plain],
                 [*deep, "--transaction-log-decoder", "--", *txn]):
        runs = []
        for pure in ("", "1"):
            env = dict(os.environ, KAFKA_FORENSICS_PURE=pure)
            runs.append(subprocess.run([sys.executable, "-m", "forensics", *args], capture_output=True, env=env,
                                       timeout=120))
        fast, slow = runs
        assert fast.returncode == slow.returncode == 0, fast.stderr[-500:]
        assert fast.stdout == slow.stdout and fast.stderr == slow.stderr
        assert fast.stdout.count(b"\n| ") > 50


def _lying(case: str) -> bytes:
    """A batch whose CRC is good but whose header or records say something else than its bytes."""
    recs = dump_catalog.records(3, 4)
    kw = {"count-short": dict(records_count=3), "count-long": dict(records_count=5), "count-zero": dict(records_count=0),
          "count-negative": dict(records_count=-1), "last-delta-short": dict(last_offset_delta=1),
          "last-delta-negative": dict(last_offset_delta=-1)}.get(case, {})
    if case == "offset-deltas-backwards":
        recs = [replace(r, offset_delta=3 - i) for i, r in enumerate(recs)]
    if case == "offset-delta-huge":
        recs = [replace(recs[0], offset_delta=2**31 - 1)] + recs[1:]
    good = encode_v2_batch(0, dump_catalog.records(4, 2))
    return good + encode_v2_batch(2, recs, **kw) + encode_v2_batch(6, recs, codec=4, **kw) + good


@pytest.mark.parametrize("case", ["count-short", "count-long", "count-zero", "count-negative", "last-delta-short",
                                  "last-delta-negative", "offset-deltas-backwards", "offset-delta-huge"])
def test_batches_whose_header_lies_dump_the_same(tmp_path, case: str) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_lying(case))
    dump_ways(path)
