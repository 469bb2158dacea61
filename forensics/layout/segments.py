"""The effective segment set of one partition directory, as ``LogLoader.load`` builds it.

Pure: works on file names and ``stat`` sizes only, never on file content.

Mirrors ``storage/src/main/java/org/apache/kafka/storage/internals/log/LogLoader.java``
(``removeTempFilesAndCollectSwapFiles`` and the three passes of ``load``):

1. ``*.deleted`` are not part of the log (reported in ``deleted_files``).
   ``*.cleaned`` are ignored (``cleaned_files``); their minimum offset is remembered.
2. ``*.swap`` whose offset is >= the minimum ``.cleaned`` offset are discarded
   (incomplete split, KAFKA-6264); the others are *valid*.
3. Over all valid ``.log.swap`` files the broker takes ONE range
   ``[min swap base offset, max swap nextOffset)`` and deletes every non-swap file whose
   name starts with an offset inside it: segments, their indexes AND ``.snapshot`` files.
4. Every valid ``.swap`` is renamed to drop the suffix (replacing a same-named file).
5. Index files without a ``.log`` are orphans (the broker deletes them).

**The swap rule offline.** ``nextOffset`` is the last offset in the swap segment + 1,
which needs the swap's last batch header (``LogSegment.readNextOffset``); layout does not
read record bytes. So:

* if the caller supplies ``swap_next_offset(path)`` (e.g. the io layer's header scan),
  the range is exact;
* a ``.log.swap`` of size 0 is empty, so its nextOffset is its base offset (exact);
* otherwise nextOffset is only known to be > base offset. We use the lower bound
  ``base + 1``: segments with base offsets in ``[min swap base, max swap base]`` are
  certainly covered and replaced; later segments are KEPT even though some of them may
  also be covered (the cleaner replaces a group of consecutive segments and the crash can
  leave the tail of that group in place). Keeping them may show offsets twice (the
  downstream offset-regression check will see it); dropping them could hide live data
  such as transaction markers. A SWAP_FILE finding names the segments kept on that
  assumption. The cleaner never covers the active (last) segment, so that one is never
  in doubt unless the swap came from a split.
"""

from __future__ import annotations

from typing import NamedTuple
from collections.abc import Callable, Iterable

from forensics.errors import ForensicsError
from forensics.findings import Finding, FindingKind
from forensics.layout.evidence import DirEntry
from forensics.layout.names import (
    INDEX_KINDS,
    OFFSET_NAMED_KINDS,
    FileKind,
    FileName,
    TempSuffix,
)
from forensics.layout.inventory import SegmentFiles, SnapshotFile
from forensics.model import first_few

SwapNextOffset = Callable[[str], int | None]
"""Given the path of a ``.log.swap`` file, its nextOffset (last offset + 1), or None."""


class NamedFile(NamedTuple):
    parsed: FileName
    entry: DirEntry

    @property
    def offset(self) -> int:
        return self.parsed.offset if self.parsed.offset is not None else -1

    @property
    def path(self) -> str:
        return self.entry.path


class Resolution(NamedTuple):
    segments: tuple[SegmentFiles, ...]
    orphan_indexes: tuple[SegmentFiles, ...]
    snapshots: tuple[SnapshotFile, ...]
    deleted_files: tuple[str, ...]
    cleaned_files: tuple[str, ...]
    swap_files: tuple[str, ...]
    replaced_files: tuple[str, ...]
    findings: tuple[Finding, ...]


class _SwapRange(NamedTuple):
    low: int  # min swap base offset
    high: int  # exclusive: max nextOffset (or its lower bound)
    exact: bool

    def __contains__(self, offset: object) -> bool:
        return isinstance(offset, int) and self.low <= offset < self.high


def _offsets_text(offsets: Iterable[int], limit: int = 10) -> str:
    return first_few([str(v) for v in sorted(offsets)], limit)


