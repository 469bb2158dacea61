/* Framing the entries of a segment: scan() (forensics/io/frames.py is the reference), and the
 * tuples the accelerator makes. */

#include "speedups.h"

PyTypeObject *FrameType, *HeaderType, *RecordType, *RecHeaderType, *LegacyType;

/* A new instance of a tuple subclass, as tuple.__new__(type, items) makes it; steals the items.
 * Every item given here is atomic (int, bool, None, bytes, str) or a tuple made here, so the
 * result can never be part of a reference cycle: it is untracked by the garbage collector at once
 * (CPython does the same to such tuples, later). Without that, the millions of short-lived tuples
 * of a scan make every young-generation collection walk them. */
PyObject *make_tuple(PyTypeObject *type, Py_ssize_t n, PyObject **items) {
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

/* scan(buf, pos, end, verify_crc, base_offset|None, next_offset|None, with_headers, limit)
 *   -> (frames, pos, next_offset|None, valid_bytes)
 * Frames the healthy entries (v2 batches, legacy messages) from pos on, at most `limit`; stops before the first entry the
 * Python scanner must look at. The offset rules are FrameScanner._check_offsets'. */
PyObject *scan(PyObject *self, PyObject *args) {
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

/* An int64 field of a header tuple; 0 with no error set when it does not fit (the Python decoder,
 * whose ints do not overflow, then takes the batch). */
int tuple_int64(PyObject *t, Py_ssize_t i, long long *out) {
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
