"""What the segment readers must report for a mutated segment, checked against the original.

Readers run on every mutated file: the dump report (``dump_file`` with deep iteration, data printed
and the topic's record decoder; every row consumed) and the scan/rebuild unit reader
(``read_segment``, with header statistics). Neither may raise (damage is reported as findings).

Each batch of the original is classified through the mutant's byte map (:class:`tests.fuzz.mutations.Mutant`).
Its place ``j`` in the mutated file is where its first byte went (or, if that byte is gone, right after
the last surviving byte before it), or else where its first surviving byte puts it.

* **intact**: the mutated file holds exactly its bytes at ``j`` (bytes lost and re-supplied by equal
  bytes count as there). It must be framed at ``j`` with a verified checksum, an identical header and
  identical decoded records (the byte positions of uncompressed records aside, which move with it).
* **uncovered**: at ``j`` its bytes differ only in fields no checksum covers: a v2 batch's baseOffset
  (@0-7) and partitionLeaderEpoch (@12-15), a legacy entry's offset (@0-7). The format cannot detect
  such a change. Required: either it is framed at ``j`` with a verified checksum and a header equal to
  the original's except exactly those fields, which show the mutated bytes' values, or a byte-damage
  finding overlaps it. When the new offsets cannot belong to the segment (below its base offset, or
  lastOffset - base beyond 2^31-1) a finding is required.
* **ambiguous**: intact or uncovered at ``j``, but a verified batch that starts before ``j`` ends
  inside it: bytes were lost at a seam between equal bytes and both batches can claim the shared
  ones; the reader frames the first. A finding must overlap it.
* **damaged**: any other change, with surviving bytes that no verified frame holds. A byte-damage
  finding must overlap the span of those bytes.
* **removed**: nothing of it survives outside verified frames (of spliced-in or shifted batches). If
  it vanished whole, starting and ending on batch boundaries (or the file's ends), nothing in the
  format can show it (a shorter clean segment; offset gaps are normal after compaction): counted, not
  checked. Otherwise a byte-damage finding must lie between the places of the nearest intact (or
  shown) batches before and after it.

For the whole file: every byte lies inside a framed batch or a finding's byte range; every frame
with a verified checksum is an intact or uncovered original batch at its place, or its checksummed
bytes are those of a batch Kafka wrote (one of any source segment: spliced in, or shifted with a
changed baseOffset); the unit reader frames the same batches and reports the same framing findings
as the dump.
"""

from __future__ import annotations

import struct
from bisect import bisect_left
from collections import Counter
from typing import NamedTuple

from forensics.findings import Finding, FindingKind
from forensics.pipeline.plan import UnitKind, WorkUnit
from forensics.pipeline.units import read_segment
from forensics.report.dump import DumpOptions, dump_file
from forensics.report.dump_rows import BatchRow, DataRecords, FindingRow, RecordRow
from tests.fuzz.mutations import Mutant, Source

DAMAGE = frozenset({FindingKind.TRUNCATED_TAIL, FindingKind.ZERO_FILL, FindingKind.CORRUPT_REGION,
                    FindingKind.CRC_MISMATCH, FindingKind.CORRUPT_BATCH, FindingKind.UNSUPPORTED_MAGIC,
                    FindingKind.UNSUPPORTED_CODEC, FindingKind.OFFSET_REGRESSION, FindingKind.OFFSET_OVERFLOW,
                    FindingKind.BATCH_BEFORE_BASE, FindingKind.NOT_KAFKA})
DECODING = frozenset({FindingKind.CORRUPT_BATCH, FindingKind.UNSUPPORTED_CODEC})  # added by the dump's decoding
INT32_MAX = 0x7FFFFFFF
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")


class Read(NamedTuple):
    frames: list  # Frame, in file order
    headers: dict[int, object]  # frame position -> BatchHeader / LegacyRecord
    records: dict[int, tuple]  # frame position -> ((record without position, text), ...)
    findings: list[Finding]


def _strip(record) -> object:
    return record._replace(position=-1)


def unit_kind(src: Source) -> UnitKind:
    if src.decoder == "transaction-log":
        return UnitKind.TXNLOG
    return UnitKind.STATS if src.decoder == "cluster-metadata" else UnitKind.EVENTS


