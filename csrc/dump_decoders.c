/* The key and payload texts of kafka-dump-log.sh's --transaction-log-decoder and --offsets-decoder
 * for their common records, written straight from the record's bytes (dump_run.c calls them).
 * The references are forensics/codec/txnlog_text.py (with codec/txnlog.py's reader) and
 * forensics/codec/offsets.py (codec/schema.py's reader, codec/schema_json.py's writer); anything
 * they would print differently from the plain case (a skip or error message, an unknown record
 * type, a string that is not UTF-8, a group metadata record) is handed back (-1) and the Python
 * decoders write the whole batch. */

#include "text.h"

/* A cursor over one key or value; `bad` once a read ran past its end or broke a rule. */
typedef struct {
    const unsigned char *b;
    Py_ssize_t pos, end;
    int bad;
} reader_t;

static inline const unsigned char *take(reader_t *r, Py_ssize_t n) {
    if (r->bad || n < 0 || n > r->end - r->pos) {
        r->bad = 1;
        return NULL;
    }
    const unsigned char *p = r->b + r->pos;
    r->pos += n;
    return p;
}

static inline long long r_i8(reader_t *r) {
    const unsigned char *p = take(r, 1);
    return p ? (signed char)p[0] : 0;
}
static inline long long r_i16(reader_t *r) {
    const unsigned char *p = take(r, 2);
    return p ? be16(p) : 0;
}
static inline long long r_i32(reader_t *r) {
    const unsigned char *p = take(r, 4);
    return p ? be32(p) : 0;
}
static inline long long r_i64(reader_t *r) {
    const unsigned char *p = take(r, 8);
    return p ? be64(p) : 0;
}

/* An unsigned varint of at most 4 bytes (below 2^28): the Python readers take longer ones, whose
 * rules differ between them (primitives.read_uvarint, java_reader.JavaReader). */
static inline uint64_t r_uvarint(reader_t *r) {
    uint64_t v = 0;
    for (int i = 0, shift = 0; i < 4; i++, shift += 7) {
        const unsigned char *p = take(r, 1);
        if (p == NULL)
            return 0;
        v |= (uint64_t)(p[0] & 0x7F) << shift;
        if (!(p[0] & 0x80))
            return v;
    }
    r->bad = 1;
    return 0;
}

/* A compact length: readUnsignedVarint() - 1 in Java int arithmetic (0 -> -1, null). */
static inline long long r_compact_len(reader_t *r) {
    return (int32_t)((uint32_t)r_uvarint(r) - 1u);
}

/* A non-nullable string field (int16 or compact length, at most 0x7FFF bytes) that is valid UTF-8;
 * its bytes in *s, *n. 0 when Python must read it (null, too long, past the end, not UTF-8). */
static int r_string(reader_t *r, int flexible, const unsigned char **s, Py_ssize_t *n) {
    long long len = flexible ? r_compact_len(r) : r_i16(r);
    if (r->bad || len < 0 || len > 0x7FFF)
        return 0;
    *s = take(r, (Py_ssize_t)len);
    *n = (Py_ssize_t)len;
    return *s != NULL && utf8_valid(*s, *n);
}

/* A tagged-field section, skipped (codec/txnlog._read_tag_section, schema._read_struct's unknown
 * tags); known tags are the caller's: each (tag, data, size) is given to `seen` when not NULL. */
typedef int (*tag_fn)(void *ctx, uint64_t tag, const unsigned char *data, Py_ssize_t size);

static int r_tags(reader_t *r, tag_fn seen, void *ctx) {
    uint64_t count = r_uvarint(r);
    if (r->bad || count > (uint64_t)(r->end - r->pos))
        return 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t tag = r_uvarint(r), size = r_uvarint(r);
        if (r->bad || size > (uint64_t)(r->end - r->pos))
            return 0;
        const unsigned char *data = take(r, (Py_ssize_t)size);
        if (seen != NULL && !seen(ctx, tag, data, (Py_ssize_t)size))
            return 0;
    }
    return 1;
}

/* A JSON string as Jackson writes it (schema_json.json_string): '"', '\\' and C0 controls escaped,
 * the short escapes where they exist, \u00XX (upper-case hex) for the rest; b is valid UTF-8. */
static int text_json_string(text_t *t, const unsigned char *b, Py_ssize_t n) {
    static const char hex[] = "0123456789ABCDEF";
    if (!text_reserve(t, 6 * n + 2))
        return 0;
    char *o = t->p + t->len;
    *o++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = b[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            *o++ = (char)c;
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case 0x08: *o++ = 'b'; break;
        case 0x09: *o++ = 't'; break;
        case 0x0A: *o++ = 'n'; break;
        case 0x0C: *o++ = 'f'; break;
        case 0x0D: *o++ = 'r'; break;
        default:
            memcpy(o, "u00", 3);
            o[3] = hex[c >> 4];
            o[4] = hex[c & 15];
            o += 5;
        }
    }
    *o++ = '"';
    t->len = o - t->p;
    return 1;
}

