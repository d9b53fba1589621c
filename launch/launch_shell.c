/*
 * launch_shell.c - a launch script's commands with its own shell variables
 * expanded as bash expands them (issue 30), for the readers of users' jobs
 * (launch_megatron_read.c, launch_nemo_keys.c): the lexer and the commands
 * (conditions, loops, assignments) here; the words' expansion, the
 * variables and the interpreter's state in launch_shell_expand.c.
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
#include "launch_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    const char *m = launch_sh_match_close(p + 1, end, p[1],
                                          p[1] == '(' ? ')' : '}');
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
            const char *m = launch_sh_match_close(p, end, '`', '`');
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
                const char *m = launch_sh_match_close(q, lx->end, '(', ')');
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
                lx->heredoc[lx->nheredoc] = launch_sh_pool_add(st->sh, d);
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
        if (we < lx->end && *we == '(' && launch_sh_assignment_name(ws, we, &ap,
                                                                    &val, &ix)
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
    sh->c[sh->nc++] = (launch_sh_cmd){sh->nw, w->n, line, launch_sh_unk_line(st)};
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
    sh_var *v = launch_sh_var_get(st, name, n);
    free(v->el.w);
    v->el = (wvec){0};
    launch_sh_word x = {"", launch_sh_pool_printf(st->sh, "$%s (%s:%d): %s",
                                                  v->name,
                                     st->file, line, what),
                     line, LAUNCH_SH_UNKNOWN | LAUNCH_SH_HEAD, 0};
    launch_sh_wvec_push(&v->el, x);
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
        int parent = launch_sh_mode_of(st, st->nfr);
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
    int mode = launch_sh_mode_of(st, st->nfr);
    int cond = top && top->type == FR_IF && top->cond == 1;
    if (cond) mode = launch_sh_mode_of(st, st->nfr - 1);
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
                     || launch_sh_assignment_name(t[k].p, t[k].end, &ap, &val,
                                                  &ix)))
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
        launch_sh_expand_word(st, t[i].p, t[i].end, t[i].line, 0, &words);
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
                                     || launch_sh_assignment_name(t[i].p, t[i].end,
                                                                  &ap, &val, &ix))))
            continue;
        size_t nl = launch_sh_assignment_name(t[i].p, t[i].end, &ap, &val, &ix);
        if (!nl) continue;
        wvec v = {0};
        int array = t[i].type == T_ARRAY;
        if (array)
            for (int j = 0; j < t[i].nel; j++)
                launch_sh_expand_word(st, t[i].el[j].p, t[i].el[j].end,
                                      t[i].el[j].line,
                                      0, &v);
        else
            launch_sh_expand_word(st, val, t[i].end, t[i].line, 1, &v);
        /* the assignment as a word, NAME=value, for readers that look at
         * the environment (PYTORCH_CUDA_ALLOC_CONF) */
        sbuf b = {0};
        launch_sh_sb_putn(&b, t[i].p, nl);
        launch_sh_sb_putc(&b, '=');
        unsigned fl = LAUNCH_SH_ASSIGN;
        const char *why = NULL;
        for (int j = 0; j < v.n; j++) {
            if (j) launch_sh_sb_putc(&b, ' ');
            launch_sh_sb_putn(&b, v.w[j].s, strlen(v.w[j].s));
            if (v.w[j].flags & LAUNCH_SH_UNKNOWN) {
                fl |= LAUNCH_SH_UNKNOWN;
                if (!why) why = v.w[j].why;
            }
        }
        launch_sh_word aw = {launch_sh_pool_strndup(st->sh, b.p, b.n), why,
        t[i].line, fl, 0};
        free(b.p);
        launch_sh_wvec_push(&out, aw);
        if (!(temp && before)) {
            if (ix) {
                sh_var *var = launch_sh_var_get(st, t[i].p, nl);
                wvec u = {0};
                launch_sh_word x = {"", launch_sh_pool_printf(st->sh,
                                                              "$%s (%s:%d): an "
                                                 "element assignment, not "
                                                 "evaluated", var->name,
                                                 st->file, t[i].line),
                                 t[i].line, LAUNCH_SH_UNKNOWN | LAUNCH_SH_HEAD, 0};
                launch_sh_wvec_push(&u, x);
                launch_sh_var_assign(st, var, &u, 0, 0, t[i].line);
                free(u.w);
            } else {
                sh_var *var = launch_sh_var_get(st, t[i].p, nl);
                launch_sh_var_assign(st, var, &v, array, ap, t[i].line);
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
                    sh_var *var = launch_sh_var_find(st, words.w[i].s,
                                                     strlen(words.w[i].s));
                    if (var && launch_sh_mode_of(st,
                                                 st->nfr) == M_RUN) var->set = 0;
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
        } else if (strcmp(c, "exit") == 0 && launch_sh_mode_of(st, st->nfr) == M_RUN
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
            launch_sh_wvec_push(&all, words.w[0]);
            for (int i = 0; i < out.n; i++) launch_sh_wvec_push(&all, out.w[i]);
            for (int i = 1; i < words.n; i++)
                if (!strchr(words.w[i].s, '=')) launch_sh_wvec_push(&all,
                                                                    words.w[i]);
            emit(st, &all, cmd_line);
            free(all.w);
        } else {
            for (int i = 0; i < words.n; i++) launch_sh_wvec_push(&out, words.w[i]);
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
            lexer before = lx; /* u's text may not lie in the source: <( ) */
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
            lx = before;
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