def _next_offset(swap: NamedFile, resolver: SwapNextOffset | None, findings: list[Finding]) -> int | None:
    if resolver is not None:
        try:
            value = resolver(swap.path)
        except (ForensicsError, OSError) as e:
            message = f"cannot determine the swap's next offset: {e}"
            findings.append(Finding(FindingKind.SWAP_FILE, message, path=swap.path))
            value = None
        if value is not None:
            return max(value, swap.offset)
    if swap.entry.size == 0:
        return swap.offset  # readNextOffset of an empty segment is its base offset
    return None


def _swap_range(log_swaps: list[NamedFile], resolver: SwapNextOffset | None, findings: list[Finding]) -> _SwapRange:
    low = min(s.offset for s in log_swaps)
    high, exact = low, True
    for swap in log_swaps:
        nxt = _next_offset(swap, resolver, findings)
        if nxt is None:
            exact = False
            nxt = swap.offset + 1  # a non-empty segment holds at least its base offset
        high = max(high, nxt)
    return _SwapRange(low, high, exact)


def _split_by_suffix(files: Iterable[NamedFile]) -> dict[TempSuffix | None, list[NamedFile]]:
    buckets: dict[TempSuffix | None, list[NamedFile]] = {
        None: [],
        TempSuffix.DELETED: [],
        TempSuffix.CLEANED: [],
        TempSuffix.SWAP: [],
    }
    for f in files:
        if f.parsed.kind in OFFSET_NAMED_KINDS and f.parsed.offset is not None and f.parsed.temp in buckets:
            buckets[f.parsed.temp].append(f)
    return buckets


def _valid_swaps(swaps: list[NamedFile], cleaned: list[NamedFile], findings: list[Finding]) -> list[NamedFile]:
    """``removeTempFilesAndCollectSwapFiles``: swaps at or above the smallest .cleaned
    offset belong to an incomplete split and are discarded."""
    min_cleaned = min((f.offset for f in cleaned), default=None)
    valid = []
    for f in swaps:
        if min_cleaned is not None and f.offset >= min_cleaned:
            message = f"discarded: offset >= smallest .cleaned offset {min_cleaned} (incomplete split, KAFKA-6264)"
            findings.append(Finding(FindingKind.SWAP_FILE, message, path=f.path, first_offset=f.offset))
        else:
            valid.append(f)
    return valid


def resolve_segments(files: Iterable[NamedFile], swap_next_offset: SwapNextOffset | None = None) -> Resolution:
    """Effective segments and snapshots of one partition dir from its offset-named files
    (kinds log/index/timeindex/txnindex/snapshot, any temp suffix)."""
    findings: list[Finding] = []
    buckets = _split_by_suffix(files)
    normal, swaps = buckets[None], buckets[TempSuffix.SWAP]
    deleted, cleaned = buckets[TempSuffix.DELETED], buckets[TempSuffix.CLEANED]
    for f in deleted:
        message = "scheduled for deletion; old data, not part of the log"
        findings.append(Finding(FindingKind.DELETED_FILE, message, path=f.path, first_offset=f.offset))
    for f in cleaned:
        message = "cleaner/split output never swapped in; ignored by the broker"
        findings.append(Finding(FindingKind.CLEANED_FILE, message, path=f.path, first_offset=f.offset))
    valid = _valid_swaps(swaps, cleaned, findings)

    replaced: list[str] = []
    log_swaps = [f for f in valid if f.parsed.kind is FileKind.LOG]
    if log_swaps:
        rng = _swap_range(log_swaps, swap_next_offset, findings)
        replaced.extend(f.path for f in normal if f.offset in rng)
        covered = [f for f in normal if f.offset in rng]
        normal = [f for f in normal if f.offset not in rng]
        findings.append(_swap_finding(log_swaps, rng, covered, normal))

    by_name: dict[tuple[FileKind, int], NamedFile] = {(f.parsed.kind, f.offset): f for f in normal}
    swapped_logs = set()
    for f in valid:  # third pass: rename, replacing a same-named file
        key = (f.parsed.kind, f.offset)
        if key in by_name:
            replaced.append(by_name[key].path)
        by_name[key] = f
        if f.parsed.kind is FileKind.LOG:
            swapped_logs.add(f.offset)
    segments, orphans, snapshots = _group(by_name.values(), swapped_logs, findings)
    return Resolution(
        segments=segments,
        orphan_indexes=orphans,
        snapshots=snapshots,
        deleted_files=tuple(f.path for f in deleted),
        cleaned_files=tuple(f.path for f in cleaned),
        swap_files=tuple(f.path for f in swaps),
        replaced_files=tuple(sorted(replaced)),
        findings=tuple(findings),
    )


