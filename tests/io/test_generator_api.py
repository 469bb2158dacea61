"""The generator's public face and its bytes.

* ``fixtures.generator`` re-exports every name in its ``__all__`` (the scenario modules, the tests and
  ``bench/`` import from it; the code lives in ``fixtures.diskgen``), and ``python -m
  fixtures.generator`` still runs;
* every scenario disk (producer-state and hanging scenarios) rebuilds to the SHA-256 pinned in
  ``fixtures/generated.sha256`` (the example disk is compared with its committed tree in
  ``test_generator.py``), and the pin notices a single changed byte.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fixtures import digests
from fixtures import generator as gen

REPO = Path(__file__).resolve().parents[2]


def test_every_exported_name_resolves() -> None:
    assert len(gen.__all__) == len(set(gen.__all__))
    missing = [name for name in gen.__all__ if not hasattr(gen, name)]
    assert not missing
    namespace: dict = {}
    exec("from fixtures.generator import *", namespace)
    assert set(gen.__all__) <= set(namespace)
    # the names come from the diskgen modules, not from copies
    assert gen.build_disk.__module__ == "fixtures.diskgen.builder"
    assert gen.encode_v2_batch.__module__ == "fixtures.diskgen.records"


def test_command_line_help() -> None:
    out = subprocess.run([sys.executable, "-m", "fixtures.generator", "--help"], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    assert out.startswith("usage: python -m fixtures.generator [-h] {example,large} ...\n")
    assert "Synthetic Kafka broker disks: our own *writer* of every on-disk format the" in out


def test_scenario_disks_match_the_pin(tmp_path: Path) -> None:
    built = digests.build_and_digest(tmp_path)
    diff = digests.differences(digests.read_pin(), built)
    assert not diff, (f"scenario disks changed: {diff}; if intended, run "
                      "`python -m fixtures.digests --write DIR` and say so in the commit")
    assert len(built) == len(digests.read_pin()) >= 20


def test_the_pin_notices_one_changed_byte(tmp_path: Path) -> None:
    root = gen.make_example_disk(tmp_path) / gen.EXAMPLE_LOG_DIR
    before = digests.tree_digest(root)
    log = root / "orders-0" / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[100] ^= 0x01
    log.write_bytes(bytes(data))
    after = digests.tree_digest(root)
    assert before != after
    assert digests.differences({"a": before, "b": before}, {"a": after, "c": before}) == {
        "a": "changed", "b": "no longer built", "c": "not pinned"}
