/* Legacy messages, magic 0 and 1 (forensics/codec/legacy.py is the reference; Kafka's
 * LegacyRecord and AbstractLegacyRecordBatch.DeepRecordsIterator): legacy_entry(), legacy_inner(),
 * legacy_records() and deep_tuples(). */

#include "speedups.h"

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

/* (offset, timestamp, key, value, ()): the projection of batch.record_tuples() for a legacy message. */
static PyObject *legacy_tuple(const unsigned char *b, const legacy_msg *m) {
    PyObject *f[5] = {PyLong_FromLongLong(m->offset), PyLong_FromLongLong(m->timestamp),
                      span_bytes(b, m->key_pos, m->key_len), span_bytes(b, m->value_pos, m->value_len),
                      PyTuple_New(0)};
    return make_tuple(&PyTuple_Type, 5, f);
}

static PyObject *legacy_record(const unsigned char *b, const legacy_msg *m) {
    PyObject *valid = m->valid ? Py_True : Py_False;
    Py_INCREF(valid);
    PyObject *f[10] = {PyLong_FromLongLong(m->offset), PyLong_FromLong(m->size), PyLong_FromUnsignedLong(m->crc),
                       PyLong_FromLong(m->magic), PyLong_FromLong(m->attributes), PyLong_FromLongLong(m->timestamp),
                       span_bytes(b, m->key_pos, m->key_len), span_bytes(b, m->value_pos, m->value_len), valid,
                       PyLong_FromSsize_t(m->position)};
    return make_tuple(LegacyType, 10, f);
}

/* legacy_entry(buf, pos, end) -> LegacyRecord, or None when the entry breaks a rule (the Python
 * decode_entry() then raises its error). */
PyObject *legacy_entry(PyObject *self, PyObject *args) {
    PyObject *bufobj;
    Py_ssize_t pos, end;
    if (!PyArg_ParseTuple(args, "Onn", &bufobj, &pos, &end) || !registered(NEED_LEGACY))
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
PyObject *legacy_inner(PyObject *self, PyObject *args) {
    PyObject *data, *wrapper;
    int plain = 0;
    if (!PyArg_ParseTuple(args, "OO|p", &data, &wrapper, &plain) || !registered(NEED_LEGACY))
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
PyObject *legacy_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "legacy_records(buf, pos, plain=False)");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    int plain = nargs == 3 ? PyObject_IsTrue(args[2]) : 0;
    if ((pos == -1 && PyErr_Occurred()) || plain < 0 || !registered(NEED_LEGACY))
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

/* deep_tuples(buf, pos): legacy_records(buf, pos, True), or the registered Python deep_tuples. */
PyObject *deep_tuples(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "deep_tuples(buf, pos)");
        return NULL;
    }
    if (!registered(NEED_DEEP_TUPLES_FALLBACK))
        return NULL;
    PyObject *a[3] = {args[0], args[1], Py_True};
    PyObject *out = legacy_records(self, a, 3);
    if (out != Py_None)
        return out;
    Py_DECREF(out);
    return PyObject_Vectorcall(deep_tuples_fallback, args, 2, NULL);
}
