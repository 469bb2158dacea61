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
#ifdef HAVE_ZLIB
#include <zlib.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define HAVE_X86_CRC 1
#endif

static PyTypeObject *FrameType, *HeaderType, *RecordType, *RecHeaderType, *LegacyType;

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
    for (Py_ssize_t i = 0; i < n; i++) {
        if (items[i] == NULL) { /* a failed PyLong/bytes allocation */
            for (Py_ssize_t j = 0; j < n; j++)
                Py_XDECREF(items[j]);
            return NULL;
        }
    }
    PyObject *t;
    if (type == &PyTuple_Type)
        t = PyTuple_New(n); /* the interpreter's free list */
#if PY_VERSION_HEX < 0x030E0000
    /* The tuple layout is the object header and the items (3.14 adds a cached hash): allocated
     * untracked and filled at once, without tp_alloc's zeroing and tracking. */
    else
        t = (PyObject *)PyObject_GC_NewVar(PyTupleObject, type, n);
#else
    else
        t = type->tp_alloc(type, n);
#endif
    if (t == NULL) {
        for (Py_ssize_t i = 0; i < n; i++)
            Py_DECREF(items[i]);
        return NULL;
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
        PyObject *first = PyLong_FromLongLong(offset), *last_obj = first;
        if (last != offset)
            last_obj = PyLong_FromLongLong(last);
        else
            Py_XINCREF(first); /* a legacy entry: its offset is its last */
        PyObject *f[7] = {PyLong_FromSsize_t(pos), PyLong_FromSsize_t(size), PyLong_FromLong(magic),
                          first, last_obj, crc_flag, header};
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
    if (*p < end && b[*p] < 0x80) { /* most varints of a record are one byte */
        *out = b[(*p)++];
        return 1;
    }
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

/* A varint length (-1 = null) and the span of that many bytes; 0 when a rule is broken. */
static inline int nullable_span(const unsigned char *b, Py_ssize_t *p, Py_ssize_t end, Py_ssize_t *at, Py_ssize_t *len) {
    int64_t n;
    if (!varint32(b, p, end, &n) || n < -1 || *p + n > end)
        return 0;
    *at = *p;
    *len = (Py_ssize_t)n;
    if (n > 0)
        *p += n;
    return 1;
}

/* Is b[0:n) valid UTF-8, as Python's strict decoder takes it (no overlong forms, no surrogates,
 * nothing beyond U+10FFFF)? */
static int utf8_valid(const unsigned char *b, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned c = b[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        Py_ssize_t k;
        unsigned lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            k = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else
            return 0;
        if (i + k >= n)
            return 0;
        if (b[i + 1] < lo || b[i + 1] > hi)
            return 0;
        for (Py_ssize_t j = 2; j <= k; j++)
            if ((b[i + j] & 0xC0) != 0x80)
                return 0;
        i += k + 1;
    }
    return 1;
}

/* One record's fields, parsed and checked (DefaultRecord.readFrom's rules, batch.py's _record). */
typedef struct {
    Py_ssize_t start, key_pos, key_len, value_pos, value_len, headers_pos, body_end;
    int64_t ts_delta, offset_delta, header_count;
    int attributes;
} rec_t;

/* Parse the record at *p into r; 0 when it breaks a rule (header keys: strict UTF-8). */
static int parse_record(const unsigned char *b, Py_ssize_t *p, Py_ssize_t end, rec_t *r) {
    int64_t length;
    r->start = *p;
    if (!varint32(b, p, end, &length) || length < 1 || *p + length > end)
        return 0;
    Py_ssize_t body_end = *p + (Py_ssize_t)length;
    r->attributes = b[(*p)++];
    if (!varint64(b, p, body_end, &r->ts_delta) || !varint32(b, p, body_end, &r->offset_delta) ||
        !nullable_span(b, p, body_end, &r->key_pos, &r->key_len) ||
        !nullable_span(b, p, body_end, &r->value_pos, &r->value_len) ||
        !varint32(b, p, body_end, &r->header_count) || r->header_count < 0 || r->header_count > body_end - *p)
        return 0;
    r->headers_pos = *p;
    for (int64_t i = 0; i < r->header_count; i++) {
        int64_t hk_len;
        Py_ssize_t at, len;
        if (!varint32(b, p, body_end, &hk_len) || hk_len < 0 || *p + hk_len > body_end ||
            !utf8_valid(b + *p, (Py_ssize_t)hk_len))
            return 0;
        *p += hk_len;
        if (!nullable_span(b, p, body_end, &at, &len))
            return 0;
    }
    r->body_end = body_end;
    return *p == body_end;
}

/* The batch-level fields every record of a batch needs. */
typedef struct {
    long long base_offset, base_ts, max_ts, base_seq;
    int log_append; /* TIMESTAMP_TYPE_MASK: every record's timestamp is maxTimestamp */
} batch_t;

/* A record's absolute offset and timestamp; 0 when they overflow int64 (Python's ints do not:
 * the Python decoder takes such a batch). */
static inline int record_offset_ts(const batch_t *h, const rec_t *r, long long *offset, long long *ts) {
    if (__builtin_add_overflow(h->base_offset, (long long)r->offset_delta, offset))
        return 0;
    if (h->log_append)
        *ts = h->max_ts;
    else if (__builtin_add_overflow(h->base_ts, (long long)r->ts_delta, ts))
        return 0;
    return 1;
}

static long long increment_sequence(long long sequence, long long increment) {
    if (sequence > INT32_MAX_ - increment)
        return increment - (INT32_MAX_ - sequence) - 1;
    return sequence + increment;
}

static inline long long record_sequence(const batch_t *h, const rec_t *r) {
    return h->base_seq == -1 ? -1 : increment_sequence(h->base_seq, r->offset_delta);
}

static inline PyObject *span_bytes(const unsigned char *b, Py_ssize_t at, Py_ssize_t len) {
    if (len < 0)
        Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)b + at, len);
}

/* The headers of a parsed record as a tuple of Header. */
static PyObject *record_headers(const unsigned char *b, const rec_t *r) {
    PyObject *headers = PyTuple_New((Py_ssize_t)r->header_count);
    if (headers == NULL || r->header_count == 0)
        return headers;
    Py_ssize_t p = r->headers_pos;
    for (Py_ssize_t i = 0; i < r->header_count; i++) {
        int64_t hk_len = 0;
        Py_ssize_t at = 0, len = -1;
        varint32(b, &p, r->body_end, &hk_len); /* checked by parse_record */
        PyObject *hkey = PyUnicode_DecodeUTF8((const char *)b + p, (Py_ssize_t)hk_len, "strict");
        p += hk_len;
        nullable_span(b, &p, r->body_end, &at, &len);
        PyObject *h[2] = {hkey, span_bytes(b, at, len)};
        PyObject *pair = make_tuple(RecHeaderType, 2, h);
        if (pair == NULL) {
            Py_DECREF(headers);
            return NULL;
        }
        PyTuple_SET_ITEM(headers, i, pair);
    }
    if (PyObject_GC_IsTracked(headers)) /* holds Header tuples of str and bytes only: no cycle */
        PyObject_GC_UnTrack(headers);
    return headers;
}

