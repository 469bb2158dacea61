/* Payload decompression as compression.py does it, for the codecs the C side takes whole: the
 * zstd frame walk and a per-thread zstandard reader, gzip with zlib (where found at build time),
 * plaintext() and unframe() over them and payload_frames.c's snappy and LZ4; register_codecs()
 * and codecs(). */

#include "speedups.h"

#ifdef HAVE_ZLIB
#include <zlib.h>
#endif

/* compression._zstd_check_frames: 1 when every frame and block header is whole. */
static int zstd_frames_whole(const unsigned char *b, Py_ssize_t n) {
    long long pos = 0;
    static const int did_size[4] = {0, 1, 2, 4};
    while (pos < n) {
        if (pos + 5 > n)
            return 0;
        uint32_t frame_magic = le32(b + pos);
        if ((frame_magic & 0xFFFFFFF0u) == 0x184D2A50u) { /* skippable frame */
            if (pos + 8 > n)
                return 0;
            pos += 8 + (long long)le32(b + pos + 4);
            continue;
        }
        if (frame_magic != 0xFD2FB528u)
            return 0;
        int fhd = b[pos + 4];
        int single = (fhd >> 5) & 1;
        static const int fcs_size[4] = {0, 2, 4, 8};
        pos += 5 + (1 - single) + did_size[fhd & 3] + ((fhd >> 6) == 0 ? single : fcs_size[fhd >> 6]);
        int last = 0;
        while (!last) {
            if (pos + 3 > n)
                return 0;
            uint32_t header = (uint32_t)b[pos] | (uint32_t)b[pos + 1] << 8 | (uint32_t)b[pos + 2] << 16;
            last = header & 1;
            int block_type = (header >> 1) & 3;
            pos += 3 + (block_type == 1 ? 1 : (header >> 3));
        }
        pos += 4 * ((fhd >> 2) & 1);
    }
    return pos <= n;
}

#ifdef HAVE_ZLIB
/* compression._gzip: gzip members back to back (GZIPInputStream); bytes after a member that do
 * not start with the gzip magic end the stream. zlib does the inflating, as in Python's zlib. */
static int unframe_gzip(sink_t *sink, const unsigned char *b, Py_ssize_t n) {
    if (n == 0 || n > (Py_ssize_t)UINT32_MAX)
        return 0;
    /* One inflate state, reset for every member: making one allocates its window (the GIL is held
     * throughout, so no two calls share it). */
    static z_stream zs;
    static int zs_ready;
    Py_ssize_t pos = 0;
    for (;;) {
        if (!zs_ready) {
            memset(&zs, 0, sizeof zs);
            if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
                return 0;
            zs_ready = 1;
        } else if (inflateReset(&zs) != Z_OK) {
            return 0;
        }
        zs.next_in = (Bytef *)(b + pos);
        zs.avail_in = (uInt)(n - pos);
        Py_ssize_t cap = 4 * (n - pos) + 256, room = sink->limit - sink->total;
        if (cap > room + 1)
            cap = room + 1;
        PyObject *out = PyBytes_FromStringAndSize(NULL, cap);
        Py_ssize_t got = 0;
        int ret = Z_OK;
        while (out != NULL) {
            zs.next_out = (Bytef *)PyBytes_AS_STRING(out) + got;
            zs.avail_out = (uInt)(cap - got);
            ret = inflate(&zs, Z_NO_FLUSH);
            got = cap - (Py_ssize_t)zs.avail_out;
            if (ret != Z_OK || got > room)
                break;
            if (zs.avail_out != 0) { /* no progress with input left or none: truncated */
                ret = Z_BUF_ERROR;
                break;
            }
            Py_ssize_t grown = cap > room / 2 ? room + 1 : 2 * cap;
            if (grown <= cap || _PyBytes_Resize(&out, grown) < 0)
                break;
            cap = grown;
        }
        pos += (n - pos) - (Py_ssize_t)zs.avail_in;
        if (out == NULL)
            return -1;
        if (ret != Z_STREAM_END || got > room || _PyBytes_Resize(&out, got) < 0) {
            Py_XDECREF(out);
            return PyErr_Occurred() ? -1 : 0;
        }
        int rc = sink_add(sink, out);
        if (rc <= 0)
            return rc;
        if (pos + 2 > n || b[pos] != 0x1f || b[pos + 1] != 0x8b)
            return 1; /* GZIPInputStream ignores what follows unless it is another member */
    }
}
#endif