/* -- __transaction_state: TransactionLogKey v0, TransactionLogValue v0-v1 ------------------------ */

typedef struct {
    long long previous, next, client_version;
} txn_tags_t;

/* codec/txnlog._apply_tag: tags 0-2 must have their size; others (3 included) are not printed. */
static int txn_tag(void *ctx, uint64_t tag, const unsigned char *data, Py_ssize_t size) {
    txn_tags_t *tags = ctx;
    if (tag == 0 || tag == 1) {
        if (size != 8)
            return 0;
        *(tag ? &tags->next : &tags->previous) = be64(data);
    } else if (tag == 2) {
        if (size != 2)
            return 0;
        tags->client_version = be16(data);
    }
    return 1;
}

/* The value's JSON (txnlog_text.format_value_json of codec/txnlog.decode_value); 0 error, -1 Python. */
static int text_txnlog_value(text_t *t, const unsigned char *b, Py_ssize_t n) {
    reader_t r = {b, 0, n, 0};
    long long version = r_i16(&r);
    if (r.bad || (version != 0 && version != 1))
        return -1;
    int flexible = version >= 1;
    long long pid = r_i64(&r), epoch = r_i16(&r), timeout = r_i32(&r), status = r_i8(&r);
    long long count = flexible ? r_compact_len(&r) : r_i32(&r);
    if (r.bad || count > r.end - r.pos)
        return -1;
    Py_ssize_t parts_at = r.pos; /* the partitions are read twice: checked first, then written */
    for (long long i = 0; i < count; i++) {
        const unsigned char *topic;
        Py_ssize_t topic_len;
        if (!r_string(&r, flexible, &topic, &topic_len))
            return -1;
        long long ids = flexible ? r_compact_len(&r) : r_i32(&r);
        if (r.bad || ids < 0 || ids > r.end - r.pos || !take(&r, 4 * (Py_ssize_t)ids) || (flexible && !r_tags(&r, NULL, NULL)))
            return -1;
    }
    long long last_update = r_i64(&r), start = r_i64(&r);
    txn_tags_t tags = {-1, -1, 0};
    if (r.bad || (flexible && !r_tags(&r, txn_tag, &tags)))
        return -1;
    int ok = text_reserve(t, 512) && TEXT_LIT(t, "{\"version\":\"") && text_int(t, version) &&
             TEXT_LIT(t, "\",\"data\":{\"producerId\":") && text_int(t, pid) &&
             (!flexible || tags.previous == -1 || (TEXT_LIT(t, ",\"previousProducerId\":") && text_int(t, tags.previous))) &&
             (!flexible || tags.next == -1 || (TEXT_LIT(t, ",\"nextProducerId\":") && text_int(t, tags.next))) &&
             TEXT_LIT(t, ",\"producerEpoch\":") && text_int(t, epoch) && TEXT_LIT(t, ",\"transactionTimeoutMs\":") &&
             text_int(t, timeout) && TEXT_LIT(t, ",\"transactionStatus\":") && text_int(t, status) &&
             TEXT_LIT(t, ",\"transactionPartitions\":");
    if (ok && count < 0)
        ok = TEXT_LIT(t, "null");
    else if (ok) {
        reader_t w = {b, parts_at, n, 0};
        ok = TEXT_LIT(t, "[");
        for (long long i = 0; ok && i < count; i++) {
            const unsigned char *topic;
            Py_ssize_t topic_len;
            r_string(&w, flexible, &topic, &topic_len);
            long long ids = flexible ? r_compact_len(&w) : r_i32(&w);
            ok = (i == 0 || TEXT_LIT(t, ",")) && TEXT_LIT(t, "{\"topic\":") && text_json_string(t, topic, topic_len) &&
                 TEXT_LIT(t, ",\"partitionIds\":[");
            for (long long k = 0; ok && k < ids; k++)
                ok = (k == 0 || TEXT_LIT(t, ",")) && text_int(t, r_i32(&w));
            ok = ok && TEXT_LIT(t, "]}");
            if (flexible)
                r_tags(&w, NULL, NULL);
        }
        ok = ok && TEXT_LIT(t, "]");
    }
    return ok && TEXT_LIT(t, ",\"transactionLastUpdateTimestampMs\":") && text_int(t, last_update) &&
           TEXT_LIT(t, ",\"transactionStartTimestampMs\":") && text_int(t, start) &&
           (!flexible || tags.client_version == 0 ||
            (TEXT_LIT(t, ",\"clientTransactionVersion\":") && text_int(t, tags.client_version))) &&
           TEXT_LIT(t, "}}");
}

