#include "text.h"

/* ---------------------------------------------------------------------------------------------
 * The dump's record lines (forensics/render/dump_text.py is the reference: data_record_lines and
 * _line for the data records of a v2 batch), written straight from a checked RecordBlock's bytes,
 * without a Python object per record.
 */

/* How many bytes from b[i], where no well-formed sequence starts, Java's UTF-8 decoder replaces
 * with one U+FFFD (codec/java_reader.py's _java_malformed is the reference). */
static Py_ssize_t java_malformed(const unsigned char *b, Py_ssize_t i, Py_ssize_t n) {
    unsigned b1 = b[i];
#define CONT(x) (((x) & 0xC0) == 0x80)
    if (b1 >= 0xE0 && b1 <= 0xEF) {
        if (i + 1 < n && ((b1 == 0xE0 && (b[i + 1] & 0xE0) == 0x80) || !CONT(b[i + 1])))
            return 1;
        if (i + 2 >= n)
            return n - i;
        return CONT(b[i + 2]) ? 3 : 2; /* 3: a surrogate encoded */
    }
    if (b1 >= 0xF0 && b1 <= 0xF7) {
        if (b1 > 0xF4 || (i + 1 < n && ((b1 == 0xF0 && (b[i + 1] < 0x90 || b[i + 1] > 0xBF)) ||
                                        (b1 == 0xF4 && (b[i + 1] & 0xF0) != 0x80) || !CONT(b[i + 1]))))
            return 1;
        if (i + 2 < n && !CONT(b[i + 2]))
            return 2;
        return i + 3 < n ? 3 : n - i;
    }
#undef CONT
    return 1;
}

int text_string(text_t *t, const unsigned char *b, Py_ssize_t n) {
    Py_ssize_t i = 0;
    for (uint64_t w; i + 8 <= n; i += 8) { /* ASCII, eight bytes a step */
        memcpy(&w, b + i, 8);
        if (w & 0x8080808080808080ULL)
            break;
    }
    while (i < n && b[i] < 0x80)
        i++;
    if (i == n || utf8_valid(b + i, n - i))
        return text_put(t, (const char *)b, n);
    /* as Java's new String(b, UTF_8) (Kafka's StringDecoder): each malformed sequence one U+FFFD */
    if (!text_reserve(t, 3 * n))
        return 0;
    Py_ssize_t done = 0;
    while (i < n) {
        Py_ssize_t k = utf8_sequence(b, i, n);
        if (k) {
            i += k;
            continue;
        }
        memcpy(t->p + t->len, b + done, (size_t)(i - done));
        t->len += i - done;
        memcpy(t->p + t->len, "\xEF\xBF\xBD", 3);
        t->len += 3;
        i += java_malformed(b, i, n);
        done = i;
    }
    return text_put(t, (const char *)b + done, n - done);
}

/* The end of a record line: key and payload when printed, and the newline (_line's tail). */
static int text_contents(text_t *t, const char *prefix, int contents, const unsigned char *key, Py_ssize_t key_len,
                         const unsigned char *value, Py_ssize_t value_len) {
    if (contents && key_len >= 0 &&
        !(text_put(t, prefix, (Py_ssize_t)strlen(prefix)) && TEXT_LIT(t, "key: ") && text_string(t, key, key_len)))
        return 0;
    if (contents && value_len >= 0 && !(TEXT_LIT(t, " payload: ") && text_string(t, value, value_len)))
        return 0;
    return TEXT_LIT(t, "\n");
}

PyObject *text_result(text_t *t, int ok) {
    PyObject *out;
    if (ok > 0)
        out = PyUnicode_DecodeUTF8(t->p, t->len, "strict");
    else if (ok == 0 && PyErr_Occurred())
        out = NULL;
    else
        out = (Py_INCREF(Py_None), Py_None);
    PyMem_Free(t->p);
    return out;
}

/* A bytes item (or None: len -1) of a tuple; 0 when it is neither. */
static int item_bytes(PyObject *tuple, Py_ssize_t i, const unsigned char **b, Py_ssize_t *len) {
    PyObject *v = PyTuple_GET_ITEM(tuple, i);
    if (v == Py_None) {
        *b = NULL;
        *len = -1;
        return 1;
    }
    if (!PyBytes_Check(v))
        return 0;
    *b = (const unsigned char *)PyBytes_AS_STRING(v);
    *len = PyBytes_GET_SIZE(v);
    return 1;
}

