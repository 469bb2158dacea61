"""The ``dump`` report: every file Kafka writes in a partition directory, as typed rows.

Row order and content follow Kafka 4.1's ``kafka-dump-log.sh`` (``DumpLogSegments``) so the text
renderer can reproduce its lines; unlike it, damage never ends the dump: findings are rows
too, and decoding resumes after the damaged region.
"""

from __future__ import annotations

import os
from forensics.dataclass_fast import dataclass
from collections.abc import Iterable, Iterator

from forensics.codec import batch as v2
from forensics.codec import legacy
from forensics.codec.batch import Record
from forensics.codec.legacy import LegacyRecord
from forensics.codec.primitives import INT32_MAX
from forensics.errors import (
    ForensicsError,
    InputError,
    NotASegmentError,
    UnsupportedCodecError,
)
from forensics.findings import Finding, FindingKind
from forensics.io.files import require_regular
from forensics.io.frames import Frame, LegacyFrame, V2Frame, with_header
from forensics.io.segment import SegmentWalk
from forensics.layout.names import BOOTSTRAP_CHECKPOINT, kind_of_suffix, kraft_snapshot_id
from forensics.report.decoders import record_texts, string_texts
from forensics.report.dump_rows import (
    BatchRow,
    BatchRun,
    DataRecords,
    DecodedText,
    DumpRow,
    FileStart,
    FindingRow,
    KraftSnapshotStart,
    LogStart,
    RecordRow,
    TrailingBytes,
)

NO_TEXT = DecodedText()
RUN_DECODERS = (None, "transaction-log", "offsets")  # the decoders a BatchRun is written with (DumpOptions.batch_runs)


@dataclass(frozen=True)
class DumpOptions:
    deep_iteration: bool = False
    print_data_log: bool = False
    decoder: str | None = None  # None | "transaction-log" | "offsets" | "cluster-metadata"
    skip_record_metadata: bool = False
    max_bytes: int = INT32_MAX
    verify_crc: bool = True
    # the entries of a deep dump (without a decoder, or one of RUN_DECODERS) come as BatchRun rows,
    # a run of them at once (for the text writer; other consumers read a BatchRow and its records
    # per batch)
    batch_runs: bool = False

    @property
    def deep(self) -> bool:
        return self.deep_iteration or self.print_data_log or self.decoder is not None

    @property
    def print_contents(self) -> bool:
        return self.print_data_log or self.decoder is not None


def file_kind(path: str) -> str:
    """What ``kafka-dump-log.sh`` dumps ``path`` as (``DumpLogSegments``: by the name's last suffix, so
    ``x.log.deleted`` is unknown to it; ``.checkpoint``: a KRaft snapshot, as the bootstrap file)."""
    name = os.path.basename(path)
    if name == BOOTSTRAP_CHECKPOINT or kraft_snapshot_id(name) is not None:
        return "kraft-snapshot"
    suffix = name[name.rfind("."):] if "." in name else ""
    if suffix == ".checkpoint":
        return "kraft-snapshot"
    kind = kind_of_suffix(suffix)
    return kind.value if kind is not None else "unknown"


def offset_from_name(path: str) -> int | None:
    head = os.path.basename(path).split(".")[0]
    return int(head) if head.isdigit() else None


def check_file(path: str) -> None:
    """One clear InputError for paths that cannot be dumped, before anything is printed."""
    if not os.path.lexists(path):
        raise InputError("no such file", path=path)
    if os.path.isdir(path):
        raise InputError("is a directory; dump takes files (use scan for directories)", path=path)
    if not os.path.exists(path):
        raise InputError("broken symbolic link", path=path)
    require_regular(path)  # a FIFO or device is refused before anything is printed (never opened blocking)


def _segment_base(path: str) -> int:
    """The base offset a segment's name starts with; NotASegmentError when it starts with none."""
    base = offset_from_name(path)
    if base is None:
        raise NotASegmentError("a segment file name must start with its base offset (20 digits)", path=path)
    return base


def dump_file(path: str, options: DumpOptions) -> Iterator[DumpRow]:
    check_file(path)
    kind = file_kind(path)
    if kind == "log":
        _segment_base(path)  # refused before anything is written
    yield FileStart(path=path, kind=kind)
    if kind in ("log", "kraft-snapshot"):
        yield from dump_log(path, options, kind)
    elif kind in ("index", "timeindex", "txnindex", "snapshot"):
        from forensics.report.dump_aux import dump_aux

        yield from dump_aux(path, kind)
    else:
        yield FindingRow(Finding(FindingKind.UNKNOWN_FILE, "ignoring unknown file type", path))


def dump_log(path: str, options: DumpOptions, kind: str = "log") -> Iterator[DumpRow]:
    name = os.path.basename(path)
    base = _segment_base(path) if kind == "log" else None
    if base is not None:
        yield LogStart(base_offset=base)
    elif name == BOOTSTRAP_CHECKPOINT:
        yield KraftSnapshotStart(end_offset=-1, epoch=-1, bootstrap=True)
    else:
        snapshot_id = kraft_snapshot_id(name)
        if snapshot_id is None:
            raise InputError("a KRaft snapshot name must be <20-digit offset>-<10-digit epoch>.checkpoint", path=path)
        end_offset, epoch = snapshot_id
        yield KraftSnapshotStart(end_offset=end_offset, epoch=epoch)
    runs = options.batch_runs and options.deep and options.decoder in RUN_DECODERS
    with SegmentWalk(path, end=options.max_bytes, verify_crc=options.verify_crc,
                     base_offset=base, headers=not runs) as walk:
        if runs:  # the text writer reads the headers' bytes of the batches it writes
            contents, skip, decoder = options.print_contents, options.skip_record_metadata, options.decoder
            for run in walk.runs():
                yield FindingRow(run) if type(run) is Finding else BatchRun(walk, run, contents, skip, decoder)
        else:
            for item in walk.items():
                if type(item) is Finding:
                    yield FindingRow(item)
                else:
                    yield from _dump_frame(walk, item, options)
        if walk.first_invalid_position is not None and options.max_bytes == INT32_MAX:
            yield TrailingBytes(byte_count=walk.size - walk.first_invalid_position, file_name=name)


