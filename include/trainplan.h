/*
 * trainplan.h - the trainplan library: the command line as a function,
 * the same JSON the command prints for bindings (Python's ctypes), and a
 * few plain structs for C programs. Link with -ltrainplan (pkg-config
 * trainplan); the trainplan executable is one call of tp_run.
 *
 * Every call takes its options as the command line does: a request is a
 * set of the command's long options (`trainplan --list-options`), parsed
 * by the same option table, so every option of the command is a keyword
 * here and the results are the command's, byte for byte. Statuses are
 * the command's exit statuses (README.md): 0 ok, 1 nothing feasible,
 * 64 usage, 65 bad input data, 66 missing file, 70 internal, 74 I/O.
 * A function given a NULL where this header does not allow one returns
 * 64 with a message (in *error, or on err for tp_run) and touches
 * nothing else; none crashes on one.
 *
 * Any thread may call. The calls without a session are serialized on
 * one lock (a command may write files, and the output layer's signal
 * slots are the process's); a session's
 * calls of estimate, search and model run at once (see tp_open). The
 * OpenMP thread count of --threads holds for the call only. A library call installs no signal
 * handler (tp_handle_signals) and never exits; allocation failure aborts
 * with a message. The hardware database is found beside the library
 * (LIBDIR/../share/trainplan/hwdb), beside the executable, in the source
 * tree it was built from, or where it was installed, then
 * $TRAINPLAN_HWDB and the request's "hwdb" directories (README.md).
 */
#ifndef TRAINPLAN_H
#define TRAINPLAN_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this interface: raised when a function or struct of
 * this header changes. Compare with tp_api_version() at run time. */
#define TP_API_VERSION 4 /* 4: tp_session_estimate_from_json and
                            tp_session_estimate_many_json; 3: sessions
                            (tp_open); 2: tp_sweep_json */

/* The API version of the library loaded (TP_API_VERSION when built). */
int tp_api_version(void);
/* The trainplan version, e.g. "0.1.0"; a static string. */
const char *tp_version(void);

/* ---- the command line as a function ------------------------------------ */

/* Runs one trainplan command line, argv[0] being the program's name
 * (argv is not modified; argv[argc] need not be NULL): data goes to out
 * (or the -o FILE it names), every diagnostic to err, as the command
 * writes them to standard output and standard error. Returns the exit
 * status. out and err stay open; NULL means stdout or stderr. Can be
 * called any number of times in one process. argc < 1, a NULL argv or a
 * NULL among argv[0..argc) is 64 with a message on err. `sweep` without -o writes
 * its records to out: through out's file descriptor, one write() a
 * record, when it has one (stdout, a file); else (a memory stream)
 * through stdio, flushed after each record. */
int tp_run(int argc, char *const argv[], FILE *out, FILE *err);

/* Lets tp_run handle SIGHUP, SIGINT and SIGTERM as the command does: a
 * temporary -o file is removed before the signal ends the process, and
 * a sweep stops after its current record (exit 129/130/143). For
 * programs that own their signals (the trainplan executable calls it);
 * without it no call installs a handler, and a signal may leave an -o
 * file's temporary copy (FILE.tmp.XXXXXX) behind. */
void tp_handle_signals(void);

/* ---- requests ------------------------------------------------------------ */

/* A command's options, to run with tp_call, tp_estimate or tp_search.
 * Create with tp_request_new or tp_request_from_json; free with
 * tp_request_free (NULL is a no-op). */
typedef struct tp_request tp_request;

tp_request *tp_request_new(void);
void tp_request_free(tp_request *q);
/* Adds the option key (a long option name, with '-' or '_': "max_gpus")
 * with value, a string as typed on the command line ("128", "64,128",
 * "300e9"); value NULL gives a flag ("sequence_parallel"). A key given
 * twice is passed twice (the command's rule applies: "hwdb" adds a
 * directory, others take the last value). Returns 0, or 64 (usage),
 * leaving q as it was, for: a NULL q or key; a key that is no option of
 * trainplan; a value missing or given to a flag; a key no library call
 * can honour, because every call returns the command's JSON on its own
 * stream ("format", "output", "help", "version", "list_options"); and
 * "-" (standard output) as the file of "svg" or "sbatch". The message
 * is in *error when error is not NULL (free it with tp_free). */
