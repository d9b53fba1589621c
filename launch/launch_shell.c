/*
 * launch_shell.c - a launch script's commands with its own shell variables
 * expanded as bash expands them (issue 30), for the readers of users' jobs
 * (launch_megatron.c, launch_nemo.c).
 *
 * The script is read as `env -i bash FILE` would run it: top to bottom,
 * with no arguments and an empty environment, so a job reads the same on
 * any machine. What bash does, and so this file, for the forms launch
 * scripts use (bash(1), EXPANSION and PARAMETERS):
 *  - NAME=word, NAME+=word, NAME=(words), NAME+=(words), export/declare/
 *    local/readonly/typeset NAME=..., unset NAME; NAME=word before a
 *    command sets it for that command only;
 *  - $NAME, ${NAME}, ${NAME[@]}, ${NAME[*]}, ${NAME[N]}, ${#NAME},
 *    ${#NAME[@]}, ${NAME:-w}, ${NAME-w}, ${NAME:=w}, ${NAME=w}, ${NAME:+w},
 *    ${NAME+w}; "${A[@]}" one word an element; an unquoted expansion split
 *    at blanks (IFS's default), an empty one dropped;
 *  - quotes '...', "...", $'...', backslashes, backslash-newline, comments,
 *    redirections (their targets are not words), here-documents;
 *  - if/elif/else/fi whose conditions are [ ], [[ ]] or test of strings
 *    and integers (= == != -z -n -eq ... and ! && ||) of known values:
 *    the branch bash takes.
 * What it cannot know is marked, not guessed: a variable the file does
 * not set ($1 too: no arguments), $(...), `...`, $((...)), $@ and the
 * other special parameters, an expansion with %, #, / or ^, a variable
 * set under a condition it cannot evaluate, in a loop, case or function
 * body. Such a word carries LAUNCH_SH_UNKNOWN and the reason, naming the
 * variable and the file:line where the value became unknown; each reader
 * refuses it where its value matters (a flag it reads, a word that could
 * hold flags) and skips it elsewhere (a checkpoint path).
 *
 * Not done (bash does them, launch scripts rarely rely on them): pathname
 * (glob) and brace expansion, ~, a changed IFS, arithmetic, functions run
 * where they are called (a body is read where it is defined), `source`d
 * files (this file alone is read; the message says so).
 */
#include "launch.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SH_WHY_MAX = 400, SH_MAX_WORDS = 200000, SH_MAX_DEPTH = 64 };

/* ---- storage ---------------------------------------------------------- */

/* Every string of a script lives in its pool, freed by launch_sh_free. */
static char *pool_add(launch_sh *sh, char *s)
{
    if (sh->npool == sh->cappool) {
        sh->cappool = sh->cappool ? 2 * sh->cappool : 256;
        sh->pool = tp_xrealloc(sh->pool, (size_t)sh->cappool * sizeof *sh->pool);
    }
    sh->pool[sh->npool++] = s;
    return s;
}

static char *pool_strndup(launch_sh *sh, const char *s, size_t n)
{
    char *p = tp_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return pool_add(sh, p);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static const char *pool_printf(launch_sh *sh, const char *fmt, ...)
{
    char buf[SH_WHY_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return pool_strndup(sh, buf, strlen(buf));
}

/* A growable list of words (fields of an expansion, a variable's
 * elements). */
typedef struct wvec {
    launch_sh_word *w;
    int n, cap;
} wvec;

static void wvec_push(wvec *v, launch_sh_word x)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 8;
        v->w = tp_xrealloc(v->w, (size_t)v->cap * sizeof *v->w);
    }
    v->w[v->n++] = x;
}

typedef struct sh_var {
    char name[64];
    int set, array, exported;
    wvec el; /* the elements (one for a string) */
} sh_var;

/* A text under construction. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    if (n > ((size_t)1 << 40)) abort(); /* a length gone negative: a bug */
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = tp_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_putc(sbuf *b, char c) { sb_putn(b, &c, 1); }

/* ---- the interpreter's state ------------------------------------------ */

enum { M_RUN, M_UNK, M_SKIP }; /* a command runs, may run, does not */

enum { FR_IF, FR_LOOP, FR_CASE, FR_FUNC, FR_BRACE, FR_PAREN };

typedef struct frame {
    int type, mode, line;
    int taken;   /* FR_IF: a branch ran: 1 surely, 0 not, -1 maybe */
    int cond;    /* FR_IF: reading a condition (1), or skipping one (2) */
    int header;  /* FR_LOOP before `do`; FR_CASE reading a pattern */
    int brace;   /* FR_FUNC: its body's { seen */
} frame;

typedef struct sh_state {
    launch_sh *sh;
    const char *file;
    sh_var *vars;
    int nv, capv;
    frame fr[SH_MAX_DEPTH];
    int nfr;
    int chain_op;     /* the && or || before this command, 0 otherwise */
    int chain_status; /* 1 true, 0 false, -1 unknown */
    int stop;         /* `exit` ran */
    int sourced;      /* a `source`, `.` or `eval` was run */
    tp_err *e;
    int rc;
} sh_state;

static int mode_of(const sh_state *st, int upto)
{
    int m = M_RUN;
    for (int i = 0; i < upto; i++) {
        if (st->fr[i].mode == M_SKIP) return M_SKIP;
        if (st->fr[i].mode == M_UNK) m = M_UNK;
    }
    return m;
}

static int unk_line(const sh_state *st)
{
    for (int i = st->nfr - 1; i >= 0; i--)
        if (st->fr[i].mode == M_UNK) return st->fr[i].line;
    return 0;
}

static sh_var *var_find(sh_state *st, const char *name, size_t n)
{
    for (int i = 0; i < st->nv; i++)
        if (strlen(st->vars[i].name) == n
            && strncmp(st->vars[i].name, name, n) == 0)
            return &st->vars[i];
    return NULL;
}

static sh_var *var_get(sh_state *st, const char *name, size_t n)
{
    sh_var *v = var_find(st, name, n);
    if (v) return v;
    if (st->nv == st->capv) {
        st->capv = st->capv ? 2 * st->capv : 32;
        st->vars = tp_xrealloc(st->vars, (size_t)st->capv * sizeof *st->vars);
    }
    v = &st->vars[st->nv++];
    memset(v, 0, sizeof *v);
    if (n >= sizeof v->name) n = sizeof v->name - 1;
    memcpy(v->name, name, n);
    return v;
}

static int is_name_start(int c) { return isalpha(c) || c == '_'; }
static int is_name_char(int c) { return isalnum(c) || c == '_'; }

/* ---- expansion -------------------------------------------------------- */

/* The fields an expansion builds: cur is the one being written. */
typedef struct fields {
    wvec out;
    sbuf cur;
    unsigned flags;
    const char *why;
    int has; /* cur is a field (text, quotes or an unknown part) */
    int line;
    int nosplit; /* an assignment's value: no field splitting */
    int lists;   /* "${A[@]}" expansions so far (an empty one is no word) */
    int at;      /* where the first unknown part is in cur */
} fields;

static void f_end(sh_state *st, fields *f)
{
    if (f->has) {
        launch_sh_word w = {pool_strndup(st->sh, f->cur.p ? f->cur.p : "",
                                      f->cur.n),
                         f->why, f->line, f->flags, f->at};
        wvec_push(&f->out, w);
    }
    f->cur.n = 0;
    if (f->cur.p) f->cur.p[0] = '\0';
    f->flags = 0;
    f->why = NULL;
    f->has = 0;
    f->at = 0;
}

