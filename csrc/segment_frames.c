/* Framing the entries of a segment (v2 batches and legacy messages) while nothing needs a finding:
 * scan() makes their Frames, scan_tuples() their records' tuples, and fold.c folds them
 * (forensics/io/frames.py is the reference; healthy_entry() is the test every entry passes). */

#include "speedups.h"

/* The BatchHeader of the v2 batch at p. Its base offset is the Frame's first offset too: given
 * back in *base (a new reference), so that the Frame shares the int instead of making its own;
 * maxTimestamp shares baseTimestamp's int when they are equal (a batch of one record). */
static PyObject *batch_header(const unsigned char *p, PyObject **base) {
    long long base_ts = be64(p + 27), max_ts = be64(p + 35);
    PyObject *ts = PyLong_FromLongLong(base_ts), *max_obj = ts;
    if (max_ts != base_ts)
        max_obj = PyLong_FromLongLong(max_ts);
    else
        Py_XINCREF(ts);
    PyObject *f[13] = {
        PyLong_FromLongLong(be64(p)),      PyLong_FromLong(be32(p + 8)),      PyLong_FromLong(be32(p + 12)),
        PyLong_FromLong((signed char)p[16]), PyLong_FromUnsignedLong(be32u(p + 17)), PyLong_FromLong(be16(p + 21)),
        PyLong_FromLong(be32(p + 23)),     ts,                                max_obj,
        PyLong_FromLongLong(be64(p + 43)), PyLong_FromLong(be16(p + 51)),     PyLong_FromLong(be32(p + 53)),
        PyLong_FromLong(be32(p + 57)),
    };
    *base = f[0];
    Py_XINCREF(f[0]);
    PyObject *header = make_tuple(HeaderType, 13, f);
    if (header == NULL)
        Py_CLEAR(*base);
    return header;
}

/* The arguments scan() and scan_tuples() share: (buf, pos, end, verify_crc, base_offset|None,
 * next_offset|None, ...); 0 with an error set when they do not parse. */
int offsets_of(PyObject *base_obj, PyObject *next_obj, offsets_t *o) {
    o->has_base = base_obj != Py_None;
    o->has_next = next_obj != Py_None;
    o->base = o->next = 0;
    if (o->has_base && (o->base = PyLong_AsLongLong(base_obj)) == -1 && PyErr_Occurred())
        return 0;
    if (o->has_next && (o->next = PyLong_AsLongLong(next_obj)) == -1 && PyErr_Occurred())
        return 0;
    return 1;
}

/* Is the entry at pos healthy, as the Python scanner would frame it without a finding? Then 1 with
 * its magic, size, first and last offset and the next expected offset after it (*next_after;
 * committed by the caller). 0: the Python scanner must look at it. The offset rules are
 * FrameScanner._check_offsets'. */
int healthy_entry(const unsigned char *b, Py_ssize_t pos, Py_ssize_t end, int verify, const offsets_t *o,
                         int *magic_out, Py_ssize_t *size_out, long long *first, long long *last_out,
                         long long *next_after) {
    if (end - pos <= 17)
        return 0;
    const unsigned char *p = b + pos;
    long long offset = be64(p);
    int32_t length = be32(p + 8);
    int magic = p[16];
    Py_ssize_t size = 12 + (Py_ssize_t)length;
    long long last = offset;
    if (size > 0 && pos + size + 61 <= end) { /* the next entry's header (two cache lines) loads while this one is made */
        __builtin_prefetch(p + size);
        __builtin_prefetch(p + size + 60);
    }
    if (magic == 2) {
        if (length < 49 || (long long)pos + 12 + length > (long long)end)
            return 0;
        if (verify && crc32c(p + 21, (size_t)size - 21) != be32u(p + 17))
            return 0;
        /* offsets at the ends of the int64 range (damage) overflow here: the Python scanner takes them */
        if (__builtin_add_overflow(offset, (long long)be32(p + 23), &last))
            return 0;
        if (o->has_next && offset < o->next) /* a regression is checked for v2 batches only */
            return 0;
    } else if (magic <= 1) { /* a legacy entry: its offset is its last; CRC-32 from the magic byte */
        if (length < 14 || (long long)pos + 12 + length > (long long)end)
            return 0;
        if (verify && crc32_ieee(p + 16, (size_t)size - 16) != be32u(p + 12))
            return 0;
    } else {
        return 0;
    }
    long long above_base, following;
    if (o->has_base && (offset < o->base || __builtin_sub_overflow(last, o->base, &above_base) || above_base > INT32_MAX_))
        return 0;
    if (__builtin_add_overflow(last, 1LL, &following))
        return 0;
    *next_after = o->has_next ? (o->next > following ? o->next : following) : (following > 0 ? following : 0);
    *magic_out = magic;
    *size_out = size;
    *first = offset;
    *last_out = last;
    return 1;
}

