/*
 * speedups.c - _trainplan_speedups, the optional C half of the Python
 * package's estimate_struct (python/trainplan/__init__.py).
 *
 * Through ctypes a call of a few microseconds spends a third of its time
 * holding the GIL (the request's JSON made by the json module, ctypes'
 * marshalling), so two Python threads calling estimate_struct ran no
 * faster than one (bench/py_session_speed.py). Here the GIL is held only
 * to read the keyword dict's keys and values (references taken; only a
 * float is formatted there); the request's JSON is written and the library called with
 * it released, and the result goes straight into the caller's
 * EstimateResult (a ctypes struct, tp_estimate_result field for field).
 *
 * The module does not link libtrainplan: bind() gets the addresses of
 * tp_session_estimate_from_json and tp_free from the library ctypes
 * loaded, so both halves call the same copy of it whichever path it came
 * from. Built against the limited API of CPython 3.10 (one .abi3.so for
 * every later 3.x); without it, or with TRAINPLAN_NO_SPEEDUPS set, the
 * package uses ctypes alone and gives the same results.
 *
 * Request encoding: the flat values estimate takes (str, int, float,
 * bool, None, a list or tuple of those) as json.dumps writes them, so the
 * library reads the same request. Anything else (a path object, bytes, a
 * str with a NUL or a lone surrogate, a non-finite float, an int beyond
 * 64 bits, a nested container) returns NotImplemented and the package
 * encodes that request in Python, which converts or refuses it by name.
 */
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x030A0000
#include <Python.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainplan.h"

typedef int (*estimate_fn)(tp_session *, const char *, tp_estimate_result *,
                           char **);
typedef void (*free_fn)(void *);

static estimate_fn g_estimate;
static free_fn g_free;

/* A growing text buffer: a stack array first, the heap past it. */
typedef struct {
    char *p;
    size_t n, cap;
    int heap;
    char stack[1024];
} buf;

