/*
 * launch_shell_expand.c - the shell expander's words (launch_shell.c reads
 * the commands): the script's strings (its pool), the interpreter's state
 * (the conditions, loops and functions a command is under; the
 * variables), a word's expansion as bash does it (quotes, $NAME, ${...}
 * with its operators, arrays, field splitting; what the file cannot say
 * marked unknown with the reason) and assignments to variables. What is
 * expanded and what is not: launch_shell.c's opening comment.
 */
#include "launch.h"
#include "launch_int.h"


#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- storage ---------------------------------------------------------- */

/* Every string of a script lives in its pool, freed by launch_sh_free. */
char *launch_sh_pool_add(launch_sh *sh, char *s)
{
    if (sh->npool == sh->cappool) {
        sh->cappool = sh->cappool ? 2 * sh->cappool : 256;
        sh->pool = tp_xrealloc(sh->pool, (size_t)sh->cappool * sizeof *sh->pool);
    }
    sh->pool[sh->npool++] = s;
    return s;
}

char *launch_sh_pool_strndup(launch_sh *sh, const char *s, size_t n)
{
    char *p = tp_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return launch_sh_pool_add(sh, p);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
const char *launch_sh_pool_printf(launch_sh *sh, const char *fmt, ...)
{
    char buf[SH_WHY_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return launch_sh_pool_strndup(sh, buf, strlen(buf));
}

/* A growable list of words (fields of an expansion, a variable's
 * elements). */
void launch_sh_wvec_push(wvec *v, launch_sh_word x)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 8;
        v->w = tp_xrealloc(v->w, (size_t)v->cap * sizeof *v->w);
    }
    v->w[v->n++] = x;
}

void launch_sh_sb_putn(sbuf *b, const char *s, size_t n)
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

void launch_sh_sb_putc(sbuf *b, char c) { launch_sh_sb_putn(b, &c, 1); }

int launch_sh_mode_of(const sh_state *st, int upto)
{
    int m = M_RUN;
    for (int i = 0; i < upto; i++) {
        if (st->fr[i].mode == M_SKIP) return M_SKIP;
        if (st->fr[i].mode == M_UNK) m = M_UNK;
    }
    return m;
}

int launch_sh_unk_line(const sh_state *st)
{
    for (int i = st->nfr - 1; i >= 0; i--)
        if (st->fr[i].mode == M_UNK) return st->fr[i].line;
    return 0;
}

sh_var *launch_sh_var_find(sh_state *st, const char *name, size_t n)
{
    for (int i = 0; i < st->nv; i++)
        if (strlen(st->vars[i].name) == n
            && strncmp(st->vars[i].name, name, n) == 0)
            return &st->vars[i];
    return NULL;
}

sh_var *launch_sh_var_get(sh_state *st, const char *name, size_t n)
{
    sh_var *v = launch_sh_var_find(st, name, n);
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
        launch_sh_word w = {launch_sh_pool_strndup(st->sh, f->cur.p ? f->cur.p : "",
                                      f->cur.n),
                         f->why, f->line, f->flags, f->at};
        launch_sh_wvec_push(&f->out, w);
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
    launch_sh_sb_putn(&f->cur, s, n);
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
        launch_sh_sb_putn(&f->cur, rest, k);
        f_text(st, f, rest + k, rn - k, 0);
    } else {
        launch_sh_sb_putn(&f->cur, rest, rn);
    }
}

static void expand_part(sh_state *st, fields *f, const char *p,
                        const char *end, int line, int dq);

/* The end of a ${...}, $(...) or `...` starting at p (on its opening
 * character), or NULL when it does not end. Quotes inside are skipped. */