int tp_request_set(tp_request *q, const char *key, const char *value,
                   char **error);
/* Adds a positional argument (model show's NAME, hw check's FILE). A
 * NULL q is a no-op; a NULL arg adds nothing and marks q, so that every
 * call made with it returns 64 naming the argument. */
void tp_request_arg(tp_request *q, const char *arg);
/* A request from a JSON object: each key an option as tp_request_set
 * takes it, each value a string, a number (written as the shortest
 * decimal that reads back the same), true (a flag, or the option itself),
 * false (the flag's "no-" form where the option table has one, else
 * left out), null (left out), or an array (its elements joined by
 * commas, "hwdb" repeated); the key "args" holds the positional
 * arguments (an array of strings). Keys are refused as tp_request_set
 * refuses them ("format", "output", ...), and so is a key given twice,
 * in the request or in any object inside it, "max_gpus" and "max-gpus"
 * counting as one (README.md: JSON readers disagree on which value
 * wins), and a string holding \u0000 (no option, name or path can hold
 * a NUL). json is UTF-8 text; bytes that are not UTF-8 inside a string
 * (a POSIX path) are passed through as they are. Returns the request,
 * or NULL with status 64 (usage: NULL, not JSON, not an object, an
 * unknown, refused or repeated key or a bad value, naming it) in
 * *status (when status is not NULL) and the message in *error (free it
 * with tp_free). */
tp_request *tp_request_from_json(const char *json, int *status, char **error);

/* ---- JSON in, JSON out (bindings) ---------------------------------------- */

/* Runs `trainplan COMMAND --format json` with the options of q; command
 * is "estimate", "search", "sweep", "model show", "model list",
 * "hw list", "hw show", "coll show", "op show", ... (`trainplan --help`).
 * On return *result_json holds what the command prints (NULL if it
 * printed nothing: an error) and *error what it writes to standard error
 * (NULL if nothing): the message of a failure (file, field, value and
 * range) or the warnings of a success. Free both with tp_free. Returns
 * the exit status (1: nothing feasible, with its JSON and a line on
 * *error saying why: search's nearest miss, estimate's reason). "sweep"
 * gives JSON Lines: one record a line, '\n' after each, in scenario
 * order, the bytes `sweep SPEC.json -o FILE` writes
 * (docs/output-formats.md). "completion bash" gives the completion
 * script, text, not JSON. q NULL is a request with no options;
 * result_json or error NULL drops that text; a NULL or empty command
 * is 64, and so is a q that tp_request_arg marked. */
int tp_call(const char *command, const tp_request *q, char **result_json,
            char **error);
/* tp_call with the request as a JSON object (tp_request_from_json).
 * For "sweep" the key "spec" is the spec: its file's path (as "args"),
 * or the spec itself as a JSON object, which the call writes to a
 * temporary file of its own ($TMPDIR, else /tmp; mode 0600; messages
 * name it) and removes before it returns, on failure too (a file that
 * cannot be written: 74). Relative paths in a spec are read from the
 * current directory either way. */
int tp_call_json(const char *command, const char *request_json,
                 char **result_json, char **error);
/* request_json NULL is 64 (give "{}" for no options). */
/* tp_call_json of "search", "estimate" and "model show" (the request's
 * "args" or "name" naming the model: {"name": "llama3-8b"}). */
int tp_search_json(const char *request_json, char **result_json, char **error);
int tp_estimate_json(const char *request_json, char **result_json,
                     char **error);
int tp_model_json(const char *request_json, char **result_json, char **error);
/* tp_call_json of "sweep": *result_json gets the records, one JSON object
 * a line ({"spec": {"models": [...], ...}, "threads": 2}). A scenario
 * that fails is a record with status "error", not a failed call; the
 * call fails (64, 65, 66) on a bad request or spec, every problem of a
 * spec in *error, one a line. A JSON call refuses "output", so
 * "resume" and "overwrite" (which need -o FILE) are usage errors: the
 * records come back here; tp_run writes a resumable file. */