def _swap_finding(
    log_swaps: list[NamedFile], rng: _SwapRange, covered: list[NamedFile], kept: list[NamedFile]
) -> Finding:
    covered_bases = _offsets_text(f.offset for f in covered if f.parsed.kind is FileKind.LOG) or "none"
    swap_bases = _offsets_text(s.offset for s in log_swaps)
    if rng.exact:
        message = (
            f"valid swap segment(s) at {swap_bases} replace files with offsets in "
            f"[{rng.low}, {rng.high}); replaced segments: {covered_bases}"
        )
    else:
        later = _offsets_text(f.offset for f in kept if f.parsed.kind is FileKind.LOG and f.offset >= rng.high)
        message = (
            f"valid swap segment(s) at {swap_bases}: next offset unknown without reading the swap's "
            f"last batch; assumed to cover offsets [{rng.low}, {rng.high}) only (replaced segments: "
            f"{covered_bases}); later segments kept although they may also be covered: {later or 'none'}"
        )
    last = rng.high - 1 if rng.high > rng.low else None
    return Finding(FindingKind.SWAP_FILE, message, path=log_swaps[0].path, first_offset=rng.low, last_offset=last)


def _group(
    files: Iterable[NamedFile], swapped_logs: set[int], findings: list[Finding]
) -> tuple[tuple[SegmentFiles, ...], tuple[SegmentFiles, ...], tuple[SnapshotFile, ...]]:
    """Group surviving files by offset into segments, orphan index groups and snapshots."""
    per_offset: dict[int, dict[FileKind, NamedFile]] = {}
    snapshots: list[SnapshotFile] = []
    for f in files:
        if f.parsed.kind is FileKind.SNAPSHOT:
            snapshots.append(SnapshotFile(f.offset, f.path, f.entry.size))
        else:
            per_offset.setdefault(f.offset, {})[f.parsed.kind] = f
    segments: list[SegmentFiles] = []
    orphans: list[SegmentFiles] = []
    for offset in sorted(per_offset):
        group = per_offset[offset]
        paths = {kind: f.path for kind, f in group.items()}
        log = group.get(FileKind.LOG)
        seg = SegmentFiles(
            base_offset=offset,
            log=paths.get(FileKind.LOG),
            index=paths.get(FileKind.INDEX),
            timeindex=paths.get(FileKind.TIMEINDEX),
            txnindex=paths.get(FileKind.TXNINDEX),
            log_size=log.entry.size if log is not None else None,
            swapped_in=offset in swapped_logs,
        )
        if log is None:
            orphans.append(seg)
            for kind in sorted(INDEX_KINDS & group.keys(), key=lambda k: k.value):
                message = "index file without its .log (the broker deletes it)"
                findings.append(Finding(FindingKind.ORPHAN_INDEX, message, path=paths[kind], first_offset=offset))
            continue
        segments.append(seg)
        missing = [k.value for k in (FileKind.INDEX, FileKind.TIMEINDEX) if k not in group]
        if missing:
            message = f"segment has no .{' / .'.join(missing)} (the broker rebuilds it)"
            findings.append(Finding(FindingKind.MISSING_INDEX, message, path=log.path, first_offset=offset))
    snapshots.sort(key=lambda s: s.offset)
    return tuple(segments), tuple(orphans), tuple(snapshots)