int text_legacy_records(text_t *t, PyObject *records, const char *label, Py_ssize_t label_len, int contents, int skip) {
    PyObject *seq = PySequence_Fast(records, "legacy_lines() needs a sequence of LegacyRecord");
    if (seq == NULL)
        return 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int ok = text_reserve(t, 200 * n + 64);
    for (Py_ssize_t i = 0; ok > 0 && i < n; i++) {
        PyObject *r = PySequence_Fast_GET_ITEM(seq, i);
        long long offset, crc, timestamp;
        const unsigned char *key, *value;
        Py_ssize_t key_len, value_len;
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 10 || !tuple_int64(r, 0, &offset) || !tuple_int64(r, 2, &crc) ||
            !tuple_int64(r, 5, &timestamp) || !item_bytes(r, 6, &key, &key_len) || !item_bytes(r, 7, &value, &value_len) ||
            !PyBool_Check(PyTuple_GET_ITEM(r, 8))) {
            ok = -1;
            break;
        }
        const char *prefix = "| ";
        if (!skip) {
            ok = TEXT_LIT(t, "| offset: ") && text_int(t, offset) && TEXT_LIT(t, " ") &&
                 text_put(t, label, label_len) && TEXT_LIT(t, ": ") && text_int(t, timestamp) &&
                 TEXT_LIT(t, " keySize: ") && text_int(t, key_len) && TEXT_LIT(t, " valueSize: ") &&
                 text_int(t, value_len) &&
                 (PyTuple_GET_ITEM(r, 8) == Py_True ? TEXT_LIT(t, " isValid: true crc: ")
                                                    : TEXT_LIT(t, " isValid: false crc: ")) &&
                 text_int(t, crc) && TEXT_LIT(t, "}");
            prefix = " ";
        }
        ok = ok && text_contents(t, prefix, contents, key, key_len, value, value_len);
    }
    Py_DECREF(seq);
    return ok;
}

/* legacy_lines(records, ts_label, print_contents, skip_metadata) -> str: the dump lines of legacy
 * records (a sequence of LegacyRecord: an uncompressed entry, or a wrapper's inner messages), as
 * _line writes them for magic 0 and 1; None when an item is not a LegacyRecord of ints and bytes. */
PyObject *legacy_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "legacy_lines(records, ts_label, print_contents, skip_metadata)");
        return NULL;
    }
    int contents = PyObject_IsTrue(args[2]), skip = PyObject_IsTrue(args[3]);
    Py_ssize_t label_len;
    const char *label = PyUnicode_AsUTF8AndSize(args[1], &label_len);
    if (contents < 0 || skip < 0 || label == NULL)
        return NULL;
    text_t t = {NULL, 0, 0};
    return text_result(&t, text_legacy_records(&t, args[0], label, label_len, contents, skip));
}

/* The text of an end-transaction marker (codec/control.format_control_record): 1, -1 when the
 * record is not a well-formed ABORT or COMMIT marker (Python then writes the batch, or says why
 * it does not decode). */
static int text_marker(text_t *t, const unsigned char *b, const rec_t *r) {
    if (r->key_len < 4 || r->value_len < 6)
        return -1;
    const unsigned char *k = b + r->key_pos, *v = b + r->value_pos;
    int key_version = be16(k), type = be16(k + 2), value_version = be16(v);
    if (key_version < 0 || value_version < 0 || (type != 0 && type != 1))
        return -1;
    return (type ? TEXT_LIT(t, " endTxnMarker: COMMIT coordinatorEpoch: ")
                 : TEXT_LIT(t, " endTxnMarker: ABORT coordinatorEpoch: ")) &&
           text_int(t, be32(v + 2));
}

int text_records(text_t *t, const unsigned char *b, Py_ssize_t p, Py_ssize_t end, const batch_t *h, long long count,
                 const char *label, Py_ssize_t label_len, int contents, int skip, int mode) {
    if (count > (end - p) / 2 + 1 || !text_reserve(t, 2 * (end - p) + 130 * count + 64))
        return count > (end - p) / 2 + 1 ? -1 : 0;
    for (long long i = 0; i < count; i++) {
        rec_t r;
        long long offset, ts;
        if (p >= end || !parse_record(b, &p, end, &r) || !record_offset_ts(h, &r, &offset, &ts))
            return -1;
        const char *prefix = "| ";
        if (!skip) {
            int ok = TEXT_LIT(t, "| offset: ") && text_int(t, offset) && TEXT_LIT(t, " ") &&
                     text_put(t, label, label_len) && TEXT_LIT(t, ": ") && text_int(t, ts) &&
                     TEXT_LIT(t, " keySize: ") && text_int(t, r.key_len) && TEXT_LIT(t, " valueSize: ") &&
                     text_int(t, r.value_len) && TEXT_LIT(t, " sequence: ") && text_int(t, record_sequence(h, &r)) &&
                     TEXT_LIT(t, " headerKeys: [");
            Py_ssize_t q = r.headers_pos;
            for (int64_t k = 0; ok && k < r.header_count; k++) {
                int64_t hk_len = 0;
                Py_ssize_t at, len;
                varint32(b, &q, r.body_end, &hk_len); /* checked by parse_record */
                ok = (k == 0 || TEXT_LIT(t, ",")) && text_put(t, (const char *)b + q, (Py_ssize_t)hk_len);
                q += hk_len;
                nullable_span(b, &q, r.body_end, &at, &len);
            }
            if (!(ok && TEXT_LIT(t, "]")))
                return 0;
            prefix = " ";
        }
        if (mode == TEXT_STRINGS) {
            if (!text_contents(t, prefix, contents, b + r.key_pos, r.key_len, b + r.value_pos, r.value_len))
                return 0;
            continue;
        }
        int done; /* the marker instead of key and payload (nothing with --skip-record-metadata), or a decoder's */
        const unsigned char *key = r.key_len < 0 ? NULL : b + r.key_pos, *value = r.value_len < 0 ? NULL : b + r.value_pos;
        if (mode == TEXT_MARKER)
            done = skip ? 1 : text_marker(t, b, &r);
        else if (mode == TEXT_TXNLOG)
            done = text_txnlog(t, prefix, key, r.key_len, value, r.value_len);
        else
            done = text_offsets(t, prefix, key, r.key_len, value, r.value_len);
        if (done <= 0)
            return done;
        if (!TEXT_LIT(t, "\n"))
            return 0;
    }
    return p == end ? 1 : -1;
}

