/* The frames of a compressed payload taken apart (forensics/codec/compression.py is the
 * reference): xerial snappy streams and raw snappy blocks, Kafka's LZ4 frames with their XXH32
 * checksums, parsed here with every rule the Python parsers check; LZ4 blocks (and snappy blocks
 * where the library must say why one is refused) are decompressed by the same library functions
 * the Python parsers call. Any rule broken, any library error or a plaintext beyond the limit: 0
 * (None to the caller), and the Python parser runs and raises its exact error. compress.c calls
 * unframe_snappy() and unframe_lz4(). */

#include "speedups.h"

#define XXH_P1 2654435761u
#define XXH_P2 2246822519u
#define XXH_P3 3266489917u
#define XXH_P4 668265263u
#define XXH_P5 374761393u

static inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

/* XXH32 with seed 0 (the LZ4 frame checksums); compression.xxh32 is the reference. */
uint32_t xxh32(const unsigned char *p, size_t n) {
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


/* Add a piece (stolen); 0 = over the limit or not bytes (the Python parser decides), -1 = error. */
int sink_add(sink_t *sink, PyObject *piece) {
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
int call_block(sink_t *sink, PyObject *fn, PyObject *view, Py_ssize_t start, Py_ssize_t end, PyObject *kwnames,
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
int unframe_snappy(sink_t *sink, PyObject *fn, PyObject *view, const unsigned char *b, Py_ssize_t n) {
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
int unframe_lz4(sink_t *sink, PyObject *fn, PyObject *view, const unsigned char *b, Py_ssize_t n, int magic,
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

static uint32_t xxh32_seed0(const unsigned char *p, size_t n) { return xxh32(p, n); }

PyObject *py_xxh32(PyObject *self, PyObject *arg) { return checksum(arg, xxh32_seed0); }