def _dump_frame(walk: SegmentWalk, frame: Frame, options: DumpOptions) -> Iterator[DumpRow]:
    """The rows of one frame: a v2 batch's (:func:`_batch_rows`), a legacy entry's (:func:`_entry_rows`)."""
    try:
        headed = with_header(walk.buf, frame)  # framed without headers (a BatchRun's): a v2 one's is read here
    except ForensicsError as exc:
        return iter((FindingRow(_finding(exc, walk, frame)),))
    return _batch_rows(walk, headed, options) if headed.magic == 2 else _entry_rows(walk, headed, options)


def _batch_rows(walk: SegmentWalk, frame: V2Frame, options: DumpOptions) -> Iterator[DumpRow]:
    header = frame.header
    row = BatchRow(frame, header)
    yield row
    if not options.deep:
        return
    if options.decoder is None and not header.is_control:  # data records: the hot path
        yield from _data_records(walk, frame, row, options.print_contents)
        return
    try:
        yield from _record_rows(row, v2.iter_records(walk.buf, frame.position, header), options)
    except ForensicsError as exc:
        yield FindingRow(_finding(exc, walk, frame))


def _entry_rows(walk: SegmentWalk, frame: LegacyFrame, options: DumpOptions) -> Iterator[DumpRow]:
    try:
        entry = legacy.decode_entry(walk.buf, frame.position)
    except ForensicsError as exc:
        yield FindingRow(_finding(exc, walk, frame))
        return
    row = BatchRow(frame, entry)
    yield row
    if not options.deep:
        return
    if options.decoder is None:  # data records: the hot path
        yield from _legacy_records(walk, frame, entry, row, options.print_contents)
        return
    try:
        yield from _record_rows(row, legacy.iter_deep(entry), options)
    except ForensicsError as exc:
        yield FindingRow(_finding(exc, walk, frame))


def _record_rows(row: BatchRow, records: Iterable[Record | LegacyRecord], options: DumpOptions
                 ) -> Iterator[DumpRow]:
    """A RecordRow per record, its texts as the decoder writes them (a record that breaks a rule
    raises while iterating, after the good ones)."""
    for record in records:
        yield RecordRow(row, record, record_texts(row, record, options.decoder, options.print_contents,
                                                  options.skip_record_metadata))


def _data_records(walk: SegmentWalk, frame: V2Frame, row: BatchRow, print_contents: bool) -> Iterator[DumpRow]:
    """One DataRecords row for the batch; a record that breaks a rule ends it (the good records
    before it are kept) with a finding, as the per-record path does. A batch the C accelerator
    decodes whole travels as a RecordBlock (its records' bytes, no object per record)."""
    block = v2.record_block(walk.buf, frame.position, frame.header)
    if block is not None:
        yield DataRecords(row, block, print_contents)
        return
    records, error = walk.records(frame)
    if records or error is None:
        yield DataRecords(row, records, print_contents)
    if error is not None:
        yield FindingRow(_finding(error, walk, frame))


def _legacy_records(walk: SegmentWalk, frame: Frame, entry: LegacyRecord, row: BatchRow, print_contents: bool
                    ) -> Iterator[DumpRow]:
    """One DataRecords row for a legacy entry's records (itself, or a wrapper's inner messages);
    a wrapper that does not decode is a finding, as in the per-record path."""
    try:
        records = legacy.iter_deep(entry)
    except ForensicsError as exc:
        yield FindingRow(_finding(exc, walk, frame))
        return
    yield DataRecords(row, records, print_contents)


def frame_rows(run: BatchRun, index: int) -> Iterator[DumpRow]:
    """The rows of ``run.frames[index]``, as a dump without runs gives them."""
    options = DumpOptions(deep_iteration=True, print_data_log=run.print_contents,
                          skip_record_metadata=run.skip_record_metadata, decoder=run.decoder)
    return _dump_frame(run.walk, run.frames[index], options)


def expand_rows(rows: Iterable[DumpRow]) -> Iterator[DumpRow]:
    """The rows with every BatchRun row turned into its frames' rows and every DataRecords row
    into one RecordRow per record."""
    for row in rows:
        if type(row) is BatchRun:
            yield from expand_rows(r for i in range(len(row.frames)) for r in frame_rows(row, i))
        elif type(row) is DataRecords:
            yield from record_rows(row)
        else:
            yield row


def record_rows(row: DataRecords) -> Iterator[RecordRow]:
    batch = row.batch
    if row.print_contents:
        for record in row.records:
            yield RecordRow(batch, record, string_texts(record.key, record.value))
    else:
        for record in row.records:
            yield RecordRow(batch, record, NO_TEXT)


def _finding(exc: ForensicsError, walk: SegmentWalk, frame: Frame) -> Finding:
    kind = FindingKind.UNSUPPORTED_CODEC if isinstance(exc, UnsupportedCodecError) else FindingKind.CORRUPT_BATCH
    where = f" (byte {exc.position})" if exc.position is not None and exc.position != frame.position else ""
    return walk.finding(frame, f"{exc.message}{where}", kind)