/* One record at *p; NULL with *broken set = a rule broken, NULL without = Python error.
 * plain: a plain (offset, timestamp, key, value, headers) tuple instead of a Record.
 * position_base: added to the record's position (where b[0] is in the file or plaintext). */
static PyObject *record(const unsigned char *b, Py_ssize_t *p, Py_ssize_t end, const batch_t *h, int plain,
                        Py_ssize_t position_base, int *broken) {
    rec_t r;
    long long offset, ts;
    if (!parse_record(b, p, end, &r) || !record_offset_ts(h, &r, &offset, &ts)) {
        *broken = 1;
        return NULL;
    }
    if (plain) {
        PyObject *f[5] = {PyLong_FromLongLong(offset), PyLong_FromLongLong(ts), span_bytes(b, r.key_pos, r.key_len),
                          span_bytes(b, r.value_pos, r.value_len), record_headers(b, &r)};
        return make_tuple(&PyTuple_Type, 5, f);
    }
    PyObject *f[8] = {PyLong_FromLongLong(offset), PyLong_FromLongLong(ts), span_bytes(b, r.key_pos, r.key_len),
                      span_bytes(b, r.value_pos, r.value_len), record_headers(b, &r),
                      PyLong_FromLongLong(record_sequence(h, &r)), PyLong_FromLong(r.attributes),
                      PyLong_FromSsize_t(r.start + position_base)};
    return make_tuple(RecordType, 8, f);
}

/* An int64 field of a header tuple; 0 with no error set when it does not fit (the Python decoder,
 * whose ints do not overflow, then takes the batch). */
static int tuple_int64(PyObject *t, Py_ssize_t i, long long *out) {
    PyObject *v = PyTuple_GET_ITEM(t, i);
    if (!PyLong_Check(v))
        return 0;
    int overflow;
    *out = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (*out == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return !overflow;
}

static PyObject *plaintext(int codec, PyObject *view, int magic, Py_ssize_t limit);
static Py_ssize_t payload_limit;

static int codecs_has_zlib(void) {
#ifdef HAVE_ZLIB
    return 1;
#else
    return 0;
#endif
}

/* The records of data[p:end) (see records()); NULL with no error set when one breaks a rule. */
static PyObject *decode_records(const unsigned char *b, Py_ssize_t p, Py_ssize_t end, long long count,
                                const batch_t *h, int plain, Py_ssize_t position_base) {
    /* each record takes at least 2 bytes: a count beyond that is broken (and bounds the list) */
    if (count > (end - p) / 2 + 1)
        return NULL;
    PyObject *out = PyList_New((Py_ssize_t)count);
    if (out == NULL)
        return NULL;
    int broken = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *r = p < end ? record(b, &p, end, h, plain, position_base, &broken) : NULL;
        if (r == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, r);
    }
    if (p != end) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* Do all `count` records of data[p:end) parse (and their offsets and timestamps fit int64)? */
static int check_records(const unsigned char *b, Py_ssize_t p, Py_ssize_t end, long long count, const batch_t *h) {
    if (count > (end - p) / 2 + 1)
        return 0;
    for (long long i = 0; i < count; i++) {
        rec_t r;
        long long offset, ts;
        if (p >= end || !parse_record(b, &p, end, &r) || !record_offset_ts(h, &r, &offset, &ts))
            return 0;
    }
    return p == end;
}

/* The batch fields of a BatchHeader tuple, its attributes and record count; 0 when they are not
 * int64 values (or the count is negative). */
static int header_fields(PyObject *header, batch_t *h, long long *attributes, long long *count) {
    if (!PyTuple_Check(header) || PyTuple_GET_SIZE(header) != 13)
        return 0;
    if (!tuple_int64(header, 0, &h->base_offset) || !tuple_int64(header, 5, attributes) ||
        !tuple_int64(header, 7, &h->base_ts) || !tuple_int64(header, 8, &h->max_ts) ||
        !tuple_int64(header, 11, &h->base_seq) || !tuple_int64(header, 12, count) || *count < 0)
        return 0;
    h->log_append = (*attributes & 0x08) != 0;
    return 1;
}

/* The records' bytes of the batch whose payload is data[p:end): a new bytes object, decompressed
 * for a compressed batch (see plaintext()), else `data` itself (a new reference, *p and *end
 * unchanged). Py_None when it does not decompress (the Python decoder says why); NULL on error. */
static PyObject *batch_data(PyObject *data, Py_ssize_t *p, Py_ssize_t *end, long long attributes) {
    if ((attributes & 0x07) == 0) {
        Py_INCREF(data);
        return data;
    }
    PyObject *view = PyMemoryView_FromObject(data);
    if (view == NULL)
        return NULL;
    Py_ssize_t len = PyMemoryView_GET_BUFFER(view)->len;
    PyObject *slice = *end > len || *p < 0 || *p > *end ? NULL : PySequence_GetSlice(view, *p, *end);
    Py_DECREF(view);
    if (slice == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    PyObject *out = payload_limit < 0 ? (Py_INCREF(Py_None), Py_None)
                                      : plaintext((int)(attributes & 0x07), slice, 2, payload_limit);
    Py_DECREF(slice);
    if (out != NULL && out != Py_None) {
        *p = 0;
        *end = PyBytes_GET_SIZE(out);
    }
    return out;
}

/* The buffer of *data (a new reference from batch_data()): 1, or 0 with *data the value to return
 * (NULL on error, None: not taken here). */
static int view_of(PyObject **data, Py_buffer *view) {
    if (*data == NULL || *data == Py_None)
        return 0;
    if (PyObject_GetBuffer(*data, view, PyBUF_SIMPLE) < 0) {
        Py_CLEAR(*data);
        return 0;
    }
    return 1;
}

/* records(data, p, end, header, plain=False, decompressed=False, position_base=0) -> list of
 * Record (plain: of (offset, timestamp, key, value, headers) tuples), or None when a record breaks
 * a rule (the Python decoder then says which) or the header's fields are not int64 values.
 * `header` is the batch's BatchHeader (a 13-tuple). data[p:end] holds the records (the file itself
 * for an uncompressed batch), or, for a compressed one, its payload, decompressed here (gzip,
 * snappy, lz4, zstd: see plaintext(); None for others), or its plaintext when `decompressed`.
 * position_base is added to every Record.position (where data[0] is). */
static PyObject *records(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 4 || nargs > 7) {
        PyErr_SetString(PyExc_TypeError,
                        "records(data, p, end, header, plain=False, decompressed=False, position_base=0)");
        return NULL;
    }
    int plain = nargs >= 5 ? PyObject_IsTrue(args[4]) : 0;
    int decompressed = nargs >= 6 ? PyObject_IsTrue(args[5]) : 0;
    Py_ssize_t position_base = nargs == 7 ? PyLong_AsSsize_t(args[6]) : 0;
    if (plain < 0 || decompressed < 0 || (position_base == -1 && PyErr_Occurred()))
        return NULL;
    Py_ssize_t p = PyLong_AsSsize_t(args[1]), end = PyLong_AsSsize_t(args[2]);
    if ((p == -1 || end == -1) && PyErr_Occurred())
        return NULL;
    if (RecordType == NULL || RecHeaderType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "init_records() has not been called");
        return NULL;
    }
    batch_t h;
    long long attributes, count;
    if (!header_fields(args[3], &h, &attributes, &count))
        Py_RETURN_NONE;
    Py_buffer view;
    PyObject *data = decompressed ? (Py_INCREF(args[0]), args[0]) : batch_data(args[0], &p, &end, attributes);
    if (!view_of(&data, &view))
        return data;
    PyObject *out = NULL;
    if (end <= view.len && p >= 0 && p <= end)
        out = decode_records((const unsigned char *)view.buf, p, end, count, &h, plain, position_base);
    PyBuffer_Release(&view);
    Py_DECREF(data);
    if (out == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return out;
}

/* record_block(buf, pos, header) -> bytes or None: the records' bytes of the v2 batch at pos
 * (copied out of buf for an uncompressed batch, decompressed otherwise) when every record parses
 * (batch.RecordBlock keeps them); None when one breaks a rule or the payload does not decompress
 * here (the Python decoder then says why). */
static PyObject *record_block(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "record_block(buf, pos, header)");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    if (pos == -1 && PyErr_Occurred())
        return NULL;
    batch_t h;
    long long attributes, count, length;
    if (!header_fields(args[2], &h, &attributes, &count) || !tuple_int64(args[2], 1, &length) || length < 49 ||
        length > INT32_MAX_ || pos < 0)
        Py_RETURN_NONE;
    Py_ssize_t p = pos + 61, end = pos + 12 + (Py_ssize_t)length;
    Py_buffer view;
    PyObject *data = batch_data(args[0], &p, &end, attributes);
    if (!view_of(&data, &view))
        return data;
    PyObject *out = NULL;
    if (end <= view.len && check_records((const unsigned char *)view.buf, p, end, count, &h))
        out = (attributes & 0x07) ? (Py_INCREF(data), data)
                                  : PyBytes_FromStringAndSize((const char *)view.buf + p, end - p);
    else
        out = (Py_INCREF(Py_None), Py_None);
    PyBuffer_Release(&view);
    Py_DECREF(data);
    return out;
}

