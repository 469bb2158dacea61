/* fold(): the healthy v2 batches of a segment range taken without a Frame each, into the counters
 * of a work unit and its producers' event runs. forensics/pipeline/units.py is the reference: its
 * _Reader folds every frame one by one (and does so without the accelerator); this loop does what
 * that fold does for the frames it takes, and hands every other entry back to it.
 *
 * Runs (units._Runs): consecutive data batches of one producer with the same epoch, transactional
 * flag and snapshot bucket whose sequences continue join into one run; a non-transactional batch of
 * a producer whose transaction the range saw open stays single. Within one call every producer's current run is
 * kept here; a run's first batch may still join the run the Python side has open for that
 * producer (from before this call), which _Runs.join decides with the flag given with it. The runs
 * come back in the order their first batch was met, the order _Runs.data appends them in.
 */

#include "speedups.h"

typedef struct {
    long long pid, base_offset, last_offset, max_ts, records, size, first_ts, last_base, bucket;
    Py_ssize_t pos, batches;
    int epoch, base_seq, transactional, first_mergeable;
    long long last_seq;
} run_t;

typedef struct {
    long long pid;
    Py_ssize_t run; /* index into runs, -1: none in this call */
    int used, txn_open;
} slot_t;

typedef struct {
    run_t *runs;
    Py_ssize_t n_runs, cap_runs;
    slot_t *slots;
    Py_ssize_t n_slots, cap_slots; /* cap_slots: a power of two */
    PyObject *txn_open;            /* the Python side's set of producer ids with an open transaction */
} producers_t;

