/* The Python objects the accelerator makes and reads (pytypes.c): the result types the Python side
 * registers (NamedTuple classes), the Python functions it registers for the C ones to hand back to,
 * the one check that they were registered, and the helpers that build and read tuples. Every other
 * file of csrc/ uses these; this one uses none of them. */

#ifndef FORENSICS_PYTYPES_H
#define FORENSICS_PYTYPES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The result types: tuple subclasses made by NamedTuple, registered by init_frames(Frame,
 * BatchHeader) (forensics/io/frames.py), init_records(Record, Header) (forensics/codec/batch.py)
 * and init_legacy(LegacyRecord) (forensics/codec/legacy.py). */
extern PyTypeObject *FrameType, *HeaderType, *RecordType, *RecHeaderType, *LegacyType;

/* The Python functions registered by init_fallback(name, function): batch.python_record_tuples and
 * legacy.python_deep_tuples, which record_tuples() and deep_tuples() hand back to. */
extern PyObject *record_tuples_fallback, *deep_tuples_fallback;

/* What an entry point needs registered before it may run (registered(): any of them together). */
enum {
    NEED_FRAMES = 1,                /* init_frames(): FrameType, HeaderType */
    NEED_RECORDS = 2,               /* init_records(): RecordType, RecHeaderType */
    NEED_LEGACY = 4,                /* init_legacy(): LegacyType */
    NEED_RECORD_TUPLES_FALLBACK = 8, /* init_fallback("record_tuples", ...) */
    NEED_DEEP_TUPLES_FALLBACK = 16,  /* init_fallback("deep_tuples", ...) */
};

/* 1 when everything `needs` names has been registered; else 0 with a RuntimeError naming the init
 * calls missing ("init_records() and init_legacy() have not been called"). */
int registered(int needs);

/* A new instance of a tuple subclass (or a plain tuple), as tuple.__new__(type, items) makes it;
 * steals the items; NULL when any item is NULL (a failed allocation: the others are released). */
PyObject *make_tuple(PyTypeObject *type, Py_ssize_t n, PyObject **items);

/* An int64 item of a tuple; 0 with no error set when it is not an int or does not fit. */
int tuple_int64(PyObject *t, Py_ssize_t i, long long *out);

/* The bytes b[at:at+len], or None for a null field (len < 0): a new reference, NULL on error. */
static inline PyObject *span_bytes(const unsigned char *b, Py_ssize_t at, Py_ssize_t len) {
    if (len < 0)
        Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)b + at, len);
}

/* The registration functions of the module's method table. */
PyObject *init_frames(PyObject *self, PyObject *args);
PyObject *init_records(PyObject *self, PyObject *args);
PyObject *init_legacy(PyObject *self, PyObject *type);
PyObject *init_fallback(PyObject *self, PyObject *args);

#endif