const char *launch_sh_match_close(const char *p, const char *end, char open,
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
                ? launch_sh_pool_printf(st->sh, "$%.*s (%s:%d): the script's "
                                        "arguments are not in the file",
                              (int)nlen, name, st->file, line)
                : launch_sh_pool_printf(st->sh, "$%.*s (%s:%d) is not set in the "
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
        f_unknown(f, launch_sh_pool_printf(st->sh, "${%.*s} (%s:%d): a special "
                                           "parameter, not known from the file",
                                 (int)(e - b), b, st->file, line), !dq);
        return;
    }
    sh_var *v = launch_sh_var_find(st, name, nlen);
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
        f_unknown(f, launch_sh_pool_printf(st->sh, "$%.*s (%s:%d) is required from "
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
            launch_sh_var_assign(st, launch_sh_var_get(st, name, nlen), &g.out,
                                 0, 0, line);
        free(g.out.w);
        free(g.cur.p);
        put_var(st, f, launch_sh_var_find(st, name, nlen), name, nlen, 0, 0, -1, dq,
                line);
        return;
    }
    expand_part(st, f, p, e, line, dq);
    return;
unknown:
    f_unknown(f, launch_sh_pool_printf(st->sh, "${%.*s} (%s:%d): an expansion "
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
                    const char *m = launch_sh_match_close(q + 1, end, q[1],
                                                          q[1] == '(' ? ')' : '}');
                    q = m ? m + 1 : end;
                } else if (*q == '`') {
                    const char *m = launch_sh_match_close(q, end, '`', '`');
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
            const char *q = launch_sh_match_close(p, end, '`', '`');
            f_unknown(f, launch_sh_pool_printf(st->sh, "`...` (%s:%d): a command "
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
                    launch_sh_sb_putc(&b, x == 'n' ? '\n' : x == 't' ? '\t' : x);
                    q += 2;
                } else launch_sh_sb_putc(&b, *q++);
            }
            f_lit(f, b.p ? b.p : "", b.n);
            free(b.p);
            p = q < end ? q + 1 : end;
            continue;
        }
        if (n == '(') {
            const char *q = launch_sh_match_close(p + 1, end, '(', ')');
            int arith = p + 2 < end && p[2] == '(';
            f_unknown(f, launch_sh_pool_printf(st->sh, arith
                                               ? "$((...)) (%s:%d): arithmetic is not "
                                       "evaluated"
                                     : "$(...) (%s:%d): a command "
                                       "substitution, not run",
                                     st->file, line), !dq);
            p = q ? q + 1 : end;
            continue;
        }
        if (n == '{') {
            const char *q = launch_sh_match_close(p + 1, end, '{', '}');
            if (!q) q = end;
            expand_brace(st, f, p + 2, q, line, dq);
            p = q < end ? q + 1 : end;
            continue;
        }
        if (is_name_start((unsigned char)n)) {
            const char *b = p + 1, *q = b;
            while (q < end && is_name_char((unsigned char)*q)) q++;
            put_var(st, f, launch_sh_var_find(st, b, (size_t)(q - b)), b,
                    (size_t)(q - b), 0, 0, -1, dq, line);
            p = q;
            continue;
        }
        if (isdigit((unsigned char)n)) {
            put_var(st, f, launch_sh_var_find(st, p + 1, 1), p + 1, 1, 0, 0, -1, dq,
                    line);
            p += 2;
            continue;
        }
        if (strchr("@*#?$!-", n)) {
            f_unknown(f, launch_sh_pool_printf(st->sh, "$%c (%s:%d): %s", n,
                                               st->file,
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
void launch_sh_expand_word(sh_state *st, const char *p, const char *end,
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
    for (int i = 0; i < f.out.n; i++) launch_sh_wvec_push(out, f.out.w[i]);
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

void launch_sh_var_assign(sh_state *st, sh_var *v, const wvec *w, int array,
                          int append, int line)
{
    wvec nv = {0};
    if (append && v->set) {
        if (array || v->array) {
            for (int i = 0; i < v->el.n; i++) launch_sh_wvec_push(&nv, v->el.w[i]);
            if (!array && nv.n > 0 && w->n > 0) {
                /* A+=str appends to A[0] */
                launch_sh_word x = nv.w[0];
                size_t a = strlen(x.s), b = strlen(w->w[0].s);
                char *s = launch_sh_pool_add(st->sh, tp_xmalloc(a + b + 1));
                memcpy(s, x.s, a);
                memcpy(s + a, w->w[0].s, b + 1);
                x.s = s;
                if (!(x.flags & LAUNCH_SH_UNKNOWN)
                    && (w->w[0].flags & LAUNCH_SH_UNKNOWN))
                    x.at = (int)a + w->w[0].at, x.why = w->w[0].why;
                x.flags |= w->w[0].flags & ~(unsigned)LAUNCH_SH_HEAD;
                nv.w[0] = x;
            } else {
                for (int i = 0; i < w->n; i++) launch_sh_wvec_push(&nv, w->w[i]);
            }
        } else {
            launch_sh_word x = v->el.n ? v->el.w[0]
                                    : (launch_sh_word){"", NULL, line, 0, 0};
            const char *add = w->n ? w->w[0].s : "";
            size_t a = strlen(x.s), b = strlen(add);
            char *s = launch_sh_pool_add(st->sh, tp_xmalloc(a + b + 1));
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
            launch_sh_wvec_push(&nv, x);
        }
    } else {
        for (int i = 0; i < w->n; i++) launch_sh_wvec_push(&nv, w->w[i]);
    }
    int mode = launch_sh_mode_of(st, st->nfr);
    if (mode == M_UNK) {
        /* it may or may not run: known only when it changes nothing */
        if (!(v->set && v->array == (array || (append && v->array))
              && same_words(&v->el, &nv))) {
            free(nv.w);
            nv = (wvec){0};
            launch_sh_word x = {"",
                             launch_sh_pool_printf(st->sh, "$%s is set at %s:%d "
                                                   "under the condition, loop or "
                                         "function at line %d, which "
                                         "trainplan does not evaluate",
                                         v->name, st->file, line,
                                         launch_sh_unk_line(st)),
                             line, LAUNCH_SH_UNKNOWN | LAUNCH_SH_HEAD, 0};
            launch_sh_wvec_push(&nv, x);
        }
    }
    free(v->el.w);
    v->el = nv;
    v->set = 1;
    v->array = array || (append && v->array);
}

/* [p, end) is NAME=, NAME+= (or NAME[...]= ...): the name's length and
 * where its value starts, or 0. */
size_t launch_sh_assignment_name(const char *p, const char *end, int *append,
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
