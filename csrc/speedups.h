/* Shared declarations of the C accelerator forensics._speedups (see module.c): the byte readers
 * and varints, the parsed shapes of records and batches, and each file's functions the others call.
 * Compiled with hidden visibility: only PyInit__speedups leaves the shared object. */

#ifndef FORENSICS_SPEEDUPS_H
#define FORENSICS_SPEEDUPS_H

#include "pytypes.h"

#include <stdint.h>
#include <string.h>

#define INT32_MAX_ 0x7FFFFFFFLL

static inline int64_t be64(const unsigned char *p) {
    return (int64_t)((uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 | (uint64_t)p[3] << 32 |
                     (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 | (uint64_t)p[6] << 8 | (uint64_t)p[7]);
}
static inline uint32_t be32u(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline int32_t be32(const unsigned char *p) { return (int32_t)be32u(p); }
static inline int16_t be16(const unsigned char *p) { return (int16_t)((uint16_t)p[0] << 8 | p[1]); }

static inline uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

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
/* One record's fields, parsed and checked (DefaultRecord.readFrom's rules, batch.py's _record). */
typedef struct {
    Py_ssize_t start, key_pos, key_len, value_pos, value_len, headers_pos, body_end;
    int64_t ts_delta, offset_delta, header_count;
    int attributes;
} rec_t;
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

static inline long long increment_sequence(long long sequence, long long increment) {
    if (sequence > INT32_MAX_ - increment)
        return increment - (INT32_MAX_ - sequence) - 1;
    return sequence + increment;
}

static inline long long record_sequence(const batch_t *h, const rec_t *r) {
    return h->base_seq == -1 ? -1 : increment_sequence(h->base_seq, r->offset_delta);
}
/* The plaintext pieces of one payload, and the limit they must stay within. */
typedef struct {
    PyObject *pieces; /* list of bytes */
    Py_ssize_t total, limit;
} sink_t;

/* crc.c */
extern int have_hw_crc;
void crc_init(void);
uint32_t crc32c(const unsigned char *p, size_t n);
uint32_t crc32_ieee(const unsigned char *p, size_t n);
PyObject *checksum(PyObject *arg, uint32_t (*fn)(const unsigned char *, size_t));

/* bits.c */
int bits_init(void);

/* segment_frames.c */
/* The scanner's state between entries: FrameScanner's base offset and next expected offset. */
typedef struct {
    int has_base, has_next;
    long long base, next;
} offsets_t;
int offsets_of(PyObject *base_obj, PyObject *next_obj, offsets_t *o);
int healthy_entry(const unsigned char *b, Py_ssize_t pos, Py_ssize_t end, int verify, const offsets_t *o,
                  int *magic_out, Py_ssize_t *size_out, long long *first, long long *last_out, long long *next_after);
int clamped_view(PyObject *bufobj, Py_buffer *view, Py_ssize_t *pos, Py_ssize_t *end);
PyObject *scan_result(PyObject *items, Py_ssize_t pos, const offsets_t *o, long long valid);

/* records.c */
int utf8_valid(const unsigned char *b, Py_ssize_t n);
Py_ssize_t utf8_sequence(const unsigned char *b, Py_ssize_t i, Py_ssize_t n);
int parse_record(const unsigned char *b, Py_ssize_t *p, Py_ssize_t end, rec_t *r);
int header_fields(PyObject *header, batch_t *h, long long *attributes, long long *count);
PyObject *batch_data(PyObject *data, Py_ssize_t *p, Py_ssize_t *end, long long attributes);
int view_of(PyObject **data, Py_buffer *view);
PyObject *decode_records(const unsigned char *b, Py_ssize_t p, Py_ssize_t end, long long count, const batch_t *h,
                         int plain, Py_ssize_t position_base);

/* payload_frames.c */
uint32_t xxh32(const unsigned char *p, size_t n);
int sink_add(sink_t *sink, PyObject *piece);
int call_block(sink_t *sink, PyObject *fn, PyObject *view, Py_ssize_t start, Py_ssize_t end, PyObject *kwnames,
               PyObject *kwvalue);
int unframe_snappy(sink_t *sink, PyObject *fn, PyObject *view, const unsigned char *b, Py_ssize_t n);
int unframe_lz4(sink_t *sink, PyObject *fn, PyObject *view, const unsigned char *b, Py_ssize_t n, int magic,
                PyObject *kwnames);

/* compress.c */
extern Py_ssize_t payload_limit;
int compress_init(void);
int codecs_has_zlib(void);
PyObject *plaintext(int codec, PyObject *view, int magic, Py_ssize_t limit);

/* The functions of the module (module.c's method table). */
PyObject *attribute_bits(PyObject *self, PyObject *args);
PyObject *scan(PyObject *self, PyObject *args);
PyObject *scan_tuples(PyObject *self, PyObject *args);
PyObject *fold(PyObject *self, PyObject *args);
PyObject *records(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *record_block(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *record_tuples(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *record_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *batch_line(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *legacy_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *dump_batches(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *legacy_entry(PyObject *self, PyObject *args);
PyObject *legacy_inner(PyObject *self, PyObject *args);
PyObject *legacy_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *deep_tuples(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *unframe(PyObject *self, PyObject *args);
PyObject *register_codecs(PyObject *self, PyObject *args);
PyObject *codecs(PyObject *self, PyObject *unused);
PyObject *py_crc32(PyObject *self, PyObject *arg);
PyObject *py_crc32c(PyObject *self, PyObject *arg);
PyObject *py_xxh32(PyObject *self, PyObject *arg);
PyObject *hardware_crc(PyObject *self, PyObject *unused);

#endif