static void f_lit(fields *f, const char *s, size_t n)
{
    sb_putn(&f->cur, s, n);
    f->has = 1;
}

static void f_unknown(fields *f, const char *why, int split)
{
    if (!(f->flags & LAUNCH_SH_UNKNOWN)) f->why = why, f->at = (int)f->cur.n;
    if (f->cur.n == 0 && !(f->flags & LAUNCH_SH_UNKNOWN))
        f->flags |= LAUNCH_SH_HEAD;
    f->flags |= LAUNCH_SH_UNKNOWN;
    if (split && !f->nosplit) f->flags |= LAUNCH_SH_SPLIT;
    f->has = 1;
}

/* Known text into the fields: quoted, it joins the field; unquoted, it
 * is split at blanks. */
static void f_text(sh_state *st, fields *f, const char *s, size_t n,
                   int quoted)
{
    if (quoted || f->nosplit) {
        f_lit(f, s, n);
        return;
    }
    const char *e = s + n;
    while (s < e) {
        if (*s == ' ' || *s == '\t' || *s == '\n') {
            f_end(st, f);
            while (s < e && (*s == ' ' || *s == '\t' || *s == '\n')) s++;
            continue;
        }
        const char *b = s;
        while (s < e && *s != ' ' && *s != '\t' && *s != '\n') s++;
        f_lit(f, b, (size_t)(s - b));
    }
}

/* One value's element into the fields; an unknown part where it was. */
static void f_element(sh_state *st, fields *f, const launch_sh_word *x,
                      int quoted)
{
    size_t len = strlen(x->s);
    if (!(x->flags & LAUNCH_SH_UNKNOWN)) {
        f_text(st, f, x->s, len, quoted);
        return;
    }
    size_t at = x->at < 0 ? 0 : (size_t)x->at > len ? len : (size_t)x->at;
    f_text(st, f, x->s, at, quoted);
    f_unknown(f, x->why, !quoted);
    const char *rest = x->s + at;
    size_t rn = len - at;
    if (!quoted && !f->nosplit) {
        /* the rest's first piece joins the unknown part */
        size_t k = 0;
        while (k < rn && rest[k] != ' ' && rest[k] != '\t' && rest[k] != '\n')
            k++;
        sb_putn(&f->cur, rest, k);
        f_text(st, f, rest + k, rn - k, 0);
    } else {
        sb_putn(&f->cur, rest, rn);
    }
}

static void expand_part(sh_state *st, fields *f, const char *p,
                        const char *end, int line, int dq);

/* The end of a ${...}, $(...) or `...` starting at p (on its opening
 * character), or NULL when it does not end. Quotes inside are skipped. */
static const char *match_close(const char *p, const char *end, char open,
                               char close)
{
    int depth = 0;
    char q = 0;
    for (; p < end; p++) {
        char c = *p;
        if (q) {
            if (c == '\\' && q == '"' && p + 1 < end) p++;
            else if (c == q) q = 0;
            continue;
        }
        if (c == '\\' && p + 1 < end) {
            p++;
        } else if ((c == '"' || c == '\'') && open != '`') {
            q = c;
        } else if (c == open && open != close) {
            depth++;
        } else if (c == close) {
            if (open == close) {
                if (depth++ == 1) return p;
            } else if (--depth == 0) {
                return p;
            }
        }
    }
    return NULL;
}

/* The value of variable v (all elements, or element idx >= 0) into f. */
static void put_var(sh_state *st, fields *f, sh_var *v, const char *name,
                    size_t nlen, int all, int star, long long idx, int dq,
                    int line)
{
    if (!v || !v->set) {
        const char *why =
            isdigit((unsigned char)name[0])
                ? pool_printf(st->sh, "$%.*s (%s:%d): the script's "
                              "arguments are not in the file",
                              (int)nlen, name, st->file, line)
                : pool_printf(st->sh, "$%.*s (%s:%d) is not set in the "
                              "file (trainplan reads the file alone, not "
                              "the environment%s)",
                              (int)nlen, name, st->file, line,
                              st->sourced ? " or a sourced file" : "");
        f_unknown(f, why, !dq);
        return;
    }
    if (idx >= 0) {
        if (idx < v->el.n) f_element(st, f, &v->el.w[idx], dq);
        else f_lit(f, "", 0);
        return;
    }
    if (!all) {
        if (v->el.n > 0) f_element(st, f, &v->el.w[0], dq);
        else if (dq) f_lit(f, "", 0);
        return;
    }
    if (dq && !star) f->lists++;
    for (int i = 0; i < v->el.n; i++) {
        if (i > 0) {
            if (dq && star) f_lit(f, " ", 1);
            else if (dq || f->nosplit) {
                if (f->nosplit) f_lit(f, " ", 1);
                else f_end(st, f);
            } else {
                f_end(st, f);
            }
        }
        f_element(st, f, &v->el.w[i], dq);
    }
}

/* Sets v to the words of w (a string when !array). */
static void var_assign(sh_state *st, sh_var *v, const wvec *w, int array,
                       int append, int line);

