/* The Python objects the accelerator makes and reads: the registered result types and fallbacks,
 * the check that they were registered, and the tuple helpers (see pytypes.h). */

#include "pytypes.h"

#include <string.h>

PyTypeObject *FrameType, *HeaderType, *RecordType, *RecHeaderType, *LegacyType;
PyObject *record_tuples_fallback, *deep_tuples_fallback;

/* The NEED_ bits of what is registered now. */
static int ready(void) {
    return (FrameType != NULL && HeaderType != NULL ? NEED_FRAMES : 0) |
           (RecordType != NULL && RecHeaderType != NULL ? NEED_RECORDS : 0) | (LegacyType != NULL ? NEED_LEGACY : 0) |
           (record_tuples_fallback != NULL ? NEED_RECORD_TUPLES_FALLBACK : 0) |
           (deep_tuples_fallback != NULL ? NEED_DEEP_TUPLES_FALLBACK : 0);
}

int registered(int needs) {
    int missing = needs & ~ready();
    if (!missing)
        return 1;
    static const char *const calls[] = {"init_frames()", "init_records()", "init_legacy()",
                                        "init_fallback(\"record_tuples\", ...)", "init_fallback(\"deep_tuples\", ...)"};
    char message[200] = "";
    int left = __builtin_popcount((unsigned)missing);
    const int many = left > 1;
    for (int i = 0; missing >> i; i++) {
        if (!(missing >> i & 1))
            continue;
        if (message[0])
            strcat(message, left == 1 ? " and " : ", ");
        strcat(message, calls[i]);
        left--;
    }
    strcat(message, many ? " have not been called" : " has not been called");
    PyErr_SetString(PyExc_RuntimeError, message);
    return 0;
}

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

/* An int64 item of a tuple (a BatchHeader, Frame or LegacyRecord); 0 with no error set when it is
 * not an int or does not fit (the Python code, whose ints do not overflow, then takes it). */
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

/* Keep a reference to each tuple subclass given, in the slots named by `targets`. */
static PyObject *register_types(PyObject *args, PyTypeObject **targets[2]) {
    PyObject *types[2];
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &types[0], &PyType_Type, &types[1]))
        return NULL;
    for (int i = 0; i < 2; i++) {
        if (!PyType_IsSubtype((PyTypeObject *)types[i], &PyTuple_Type)) {
            PyErr_SetString(PyExc_TypeError, "the result types must be tuple subclasses (NamedTuple)");
            return NULL;
        }
    }
    for (int i = 0; i < 2; i++) {
        Py_INCREF(types[i]);
        Py_XDECREF(*targets[i]);
        *targets[i] = (PyTypeObject *)types[i];
    }
    Py_RETURN_NONE;
}

PyObject *init_frames(PyObject *self, PyObject *args) {
    PyTypeObject **targets[2] = {&FrameType, &HeaderType};
    return register_types(args, targets);
}

PyObject *init_records(PyObject *self, PyObject *args) {
    PyTypeObject **targets[2] = {&RecordType, &RecHeaderType};
    return register_types(args, targets);
}

PyObject *init_legacy(PyObject *self, PyObject *type) {
    if (!PyType_Check(type) || !PyType_IsSubtype((PyTypeObject *)type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "the result type must be a tuple subclass (NamedTuple)");
        return NULL;
    }
    Py_INCREF(type);
    Py_XSETREF(LegacyType, (PyTypeObject *)type);
    Py_RETURN_NONE;
}

/* init_fallback(name, function): the Python "record_tuples" or "deep_tuples" the C one hands back to. */
PyObject *init_fallback(PyObject *self, PyObject *args) {
    const char *name;
    PyObject *fn;
    if (!PyArg_ParseTuple(args, "sO", &name, &fn))
        return NULL;
    PyObject **slot = strcmp(name, "record_tuples") == 0 ? &record_tuples_fallback
                      : strcmp(name, "deep_tuples") == 0 ? &deep_tuples_fallback : NULL;
    if (slot == NULL) {
        PyErr_SetString(PyExc_ValueError, "init_fallback: record_tuples or deep_tuples");
        return NULL;
    }
    Py_INCREF(fn);
    Py_XSETREF(*slot, fn);
    Py_RETURN_NONE;
}
