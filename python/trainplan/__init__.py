"""trainplan from Python: the C library (libtrainplan.so) through ctypes.

Every function takes the command line's long options as keywords ('-' or
'_': ``max_gpus=128``, ``seq_length=2048``; ``True`` for a flag) and
returns the dict of what ``trainplan ... --format json`` prints, number for
number::

    import trainplan
    r = trainplan.search(model="gpt-neox-20b", system="perlmutter",
                         max_gpus=128, seq_length=2048,
                         global_batch_size=1024)
    print(r["ranked"][0]["layout"])

``estimate_struct`` (and ``Session.estimate_struct``) takes the same
keywords and returns the estimate's main figures as a plain struct
(EstimateResult, include/trainplan.h's tp_estimate_result) instead of the
dict: no JSON is decoded, so a call costs a fraction of ``estimate``'s and
holds the GIL only to build its request (threads on one session scale;
bench/py_session_speed.py)::

    r = trainplan.estimate_struct(model="llama3-8b", system="eos", gpus=64,
                                  seq_length=8192, global_batch_size=512,
                                  tensor_model_parallel_size=2)
    print(r.iteration_time_s, r.peak_memory_bytes, r.layout.dp)

``estimate_structs(list_of_dicts)`` runs many in one call (the GIL
released once for all of them): what threads need to run in parallel,
since single calls of a few microseconds each mostly wait for the GIL.

A non-zero exit status raises TrainplanError (its .status is the command's
exit status, its message what the command wrote to standard error); a
success's warnings are Python warnings (TrainplanWarning). With pandas
installed, ``dataframe=True`` or ``to_dataframe(result)`` gives a DataFrame.

``sweep(spec)`` runs every scenario of a sweep spec (a dict, or the path of
a spec file) and returns its records, one dict per scenario::

    recs = trainplan.sweep({"models": ["llama3-8b"], "systems": ["eos"],
                            "gpus": [64, 128], "seq_lengths": [8192],
                            "global_batch_sizes": [1024]})
    print([r["best"]["layout"] for r in recs])

The library is, in this order: $TRAINPLAN_LIB, the copy inside this
package (pip install), the build directory of the source checkout this
file sits in (../build), then ctypes.util.find_library("trainplan")
(cmake --install). No compiler step, no dependency but the library.
Where the build found CPython's headers (Debian: python3-dev), a small C
module beside the library, _trainplan_speedups (python/speedups.c),
holds the GIL for estimate_struct only to read its keywords, and writes
the request and calls the library without it, so that threads making
single calls scale; without it (or with
TRAINPLAN_NO_SPEEDUPS set) ctypes does the same, with the same results
(``speedups()`` says which).
"""
import sys
import ctypes
import ctypes.util
import json
import os
import warnings

__all__ = ["estimate", "estimate_struct", "estimate_structs", "search", "sweep", "model", "models",
           "systems", "call", "Session", "EstimateResult", "Layout",
           "to_dataframe", "frame_rows", "library_path", "speedups", "version", "TrainplanError",
           "TrainplanWarning"]

API_VERSION = 4  # TP_API_VERSION of include/trainplan.h this module speaks


class TrainplanError(Exception):
    """A call that ended with a non-zero exit status.

    status: the command's exit status (1 nothing feasible, 64 usage, 65 bad
    input data, 66 missing file, 70 internal, 74 I/O); message: what it
    wrote to standard error; result: the dict it printed, if any (a search
    with nothing feasible still prints its counts, and in
    result["nearest_miss"] the limit that binds, the nearest layout against
    each limit, and the levers that fit, each with the options that apply
    it: result["nearest_miss"]["levers"][i]["option"], e.g.
    "--precision fp8").
    """

    def __init__(self, status, message, result=None):
        super().__init__("trainplan exited %d: %s" % (status, message.strip()))
        self.status = status
        self.message = message
        self.result = result


class TrainplanWarning(UserWarning):
    """What a successful call wrote to standard error (a warning)."""


def _text_field(name):
    """A char[] field of the C struct as str (bytes that are not UTF-8
    as os.fsdecode reads them)."""
    return property(lambda self: getattr(self, name).decode("utf-8", "surrogateescape"),
                    doc="the C struct's %s, as str" % name[1:])