/* ${...} with body [b, e). */
static void expand_brace(sh_state *st, fields *f, const char *b,
                         const char *e, int line, int dq)
{
    const char *p = b;
    int length = 0;
    if (*p == '#' && p + 1 < e) length = 1, p++;
    const char *name = p;
    if (p < e && (isdigit((unsigned char)*p) || strchr("@*#?$!-", *p))
        && !is_name_start((unsigned char)*p)) {
        p++;
        while (p < e && isdigit((unsigned char)*p) && isdigit((unsigned char)name[0]))
            p++;
    } else {
        while (p < e && is_name_char((unsigned char)*p)) p++;
    }
    size_t nlen = (size_t)(p - name);
    int all = 0, star = 0;
    long long idx = -1;
    if (p < e && *p == '[') {
        const char *rb = memchr(p, ']', (size_t)(e - p));
        if (!rb) goto unknown;
        if (rb - p == 2 && (p[1] == '@' || p[1] == '*')) {
            all = 1, star = p[1] == '*';
        } else {
            char ib[24];
            size_t il = (size_t)(rb - p - 1);
            if (il == 0 || il >= sizeof ib) goto unknown;
            memcpy(ib, p + 1, il);
            ib[il] = '\0';
            if (tp_parse_int(ib, 0, 1000000, &idx)) goto unknown;
        }
        p = rb + 1;
    }
    if (nlen == 0) goto unknown;
    if (!is_name_start((unsigned char)name[0]) && !isdigit((unsigned char)name[0])) {
        /* $@ $* $# $? $$ $! $-: the script's arguments and state */
        f_unknown(f, pool_printf(st->sh, "${%.*s} (%s:%d): a special "
                                 "parameter, not known from the file",
                                 (int)(e - b), b, st->file, line), !dq);
        return;
    }
    sh_var *v = var_find(st, name, nlen);
    int unknown_val = v && v->set && v->el.n > 0
                      && (v->el.w[0].flags & LAUNCH_SH_UNKNOWN);
    if (length) {
        if (p != e) goto unknown;
        if (unknown_val) {
            f_unknown(f, v->el.w[0].why, 0);
            return;
        }
        char nb[32];
        long long n = !v || !v->set ? 0
                      : all         ? v->el.n
                      : v->el.n     ? (long long)strlen(v->el.w[0].s)
                                    : 0;
        snprintf(nb, sizeof nb, "%lld", n);
        f_lit(f, nb, strlen(nb));
        return;
    }
    if (p == e) {
        put_var(st, f, v, name, nlen, all, star, idx, dq, line);
        return;
    }
    int colon = *p == ':';
    if (colon) p++;
    if (p >= e || !strchr("-=+?", *p)) goto unknown;
    char op = *p++;
    int set = v && v->set;
    int empty = set && !unknown_val
                && (v->el.n == 0
                    || (!all && v->el.w[0].s[0] == '\0')
                    || (all && v->el.n == 1 && v->el.w[0].s[0] == '\0'));
    int use_word;
    if (!set) use_word = 1;
    else if (unknown_val && colon) {
        /* an unknown value might be empty */
        f_unknown(f, v->el.w[0].why, !dq);
        return;
    } else use_word = colon && empty;
    if (op == '+') use_word = !use_word;
    if (op == '?' && use_word) {
        f_unknown(f, pool_printf(st->sh, "$%.*s (%s:%d) is required from "
                                 "the environment (${%.*s%s?...}), which "
                                 "trainplan does not read",
                                 (int)nlen, name, st->file, line, (int)nlen,
                                 name, colon ? ":" : ""), !dq);
        return;
    }
    if (!use_word) {
        if (op == '+') return; /* ${X:+w} when X is empty or unset: "" */
        put_var(st, f, v, name, nlen, all, star, idx, dq, line);
        return;
    }
    if (op == '=') {
        fields g;
        memset(&g, 0, sizeof g);
        g.nosplit = 1;
        g.line = line;
        expand_part(st, &g, p, e, line, 1);
        g.has = 1;
        f_end(st, &g);
        if (!isdigit((unsigned char)name[0]))
            var_assign(st, var_get(st, name, nlen), &g.out, 0, 0, line);
        free(g.out.w);
        free(g.cur.p);
        put_var(st, f, var_find(st, name, nlen), name, nlen, 0, 0, -1, dq,
                line);
        return;
    }
    expand_part(st, f, p, e, line, dq);
    return;
unknown:
    f_unknown(f, pool_printf(st->sh, "${%.*s} (%s:%d): an expansion "
                             "trainplan does not evaluate",
                             (int)(e - b) > 60 ? 60 : (int)(e - b), b,
                             st->file, line), !dq);
}

/* Expands [p, end): quotes, backslashes and $ forms into f. dq: inside
 * double quotes. */
static void expand_part(sh_state *st, fields *f, const char *p,
                        const char *end, int line, int dq)
{
    while (p < end) {
        char c = *p;
        if (c == '\\' && p + 1 < end) {
            char n = p[1];
            if (n == '\n') {
                p += 2;
                continue;
            }
            if (dq && !strchr("$`\"\\", n)) {
                f_lit(f, p, 1);
                p++;
                continue;
            }
            f_lit(f, p + 1, 1);
            p += 2;
            continue;
        }
        if (c == '\'' && !dq) {
            const char *q = memchr(p + 1, '\'', (size_t)(end - p - 1));
            if (!q) q = end;
            f_lit(f, p + 1, (size_t)(q - p - 1));
            p = q < end ? q + 1 : end;
            continue;
        }
        if (c == '"') {
            /* the closing quote, past nested $( ) and ${ } */
            const char *q = p + 1;
            while (q < end && *q != '"') {
                if (*q == '\\' && q + 1 < end) q += 2;
                else if (*q == '$' && q + 1 < end && (q[1] == '(' || q[1] == '{')) {
                    const char *m = match_close(q + 1, end, q[1],
                                                q[1] == '(' ? ')' : '}');
                    q = m ? m + 1 : end;
                } else if (*q == '`') {
                    const char *m = match_close(q, end, '`', '`');
                    q = m ? m + 1 : end;
                } else q++;
            }
            int lists = f->lists;
            expand_part(st, f, p + 1, q, line, 1);
            if (f->lists == lists) f_lit(f, "", 0);
            p = q < end ? q + 1 : end;
            continue;
        }
        if (c == '`') {
            const char *q = match_close(p, end, '`', '`');
            f_unknown(f, pool_printf(st->sh, "`...` (%s:%d): a command "
                                     "substitution, not run", st->file,
                                     line), !dq);
            p = q ? q + 1 : end;
            continue;
        }
        if (c != '$' || p + 1 >= end) {
            f_lit(f, p, 1);
            p++;
            continue;
        }
        char n = p[1];
        if (n == '\'' && !dq) { /* $'...': ANSI-C quoting */
            const char *q = p + 2;
            sbuf b = {0};
            while (q < end && *q != '\'') {
                if (*q == '\\' && q + 1 < end) {
                    char x = q[1];
                    sb_putc(&b, x == 'n' ? '\n' : x == 't' ? '\t' : x);
                    q += 2;
                } else sb_putc(&b, *q++);
            }
            f_lit(f, b.p ? b.p : "", b.n);
            free(b.p);
            p = q < end ? q + 1 : end;
            continue;
        }
        if (n == '(') {
            const char *q = match_close(p + 1, end, '(', ')');
            int arith = p + 2 < end && p[2] == '(';
            f_unknown(f, pool_printf(st->sh, arith
                                     ? "$((...)) (%s:%d): arithmetic is not "
                                       "evaluated"
                                     : "$(...) (%s:%d): a command "
                                       "substitution, not run",
                                     st->file, line), !dq);
            p = q ? q + 1 : end;
            continue;
        }
        if (n == '{') {
            const char *q = match_close(p + 1, end, '{', '}');
            if (!q) q = end;
            expand_brace(st, f, p + 2, q, line, dq);
            p = q < end ? q + 1 : end;
            continue;
        }
        if (is_name_start((unsigned char)n)) {
            const char *b = p + 1, *q = b;
            while (q < end && is_name_char((unsigned char)*q)) q++;
            put_var(st, f, var_find(st, b, (size_t)(q - b)), b,
                    (size_t)(q - b), 0, 0, -1, dq, line);
            p = q;
            continue;
        }
        if (isdigit((unsigned char)n)) {
            put_var(st, f, var_find(st, p + 1, 1), p + 1, 1, 0, 0, -1, dq,
                    line);
            p += 2;
            continue;
        }
        if (strchr("@*#?$!-", n)) {
            f_unknown(f, pool_printf(st->sh, "$%c (%s:%d): %s", n, st->file,
                                     line, n == '@' || n == '*' || n == '#'
                                     ? "the script's arguments are not in "
                                       "the file"
                                     : "a special parameter, not known "
                                       "from the file"), !dq);
            p += 2;
            continue;
        }
        f_lit(f, p, 1);
        p++;
    }
}

/* The fields of raw word [p, end). */
static void expand_word(sh_state *st, const char *p, const char *end,
                        int line, int nosplit, wvec *out)
{
    fields f;
    memset(&f, 0, sizeof f);
    f.line = line;
    f.nosplit = nosplit;
    expand_part(st, &f, p, end, line, 0);
    if (nosplit) f.has = 1;
    f_end(st, &f);
    free(f.cur.p);
    for (int i = 0; i < f.out.n; i++) wvec_push(out, f.out.w[i]);
    free(f.out.w);
}