static uint64_t mix(long long pid) {
    uint64_t x = (uint64_t)pid;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static int grow_slots(producers_t *p) {
    Py_ssize_t cap = p->cap_slots ? p->cap_slots * 2 : 16;
    slot_t *slots = PyMem_Calloc((size_t)cap, sizeof(slot_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    for (Py_ssize_t i = 0; i < p->cap_slots; i++) {
        if (!p->slots[i].used)
            continue;
        Py_ssize_t j = (Py_ssize_t)(mix(p->slots[i].pid) & (uint64_t)(cap - 1));
        while (slots[j].used)
            j = (j + 1) & (cap - 1);
        slots[j] = p->slots[i];
    }
    PyMem_Free(p->slots);
    p->slots = slots;
    p->cap_slots = cap;
    return 1;
}

/* The slot of pid, made on first sight (its txn_open as the Python side's set says); NULL on error. */
static slot_t *slot_of(producers_t *p, long long pid) {
    if (2 * (p->n_slots + 1) > p->cap_slots && !grow_slots(p))
        return NULL;
    Py_ssize_t j = (Py_ssize_t)(mix(pid) & (uint64_t)(p->cap_slots - 1));
    while (p->slots[j].used) {
        if (p->slots[j].pid == pid)
            return &p->slots[j];
        j = (j + 1) & (p->cap_slots - 1);
    }
    PyObject *key = PyLong_FromLongLong(pid);
    if (key == NULL)
        return NULL;
    int open = PySet_Contains(p->txn_open, key);
    Py_DECREF(key);
    if (open < 0)
        return NULL;
    slot_t *s = &p->slots[j];
    s->used = 1;
    s->pid = pid;
    s->run = -1;
    s->txn_open = open;
    p->n_slots++;
    return s;
}

/* bisect_right(cuts, value) */
static long long bucket_of(const long long *cuts, Py_ssize_t n, long long value) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (value < cuts[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* units._continues: does a batch starting at base_seq follow one ending at last_seq (a repeat, a gap,
 * a reset does not; unsequenced batches, -1, follow each other)? */
static int continues(long long last_seq, long long base_seq) {
    if (base_seq < 0 || last_seq < 0)
        return base_seq < 0 && last_seq < 0;
    return base_seq == (last_seq < 0x7FFFFFFF ? last_seq + 1 : 0);
}

/* _Runs.data of the batch at p (a healthy, non-control v2 batch with producerId >= 0). */
static int add_batch(producers_t *pr, const unsigned char *p, Py_ssize_t pos, Py_ssize_t size, long long last,
                     const long long *cuts, Py_ssize_t n_cuts) {
    long long pid = be64(p + 43);
    int epoch = be16(p + 51), transactional = (be16(p + 21) & 0x10) != 0;
    long long bucket = bucket_of(cuts, n_cuts, last), base = be64(p), max_ts = be64(p + 35);
    long long count = be32(p + 57), base_seq = be32(p + 53);
    long long last_seq = base_seq == -1 ? -1 : increment_sequence(base_seq, be32(p + 23));
    slot_t *s = slot_of(pr, pid);
    if (s == NULL)
        return 0;
    int mergeable = transactional || !s->txn_open;
    if (s->run >= 0) {
        run_t *r = &pr->runs[s->run];
        if (mergeable && r->epoch == epoch && r->transactional == transactional && r->bucket == bucket &&
            continues(r->last_seq, base_seq)) {
            r->last_offset = last;
            r->last_seq = last_seq;
            r->max_ts = max_ts;
            r->records += count;
            r->size += size;
            r->batches += 1;
            r->last_base = base;
            return 1;
        }
    }
    if (pr->n_runs == pr->cap_runs) {
        Py_ssize_t cap = pr->cap_runs ? pr->cap_runs * 2 : 8;
        run_t *runs = PyMem_Realloc(pr->runs, (size_t)cap * sizeof(run_t));
        if (runs == NULL) {
            PyErr_NoMemory();
            return 0;
        }
        pr->runs = runs;
        pr->cap_runs = cap;
    }
    run_t *r = &pr->runs[pr->n_runs];
    r->pid = pid;
    r->epoch = epoch;
    r->base_offset = base;
    r->last_offset = last;
    r->base_seq = (int)base_seq;
    r->last_seq = last_seq;
    r->max_ts = max_ts;
    r->transactional = transactional;
    r->records = count;
    r->size = size;
    r->pos = pos;
    r->batches = 1;
    r->first_ts = max_ts;
    r->last_base = base;
    r->bucket = bucket;
    r->first_mergeable = mergeable;
    s->run = pr->n_runs++;
    if (transactional)
        s->txn_open = 1;
    return 1;
}

/* The runs as lists laid out as _Runs keeps them, each followed by its bucket and whether its first
 * batch may join the run open before this call: [pid, epoch, base_offset, last_offset,
 * base_sequence, last_sequence, max_timestamp, transactional, records, size, position, batches,
 * first_timestamp, last_base_offset, bucket, first_mergeable]. */
static PyObject *runs_list(const producers_t *pr) {
    PyObject *out = PyList_New(pr->n_runs);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < pr->n_runs; i++) {
        const run_t *r = &pr->runs[i];
        PyObject *tx = r->transactional ? Py_True : Py_False, *merge = r->first_mergeable ? Py_True : Py_False;
        Py_INCREF(tx);
        Py_INCREF(merge);
        PyObject *f[16] = {
            PyLong_FromLongLong(r->pid),       PyLong_FromLong(r->epoch),      PyLong_FromLongLong(r->base_offset),
            PyLong_FromLongLong(r->last_offset), PyLong_FromLong(r->base_seq), PyLong_FromLongLong(r->last_seq),
            PyLong_FromLongLong(r->max_ts),    tx,                             PyLong_FromLongLong(r->records),
            PyLong_FromLongLong(r->size),      PyLong_FromSsize_t(r->pos),     PyLong_FromSsize_t(r->batches),
            PyLong_FromLongLong(r->first_ts),  PyLong_FromLongLong(r->last_base), PyLong_FromLongLong(r->bucket),
            merge,
        };
        PyObject *run = PyList_New(16);
        if (run == NULL) {
            for (int j = 0; j < 16; j++)
                Py_XDECREF(f[j]);
            Py_DECREF(out);
            return NULL;
        }
        for (int j = 0; j < 16; j++) {
            if (f[j] == NULL) {
                for (int k = j; k < 16; k++)
                    Py_XDECREF(f[k]);
                Py_DECREF(run);
                Py_DECREF(out);
                return NULL;
            }
            PyList_SET_ITEM(run, j, f[j]);
        }
        PyList_SET_ITEM(out, i, run);
    }
    return out;
}

/* The counters of the frames taken (units._Reader and units._Stats fold them per frame). */
typedef struct {
    long long frames, records, tx, ctl, first, last, max_ts, next_after, first_base;
    unsigned codecs; /* bit i: codec id i seen */
} counts_t;

/* The snapshot offsets as int64, into *cuts (PyMem); 0 with no error when one does not fit (the
 * Python fold takes the range then), -1 on error. */
static int cuts_of(PyObject *seq, long long **cuts, Py_ssize_t *n) {
    PyObject *fast = PySequence_Fast(seq, "cuts");
    if (fast == NULL)
        return -1;
    *n = PySequence_Fast_GET_SIZE(fast);
    *cuts = PyMem_Malloc((size_t)(*n ? *n : 1) * sizeof(long long));
    if (*cuts == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        PyObject *v = PySequence_Fast_GET_ITEM(fast, i);
        int overflow = 0;
        long long x = PyLong_Check(v) ? PyLong_AsLongLongAndOverflow(v, &overflow) : 0;
        if (!PyLong_Check(v) || overflow || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            Py_DECREF(fast);
            return 0;
        }
        (*cuts)[i] = x;
    }
    Py_DECREF(fast);
    return 1;
}

/* May the batch at p be taken? Control batches of a producer stop an events fold (their marker is
 * the Python side's); with the statistics, a batch declaring more records than it holds stops too
 * (its finding is the Python side's: units._miscounted). */
static int takes(const unsigned char *p, int events, int stats) {
    int attrs = be16(p + 21);
    long long count = be32(p + 57), length = be32(p + 8);
    if (events && (attrs & 0x20) && be64(p + 43) >= 0)
        return 0;
    if (stats && (count > (long long)be32(p + 23) + 1 || (!(attrs & 0x07) && count * 7 > length - 49)))
        return 0;
    return 1;
}

/* fold(buf, pos, end, verify_crc, base_offset|None, next_offset|None, cuts, txn_open|None, stats)
 *   -> (pos, next_offset|None, valid_bytes, frames, first_base, next_after, max_ts, records,
 *       transactional, control, first, last, codecs, runs)
 * Takes the healthy v2 batches from pos on (the entries scan() would frame) until one it must not:
 * a legacy entry or one that is not healthy (the scanner's), a control batch of a producer when
 * txn_open is given (the events are folded then; runs is [] without), a miscounted batch with
 * stats. The counters are those of the frames taken (0 when none): their count, sum of max(0,
 * recordsCount), transactional and control batches, smallest baseOffset and largest lastOffset,
 * largest maxTimestamp, largest lastOffset + 1, the first one's baseOffset, the codec ids as bits. */
PyObject *fold(PyObject *self, PyObject *args) {
    PyObject *bufobj, *base_obj, *next_obj, *cuts_obj, *txn_open;
    Py_ssize_t pos, end;
    int verify, stats;
    offsets_t o;
    if (!PyArg_ParseTuple(args, "OnnpOOOOp", &bufobj, &pos, &end, &verify, &base_obj, &next_obj, &cuts_obj, &txn_open,
                          &stats) ||
        !offsets_of(base_obj, next_obj, &o))
        return NULL;
    int events = txn_open != Py_None;
    if (events && !PyAnySet_Check(txn_open)) {
        PyErr_SetString(PyExc_TypeError, "fold: txn_open must be a set or None");
        return NULL;
    }
    long long *cuts = NULL;
    Py_ssize_t n_cuts = 0;
    int ok = cuts_of(cuts_obj, &cuts, &n_cuts);
    if (ok < 0)
        return NULL;
    Py_buffer view;
    if (!clamped_view(bufobj, &view, &pos, &end)) {
        PyMem_Free(cuts);
        return NULL;
    }
    const unsigned char *b = (const unsigned char *)view.buf;
    producers_t pr = {NULL, 0, 0, NULL, 0, 0, txn_open};
    counts_t c = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    long long valid = 0;
    int magic;
    Py_ssize_t size;
    long long offset, last, next_after;
    while (ok && pos < end && healthy_entry(b, pos, end, verify, &o, &magic, &size, &offset, &last, &next_after)) {
        const unsigned char *p = b + pos;
        if (magic != 2 || !takes(p, events, stats))
            break;
        int attrs = be16(p + 21);
        long long count = be32(p + 57), max_ts = be64(p + 35);
        if (c.frames == 0) {
            c.first = c.first_base = offset;
            c.last = last;
            c.max_ts = max_ts;
        }
        c.frames++;
        c.records += count > 0 ? count : 0;
        c.tx += (attrs & 0x10) != 0;
        c.ctl += (attrs & 0x20) != 0;
        c.codecs |= 1u << (attrs & 0x07);
        if (offset < c.first)
            c.first = offset;
        if (last > c.last)
            c.last = last;
        if (max_ts > c.max_ts)
            c.max_ts = max_ts;
        if (last + 1 > c.next_after)
            c.next_after = last + 1;
        if (events && !(attrs & 0x20) && be64(p + 43) >= 0 && !add_batch(&pr, p, pos, size, last, cuts, n_cuts))
            goto fail;
        o.next = next_after;
        o.has_next = 1;
        valid += size;
        pos += size;
    }
    PyObject *runs = runs_list(&pr);
    if (runs == NULL)
        goto fail;
    PyMem_Free(pr.runs);
    PyMem_Free(pr.slots);
    PyMem_Free(cuts);
    PyBuffer_Release(&view);
    PyObject *next_out = o.has_next ? PyLong_FromLongLong(o.next) : (Py_INCREF(Py_None), Py_None);
    if (next_out == NULL) {
        Py_DECREF(runs);
        return NULL;
    }
    return Py_BuildValue("(nNLLLLLLLLLLIN)", pos, next_out, valid, c.frames, c.first_base, c.next_after, c.max_ts,
                         c.records, c.tx, c.ctl, c.first, c.last, c.codecs, runs);
fail:
    PyMem_Free(pr.runs);
    PyMem_Free(pr.slots);
    PyMem_Free(cuts);
    PyBuffer_Release(&view);
    return NULL;
}
