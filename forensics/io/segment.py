"""One segment walked frame by frame: the loop every reader of a ``.log`` drives.

The unit reader (``pipeline/units``), the abort preview (``pipeline/preview``), the export's batch
rows (``pipeline/export_rows``), the dump (``report/dump``, ``report/dump_aux``) and the KRaft
version reader (``runs/broker_version``) open a segment here, read-only
(:class:`~forensics.io.files.MappedFile`: a sparse file's holes are skipped, never read), frame it
with one :class:`~forensics.io.frames.FrameScanner` and choose what they walk:

* :meth:`SegmentWalk.frames`: every frame, damaged or not (header statistics, export rows);
* :meth:`SegmentWalk.folded`: the same, less the runs of healthy batches a fold of the accelerator
  takes without a frame each (the unit reader's counters and producer runs);
* :meth:`SegmentWalk.batches`: the v2 batches whose checksum verified, the only ones a state
  rebuild may read (the broker's reader stops at the first that does not verify);
* :meth:`SegmentWalk.items`: every frame and, between them, each finding where the damage is
  (the dump prints them in file order; the unit reader joins no run across damage);
  :meth:`SegmentWalk.runs` the same with the frames in the runs they were framed in (the dump's
  text writer writes a run of healthy batches in one call).

The records of a batch come from :meth:`SegmentWalk.records`: those before a record that breaks a
rule, and the error; :meth:`SegmentWalk.finding` is the finding about one frame.
"""

from __future__ import annotations

from typing import Generic, Literal, cast, overload
from collections.abc import Iterator, Sequence

from forensics.codec import batch as v2
from forensics.errors import ForensicsError
from forensics.findings import Finding, FindingKind
from forensics.io.files import MappedFile
from forensics.io.frames import F_co, Fold, Frame, FrameScanner, HeadedFrame, V2Frame


class SegmentWalk(Generic[F_co]):
    """A segment file opened read-only (raises :class:`~forensics.errors.InputError` when it cannot
    be) and framed from ``start`` to ``end``; use it as a context manager. Frames decode their v2
    header once (``headers=False``: not at all, ``Frame.header`` is None, for a reader that reads
    the header's bytes itself); framing findings collect in :attr:`findings` as the walk goes. Its
    frames are typed as the scanner's: a walk with headers yields HeadedFrames (a v2 one has its
    header), one without plain Frames."""

    __slots__ = ("path", "file", "buf", "size", "scanner")

    @overload
    def __init__(self: SegmentWalk[HeadedFrame], path: str, *, start: int = ..., end: int | None = ...,
                 base_offset: int | None = ..., verify_crc: bool = ..., headers: Literal[True] = ...) -> None: ...

    @overload
    def __init__(self: SegmentWalk[Frame], path: str, *, start: int = ..., end: int | None = ...,
                 base_offset: int | None = ..., verify_crc: bool = ..., headers: bool) -> None: ...

    def __init__(self, path: str, *, start: int = 0, end: int | None = None, base_offset: int | None = None,
                 verify_crc: bool = True, headers: bool = True) -> None:
        self.path = path
        self.file = MappedFile(path)
        self.buf = self.file.data
        self.size = self.file.size
        # the overload taken is the walk's (headers or not): the scanner's frames are its frames
        self.scanner = cast("FrameScanner[F_co]", FrameScanner(
            self.buf, path, start=start, end=end, verify_crc=verify_crc, base_offset=base_offset, headers=headers,
            holes=self.file.holes))

    def __enter__(self) -> SegmentWalk[F_co]:
        return self

    def __exit__(self, *exc) -> None:
        self.file.close()

    @property
    def findings(self) -> list[Finding]:
        """The framing findings so far (damaged regions, checksums, offsets)."""
        return self.scanner.findings

    @property
    def first_invalid_position(self) -> int | None:
        """Where Kafka's own reader would stop (None: nowhere)."""
        return self.scanner.first_invalid_position

    def frames(self) -> Iterator[F_co]:
        return iter(self.scanner)

    def folded(self, fold: Fold) -> Iterator[F_co]:
        """:meth:`frames`, less the healthy runs ``fold`` takes (:meth:`FrameScanner.folded`)."""
        return self.scanner.folded(fold)

    @overload
    def batches(self: SegmentWalk[HeadedFrame]) -> Iterator[V2Frame]: ...

    @overload
    def batches(self: SegmentWalk[Frame]) -> Iterator[Frame]: ...

    def batches(self) -> Iterator[Frame]:
        for frame in self.scanner:
            if frame.magic == 2 and frame.crc_ok is not False:
                yield frame

    def items(self) -> Iterator[F_co | Finding]:
        findings = self.scanner.findings
        emitted = 0
        for frame in self.scanner:
            if emitted != len(findings):
                yield from findings[emitted:]
                emitted = len(findings)
            yield frame
        yield from findings[emitted:]

    def runs(self) -> Iterator[Sequence[F_co] | Finding]:
        """:meth:`items` with the frames in the scanner's runs (:meth:`FrameScanner.runs`): each
        finding where the damage is, between runs of consecutive frames (a writer of many small
        batches takes a run at once)."""
        findings = self.scanner.findings
        emitted = 0
        for run in self.scanner.runs():
            if emitted != len(findings):
                yield from findings[emitted:]
                emitted = len(findings)
            yield run
        yield from findings[emitted:]

    def records(self, frame: V2Frame) -> tuple[list[v2.Record], ForensicsError | None]:
        """The records of the v2 batch ``frame`` (decompressed): all of them, or those before the
        first that breaks a rule and the error."""
        records: list[v2.Record] = []
        try:
            records.extend(v2.iter_records(self.buf, frame.position, frame.header))  # keeps those before an error
        except ForensicsError as exc:
            return records, exc
        return records, None

    def finding(self, frame: Frame, message: str, kind: FindingKind = FindingKind.CORRUPT_BATCH) -> Finding:
        return Finding(kind, message, self.path, frame.position, frame.end, frame.base_offset, frame.last_offset)

    def frame_at(self, position: int) -> Frame | None:
        """The entry that frames at ``position`` (its checksum not checked), None when none does
        (an index entry is checked against its log this way)."""
        if position >= self.size:
            return None
        return next(iter(FrameScanner(self.buf, self.path, start=position, verify_crc=False,
                                      holes=self.file.holes)), None)


def unreadable(path: str, exc: ForensicsError) -> Finding:
    """The finding for a file that cannot be opened or read."""
    return Finding(FindingKind.UNREADABLE_FILE, exc.message, path, exc.position)


__all__ = ["SegmentWalk", "unreadable"]