/* ---------------------------------------------------------------------------------------------
 * The dump's record lines (forensics/render/dump_text.py is the reference: data_record_lines and
 * _line for the data records of a v2 batch), written straight from a checked RecordBlock's bytes,
 * without a Python object per record.
 */

typedef struct {
    char *p;
    Py_ssize_t len, cap;
} text_t;

static int text_reserve(text_t *t, Py_ssize_t more) {
    if (t->len + more <= t->cap)
        return 1;
    Py_ssize_t cap = t->cap * 2 > t->len + more ? t->cap * 2 : t->len + more + 4096;
    char *grown = PyMem_Realloc(t->p, (size_t)cap);
    if (grown == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    t->p = grown;
    t->cap = cap;
    return 1;
}

static inline int text_put(text_t *t, const char *s, Py_ssize_t n) {
    if (!text_reserve(t, n))
        return 0;
    memcpy(t->p + t->len, s, (size_t)n);
    t->len += n;
    return 1;
}

#define TEXT_LIT(t, s) text_put((t), (s), (Py_ssize_t)(sizeof(s) - 1))

static int text_int(text_t *t, long long v) {
    char digits[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (!text_reserve(t, n + 1))
        return 0;
    if (v < 0)
        t->p[t->len++] = '-';
    while (n)
        t->p[t->len++] = digits[--n];
    return 1;
}

/* Bytes as Kafka's StringDecoder prints them (string_text: UTF-8, invalid bytes replaced). */
static int text_string(text_t *t, const unsigned char *b, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n && b[i] < 0x80)
        i++;
    if (i == n || utf8_valid(b + i, n - i))
        return text_put(t, (const char *)b, n);
    PyObject *u = PyUnicode_DecodeUTF8((const char *)b, n, "replace");
    if (u == NULL)
        return 0;
    Py_ssize_t len;
    const char *utf8 = PyUnicode_AsUTF8AndSize(u, &len);
    int ok = utf8 != NULL && text_put(t, utf8, len);
    Py_DECREF(u);
    return ok;
}

/* record_lines(data, header, ts_label, print_contents, skip_metadata) -> str: the dump lines of the
 * records in data (a RecordBlock's bytes), each ending in a newline; None if they do not parse. */
static PyObject *record_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "record_lines(data, header, ts_label, print_contents, skip_metadata)");
        return NULL;
    }
    int contents = PyObject_IsTrue(args[3]), skip = PyObject_IsTrue(args[4]);
    Py_ssize_t label_len;
    const char *label = PyUnicode_AsUTF8AndSize(args[2], &label_len);
    if (contents < 0 || skip < 0 || label == NULL)
        return NULL;
    batch_t h;
    long long attributes, count;
    if (!header_fields(args[1], &h, &attributes, &count))
        Py_RETURN_NONE;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *b = (const unsigned char *)view.buf;
    Py_ssize_t p = 0, end = view.len;
    text_t t = {NULL, 0, 0};
    int ok = count <= end / 2 + 1 && text_reserve(&t, 2 * end + 130 * count + 64);
    for (long long i = 0; ok && i < count; i++) {
        rec_t r;
        long long offset, ts;
        if (p >= end || !parse_record(b, &p, end, &r) || !record_offset_ts(&h, &r, &offset, &ts)) {
            ok = -1;
            break;
        }
        const char *prefix = "| ";
        if (!skip) {
            ok = TEXT_LIT(&t, "| offset: ") && text_int(&t, offset) && TEXT_LIT(&t, " ") &&
                 text_put(&t, label, label_len) && TEXT_LIT(&t, ": ") && text_int(&t, ts) &&
                 TEXT_LIT(&t, " keySize: ") && text_int(&t, r.key_len) && TEXT_LIT(&t, " valueSize: ") &&
                 text_int(&t, r.value_len) && TEXT_LIT(&t, " sequence: ") && text_int(&t, record_sequence(&h, &r)) &&
                 TEXT_LIT(&t, " headerKeys: [");
            Py_ssize_t q = r.headers_pos;
            for (int64_t k = 0; ok && k < r.header_count; k++) {
                int64_t hk_len = 0;
                Py_ssize_t at, len;
                varint32(b, &q, r.body_end, &hk_len); /* checked by parse_record */
                ok = (k == 0 || TEXT_LIT(&t, ",")) && text_put(&t, (const char *)b + q, (Py_ssize_t)hk_len);
                q += hk_len;
                nullable_span(b, &q, r.body_end, &at, &len);
            }
            ok = ok && TEXT_LIT(&t, "]");
            prefix = " ";
        }
        if (ok && contents && r.key_len >= 0)
            ok = text_put(&t, prefix, (Py_ssize_t)strlen(prefix)) && TEXT_LIT(&t, "key: ") &&
                 text_string(&t, b + r.key_pos, r.key_len);
        if (ok && contents && r.value_len >= 0)
            ok = TEXT_LIT(&t, " payload: ") && text_string(&t, b + r.value_pos, r.value_len);
        ok = ok && TEXT_LIT(&t, "\n");
    }
    PyObject *out;
    if (ok > 0 && p == end)
        out = PyUnicode_DecodeUTF8(t.p, t.len, "strict");
    else if (ok == 0 && PyErr_Occurred())
        out = NULL;
    else
        out = (Py_INCREF(Py_None), Py_None);
    PyMem_Free(t.p);
    PyBuffer_Release(&view);
    return out;
}