static int buf_put(buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap * 2;
        while (cap < b->n + n + 1) cap *= 2;
        char *q = b->heap ? realloc(b->p, cap) : malloc(cap);
        if (!q) return -1;
        if (!b->heap) memcpy(q, b->p, b->n);
        b->p = q, b->cap = cap, b->heap = 1;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

/* A request's pieces, read from the dict under the GIL and written as
 * JSON without it: each str's UTF-8 (its object held, so the text stays
 * while another thread may change the dict), each int's value, each
 * float as repr writes it. */
enum { I_KEY, I_STR, I_INT, I_TEXT, I_FLOAT, I_OPEN, I_CLOSE };
typedef struct {
    int kind;
    const char *s; /* I_KEY, I_STR, I_TEXT, I_FLOAT (PyMem, freed) */
    Py_ssize_t n;
    long long i;   /* I_INT */
    PyObject *own; /* a reference to drop, or NULL */
} item;

typedef struct {
    item *v;
    int n, cap;
    item stack[64];
} items;

/* A new piece of it, or NULL with Python's MemoryError set. Under the
 * GIL. */
static item *items_add(items *it, int kind)
{
    if (it->n == it->cap) {
        int cap = it->cap * 2;
        item *q = it->v == it->stack ? malloc((size_t)cap * sizeof *q)
                                     : realloc(it->v, (size_t)cap * sizeof *q);
        if (!q) {
            PyErr_NoMemory();
            return NULL;
        }
        if (it->v == it->stack) memcpy(q, it->stack, sizeof it->stack);
        it->v = q, it->cap = cap;
    }
    item *e = &it->v[it->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    return e;
}

/* Under the GIL. */
static void items_free(items *it)
{
    for (int i = 0; i < it->n; i++) {
        Py_XDECREF(it->v[i].own);
        if (it->v[i].kind == I_FLOAT) PyMem_Free((char *)it->v[i].s);
    }
    if (it->v != it->stack) free(it->v);
}

/* 1: read; 0: a value this module leaves to Python's encoder; -1: no
 * memory (a Python error set). Under the GIL. */
static int add_str(items *it, int kind, PyObject *s)
{
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (!u) { /* a lone surrogate: Python's encoder says which key */
        PyErr_Clear();
        return 0;
    }
    if (memchr(u, '\0', (size_t)n)) return 0;
    item *e = items_add(it, kind);
    if (!e) return -1;
    e->s = u, e->n = n, e->own = s;
    Py_INCREF(s);
    return 1;
}

static int add_text(items *it, const char *t)
{
    item *e = items_add(it, I_TEXT);
    if (!e) return -1;
    e->s = t, e->n = (Py_ssize_t)strlen(t);
    return 1;
}

static int add_scalar(items *it, PyObject *v)
{
    if (v == Py_None) return add_text(it, "null");
    if (v == Py_True) return add_text(it, "true");
    if (v == Py_False) return add_text(it, "false");
    if (PyUnicode_CheckExact(v)) return add_str(it, I_STR, v);
    if (PyLong_CheckExact(v)) {
        int over = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &over);
        if (over || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        item *e = items_add(it, I_INT);
        if (!e) return -1;
        e->i = x;
        return 1;
    }
    if (PyFloat_CheckExact(v)) {
        double x = PyFloat_AsDouble(v);
        if (x != x || x > 1.7976931348623157e308 || x < -1.7976931348623157e308)
            return 0; /* NaN, inf: json.dumps writes what JSON is not */
        char *r = PyOS_double_to_string(x, 'r', 0, 0, NULL);
        if (!r) return -1;
        item *e = items_add(it, I_FLOAT);
        if (!e) {
            PyMem_Free(r);
            return -1;
        }
        e->s = r, e->n = (Py_ssize_t)strlen(r);
        return 1;
    }
    return 0;
}

/* The dict's pieces: 1, 0 (leave it to Python) or -1. Under the GIL. */
static int read_options(items *it, PyObject *options)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    int rc;
    while (PyDict_Next(options, &pos, &k, &v)) {
        if (!PyUnicode_CheckExact(k)) return 0;
        if ((rc = add_str(it, I_KEY, k)) != 1) return rc;
        if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
            int list = PyList_CheckExact(v);
            Py_ssize_t n = list ? PyList_Size(v) : PyTuple_Size(v);
            if (!items_add(it, I_OPEN)) return -1;
            for (Py_ssize_t i = 0; i < n; i++) {
                PyObject *x = list ? PyList_GetItem(v, i) : PyTuple_GetItem(v, i);
                if ((rc = add_scalar(it, x)) != 1) return rc;
            }
            if (!items_add(it, I_CLOSE)) return -1;
        } else if ((rc = add_scalar(it, v)) != 1) {
            return rc;
        }
    }
    return 1;
}

/* A JSON string of n bytes of UTF-8, as json.dumps(ensure_ascii=False)
 * escapes it. */
static int put_json_str(buf *b, const char *u, Py_ssize_t n)
{
    if (buf_put(b, "\"", 1)) return -1;
    const char *run = u;
    for (const char *c = u; c < u + n; c++) {
        unsigned char ch = (unsigned char)*c;
        if (ch >= 0x20 && ch != '"' && ch != '\\') continue;
        if (buf_put(b, run, (size_t)(c - run))) return -1;
        char esc[8];
        if (ch == '"' || ch == '\\')
            esc[0] = '\\', esc[1] = (char)ch, esc[2] = '\0';
        else
            snprintf(esc, sizeof esc, "\\u%04x", ch);
        if (buf_put(b, esc, strlen(esc))) return -1;
        run = c + 1;
    }
    if (buf_put(b, run, (size_t)(u + n - run))) return -1;
    return buf_put(b, "\"", 1);
}

/* The pieces as one JSON object; 0, or -1 out of memory. Needs no GIL:
 * it reads the pieces and writes the C buffer only. */
