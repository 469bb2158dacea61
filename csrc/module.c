/* forensics._speedups: the optional C accelerator of kafka-forensics (issues 6 and 18).
 *
 * Every loop here exists in pure Python, which stays the reference: the accelerator takes the
 * healthy common case and hands everything else back (None, or the Python function registered
 * for it), so results and error messages are the same with or without it
 * (tests/codec/test_speedups.py runs both). Its parts:
 *
 *  - crc.c: CRC-32C (SSE4.2 or slicing-by-8) and CRC-32.
 *  - bits.c: attribute_bits(), BatchHeader's attribute properties (codec, is_transactional, ...).
 *  - frames.c: scan() frames consecutive entries (v2 batches and legacy messages) while nothing
 *    needs a finding (forensics/io/frames.py); the NamedTuple instances the module makes.
 *  - fold.c: fold() takes the same healthy v2 batches without a Frame each: the counters of a
 *    work unit and its producers' event runs (forensics/pipeline/units.py).
 *  - records.c: records() decodes a v2 batch's records (forensics/codec/batch.py), as Record or
 *    as (offset, timestamp, key, value, headers) tuples; record_block() checks a batch whole and
 *    keeps its records' bytes; record_tuples() is batch.record_tuples.
 *  - dump_text.c: record_lines(), the dump's record lines from those bytes
 *    (forensics/render/dump_text.py); dump_run.c: dump_batches(), the lines of a run of batches
 *    framed by scan(), in one call (text.h: the text buffer and line writers both use).
 *  - legacy.c: magic 0/1 messages and the inner messages of wrappers (forensics/codec/legacy.py).
 *  - framing.c, compress.c: payload decompression (forensics/codec/compression.py): snappy and
 *    LZ4 framing, snappy raw blocks, the zstd frame walk and reader, gzip with zlib where built.
 *
 * The Python types (Frame, BatchHeader, Record, Header, LegacyRecord: tuple subclasses made by
 * NamedTuple) are registered once (init_frames, init_records, init_legacy); instances are made
 * the way tuple.__new__(cls, ...) makes them. Buffers are read through the buffer protocol and
 * released before returning; nothing is ever written to them.
 */

#include "speedups.h"

/* Keep a reference to each tuple subclass given, in the slots named by `targets`. */
static PyObject *register_types(PyObject *args, PyTypeObject **targets[2]) {
    PyObject *types[2];
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &types[0], &PyType_Type, &types[1]))
        return NULL;
    for (int i = 0; i < 2; i++) {
        if (!PyType_IsSubtype((PyTypeObject *)types[i], &PyTuple_Type)) {
            PyErr_SetString(PyExc_TypeError, "the result types must be tuple subclasses (NamedTuple)");
            return NULL;
        }
    }
    for (int i = 0; i < 2; i++) {
        Py_INCREF(types[i]);
        Py_XDECREF(*targets[i]);
        *targets[i] = (PyTypeObject *)types[i];
    }
    Py_RETURN_NONE;
}

static PyObject *init_frames(PyObject *self, PyObject *args) {
    PyTypeObject **targets[2] = {&FrameType, &HeaderType};
    return register_types(args, targets);
}

static PyObject *init_records(PyObject *self, PyObject *args) {
    PyTypeObject **targets[2] = {&RecordType, &RecHeaderType};
    return register_types(args, targets);
}

static PyObject *init_legacy(PyObject *self, PyObject *type) {
    if (!PyType_Check(type) || !PyType_IsSubtype((PyTypeObject *)type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "the result type must be a tuple subclass (NamedTuple)");
        return NULL;
    }
    Py_INCREF(type);
    Py_XSETREF(LegacyType, (PyTypeObject *)type);
    Py_RETURN_NONE;
}