/* ---------------------------------------------------------------------------------------------
 * Legacy messages, magic 0 and 1 (forensics/codec/legacy.py is the reference; Kafka's
 * LegacyRecord and AbstractLegacyRecordBatch.DeepRecordsIterator).
 */

/* One legacy message's fields, before they become a LegacyRecord. */
typedef struct {
    long long offset, timestamp;
    int32_t size;
    uint32_t crc;
    int magic, attributes, valid;
    Py_ssize_t position, key_pos, key_len, value_pos, value_len; /* len -1: null */
} legacy_msg;

/* An int32-length-prefixed nullable field inside [*p, end); 0 when a rule is broken. */
static int legacy_sized(const unsigned char *b, Py_ssize_t *p, Py_ssize_t end, Py_ssize_t *at, Py_ssize_t *len) {
    if (*p + 4 > end)
        return 0;
    int32_t n = be32(b + *p);
    *p += 4;
    if (n == -1) {
        *at = *p;
        *len = -1;
        return 1;
    }
    if (n < -1 || *p + n > end)
        return 0;
    *at = *p;
    *len = n;
    *p += n;
    return 1;
}

/* The message at pos of b[0:end), as decode_entry() reads it; 0 when a rule is broken. */
static int legacy_parse(const unsigned char *b, Py_ssize_t pos, Py_ssize_t end, legacy_msg *m, int with_crc) {
    if (pos < 0 || pos + 12 + 14 > end)
        return 0;
    const unsigned char *h = b + pos;
    m->offset = be64(h);
    m->size = be32(h + 8);
    m->crc = be32u(h + 12);
    m->magic = (signed char)h[16];
    m->attributes = (signed char)h[17];
    if (m->magic != 0 && m->magic != 1)
        return 0;
    Py_ssize_t rec_end = pos + 12 + (Py_ssize_t)m->size;
    if (m->size < (m->magic == 0 ? 14 : 22) || rec_end > end)
        return 0;
    Py_ssize_t p = pos + 18;
    m->timestamp = -1;
    if (m->magic == 1) {
        m->timestamp = be64(b + p);
        p += 8;
    }
    if (!legacy_sized(b, &p, rec_end, &m->key_pos, &m->key_len) ||
        !legacy_sized(b, &p, rec_end, &m->value_pos, &m->value_len))
        return 0;
    m->valid = with_crc && crc32_ieee(h + 16, (size_t)(rec_end - pos - 16)) == m->crc;
    m->position = pos;
    return 1;
}

static PyObject *field_bytes(const unsigned char *b, Py_ssize_t at, Py_ssize_t len) {
    if (len < 0)
        Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)b + at, len);
}

/* (offset, timestamp, key, value, ()): the projection of batch.record_tuples() for a legacy message. */
static PyObject *legacy_tuple(const unsigned char *b, const legacy_msg *m) {
    PyObject *f[5] = {PyLong_FromLongLong(m->offset), PyLong_FromLongLong(m->timestamp),
                      field_bytes(b, m->key_pos, m->key_len), field_bytes(b, m->value_pos, m->value_len),
                      PyTuple_New(0)};
    return make_tuple(&PyTuple_Type, 5, f);
}

static PyObject *legacy_record(const unsigned char *b, const legacy_msg *m) {
    PyObject *valid = m->valid ? Py_True : Py_False;
    Py_INCREF(valid);
    PyObject *f[10] = {PyLong_FromLongLong(m->offset), PyLong_FromLong(m->size), PyLong_FromUnsignedLong(m->crc),
                       PyLong_FromLong(m->magic), PyLong_FromLong(m->attributes), PyLong_FromLongLong(m->timestamp),
                       field_bytes(b, m->key_pos, m->key_len), field_bytes(b, m->value_pos, m->value_len), valid,
                       PyLong_FromSsize_t(m->position)};
    return make_tuple(LegacyType, 10, f);
}

static int legacy_ready(void) {
    if (LegacyType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "init_legacy() has not been called");
        return 0;
    }
    return 1;
}

/* legacy_entry(buf, pos, end) -> LegacyRecord, or None when the entry breaks a rule (the Python
 * decode_entry() then raises its error). */