/* The buffer scan() and scan_tuples() read, with [pos, end) clamped to it; 0 with an error set
 * when the object has none. The caller releases the view. */
int clamped_view(PyObject *bufobj, Py_buffer *view, Py_ssize_t *pos, Py_ssize_t *end) {
    if (PyObject_GetBuffer(bufobj, view, PyBUF_SIMPLE) < 0)
        return 0;
    if (*pos < 0)
        *pos = 0;
    if (*end > view->len)
        *end = view->len;
    return 1;
}

/* The (items, pos, next_offset|None, valid_bytes) scan() and scan_tuples() return. */
PyObject *scan_result(PyObject *items, Py_ssize_t pos, const offsets_t *o, long long valid) {
    PyObject *next_out = o->has_next ? PyLong_FromLongLong(o->next) : (Py_INCREF(Py_None), Py_None);
    if (next_out == NULL) {
        Py_DECREF(items);
        return NULL;
    }
    return Py_BuildValue("(NnNL)", items, pos, next_out, valid);
}

/* scan(buf, pos, end, verify_crc, base_offset|None, next_offset|None, with_headers, limit)
 *   -> (frames, pos, next_offset|None, valid_bytes)
 * Frames the healthy entries (v2 batches, legacy messages) from pos on, at most `limit`; stops
 * before the first entry the Python scanner must look at. */