/* ---- variables -------------------------------------------------------- */

static int same_words(const wvec *a, const wvec *b)
{
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++)
        if (((a->w[i].flags | b->w[i].flags) & LAUNCH_SH_UNKNOWN)
            || strcmp(a->w[i].s, b->w[i].s) != 0)
            return 0;
    return 1;
}

static void var_assign(sh_state *st, sh_var *v, const wvec *w, int array,
                       int append, int line)
{
    wvec nv = {0};
    if (append && v->set) {
        if (array || v->array) {
            for (int i = 0; i < v->el.n; i++) wvec_push(&nv, v->el.w[i]);
            if (!array && nv.n > 0 && w->n > 0) {
                /* A+=str appends to A[0] */
                launch_sh_word x = nv.w[0];
                size_t a = strlen(x.s), b = strlen(w->w[0].s);
                char *s = pool_add(st->sh, tp_xmalloc(a + b + 1));
                memcpy(s, x.s, a);
                memcpy(s + a, w->w[0].s, b + 1);
                x.s = s;
                if (!(x.flags & LAUNCH_SH_UNKNOWN)
                    && (w->w[0].flags & LAUNCH_SH_UNKNOWN))
                    x.at = (int)a + w->w[0].at, x.why = w->w[0].why;
                x.flags |= w->w[0].flags & ~(unsigned)LAUNCH_SH_HEAD;
                nv.w[0] = x;
            } else {
                for (int i = 0; i < w->n; i++) wvec_push(&nv, w->w[i]);
            }
        } else {
            launch_sh_word x = v->el.n ? v->el.w[0]
                                    : (launch_sh_word){"", NULL, line, 0, 0};
            const char *add = w->n ? w->w[0].s : "";
            size_t a = strlen(x.s), b = strlen(add);
            char *s = pool_add(st->sh, tp_xmalloc(a + b + 1));
            memcpy(s, x.s, a);
            memcpy(s + a, add, b + 1);
            x.s = s;
            if (w->n) {
                if (!(x.flags & LAUNCH_SH_UNKNOWN)
                    && (w->w[0].flags & LAUNCH_SH_UNKNOWN))
                    x.at = (int)a + w->w[0].at, x.why = w->w[0].why;
                x.flags |= w->w[0].flags & ~(unsigned)LAUNCH_SH_HEAD;
                if (a == 0 && (w->w[0].flags & LAUNCH_SH_HEAD))
                    x.flags |= LAUNCH_SH_HEAD;
            }
            wvec_push(&nv, x);
        }
    } else {
        for (int i = 0; i < w->n; i++) wvec_push(&nv, w->w[i]);
    }
    int mode = mode_of(st, st->nfr);
    if (mode == M_UNK) {
        /* it may or may not run: known only when it changes nothing */
        if (!(v->set && v->array == (array || (append && v->array))
              && same_words(&v->el, &nv))) {
            free(nv.w);
            nv = (wvec){0};
            launch_sh_word x = {"",
                             pool_printf(st->sh, "$%s is set at %s:%d "
                                         "under the condition, loop or "
                                         "function at line %d, which "
                                         "trainplan does not evaluate",
                                         v->name, st->file, line,
                                         unk_line(st)),
                             line, LAUNCH_SH_UNKNOWN | LAUNCH_SH_HEAD, 0};
            wvec_push(&nv, x);
        }
    }
    free(v->el.w);
    v->el = nv;
    v->set = 1;
    v->array = array || (append && v->array);
}

/* [p, end) is NAME=, NAME+= (or NAME[...]= ...): the name's length and
 * where its value starts, or 0. */
static size_t assignment_name(const char *p, const char *end, int *append,
                              const char **value, int *indexed)
{
    if (p >= end || !is_name_start((unsigned char)*p)) return 0;
    const char *q = p;
    while (q < end && is_name_char((unsigned char)*q)) q++;
    size_t n = (size_t)(q - p);
    *indexed = 0;
    if (q < end && *q == '[') {
        const char *rb = memchr(q, ']', (size_t)(end - q));
        if (!rb) return 0;
        *indexed = 1;
        q = rb + 1;
    }
    *append = 0;
    if (q < end && *q == '+') *append = 1, q++;
    if (q >= end || *q != '=') return 0;
    *value = q + 1;
    return n;
}

/* ---- the lexer -------------------------------------------------------- */

enum { T_END, T_WORD, T_OP, T_ARRAY };

typedef struct token {
    int type;
    const char *p, *end; /* T_WORD: the raw word; T_OP: the operator */
    int line;
    /* T_ARRAY: NAME=( ... ): the raw words of its elements */
    struct token *el;
    int nel;
} token;

typedef struct lexer {
    const char *p, *end;
    int line;
    const char *heredoc[8]; /* delimiters pending at the next newline */
    size_t heredoc_n[8];
    int heredoc_strip[8];
    int nheredoc;
} lexer;

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static int is_meta(char c)
{
    return c == ';' || c == '&' || c == '|' || c == '(' || c == ')'
           || c == '<' || c == '>' || c == '\n' || is_blank(c);
}

/* Skips here-document bodies after a newline. */
static void skip_heredocs(lexer *lx)
{
    for (int h = 0; h < lx->nheredoc; h++) {
        while (lx->p < lx->end) {
            const char *eol = memchr(lx->p, '\n', (size_t)(lx->end - lx->p));
            if (!eol) eol = lx->end;
            const char *s = lx->p;
            if (lx->heredoc_strip[h])
                while (s < eol && *s == '\t') s++;
            size_t len = (size_t)(eol - s);
            if (len && s[len - 1] == '\r') len--;
            int done = len == lx->heredoc_n[h]
                       && memcmp(s, lx->heredoc[h], len) == 0;
            lx->p = eol < lx->end ? eol + 1 : eol;
            lx->line++;
            if (done) break;
        }
    }
    lx->nheredoc = 0;
}

/* At p, "$(" or "${": the character after its close, the lines it spans
 * counted; NULL with its kind in *what when it does not close. */
static const char *skip_subst(lexer *lx, const char *p, const char *end,
                              const char **what)
{
    const char *m = match_close(p + 1, end, p[1], p[1] == '(' ? ')' : '}');
    if (!m) {
        *what = p[1] == '(' ? "$(" : "${";
        return NULL;
    }
    for (const char *x = p; x < m; x++)
        if (*x == '\n') lx->line++;
    return m + 1;
}

/* The end of the word at lx->p, or NULL for a quote or substitution that
 * does not end (its line in *bad_line, its kind in *what). */