int tp_sweep_json(const char *request_json, char **result_json, char **error);

/* Frees a string this library returned; NULL is a no-op. */
void tp_free(void *p);

/* ---- plain structs (C programs) ------------------------------------------ */

/* A layout and its estimate, as `search --format json` ranks it. */
typedef struct tp_layout {
    char tag[96];          /* e.g. "n32g4_tp4pp4dp8_mbs4_vpp6_sp_z1" */
    char system[64];       /* the hwdb system */
    int gpus, tp, pp, cp, dp, ep, etp; /* ep, etp: 1 for dense models */
    int vpp;               /* model chunks per pipeline rank (1: plain 1F1B) */
    int mbs, gbs, seq_length;
    int sequence_parallel; /* 0 or 1 */
    char recompute[16];    /* "none", "selective", "full", "selective-op" */
    int zero_stage;        /* 0 to 3 */
    char precision[8];     /* "bf16", "fp16", "fp8", "fp4" */
    double iteration_time_s, tokens_per_s, mfu;
    double peak_memory_bytes;       /* per GPU, the worst stage */
    double cost_per_iteration_usd;  /* < 0: unknown (no price) */
} tp_layout;

/* An estimate of one iteration (`estimate --format json`). */
typedef struct tp_estimate_result {
    int feasible;          /* 1, or 0 with reason */
    char reason[64];       /* "feasible", or why not ("oom", ...) */
    char gpu[64];          /* the system's GPU */
    tp_layout layout;      /* the layout estimated (unset fields searched);
                              its cost field is < 0 */
    double gpu_memory_bytes; /* the GPU's capacity */
} tp_estimate_result;

/* Runs `estimate` with q and fills *r. The command fills r itself and
 * prints nothing (since API 4: no JSON is made or read back), so r holds
 * the estimate's own numbers, those `estimate --format json` prints to
 * its 15 to 17 significant digits. Returns the exit status, the
 * command's: 0 for a feasible layout; 1 for an infeasible one, with *r
 * filled all the same (r->feasible 0, r->reason why, the time and
 * memory the layout needs) and *error saying why ("trainplan: not
 * feasible (oom): ..."); 64, 65, 66 for a bad request, with *r zeroed
 * (its cost < 0). The message is in *error when error is not NULL (free
 * with tp_free; NULL if none). A NULL r is 64; q NULL is a request with
 * no options (the command then asks for --model). */
int tp_estimate(const tp_request *q, tp_estimate_result *r, char **error);
/* Runs `search` with q and fills top[0..cap) with the ranked layouts,
 * best first; *n gets how many (at most cap, and --top, default 10).
 * Returns the exit status (1: nothing feasible, *n = 0), with the
 * message in *error as tp_estimate. A NULL n, a negative cap, or a
 * NULL top with cap > 0 is 64 (top NULL with cap 0 counts nothing). */
int tp_search(const tp_request *q, tp_layout *top, int cap, int *n,
              char **error);

/* ---- sessions: open once, call many times, from any thread -------------- */

/* A session holds the hardware database, opened once, and the operator
 * models and collective tables of each GPU and system, fitted the first
 * time a call needs them and kept: a call made with it skips both (an
 * estimate from Python: 25 ms a call without a session, well under 1 ms
 * with one; bench/session_speed). Its calls return what the calls
 * without a session return, byte for byte.
 *
 * Threads: a session may be used by any number of threads at once. Its
 * calls of "estimate", "search", "model show" and "model list" run in
 * parallel, option parsing included (the parser's state is the call's
 * own); the other commands, and calls writing --svg or --sbatch files,
 * are serialized as without a session. What the session holds is read-only once
 * filled; the first fit of a GPU's models takes the session's lock.
 *
 * fork: a child may not use its parent's sessions (open its own); in a
 * process forked from one that has made a call, every call runs on one
 * thread whatever "threads" says, as GNU OpenMP's threads do not survive
 * fork and a parallel region would wait for them forever (Python's
 * multiprocessing forks by default on Linux).
 *
 * Ownership: tp_open returns a session the caller closes with tp_close,
 * after every call made with it has returned. A request naming "hwdb"
 * directories of its own runs as without a session (it opens that
 * database for itself). */