static PyObject *legacy_entry(PyObject *self, PyObject *args) {
    PyObject *bufobj;
    Py_ssize_t pos, end;
    if (!PyArg_ParseTuple(args, "Onn", &bufobj, &pos, &end) || !legacy_ready())
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(bufobj, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    legacy_msg m;
    PyObject *out = NULL;
    if (end <= view.len && legacy_parse((const unsigned char *)view.buf, pos, end, &m, 1))
        out = legacy_record((const unsigned char *)view.buf, &m);
    else
        out = (Py_INCREF(Py_None), Py_None);
    PyBuffer_Release(&view);
    return out;
}

/* The inner messages of a wrapper's plaintext b[0:end) as a list of LegacyRecord (plain: of
 * (offset, timestamp, key, value, ()) tuples), with absolute offsets and the wrapper's timestamp
 * rules (legacy.inner_records() is the reference); Py_None when any rule is broken. */
static PyObject *inner_messages(const unsigned char *b, Py_ssize_t end, long long w_offset, long long w_magic,
                                long long w_attributes, long long w_timestamp, int plain) {
    Py_ssize_t p = 0, n = 0, cap = 0;
    legacy_msg *msgs = NULL;
    PyObject *out = NULL;
    int ok = 1;
    while (ok && end - p >= 12) {
        int32_t size = be32(b + p + 8);
        if (size < 14) {
            ok = 0;
            break;
        }
        if (p + 12 + (Py_ssize_t)size > end)
            break; /* DataLogInputStream stops on a partial trailing inner entry */
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            legacy_msg *grown = PyMem_Realloc(msgs, (size_t)cap * sizeof(legacy_msg));
            if (grown == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            msgs = grown;
        }
        legacy_msg *m = &msgs[n];
        if (!legacy_parse(b, p, end, m, !plain) || (m->attributes & 0x07) != 0) { /* inner messages are never compressed */
            ok = 0;
            break;
        }
        if (m->magic == 1 && (w_attributes & 0x08))
            m->timestamp = w_timestamp; /* LogAppendTime wrapper: its timestamp for every inner message */
        n++;
        p += 12 + (Py_ssize_t)size;
    }
    if (!ok || n == 0)
        goto none;
    if (w_magic == 1) { /* inner offsets are relative to the wrapper's (last) offset */
        long long last_inner = msgs[n - 1].offset, base = 0;
        if (w_offset != 0) {
            if (w_offset < last_inner || __builtin_sub_overflow(w_offset, last_inner, &base))
                goto none;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            if (__builtin_add_overflow(base, msgs[i].offset, &msgs[i].offset))
                goto none;
    }
    out = PyList_New(n);
    if (out == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r = plain ? legacy_tuple(b, &msgs[i]) : legacy_record(b, &msgs[i]);
        if (r == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, i, r);
    }
    goto done;
none:
    out = (Py_INCREF(Py_None), Py_None);
done:
    PyMem_Free(msgs);
    return out;
}

/* legacy_inner(data, wrapper, plain=False) -> inner_messages() of a decompressed wrapper, or None
 * (inner_records() then raises its error). */
static PyObject *legacy_inner(PyObject *self, PyObject *args) {
    PyObject *data, *wrapper;
    int plain = 0;
    if (!PyArg_ParseTuple(args, "OO|p", &data, &wrapper, &plain) || !legacy_ready())
        return NULL;
    long long w_offset, w_magic, w_attributes, w_timestamp;
    if (!PyTuple_Check(wrapper) || PyTuple_GET_SIZE(wrapper) != 10 || !tuple_int64(wrapper, 0, &w_offset) ||
        !tuple_int64(wrapper, 3, &w_magic) || !tuple_int64(wrapper, 4, &w_attributes) ||
        !tuple_int64(wrapper, 5, &w_timestamp))
        Py_RETURN_NONE;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *out = inner_messages((const unsigned char *)view.buf, view.len, w_offset, w_magic, w_attributes,
                                   w_timestamp, plain);
    PyBuffer_Release(&view);
    return out;
}

/* legacy_records(buf, pos, plain=False) -> the records a deep iteration gives for the legacy
 * entry at pos: (the entry,) when uncompressed, else a list of its inner messages (gzip, snappy, lz4
 * wrappers decompressed here); LegacyRecord or, plain, (offset, timestamp, key, value, ()) tuples.
 * None when a rule is broken or the codec is not taken here (legacy.py then decides). */
static PyObject *legacy_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "legacy_records(buf, pos, plain=False)");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    int plain = nargs == 3 ? PyObject_IsTrue(args[2]) : 0;
    if ((pos == -1 && PyErr_Occurred()) || plain < 0 || !legacy_ready())
        return NULL;
    Py_buffer buf;
    if (PyObject_GetBuffer(args[0], &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *b = (const unsigned char *)buf.buf;
    legacy_msg m;
    PyObject *out = NULL;
    if (!legacy_parse(b, pos, buf.len, &m, !plain)) {
        out = (Py_INCREF(Py_None), Py_None);
    } else if ((m.attributes & 0x07) == 0) {
        PyObject *r[1] = {plain ? legacy_tuple(b, &m) : legacy_record(b, &m)};
        out = make_tuple(&PyTuple_Type, 1, r); /* (the entry,) */
    } else if (m.value_len < 0 || payload_limit < 0) {
        out = (Py_INCREF(Py_None), Py_None);
    } else { /* a wrapper: its value decompressed (through a memoryview: the block calls take slices) */
        PyObject *view = PyMemoryView_FromObject(args[0]);
        PyObject *value = view == NULL ? NULL : PySequence_GetSlice(view, m.value_pos, m.value_pos + m.value_len);
        PyObject *data = value == NULL ? NULL : plaintext(m.attributes & 0x07, value, m.magic, payload_limit);
        Py_XDECREF(value);
        Py_XDECREF(view);
        if (data != NULL && data != Py_None) {
            out = inner_messages((const unsigned char *)PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), m.offset,
                                 m.magic, m.attributes, m.timestamp, plain);
            Py_DECREF(data);
        } else {
            out = data;
        }
    }
    PyBuffer_Release(&buf);
    return out;
}

/* ---------------------------------------------------------------------------------------------
 * batch.record_tuples and legacy.deep_tuples as C functions: the accelerated path, and the Python
 * function (registered with init_fallback) for whatever it hands back. Called once per batch or
 * entry, they save the Python frames of the wrappers.
 */

static PyObject *record_tuples_fallback, *deep_tuples_fallback;

/* record_tuples(buf, pos, header): records(buf, pos + 61, pos + 12 + batchLength, header, True)
 * for uncompressed batches and the codecs plaintext() takes; otherwise, or when that hands the
 * batch back, the registered Python record_tuples. */
static PyObject *record_tuples(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || record_tuples_fallback == NULL) {
        PyErr_SetString(PyExc_TypeError, "record_tuples(buf, pos, header) (after init_fallback)");
        return NULL;
    }
    PyObject *header = args[2];
    long long attributes, length;
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    if (pos == -1 && PyErr_Occurred())
        return NULL;
    if (PyTuple_Check(header) && PyTuple_GET_SIZE(header) == 13 && tuple_int64(header, 5, &attributes) &&
        tuple_int64(header, 1, &length) && length >= 49 && length <= INT32_MAX_ && pos >= 0 &&
        pos <= PY_SSIZE_T_MAX - 12 - length) {
        int codec = attributes & 0x07;
        if (codec == 0 || codec == 2 || codec == 3 || codec == 4 || (codec == 1 && codecs_has_zlib())) {
            PyObject *p = PyLong_FromSsize_t(pos + 61), *end = PyLong_FromSsize_t(pos + 12 + (Py_ssize_t)length);
            PyObject *out = NULL;
            if (p != NULL && end != NULL) {
                PyObject *a[5] = {args[0], p, end, header, Py_True};
                out = records(self, a, 5);
            }
            Py_XDECREF(p);
            Py_XDECREF(end);
            if (out != Py_None)
                return out;
            Py_DECREF(out);
        }
    }
    return PyObject_Vectorcall(record_tuples_fallback, args, 3, NULL);
}

/* deep_tuples(buf, pos): legacy_records(buf, pos, True), or the registered Python deep_tuples. */
static PyObject *deep_tuples(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || deep_tuples_fallback == NULL) {
        PyErr_SetString(PyExc_TypeError, "deep_tuples(buf, pos) (after init_fallback)");
        return NULL;
    }
    PyObject *a[3] = {args[0], args[1], Py_True};
    PyObject *out = legacy_records(self, a, 3);
    if (out != Py_None)
        return out;
    Py_DECREF(out);
    return PyObject_Vectorcall(deep_tuples_fallback, args, 2, NULL);
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

/* ---------------------------------------------------------------------------------------------
 * Compressed payload framing (forensics/codec/compression.py is the reference): xerial snappy
 * streams, Kafka's LZ4 frames and the zstd frame walk, parsed here with every rule the Python
 * parsers check; the blocks themselves are decompressed by the same library functions the Python
 * parsers call. Any rule broken, any library error or a plaintext beyond the limit: None, and the
 * Python parser runs and raises its exact error.
 */

static inline uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define XXH_P1 2654435761u
#define XXH_P2 2246822519u
#define XXH_P3 3266489917u
#define XXH_P4 668265263u
#define XXH_P5 374761393u

static inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