static const char *scan_word(lexer *lx, int *bad_line, const char **what)
{
    const char *p = lx->p, *end = lx->end;
    while (p < end) {
        char c = *p;
        if (c == '\\') {
            if (p + 1 < end && p[1] == '\n') lx->line++;
            p += p + 1 < end ? 2 : 1;
            continue;
        }
        if (c == '\'' || c == '"') {
            const char *q = p + 1;
            *bad_line = lx->line;
            while (q < end && *q != c) {
                if (c == '"' && *q == '\\' && q + 1 < end) {
                    if (q[1] == '\n') lx->line++;
                    q += 2;
                    continue;
                }
                if (c == '"' && *q == '$' && q + 1 < end
                    && (q[1] == '(' || q[1] == '{')) {
                    if (!(q = skip_subst(lx, q, end, what))) return NULL;
                    continue;
                }
                if (*q == '\n') lx->line++;
                q++;
            }
            if (q >= end) {
                *what = c == '"' ? "double quote" : "single quote";
                return NULL;
            }
            p = q + 1;
            continue;
        }
        if (c == '$' && p + 1 < end && (p[1] == '(' || p[1] == '{')) {
            *bad_line = lx->line;
            if (!(p = skip_subst(lx, p, end, what))) return NULL;
            continue;
        }
        if (c == '`') {
            const char *m = match_close(p, end, '`', '`');
            if (!m) {
                *bad_line = lx->line;
                *what = "backquote";
                return NULL;
            }
            for (const char *x = p; x < m; x++)
                if (*x == '\n') lx->line++;
            p = m + 1;
            continue;
        }
        if (is_meta(c)) break;
        p++;
    }
    return p;
}

static int lex_error(sh_state *st, int line, const char *what)
{
    st->rc = tp_errf(st->e, TP_EDATA, "%s:%d: a %s that does not end",
                     st->file, line, what);
    return T_END;
}

static void tokens_free(token *t, int n);

/* The next token. Comments, blanks, backslash-newlines and redirections
 * (with their targets) are skipped. */
static int lex(sh_state *st, lexer *lx, token *t)
{
    memset(t, 0, sizeof *t);
    for (;;) {
        while (lx->p < lx->end && is_blank(*lx->p)) lx->p++;
        if (lx->p >= lx->end) return t->type = T_END;
        char c = *lx->p;
        if (c == '\\' && lx->p + 1 < lx->end && lx->p[1] == '\n') {
            lx->p += 2, lx->line++;
            continue;
        }
        if (c == '#') {
            while (lx->p < lx->end && *lx->p != '\n') lx->p++;
            continue;
        }
        t->line = lx->line;
        if (c == '\n') {
            t->type = T_OP, t->p = lx->p, t->end = lx->p + 1;
            lx->p++, lx->line++;
            skip_heredocs(lx);
            return T_OP;
        }
        if (c == '<' || c == '>'
            || (c == '&' && lx->p + 1 < lx->end && lx->p[1] == '>')) {
            /* a redirection: the operator and its target */
            const char *q = lx->p;
            int heredoc = 0, strip = 0;
            if (c == '&') q += 2;
            else q++;
            if (q < lx->end && (*q == '>' || *q == '&' || *q == '|'))
                q++;
            else if (c == '<' && q < lx->end && *q == '<') {
                q++, heredoc = 1;
                if (q < lx->end && *q == '-') q++, strip = 1;
                else if (q < lx->end && *q == '<') q++, heredoc = 0;
            } else if (c == '<' && q < lx->end && *q == '(') {
                /* <(...): process substitution, a word of its own */
                const char *m = match_close(q, lx->end, '(', ')');
                if (!m) return lex_error(st, lx->line, "<(");
                lx->p = m + 1;
                t->type = T_WORD, t->p = "\"\"", t->end = t->p + 2;
                return T_WORD;
            }
            lx->p = q;
            while (lx->p < lx->end && is_blank(*lx->p)) lx->p++;
            int bl = 0;
            const char *what = NULL;
            const char *ws = lx->p, *we = scan_word(lx, &bl, &what);
            if (!we) return lex_error(st, bl, what);
            lx->p = we;
            if (heredoc && lx->nheredoc < 8 && we > ws) {
                /* the delimiter, quotes removed */
                char *d = tp_xmalloc((size_t)(we - ws) + 1);
                size_t n = 0;
                for (const char *x = ws; x < we; x++)
                    if (*x != '\'' && *x != '"' && *x != '\\') d[n++] = *x;
                d[n] = '\0';
                lx->heredoc[lx->nheredoc] = pool_add(st->sh, d);
                lx->heredoc_n[lx->nheredoc] = n;
                lx->heredoc_strip[lx->nheredoc++] = strip;
            }
            continue;
        }
        if (strchr(";&|()", c)) {
            const char *q = lx->p + 1;
            if (q < lx->end && ((c == ';' && (*q == ';' || *q == '&'))
                                || (c == '&' && *q == '&')
                                || (c == '|' && (*q == '|' || *q == '&'))))
                q++;
            if (c == ';' && q - lx->p == 2 && q < lx->end && *q == '&') q++;
            t->type = T_OP, t->p = lx->p, t->end = q;
            lx->p = q;
            return T_OP;
        }
        int bl = 0;
        const char *what = NULL;
        const char *ws = lx->p, *we = scan_word(lx, &bl, &what);
        if (!we) return lex_error(st, bl, what);
        /* fd digits before a redirection: 2>&1 */
        if (we < lx->end && (*we == '<' || *we == '>')) {
            const char *x = ws;
            while (x < we && isdigit((unsigned char)*x)) x++;
            if (x == we) {
                lx->p = we;
                continue;
            }
        }
        lx->p = we;
        t->type = T_WORD, t->p = ws, t->end = we;
        int ap, ix;
        const char *val;
        if (we < lx->end && *we == '(' && assignment_name(ws, we, &ap, &val, &ix)
            && val == we) {
            /* NAME=( words ): the elements, over lines and comments */
            lx->p = we + 1;
            token *el = NULL;
            int n = 0, cap = 0;
            for (;;) {
                while (lx->p < lx->end
                       && (is_blank(*lx->p) || *lx->p == '\n')) {
                    if (*lx->p == '\n') lx->line++;
                    lx->p++;
                }
                if (lx->p < lx->end && *lx->p == '\\' && lx->p + 1 < lx->end
                    && lx->p[1] == '\n') {
                    lx->p += 2, lx->line++;
                    continue;
                }
                if (lx->p < lx->end && *lx->p == '#') {
                    while (lx->p < lx->end && *lx->p != '\n') lx->p++;
                    continue;
                }
                if (lx->p >= lx->end) {
                    tokens_free(el, n);
                    return lex_error(st, t->line, "array ( )");
                }
                if (*lx->p == ')') {
                    lx->p++;
                    break;
                }
                int bl2 = 0;
                const char *w2 = NULL;
                const char *es = lx->p, *ee = scan_word(lx, &bl2, &w2);
                if (!ee) {
                    tokens_free(el, n);
                    return lex_error(st, bl2, w2);
                }
                if (ee == es) { /* a stray operator inside ( ) */
                    lx->p++;
                    continue;
                }
                if (n == cap) {
                    cap = cap ? 2 * cap : 16;
                    el = tp_xrealloc(el, (size_t)cap * sizeof *el);
                }
                memset(&el[n], 0, sizeof el[n]);
                el[n].type = T_WORD, el[n].p = es, el[n].end = ee;
                el[n].line = lx->line;
                n++;
                lx->p = ee;
            }
            t->type = T_ARRAY, t->el = el, t->nel = n;
        }
        return t->type;
    }
}

static void tokens_free(token *t, int n)
{
    for (int i = 0; i < n; i++) free(t[i].el);
    free(t);
}

/* ---- commands --------------------------------------------------------- */

static int raw_is(const token *t, const char *kw)
{
    size_t n = strlen(kw);
    return t->type == T_WORD && (size_t)(t->end - t->p) == n
           && memcmp(t->p, kw, n) == 0;
}

static int op_is(const token *t, const char *op)
{
    size_t n = strlen(op);
    return t->type == T_OP && (size_t)(t->end - t->p) == n
           && memcmp(t->p, op, n) == 0;
}