/* record_lines(data, header, ts_label, print_contents, skip_metadata) -> str: the dump lines of the
 * records in data (a RecordBlock's bytes), each ending in a newline; None if they do not parse. */
PyObject *record_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
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
    text_t t = {NULL, 0, 0};
    int ok =
        text_records(&t, (const unsigned char *)view.buf, 0, view.len, &h, count, label, label_len, contents, skip,
                     TEXT_STRINGS);
    PyBuffer_Release(&view);
    return text_result(&t, ok);
}

int text_batch_line(text_t *t, const long long f[13], long long position, int valid) {
    static const char *const codecs[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    long long base = f[0], length = f[1], epoch = f[2], magic = f[3], crc = f[4], attributes = f[5], delta = f[6],
              base_ts = f[7], max_ts = f[8], pid = f[9], pepoch = f[10], base_seq = f[11], count = f[12];
    long long last, size, codec = attributes & 0x07;
    if (__builtin_add_overflow(base, delta, &last) || __builtin_add_overflow(length, 12LL, &size) || codec > 4 ||
        base_seq < -(INT32_MAX_ + 1) || base_seq > INT32_MAX_ || delta < -(INT32_MAX_ + 1) || delta > INT32_MAX_)
        return -1;
    long long last_seq = base_seq == -1 ? -1 : increment_sequence(base_seq, delta);
    return text_reserve(t, 512) && TEXT_LIT(t, "baseOffset: ") && text_int(t, base) &&
           TEXT_LIT(t, " lastOffset: ") && text_int(t, last) && TEXT_LIT(t, " count: ") && text_int(t, count) &&
           TEXT_LIT(t, " baseSequence: ") && text_int(t, base_seq) && TEXT_LIT(t, " lastSequence: ") &&
           text_int(t, last_seq) && TEXT_LIT(t, " producerId: ") && text_int(t, pid) &&
           TEXT_LIT(t, " producerEpoch: ") && text_int(t, pepoch) && TEXT_LIT(t, " partitionLeaderEpoch: ") &&
           text_int(t, epoch) &&
           (attributes & 0x10 ? TEXT_LIT(t, " isTransactional: true") : TEXT_LIT(t, " isTransactional: false")) &&
           (attributes & 0x20 ? TEXT_LIT(t, " isControl: true") : TEXT_LIT(t, " isControl: false")) &&
           (attributes & 0x40 ? TEXT_LIT(t, " deleteHorizonMs: OptionalLong[") && text_int(t, base_ts) &&
                                    TEXT_LIT(t, "]")
                              : TEXT_LIT(t, " deleteHorizonMs: OptionalLong.empty")) &&
           TEXT_LIT(t, " position: ") && text_int(t, position) &&
           (attributes & 0x08 ? TEXT_LIT(t, " LogAppendTime: ") : TEXT_LIT(t, " CreateTime: ")) &&
           text_int(t, max_ts) && TEXT_LIT(t, " size: ") && text_int(t, size) && TEXT_LIT(t, " magic: ") &&
           text_int(t, magic) && TEXT_LIT(t, " compresscodec: ") &&
           text_put(t, codecs[codec], (Py_ssize_t)strlen(codecs[codec])) && TEXT_LIT(t, " crc: ") &&
           text_int(t, crc) && (valid ? TEXT_LIT(t, " isvalid: true") : TEXT_LIT(t, " isvalid: false"));
}

/* batch_line(header, position, valid) -> str: the dump's line of a v2 batch (without its newline),
 * as render/dump_text.batch_line writes it from the BatchHeader tuple; None when a field is not
 * an int64 value or the codec id is undefined (Python then writes it). */
PyObject *batch_line(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "batch_line(header, position, valid)");
        return NULL;
    }
    PyObject *h = args[0];
    long long f[13];
    if (!PyTuple_Check(h) || PyTuple_GET_SIZE(h) != 13)
        Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < 13; i++)
        if (!tuple_int64(h, i, &f[i]))
            Py_RETURN_NONE;
    long long position = PyLong_AsLongLong(args[1]);
    int valid = PyObject_IsTrue(args[2]);
    if ((position == -1 && PyErr_Occurred()) || valid < 0)
        return NULL;
    text_t t = {NULL, 0, 0};
    return text_result(&t, text_batch_line(&t, f, position, valid));
}