/* XXH32 with seed 0 (the LZ4 frame checksums); compression.xxh32 is the reference. */
static uint32_t xxh32(const unsigned char *p, size_t n) {
    const unsigned char *end = p + n;
    uint32_t h;
    if (n >= 16) {
        uint32_t v1 = XXH_P1 + XXH_P2, v2 = XXH_P2, v3 = 0, v4 = 0u - XXH_P1;
        const unsigned char *limit = end - 16;
        do {
            v1 = rotl32(v1 + le32(p) * XXH_P2, 13) * XXH_P1;
            v2 = rotl32(v2 + le32(p + 4) * XXH_P2, 13) * XXH_P1;
            v3 = rotl32(v3 + le32(p + 8) * XXH_P2, 13) * XXH_P1;
            v4 = rotl32(v4 + le32(p + 12) * XXH_P2, 13) * XXH_P1;
            p += 16;
        } while (p <= limit);
        h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
    } else {
        h = XXH_P5;
    }
    h += (uint32_t)n;
    while (p + 4 <= end) {
        h = rotl32(h + le32(p) * XXH_P3, 17) * XXH_P4;
        p += 4;
    }
    while (p < end) {
        h = rotl32(h + (*p++) * XXH_P5, 11) * XXH_P1;
    }
    h ^= h >> 15;
    h *= XXH_P2;
    h ^= h >> 13;
    h *= XXH_P3;
    return h ^ (h >> 16);
}

/* The plaintext pieces of one payload, and the limit they must stay within. */
typedef struct {
    PyObject *pieces; /* list of bytes */
    Py_ssize_t total, limit;
} sink_t;

/* Add a piece (stolen); 0 = over the limit or not bytes (the Python parser decides), -1 = error. */
static int sink_add(sink_t *sink, PyObject *piece) {
    if (piece == NULL)
        return -1;
    if (!PyBytes_CheckExact(piece) || PyBytes_GET_SIZE(piece) > sink->limit - sink->total) {
        Py_DECREF(piece);
        return 0;
    }
    sink->total += PyBytes_GET_SIZE(piece);
    int rc = PyList_Append(sink->pieces, piece);
    Py_DECREF(piece);
    return rc < 0 ? -1 : 1;
}

/* block(view[start:end], *extra): 1 and the piece added, 0 = the library refused it (an Exception,
 * cleared) or over the limit, -1 = error (KeyboardInterrupt, MemoryError...). */
static int call_block(sink_t *sink, PyObject *fn, PyObject *view, Py_ssize_t start, Py_ssize_t end, PyObject *kwnames,
                      PyObject *kwvalue) {
    PyObject *slice = PySequence_GetSlice(view, start, end);
    if (slice == NULL)
        return -1;
    PyObject *args[2] = {slice, kwvalue};
    PyObject *out = PyObject_Vectorcall(fn, args, 1, kwnames);
    Py_DECREF(slice);
    if (out == NULL) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError) || !PyErr_ExceptionMatches(PyExc_Exception))
            return -1;
        PyErr_Clear();
        return 0;
    }
    return sink_add(sink, out);
}

/* The elements of a raw snappy block after its length preamble, into out[0:declared]; 0 when the
 * block is not exactly that (the rules of the snap crate's raw Decoder, which python-snappy calls
 * through cramjam: every element within the input and the output, copy offsets 1..bytes written,
 * the output filled exactly when the input ends). */
static int snappy_decode(const unsigned char *src, Py_ssize_t n, unsigned char *out, Py_ssize_t declared) {
    Py_ssize_t s = 0, d = 0;
    while (s < n) {
        unsigned tag = src[s++];
        uint64_t len, off;
        if ((tag & 3) == 0) { /* literal: length - 1 in the tag, or in 1-4 bytes after it */
            len = (tag >> 2) + 1;
            if (len > 60) {
                Py_ssize_t extra = (Py_ssize_t)len - 60;
                if (s + extra > n)
                    return 0;
                uint64_t v = 0;
                for (Py_ssize_t i = 0; i < extra; i++)
                    v |= (uint64_t)src[s + i] << (8 * i);
                len = v + 1;
                s += extra;
            }
            if (len > (uint64_t)(n - s) || len > (uint64_t)(declared - d))
                return 0;
            memcpy(out + d, src + s, (size_t)len);
            s += (Py_ssize_t)len;
            d += (Py_ssize_t)len;
            continue;
        }
        if ((tag & 3) == 1) {
            if (s + 1 > n)
                return 0;
            len = 4 + ((tag >> 2) & 7);
            off = ((uint64_t)(tag & 0xE0) << 3) | src[s];
            s += 1;
        } else if ((tag & 3) == 2) {
            if (s + 2 > n)
                return 0;
            len = (tag >> 2) + 1;
            off = (uint64_t)src[s] | (uint64_t)src[s + 1] << 8;
            s += 2;
        } else {
            if (s + 4 > n)
                return 0;
            len = (tag >> 2) + 1;
            off = le32(src + s);
            s += 4;
        }
        if (off == 0 || off > (uint64_t)d || len > (uint64_t)(declared - d))
            return 0;
        for (uint64_t i = 0; i < len; i++, d++) /* may overlap its own output: byte by byte */
            out[d] = out[d - off];
    }
    return d == declared;
}

/* One raw snappy block: its uvarint length preamble checked against the limit first. */
static int snappy_block(sink_t *sink, PyObject *fn, PyObject *view, const unsigned char *b, Py_ssize_t start,
                        Py_ssize_t end) {
    uint64_t declared = 0;
    int shift = 0;
    Py_ssize_t i = 0;
    for (;; i++) {
        if (start + i >= end || i == 5)
            return 0;
        declared |= (uint64_t)(b[start + i] & 0x7F) << shift;
        shift += 7;
        if (!(b[start + i] & 0x80))
            break;
    }
    if ((long long)declared > (long long)(sink->limit - sink->total))
        return 0;
    PyObject *piece = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)declared);
    if (piece == NULL)
        return -1;
    if (!snappy_decode(b + start + i + 1, end - start - i - 1, (unsigned char *)PyBytes_AS_STRING(piece),
                       (Py_ssize_t)declared)) {
        Py_DECREF(piece); /* the library decides (and names the error) */
        return call_block(sink, fn, view, start, end, NULL, NULL);
    }
    return sink_add(sink, piece);
}