static void emit(sh_state *st, const wvec *w, int line)
{
    launch_sh *sh = st->sh;
    if (w->n == 0) return;
    if (sh->nw + w->n > SH_MAX_WORDS) {
        if (!st->rc)
            st->rc = tp_errf(st->e, TP_EDATA, "%s: more than %d words: not "
                             "a launch script", st->file, SH_MAX_WORDS);
        return;
    }
    if (sh->nc == sh->capc) {
        sh->capc = sh->capc ? 2 * sh->capc : 64;
        sh->c = tp_xrealloc(sh->c, (size_t)sh->capc * sizeof *sh->c);
    }
    sh->c[sh->nc++] = (launch_sh_cmd){sh->nw, w->n, line, unk_line(st)};
    for (int i = 0; i < w->n; i++) {
        if (sh->nw == sh->capw) {
            sh->capw = sh->capw ? 2 * sh->capw : 256;
            sh->w = tp_xrealloc(sh->w, (size_t)sh->capw * sizeof *sh->w);
        }
        sh->w[sh->nw++] = w->w[i];
    }
}

/* [ ], [[ ]] and test of known strings and integers: 1, 0, or -1 when
 * it cannot be told. */
static int eval_test(const launch_sh_word *a, int n)
{
    int neg = 0;
    while (n > 0 && strcmp(a[0].s, "!") == 0 && !(a[0].flags & LAUNCH_SH_UNKNOWN))
        neg = !neg, a++, n--;
    for (int i = 0; i < n; i++)
        if (a[i].flags & LAUNCH_SH_UNKNOWN) return -1;
    int r = -1;
    if (n == 0) r = 0;
    else if (n == 1) r = a[0].s[0] != '\0';
    else if (n == 2 && strcmp(a[0].s, "-n") == 0) r = a[1].s[0] != '\0';
    else if (n == 2 && strcmp(a[0].s, "-z") == 0) r = a[1].s[0] == '\0';
    else if (n == 3) {
        const char *op = a[1].s;
        if (strcmp(op, "=") == 0 || strcmp(op, "==") == 0
            || strcmp(op, "!=") == 0) {
            if (strpbrk(a[2].s, "*?[")) return -1; /* a pattern */
            r = strcmp(a[0].s, a[2].s) == 0;
            if (op[0] == '!') r = !r;
        } else {
            static const char *const ops[] = {"-eq", "-ne", "-lt",
                                              "-le", "-gt", "-ge"};
            long long x, y;
            for (int k = 0; k < 6; k++)
                if (strcmp(op, ops[k]) == 0) {
                    if (tp_parse_int(a[0].s, -(1LL << 62), 1LL << 62, &x)
                        || tp_parse_int(a[2].s, -(1LL << 62), 1LL << 62, &y))
                        return -1;
                    r = k == 0 ? x == y : k == 1 ? x != y : k == 2 ? x < y
                        : k == 3 ? x <= y : k == 4 ? x > y : x >= y;
                }
        }
    }
    if (r < 0) return -1;
    return neg ? !r : r;
}

static int and_or(int a, int op_and, int b);

/* A command's exit status as far as it can be told: tests evaluated,
 * the builtins that set or print true, anything else unknown. */
static int status_of(const wvec *w, int first)
{
    if (first >= w->n) return 1; /* assignments only */
    const launch_sh_word *a = w->w + first;
    int n = w->n - first;
    if (a[0].flags & LAUNCH_SH_UNKNOWN) return -1;
    const char *c = a[0].s;
    if (strcmp(c, "[") == 0 || strcmp(c, "[[") == 0) {
        const char *close = c[1] ? "]]" : "]";
        if (n < 2 || strcmp(a[n - 1].s, close) != 0) return -1;
        if (!c[1]) return eval_test(a + 1, n - 2);
        /* [[ A && B || C ]]: the tests between its && and ||, && binding
         * tighter (bash(1), [[ expression ]]); a parenthesised group is
         * not evaluated */
        int r = 0, g = 1, from = 1;
        for (int i = 1; i <= n - 1; i++) {
            int end = i == n - 1;
            int is_and = !end && !(a[i].flags & LAUNCH_SH_UNKNOWN)
                         && strcmp(a[i].s, "&&") == 0;
            int is_or = !end && !(a[i].flags & LAUNCH_SH_UNKNOWN)
                        && strcmp(a[i].s, "||") == 0;
            if (!end && !is_and && !is_or) continue;
            g = and_or(g, 1, eval_test(a + from, i - from));
            if (!is_and) r = and_or(r, 0, g), g = 1;
            from = i + 1;
        }
        return r;
    }
    if (strcmp(c, "test") == 0) return eval_test(a + 1, n - 1);
    if (strcmp(c, "false") == 0) return 0;
    static const char *const ok[] = {"true", ":", "export", "declare",
                                     "local", "readonly", "typeset", "unset",
                                     "echo", "printf", "set", "shift",
                                     "mkdir", "cd"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(c, ok[i]) == 0) return 1;
    return -1;
}

static int and_or(int a, int op_and, int b)
{
    if (op_and) return a == 0 ? 0 : a == 1 ? b : (b == 0 ? 0 : -1);
    return a == 1 ? 1 : a == 0 ? b : (b == 1 ? 1 : -1);
}

static void push(sh_state *st, int type, int mode, int line)
{
    if (st->nfr >= SH_MAX_DEPTH) {
        if (!st->rc)
            st->rc = tp_errf(st->e, TP_EDATA, "%s:%d: blocks nested more "
                             "than %d deep", st->file, line, SH_MAX_DEPTH);
        return;
    }
    frame *f = &st->fr[st->nfr++];
    memset(f, 0, sizeof *f);
    f->type = type, f->mode = mode, f->line = line;
}

static void pop(sh_state *st, int type)
{
    if (st->nfr > 0 && st->fr[st->nfr - 1].type == type) st->nfr--;
}

/* Marks NAME unknown (a loop variable, `read NAME`). */
static void set_unknown(sh_state *st, const char *name, size_t n, int line,
                        const char *what)
{
    if (!n) return;
    sh_var *v = var_get(st, name, n);
    free(v->el.w);
    v->el = (wvec){0};
    launch_sh_word x = {"", pool_printf(st->sh, "$%s (%s:%d): %s", v->name,
                                     st->file, line, what),
                     line, LAUNCH_SH_UNKNOWN | LAUNCH_SH_HEAD, 0};
    wvec_push(&v->el, x);
    v->set = 1, v->array = 0;
}

/* Runs one simple command of tokens t[0..n): keywords, assignments, the
 * command's words. op: the operator that ends it. */