typedef struct tp_session tp_session;

/* Opens a session. options: NULL, or a request holding only "hwdb"
 * directories (added to the database, as --hwdb). Returns NULL with the
 * message in *error (free with tp_free) for any other key or a
 * positional argument (usage), or a database that does not load (its
 * file, field and value). */
tp_session *tp_open(const tp_request *options, char **error);
/* tp_open with its options as a JSON object ({"hwdb": ["dir"]}, "{}" or
 * NULL for none); the status of a failure in *status (64 usage, 65 bad
 * data, 66 missing file), 0 on success. */
tp_session *tp_open_json(const char *options_json, int *status, char **error);
/* Closes s and frees what it holds; NULL is a no-op. */
void tp_close(tp_session *s);

/* tp_call, tp_call_json, tp_estimate and tp_search with session s: the
 * same arguments, results, statuses and messages (tp_session_call_json
 * reads "spec" for "sweep", as tp_call_json does). A NULL s is 64 with a
 * message. */
int tp_session_call(tp_session *s, const char *command, const tp_request *q,
                    char **result_json, char **error);
int tp_session_call_json(tp_session *s, const char *command,
                         const char *request_json, char **result_json,
                         char **error);
int tp_session_estimate(tp_session *s, const tp_request *q, tp_estimate_result *r,
                        char **error);
int tp_session_search(tp_session *s, const tp_request *q, tp_layout *top, int cap,
                      int *n, char **error);
/* tp_session_estimate with the request as a JSON object
 * (tp_request_from_json: {"model": "llama3-8b", "gpus": 64, ...}): JSON
 * in, the plain struct out, for bindings that want an estimate's figures
 * without making and reading its JSON (Python's
 * trainplan.estimate_struct). Fills *r, or zeroes it (its cost < 0) when
 * there is no estimate. Returns tp_session_estimate's statuses: 0; 1 for
 * an infeasible layout, r filled, *error saying why; 64 for a NULL s, a
 * NULL r, a NULL or bad request (as tp_request_from_json: not JSON, an
 * unknown, refused or repeated key, a bad value, naming it); 65, 66 as
 * the command. *error (free with tp_free; NULL if none) gets the message
 * of a failure or the warnings of a success; error NULL drops it.
 * Threads and ownership as tp_session_estimate: any number of threads at
 * once on one session, nothing to free but *error (since API 4). */
int tp_session_estimate_from_json(tp_session *s, const char *request_json,
                                  tp_estimate_result *r, char **error);
/* tp_session_estimate_from_json of each request of a JSON array
 * ([{"model": ...}, {"model": ...}]), in order, in one call: for a
 * binding whose calls cost it more than an estimate's own time (Python:
 * its lock, the GIL, is taken and released once for the whole array, so
 * threads each estimating arrays run in parallel where single calls of a
 * few microseconds cannot; bench/py_session_speed.py). The estimates
 * run on the calling thread, one after another. *n gets the number of
 * requests. r[i], status[i] and errors[i] are the result, status and
 * message tp_session_estimate_from_json gives for request i (status 1:
 * infeasible, r[i] filled; 64: an element that is no object, or a bad
 * request, naming it; 65, 66: the command's); errors NULL drops the
 * messages, else each errors[i] is NULL or a string to free with
 * tp_free. Returns 0 once every request ran (their statuses in
 * status[]), or 64, nothing run, with the message in *error (free with
 * tp_free; error NULL drops it) for: a NULL s or n, a negative cap, a
 * NULL r or status with cap > 0, requests_json NULL, not JSON, with a
 * \u0000 or not an array, and more requests than cap (*n says how
 * many). Threads and ownership as tp_session_estimate (since API 4). */
int tp_session_estimate_many_json(tp_session *s, const char *requests_json,
                                  tp_estimate_result *r, int *status,
                                  char **errors, int cap, int *n, char **error);

#ifdef __cplusplus
}
#endif
#endif
