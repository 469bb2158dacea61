"""Oracle: Kafka 4.1's own ``kafka-dump-log.sh``, run here, against ``kafka-forensics dump`` (its
text comes from the C run writer, ``native.dump_batches``, and with ``KAFKA_FORENSICS_PURE=1`` from
the pure-Python path) on segments no broker wrote: those of tests/codec/dump_catalog.py (every
codec, markers, legacy v0/v1 entries and wrappers, fields at the ends of their ranges,
coordinator records of each version, every hostile payload and bytes that are not UTF-8 in keys,
values and headers), the records of the hostile disks of fixtures/hostile.py, and the real
clients' segments of fixtures/real. stdout must be the same bytes, for each option set the run
writer takes, ``--max-bytes`` and ``--skip-record-metadata`` included. One JVM per option set.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from fixtures import hostile
from tests.codec import dump_catalog
from tests.codec.dump_ways import decoder_of
from tests.oracle import shared_dir

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "fixtures" / "real" / "kraft-tv2" / "disk"
KAFKA_HOME = Path(os.environ.get("KF_KAFKA_HOME") or shared_dir() / "kafka" / "kafka_2.13-4.1.0")
DUMP_LOG = KAFKA_HOME / "bin" / "kafka-dump-log.sh"
DEEP = ("--deep-iteration", "--print-data-log")
FLAG = {None: (), "transaction-log": ("--transaction-log-decoder",), "offsets": ("--offsets-decoder",)}
# (flags, the decoder of the segments it dumps)
CASES = {
    "print-data-log": (DEEP, None),
    "deep-iteration": (("--deep-iteration",), None),
    "skip-record-metadata": ((*DEEP, "--skip-record-metadata"), None),
    "max-bytes": ((*DEEP, "--max-bytes", "2900"), None),
    "transaction-log-decoder": ((*DEEP, *FLAG["transaction-log"]), "transaction-log"),
    "offsets-decoder": ((*DEEP, *FLAG["offsets"]), "offsets"),
}
pytestmark = [pytest.mark.jvm,
              pytest.mark.skipif(not DUMP_LOG.is_file(), reason=f"no Kafka 4.1.0 distribution at {KAFKA_HOME}"),
              pytest.mark.skipif(shutil.which("java") is None, reason="no Java runtime")]


class Segments(NamedTuple):
    root: Path  # the cwd of both tools
    files: dict[str | None, list[str]]  # decoder -> the segments it dumps, relative to root


@pytest.fixture(scope="module")
def segments(tmp_path_factory) -> Segments:
    """The segments to dump, the hostile disks' and the real ones copied under plain names (file
    names as Kafka prints them are tests/cli's)."""
    root = tmp_path_factory.mktemp("oracle")
    got: dict[str | None, list[str]] = {None: [], "transaction-log": [], "offsets": []}
    for path, decoder in dump_catalog.write(root).values():
        got[decoder].append(str(path.relative_to(root)))
    logs = [p for d in hostile.build_all(root / "hostile") for p in sorted(d.rglob("*.log")) if p.stat().st_size]
    real = sorted(p for p in REAL.glob("*/*.log") if p.stat().st_size and not p.parent.name.startswith("__cluster"))
    for i, path in enumerate(logs + real):
        topic = path.parent.name.rsplit("-", 1)[0]
        name = topic if topic.startswith("__") else f"{'hostile' if i < len(logs) else 'real'}-{i}"
        copy = root / f"{name}-{i}" / path.name
        copy.parent.mkdir()
        shutil.copyfile(path, copy)
        got[decoder_of(copy)].append(str(copy.relative_to(root)))
    return Segments(root, got)


def _run(cmd: list[str], cwd: Path, **env) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=300, env=dict(os.environ, **env))


@pytest.mark.parametrize("case", list(CASES))
def test_our_dump_is_kafkas(segments, case: str) -> None:
    flags, decoder = CASES[case]
    files, root = segments.files[decoder], segments.root
    assert len(files) >= (20 if decoder is None else 10)
    kafka = _run([str(DUMP_LOG), *flags, "--files", ",".join(files)], root)
    assert kafka.returncode == 0 and b"Exception" not in kafka.stderr, kafka.stderr[-2000:]
    assert kafka.stdout.count(b"\nDumping ") == len(files) - 1
    for pure in ("", "1"):
        ours = _run([sys.executable, "-m", "forensics", "dump", *flags, "--", *files], root, KAFKA_FORENSICS_PURE=pure)
        assert ours.returncode == 0, ours.stderr[-2000:]
        if ours.stdout != kafka.stdout:
            theirs, mine = kafka.stdout.split(b"\n"), ours.stdout.split(b"\n")
            at = next((i for i, (a, b) in enumerate(zip(theirs, mine)) if a != b), min(len(theirs), len(mine)))
            pytest.fail(f"{case} (pure={pure or 0}) differs at line {at + 1}:\n kafka {theirs[at:at + 1]!r}\n ours  "
                        f"{mine[at:at + 1]!r}")
