/* forensics._speedups: the optional C accelerator of kafka-forensics, and its method table.
 *
 * Every loop here exists in pure Python, which stays the reference: the accelerator takes the
 * healthy common case and hands everything else back (None, or the Python function registered
 * for it), so results and error messages are the same with or without it (tests/codec/ compares
 * the two on the same bytes; KAFKA_FORENSICS_PURE=1 runs everything without it). forensics/_speedups.pyi
 * gives each function's signature. Its parts:
 *
 *  - pytypes.c: the Python objects made and read: the result types and fallbacks the Python side
 *    registers (init_frames, init_records, init_legacy, init_fallback), the one check every entry
 *    point makes that they were (registered()), make_tuple() and tuple_int64().
 *  - crc.c: CRC-32C (SSE4.2 or slicing-by-8) and CRC-32.
 *  - bits.c: attribute_bits(), BatchHeader's attribute properties (codec, is_transactional, ...).
 *  - segment_frames.c: scan() frames a segment's consecutive entries (v2 batches and legacy
 *    messages) while nothing needs a finding (forensics/io/frames.py); scan_tuples() gives their
 *    records' tuples instead of Frames.
 *  - fold.c: fold() takes the same healthy v2 batches without a Frame each: the counters of a
 *    work unit and its producers' event runs (forensics/pipeline/units.py).
 *  - records.c: records() decodes a v2 batch's records (forensics/codec/batch.py), as Record or
 *    as (offset, timestamp, key, value, headers) tuples; record_block() checks a batch whole and
 *    keeps its records' bytes; record_tuples() is batch.record_tuples.
 *  - dump_text.c: record_lines(), the dump's record lines from those bytes
 *    (forensics/render/dump_text.py); dump_run.c: dump_batches(), the lines of a run of batches
 *    framed by scan(), in one call (text.h: the text buffer and line writers both use);
 *    dump_decoders.c: the key and payload texts of the transaction-log and offsets decoders.
 *  - legacy.c: magic 0/1 messages and the inner messages of wrappers (forensics/codec/legacy.py).
 *  - payload_frames.c, compress.c: payload decompression (forensics/codec/compression.py):
 *    payload_frames.c takes apart xerial snappy streams, raw snappy blocks and LZ4 frames;
 *    compress.c the zstd frame walk and reader and gzip with zlib where built, with plaintext()
 *    and unframe() over every codec.
 *
 * Instances of the registered types are made the way tuple.__new__(cls, ...) makes them. Buffers
 * are read through the buffer protocol and released before returning; nothing is ever written to
 * them.
 */

#include "speedups.h"

/* A docstring that begins with the function's signature ($module: the module, not an argument):
 * inspect.signature() reads it, and tests/codec/test_speedups_stub.py holds it against
 * forensics/_speedups.pyi. */
#define DOC(signature, text) signature "\n--\n\n" text