static const unsigned char XERIAL_MAGIC[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

/* compression._snappy: a xerial stream (SnappyInputStream) or one raw block. */
static int unframe_snappy(sink_t *sink, PyObject *fn, PyObject *view, const unsigned char *b, Py_ssize_t n) {
    if (n == 0)
        return 0;
    if (n < 16 || memcmp(b, XERIAL_MAGIC, 8) != 0)
        return snappy_block(sink, fn, view, b, 0, n);
    Py_ssize_t pos = 16;
    while (n - pos >= 4) {
        int32_t length = be32(b + pos);
        pos += 4;
        if ((uint32_t)length == 0x82534E41u) { /* a concatenated stream: the rest of its header */
            if (pos + 12 > n)
                return 0;
            if (memcmp(b + pos, XERIAL_MAGIC + 4, 4) != 0)
                return 1; /* snappy-java ends the stream on an invalid concatenated header */
            if (be32(b + pos + 4) < 1)
                return 0;
            pos += 12;
            continue;
        }
        if (length < 0 || pos + length > n)
            return 0;
        int rc = snappy_block(sink, fn, view, b, pos, pos + length);
        if (rc <= 0)
            return rc;
        pos += length;
    }
    return 1;
}

/* compression._lz4: Kafka's LZ4 frame (Lz4BlockInputStream). */
static int unframe_lz4(sink_t *sink, PyObject *fn, PyObject *view, const unsigned char *b, Py_ssize_t n, int magic,
                       PyObject *kwnames) {
    if (n < 7 || le32(b) != 0x184D2204u)
        return 0;
    int flg = b[4], bd = b[5];
    if ((flg & 0x03) || (flg >> 6) != 1 || !(flg & 0x20))
        return 0;
    int bsid = (bd >> 4) & 7;
    if ((bd & 0x8F) || bsid < 4)
        return 0;
    long long max_block = 1LL << (2 * bsid + 8);
    Py_ssize_t pos = (flg & 0x08) ? 14 : 6;
    if (pos + 1 > n)
        return 0;
    if (magic != 0 && b[pos] != ((xxh32(b + 4, (size_t)(pos - 4)) >> 8) & 0xFF))
        return 0;
    pos += 1;
    int checksum = (flg & 0x10) ? 4 : 0;
    PyObject *max_obj = PyLong_FromLongLong(max_block);
    if (max_obj == NULL)
        return -1;
    int rc = 0;
    for (;;) {
        if (pos + 4 > n)
            break;
        uint32_t size = le32(b + pos);
        pos += 4;
        int stored = (size & 0x80000000u) != 0;
        size &= 0x7FFFFFFFu;
        if (size == 0) {
            rc = (flg & 0x04) && pos + 4 > n ? 0 : 1; /* a content checksum is read, not verified */
            break;
        }
        if ((long long)size > max_block || pos + (Py_ssize_t)size + checksum > n)
            break;
        if (checksum && xxh32(b + pos, size) != le32(b + pos + size))
            break;
        if (stored)
            rc = sink_add(sink, PyBytes_FromStringAndSize((const char *)b + pos, size));
        else
            rc = call_block(sink, fn, view, pos, pos + size, kwnames, max_obj);
        if (rc <= 0)
            break;
        rc = 0;
        pos += size + checksum;
    }
    Py_DECREF(max_obj);
    return rc;
}

/* compression._zstd_check_frames: 1 when every frame and block header is whole. */
static int zstd_frames_whole(const unsigned char *b, Py_ssize_t n) {
    long long pos = 0;
    static const int did_size[4] = {0, 1, 2, 4};
    while (pos < n) {
        if (pos + 5 > n)
            return 0;
        uint32_t frame_magic = le32(b + pos);
        if ((frame_magic & 0xFFFFFFF0u) == 0x184D2A50u) { /* skippable frame */
            if (pos + 8 > n)
                return 0;
            pos += 8 + (long long)le32(b + pos + 4);
            continue;
        }
        if (frame_magic != 0xFD2FB528u)
            return 0;
        int fhd = b[pos + 4];
        int single = (fhd >> 5) & 1;
        static const int fcs_size[4] = {0, 2, 4, 8};
        pos += 5 + (1 - single) + did_size[fhd & 3] + ((fhd >> 6) == 0 ? single : fcs_size[fhd >> 6]);
        int last = 0;
        while (!last) {
            if (pos + 3 > n)
                return 0;
            uint32_t header = (uint32_t)b[pos] | (uint32_t)b[pos + 1] << 8 | (uint32_t)b[pos + 2] << 16;
            last = header & 1;
            int block_type = (header >> 1) & 3;
            pos += 3 + (block_type == 1 ? 1 : (header >> 3));
        }
        pos += 4 * ((fhd >> 2) & 1);
    }
    return pos <= n;
}

#ifdef HAVE_ZLIB
/* compression._gzip: gzip members back to back (GZIPInputStream); bytes after a member that do
 * not start with the gzip magic end the stream. zlib does the inflating, as in Python's zlib. */
static int unframe_gzip(sink_t *sink, const unsigned char *b, Py_ssize_t n) {
    if (n == 0 || n > (Py_ssize_t)UINT32_MAX)
        return 0;
    Py_ssize_t pos = 0;
    for (;;) {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
            return 0;
        zs.next_in = (Bytef *)(b + pos);
        zs.avail_in = (uInt)(n - pos);
        Py_ssize_t cap = 4 * (n - pos) + 256, room = sink->limit - sink->total;
        if (cap > room + 1)
            cap = room + 1;
        PyObject *out = PyBytes_FromStringAndSize(NULL, cap);
        Py_ssize_t got = 0;
        int ret = Z_OK;
        while (out != NULL) {
            zs.next_out = (Bytef *)PyBytes_AS_STRING(out) + got;
            zs.avail_out = (uInt)(cap - got);
            ret = inflate(&zs, Z_NO_FLUSH);
            got = cap - (Py_ssize_t)zs.avail_out;
            if (ret != Z_OK || got > room)
                break;
            if (zs.avail_out != 0) { /* no progress with input left or none: truncated */
                ret = Z_BUF_ERROR;
                break;
            }
            Py_ssize_t grown = cap > room / 2 ? room + 1 : 2 * cap;
            if (grown <= cap || _PyBytes_Resize(&out, grown) < 0)
                break;
            cap = grown;
        }
        pos += (n - pos) - (Py_ssize_t)zs.avail_in;
        inflateEnd(&zs);
        if (out == NULL)
            return -1;
        if (ret != Z_STREAM_END || got > room || _PyBytes_Resize(&out, got) < 0) {
            Py_XDECREF(out);
            return PyErr_Occurred() ? -1 : 0;
        }
        int rc = sink_add(sink, out);
        if (rc <= 0)
            return rc;
        if (pos + 2 > n || b[pos] != 0x1f || b[pos + 1] != 0x8b)
            return 1; /* GZIPInputStream ignores what follows unless it is another member */
    }
}
#endif

/* Registered by compression.py (register_codecs): the library calls that decompress one raw block,
 * zstandard's ZstdDecompressor class and the plaintext limit of a batch payload. */
static PyObject *snappy_fn, *lz4_fn, *lz4_kwnames, *zstd_class, *zstd_kwnames, *zstd_key, *read_name,
    *stream_reader_name;
static Py_ssize_t payload_limit = -1;

/* 1 when the call failed with an Exception (cleared: the Python parser decides), -1 otherwise. */
static int library_refused(void) {
    if (PyErr_ExceptionMatches(PyExc_MemoryError) || !PyErr_ExceptionMatches(PyExc_Exception))
        return -1;
    PyErr_Clear();
    return 0;
}

/* compression._zstd: the frames walked here, then read by a ZstdDecompressor of this thread
 * (made once per thread and kept in the thread's dict: making one is most of the cost of a small
 * payload), in chunks of 64 KiB as the Python code reads them. */
static int unframe_zstd(sink_t *sink, PyObject *view, const unsigned char *b, Py_ssize_t n) {
    if (zstd_class == NULL || !zstd_frames_whole(b, n))
        return 0;
    PyObject *dict = PyThreadState_GetDict(); /* borrowed */
    if (dict == NULL)
        return 0;
    PyObject *dctx = PyDict_GetItemWithError(dict, zstd_key); /* borrowed */
    if (dctx == NULL) {
        if (PyErr_Occurred())
            return -1;
        dctx = PyObject_CallNoArgs(zstd_class);
        if (dctx == NULL)
            return library_refused();
        int rc = PyDict_SetItem(dict, zstd_key, dctx);
        Py_DECREF(dctx); /* the dict keeps it */
        if (rc < 0)
            return -1;
    }
    PyObject *args[3] = {dctx, view, Py_True};
    PyObject *reader = PyObject_VectorcallMethod(stream_reader_name, args, 2, zstd_kwnames);
    if (reader == NULL)
        return library_refused();
    int rc = 1;
    for (;;) {
        Py_ssize_t room = sink->limit - sink->total;
        PyObject *size = PyLong_FromSsize_t(room + 1 < 65536 ? room + 1 : 65536);
        if (size == NULL) {
            rc = -1;
            break;
        }
        PyObject *a[2] = {reader, size};
        PyObject *piece = PyObject_VectorcallMethod(read_name, a, 2, NULL);
        Py_DECREF(size);
        if (piece == NULL) {
            rc = library_refused();
            break;
        }
        if (PyBytes_Check(piece) && PyBytes_GET_SIZE(piece) == 0) {
            Py_DECREF(piece);
            break;
        }
        rc = sink_add(sink, piece);
        if (rc <= 0)
            break;
    }
    Py_DECREF(reader);
    return rc;
}

/* The pieces as one bytes object. */
static PyObject *join_pieces(sink_t *sink) {
    Py_ssize_t k = PyList_GET_SIZE(sink->pieces);
    if (k == 1) {
        PyObject *only = PyList_GET_ITEM(sink->pieces, 0);
        Py_INCREF(only);
        return only;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, sink->total);
    if (out == NULL)
        return NULL;
    char *w = PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *piece = PyList_GET_ITEM(sink->pieces, i);
        memcpy(w, PyBytes_AS_STRING(piece), PyBytes_GET_SIZE(piece));
        w += PyBytes_GET_SIZE(piece);
    }
    return out;
}