/* Registered by compression.py (register_codecs): the library calls that decompress one raw block,
 * zstandard's ZstdDecompressor class and the plaintext limit of a batch payload. */
static PyObject *snappy_fn, *lz4_fn, *lz4_kwnames, *zstd_class, *zstd_kwnames, *zstd_key, *read_name,
    *stream_reader_name;
Py_ssize_t payload_limit = -1;

/* 1 when the call failed with an Exception (cleared: the Python parser decides), -1 otherwise. */
static int library_refused(void) {
    if (PyErr_ExceptionMatches(PyExc_MemoryError) || !PyErr_ExceptionMatches(PyExc_Exception))
        return -1;
    PyErr_Clear();
    return 0;
}

/* compression._zstd: the frames walked here, then read by a ZstdDecompressor of this thread
 * (made once per thread and kept in the thread's dict: making one is most of the cost of a small
 * payload), in chunks of 64 KiB as the Python code reads them. */
static int unframe_zstd(sink_t *sink, PyObject *view, const unsigned char *b, Py_ssize_t n) {
    if (zstd_class == NULL || !zstd_frames_whole(b, n))
        return 0;
    PyObject *dict = PyThreadState_GetDict(); /* borrowed */
    if (dict == NULL)
        return 0;
    PyObject *dctx = PyDict_GetItemWithError(dict, zstd_key); /* borrowed */
    if (dctx == NULL) {
        if (PyErr_Occurred())
            return -1;
        dctx = PyObject_CallNoArgs(zstd_class);
        if (dctx == NULL)
            return library_refused();
        int rc = PyDict_SetItem(dict, zstd_key, dctx);
        Py_DECREF(dctx); /* the dict keeps it */
        if (rc < 0)
            return -1;
    }
    PyObject *args[3] = {dctx, view, Py_True};
    PyObject *reader = PyObject_VectorcallMethod(stream_reader_name, args, 2, zstd_kwnames);
    if (reader == NULL)
        return library_refused();
    int rc = 1;
    for (;;) {
        Py_ssize_t room = sink->limit - sink->total;
        PyObject *size = PyLong_FromSsize_t(room + 1 < 65536 ? room + 1 : 65536);
        if (size == NULL) {
            rc = -1;
            break;
        }
        PyObject *a[2] = {reader, size};
        PyObject *piece = PyObject_VectorcallMethod(read_name, a, 2, NULL);
        Py_DECREF(size);
        if (piece == NULL) {
            rc = library_refused();
            break;
        }
        if (PyBytes_Check(piece) && PyBytes_GET_SIZE(piece) == 0) {
            Py_DECREF(piece);
            break;
        }
        rc = sink_add(sink, piece);
        if (rc <= 0)
            break;
    }
    Py_DECREF(reader);
    return rc;
}

/* The pieces as one bytes object. */
static PyObject *join_pieces(sink_t *sink) {
    Py_ssize_t k = PyList_GET_SIZE(sink->pieces);
    if (k == 1) {
        PyObject *only = PyList_GET_ITEM(sink->pieces, 0);
        Py_INCREF(only);
        return only;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, sink->total);
    if (out == NULL)
        return NULL;
    char *w = PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *piece = PyList_GET_ITEM(sink->pieces, i);
        memcpy(w, PyBytes_AS_STRING(piece), PyBytes_GET_SIZE(piece));
        w += PyBytes_GET_SIZE(piece);
    }
    return out;
}

