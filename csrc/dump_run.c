/* The dump's lines of a run of v2 batches in one call: dump_batches() (render/dump_text.py's
 * _batch_run is the caller; each batch handed back it writes in Python, from its rows). */

#include "text.h"

/* A run's text is returned once it holds this much (a run of big batches stays bounded). */
#define RUN_TEXT_LIMIT (1 << 20)

/* The 13 BatchHeader fields of the v2 batch at p, in its order (codec/batch.py's HEADER). */
static void header_at(const unsigned char *p, long long f[13]) {
    f[0] = be64(p);
    f[1] = be32(p + 8);
    f[2] = be32(p + 12);
    f[3] = (signed char)p[16];
    f[4] = be32u(p + 17);
    f[5] = be16(p + 21);
    f[6] = be32(p + 23);
    f[7] = be64(p + 27);
    f[8] = be64(p + 35);
    f[9] = be64(p + 43);
    f[10] = be16(p + 51);
    f[11] = be32(p + 53);
    f[12] = be32(p + 57);
}

/* The lines of the legacy entry at position (its line, as render/dump_text.batch_line writes a
 * LegacyRecord's, and its records', the inner messages of a wrapper), as frame_lines. */
static int legacy_frame_lines(text_t *t, PyObject *bufobj, Py_ssize_t position, Py_ssize_t buf_len, int contents,
                              int skip) {
    static const char *const codecs[] = {"none", "gzip", "snappy", "lz4"};
    PyObject *args = Py_BuildValue("(Onn)", bufobj, position, buf_len);
    PyObject *entry = args == NULL ? NULL : legacy_entry(NULL, args); /* decode_entry's LegacyRecord */
    Py_XDECREF(args);
    if (entry == NULL)
        return 0;
    long long offset, size, crc, magic, attributes, timestamp;
    PyObject *records = NULL;
    int ok = -1;
    if (entry == Py_None || !tuple_int64(entry, 0, &offset) || !tuple_int64(entry, 1, &size) ||
        !tuple_int64(entry, 2, &crc) || !tuple_int64(entry, 3, &magic) || !tuple_int64(entry, 4, &attributes) ||
        !tuple_int64(entry, 5, &timestamp) || (attributes & 0x07) > 3)
        goto done; /* a codec id legacy entries do not have: Python says so */
    if (attributes & 0x07) { /* a wrapper: its inner messages, as legacy.iter_deep gives them */
        PyObject *pos = PyLong_FromSsize_t(position);
        PyObject *a[2] = {bufobj, pos};
        records = pos == NULL ? NULL : legacy_records(NULL, a, 2);
        Py_XDECREF(pos);
        if (records == NULL) {
            ok = 0;
            goto done;
        }
        if (records == Py_None)
            goto done;
    } else {
        records = PyTuple_Pack(1, entry);
        if (records == NULL) {
            ok = 0;
            goto done;
        }
    }
    const char *label = magic == 0 ? "NoTimestampType" : (attributes & 0x08) ? "LogAppendTime" : "CreateTime";
    Py_ssize_t mark = t->len;
    ok = TEXT_LIT(t, "offset: ") && text_int(t, offset) && TEXT_LIT(t, " position: ") && text_int(t, position) &&
         TEXT_LIT(t, " ") && text_put(t, label, (Py_ssize_t)strlen(label)) && TEXT_LIT(t, ": ") &&
         text_int(t, timestamp) && TEXT_LIT(t, " size: ") && text_int(t, 12 + size) && TEXT_LIT(t, " magic: ") &&
         text_int(t, magic) && TEXT_LIT(t, " compresscodec: ") &&
         text_put(t, codecs[attributes & 0x07], (Py_ssize_t)strlen(codecs[attributes & 0x07])) &&
         TEXT_LIT(t, " crc: ") && text_int(t, crc) &&
         (PyTuple_GET_ITEM(entry, 8) == Py_True ? TEXT_LIT(t, " isvalid: true\n") : TEXT_LIT(t, " isvalid: false\n"));
    if (ok)
        ok = text_legacy_records(t, records, label, (Py_ssize_t)strlen(label), contents, skip);
    if (ok < 0)
        t->len = mark;
done:
    Py_XDECREF(records);
    Py_DECREF(entry);
    return ok;
}

/* The lines of the entry a Frame names (its batch line and its records' lines, each ending in a
 * newline), appended to t: 1; 0 on error; -1 when Python must write it (a legacy entry with a
 * decoder, or that does not decode, a codec not decompressed here, a record that breaks a rule, a control batch that is compressed or
 * holds anything but end-transaction markers, a field out of range): t is then as it was. */