def read(path: str, src: Source) -> Read:
    """Run both readers over the file at ``path`` (named like ``src``); exceptions propagate."""
    frames, headers, records, findings = [], {}, {}, []
    for row in dump_file(path, DumpOptions(deep_iteration=True, print_data_log=True, decoder=src.decoder)):
        kind = type(row)
        if kind is BatchRow:
            frames.append(row.frame)
            headers[row.frame.position] = row.header
            records[row.frame.position] = ()
        elif kind is DataRecords:
            records[row.batch.frame.position] = tuple((_strip(r), None) for r in row.records)
        elif kind is RecordRow:
            p = row.batch.frame.position
            records[p] = records[p] + ((_strip(row.record), row.text),)
        elif kind is FindingRow:
            findings.append(row.finding)
    piece = read_segment(WorkUnit(unit_kind(src), path, path, src.base_offset, stats=True))
    summary = piece.summary
    framing = [f for f in findings if f.kind not in DECODING]
    # a framed legacy entry whose fields do not decode is a finding in the dump instead of a batch row
    undecoded = {f.position for f in findings if f.kind in DECODING} - set(headers)
    assert summary is not None and summary.batches == len(frames) + len(undecoded), \
        "unit reader framed other batches than the dump"
    assert 0 <= summary.invalid_batches - sum(f.crc_ok is False for f in frames) <= len(undecoded), \
        "unit reader counts other CRC failures"
    assert list(summary.findings) == framing, "unit reader reports other framing findings than the dump"
    return Read(frames, headers, records, findings)


class Batch(NamedTuple):
    position: int
    end: int
    magic: int
    header: object
    records: tuple


def baseline(read_result: Read) -> list[Batch]:
    """The batches of an undamaged original (which must frame cleanly from start to end)."""
    if read_result.findings:
        raise AssertionError("original is not clean: " + "; ".join(f.one_line() for f in read_result.findings))
    return [Batch(f.position, f.end, f.magic, read_result.headers[f.position], read_result.records[f.position])
            for f in read_result.frames]


def covered_bytes(data: bytes, position: int, end: int, magic: int) -> bytes:
    """A batch's bytes without the fields no checksum covers: what identifies a batch Kafka wrote."""
    if magic == 2:
        return data[position + 8: position + 12] + data[position + 16: end]
    return data[position + 8: end]


def _expected_header(b: Batch, data: bytes, j: int):
    """The original header with the checksum-free fields read from the mutated bytes."""
    if b.magic == 2:
        return b.header._replace(base_offset=_I64.unpack_from(data, j)[0],
                                 partition_leader_epoch=_I32.unpack_from(data, j + 12)[0])
    return b.header._replace(offset=_I64.unpack_from(data, j)[0])


def _fits(header, magic: int, base: int) -> bool:
    first = header.base_offset if magic == 2 else header.offset
    last = header.last_offset
    return first >= base and last - base <= INT32_MAX


class Verdict(NamedTuple):
    problems: list[str]
    tally: Counter


