"""Long-running fuzz harness for the segment decoders (not collected by pytest: no ``test_`` prefix).

Run from the repository root with the project's virtualenv active::

    python tests/fuzz/fuzz_decoders.py --iterations 200000            # pure-Python random mutation
    python tests/fuzz/fuzz_decoders.py --iterations 0 --seconds 600    # run for ten minutes
    python tests/fuzz/fuzz_decoders.py --replay /tmp/kafka-forensics-fuzz/crash-....bin
    python tests/fuzz/fuzz_decoders.py --atheris -atheris_runs=1000000  # coverage-guided, if atheris is installed

Contract checked on every input (see forensics/errors.py and tests/codec/test_fuzz_contract.py):
``FrameScanner`` over the bytes raises nothing at all; ``batch.decode_header`` / ``crc_ok`` /
``iter_records`` (consumed fully), ``legacy.decode_entry`` / ``iter_deep`` / ``inner_records`` and the
``control`` decoders raise only ``forensics.errors.ForensicsError`` subclasses — at position 0 and at
every frame the scanner yields.

Inputs: random bytes, byte-level mutations (flip / set / insert / delete / truncate / splice / zero
fill) of valid batches written by kafka-python's builders (magic 2 with none/gzip/snappy/lz4/zstd,
magic 0/1 with none/gzip/snappy/lz4, plus the 78-byte COMMIT marker) and of 80 real Kafka 4.1.0
batches (``tests/fuzz/real_seeds.py``: every codec, control batches), field overwrites with the CRC
recomputed (so damage reaches the record decoders), and v2 batches with random headers and
random-ish records under a valid CRC-32C. Without atheris the generator is ``random.Random(--seed)``,
so a run is reproducible. Every violating input is written to ``--crash-dir`` (default
``$TMPDIR/kafka-forensics-fuzz``) and the exit status is 1.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import struct
import sys
import tempfile
import time
import traceback
import zlib
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from forensics.codec import control
from forensics.codec.crc import crc32c_pure
from forensics.codec.primitives import encode_varint, encode_varlong
from forensics.errors import ForensicsError
from forensics.io.frames import FrameScanner
from tests.decode_all import decode_frame
from tests.kafka_python_support import COMMIT_MARKER
from tests.kafka_python_support import build_seeds as kafka_python_seeds


class ContractViolation(Exception):
    pass


# -- the property ------------------------------------------------------------------------------


def _guarded(what: str, fn: Callable[[], None]) -> None:
    try:
        fn()
    except ForensicsError:
        pass
    except Exception as exc:  # noqa: BLE001 - this is what we hunt
        raise ContractViolation(f"{what}: {type(exc).__name__}: {exc}") from exc


def check_one(buf: bytes) -> None:
    """Raise ContractViolation if any entry point breaks the error contract on ``buf``."""
    try:
        scanner = FrameScanner(buf, "fuzz.log")
        frames = list(scanner)
        for finding in scanner.findings:
            finding.one_line()
    except Exception as exc:  # noqa: BLE001
        raise ContractViolation(f"FrameScanner raised {type(exc).__name__}: {exc}") from exc
    for f in frames:
        _guarded(f"frame at {f.position}", lambda f=f: decode_frame(buf, f.position, f.magic))
    _guarded("decode_header/iter_records at 0", lambda: decode_frame(buf, 0, 2))
    _guarded("legacy.decode_entry/iter_deep at 0", lambda: decode_frame(buf, 0, 0))
    _guarded("control decoders", lambda: control.decode_end_txn_marker(control.decode_control_key(buf[:4]), buf[4:]))


# -- seeds -------------------------------------------------------------------------------------


def build_seeds() -> list[bytes]:
    """kafka-python's batches of every codec and magic, plus real Kafka 4.1.0 batches (fixtures/real)."""
    from tests.fuzz.real_seeds import v2_batches

    try:
        seeds = kafka_python_seeds()
    except ImportError:  # kafka-python missing: structured generation and the marker still run
        seeds = [COMMIT_MARKER]
    return seeds + list(v2_batches())