static int frame_lines(text_t *t, PyObject *bufobj, const unsigned char *b, Py_ssize_t buf_len, PyObject *frame,
                       int contents, int skip, int decoder) {
    long long position, magic;
    if (!PyTuple_Check(frame) || PyTuple_GET_SIZE(frame) < 6 || !tuple_int64(frame, 0, &position) ||
        !tuple_int64(frame, 2, &magic) || position < 0)
        return -1;
    if ((magic == 0 || magic == 1) && decoder == TEXT_STRINGS)
        return legacy_frame_lines(t, bufobj, (Py_ssize_t)position, buf_len, contents, skip);
    if (magic != 2 || position > buf_len - 61)
        return -1;
    const unsigned char *p = b + position;
    long long f[13];
    header_at(p, f);
    long long length = f[1], attributes = f[5], count = f[12];
    int control = (attributes & 0x20) != 0;
    if (length < 49 || position + 12 + length > buf_len || count < 0 || (control && (attributes & 0x07)))
        return -1;
    Py_ssize_t mark = t->len;
    int ok = text_batch_line(t, f, position, PyTuple_GET_ITEM(frame, 5) != Py_False);
    if (ok <= 0)
        return ok;
    if (!TEXT_LIT(t, "\n"))
        return 0;
    batch_t h = {f[0], f[7], f[8], f[11], (attributes & 0x08) != 0};
    const char *label = h.log_append ? "LogAppendTime" : "CreateTime";
    Py_ssize_t label_len = h.log_append ? 13 : 10;
    Py_ssize_t start = (Py_ssize_t)position + 61, stop = (Py_ssize_t)(position + 12 + length);
    if ((attributes & 0x07) == 0) {
        ok = text_records(t, b, start, stop, &h, count, label, label_len, contents, skip, control ? TEXT_MARKER : decoder);
    } else { /* decompressed as record_block() does it (batch_data: plaintext() within payload_limit) */
        Py_buffer view;
        PyObject *data = batch_data(bufobj, &start, &stop, attributes);
        if (!view_of(&data, &view)) {
            t->len = mark;
            return data == NULL ? 0 : -1;
        }
        ok = stop <= view.len ? text_records(t, (const unsigned char *)view.buf, start, stop, &h, count, label,
                                             label_len, contents, skip, decoder)
                              : -1;
        PyBuffer_Release(&view);
        Py_DECREF(data);
    }
    if (ok <= 0)
        t->len = mark;
    return ok;
}

/* dump_batches(buf, frames, start, print_contents, skip_metadata, decoder=None) -> (text, next, python)
 * The dump's lines of frames[start:] (Frames of the segment buffer buf), batch after batch, until
 * a frame Python must write (python: True, frames[next] is that frame), the text reaching
 * RUN_TEXT_LIMIT (python: False, frames[next] is the next to write) or the end (next: len).
 * decoder: None (keys and payloads as strings), "transaction-log" or "offsets". */
PyObject *dump_batches(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 && nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "dump_batches(buf, frames, start, print_contents, skip_metadata, decoder=None)");
        return NULL;
    }
    Py_ssize_t i = PyLong_AsSsize_t(args[2]);
    int contents = PyObject_IsTrue(args[3]), skip = PyObject_IsTrue(args[4]), decoder = TEXT_STRINGS;
    if ((i == -1 && PyErr_Occurred()) || contents < 0 || skip < 0)
        return NULL;
    if (nargs == 6 && args[5] != Py_None) {
        const char *name = PyUnicode_Check(args[5]) ? PyUnicode_AsUTF8(args[5]) : NULL;
        if (name != NULL && strcmp(name, "transaction-log") == 0)
            decoder = TEXT_TXNLOG;
        else if (name != NULL && strcmp(name, "offsets") == 0)
            decoder = TEXT_OFFSETS;
        else {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "dump_batches: decoder None, 'transaction-log' or 'offsets'");
            return NULL;
        }
    }
    PyObject *seq = PySequence_Fast(args[1], "dump_batches() needs a sequence of Frame");
    if (seq == NULL)
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **frames = PySequence_Fast_ITEMS(seq);
    text_t t = {NULL, 0, 0};
    int ok = 1, python = 0;
    if (i < 0)
        i = 0;
    while (i < n && t.len < RUN_TEXT_LIMIT) {
        ok = frame_lines(&t, args[0], (const unsigned char *)view.buf, view.len, frames[i], contents, skip, decoder);
        if (ok <= 0)
            break;
        i++;
    }
    PyBuffer_Release(&view);
    Py_DECREF(seq);
    if (ok == 0) {
        PyMem_Free(t.p);
        return NULL;
    }
    python = ok < 0;
    PyObject *text = t.len ? PyUnicode_DecodeUTF8(t.p, t.len, "strict") : PyUnicode_New(0, 0);
    PyMem_Free(t.p);
    if (text == NULL)
        return NULL;
    return Py_BuildValue("(NnO)", text, i, python ? Py_True : Py_False);
}