/* " key: K payload: V" (prefix "| " instead of " " with --skip-record-metadata) of a
 * __transaction_state record (txnlog_text.format_record_key_and_value); 0 error, -1 Python. */
int text_txnlog(text_t *t, const char *prefix, const unsigned char *key, Py_ssize_t key_len,
                const unsigned char *value, Py_ssize_t value_len) {
    if (key == NULL || key_len < 0) /* a null key: Kafka's tool aborts, Python says so */
        return -1;
    reader_t r = {key, 0, key_len, 0};
    const unsigned char *id;
    Py_ssize_t id_len;
    if (r_i16(&r) != 0 || r.bad || !r_string(&r, 0, &id, &id_len))
        return -1;
    Py_ssize_t mark = t->len;
    if (!(text_put(t, prefix, (Py_ssize_t)strlen(prefix)) && TEXT_LIT(t, "key: {\"type\":\"0\",\"data\":{\"transactionalId\":") &&
          text_json_string(t, id, id_len) && TEXT_LIT(t, "}} payload: ")))
        return 0;
    int ok = value_len < 0 ? TEXT_LIT(t, "<DELETE>") : text_txnlog_value(t, value, value_len);
    if (ok < 0)
        t->len = mark;
    return ok;
}

/* -- __consumer_offsets: OffsetCommitKey (record type 1), OffsetCommitValue v0-v4 ----------------- */

/* The value's JSON: offset, leaderEpoch (v3+), metadata, commitTimestamp, expireTimestamp (v1 only),
 * as schema_json.write_json of offsets_schemas' OffsetCommitValue; 0 error, -1 Python. */
static int text_offset_commit_value(text_t *t, const unsigned char *b, Py_ssize_t n) {
    reader_t r = {b, 0, n, 0};
    long long version = r_i16(&r);
    if (r.bad || version < 0 || version > 4)
        return -1;
    int flexible = version >= 4;
    long long offset = r_i64(&r), epoch = version >= 3 ? r_i32(&r) : -1;
    const unsigned char *meta;
    Py_ssize_t meta_len;
    if (!r_string(&r, flexible, &meta, &meta_len))
        return -1;
    long long commit = r_i64(&r), expire = version == 1 ? r_i64(&r) : -1;
    if (r.bad || (flexible && !r_tags(&r, NULL, NULL))) /* the value has no tagged field: all are skipped */
        return -1;
    return text_reserve(t, 256) && TEXT_LIT(t, "{\"version\":\"") && text_int(t, version) &&
           TEXT_LIT(t, "\",\"data\":{\"offset\":") && text_int(t, offset) &&
           (version < 3 || (TEXT_LIT(t, ",\"leaderEpoch\":") && text_int(t, epoch))) && TEXT_LIT(t, ",\"metadata\":") &&
           text_json_string(t, meta, meta_len) && TEXT_LIT(t, ",\"commitTimestamp\":") && text_int(t, commit) &&
           (version != 1 || (TEXT_LIT(t, ",\"expireTimestamp\":") && text_int(t, expire))) && TEXT_LIT(t, "}}");
}

/* " key: K payload: V" of a __consumer_offsets offset commit (offsets.format_offsets_record);
 * any other record type, and anything unusual, is Python's (-1). 0 on error. */
int text_offsets(text_t *t, const char *prefix, const unsigned char *key, Py_ssize_t key_len,
                 const unsigned char *value, Py_ssize_t value_len) {
    if (key == NULL || key_len < 0)
        return -1;
    reader_t r = {key, 0, key_len, 0};
    const unsigned char *group, *topic;
    Py_ssize_t group_len, topic_len;
    if (r_i16(&r) != 1 || r.bad || !r_string(&r, 0, &group, &group_len) || !r_string(&r, 0, &topic, &topic_len))
        return -1;
    long long partition = r_i32(&r);
    if (r.bad)
        return -1;
    Py_ssize_t mark = t->len;
    if (!(text_put(t, prefix, (Py_ssize_t)strlen(prefix)) && TEXT_LIT(t, "key: {\"type\":\"1\",\"data\":{\"group\":") &&
          text_json_string(t, group, group_len) && TEXT_LIT(t, ",\"topic\":") && text_json_string(t, topic, topic_len) &&
          TEXT_LIT(t, ",\"partition\":") && text_int(t, partition) && TEXT_LIT(t, "}} payload: ")))
        return 0;
    int ok = value_len < 0 ? TEXT_LIT(t, "<DELETE>") : text_offset_commit_value(t, value, value_len);
    if (ok < 0)
        t->len = mark;
    return ok;
}
