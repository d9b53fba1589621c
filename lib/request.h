/*
 * request.h - private to lib/: a library request (include/trainplan.h
 * tp_request) as the option vector the command line's parser reads, and
 * its readers from JSON (request.c), for the calls of trainplan.c.
 */
#ifndef TP_LIB_REQUEST_H
#define TP_LIB_REQUEST_H

#include "trainplan.h"

#include <cjson/cJSON.h>

/* A NULL-terminated vector of strings the request owns. */
typedef struct strv {
    int n, cap;
    char **v;
} strv;

struct tp_request {
    strv opts; /* "--name", then its value where it takes one */
    strv args; /* positional arguments */
    char misuse[160]; /* a NULL tp_request_arg: the calls refuse it (64) */
};

/* How a JSON request's special keys are read: none, "name" as the
 * positional argument (model show), "spec" as sweep's spec. */
typedef enum req_mode { REQ_PLAIN, REQ_NAME, REQ_SPEC } req_mode;

/* A sweep spec given as a JSON object: written to a private temporary
 * file ($TMPDIR or /tmp, mode 0600) whose path is the positional
 * argument, removed after the call (req_spec_remove). */
typedef struct spec_file {
    char path[4096]; /* "" when none was written */
} spec_file;


/* A copy of s in memory the caller frees with tp_free; NULL for NULL. */
char *req_dup(const char *s);
/* TP_EUSAGE, with fmt filled with a and b in *error (when not NULL). */
int req_error(char **error, const char *fmt, const char *a, const char *b);
/* Removes the spec file sf names, if any, and forgets it. */
void req_spec_remove(spec_file *sf);
/* The parsed JSON text json (the caller deletes it), or NULL with 64 in
 * *status and a message naming what ("the request") when json is NULL,
 * holds an escaped NUL, or is not JSON. */
cJSON *req_text(const char *json, const char *what, int *status,
                char **error);
/* The request of the JSON object root, reading the special keys of mode;
 * a spec written to a temporary file is named in *sf (removed on
 * failure). NULL with the status and message on failure. */
tp_request *req_from_tree(const cJSON *root, req_mode mode, spec_file *sf,
                          int *status, char **error);
/* req_from_tree of the JSON text json, which must be an object. */
tp_request *req_from_json(const char *json, req_mode mode, spec_file *sf,
                          int *status, char **error);

#endif
