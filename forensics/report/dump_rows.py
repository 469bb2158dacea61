"""The rows of a dump (``kafka-dump-log.sh``'s lines as data), as :mod:`forensics.report.dump` yields them;
the renderers (``render/dump_text``, ``render/dump_json``) turn them into text or JSON. (A partition's
producer events, what the state folds read, are :mod:`forensics.state.events`.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from forensics.codec.batch import BatchHeader, Record, RecordBlock
from forensics.codec.legacy import LegacyRecord
from forensics.findings import Finding
from forensics.io.frames import Frame

if TYPE_CHECKING:
    from forensics.io.segment import SegmentWalk


class FileStart(NamedTuple):
    path: str  # as given by the user (Kafka prints it verbatim)
    kind: str  # log | index | timeindex | txnindex | snapshot | kraft-snapshot | unknown


class LogStart(NamedTuple):
    base_offset: int


class KraftSnapshotStart(NamedTuple):
    end_offset: int
    epoch: int
    bootstrap: bool = False


class BatchRow(NamedTuple):
    frame: Frame  # with its header when v2 (Frame.header set)
    header: BatchHeader | LegacyRecord  # a v2 batch's (magic 2), a legacy entry's (magic 0 or 1)


class DecodedText(NamedTuple):
    """Kafka dump texts of one record: control text or key/payload as the chosen decoder prints them."""

    control: str | None = None
    key: str | None = None
    payload: str | None = None


class RecordRow(NamedTuple):
    batch: BatchRow
    record: Record | LegacyRecord
    text: DecodedText


class DataRecords(NamedTuple):
    """The data records of one batch (v2, or a legacy entry deep) in one row: the dump's hot path,
    where a row per record would cost more than decoding it. Key and payload print as Kafka's
    ``StringDecoder`` does (UTF-8, invalid bytes replaced) when ``print_contents``; ``expand_rows``
    turns it into one RecordRow per record for consumers that want them."""

    batch: BatchRow
    records: Sequence[Record | LegacyRecord] | RecordBlock  # a RecordBlock: v2 records' bytes, decoded on demand
    print_contents: bool


class BatchRun(NamedTuple):
    """Consecutive entries of one segment with no finding between them (a run of
    :meth:`~forensics.io.segment.SegmentWalk.runs`), in one row, for a writer that writes the lines
    of many small batches in one call (``DumpOptions.batch_runs``; the text writer hands the C
    accelerator the run). :func:`forensics.report.dump.frame_rows` gives the rows of one of its
    frames as a dump without runs has them (BatchRow, DataRecords or RecordRows, FindingRows)."""

    walk: SegmentWalk  # open while the dump's rows are read
    frames: Sequence[Frame]
    print_contents: bool
    skip_record_metadata: bool
    decoder: str | None = None  # None, "transaction-log" or "offsets" (DumpOptions.decoder)


class EntryRow(NamedTuple):
    """One entry of an index, time index, txn index or producer snapshot (already formatted)."""

    kind: str
    entry: object  # the typed codec object (NamedTuple or dataclass)
    text: str  # Kafka 4.1 kafka-dump-log.sh line for it


class NoteRow(NamedTuple):
    text: str


class TrailingBytes(NamedTuple):
    byte_count: int  # (not ``count``: a tuple's method)
    file_name: str


class FindingRow(NamedTuple):
    finding: Finding


DumpRow = (
    FileStart | LogStart | KraftSnapshotStart | BatchRow | RecordRow | DataRecords | BatchRun | EntryRow | NoteRow | TrailingBytes | FindingRow
)