PyObject *scan(PyObject *self, PyObject *args) {
    PyObject *bufobj, *base_obj, *next_obj;
    Py_ssize_t pos, end, limit;
    int verify, with_headers;
    offsets_t o;
    if (!PyArg_ParseTuple(args, "OnnpOOpn", &bufobj, &pos, &end, &verify, &base_obj, &next_obj, &with_headers, &limit) ||
        !offsets_of(base_obj, next_obj, &o))
        return NULL;
    if (!registered(NEED_FRAMES))
        return NULL;
    Py_buffer view;
    if (!clamped_view(bufobj, &view, &pos, &end))
        return NULL;
    const unsigned char *b = (const unsigned char *)view.buf;
    PyObject *frames = PyList_New(0);
    long long valid = 0;
    if (frames == NULL)
        goto fail;
    PyObject *crc_flag = verify ? Py_True : Py_None;
    int magic;
    Py_ssize_t size;
    long long offset, last, next_after;
    while (pos < end && PyList_GET_SIZE(frames) < limit &&
           healthy_entry(b, pos, end, verify, &o, &magic, &size, &offset, &last, &next_after)) {
        o.next = next_after;
        o.has_next = 1;
        PyObject *header = Py_None, *first;
        if (with_headers && magic == 2) {
            header = batch_header(b + pos, &first);
            if (header == NULL)
                goto fail;
        } else {
            Py_INCREF(header);
            first = PyLong_FromLongLong(offset);
        }
        Py_INCREF(crc_flag);
        PyObject *last_obj = first;
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
    return scan_result(frames, pos, &o, valid);
fail:
    Py_XDECREF(frames);
    PyBuffer_Release(&view);
    return NULL;
}

/* The record tuples of the healthy entry at pos (batch.record_tuples / legacy.deep_tuples of it):
 * a new list or tuple; Py_None when they must come from Python (a record breaks a rule, a codec not
 * taken here); NULL on error. */
static PyObject *entry_tuples(PyObject *self, PyObject *bufobj, const unsigned char *b, Py_ssize_t pos,
                              Py_ssize_t size, int magic) {
    if (magic != 2) {
        PyObject *at = PyLong_FromSsize_t(pos);
        if (at == NULL)
            return NULL;
        PyObject *a[3] = {bufobj, at, Py_True};
        PyObject *out = legacy_records(self, a, 3);
        Py_DECREF(at);
        return out;
    }
    const unsigned char *p = b + pos; /* the BatchHeader fields records() reads, from the bytes */
    batch_t h = {be64(p), be64(p + 27), be64(p + 35), be32(p + 53), (be16(p + 21) & 0x08) != 0};
    long long attributes = be16(p + 21), count = be32(p + 57);
    int codec = (int)(attributes & 0x07);
    if (count < 0 || !(codec == 0 || codec == 2 || codec == 3 || codec == 4 || (codec == 1 && codecs_has_zlib())))
        Py_RETURN_NONE;
    Py_ssize_t start = pos + 61, stop = pos + size;
    Py_buffer view;
    PyObject *data = batch_data(bufobj, &start, &stop, attributes);
    if (!view_of(&data, &view))
        return data;
    PyObject *out = NULL;
    if (stop <= view.len && start >= 0 && start <= stop)
        out = decode_records((const unsigned char *)view.buf, start, stop, count, &h, 1, 0);
    PyBuffer_Release(&view);
    Py_DECREF(data);
    if (out == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return out;
}

/* scan_tuples(buf, pos, end, verify_crc, base_offset|None, next_offset|None, limit)
 *   -> (records, pos, next_offset|None, valid_bytes)
 * scan() without the frames: the (offset, timestamp, key, value, headers) tuples of every record
 * of the healthy entries from pos on (v2 batches as record_tuples gives them, legacy entries deep as
 * deep_tuples does), in one list: whole entries until it holds at least `limit` records. Stops before the first entry the
 * Python scanner must look at, or whose records the Python decoders must give. */
PyObject *scan_tuples(PyObject *self, PyObject *args) {
    PyObject *bufobj, *base_obj, *next_obj;
    Py_ssize_t pos, end, limit;
    int verify;
    offsets_t o;
    if (!PyArg_ParseTuple(args, "OnnpOOn", &bufobj, &pos, &end, &verify, &base_obj, &next_obj, &limit) ||
        !offsets_of(base_obj, next_obj, &o))
        return NULL;
    if (!registered(NEED_RECORDS | NEED_LEGACY))
        return NULL;
    Py_buffer view;
    if (!clamped_view(bufobj, &view, &pos, &end))
        return NULL;
    const unsigned char *b = (const unsigned char *)view.buf;
    PyObject *out = PyList_New(0);
    long long valid = 0;
    if (out == NULL)
        goto fail;
    int magic;
    Py_ssize_t size;
    long long offset, last, next_after;
    while (pos < end && PyList_GET_SIZE(out) < limit) {
        if (!healthy_entry(b, pos, end, verify, &o, &magic, &size, &offset, &last, &next_after))
            break;
        PyObject *items = entry_tuples(self, bufobj, b, pos, size, magic);
        if (items == NULL)
            goto fail;
        if (items == Py_None) {
            Py_DECREF(items);
            break;
        }
        PyObject *fast = PySequence_Fast(items, "records");
        Py_DECREF(items);
        if (fast == NULL)
            goto fail;
        Py_ssize_t have = PyList_GET_SIZE(out);
        int rc = PyList_SetSlice(out, have, have, fast);
        Py_DECREF(fast);
        if (rc < 0)
            goto fail;
        o.next = next_after;
        o.has_next = 1;
        valid += size;
        pos += size;
    }
    PyBuffer_Release(&view);
    return scan_result(out, pos, &o, valid);
fail:
    Py_XDECREF(out);
    PyBuffer_Release(&view);
    return NULL;
}