static int write_json(buf *b, const items *it)
{
    int in_list = 0, first = 1;
    if (buf_put(b, "{", 1)) return -1;
    for (int i = 0; i < it->n; i++) {
        const item *e = &it->v[i];
        char num[32];
        int rc = 0;
        if (e->kind == I_KEY) {
            if (!first) rc = buf_put(b, ",", 1);
            first = 0;
            if (!rc) rc = put_json_str(b, e->s, e->n);
            if (!rc) rc = buf_put(b, ":", 1);
        } else if (e->kind == I_OPEN) {
            rc = buf_put(b, "[", 1);
            in_list = 1;
        } else if (e->kind == I_CLOSE) {
            rc = buf_put(b, "]", 1);
            in_list = 0;
        } else {
            if (in_list > 1) rc = buf_put(b, ",", 1);
            if (in_list) in_list = 2;
            if (rc) return -1;
            if (e->kind == I_STR) {
                rc = put_json_str(b, e->s, e->n);
            } else if (e->kind == I_INT) {
                snprintf(num, sizeof num, "%lld", e->i);
                rc = buf_put(b, num, strlen(num));
            } else {
                rc = buf_put(b, e->s, (size_t)e->n);
            }
        }
        if (rc) return -1;
    }
    return buf_put(b, "}", 1);
}

static PyObject *sp_bind(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *e, *f;
    if (!PyArg_ParseTuple(args, "OO:bind", &e, &f)) return NULL;
    void *pe = PyLong_AsVoidPtr(e), *pf = PyLong_AsVoidPtr(f);
    if (PyErr_Occurred()) return NULL;
    if (!pe || !pf) {
        PyErr_SetString(PyExc_ValueError, "bind: a NULL function address");
        return NULL;
    }
    g_estimate = (estimate_fn)pe;
    g_free = (free_fn)pf;
    Py_RETURN_NONE;
}

/* estimate(session, options, result): tp_session_estimate_from_json of
 * the options dict into the tp_estimate_result at address result, the
 * GIL released for the library's call. Returns None for status 0
 * without a message (the common case, made cheapest), else (status,
 * message or None); NotImplemented for a request Python must encode. */
static PyObject *sp_estimate(PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3 || !PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "estimate(session, options: dict, result_address)");
        return NULL;
    }
    PyObject *hs = args[0], *options = args[1], *rs = args[2];
    if (!g_estimate) {
        PyErr_SetString(PyExc_RuntimeError, "estimate: bind() not called");
        return NULL;
    }
    tp_session *s = PyLong_AsVoidPtr(hs);
    tp_estimate_result *r = PyLong_AsVoidPtr(rs);
    if (PyErr_Occurred()) return NULL;
    if (!r) {
        PyErr_SetString(PyExc_ValueError, "estimate: a NULL result");
        return NULL;
    }
    items it;
    it.v = it.stack, it.n = 0, it.cap = (int)(sizeof it.stack / sizeof it.stack[0]);
    int rc = read_options(&it, options);
    if (rc != 1) {
        items_free(&it);
        if (rc < 0) return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    char *err = NULL;
    int status = 0, nomem;
    Py_BEGIN_ALLOW_THREADS
    buf b;
    b.p = b.stack, b.n = 0, b.cap = sizeof b.stack, b.heap = 0;
    b.p[0] = '\0';
    nomem = write_json(&b, &it) != 0;
    if (!nomem) status = g_estimate(s, b.p, r, &err);
    if (b.heap) free(b.p);
    Py_END_ALLOW_THREADS
    items_free(&it);
    if (nomem) return PyErr_NoMemory();
    if (status == 0 && !err) Py_RETURN_NONE;
    PyObject *msg = Py_None;
    Py_INCREF(msg);
    if (err) {
        Py_DECREF(msg);
        msg = PyUnicode_DecodeUTF8(err, (Py_ssize_t)strlen(err), "backslashreplace");
        g_free(err);
        if (!msg) return NULL;
    }
    return Py_BuildValue("(iN)", status, msg);
}

static PyMethodDef sp_methods[] = {
    {"bind", sp_bind, METH_VARARGS,
     "bind(estimate_addr, free_addr): the library's "
     "tp_session_estimate_from_json and tp_free"},
    {"estimate", (PyCFunction)(void (*)(void))sp_estimate, METH_FASTCALL,
     "estimate(session, options, result_addr) -> None (status 0, no "
     "message), (status, message) or NotImplemented"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef sp_module = {
    PyModuleDef_HEAD_INIT, "_trainplan_speedups",
    "trainplan's estimate_struct in C (python/speedups.c)", -1, sp_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__trainplan_speedups(void);
PyMODINIT_FUNC PyInit__trainplan_speedups(void)
{
    return PyModule_Create(&sp_module);
}
