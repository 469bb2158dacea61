"""The rows of a dump (``kafka-dump-log.sh``'s lines as data), as :mod:`forensics.report.dump` yields them;
the renderers (``render/dump_text``, ``render/dump_json``) turn them into text or JSON. (A partition's
producer events, what the state folds read, are :mod:`forensics.state.events`.)

Each row kind's JSON object is declared once, here, beside the kind (:data:`JSON_OBJECTS`, which
``render/dump_json`` compiles into one builder per kind): its ``"type"`` and its keys in order. A row
that only holds its own values (a file's start, a note, trailing bytes) is a frozen dataclass whose fields
are its keys (:mod:`forensics.columns`: the field's name in lowerCamelCase unless ``column(json=...)`` says
otherwise); a row that holds what the codec decoded (a batch's frame and header, a record, an index
entry) is a NamedTuple (made by the million) whose object is a :class:`JsonObject` of :class:`Key` s,
each naming the attributes that lead from the row to its value."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING, NamedTuple

from forensics.codec.batch import BatchHeader, Record, RecordBlock
from forensics.codec.legacy import LegacyRecord
from forensics.columns import JsonRow, column
from forensics.dataclass_fast import dataclass
from forensics.findings import Finding
from forensics.io.frames import Frame

if TYPE_CHECKING:
    from forensics.io.segment import SegmentWalk

# How JSON writes a key's value (``render/dump_json`` does each): as it is (a NamedTuple as an array, as
# ``json`` writes one), a compression codec's name (``CompressionType.name``, from its number), true unless
# it is False (a frame's ``crc_ok``: None when the CRC was not checked), bytes as UTF-8 text when they are
# valid UTF-8, else as base64 after ``base64:``.
AS_IS, CODEC_NAME, NOT_FALSE, TEXT_OR_BASE64 = "", "codec name", "not false", "text or base64"


class Key(NamedTuple):
    """One key of a dump row's JSON object: its ``name``; its value's ``path``, the attributes that lead
    to it from the row (``frame.position``; from a list's item, in ``each``); how JSON ``write`` s it (one
    of :data:`AS_IS` ...); ``omit_none``: no key at all when the value is None; ``each``: the value is a
    list of objects, each of these keys of one item."""

    name: str
    path: str
    write: str = AS_IS
    omit_none: bool = False
    each: tuple[Key, ...] = ()


class JsonObject(NamedTuple):
    """A dump row's JSON object: ``"type": tag`` first, then its ``keys`` in order, then (``rest``: a
    path from the row, or :data:`THE_ROW`) the items of the object that value writes itself as (its
    ``as_json``: a finding's, a dataclass row's own)."""

    tag: str
    keys: tuple[Key, ...]
    rest: str = ""


class Variants(NamedTuple):
    """The JSON objects of a row kind whose object depends on what one of its fields holds (``on``): the
    object of the first type (``objects``, in order) that value is an instance of."""

    on: str
    objects: tuple[tuple[type, JsonObject], ...]


class ByTag(NamedTuple):
    """The JSON objects of a row kind that holds its ``"type"`` (in its field ``on``): the object of that tag."""

    on: str
    objects: tuple[JsonObject, ...]


THE_ROW = "."  # JsonObject.rest: the row itself


def own_keys(tag: str, kind: type) -> JsonObject:
    """The JSON object of a dataclass row kind whose columns are its keys: its tag, then its
    :meth:`~forensics.columns.JsonRow.as_json` (what its declaration says, written as every row's is)."""
    return JsonObject(tag, (), rest=THE_ROW)


@dataclass(frozen=True, slots=True)
class FileStart(JsonRow):
    path: str  # as given by the user (Kafka prints it verbatim)
    kind: str  # log | index | timeindex | txnindex | snapshot | kraft-snapshot | unknown


@dataclass(frozen=True, slots=True)
class LogStart(JsonRow):
    base_offset: int


@dataclass(frozen=True, slots=True)
class KraftSnapshotStart(JsonRow):
    end_offset: int
    epoch: int
    bootstrap: bool = False


class BatchRow(NamedTuple):
    frame: Frame  # with its header when v2 (Frame.header set)
    header: BatchHeader | LegacyRecord  # a v2 batch's (magic 2), a legacy entry's (magic 0 or 1)


BATCH_OBJECTS = Variants("header", (
    (BatchHeader, JsonObject("batch", (  # a v2 batch (magic 2)
        Key("position", "frame.position"), Key("size", "frame.size"), Key("magic", "header.magic"),
        Key("baseOffset", "header.base_offset"), Key("lastOffset", "header.last_offset"),
        Key("count", "header.records_count"), Key("baseSequence", "header.base_sequence"),
        Key("lastSequence", "header.last_sequence"), Key("producerId", "header.producer_id"),
        Key("producerEpoch", "header.producer_epoch"), Key("partitionLeaderEpoch", "header.partition_leader_epoch"),
        Key("isTransactional", "header.is_transactional"), Key("isControl", "header.is_control"),
        Key("deleteHorizonMs", "header.delete_horizon_ms"), Key("timestampType", "header.timestamp_type"),
        Key("baseTimestamp", "header.base_timestamp"), Key("maxTimestamp", "header.max_timestamp"),
        Key("compression", "header.codec", CODEC_NAME), Key("crc", "header.crc"),
        Key("isValid", "frame.crc_ok", NOT_FALSE),
    ))),
    (LegacyRecord, JsonObject("batch", (  # a legacy entry (magic 0 or 1): its header is its LegacyRecord
        Key("position", "frame.position"), Key("size", "frame.size"), Key("magic", "header.magic"),
        Key("offset", "header.offset"), Key("timestampType", "header.timestamp_type"),
        Key("timestamp", "header.timestamp"), Key("compression", "header.codec", CODEC_NAME),
        Key("crc", "header.crc"), Key("isValid", "header.is_valid"),
    ))),
))


class DecodedText(NamedTuple):
    """Kafka dump texts of one record: control text or key/payload as the chosen decoder prints them."""

    control: str | None = None
    key: str | None = None
    payload: str | None = None


class RecordRow(NamedTuple):
    batch: BatchRow
    record: Record | LegacyRecord
    text: DecodedText


_RECORD_HEAD = (Key("batchPosition", "batch.frame.position"), Key("offset", "record.offset"),
                Key("timestamp", "record.timestamp"), Key("keySize", "record.key_size"),
                Key("valueSize", "record.value_size"))
_RECORD_TEXTS = (Key("control", "text.control", omit_none=True), Key("key", "text.key", omit_none=True),
                 Key("payload", "text.payload", omit_none=True))
HEADER_KEYS = (Key("key", "key"), Key("value", "value", TEXT_OR_BASE64))  # a v2 record's Header
RECORD_OBJECTS = Variants("record", (
    (Record, JsonObject("record", (  # of a v2 batch (magic 2)
        *_RECORD_HEAD, Key("sequence", "record.sequence"), Key("headers", "record.headers", each=HEADER_KEYS),
        *_RECORD_TEXTS))),
    (LegacyRecord, JsonObject("record", (  # of a legacy entry (magic 0 or 1)
        *_RECORD_HEAD, Key("crc", "record.crc"), Key("isValid", "record.is_valid"), *_RECORD_TEXTS))),
))


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

    kind: str  # its JSON object's "type": the tag of one of ENTRY_OBJECTS (INDEX_ENTRY.tag, ...)
    entry: object  # the typed codec object (NamedTuple or dataclass)
    text: str  # Kafka 4.1 kafka-dump-log.sh line for it


# An entry's keys are its codec fields' names as they are (snake_case, as the first JSON dumps wrote them).
INDEX_ENTRY = JsonObject("index_entry", (  # an OffsetPosition
    Key("offset", "entry.offset"), Key("position", "entry.position")))
TIMEINDEX_ENTRY = JsonObject("timeindex_entry", (  # a TimestampOffset
    Key("timestamp", "entry.timestamp"), Key("offset", "entry.offset")))
TXNINDEX_ENTRY = JsonObject("txnindex_entry", (  # an AbortedTxn
    Key("version", "entry.version"), Key("producer_id", "entry.producer_id"),
    Key("first_offset", "entry.first_offset"), Key("last_offset", "entry.last_offset"),
    Key("last_stable_offset", "entry.last_stable_offset")))
SNAPSHOT_ENTRY = JsonObject("snapshot_entry", (  # a ProducerStateEntry
    Key("producer_id", "entry.producer_id"), Key("producer_epoch", "entry.producer_epoch"),
    Key("coordinator_epoch", "entry.coordinator_epoch"), Key("last_timestamp", "entry.last_timestamp"),
    Key("current_txn_first_offset", "entry.current_txn_first_offset"),
    Key("batch_metadata", "entry.batch_metadata"),  # a BatchMetadata, or None: its four fields as an array
    Key("raw", "entry.raw"),  # the ProducerEntry as stored: its eight fields as an array
    Key("position", "entry.position")))
ENTRY_OBJECTS = ByTag("kind", (INDEX_ENTRY, TIMEINDEX_ENTRY, TXNINDEX_ENTRY, SNAPSHOT_ENTRY))


@dataclass(frozen=True, slots=True)
class NoteRow(JsonRow):
    text: str


@dataclass(frozen=True, slots=True)
class TrailingBytes(JsonRow):
    byte_count: int = field(metadata=column(json="count"))
    file_name: str = field(metadata=column(json="file"))


class FindingRow(NamedTuple):
    finding: Finding


DumpRow = (
    FileStart | LogStart | KraftSnapshotStart | BatchRow | RecordRow | DataRecords | BatchRun | EntryRow | NoteRow | TrailingBytes | FindingRow
)

# Every row kind's JSON object (DataRecords and BatchRun are written as the rows they stand for:
# ``report.dump.expand_rows``).
JSON_OBJECTS: dict[type, JsonObject | Variants | ByTag] = {
    FileStart: own_keys("file", FileStart),
    LogStart: own_keys("log_start", LogStart),
    KraftSnapshotStart: own_keys("kraft_snapshot", KraftSnapshotStart),
    BatchRow: BATCH_OBJECTS,
    RecordRow: RECORD_OBJECTS,
    EntryRow: ENTRY_OBJECTS,
    NoteRow: own_keys("note", NoteRow),
    TrailingBytes: own_keys("trailing_bytes", TrailingBytes),
    FindingRow: JsonObject("finding", (), rest="finding"),  # its items: Finding.as_json's
}