static void run_command(sh_state *st, token *t, int n)
{
    int neg = 0;
    /* reserved words at the command's start */
    while (n > 0 && t[0].type == T_WORD) {
        int line = t[0].line;
        int parent = mode_of(st, st->nfr);
        frame *top = st->nfr ? &st->fr[st->nfr - 1] : NULL;
        if (raw_is(&t[0], "if")) {
            push(st, FR_IF, M_RUN, line);
            st->fr[st->nfr - 1].cond = 1;
            st->chain_op = 0;
        } else if (raw_is(&t[0], "then") && top && top->type == FR_IF) {
            int c = top->cond == 2 ? 0 : st->chain_status;
            if (top->cond == 2) top->mode = M_SKIP;
            else if (top->taken == 0)
                top->mode = c == 1 ? M_RUN : c == 0 ? M_SKIP : M_UNK,
                top->taken = c;
            else /* an earlier branch may have run */
                top->mode = c == 0 ? M_SKIP : M_UNK,
                top->taken = c == 1 ? 1 : -1;
            top->line = line;
            top->cond = 0;
            st->chain_op = 0;
        } else if (raw_is(&t[0], "elif") && top && top->type == FR_IF) {
            top->cond = top->taken == 1 ? 2 : 1;
            top->mode = top->taken == 1 ? M_SKIP : M_RUN;
            st->chain_op = 0;
        } else if (raw_is(&t[0], "else") && top && top->type == FR_IF) {
            top->mode = top->taken == 1 ? M_SKIP
                        : top->taken == 0 ? M_RUN : M_UNK;
            top->line = line;
        } else if (raw_is(&t[0], "fi")) {
            pop(st, FR_IF);
        } else if (raw_is(&t[0], "for") || raw_is(&t[0], "while")
                   || raw_is(&t[0], "until") || raw_is(&t[0], "select")) {
            push(st, FR_LOOP, M_UNK, line);
            st->fr[st->nfr - 1].header = 1;
            if (n > 1 && t[1].type == T_WORD && parent != M_SKIP
                && (raw_is(&t[0], "for") || raw_is(&t[0], "select")))
                set_unknown(st, t[1].p, (size_t)(t[1].end - t[1].p), line,
                            "a loop variable");
            return; /* the header is not run */
        } else if (raw_is(&t[0], "do") && top && top->type == FR_LOOP) {
            top->header = 0;
        } else if (raw_is(&t[0], "done")) {
            pop(st, FR_LOOP);
        } else if (raw_is(&t[0], "case")) {
            push(st, FR_CASE, M_UNK, line);
            st->fr[st->nfr - 1].header = 1;
            /* case WORD in [pattern]: a pattern is not a command */
            return;
        } else if (raw_is(&t[0], "esac")) {
            pop(st, FR_CASE);
        } else if (raw_is(&t[0], "{")) {
            if (top && top->type == FR_FUNC && !top->brace) top->brace = 1;
            else push(st, FR_BRACE, M_RUN, line);
        } else if (raw_is(&t[0], "}")) {
            if (top && top->type == FR_FUNC) pop(st, FR_FUNC);
            else pop(st, FR_BRACE);
        } else if (raw_is(&t[0], "function")) {
            push(st, FR_FUNC, M_UNK, line);
            return;
        } else if (raw_is(&t[0], "!")) {
            neg = !neg;
        } else {
            break;
        }
        t++, n--;
    }
    if (n == 0) return;
    frame *top = st->nfr ? &st->fr[st->nfr - 1] : NULL;
    if (top && top->type == FR_LOOP && top->header) return;
    int mode = mode_of(st, st->nfr);
    int cond = top && top->type == FR_IF && top->cond == 1;
    if (cond) mode = mode_of(st, st->nfr - 1);
    if (top && top->type == FR_IF && top->cond == 2) mode = M_SKIP;
    /* the && / || gate */
    int gate = 1;
    if (st->chain_op == 1) gate = st->chain_status;
    else if (st->chain_op == 2)
        gate = st->chain_status == 1 ? 0 : st->chain_status == 0 ? 1 : -1;
    if (gate == 0) mode = M_SKIP;
    if (mode == M_SKIP || st->stop) return;
    int pushed_unk = 0;
    if (gate < 0 && mode == M_RUN && !cond) {
        push(st, FR_BRACE, M_UNK, t[0].line);
        pushed_unk = 1;
    }
    /* leading assignments */
    int k = 0;
    int ap, ix;
    const char *val;
    while (k < n && (t[k].type == T_ARRAY
                     || assignment_name(t[k].p, t[k].end, &ap, &val, &ix)))
        k++;
    wvec words = {0};
    int cmd_line = t[0].line;
    int is_decl = 0;
    /* the command word and its arguments */
    for (int i = k; i < n; i++) {
        if (t[i].type == T_ARRAY) {
            /* declare -a A=( ... ): an assignment of a builtin */
            continue;
        }
        expand_word(st, t[i].p, t[i].end, t[i].line, 0, &words);
    }
    if (words.n > 0 && !(words.w[0].flags & LAUNCH_SH_UNKNOWN)) {
        const char *c = words.w[0].s;
        is_decl = strcmp(c, "export") == 0 || strcmp(c, "declare") == 0
                  || strcmp(c, "local") == 0 || strcmp(c, "readonly") == 0
                  || strcmp(c, "typeset") == 0;
    }
    int temp = words.n > 0 && !is_decl; /* NAME=v cmd: for cmd only */
    wvec out = {0};
    /* the assignments: before the command, and a builtin's */
    for (int i = 0; i < n; i++) {
        int before = i < k;
        if (!before && !(is_decl && (t[i].type == T_ARRAY
                                     || assignment_name(t[i].p, t[i].end,
                                                        &ap, &val, &ix))))
            continue;
        size_t nl = assignment_name(t[i].p, t[i].end, &ap, &val, &ix);
        if (!nl) continue;
        wvec v = {0};
        int array = t[i].type == T_ARRAY;
        if (array)
            for (int j = 0; j < t[i].nel; j++)
                expand_word(st, t[i].el[j].p, t[i].el[j].end, t[i].el[j].line,
                            0, &v);
        else
            expand_word(st, val, t[i].end, t[i].line, 1, &v);
        /* the assignment as a word, NAME=value, for readers that look at
         * the environment (PYTORCH_CUDA_ALLOC_CONF) */
        sbuf b = {0};
        sb_putn(&b, t[i].p, nl);
        sb_putc(&b, '=');
        unsigned fl = LAUNCH_SH_ASSIGN;
        const char *why = NULL;
        for (int j = 0; j < v.n; j++) {
            if (j) sb_putc(&b, ' ');
            sb_putn(&b, v.w[j].s, strlen(v.w[j].s));
            if (v.w[j].flags & LAUNCH_SH_UNKNOWN) {
                fl |= LAUNCH_SH_UNKNOWN;
                if (!why) why = v.w[j].why;
            }
        }
        launch_sh_word aw = {pool_strndup(st->sh, b.p, b.n), why, t[i].line, fl, 0};
        free(b.p);
        wvec_push(&out, aw);
        if (!(temp && before)) {
            if (ix) {
                sh_var *var = var_get(st, t[i].p, nl);
                wvec u = {0};
                launch_sh_word x = {"", pool_printf(st->sh, "$%s (%s:%d): an "
                                                 "element assignment, not "
                                                 "evaluated", var->name,
                                                 st->file, t[i].line),
                                 t[i].line, LAUNCH_SH_UNKNOWN | LAUNCH_SH_HEAD, 0};
                wvec_push(&u, x);
                var_assign(st, var, &u, 0, 0, t[i].line);
                free(u.w);
            } else {
                sh_var *var = var_get(st, t[i].p, nl);
                var_assign(st, var, &v, array, ap, t[i].line);
                if (is_decl && strcmp(words.w[0].s, "export") == 0)
                    var->exported = 1;
            }
        }
        free(v.w);
    }
    int status;
    if (words.n > 0 && !(words.w[0].flags & LAUNCH_SH_UNKNOWN)) {
        const char *c = words.w[0].s;
        if (strcmp(c, "unset") == 0) {
            for (int i = 1; i < words.n; i++)
                if (words.w[i].s[0] != '-') {
                    sh_var *var = var_find(st, words.w[i].s,
                                           strlen(words.w[i].s));
                    if (var && mode_of(st, st->nfr) == M_RUN) var->set = 0;
                    else if (var)
                        set_unknown(st, words.w[i].s, strlen(words.w[i].s),
                                    cmd_line, "unset under a condition "
                                    "trainplan does not evaluate");
                }
        } else if (strcmp(c, "read") == 0 || strcmp(c, "mapfile") == 0
                   || strcmp(c, "readarray") == 0) {
            for (int i = 1; i < words.n; i++)
                if (words.w[i].s[0] != '-')
                    set_unknown(st, words.w[i].s, strlen(words.w[i].s),
                                cmd_line, "read at run time");
        } else if (strcmp(c, "source") == 0 || strcmp(c, ".") == 0
                   || strcmp(c, "eval") == 0) {
            st->sourced = 1;
        } else if (strcmp(c, "exit") == 0 && mode_of(st, st->nfr) == M_RUN
                   && !cond) {
            st->stop = 1;
        }
    }
    status = status_of(&words, is_decl ? words.n : 0);
    if (neg && status >= 0) status = !status;
    if (cond) {
        /* a condition: evaluated, not a command of the job */
    } else {
        if (is_decl) {
            /* export NAME=v: the builtin and its assignments */
            wvec all = {0};
            wvec_push(&all, words.w[0]);
            for (int i = 0; i < out.n; i++) wvec_push(&all, out.w[i]);
            for (int i = 1; i < words.n; i++)
                if (!strchr(words.w[i].s, '=')) wvec_push(&all, words.w[i]);
            emit(st, &all, cmd_line);
            free(all.w);
        } else {
            for (int i = 0; i < words.n; i++) wvec_push(&out, words.w[i]);
            emit(st, &out, cmd_line);
        }
    }
    if (st->chain_op) status = and_or(st->chain_status, st->chain_op == 1,
                                      status);
    st->chain_status = status;
    if (pushed_unk) pop(st, FR_BRACE);
    free(words.w);
    free(out.w);
}