class Layout(ctypes.Structure):
    """A layout and its estimate: include/trainplan.h's tp_layout, field
    for field (the names ``search --format json`` gives them are in the
    C header's comments). tag, system, recompute and precision are str;
    the C char arrays are _tag, _system, ... ."""
    _fields_ = [("_tag", ctypes.c_char * 96),
                ("_system", ctypes.c_char * 64),
                ("gpus", ctypes.c_int), ("tp", ctypes.c_int),
                ("pp", ctypes.c_int), ("cp", ctypes.c_int),
                ("dp", ctypes.c_int), ("ep", ctypes.c_int),
                ("etp", ctypes.c_int), ("vpp", ctypes.c_int),
                ("mbs", ctypes.c_int), ("gbs", ctypes.c_int),
                ("seq_length", ctypes.c_int),
                ("sequence_parallel", ctypes.c_int),
                ("_recompute", ctypes.c_char * 16),
                ("zero_stage", ctypes.c_int),
                ("_precision", ctypes.c_char * 8),
                ("iteration_time_s", ctypes.c_double),
                ("tokens_per_s", ctypes.c_double),
                ("mfu", ctypes.c_double),
                ("peak_memory_bytes", ctypes.c_double),
                ("cost_per_iteration_usd", ctypes.c_double)]
    tag = _text_field("_tag")
    system = _text_field("_system")
    recompute = _text_field("_recompute")
    precision = _text_field("_precision")

    def to_dict(self):
        """The fields as a dict (the str fields as str)."""
        return {k.lstrip("_"): getattr(self, k.lstrip("_"))
                for k, _ in self._fields_}

    def __repr__(self):
        return "Layout(%s)" % ", ".join("%s=%r" % kv for kv in self.to_dict().items())


class EstimateResult(ctypes.Structure):
    """What estimate_struct returns: include/trainplan.h's
    tp_estimate_result. feasible (1, or 0 with reason: "out_of_memory",
    ...), reason, gpu (the system's GPU), layout (a Layout: the layout
    estimated, the fields the request left unset as the estimate chose
    them, with its time and memory; its cost is < 0) and
    gpu_memory_bytes. iteration_time_s, tokens_per_s, mfu,
    peak_memory_bytes and system read through to the layout's. The
    numbers are the estimate's own doubles: ``estimate``'s JSON prints
    them to 15 to 17 significant digits."""
    _fields_ = [("feasible", ctypes.c_int),
                ("_reason", ctypes.c_char * 64),
                ("_gpu", ctypes.c_char * 64),
                ("layout", Layout),
                ("gpu_memory_bytes", ctypes.c_double)]
    reason = _text_field("_reason")
    gpu = _text_field("_gpu")
    iteration_time_s = property(lambda self: self.layout.iteration_time_s)
    tokens_per_s = property(lambda self: self.layout.tokens_per_s)
    mfu = property(lambda self: self.layout.mfu)
    peak_memory_bytes = property(lambda self: self.layout.peak_memory_bytes)
    system = property(lambda self: self.layout.system)

    def to_dict(self):
        """The fields as a dict, the layout's as a dict inside."""
        return {"feasible": self.feasible, "reason": self.reason,
                "gpu": self.gpu, "layout": self.layout.to_dict(),
                "gpu_memory_bytes": self.gpu_memory_bytes}

    def __repr__(self):
        return ("EstimateResult(feasible=%d, reason=%r, gpu=%r, layout=%r, "
                "gpu_memory_bytes=%r)" % (self.feasible, self.reason, self.gpu,
                                          self.layout, self.gpu_memory_bytes))


_lib = None
_lib_path = None


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("TRAINPLAN_LIB")
    if env:
        yield env
        return
    yield os.path.join(here, "lib", "libtrainplan.so.0")
    build = os.environ.get("TRAINPLAN_BUILD_DIR") or os.path.join(here, "..", "..", "build")
    yield os.path.join(build, "libtrainplan.so.0")
    found = ctypes.util.find_library("trainplan")
    if found:
        yield found