# -- generators --------------------------------------------------------------------------------


def _recrc(buf: bytearray) -> None:
    if len(buf) >= 61 and buf[16] == 2:
        struct.pack_into(">I", buf, 17, crc32c_pure(bytes(buf[21:])))
    elif len(buf) >= 26 and buf[16] in (0, 1):
        size = struct.unpack_from(">i", buf, 8)[0]
        if 14 <= size <= len(buf) - 12:
            struct.pack_into(">I", buf, 12, zlib.crc32(bytes(buf[16: 12 + size])))


def mutate(rng: random.Random, seeds: list[bytes]) -> bytes:
    buf = bytearray(b"".join(rng.choice(seeds) for _ in range(rng.randint(1, 3))))
    for _ in range(rng.randint(1, 6)):
        if not buf:
            buf += rng.randbytes(rng.randint(1, 8))
            continue
        i = rng.randrange(len(buf))
        op = rng.randrange(8)
        if op == 0:
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            buf[i] = rng.randrange(256)
        elif op == 2:
            buf[i:i] = rng.randbytes(rng.randint(1, 16))
        elif op == 3:
            del buf[i: i + rng.randint(1, 16)]
        elif op == 4:
            del buf[i:]
        elif op == 5:
            other = rng.choice(seeds)
            j = rng.randrange(len(other))
            buf[i:i] = other[j: j + rng.randint(1, 64)]
        elif op == 6:
            n = rng.randint(1, 32)
            buf[i: i + n] = bytes(len(buf[i: i + n]))
        else:
            width = rng.choice((1, 2, 4, 8))
            buf[i: i + width] = rng.randbytes(width)
    if rng.random() < 0.5:
        _recrc(buf)
    return bytes(buf)


def _raw_record(rng: random.Random) -> bytes:
    if rng.random() < 0.2:
        return bytes(rng.choice(b"\x00\x01\x02\x7f\x80\xff") for _ in range(rng.randint(0, 3)))
    small = lambda: rng.randint(-3, 12)  # noqa: E731
    body = bytearray([rng.randrange(256)])
    body += encode_varlong(rng.randint(-2**63, 2**63 - 1))
    body += encode_varint(rng.randint(-2**31, 2**31 - 1))
    for _ in range(2):
        n = small()
        body += encode_varint(n) + rng.randbytes(max(n, 0))
    hc = rng.randint(-2, 3)
    body += encode_varint(hc)
    for _ in range(max(hc, 0) * 2):
        n = small()
        body += encode_varint(n) + rng.randbytes(max(n, 0))
    length = len(body) + rng.choice((0, 0, 0, -1, 1, -len(body), 1 - len(body)))
    return encode_varint(length) + bytes(body)


def _compress(codec: int, data: bytes) -> bytes:
    import kafka.codec

    return {1: kafka.codec.gzip_encode, 2: kafka.codec.snappy_encode, 3: kafka.codec.lz4_encode,
            4: kafka.codec.zstd_encode}[codec](data)


def structured_v2(rng: random.Random) -> bytes:
    recs = [_raw_record(rng) for _ in range(rng.randint(0, 4))]
    records = b"".join(recs)
    if rng.random() < 0.5:
        records = records[: rng.randint(0, len(records))]
    codec = rng.randrange(8)
    try:
        payload = _compress(codec, records) if 1 <= codec <= 4 else (records if codec == 0 else rng.randbytes(20))
    except ImportError:
        payload = records
    attrs = codec | rng.choice((0, 0x08, 0x10, 0x20, 0x30, 0x40, 0x78, 0xFF00))
    count = rng.choice((len(recs) - 1, len(recs), len(recs) + 1, rng.randint(-2, 6), rng.randint(-2**31, 2**31 - 1)))
    body = struct.pack(">Hiqqqhii", attrs, rng.randint(-2**31, 2**31 - 1), rng.randint(-2**63, 2**63 - 1),
                       rng.randint(-2**63, 2**63 - 1), rng.randint(-2**63, 2**63 - 1), rng.randint(-2**15, 2**15 - 1),
                       rng.randint(-2**31, 2**31 - 1), count) + payload
    return struct.pack(">qiibI", rng.randint(0, 2**40), len(body) + 9, rng.randint(-1, 9), 2,
                       crc32c_pure(body)) + body + rng.choice((b"", b"", b"\x00" * 20, b"junk"))


