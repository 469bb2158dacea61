/* The records of v2 batches (forensics/codec/batch.py is the reference): records(),
 * record_block() and record_tuples(). */

#include "speedups.h"

/* The length of the well-formed UTF-8 sequence at b[i] (1 to 4 bytes), or 0 when none starts
 * there: as Python's strict decoder takes it (no overlong forms, no surrogates, nothing beyond
 * U+10FFFF). i < n. */
Py_ssize_t utf8_sequence(const unsigned char *b, Py_ssize_t i, Py_ssize_t n) {
    unsigned c = b[i];
    if (c < 0x80)
        return 1;
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
    if (i + k >= n || b[i + 1] < lo || b[i + 1] > hi)
        return 0;
    for (Py_ssize_t j = 2; j <= k; j++)
        if ((b[i + j] & 0xC0) != 0x80)
            return 0;
    return k + 1;
}

/* Is b[0:n) valid UTF-8 (utf8_sequence)? */
int utf8_valid(const unsigned char *b, Py_ssize_t n) {
    for (Py_ssize_t i = 0, k; i < n; i += k)
        if ((k = utf8_sequence(b, i, n)) == 0)
            return 0;
    return 1;
}

/* Parse the record at *p into r; 0 when it breaks a rule (header keys: strict UTF-8). */
int parse_record(const unsigned char *b, Py_ssize_t *p, Py_ssize_t end, rec_t *r) {
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

/* The records of data[p:end) (see records()); NULL with no error set when one breaks a rule. */
PyObject *decode_records(const unsigned char *b, Py_ssize_t p, Py_ssize_t end, long long count,
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
int header_fields(PyObject *header, batch_t *h, long long *attributes, long long *count) {
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
PyObject *batch_data(PyObject *data, Py_ssize_t *p, Py_ssize_t *end, long long attributes) {
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
int view_of(PyObject **data, Py_buffer *view) {
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
PyObject *records(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
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
    if (!registered(NEED_RECORDS))
        return NULL;
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
PyObject *record_block(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
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

/* record_tuples(buf, pos, header): records(buf, pos + 61, pos + 12 + batchLength, header, True)
 * for uncompressed batches and the codecs plaintext() takes; otherwise, or when that hands the
 * batch back, the registered Python record_tuples. */
PyObject *record_tuples(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "record_tuples(buf, pos, header)");
        return NULL;
    }
    if (!registered(NEED_RECORD_TUPLES_FALLBACK))
        return NULL;
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