static PyMethodDef methods[] = {
    {"init_frames", init_frames, METH_VARARGS,
     DOC("init_frames($module, frame_type, header_type, /)", "The types scan() makes.")},
    {"init_records", init_records, METH_VARARGS,
     DOC("init_records($module, record_type, header_type, /)", "The types records() makes.")},
    {"init_legacy", init_legacy, METH_O,
     DOC("init_legacy($module, legacy_type, /)", "The type legacy_entry() and legacy_inner() make.")},
    {"legacy_entry", legacy_entry, METH_VARARGS,
     DOC("legacy_entry($module, buf, pos, end, /)", "Decode a legacy message, or None when it breaks a rule.")},
    {"legacy_inner", legacy_inner, METH_VARARGS,
     DOC("legacy_inner($module, data, wrapper, plain=False, /)",
         "The inner messages of a decompressed wrapper, or None.")},
    {"record_tuples", (PyCFunction)(void (*)(void))record_tuples, METH_FASTCALL,
     DOC("record_tuples($module, buf, pos, header, /)",
         "batch.record_tuples, accelerated: records(..., plain=True) of the batch at pos, else the registered "
         "Python one.")},
    {"deep_tuples", (PyCFunction)(void (*)(void))deep_tuples, METH_FASTCALL,
     DOC("deep_tuples($module, buf, pos, /)",
         "legacy.deep_tuples, accelerated: legacy_records(buf, pos, True), else the registered Python one.")},
    {"init_fallback", init_fallback, METH_VARARGS,
     DOC("init_fallback($module, name, function, /)",
         "The Python \"record_tuples\" or \"deep_tuples\" the C one hands back to.")},
    {"legacy_records", (PyCFunction)(void (*)(void))legacy_records, METH_FASTCALL,
     DOC("legacy_records($module, buf, pos, plain=False, /)", "The deep records of a legacy entry, or None.")},
    {"unframe", unframe, METH_VARARGS,
     DOC("unframe($module, codec, data, magic, limit, /)",
         "The plaintext of a gzip, snappy or LZ4 payload (or walk zstd frames), or None.")},
    {"register_codecs", register_codecs, METH_VARARGS,
     DOC("register_codecs($module, snappy_uncompress, lz4_block_decompress, zstd_decompressor, limit, /)",
         "The library calls for raw blocks, the zstd decompressor class and the plaintext limit.")},
    {"codecs", codecs, METH_NOARGS,
     DOC("codecs($module, /)", "The codec ids the accelerator decompresses.")},
    {"xxh32", py_xxh32, METH_O,
     DOC("xxh32($module, data, /)", "XXH32 (seed 0) of a bytes-like object.")},
    {"attribute_bits", attribute_bits, METH_VARARGS,
     DOC("attribute_bits($module, index, mask, as_bool, /)",
         "A read-only descriptor: item index & mask of the tuple it is read on (a bool when as_bool).")},
    {"scan", scan, METH_VARARGS,
     DOC("scan($module, buf, pos, end, verify_crc, base_offset, next_offset, with_headers, limit, /)",
         "Frame the healthy v2 batches from a position on (see the module source).")},
    {"scan_tuples", scan_tuples, METH_VARARGS,
     DOC("scan_tuples($module, buf, pos, end, verify_crc, base_offset, next_offset, limit, /)",
         "The record tuples of the healthy entries from a position on.")},
    {"fold", fold, METH_VARARGS,
     DOC("fold($module, buf, pos, end, verify_crc, base_offset, next_offset, cuts, txn_open, stats, /)",
         "Fold the healthy v2 batches from a position on into counters and producer runs.")},
    {"record_block", (PyCFunction)(void (*)(void))record_block, METH_FASTCALL,
     DOC("record_block($module, buf, pos, header, /)", "The checked records' bytes of a v2 batch, or None.")},
    {"record_lines", (PyCFunction)(void (*)(void))record_lines, METH_FASTCALL,
     DOC("record_lines($module, data, header, ts_label, print_contents, skip_metadata, /)",
         "The dump lines of a RecordBlock's records.")},
    {"batch_line", (PyCFunction)(void (*)(void))batch_line, METH_FASTCALL,
     DOC("batch_line($module, header, position, valid, /)", "The dump line of a v2 batch header.")},
    {"legacy_lines", (PyCFunction)(void (*)(void))legacy_lines, METH_FASTCALL,
     DOC("legacy_lines($module, records, ts_label, print_contents, skip_metadata, /)",
         "The dump lines of legacy records.")},
    {"dump_batches", (PyCFunction)(void (*)(void))dump_batches, METH_FASTCALL,
     DOC("dump_batches($module, buf, frames, start, print_contents, skip_metadata, decoder=None, /)",
         "The dump lines of a run of v2 batches.")},
    {"records", (PyCFunction)(void (*)(void))records, METH_FASTCALL,
     DOC("records($module, data, p, end, header, plain=False, decompressed=False, position_base=0, /)",
         "Decode a v2 batch's records, or None when one breaks a rule.")},
    {"crc32c", py_crc32c, METH_O,
     DOC("crc32c($module, data, /)", "CRC-32C of a bytes-like object.")},
    {"crc32", py_crc32, METH_O,
     DOC("crc32($module, data, /)", "CRC-32 (IEEE, as zlib.crc32) of a bytes-like object.")},
    {"hardware_crc", hardware_crc, METH_NOARGS,
     DOC("hardware_crc($module, /)", "True when CRC-32C uses the CPU's instruction.")},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "forensics._speedups",
                                    "Optional C loops for framing batches and decoding records.", -1, methods};

PyMODINIT_FUNC PyInit__speedups(void) {
    crc_init();
    if (!compress_init() || !bits_init())
        return NULL;
    return PyModule_Create(&module);
}