def generate(rng: random.Random, seeds: list[bytes]) -> bytes:
    r = rng.random()
    if r < 0.15:
        return rng.randbytes(rng.randint(0, 300))
    if r < 0.35:
        return structured_v2(rng)
    return mutate(rng, seeds)


# -- drivers -----------------------------------------------------------------------------------


def save_crash(crash_dir: str, data: bytes) -> str:
    os.makedirs(crash_dir, exist_ok=True)
    path = os.path.join(crash_dir, f"crash-{hashlib.sha256(data).hexdigest()[:16]}.bin")
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def run_random(iterations: int, seconds: float | None, seed: int, crash_dir: str, quiet: bool) -> int:
    rng = random.Random(seed)
    seeds = build_seeds()
    for s in seeds:  # the seeds themselves must be clean
        check_one(s)
    start = time.monotonic()
    crashes = 0
    done = 0
    while (iterations <= 0 or done < iterations) and (seconds is None or time.monotonic() - start < seconds):
        data = generate(rng, seeds)
        try:
            check_one(data)
        except ContractViolation as exc:
            crashes += 1
            path = save_crash(crash_dir, data)
            print(f"CONTRACT VIOLATION #{crashes} (iteration {done}): {exc}\n  input saved to {path}", file=sys.stderr)
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        done += 1
        if not quiet and done % 10_000 == 0:
            print(f"{done} inputs, {crashes} violations, {time.monotonic() - start:.0f}s", file=sys.stderr)
    print(f"fuzz_decoders: {done} inputs (seed {seed}), {crashes} contract violations, "
          f"{time.monotonic() - start:.1f}s", file=sys.stderr)
    return 1 if crashes else 0


def run_atheris(argv: list[str]) -> int:
    import atheris  # type: ignore[import-not-found]

    def one_input(data: bytes) -> None:
        check_one(data)  # ContractViolation propagates: atheris records the crash input

    atheris.Setup([sys.argv[0]] + argv, one_input)
    atheris.Fuzz()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=100_000, help="inputs to try (0 = unlimited)")
    parser.add_argument("--seconds", type=float, default=None, help="stop after this many seconds")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: time based, printed)")
    parser.add_argument("--crash-dir", default=os.path.join(tempfile.gettempdir(), "kafka-forensics-fuzz"))
    parser.add_argument("--replay", nargs="+", metavar="FILE", help="re-run saved inputs and exit")
    parser.add_argument("--atheris", action="store_true", help="coverage-guided fuzzing (needs atheris)")
    parser.add_argument("--quiet", action="store_true")
    args, rest = parser.parse_known_args(argv)
    if args.replay:
        status = 0
        for path in args.replay:
            with open(path, "rb") as fh:
                data = fh.read()
            try:
                check_one(data)
                print(f"{path}: ok")
            except ContractViolation as exc:
                status = 1
                print(f"{path}: {exc}")
                traceback.print_exception(exc.__cause__)
        return status
    if args.atheris:
        try:
            import atheris  # noqa: F401
        except ImportError:
            print("atheris is not installed; falling back to pure-Python random fuzzing", file=sys.stderr)
        else:
            return run_atheris(rest)
    elif rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    seed = args.seed if args.seed is not None else int(time.time())
    return run_random(args.iterations, args.seconds, seed, args.crash_dir, args.quiet)


if __name__ == "__main__":
    sys.exit(main())
