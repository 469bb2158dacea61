/* attribute_bits(index, mask, as_bool): a read-only attribute of a tuple subclass computed from one
 * of its items, item & mask (a bool when as_bool). BatchHeader's attribute properties (codec,
 * is_transactional, is_control, is_log_append_time; forensics/codec/batch.py holds the rule and the
 * pure-Python property) are these with the accelerator: a property's Python getter costs a frame
 * per read, and the readers of a segment ask for them once per batch. */

#include "speedups.h"

typedef struct {
    PyObject_HEAD
    Py_ssize_t index;
    long mask;
    int as_bool;
} bits_t;

static PyObject *bits_get(PyObject *self, PyObject *obj, PyObject *type) {
    bits_t *d = (bits_t *)self;
    if (obj == NULL || obj == Py_None) { /* read on the class: the descriptor, as a property gives itself */
        Py_INCREF(self);
        return self;
    }
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) <= d->index) {
        PyErr_SetString(PyExc_TypeError, "attribute_bits: not read on the tuple it was made for");
        return NULL;
    }
    PyObject *item = PyTuple_GET_ITEM(obj, d->index);
    if (PyLong_CheckExact(item)) {
        int overflow;
        long v = PyLong_AsLongAndOverflow(item, &overflow);
        if (!overflow && !(v == -1 && PyErr_Occurred()))
            return d->as_bool ? PyBool_FromLong((v & d->mask) != 0) : PyLong_FromLong(v & d->mask);
        PyErr_Clear();
    }
    /* anything else (an int beyond a C long, an int subclass): Python's own & and bool() */
    PyObject *mask = PyLong_FromLong(d->mask);
    if (mask == NULL)
        return NULL;
    PyObject *bits = PyNumber_And(item, mask);
    Py_DECREF(mask);
    if (bits == NULL || !d->as_bool)
        return bits;
    int truth = PyObject_IsTrue(bits);
    Py_DECREF(bits);
    return truth < 0 ? NULL : PyBool_FromLong(truth);
}

static int bits_set(PyObject *self, PyObject *obj, PyObject *value) {
    PyErr_SetString(PyExc_AttributeError, "can't set attribute"); /* read-only, as a property without a setter */
    return -1;
}

static PyTypeObject BitsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "forensics._speedups.attribute_bits",
    .tp_basicsize = sizeof(bits_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "item & mask of a tuple subclass (a bool when as_bool), read-only.",
    .tp_descr_get = bits_get,
    .tp_descr_set = bits_set,
};

int bits_init(void) { return PyType_Ready(&BitsType) == 0; }

PyObject *attribute_bits(PyObject *self, PyObject *args) {
    Py_ssize_t index;
    long mask;
    int as_bool;
    if (!PyArg_ParseTuple(args, "nlp", &index, &mask, &as_bool))
        return NULL;
    if (index < 0) {
        PyErr_SetString(PyExc_ValueError, "attribute_bits: the index is negative");
        return NULL;
    }
    bits_t *d = PyObject_New(bits_t, &BitsType);
    if (d == NULL)
        return NULL;
    d->index = index;
    d->mask = mask;
    d->as_bool = as_bool;
    return (PyObject *)d;
}
