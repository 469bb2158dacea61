/* Optional accelerator for the hot loops of kafka-forensics (issue 6).
 *
 * Two loops dominate a scan: framing the batches of a segment (header fields, CRC-32C, offset
 * checks) and decoding the records of a batch (zig-zag varints). Both exist in pure Python
 * (forensics/io/frames.py, forensics/codec/batch.py), which stay the reference: this module only
 * takes the healthy common case and hands everything else back.
 *
 *  - scan() frames consecutive entries (v2 batches and legacy messages) while nothing needs a
 *    finding; at the first entry that does (unknown magic, bad length, checksum mismatch, offset
 *    below the base or regressing, the end of the buffer) it stops and returns, and the Python scanner handles that entry with its
 *    own rules, then calls scan() again.
 *  - records() decodes a whole batch's records or returns None at the first rule a record
 *    breaks; the Python decoder then runs on the batch and raises its exact error after
 *    yielding the good records, so results and messages are the same with or without this
 *    module.
 *
 * The Python types (Frame, BatchHeader, Record, Header: tuple subclasses made by NamedTuple) are
 * registered once with init_frames() and init_records(); instances are allocated the way tuple.__new__(cls, ...) does.
 * Buffers are read through the buffer protocol and released before returning; nothing is ever
 * written to them.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define HAVE_X86_CRC 1
#endif

static PyTypeObject *FrameType, *HeaderType, *RecordType, *RecHeaderType;

/* ---------------------------------------------------------------------------------------------
 * CRC-32C (Castagnoli, reflected 0x82F63B78): SSE4.2 instruction where the CPU has it, else
 * slicing-by-8 tables. Same results as the crc32c package (checked by the tests).
 */

static uint32_t crc_table[8][256];  /* CRC-32C (Castagnoli) */
static uint32_t ieee_table[8][256]; /* CRC-32 (IEEE, zlib's): legacy messages */
static int have_hw_crc;

static void make_tables(uint32_t table[8][256], uint32_t poly) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xFF];
}

static void crc_init(void) {
    make_tables(crc_table, 0x82F63B78u);
    make_tables(ieee_table, 0xEDB88320u);
#ifdef HAVE_X86_CRC
    __builtin_cpu_init();
    have_hw_crc = __builtin_cpu_supports("sse4.2");
#endif
}