int launch_sh_read(const char *text, const char *file, launch_sh *sh, tp_err *e)
{
    memset(sh, 0, sizeof *sh);
    sh_state st;
    memset(&st, 0, sizeof st);
    st.sh = sh, st.file = file, st.e = e;
    st.chain_status = 1;
    lexer lx = {text, text + strlen(text), 1, {0}, {0}, {0}, 0};
    token *cmd = NULL;
    int n = 0, cap = 0;
    int in_dbl = 0; /* inside [[ ]]: && and || are its own */
    for (;;) {
        token t;
        int type = lex(&st, &lx, &t);
        if (st.rc) break;
        if (type == T_OP && in_dbl && (op_is(&t, "&&") || op_is(&t, "||")
                                       || op_is(&t, "(") || op_is(&t, ")"))) {
            t.type = T_WORD;
            type = T_WORD;
        }
        if (type == T_WORD || type == T_ARRAY) {
            if (raw_is(&t, "[[")) in_dbl = 1;
            else if (raw_is(&t, "]]")) in_dbl = 0;
            if (n == cap) {
                cap = cap ? 2 * cap : 32;
                cmd = tp_xrealloc(cmd, (size_t)cap * sizeof *cmd);
            }
            cmd[n++] = t;
            if (n > SH_MAX_WORDS) {
                st.rc = tp_errf(e, TP_EDATA, "%s: more than %d words in a "
                                "command: not a launch script", file,
                                SH_MAX_WORDS);
                break;
            }
            continue;
        }
        in_dbl = 0;
        frame *top = st.nfr ? &st.fr[st.nfr - 1] : NULL;
        /* case patterns: "pat)" after `in` or `;;` */
        if (top && top->type == FR_CASE && top->header) {
            if (type == T_OP && op_is(&t, ")")) {
                top->header = 0;
                tokens_free(cmd, n);
                cmd = NULL, n = cap = 0;
                continue;
            }
            if (n > 0 && raw_is(&cmd[0], "esac")) {
                st.nfr--;
                tokens_free(cmd, n);
                cmd = NULL, n = cap = 0;
                if (type == T_END) break;
                continue;
            }
            if (type == T_OP && (op_is(&t, "(") || op_is(&t, "|")
                                 || op_is(&t, "\n"))) {
                if (n == 0) continue;
            }
            if (type != T_END) {
                /* a pattern's words are not a command */
                tokens_free(cmd, n);
                cmd = NULL, n = cap = 0;
                continue;
            }
        }
        /* NAME ( ) { ...: a function */
        if (type == T_OP && op_is(&t, "(") && n == 1) {
            token u;
            int type2 = lex(&st, &lx, &u);
            if (st.rc) break;
            if (type2 == T_OP && op_is(&u, ")")) {
                if (!(st.nfr && st.fr[st.nfr - 1].type == FR_FUNC
                      && !st.fr[st.nfr - 1].brace))
                    push(&st, FR_FUNC, M_UNK, cmd[0].line);
                tokens_free(cmd, n);
                cmd = NULL, n = cap = 0;
                continue;
            }
            /* not a function: run what came, then read u afresh */
            run_command(&st, cmd, n);
            tokens_free(cmd, n);
            cmd = NULL, n = cap = 0;
            st.chain_op = 0;
            lx.p = u.p ? u.p : lx.p;
            lx.line = u.line ? u.line : lx.line;
            free(u.el);
            continue;
        }
        if (n > 0) run_command(&st, cmd, n);
        tokens_free(cmd, n);
        cmd = NULL, n = cap = 0;
        if (st.rc || type == T_END) break;
        if (op_is(&t, "&&")) st.chain_op = 1;
        else if (op_is(&t, "||")) st.chain_op = 2;
        else if (op_is(&t, "|") || op_is(&t, "|&")) st.chain_op = 0;
        else st.chain_op = 0;
        if (op_is(&t, "(")) push(&st, FR_PAREN, M_RUN, t.line);
        else if (op_is(&t, ")")) {
            if (st.nfr && st.fr[st.nfr - 1].type == FR_CASE
                && st.fr[st.nfr - 1].header)
                st.fr[st.nfr - 1].header = 0;
            else
                pop(&st, FR_PAREN);
        }
        else if (op_is(&t, ";;") || op_is(&t, ";&") || op_is(&t, ";;&")) {
            if (st.nfr && st.fr[st.nfr - 1].type == FR_CASE)
                st.fr[st.nfr - 1].header = 1;
        }
    }
    tokens_free(cmd, n);
    for (int i = 0; i < st.nv; i++) free(st.vars[i].el.w);
    free(st.vars);
    if (st.rc) {
        launch_sh_free(sh);
        return st.rc;
    }
    return TP_OK;
}

void launch_sh_free(launch_sh *sh)
{
    if (!sh) return;
    for (int i = 0; i < sh->npool; i++) free(sh->pool[i]);
    free(sh->pool);
    free(sh->w);
    free(sh->c);
    memset(sh, 0, sizeof *sh);
}

const char *launch_sh_why(const launch_sh_word *w)
{
    return w->why ? w->why : "a value not known from the file";
}
