"""Every decoder entry point of ``forensics/codec`` and ``forensics/io/frames.py`` under hypothesis.

Contract (forensics/errors.py): on any input, a decoder raises nothing but ``ForensicsError``
subclasses; functions documented to report damage as data (``FrameScanner``, the index scans,
``txn_index_findings``, the ``format_*`` text of the offsets and metadata decoders) raise nothing.

:data:`ENTRY_POINTS` names, for every public function of those modules that reads untrusted bytes or
text, the property test that fuzzes it (here or in an older test file); :data:`NOT_DECODERS` says
why the others are not entry points. ``test_every_public_function_is_classified`` fails when a
function is added without being placed in one of the two tables.

Inputs here are mutations (bit flips, byte sets, inserts, deletes, truncations, zero fills,
duplicated chunks) of *real* Kafka 4.1.0 data (``tests/fuzz/real_seeds.py``): batches of every codec,
``__transaction_state`` / ``__consumer_offsets`` / ``__cluster_metadata`` records, snapshots, indexes and
checkpoint files; plus arbitrary bytes where the older tests do not already cover them. The C
accelerator and the pure-Python reference must agree on every mutated segment and batch.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import random
import uuid
import zlib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forensics.codec import (
    batch,
    broker_files,
    checkpoints,
    compression,
    control,
    crc,
    indexes,
    java_reader,
    legacy,
    metadata_records,
    offsets,
    offsets_schemas,
    primitives,
    schema,
    schema_json,
    snapshot,
    txnlog,
    txnlog_text,
)
from forensics.errors import (
    CorruptCheckpointError,
    CorruptIndexError,
    CorruptRecordError,
    CorruptSnapshotError,
    CorruptTransactionLogError,
    ForensicsError,
)
from forensics.io import frames
from tests.fuzz import real_seeds
from tests.fuzz.mutations import KINDS, mutate, real_sources
from tests.fuzz.strategies import maybe_none, mutated, ours, outcome, pure_python, recrc
from tests.kafka_python_support import build_seeds
from tests.tiers import examples

TESTS = Path(__file__).resolve().parents[1]
FUZZ = settings(max_examples=examples(200), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
HERE = "codec/test_fuzz_entry_points.py"
CONTRACT = "codec/test_fuzz_contract.py"

ENTRY_POINTS = {
    "batch.decode_header": f"{CONTRACT}::test_decode_header_raises_only_forensics_errors",
    "batch.compute_crc": f"{HERE}::test_real_v2_batches_mutated",
    "batch.crc_ok": f"{HERE}::test_real_v2_batches_mutated",
    "batch.iter_records": f"{HERE}::test_real_v2_batches_mutated",
    "batch.record_tuples": f"{HERE}::test_real_v2_batches_mutated",
    "batch.python_record_tuples": f"{HERE}::test_real_v2_batches_mutated",
    "batch.record_block": f"{HERE}::test_real_v2_batches_mutated",
    "legacy.record_tuples": f"{HERE}::test_legacy_inner_records",
    "legacy.deep_tuples": f"{HERE}::test_legacy_inner_records",
    "legacy.python_deep_tuples": f"{HERE}::test_legacy_inner_records",
    "legacy.decode_entry": f"{CONTRACT}::test_legacy_decode_entry_and_iter_deep_raise_only_forensics_errors",
    "legacy.iter_deep": f"{CONTRACT}::test_legacy_decode_entry_and_iter_deep_raise_only_forensics_errors",
    "legacy.inner_records": f"{HERE}::test_legacy_inner_records",
    "control.decode_control_key": f"{HERE}::test_real_control_records_mutated",
    "control.decode_end_txn_marker": f"{HERE}::test_real_control_records_mutated",
    "txnlog.decode_key": f"{HERE}::test_real_transaction_log_records_mutated",
    "txnlog.decode_value": f"{HERE}::test_real_transaction_log_records_mutated",
    "txnlog_text.format_key_json": f"{HERE}::test_real_transaction_log_records_mutated",
    "txnlog_text.format_value_json": f"{HERE}::test_real_transaction_log_records_mutated",
    "txnlog_text.format_record_key_and_value": f"{HERE}::test_real_transaction_log_records_mutated",
    "snapshot.decode_snapshot": f"{HERE}::test_real_snapshots_mutated",
    "snapshot.format_snapshot_entry": f"{HERE}::test_real_snapshots_mutated",
    **{f"indexes.{n}": f"{HERE}::test_real_indexes_mutated" for n in (
        "is_zero", "iter_offset_index", "scan_offset_index", "iter_time_index", "scan_time_index", "iter_txn_index",
        "scan_txn_index", "txn_index_findings", "offset_index_dump_lines", "time_index_dump_lines",
        "txn_index_dump_lines", "last_offset_entry", "last_time_entry")},
    **{f"checkpoints.{n}": f"{HERE}::test_real_checkpoint_files_mutated" for n in (
        "parse_checkpoint", "parse_offset_checkpoint", "parse_leader_epoch_checkpoint", "decode_kafka_uuid",
        "parse_partition_metadata")},
    **{f"broker_files.{n}": f"{HERE}::test_real_checkpoint_files_mutated" for n in (
        "parse_properties", "parse_meta_properties", "parse_clean_shutdown", "parse_quorum_state")},
    **{f"text_lines.{n}": f"{HERE}::test_real_checkpoint_files_mutated" for n in (
        "as_bytes", "decode_text", "text_lines", "java_split", "java_int", "line_int")},
    **{f"offsets.{n}": f"{HERE}::test_real_offsets_records_mutated" for n in (
        "decode_offsets_record", "decode_offset_commit", "decode_group_metadata", "format_offsets_record",
        "format_offsets_key", "format_offsets_value", "format_offsets_line_suffix")},
    **{f"metadata_records.{n}": f"{HERE}::test_real_metadata_records_mutated" for n in (
        "decode_metadata_record", "format_metadata_record")},
    **{f"control.{n}": f"{HERE}::test_real_control_records_mutated" for n in (
        "read_control", "decode_control_record", "format_control_record")},
    "control.read_control_batch": f"{HERE}::test_real_v2_batches_mutated",
    "schema.read_message": f"{HERE}::test_every_message_schema_on_arbitrary_bytes",
    "schema_json.write_json": f"{HERE}::test_every_message_schema_on_arbitrary_bytes",
    "java_reader.java_string": f"{HERE}::test_every_message_schema_on_arbitrary_bytes",
    "compression.decompress": f"{HERE}::test_real_v2_batches_mutated",
    "compression.xxh32": "codec/test_compression.py::test_xxh32_property",
    "compression.codec_name": f"{HERE}::test_small_readers_on_arbitrary_input",
    "crc.crc32c": f"{HERE}::test_small_readers_on_arbitrary_input",
    "crc.crc32": f"{HERE}::test_small_readers_on_arbitrary_input",
    **{f"primitives.{n}": f"{CONTRACT}::test_primitive_readers_raise_only_forensics_errors" for n in (
        "read_varint", "read_varlong", "read_int8", "read_int16", "read_int32", "read_uint32", "read_int64",
        "read_string16", "read_compact_string", "read_compact_array_len", "read_tagged_fields")},
    "primitives.read_uvarint": f"{HERE}::test_small_readers_on_arbitrary_input",
    "primitives.read_bytes": f"{HERE}::test_small_readers_on_arbitrary_input",
    "frames.FrameScanner": f"{HERE}::test_frame_scanner_on_mutated_real_segments",
}
NOT_DECODERS = {
    "batch.increment_sequence": "int arithmetic on decoded fields",
    "legacy.entry_timestamp": "a field of an entry the frame scanner framed (its bounds checked there)",
    "legacy.timestamp_type": "name of a decoded field",
    "control.encode_end_txn_marker": "encoder (fixtures and tests)",
    "txnlog.java_string_hash": "hash of a decoded string",
    "txnlog.java_utils_abs": "int arithmetic",
    "txnlog.transaction_partition_for": "partition of a decoded id, for a configured count",
    "snapshot.decrement_sequence": "int arithmetic on decoded fields",
    "snapshot.format_optional_long": "text of a decoded int",
    "indexes.format_offset_position": "text of a decoded entry",
    "indexes.format_timestamp_offset": "text of a decoded entry",
    "indexes.format_aborted_txn": "text of a decoded entry",
    "checkpoints.encode_kafka_uuid": "encoder",
    "text_lines.corrupt": "builds the error the text-file parsers raise",
    **{f"primitives.{n}": "encoder" for n in ("encode_uvarint", "encode_varint", "encode_varlong")},
    "offsets_schemas.record_schemas": "schema lookup by record type",
    **{f"metadata_typed.{n}": "rules on decoded records (ValueError where Kafka throws)" for n in (
        "partition_registration", "apply_partition_change")},
    "metadata_typed.typed_record": "typed view of fields the metadata decoder (fuzzed) already read",
    "metadata_typed.reserved_directory": "name of a decoded directory id",
    **{f"schema.{n}": "schema definitions (trusted, built into the code)" for n in (
        "parse_versions", "intersect", "subtract", "cond", "F", "S", "field_flexible")},
    **{f"java_reader.{n}": "rendering helpers (trusted, built into the code)" for n in (
        "uuid_to_string", "uuid_from_string", "i32")},
    **{f"schema_json.{n}": "rendering helpers (trusted, built into the code)" for n in ("json_string", "java_double")},
    "schema_encode.encode_message": "the test fixtures' encoder",
    "crc.crc32c_pure": "the reference the accelerated crc32c is checked against",
    "frames.Frame": "result type",
    # typing views of Frame (the same class at run time: what a scanner asked for headers yields)
    "frames.V2Frame": "result type",
    "frames.LegacyFrame": "result type",
    "frames.HeadedFrame": "result type",
}
MODULES = ("batch", "legacy", "control", "txnlog", "snapshot", "indexes", "checkpoints", "broker_files", "text_lines",
           "offsets", "offsets_schemas", "metadata_records", "metadata_typed", "schema", "schema_json",
           "schema_encode", "java_reader", "txnlog_text", "compression", "primitives", "crc")


def public_functions():
    found = set()
    for name in MODULES:
        mod = importlib.import_module(f"forensics.codec.{name}")
        found |= {f"{name}.{n}" for n, o in vars(mod).items()  # (public names bound to the C accelerator too)
                  if not n.startswith("_") and (inspect.isfunction(o) and o.__module__ == mod.__name__
                                                or inspect.isbuiltin(o) and o.__module__ == "forensics._speedups")}
    found |= {f"frames.{n}" for n, o in vars(frames).items()
              if not n.startswith("_") and inspect.isclass(o) and o.__module__ == frames.__name__}
    return found


def test_every_public_function_is_classified():
    assert not set(ENTRY_POINTS) & set(NOT_DECODERS)
    missing = public_functions() - set(ENTRY_POINTS) - set(NOT_DECODERS)
    assert not missing, f"public functions with no fuzz test and no reason: {sorted(missing)}"
    assert not (set(ENTRY_POINTS) | set(NOT_DECODERS)) - public_functions(), "tables name functions that are gone"
    for ref in set(ENTRY_POINTS.values()):
        path, test = ref.split("::")
        assert f"def {test}(" in (TESTS / path).read_text(encoding="utf-8"), f"{ref} does not exist"


# -- frames and batches ---------------------------------------------------------------------------------

SMALL_SEGMENTS = [s for s in real_sources() if len(s.data) <= 6000]
BASES = st.sampled_from([None, 0, 5, 2**31, 2**63 - 1, 2**63, 10**20 - 1])


@FUZZ
@given(case=st.integers(0, 2**32), kind=st.sampled_from(KINDS), base=BASES, verify=st.booleans())
def test_frame_scanner_on_mutated_real_segments(case, kind, base, verify):
    """Never raises, accounts for every byte, and gives the same frames and findings with and without
    the C accelerator (also for base offsets and damaged offsets beyond int64)."""
    rng = random.Random(case)
    src = rng.choice(SMALL_SEGMENTS)
    data = bytes(mutate(rng, kind, src, SMALL_SEGMENTS).data)
    runs = []
    for ctx in (contextlib.nullcontext(), pure_python()):
        with ctx:
            scanner = frames.FrameScanner(data, "m.log", base_offset=base, verify_crc=verify, headers=True)
            runs.append((list(scanner), scanner.findings, scanner.first_invalid_position, scanner.valid_bytes))
            bulk = frames.FrameScanner(data, "m.log", base_offset=base, verify_crc=verify)  # records of every frame
            records = []
            try:
                records.extend(bulk.record_tuples())
            except ForensicsError as exc:
                records.append((type(exc).__name__, str(exc)))
            runs.append((records, bulk.findings, bulk.first_invalid_position, bulk.valid_bytes))
    assert runs[0] == runs[2] and runs[1] == runs[3]
    spans = sorted([(f.position, f.end) for f in runs[0][0]] + [(f.position, f.end_position) for f in runs[0][1]])
    reach = 0
    for a, b in spans:
        assert a <= reach, f"bytes {reach}..{a} are in no frame and no finding"
        reach = max(reach, b)
    assert reach >= len(data)


@FUZZ
@given(buf=mutated(real_seeds.v2_batches()), fix_crc=st.booleans())
def test_real_v2_batches_mutated(buf, fix_crc):
    """Header, checksum and records (decompressed) of mutated real batches of every codec; with the
    CRC recomputed the damage reaches the record and decompression code. Accelerated and pure records agree."""
    buf = bytearray(buf)
    if fix_crc:
        recrc(buf)
    data = bytes(buf)
    header = ours(batch.decode_header, data, 0)
    if isinstance(header, ForensicsError):
        assert len(data) < 61
        return
    assert isinstance(batch.crc_ok(data, 0, header), bool)
    assert 0 <= batch.compute_crc(data, 0, header) < 2**32
    def decoded():
        return (outcome(lambda: list(batch.iter_records(data, 0, header))),
                outcome(lambda: list(batch.record_tuples(data, 0, header))),
                outcome(lambda: list(batch.python_record_tuples(data, 0, header))))

    fast = decoded()
    with pure_python():
        slow = decoded()
    assert fast == slow
    records, tuples, python_tuples = fast
    if records[0] == "ok":
        assert len(records[1]) == header.records_count
        assert tuples == python_tuples == ("ok", [r[:5] for r in records[1]])
    else:
        assert tuples[0] == python_tuples[0] == records[0]
    block = ours(batch.record_block, data, 0, header)  # checked whole, or None: the decoder says why
    assert block is None or (records[0] == "ok" and list(block) == records[1] and len(block) == len(records[1]))
    if (records[0] == "ok" and batch.native is not None and header.codec in (0,) + batch.NATIVE_CODECS
            and header.batch_length >= batch.MIN_BATCH_LENGTH):
        assert block is not None  # a batch that decodes is taken whole (a shorter length: the decoder's call)
    if header.is_control:
        ours(control.read_control_batch, data, 0, header)


LEGACY_SEEDS = [s for s in build_seeds() if len(s) > 16 and s[16] in (0, 1)]


@FUZZ
@given(buf=mutated(LEGACY_SEEDS))
def test_legacy_inner_records(buf):
    def deep():
        return outcome(lambda: list(legacy.deep_tuples(buf, 0))), outcome(lambda: list(legacy.python_deep_tuples(buf, 0)))

    fast = deep()
    with pure_python():
        assert deep() == fast
    assert fast[0] == fast[1]
    entry = ours(legacy.decode_entry, buf, 0)
    if isinstance(entry, ForensicsError):
        assert fast[0][0] == type(entry).__name__
        return
    projected = outcome(lambda: list(legacy.record_tuples(entry)))
    assert projected == fast[0]
    inner = ours(legacy.inner_records, entry)
    if not isinstance(inner, ForensicsError):
        assert inner and all(r.codec == 0 and r.magic in (0, 1) for r in inner)
        assert projected == ("ok", [(r.offset, r.timestamp, r.key, r.value, ()) for r in inner])


# -- record keys and values -----------------------------------------------------------------------------

TXN = real_seeds.records("__transaction_state")


@FUZZ
@given(key=maybe_none(mutated([k for k, _ in TXN])), value=maybe_none(mutated([v for _, v in TXN if v])))
def test_real_transaction_log_records_mutated(key, value):
    for decode, part in ((txnlog.decode_key, key), (txnlog.decode_value, value)):
        got = ours(decode, part)
        if isinstance(got, ForensicsError):
            assert isinstance(got, CorruptTransactionLogError) and got.position is not None
        elif isinstance(got, txnlog.TransactionLogKey):
            assert isinstance(txnlog_text.format_key_json(got), str)
        elif isinstance(got, txnlog.TransactionLogValue):
            assert isinstance(txnlog_text.format_value_json(got), str)
    if key is None:
        assert isinstance(ours(txnlog_text.format_record_key_and_value, key, value, 3), CorruptTransactionLogError)
    else:
        k, v = txnlog_text.format_record_key_and_value(key, value, 3)
        assert isinstance(k, str) and (v is None or isinstance(v, str))


OFFSETS = real_seeds.records("__consumer_offsets")


@FUZZ
@given(key=maybe_none(mutated([k for k, _ in OFFSETS])), value=maybe_none(mutated([v for _, v in OFFSETS if v])))
def test_real_offsets_records_mutated(key, value):
    for decode in (offsets.decode_offsets_record, offsets.decode_offset_commit, offsets.decode_group_metadata):
        ours(decode, key, value)
    if key is None:  # Kafka's tool aborts: our error, nothing else
        assert isinstance(ours(offsets.format_offsets_record, key, value, 9), CorruptRecordError)
        return
    k, v = offsets.format_offsets_record(key, value, 9)  # text, never an exception
    assert isinstance(k, str) and (v is None or isinstance(v, str))
    assert offsets.format_offsets_value(key, value, 9) == v
    assert offsets.format_offsets_line_suffix(key, value, 9) == " key: " + k + ("" if v is None else " payload: " + v)
    assert isinstance(offsets.format_offsets_key(key, 9), str)


METADATA = real_seeds.records("__cluster_metadata")


@FUZZ
@given(value=maybe_none(mutated([v for _, v in METADATA if v])))
def test_real_metadata_records_mutated(value):
    rec = ours(metadata_records.decode_metadata_record, value)
    if not isinstance(rec, ForensicsError):
        ours(lambda: rec.typed)
    text = metadata_records.format_metadata_record(value, 11)  # text, never an exception
    assert text.startswith("Error at 11, skipping. ") == isinstance(rec, ForensicsError)


CONTROL = real_seeds.records(None, control=True)


@FUZZ
@given(key=maybe_none(mutated([k for k, _ in CONTROL])), value=maybe_none(mutated([v for _, v in CONTROL if v])))
def test_real_control_records_mutated(key, value):
    ckey = ours(control.decode_control_key, key)
    if not isinstance(ckey, ForensicsError):
        ours(control.decode_end_txn_marker, ckey, value)
    read = ours(control.read_control, key, value)
    assert isinstance(read, (tuple, CorruptRecordError))
    ours(control.decode_control_record, key, value)
    text = ours(control.format_control_record, key, value)
    assert isinstance(text, (str, CorruptRecordError))


MESSAGES = ([m for t in range(16) for m in (offsets_schemas.record_schemas(t) or ())]
            + list(metadata_records.METADATA_MESSAGES.values())
            + [m for m, _ in control.KRAFT_CONTROL_MESSAGES.values()]
            + [offsets_schemas.CONSUMER_PROTOCOL_SUBSCRIPTION,
               offsets_schemas.CONSUMER_PROTOCOL_ASSIGNMENT])


@FUZZ
@given(msg=st.sampled_from(MESSAGES), version=st.integers(-1, 20),
       raw=st.one_of(st.binary(max_size=120), mutated([v for _, v in METADATA if v] + [v for _, v in OFFSETS if v])))
def test_every_message_schema_on_arbitrary_bytes(msg, version, raw):
    data = ours(schema.read_message, msg, java_reader.JavaReader(raw), version)
    if isinstance(data, ForensicsError):
        assert isinstance(data, java_reader.SchemaReadError)
        return
    assert isinstance(ours(schema_json.write_json, msg, data, version), (str, java_reader.SchemaReadError))
    assert isinstance(java_reader.java_string(raw), str)


# -- files -------------------------------------------------------------------------------------------------


@FUZZ
@given(buf=mutated(real_seeds.files("snapshot")), verify=st.booleans())
def test_real_snapshots_mutated(buf, verify):
    snap = ours(snapshot.decode_snapshot, buf, verify_crc=verify)
    if isinstance(snap, ForensicsError):
        assert isinstance(snap, CorruptSnapshotError) and snap.position is not None
        return
    assert snapshot.SNAPSHOT_HEADER.size + 46 * len(snap.entries) + snap.trailing_bytes == len(buf)
    for entry in snap.entries:
        assert snapshot.format_snapshot_entry(entry).startswith(f"producerId: {entry.producer_id} ")


INDEX_SEEDS = real_seeds.files("index") + real_seeds.files("timeindex") + real_seeds.files("txnindex")


@FUZZ
@given(buf=mutated(INDEX_SEEDS), base=st.integers(0, 2**62), start=st.integers(0, 300), end=maybe_none(st.integers(0, 300)))
def test_real_indexes_mutated(buf, base, start, end):
    """Everything but ``txn_index_dump_lines`` is documented never to raise."""
    for scan, it, last in ((indexes.scan_offset_index, indexes.iter_offset_index, indexes.last_offset_entry),
                           (indexes.scan_time_index, indexes.iter_time_index, indexes.last_time_entry)):
        result = scan(buf, base)
        assert list(it(buf, base)) == list(result.entries)
        found = last(buf, base)  # bisection: the same last entry wherever the index is entries then zeros
        assert (found is None) == (result.entry_count == 0)
        if result.zero_tail_start is not None or result.stop_position is None:
            assert found == (result.entries[-1] if result.entries else None)
    indexes.offset_index_dump_lines(buf, base, "x.index")
    indexes.time_index_dump_lines(buf, base)
    txn = indexes.scan_txn_index(buf)
    assert list(indexes.iter_txn_index(buf)) == list(txn.entries)
    for f in indexes.txn_index_findings(txn, "x.txnindex", len(buf)):
        assert 0 <= f.position < f.end_position <= len(buf)
    lines = ours(indexes.txn_index_dump_lines, buf)
    assert isinstance(lines, tuple) or (isinstance(lines, CorruptIndexError) and lines.position is not None)
    assert indexes.is_zero(buf, min(start, len(buf)), end if end is None else min(end, len(buf))) in (True, False)


CHECKPOINTS = {
    "offset-checkpoint": checkpoints.parse_offset_checkpoint,
    "leader-epoch-checkpoint": checkpoints.parse_leader_epoch_checkpoint,
    "partition.metadata": checkpoints.parse_partition_metadata,
    "meta.properties": broker_files.parse_meta_properties,
    "quorum-state": broker_files.parse_quorum_state,
    "clean-shutdown": broker_files.parse_clean_shutdown,
}


@FUZZ
@given(kind=st.sampled_from(sorted(CHECKPOINTS)), data=st.data(), as_text=st.booleans())
def test_real_checkpoint_files_mutated(kind, data, as_text):
    raw = data.draw(mutated(real_seeds.files(kind)))
    content = raw.decode("latin-1") if as_text else raw
    for parse in (CHECKPOINTS[kind], broker_files.parse_properties,
                  lambda c, p: checkpoints.parse_checkpoint(c, p, 0, lambda fields: fields or None)):
        got = ours(parse, content, "f")
        assert not isinstance(got, ForensicsError) or (isinstance(got, CorruptCheckpointError) and got.path == "f")
    word = raw.split(b"\n")[-1].decode("latin-1")[-24:]
    assert isinstance(ours(checkpoints.decode_kafka_uuid, word, "f", 0), (uuid.UUID, CorruptCheckpointError))


# -- small readers ----------------------------------------------------------------------------------------


@FUZZ
@given(buf=st.binary(max_size=24), pos=st.integers(0, 26), end=st.integers(0, 26), width=st.integers(1, 10),
       length=st.integers(-3, 30), codec=st.integers(-2**31, 2**31))
def test_small_readers_on_arbitrary_input(buf, pos, end, width, length, codec):
    end = min(end, len(buf))
    for call in (lambda: primitives.read_uvarint(buf, pos, end, width),
                 lambda: primitives.read_bytes(buf, pos, end, length)):
        got = ours(call)
        if not isinstance(got, ForensicsError):
            assert pos <= got[1] <= end
    assert compression.codec_name(codec) == compression.CODEC_NAMES.get(codec, f"invalid({codec})")
    assert crc.crc32(buf) == zlib.crc32(buf) and crc.crc32c(buf) == crc.crc32c_pure(buf)