def _load():
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        lib.tp_api_version.restype = ctypes.c_int
        lib.tp_version.restype = ctypes.c_char_p
        lib.tp_call_json.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                     ctypes.POINTER(ctypes.c_void_p),
                                     ctypes.POINTER(ctypes.c_void_p)]
        lib.tp_call_json.restype = ctypes.c_int
        lib.tp_free.argtypes = [ctypes.c_void_p]
        lib.tp_free.restype = None
        lib.tp_open_json.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int),
                                     ctypes.POINTER(ctypes.c_void_p)]
        lib.tp_open_json.restype = ctypes.c_void_p
        lib.tp_close.argtypes = [ctypes.c_void_p]
        lib.tp_close.restype = None
        lib.tp_session_call_json.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                             ctypes.c_char_p,
                                             ctypes.POINTER(ctypes.c_void_p),
                                             ctypes.POINTER(ctypes.c_void_p)]
        lib.tp_session_call_json.restype = ctypes.c_int
        lib.tp_session_estimate_from_json.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(EstimateResult),
            ctypes.POINTER(ctypes.c_void_p)]
        lib.tp_session_estimate_from_json.restype = ctypes.c_int
        lib.tp_session_estimate_many_json.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(EstimateResult),
            ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_int, ctypes.POINTER(ctypes.c_int),
            ctypes.POINTER(ctypes.c_void_p)]
        lib.tp_session_estimate_many_json.restype = ctypes.c_int
        if lib.tp_api_version() != API_VERSION:
            tried.append("%s (API version %d, this module speaks %d)"
                         % (path, lib.tp_api_version(), API_VERSION))
            continue
        _lib, _lib_path = lib, path
        _bind_speedups(lib, path)
        return lib
    raise ImportError("trainplan: libtrainplan.so not found; tried: %s. Build "
                      "it (cmake -S . -B build && cmake --build build) or set "
                      "TRAINPLAN_LIB to its path" % "; ".join(tried or ["nothing"]))


_speedups = None  # python/speedups.c's module, or None: ctypes alone

# This process's id, kept current across fork (a child's sessions are
# refused, its default session reopened): what a call checks, without a
# getpid system call each time.
_pid = os.getpid()


def _forked():
    global _pid
    _pid = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def _bind_speedups(lib, path):
    """Loads _trainplan_speedups from beside the library (the build
    directory, or the wheel's trainplan/lib/) and hands it the library's
    functions; without it (no CPython headers at build time, another
    interpreter, TRAINPLAN_NO_SPEEDUPS set) estimate_struct uses ctypes
    alone, with the same results."""
    global _speedups
    if os.environ.get("TRAINPLAN_NO_SPEEDUPS") or os.path.sep not in path:
        return
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.realpath(path))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        file = os.path.join(here, "_trainplan_speedups" + suffix)
        if not os.path.exists(file):
            continue
        try:
            spec = importlib.util.spec_from_file_location("_trainplan_speedups", file)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            addr = lambda f: ctypes.cast(f, ctypes.c_void_p).value  # noqa: E731
            mod.bind(addr(lib.tp_session_estimate_from_json), addr(lib.tp_free))
        except (ImportError, OSError, AttributeError, ValueError):
            continue
        _speedups = mod
        return


def speedups():
    """The path of the C module estimate_struct runs through
    (python/speedups.c), or None where it uses ctypes alone."""
    _load()
    return _speedups.__file__ if _speedups is not None else None


def library_path():
    """The path of the libtrainplan.so this module loaded."""
    _load()
    return _lib_path


def version():
    """The trainplan version of the library, e.g. '0.1.0'."""
    return _load().tp_version().decode()


def _take(p, errors):
    """A string the library returned, freed. errors: how bytes that are
    not UTF-8 read (a POSIX path): "surrogateescape" for results, so a
    path comes back as the str os.fsdecode gives; "backslashreplace" for
    messages, which must print."""
    if not p.value:
        return None
    s = ctypes.string_at(p.value).decode("utf-8", errors)
    _lib.tp_free(p)
    return s