/* Slicing-by-8 over a reflected CRC's tables. */
static uint32_t crc_sw(uint32_t table[8][256], uint32_t crc, const unsigned char *p, size_t n) {
    while (n >= 8) {
        uint32_t lo = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        lo ^= crc;
        crc = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^ table[5][(lo >> 16) & 0xFF] ^ table[4][lo >> 24] ^
              table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^ table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

static uint32_t crc32_ieee(const unsigned char *p, size_t n) { return crc_sw(ieee_table, 0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu; }

#ifdef HAVE_X86_CRC
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t n) {
#if defined(__x86_64__)
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        n -= 8;
    }
    crc = (uint32_t)c;
#endif
    while (n--)
        crc = _mm_crc32_u8(crc, *p++);
    return crc;
}
#endif

static uint32_t crc32c(const unsigned char *p, size_t n) {
#ifdef HAVE_X86_CRC
    if (have_hw_crc)
        return crc_hw(0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu;
#endif
    return crc_sw(crc_table, 0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu;
}

/* --------------------------------------------------------------------------------------------- */

static inline int64_t be64(const unsigned char *p) {
    return (int64_t)((uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 | (uint64_t)p[3] << 32 |
                     (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 | (uint64_t)p[6] << 8 | (uint64_t)p[7]);
}
static inline uint32_t be32u(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline int32_t be32(const unsigned char *p) { return (int32_t)be32u(p); }
static inline int16_t be16(const unsigned char *p) { return (int16_t)((uint16_t)p[0] << 8 | p[1]); }

/* A new instance of a tuple subclass, as tuple.__new__(type, items) makes it; steals the items.
 * Every item given here is atomic (int, bool, None, bytes, str) or a tuple made here, so the
 * result can never be part of a reference cycle: it is untracked by the garbage collector at once
 * (CPython does the same to such tuples, later). Without that, the millions of short-lived tuples
 * of a scan make every young-generation collection walk them. */
static PyObject *make_tuple(PyTypeObject *type, Py_ssize_t n, PyObject **items) {
    PyObject *t = type->tp_alloc(type, n);
    if (t == NULL) {
        for (Py_ssize_t i = 0; i < n; i++)
            Py_XDECREF(items[i]);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (items[i] == NULL) { /* a failed PyLong/bytes allocation */
            for (Py_ssize_t j = 0; j < n; j++)
                Py_XDECREF(items[j]);
            Py_DECREF(t);
            return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(t, i, items[i]);
    if (PyObject_GC_IsTracked(t))
        PyObject_GC_UnTrack(t);
    return t;
}

static PyObject *batch_header(const unsigned char *p) {
    PyObject *f[13] = {
        PyLong_FromLongLong(be64(p)),      PyLong_FromLong(be32(p + 8)),      PyLong_FromLong(be32(p + 12)),
        PyLong_FromLong((signed char)p[16]), PyLong_FromUnsignedLong(be32u(p + 17)), PyLong_FromLong(be16(p + 21)),
        PyLong_FromLong(be32(p + 23)),     PyLong_FromLongLong(be64(p + 27)), PyLong_FromLongLong(be64(p + 35)),
        PyLong_FromLongLong(be64(p + 43)), PyLong_FromLong(be16(p + 51)),     PyLong_FromLong(be32(p + 53)),
        PyLong_FromLong(be32(p + 57)),
    };
    return make_tuple(HeaderType, 13, f);
}

#define INT32_MAX_ 0x7FFFFFFFLL

/* scan(buf, pos, end, verify_crc, base_offset|None, next_offset|None, with_headers, limit)
 *   -> (frames, pos, next_offset|None, valid_bytes)
 * Frames the healthy entries (v2 batches, legacy messages) from pos on, at most `limit`; stops before the first entry the
 * Python scanner must look at. The offset rules are FrameScanner._check_offsets'. */
static PyObject *scan(PyObject *self, PyObject *args) {
    PyObject *bufobj, *base_obj, *next_obj;
    Py_ssize_t pos, end, limit;
    int verify, with_headers;
    if (!PyArg_ParseTuple(args, "OnnpOOpn", &bufobj, &pos, &end, &verify, &base_obj, &next_obj, &with_headers, &limit))
        return NULL;
    int has_base = base_obj != Py_None, has_next = next_obj != Py_None;
    long long base = 0, next = 0;
    if (has_base && (base = PyLong_AsLongLong(base_obj)) == -1 && PyErr_Occurred())
        return NULL;
    if (has_next && (next = PyLong_AsLongLong(next_obj)) == -1 && PyErr_Occurred())
        return NULL;
    if (FrameType == NULL || HeaderType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "init_frames() has not been called");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(bufobj, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (pos < 0)
        pos = 0;
    if (end > view.len)
        end = view.len;
    const unsigned char *b = (const unsigned char *)view.buf;
    PyObject *frames = PyList_New(0);
    long long valid = 0;
    if (frames == NULL)
        goto fail;
    PyObject *crc_flag = verify ? Py_True : Py_None;
    while (pos < end && PyList_GET_SIZE(frames) < limit) {
        if (end - pos <= 17)
            break;
        const unsigned char *p = b + pos;
        long long offset = be64(p);
        int32_t length = be32(p + 8);
        int magic = p[16];
        Py_ssize_t size = 12 + (Py_ssize_t)length;
        long long last = offset;
        if (magic == 2) {
            if (length < 49 || (long long)pos + 12 + length > (long long)end)
                break;
            if (verify && crc32c(p + 21, (size_t)size - 21) != be32u(p + 17))
                break;
            /* offsets at the ends of the int64 range (damage) overflow here: the Python scanner takes them */
            if (__builtin_add_overflow(offset, (long long)be32(p + 23), &last))
                break;
            if (has_next && offset < next) /* a regression is checked for v2 batches only */
                break;
        } else if (magic <= 1) { /* a legacy entry: its offset is its last; CRC-32 from the magic byte */
            if (length < 14 || (long long)pos + 12 + length > (long long)end)
                break;
            if (verify && crc32_ieee(p + 16, (size_t)size - 16) != be32u(p + 12))
                break;
        } else {
            break;
        }
        long long above_base, following;
        if (has_base && (offset < base || __builtin_sub_overflow(last, base, &above_base) || above_base > INT32_MAX_))
            break;
        if (__builtin_add_overflow(last, 1LL, &following))
            break;
        next = has_next ? (next > following ? next : following) : (following > 0 ? following : 0);
        has_next = 1;
        PyObject *header = Py_None;
        if (with_headers && magic == 2) {
            header = batch_header(p);
            if (header == NULL)
                goto fail;
        } else {
            Py_INCREF(header);
        }
        Py_INCREF(crc_flag);
        PyObject *f[7] = {PyLong_FromSsize_t(pos), PyLong_FromSsize_t(size), PyLong_FromLong(magic),
                          PyLong_FromLongLong(offset), PyLong_FromLongLong(last), crc_flag, header};
        PyObject *frame = make_tuple(FrameType, 7, f);
        if (frame == NULL)
            goto fail;
        int rc = PyList_Append(frames, frame);
        Py_DECREF(frame);
        if (rc < 0)
            goto fail;
        valid += size;
        pos += size;
    }
    PyBuffer_Release(&view);
    PyObject *next_out = has_next ? PyLong_FromLongLong(next) : (Py_INCREF(Py_None), Py_None);
    if (next_out == NULL) {
        Py_DECREF(frames);
        return NULL;
    }
    return Py_BuildValue("(NnNL)", frames, pos, next_out, valid);
fail:
    Py_XDECREF(frames);
    PyBuffer_Release(&view);
    return NULL;
}

/* --------------------------------------------------------------------------------------------- */

/* Unsigned LEB128 of at most max_bytes bytes within [*p, end); 0 on any problem. */
static inline int uvarint(const unsigned char *b, Py_ssize_t *p, Py_ssize_t end, int max_bytes, uint64_t *out) {
    uint64_t v = 0;
    int shift = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (*p >= end)
            return 0;
        unsigned char c = b[(*p)++];
        uint64_t bits = c & 0x7F;
        if (shift == 63 && bits > 1) /* beyond 64 bits */
            return 0;
        v |= bits << shift;
        if (!(c & 0x80)) {
            *out = v;
            return 1;
        }
        shift += 7;
    }
    return 0;
}

static inline int varint32(const unsigned char *b, Py_ssize_t *p, Py_ssize_t end, int64_t *out) {
    uint64_t u;
    if (!uvarint(b, p, end, 5, &u) || u > 0xFFFFFFFFull)
        return 0;
    *out = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return 1;
}

static inline int varint64(const unsigned char *b, Py_ssize_t *p, Py_ssize_t end, int64_t *out) {
    uint64_t u;
    if (!uvarint(b, p, end, 10, &u))
        return 0;
    *out = (int64_t)((u >> 1) ^ (~(u & 1) + 1));
    return 1;
}

/* A varint length (-1 = null) and that many bytes; NULL with no error set = rule broken. */
static PyObject *nullable_bytes(const unsigned char *b, Py_ssize_t *p, Py_ssize_t end, int *broken) {
    int64_t n;
    if (!varint32(b, p, end, &n) || n < -1 || *p + n > end) {
        *broken = 1;
        return NULL;
    }
    if (n < 0)
        Py_RETURN_NONE;
    PyObject *r = PyBytes_FromStringAndSize((const char *)b + *p, (Py_ssize_t)n);
    *p += n;
    return r;
}

static long long increment_sequence(long long sequence, long long increment) {
    if (sequence > INT32_MAX_ - increment)
        return increment - (INT32_MAX_ - sequence) - 1;
    return sequence + increment;
}

/* One record at *p; NULL with *broken set = a rule broken, NULL without = Python error. */
static PyObject *record(const unsigned char *b, Py_ssize_t *p, Py_ssize_t end, long long base_offset, long long base_ts,
                        int has_log_append, long long log_append, long long base_seq, int *broken) {
    Py_ssize_t start = *p;
    int64_t length, ts_delta, offset_delta, header_count;
    if (!varint32(b, p, end, &length) || length < 1 || *p + length > end)
        goto broken;
    Py_ssize_t body_end = *p + (Py_ssize_t)length;
    int attributes = b[(*p)++];
    if (!varint64(b, p, body_end, &ts_delta) || !varint32(b, p, body_end, &offset_delta))
        goto broken;
    long long offset, ts;
    if (__builtin_add_overflow(base_offset, (long long)offset_delta, &offset))
        goto broken; /* Python's ints do not overflow: let it decode this one */
    if (has_log_append)
        ts = log_append;
    else if (__builtin_add_overflow(base_ts, (long long)ts_delta, &ts))
        goto broken;
    PyObject *key = nullable_bytes(b, p, body_end, broken);
    if (key == NULL)
        return NULL;
    PyObject *value = nullable_bytes(b, p, body_end, broken);
    if (value == NULL) {
        Py_DECREF(key);
        return NULL;
    }
    PyObject *headers = NULL;
    if (!varint32(b, p, body_end, &header_count) || header_count < 0 || header_count > body_end - *p) {
        *broken = 1;
        goto fail;
    }
    headers = PyTuple_New((Py_ssize_t)header_count);
    if (headers == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < header_count; i++) {
        int64_t hk_len;
        if (!varint32(b, p, body_end, &hk_len) || hk_len < 0 || *p + hk_len > body_end) {
            *broken = 1;
            goto fail;
        }
        PyObject *hkey = PyUnicode_DecodeUTF8((const char *)b + *p, (Py_ssize_t)hk_len, "strict");
        if (hkey == NULL) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                PyErr_Clear();
                *broken = 1;
            }
            goto fail;
        }
        *p += hk_len;
        PyObject *hval = nullable_bytes(b, p, body_end, broken);
        if (hval == NULL) {
            Py_DECREF(hkey);
            goto fail;
        }
        PyObject *h[2] = {hkey, hval};
        PyObject *pair = make_tuple(RecHeaderType, 2, h);
        if (pair == NULL)
            goto fail;
        PyTuple_SET_ITEM(headers, i, pair);
    }
    if (*p != body_end) {
        *broken = 1;
        goto fail;
    }
    if (PyObject_GC_IsTracked(headers)) /* holds Header tuples of str and bytes only: no cycle */
        PyObject_GC_UnTrack(headers);
    long long seq = base_seq == -1 ? -1 : increment_sequence(base_seq, offset_delta);
    PyObject *f[8] = {PyLong_FromLongLong(offset), PyLong_FromLongLong(ts), key, value, headers,
                      PyLong_FromLongLong(seq), PyLong_FromLong(attributes), PyLong_FromSsize_t(start)};
    return make_tuple(RecordType, 8, f);
fail:
    Py_DECREF(key);
    Py_DECREF(value);
    Py_XDECREF(headers);
    return NULL;
broken:
    *broken = 1;
    return NULL;
}

/* records(data, p, end, base_offset, base_timestamp, log_append_time|None, base_sequence, count)
 *   -> list of Record, or None when a record breaks a rule (the Python decoder then says which). */
static PyObject *records(PyObject *self, PyObject *args) {
    PyObject *data, *log_append_obj;
    Py_ssize_t p, end;
    long long base_offset, base_ts, base_seq, count, log_append = 0;
    if (!PyArg_ParseTuple(args, "OnnLLOLL", &data, &p, &end, &base_offset, &base_ts, &log_append_obj, &base_seq, &count))
        return NULL;
    int has_log_append = log_append_obj != Py_None;
    if (has_log_append && (log_append = PyLong_AsLongLong(log_append_obj)) == -1 && PyErr_Occurred())
        return NULL;
    if (RecordType == NULL || RecHeaderType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "init_records() has not been called");
        return NULL;
    }
    if (count < 0)
        Py_RETURN_NONE;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (end > view.len || p < 0 || p > end) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    const unsigned char *b = (const unsigned char *)view.buf;
    /* each record takes at least 2 bytes: a count beyond that is broken (and bounds the list) */
    if (count > (end - p) / 2 + 1) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    PyObject *out = PyList_New((Py_ssize_t)count);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    int broken = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *r = p < end ? record(b, &p, end, base_offset, base_ts, has_log_append, log_append, base_seq, &broken)
                              : (broken = 1, NULL);
        if (r == NULL) {
            PyBuffer_Release(&view);
            Py_DECREF(out);
            if (broken && !PyErr_Occurred())
                Py_RETURN_NONE;
            return NULL;
        }
        PyList_SET_ITEM(out, i, r);
    }
    PyBuffer_Release(&view);
    if (p != end) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    return out;
}

/* checksum(bytes-like) -> int for one of the two CRCs */
static PyObject *checksum(PyObject *arg, uint32_t (*fn)(const unsigned char *, size_t)) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    uint32_t c = fn((const unsigned char *)view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(c);
}

static PyObject *py_crc32(PyObject *self, PyObject *arg) { return checksum(arg, crc32_ieee); }

static PyObject *py_crc32c(PyObject *self, PyObject *arg) { return checksum(arg, crc32c); }

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

static PyObject *hardware_crc(PyObject *self, PyObject *unused) { return PyBool_FromLong(have_hw_crc); }

static PyMethodDef methods[] = {
    {"init_frames", init_frames, METH_VARARGS, "init_frames(Frame, BatchHeader): the types scan() makes."},
    {"init_records", init_records, METH_VARARGS, "init_records(Record, Header): the types records() makes."},
    {"scan", scan, METH_VARARGS, "Frame the healthy v2 batches from a position on (see the module source)."},
    {"records", records, METH_VARARGS, "Decode a v2 batch's records, or None when one breaks a rule."},
    {"crc32c", py_crc32c, METH_O, "CRC-32C of a bytes-like object."},
    {"crc32", py_crc32, METH_O, "CRC-32 (IEEE, as zlib.crc32) of a bytes-like object."},
    {"hardware_crc", hardware_crc, METH_NOARGS, "True when CRC-32C uses the CPU's instruction."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "forensics._speedups",
                                    "Optional C loops for framing batches and decoding records.", -1, methods};

PyMODINIT_FUNC PyInit__speedups(void) {
    crc_init();
    return PyModule_Create(&module);
}