def check(src: Source, original: list[Batch], m: Mutant, got: Read, genuine: frozenset[bytes]) -> Verdict:
    """``genuine``: the bytes of every batch of every source segment (what a splice can bring in)."""
    data = bytes(m.data)
    n = len(data)
    problems: list[str] = []
    tally: Counter = Counter()
    damage = [f for f in got.findings if f.kind in DAMAGE and f.position is not None]

    def overlapped(lo: int, hi: int) -> bool:
        return any(f.position < hi and f.end_position > lo for f in damage)

    # every byte is inside a frame or a finding
    spans = sorted([(f.position, f.end) for f in got.frames] + [(f.position, f.end_position) for f in got.findings
                                                               if f.position is not None and f.end_position is not None])
    reach = 0
    for a, b in spans:
        if a > reach:
            break
        reach = max(reach, b)
    if reach < n:
        problems.append(f"bytes {reach}.. of {n} are in no batch and no finding")

    pos_of = [-1] * len(m.original)
    for j, o in enumerate(m.origin):
        if o >= 0:
            pos_of[o] = j
    alive = [o for o in m.origin if o >= 0]  # surviving original positions, increasing
    by_pos = {f.position: f for f in got.frames}
    boundaries = {b.position for b in original} | {len(m.original)}
    verified = [(f.position, f.end) for f in got.frames if f.crc_ok is True]  # in file order, disjoint
    starts = [a for a, _ in verified]

    def inside_verified(j: int) -> bool:  # does a verified frame that starts before j reach past it?
        i = bisect_left(starts, j) - 1
        return i >= 0 and verified[i][1] > j

    def free_bytes(positions) -> list[int]:  # the increasing positions that no verified frame holds
        out, i = [], 0
        for j in positions:
            while i < len(verified) and verified[i][1] <= j:
                i += 1
            if i == len(verified) or j < verified[i][0]:
                out.append(j)
        return out

    legit: dict[int, int] = {}  # position -> size of the frames of original batches allowed to verify
    placed: list[tuple[int, int] | None] = [None] * len(original)  # where intact/shown batches are now
    removed = []
    for k, b in enumerate(original):
        p, e = b.position, b.end
        size = e - p
        i, i_end = bisect_left(alive, p), bisect_left(alive, e)
        survivors = alive[i:i_end]  # original positions of the batch's surviving bytes
        seam = pos_of[alive[i - 1]] + 1 if i > 0 else 0
        # where it would be: at its first byte, at the seam, or aligned on its first surviving byte
        spots = [pos_of[p] if pos_of[p] >= 0 else seam] + ([pos_of[survivors[0]] - (survivors[0] - p)] if survivors else [])
        spots = [j for j in spots if 0 <= j and j + size <= n]
        where = f"batch {k} (original bytes {p}..{e}, offsets {b.header.base_offset if b.magic == 2 else b.header.offset})"
        whole = next((j for j in spots if data[j: j + size] == m.original[p:e]), None)
        covered = covered_bytes(m.original, p, e, b.magic)
        part = next((j for j in spots if covered_bytes(data, j, j + size, b.magic) == covered), None)
        j = whole if whole is not None else part
        if j is not None and inside_verified(j):
            # its bytes are there, but a batch before it that verifies too (an intact or spliced-in one)
            # ends inside them: damage at a seam between equal bytes; either batch can claim them
            tally["ambiguous: shares bytes with the batch before it"] += 1
            if not overlapped(j, j + size):
                problems.append(f"{where}: overlaps the verified batch before it and no finding covers it")
        elif whole is not None:  # its bytes, unchanged (lost ones re-supplied by equal bytes)
            tally["intact"] += 1
            legit[j], placed[k] = size, (j, j + size)
            f = by_pos.get(j)
            if f is None or f.size != size or f.crc_ok is not True:
                problems.append(f"intact {where} is not framed at {j} with a verified CRC")
            elif got.headers[j] != b.header:
                problems.append(f"intact {where} at {j} decodes with another header: {got.headers[j]}")
            elif got.records[j] != b.records:
                problems.append(f"intact {where} at {j} decodes other records "
                                f"({len(got.records[j])} instead of {len(b.records)})")
        elif part is not None:  # changed only where no checksum looks
            expected = _expected_header(b, data, j)
            f = by_pos.get(j)
            shown = f is not None and f.size == size and f.crc_ok is True and got.headers[j] == expected
            legit[j] = size
            if shown:
                placed[k] = (j, j + size)
            if shown and _fits(expected, b.magic, src.base_offset):
                tally["uncovered: decoded showing the changed field"] += 1
            elif overlapped(j, j + size):
                tally["uncovered: reported"] += 1
            else:
                problems.append(f"{where}: change outside the CRC ({expected}) is neither shown exactly nor "
                                f"reported" if not shown else f"{where}: offsets {expected} cannot belong to the "
                                f"segment (base {src.base_offset}) and no finding says so")
        elif free := free_bytes(pos_of[o] for o in survivors):
            tally["damaged: reported"] += 1
            if not overlapped(free[0], free[-1] + 1):
                problems.append(f"damaged {where} (now bytes {free[0]}..{free[-1] + 1}) has no finding")
        elif not survivors and (i == 0 or alive[i - 1] + 1 in boundaries) and (
                i_end == len(alive) or alive[i_end] in boundaries):
            tally["removed whole on batch boundaries (undetectable)"] += 1
        else:  # gone, or what is left of it lies inside other batches that verify
            removed.append((k, where))
    for k, where in removed:
        lo = next((z for _, z in (placed[x] for x in range(k - 1, -1, -1) if placed[x])), 0)
        hi = next((a for a, _ in (placed[x] for x in range(k + 1, len(original)) if placed[x])), n)
        if any(f.position <= hi and f.end_position >= lo for f in damage):
            tally["removed: reported between its neighbours"] += 1
        else:
            problems.append(f"removed {where}: no finding between the batches around it (bytes {lo}..{hi})")

    for f in got.frames:
        if f.crc_ok is not True or legit.get(f.position) == f.size:
            continue
        if covered_bytes(data, f.position, f.end, f.magic) in genuine:
            tally["spliced-in or shifted batch decoded"] += 1
            continue
        problems.append(f"frame at {f.position} ({f.size} bytes) verifies but is no batch Kafka wrote")
    return Verdict(problems, tally)


def describe_findings(got: Read, limit: int = 8) -> str:
    out = [f.one_line()[:160] for f in got.findings[:limit]]
    if len(got.findings) > limit:
        out.append(f"... {len(got.findings) - limit} more")
    return "; ".join(out) or "no findings"


def frames_summary(got: Read) -> list[tuple[int, int, bool | None]]:
    return [(f.position, f.size, f.crc_ok) for f in got.frames]