/* The plaintext of a payload of `codec` (1 gzip with zlib, 2 snappy, 3 lz4, 4 zstd) inside a `magic`
 * batch; `view` is a byte memoryview of exactly the payload. Py_None when a rule is broken or the
 * codec is not taken here (the Python parser then runs), NULL on error. */
PyObject *plaintext(int codec, PyObject *view, int magic, Py_ssize_t limit) {
    Py_buffer *buf = PyMemoryView_GET_BUFFER(view);
    if (!PyBuffer_IsContiguous(buf, 'C') || buf->itemsize != 1 || (codec != 1 && snappy_fn == NULL))
        Py_RETURN_NONE;
    const unsigned char *b = (const unsigned char *)buf->buf;
    sink_t sink = {PyList_New(0), 0, limit};
    if (sink.pieces == NULL)
        return NULL;
    int rc = 0;
    if (codec == 2)
        rc = unframe_snappy(&sink, snappy_fn, view, b, buf->len);
    else if (codec == 3)
        rc = unframe_lz4(&sink, lz4_fn, view, b, buf->len, magic, lz4_kwnames);
    else if (codec == 4 && magic >= 2) /* zstd is valid in v2 batches only */
        rc = unframe_zstd(&sink, view, b, buf->len);
#ifdef HAVE_ZLIB
    else if (codec == 1)
        rc = unframe_gzip(&sink, b, buf->len);
#endif
    PyObject *out = rc < 0 ? NULL : rc == 0 ? (Py_INCREF(Py_None), Py_None) : join_pieces(&sink);
    Py_DECREF(sink.pieces);
    return out;
}

/* unframe(codec, data, magic, limit) -> bytes, or None (see plaintext()). */
PyObject *unframe(PyObject *self, PyObject *args) {
    int codec, magic;
    Py_ssize_t limit;
    PyObject *data;
    if (!PyArg_ParseTuple(args, "iOin", &codec, &data, &magic, &limit))
        return NULL;
    PyObject *view = PyMemoryView_FromObject(data);
    if (view == NULL)
        return NULL;
    PyObject *out = plaintext(codec, view, magic, limit);
    Py_DECREF(view);
    return out;
}

/* register_codecs(snappy_uncompress, lz4_block_decompress, ZstdDecompressor, limit): the library
 * calls for raw blocks, the zstd decompressor class and the plaintext limit of a batch payload
 * (compression.py calls it once). */
PyObject *register_codecs(PyObject *self, PyObject *args) {
    PyObject *s, *l, *z;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "OOOn", &s, &l, &z, &limit))
        return NULL;
    Py_INCREF(s);
    Py_INCREF(l);
    Py_INCREF(z);
    Py_XSETREF(snappy_fn, s);
    Py_XSETREF(lz4_fn, l);
    Py_XSETREF(zstd_class, z);
    payload_limit = limit;
    Py_RETURN_NONE;
}

/* codecs() -> the codec ids whose payloads plaintext() takes (gzip only where zlib was found). */
PyObject *codecs(PyObject *self, PyObject *unused) {
#ifdef HAVE_ZLIB
    return Py_BuildValue("(iiii)", 1, 2, 3, 4);
#else
    return Py_BuildValue("(iii)", 2, 3, 4);
#endif
}

int codecs_has_zlib(void) {
#ifdef HAVE_ZLIB
    return 1;
#else
    return 0;
#endif
}

/* The names and keyword tuples of the library calls, made once (PyInit__speedups). */
int compress_init(void) {
    lz4_kwnames = Py_BuildValue("(s)", "uncompressed_size");
    zstd_kwnames = Py_BuildValue("(s)", "read_across_frames");
    zstd_key = PyUnicode_InternFromString("forensics._speedups.zstd");
    read_name = PyUnicode_InternFromString("read");
    stream_reader_name = PyUnicode_InternFromString("stream_reader");
    return lz4_kwnames != NULL && zstd_kwnames != NULL && zstd_key != NULL && read_name != NULL &&
           stream_reader_name != NULL;
}
