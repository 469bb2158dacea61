"""Helpers for comparing with Kafka's own output (the real-kafka oracle).

``iter_v2_records`` is a deliberately tiny, independent v2 walker (it does not use
forensics.codec.batch), so codec tests that compare record texts with Kafka's dumps do not
depend on the decoder they are testing. ``shared_dir`` finds ``../shared`` (the real broker disks
and Kafka's distribution) from a worktree too.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from pathlib import Path

from forensics.codec.crc import crc32c
from forensics.codec.primitives import read_varint, read_varlong

_BATCH = struct.Struct(">qiibIhiqqqhii")  # v2 batch header, 61 bytes
_TAIL = re.compile(r"^\| offset: (\d+) .*? headerKeys: \[[^\]]*\](.*)$")
REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """``../shared`` of the checkout: the first ``shared`` directory beside the repository or one
    of its parents (a worktree under ``wt/NAME`` finds the main checkout's); tests that need it
    skip when it is absent."""
    return next((p / "shared" for p in REPO.parents if (p / "shared").is_dir()), REPO.parent / "shared")


def iter_v2_records(buf: bytes) -> Iterator[tuple[int, bytes | None, bytes | None, bool]]:
    """(offset, key, value, is_control) of every record of an uncompressed v2 segment."""
    pos = 0
    while pos + 12 <= len(buf):
        (base, length, _ple, magic, crc, attrs, _lod, _bts, _mts, _pid, _pe, _bseq, count) = \
            _BATCH.unpack_from(buf, pos)
        end = pos + 12 + length
        assert magic == 2 and attrs & 0x07 == 0 and end <= len(buf)
        assert crc32c(buf[pos + 21:end]) == crc
        p = pos + _BATCH.size
        for _ in range(count):
            rec_len, p = read_varint(buf, p, end)
            rec_end = p + rec_len
            p += 1  # record attributes
            _, p = read_varlong(buf, p, rec_end)
            delta, p = read_varint(buf, p, rec_end)
            key_len, p = read_varint(buf, p, rec_end)
            key = None if key_len < 0 else bytes(buf[p:p + key_len])
            p += max(key_len, 0)
            value_len, p = read_varint(buf, p, rec_end)
            value = None if value_len < 0 else bytes(buf[p:p + value_len])
            yield base + delta, key, value, bool(attrs & 0x20)
            p = rec_end
        pos = end
    assert pos == len(buf)


def dump_tails(dump_path: Path, decoder_flag: str) -> list[tuple[int, str]]:
    """(offset, text after ``headerKeys: [..]``) of every record line of a dump made with ``decoder_flag``."""
    lines = dump_path.read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("# kafka-dump-log.sh") and decoder_flag in lines[0]
    out = []
    for line in lines:
        if line.startswith("| "):
            m = _TAIL.match(line)
            assert m, line
            out.append((int(m.group(1)), m.group(2)))
    return out