/* The plaintext of a payload of `codec` (1 gzip with zlib, 2 snappy, 3 lz4, 4 zstd) inside a `magic`
 * batch; `view` is a byte memoryview of exactly the payload. Py_None when a rule is broken or the
 * codec is not taken here (the Python parser then runs), NULL on error. */
static PyObject *plaintext(int codec, PyObject *view, int magic, Py_ssize_t limit) {
    Py_buffer *buf = PyMemoryView_GET_BUFFER(view);
    if (!PyBuffer_IsContiguous(buf, 'C') || buf->itemsize != 1 || (codec != 1 && snappy_fn == NULL))
        Py_RETURN_NONE;
    const unsigned char *b = (const unsigned char *)buf->buf;
    sink_t sink = {PyList_New(0), 0, limit};
    if (sink.pieces == NULL)
        return NULL;
    int rc = 0;
    if (codec == 2)
        rc = unframe_snappy(&sink, snappy_fn, view, b, buf->len);
    else if (codec == 3)
        rc = unframe_lz4(&sink, lz4_fn, view, b, buf->len, magic, lz4_kwnames);
    else if (codec == 4 && magic >= 2) /* zstd is valid in v2 batches only */
        rc = unframe_zstd(&sink, view, b, buf->len);
#ifdef HAVE_ZLIB
    else if (codec == 1)
        rc = unframe_gzip(&sink, b, buf->len);
#endif
    PyObject *out = rc < 0 ? NULL : rc == 0 ? (Py_INCREF(Py_None), Py_None) : join_pieces(&sink);
    Py_DECREF(sink.pieces);
    return out;
}

/* unframe(codec, data, magic, limit) -> bytes, or None (see plaintext()). */
static PyObject *unframe(PyObject *self, PyObject *args) {
    int codec, magic;
    Py_ssize_t limit;
    PyObject *data;
    if (!PyArg_ParseTuple(args, "iOin", &codec, &data, &magic, &limit))
        return NULL;
    PyObject *view = PyMemoryView_FromObject(data);
    if (view == NULL)
        return NULL;
    PyObject *out = plaintext(codec, view, magic, limit);
    Py_DECREF(view);
    return out;
}

/* register_codecs(snappy_uncompress, lz4_block_decompress, ZstdDecompressor, limit): the library
 * calls for raw blocks, the zstd decompressor class and the plaintext limit of a batch payload
 * (compression.py calls it once). */
static PyObject *register_codecs(PyObject *self, PyObject *args) {
    PyObject *s, *l, *z;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "OOOn", &s, &l, &z, &limit))
        return NULL;
    Py_INCREF(s);
    Py_INCREF(l);
    Py_INCREF(z);
    Py_XSETREF(snappy_fn, s);
    Py_XSETREF(lz4_fn, l);
    Py_XSETREF(zstd_class, z);
    payload_limit = limit;
    Py_RETURN_NONE;
}

/* codecs() -> the codec ids whose payloads plaintext() takes (gzip only where zlib was found). */
static PyObject *codecs(PyObject *self, PyObject *unused) {
#ifdef HAVE_ZLIB
    return Py_BuildValue("(iiii)", 1, 2, 3, 4);
#else
    return Py_BuildValue("(iii)", 2, 3, 4);
#endif
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

static uint32_t xxh32_seed0(const unsigned char *p, size_t n) { return xxh32(p, n); }

static PyObject *py_xxh32(PyObject *self, PyObject *arg) { return checksum(arg, xxh32_seed0); }

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

static PyObject *hardware_crc(PyObject *self, PyObject *unused) { return PyBool_FromLong(have_hw_crc); }

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
    {"scan", scan, METH_VARARGS, "Frame the healthy v2 batches from a position on (see the module source)."},
    {"record_block", (PyCFunction)(void (*)(void))record_block, METH_FASTCALL, "The checked records' bytes of a v2 batch, or None."},
    {"record_lines", (PyCFunction)(void (*)(void))record_lines, METH_FASTCALL, "The dump lines of a RecordBlock's records."},
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
    lz4_kwnames = Py_BuildValue("(s)", "uncompressed_size");
    zstd_kwnames = Py_BuildValue("(s)", "read_across_frames");
    zstd_key = PyUnicode_InternFromString("forensics._speedups.zstd");
    read_name = PyUnicode_InternFromString("read");
    stream_reader_name = PyUnicode_InternFromString("stream_reader");
    if (lz4_kwnames == NULL || zstd_kwnames == NULL || zstd_key == NULL || read_name == NULL || stream_reader_name == NULL)
        return NULL;
    return PyModule_Create(&module);
}
