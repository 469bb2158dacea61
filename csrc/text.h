/* The dump's text buffer and its line writers, shared by dump_text.c (a batch's lines, called per
 * batch) and dump_run.c (the lines of a run of batches in one call). forensics/render/dump_text.py
 * is the reference for every line. */

#ifndef FORENSICS_TEXT_H
#define FORENSICS_TEXT_H

#include "speedups.h"

/* A growing buffer of UTF-8 text (valid by construction: see text_string). */
typedef struct {
    char *p;
    Py_ssize_t len, cap;
} text_t;

static inline int text_reserve(text_t *t, Py_ssize_t more) {
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

/* A decimal int64, as Java's Long.toString and Python's str(int) write it (two digits a step). */
static inline int text_int(text_t *t, long long v) {
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";
    char digits[24];
    char *end = digits + sizeof(digits), *q = end;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100);
        u /= 100;
        q -= 2;
        memcpy(q, pairs + 2 * r, 2);
    }
    if (u >= 10) {
        q -= 2;
        memcpy(q, pairs + 2 * u, 2);
    } else {
        *--q = (char)('0' + u);
    }
    if (v < 0)
        *--q = '-';
    return text_put(t, q, end - q);
}

/* The text of a finished buffer: a str (valid UTF-8 by construction), NULL on error, None when a
 * record did not parse (ok < 0). Frees the buffer. */
PyObject *text_result(text_t *t, int ok);

/* Bytes as Kafka's StringDecoder prints them (string_text: UTF-8, invalid bytes replaced). */
int text_string(text_t *t, const unsigned char *b, Py_ssize_t n);

/* The line of a v2 batch, without its newline (render/dump_text.batch_line) from the 13 fields of
 * its header in BatchHeader's order: 1, 0 on error, -1 when a field is out of the range this
 * writes (Python then writes the line). */
int text_batch_line(text_t *t, const long long f[13], long long position, int valid);

/* The lines of the `count` records of a v2 batch in b[p:end), each ending in a newline
 * (render/dump_text._line, the tail as `mode` says): 1, 0 on error, -1 when a record does not
 * parse, b[p:end) holds more than `count` records, a control record is not an ABORT or COMMIT
 * marker or a decoder hands the record back (Python then writes the batch, or says why it does
 * not decode). */
int text_records(text_t *t, const unsigned char *b, Py_ssize_t p, Py_ssize_t end, const batch_t *h, long long count,
                 const char *label, Py_ssize_t label_len, int contents, int skip, int mode);

/* The lines of legacy records (a sequence of LegacyRecord: an entry, or a wrapper's inner
 * messages), as render/dump_text._line writes them for magic 0 and 1: 1, 0 on error, -1 when an
 * item is not a LegacyRecord of ints and bytes. */
int text_legacy_records(text_t *t, PyObject *records, const char *label, Py_ssize_t label_len, int contents, int skip);

/* What text_records writes after a record's metadata: key and payload as strings, the marker of a
 * control record, or the key and payload of a decoder (dump_decoders.c). */
enum { TEXT_STRINGS, TEXT_MARKER, TEXT_TXNLOG, TEXT_OFFSETS };

/* " key: K payload: V" of the decoders (with `prefix` instead of the first space): 1, 0 on error,
 * -1 when the Python decoder must write the record (t is then as it was). */
int text_txnlog(text_t *t, const char *prefix, const unsigned char *key, Py_ssize_t key_len,
                const unsigned char *value, Py_ssize_t value_len);
int text_offsets(text_t *t, const char *prefix, const unsigned char *key, Py_ssize_t key_len,
                 const unsigned char *value, Py_ssize_t value_len);

#endif