def _plain(value, key):
    """value with what JSON cannot carry made plain, or ValueError naming
    key: os.PathLike and bytes (paths) as os.fsdecode reads them, so a
    path that is not UTF-8 travels as its own bytes (surrogateescape);
    a NUL, which the C library would read as the string's end, refused;
    a str that no bytes encode (a lone surrogate not from
    surrogateescape) refused."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bytes):
        value = os.fsdecode(value)
    if isinstance(value, str):
        if "\0" in value:
            raise ValueError("trainplan: key %r: %r holds a NUL character, "
                             "which no option, name or path can hold"
                             % (key, value))
        try:
            value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as e:
            raise ValueError("trainplan: key %r: %r is not text a path or "
                             "option can be (%s)" % (key, value, e.reason)) from None
        return value
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            k = _plain(k, key) if isinstance(k, (str, bytes)) else k
            out[k] = _plain(v, "%s.%s" % (key, k))
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, key) for v in value]
    return value


# one encoder for every call (json.dumps makes one a call for these options)
_encoder = json.JSONEncoder(allow_nan=False, ensure_ascii=False)
try:
    # its C core, made once: no circular check (a request holds no
    # cycles; one recurses until RecursionError, as _plain does), NaN and
    # infinity refused (ValueError) as _encoder refuses them
    from json.encoder import c_make_encoder as _c_make_encoder
    from json.encoder import encode_basestring as _encode_str

    _c_encode = _c_make_encoder(None, _encoder.default, _encode_str, None,
                                ":", ",", False, False, False)
    _fast_text = (lambda o: "".join(_c_encode(o, 0))) if _c_encode else None
except (ImportError, TypeError):  # a Python without the C accelerator
    _fast_text = None


def _body(options):
    """The request's JSON as UTF-8 bytes (a list of requests: a JSON
    array). ensure_ascii=False: a path's
    bytes that are not UTF-8 (held as surrogates) go to the library as
    those bytes, not as \\udcXX escapes that JSON cannot decode. Plain
    values (str, numbers, bools, lists) are encoded as they are; anything
    else, or a value with a NUL or a str no bytes encode, goes through
    _plain, which converts paths and names the key of a bad value."""
    try:
        text = _fast_text(options) if _fast_text else _encoder.encode(options)
        if "\\u0000" not in text:
            return text.encode("utf-8", "surrogateescape")
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        pass
    def plain(q):
        return {_plain(k, k): _plain(v, k) for k, v in q.items()}
    req = [plain(q) for q in options] if isinstance(options, list) else plain(options)
    return _encoder.encode(req).encode("utf-8", "surrogateescape")


def call(command, *args, **options):
    """Runs ``trainplan COMMAND ARGS --format json`` with the options.

    command: "search", "estimate", "model show", "model list", "hw list",
    "hw show", ... (``trainplan --help``); args: its positional arguments;
    options: long options as keywords (True: a flag; False: the flag's
    no- form where there is one; None: left out; a list: comma-joined, or
    repeated for hwdb). Returns the parsed JSON. Raises TrainplanError on a
    non-zero status, TypeError/ValueError for a value JSON cannot carry.
    "sweep" returns its records, a list (see sweep()); "completion bash"
    the completion script, a str. A value with a NUL, or a str no bytes
    encode, is a ValueError naming its key; paths may be os.PathLike,
    bytes, or str from os.fsdecode (bytes that are not UTF-8 pass
    through as they are).
    """
    return _session()._call(command, args, options, _parser(command), 3)


def _parser(command):
    if command == "sweep":
        return _json_lines
    if command.split()[:1] == ["completion"]:
        return str
    return json.loads


class Session:
    """The hardware database opened once and the operator models fitted
    once, for every call made with it: a call on a session costs what its
    estimate and its JSON cost (a pinned layout: about 0.03 ms with
    estimate_struct, which makes no JSON, 0.1-0.2 ms with estimate's dict;
    25 ms or more each without a session, which reopens the database).

    The module's functions (estimate, search, ...) use one session per
    process, opened at the first call; make your own to add hardware
    database directories once (``Session(hwdb=["mydb"])``) or to drop
    what the process's holds (``close()``). A session may be used from
    several threads at once: its estimate, search and model calls run in
    parallel (ctypes releases the GIL during the call; estimate_struct
    holds it only to encode the request, so its calls scale with
    threads best). The database's
    files are read when the session opens: a session does not see them
    change.

        with trainplan.Session() as s:
            for t in (1, 2, 4, 8):
                r = s.estimate(model="llama3-8b", system="eos", gpus=64,
                               seq_length=8192, global_batch_size=512,
                               tensor_model_parallel_size=t)
    """

    def __init__(self, hwdb=None):
        lib = _load()
        opts = {}
        if hwdb is not None:
            opts["hwdb"] = [hwdb] if isinstance(hwdb, (str, bytes, os.PathLike)) else list(hwdb)
        text = json.dumps(_plain(opts, "hwdb"), ensure_ascii=False)
        status, err = ctypes.c_int(0), ctypes.c_void_p()
        handle = lib.tp_open_json(text.encode("utf-8", "surrogateescape"),
                                  ctypes.byref(status), ctypes.byref(err))
        err_s = _take(err, "backslashreplace")
        if not handle:
            raise TrainplanError(status.value, err_s or "")
        self._handle = handle
        self._pid = os.getpid()

    def close(self):
        """Frees what the session holds; later calls raise ValueError."""
        h, self._handle = getattr(self, "_handle", None), None
        if h and _lib is not None and self._pid == os.getpid():
            _lib.tp_close(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def call(self, command, *args, **options):
        """trainplan.call on this session."""
        return self._call(command, args, options, _parser(command), 3)

    def estimate(self, dataframe=False, **options):
        """trainplan.estimate on this session."""
        return _maybe_frame(self._call("estimate", (), options, json.loads, 3),
                            dataframe)

    def search(self, dataframe=False, **options):
        """trainplan.search on this session."""
        return _maybe_frame(self._call("search", (), options, json.loads, 3),
                            dataframe)

    def model(self, name, **options):
        """trainplan.model on this session."""
        return self._call("model show", (name,), options, json.loads, 3)

    def estimate_struct(self, **options):
        """trainplan.estimate_struct on this session."""
        return _estimate_struct(self._live(), options)

    def estimate_structs(self, requests):
        """trainplan.estimate_structs on this session."""
        return _estimate_structs(self._live(), requests)

    def _live(self):
        """The handle, or ValueError for a closed session or one opened
        in another process."""
        if not self._handle:
            raise ValueError("trainplan.Session: the session is closed")
        if self._pid != _pid:
            raise ValueError("trainplan.Session: opened in process %d, used in "
                             "%d (after fork): open a session in this process"
                             % (self._pid, os.getpid()))
        return self._handle

    def _call(self, command, args, options, parse, stacklevel):
        return _call(command, args, options, parse, stacklevel + 1, self._live())


_default = None
_default_lock = __import__("threading").Lock()


def _session():
    """The process's session, opened at the first call (again in a child
    after fork: a session's lock and memory are its process's)."""
    global _default
    s = _default
    if s is None or s._pid != _pid:
        with _default_lock:
            s = _default
            if s is None or s._pid != _pid:
                s = _default = Session()
    return s


def _call(command, args, options, parse, stacklevel, handle=None):
    """tp_session_call_json (tp_call_json without a handle) of the request;
    parse reads what the command printed; warnings point stacklevel frames
    up (the caller of the public function)."""
    lib = _load()
    if args:
        options = dict(options)
        options["args"] = [_plain(a, "args") if isinstance(a, (str, bytes, os.PathLike))
                           else str(a) for a in args]
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    cmd = _plain(command, "command").encode()
    body = _body(options)
    if handle:
        status = lib.tp_session_call_json(handle, cmd, body, ctypes.byref(out),
                                          ctypes.byref(err))
    else:
        status = lib.tp_call_json(cmd, body, ctypes.byref(out), ctypes.byref(err))
    out_s, err_s = _take(out, "surrogateescape"), _take(err, "backslashreplace")
    result = parse(out_s) if out_s else None
    if status != 0:
        raise TrainplanError(status, err_s or "", result)
    if err_s:
        for line in err_s.splitlines():
            warnings.warn(line, TrainplanWarning, stacklevel=stacklevel)
    return result


def _estimate_struct(handle, options):
    """tp_session_estimate_from_json of the request on the session
    handle (Session._live's) into a new EstimateResult. Through the C
    module the GIL is held only to read the keywords (None back: status
    0, no message); through ctypes also to encode the request. The
    estimate runs in the library with the GIL released."""
    r = EstimateResult()
    sp = _speedups
    got = (sp.estimate(handle, options, ctypes.addressof(r))
           if sp is not None else NotImplemented)
    if got is None:
        return r
    if got is not NotImplemented:
        status, err_s = got
    else:
        err = ctypes.c_void_p()
        status = _lib.tp_session_estimate_from_json(handle, _body(options),
                                                    ctypes.byref(r),
                                                    ctypes.byref(err))
        err_s = _take(err, "backslashreplace") if err.value else None
    if status != 0:
        raise TrainplanError(status, err_s or "", r if status == 1 else None)
    if err_s:
        for line in err_s.splitlines():
            warnings.warn(line, TrainplanWarning, stacklevel=3)
    return r


def _estimate_structs(handle, requests):
    """tp_session_estimate_many_json of the requests (dicts) on the
    session handle: one call, the GIL released for all of them."""
    if isinstance(requests, dict) or not hasattr(requests, "__len__"):
        raise TypeError("trainplan.estimate_structs: requests is a list of "
                        "dicts (estimate's keywords), not %s"
                        % type(requests).__name__)
    requests = list(requests)
    for i, q in enumerate(requests):
        if not isinstance(q, dict):
            raise TypeError("trainplan.estimate_structs: request %d is a dict "
                            "of estimate's keywords, not %s"
                            % (i, type(q).__name__))
    k = len(requests)
    res = (EstimateResult * max(k, 1))()
    st = (ctypes.c_int * max(k, 1))()
    msgs = (ctypes.c_void_p * max(k, 1))()
    n, err = ctypes.c_int(0), ctypes.c_void_p()
    try:
        body = _body(requests)
    except ValueError as e:  # _plain's, naming the key: say which request
        raise ValueError("%s (request %s)" % (e, _bad_request(requests))) from None
    status = _lib.tp_session_estimate_many_json(handle, body, res, st, msgs, k,
                                                ctypes.byref(n), ctypes.byref(err))
    err_s = _take(err, "backslashreplace") if err.value else None
    if status != 0:
        raise TrainplanError(status, err_s or "")
    out, bad = list(res)[:k], None
    for i in range(k):
        m = _take(ctypes.c_void_p(msgs[i]), "backslashreplace") if msgs[i] else None
        if st[i] not in (0, 1):
            if bad is None:
                bad = TrainplanError(st[i], "request %d: %s" % (i, m or ""), out)
        elif st[i] == 0 and m:
            for line in m.splitlines():
                warnings.warn(line, TrainplanWarning, stacklevel=3)
    if bad is not None:
        raise bad
    return out


def _bad_request(requests):
    """The index of the first request _plain refuses, for a message."""
    for i, q in enumerate(requests):
        try:
            for k, v in q.items():
                _plain(k, k), _plain(v, k)
        except ValueError:
            return i
    return "?"


def estimate_structs(requests):
    """estimate_struct of each request (a dict of estimate's keywords) in
    one call, in order: a list of EstimateResult, one per request. The
    library runs them one after another with the GIL released for all of
    them, so threads each estimating lists run in parallel, where single
    calls of a few microseconds mostly wait for the GIL
    (bench/py_session_speed.py). An infeasible layout is a result with
    feasible 0 and its reason, not an exception; a bad request (status
    64, 65, 66) raises TrainplanError naming the first one ("request 3:
    ..."), its .result the list (the other requests estimated)."""
    return _estimate_structs(_session()._live(), requests)


def estimate_struct(**options):
    """``trainplan estimate`` with estimate's keywords, its main figures as
    a plain struct (EstimateResult: feasible, reason, gpu, layout with
    its time and memory, gpu_memory_bytes) instead of the JSON's dict: no
    JSON is made or decoded. Raises TrainplanError as estimate does; for
    an infeasible layout (status 1) its .result is the EstimateResult
    (feasible 0, reason why, the time and memory the layout needs).
    Breakdowns, per-stage memory, --ops and --log: estimate's dict."""
    return _estimate_struct(_session()._live(), options)


def _json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line]


def _maybe_frame(result, dataframe):
    return to_dataframe(result) if dataframe else result


def search(dataframe=False, **options):
    """``trainplan search``: every valid layout, ranked, and the Pareto
    front. Keys of the dict as ``search --format json`` prints them
    ("ranked", "pareto", "stats", ...); ``result["ranked"][0]["layout"]`` is
    the winner's tag. dataframe=True: the ranked rows as a DataFrame."""
    return _maybe_frame(_session()._call("search", (), options, json.loads, 3),
                        dataframe)


def estimate(dataframe=False, **options):
    """``trainplan estimate``: time, memory and cost of one iteration of a
    layout (unset fields: the fastest). dataframe=True: one row."""
    return _maybe_frame(_session()._call("estimate", (), options, json.loads, 3),
                        dataframe)


def sweep(spec, dataframe=False, **options):
    """``trainplan sweep SPEC``: the search of every scenario of a sweep
    spec (docs/nightly.md), in scenario order. spec: the spec as a dict
    (the library writes it to a private temporary file, removed after the
    call; relative model paths are read from the current directory), or a
    spec file's path. options: the command's, e.g. ``threads=4``,
    ``shard="0/4"``. Returns a list of dicts, one per scenario, each a
    record as ``sweep -o FILE`` writes it (docs/output-formats.md):
    "scenario", "status" ("ok", "infeasible" or "error" with "error"),
    "best" (the winner's main figures) and "search" (the compact form of
    what ``search`` returns, or all of it with ``record="full"``; launch
    texts only with ``launch=``). A bad spec raises TrainplanError naming
    every problem.
    dataframe=True: one row per scenario (to_dataframe)."""
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if isinstance(spec, bytes):
        spec = os.fsdecode(spec)
    if not isinstance(spec, (str, dict)):
        raise TypeError("trainplan.sweep: spec is a dict or a file path, "
                        "not %s" % type(spec).__name__)
    options = dict(options, spec=spec)
    records = _session()._call("sweep", (), options, _json_lines, 3) or []
    return _maybe_frame(records, dataframe)


def model(name, **options):
    """``trainplan model show NAME``: architecture, parameter counts and
    FLOPs per token of a preset or a HuggingFace config.json path."""
    return _session()._call("model show", (name,), options, json.loads, 3)


def models():
    """``trainplan model list``: the built-in presets."""
    return _session()._call("model list", (), {}, json.loads, 3)


def systems(**options):
    """``trainplan hw list``: the GPUs and systems of the hardware database
    (hwdb="DIR" adds one)."""
    return _session()._call("hw list", (), options, json.loads, 3)


def _is_sweep(result):
    return (isinstance(result, list) and result
            and all(isinstance(r, dict) and "scenario" in r and "status" in r
                    for r in result))


def _sweep_row(rec):
    """A sweep record's row: its index, id, status and error, its
    scenario's inputs (options left out) and its winner's figures."""
    row = {"index": rec.get("index"), "id": rec.get("id"),
           "status": rec.get("status"), "error": rec.get("error")}
    for k, v in (rec.get("scenario") or {}).items():
        if k != "options":
            row["scenario." + k] = v
    for k, v in (rec.get("best") or {}).items():
        row["best." + k] = v
    return row


def to_dataframe(result, which="ranked"):
    """A pandas DataFrame of a result: a search's layouts (one row each,
    nested fields as "breakdown_s.compute_fwd" columns), a sweep's records
    (one row per scenario: "index", "id", "status", "error",
    "scenario.model", ..., and the winner's "best.layout",
    "best.iteration_time_s", ...; missing for a scenario with no winner),
    a list's rows, or one row for anything else.

    Of a search, which= picks the rows: "ranked" (the top layouts, the
    default), "pareto" (the front of time against cost), "admitted" (every
    layout estimated and admitted: search with all=True), or "best" (the
    fastest admitted layout of each (system, GPU count), from "admitted"
    when the search kept it, else from the ranked and the front). Needs
    pandas (ImportError says so)."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError(
            "trainplan.to_dataframe needs pandas, which this Python (%s) "
            "cannot import: on Debian, apt-get install python3-pandas, and "
            "make a venv with --system-site-packages so that it sees Debian's "
            "packages" % sys.executable) from e
    if _is_sweep(result):
        return pandas.DataFrame([_sweep_row(r) for r in result])
    return pandas.json_normalize(frame_rows(result, which))


def frame_rows(result, which="ranked"):
    """The rows to_dataframe makes a DataFrame of (a list of dicts), for a
    search, estimate or list result; which= as to_dataframe's."""
    if which not in ("ranked", "pareto", "admitted", "best"):
        raise ValueError("to_dataframe: which= expected ranked, pareto, "
                         "admitted or best, found %r" % (which,))
    if isinstance(result, dict) and "ranked" in result:
        if which == "admitted" and "admitted" not in result:
            raise ValueError("to_dataframe: which='admitted' needs a search "
                             "run with all=True (--all)")
        if which != "best":
            return list(result[which])
        rows = result.get("admitted")
        if rows is None:
            rows = list(result["ranked"]) + list(result.get("pareto", []))
        best = {}
        for r in rows:
            k = (r["system"], r["gpus"])
            if k not in best or r["iteration_time_s"] < best[k]["iteration_time_s"]:
                best[k] = r
        return [best[k] for k in sorted(best)]
    if isinstance(result, list):
        return result
    return [result]