/* init_fallback(name, function): the Python "record_tuples" or "deep_tuples" the C one hands back to. */
static PyObject *init_fallback(PyObject *self, PyObject *args) {
    const char *name;
    PyObject *fn;
    if (!PyArg_ParseTuple(args, "sO", &name, &fn))
        return NULL;
    PyObject **slot = strcmp(name, "record_tuples") == 0 ? &record_tuples_fallback
                      : strcmp(name, "deep_tuples") == 0 ? &deep_tuples_fallback : NULL;
    if (slot == NULL) {
        PyErr_SetString(PyExc_ValueError, "init_fallback: record_tuples or deep_tuples");
        return NULL;
    }
    Py_INCREF(fn);
    Py_XSETREF(*slot, fn);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"init_frames", init_frames, METH_VARARGS, "init_frames(Frame, BatchHeader): the types scan() makes."},
    {"init_records", init_records, METH_VARARGS, "init_records(Record, Header): the types records() makes."},
    {"init_legacy", init_legacy, METH_O, "init_legacy(LegacyRecord): the type legacy_entry() and legacy_inner() make."},
    {"legacy_entry", legacy_entry, METH_VARARGS, "Decode a legacy message, or None when it breaks a rule."},
    {"legacy_inner", legacy_inner, METH_VARARGS, "The inner messages of a decompressed wrapper, or None."},
    {"record_tuples", (PyCFunction)(void (*)(void))record_tuples, METH_FASTCALL, "batch.record_tuples, accelerated."},
    {"deep_tuples", (PyCFunction)(void (*)(void))deep_tuples, METH_FASTCALL, "legacy.deep_tuples, accelerated."},
    {"init_fallback", init_fallback, METH_VARARGS, "init_fallback(name, function): the Python version of a C entry."},
    {"legacy_records", (PyCFunction)(void (*)(void))legacy_records, METH_FASTCALL, "The deep records of a legacy entry, or None."},
    {"unframe", unframe, METH_VARARGS, "The plaintext of a gzip, snappy or LZ4 payload (or walk zstd frames), or None."},
    {"register_codecs", register_codecs, METH_VARARGS, "register_codecs(snappy_uncompress, lz4_decompress, limit)."},
    {"codecs", codecs, METH_NOARGS, "The codec ids the accelerator decompresses."},
    {"xxh32", py_xxh32, METH_O, "XXH32 (seed 0) of a bytes-like object."},
    {"attribute_bits", attribute_bits, METH_VARARGS, "attribute_bits(index, mask, as_bool): a read-only item & mask."},
    {"scan", scan, METH_VARARGS, "Frame the healthy v2 batches from a position on (see the module source)."},
    {"scan_tuples", scan_tuples, METH_VARARGS, "The record tuples of the healthy entries from a position on."},
    {"fold", fold, METH_VARARGS, "Fold the healthy v2 batches from a position on into counters and producer runs."},
    {"record_block", (PyCFunction)(void (*)(void))record_block, METH_FASTCALL, "The checked records' bytes of a v2 batch, or None."},
    {"record_lines", (PyCFunction)(void (*)(void))record_lines, METH_FASTCALL, "The dump lines of a RecordBlock's records."},
    {"batch_line", (PyCFunction)(void (*)(void))batch_line, METH_FASTCALL, "The dump line of a v2 batch header."},
    {"legacy_lines", (PyCFunction)(void (*)(void))legacy_lines, METH_FASTCALL, "The dump lines of legacy records."},
    {"dump_batches", (PyCFunction)(void (*)(void))dump_batches, METH_FASTCALL, "The dump lines of a run of v2 batches."},
    {"records", (PyCFunction)(void (*)(void))records, METH_FASTCALL, "Decode a v2 batch's records, or None when one breaks a rule."},
    {"crc32c", py_crc32c, METH_O, "CRC-32C of a bytes-like object."},
    {"crc32", py_crc32, METH_O, "CRC-32 (IEEE, as zlib.crc32) of a bytes-like object."},
    {"hardware_crc", hardware_crc, METH_NOARGS, "True when CRC-32C uses the CPU's instruction."},
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
