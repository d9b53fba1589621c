/*
 * svg.c - the picture of a search, one self-contained SVG 1.1 file
 * of panels stacked top to bottom:
 *   1. every admitted layout, time against cost (x: USD to train with
 *      --tokens, else of one iteration; y: days to train, else seconds per
 *      iteration), each axis on a log scale when its range spans more than
 *      a decade; colour by GPU count (power-of-two bins), marker shape by system,
 *      hover text (<title>) on every point, the top-k ringed, the Pareto
 *      front joined and each of its points labelled with its layout, the
 *      label placed where it covers the fewest points (out in the empty
 *      region below the front, with a leader line, where the cloud is
 *      dense beside the point);
 *   2. the front zoomed, with only the layouts in its box, when the front is
 *      squeezed into under a third of panel 1's width (a front whose layouts
 *      cost within a few percent of each other, the usual case);
 *   3. the iteration time of the top layouts (at most 10) split into the
 *      terms est_time_terms gives every output, stacked;
 *   4. the estimated peak memory of the same layouts split into its terms,
 *      against the GPU's memory and the peak the search admits.
 * Points that would land on the same 2 x 2 px cell are drawn once, the best
 * of them by the search's own order, so the file stays small and the same
 * bytes at any thread count; front and top-k points are always drawn.
 * Numbers are written by fx() (integers only, never printf's %f or %g), so
 * no locale can change the bytes. Hand written; a browser opens it.
 * Each panel is a <g class="panel" data-box="x y w h"> and each front label
 * a <text class="front-label" data-box="x y w h"> (its estimated extent),
 * which tests/svg_render.py uses to look at a screenshot.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "plot.h"
#include "place.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 960.0           /* width of the picture, px */
#define LABEL_H 13.0      /* line height of a front label, px */
#define CHAR_W 6.4        /* estimated advance of an 11 px sans-serif glyph */
#define BARS_MAX 10       /* layouts in the breakdown panels */
#define N_COLOURS 8

/* ---- numbers without the locale --------------------------------------- */

typedef struct num {
    char s[40];
} num;

/* v with dec decimals (0 to 6), from integers: "12.5", "-3", "0.25". */
static num fx(double v, int dec)
{
    num n;
    if (!isfinite(v)) v = 0;
    if (dec < 0) dec = 0;
    if (dec > 6) dec = 6;
    long long scale = 1;
    for (int i = 0; i < dec; i++) scale *= 10;
    double a = fabs(v) * (double)scale;
    if (a > 9e17) a = 9e17;
    long long q = llround(a);
    const char *sign = v < 0 && q ? "-" : "";
    if (dec == 0)
        snprintf(n.s, sizeof n.s, "%s%lld", sign, q);
    else
        snprintf(n.s, sizeof n.s, "%s%lld.%0*lld", sign, q / scale, dec,
                 q % scale);
    return n;
}

/* A pixel coordinate, one decimal. */
static num px(double v) { return fx(v, 1); }

/* v with k/M/B suffix and just enough decimals to tell apart values step
 * apart (step <= 0: three significant digits), trailing zeros dropped:
 * "110k", "109.5k", "1.2M", "0.05". */
static num human(double v, double step)
{
    static const struct {
        double at;
        const char *suffix;
    } sfx[] = {{1e9, "B"}, {1e6, "M"}, {1e3, "k"}, {0, ""}};
    double a = fabs(v);
    int i = 0;
    while (sfx[i].at > 0 && a < sfx[i].at) i++;
    double d = sfx[i].at > 0 ? sfx[i].at : 1;
    double s = step > 0 ? step / d : (a > 0 ? a / d / 100 : 1);
    int dec = s >= 1 ? 0 : (int)ceil(-log10(s) - 1e-9);
    num n = fx(v / d, dec);
    if (strchr(n.s, '.')) {
        size_t l = strlen(n.s);
        while (n.s[l - 1] == '0') n.s[--l] = 0;
        if (n.s[l - 1] == '.') n.s[--l] = 0;
    }
    strncat(n.s, sfx[i].suffix, sizeof n.s - strlen(n.s) - 1);
    return n;
}

/* ---- axes -------------------------------------------------------------- */

typedef struct axis {
    double lo, hi;    /* data range shown */
    int logs;
    double px0, px1;  /* pixels of lo and hi */
} axis;

static double ax_px(const axis *a, double v)
{
    double u;
    if (a->logs)
        u = (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
    else
        u = (v - a->lo) / (a->hi - a->lo);
    return a->px0 + u * (a->px1 - a->px0);
}

/* The range [lo, hi] of positive data, log when it spans more than 10x,
 * padded by 4 % of the span on each side. */
static void ax_fit(axis *a, double lo, double hi, double px0, double px1)
{
    if (!(lo > 0) || !(hi >= lo)) lo = 1, hi = 10;
    if (hi <= lo * (1 + 1e-9)) lo *= 0.95, hi *= 1.05;
    a->logs = hi > 10 * lo;
    if (a->logs) {
        double p = 0.04 * (log10(hi) - log10(lo));
        a->lo = pow(10, log10(lo) - p), a->hi = pow(10, log10(hi) + p);
    } else {
        double p = 0.04 * (hi - lo);
        a->lo = lo - p > 0 ? lo - p : lo / 2, a->hi = hi + p;
    }
    a->px0 = px0, a->px1 = px1;
}

#define TICKS_MAX 24

/* Round ticks in a's range: 1-2-5 steps on a linear axis; on a log axis
 * the decades, else 1-2-5 or 1..9 in each decade, whichever first gives 3
 * to 10 ticks (a narrow log axis falls back to linear steps). step[i] is
 * what tells tick i from its neighbours, for human(). Returns the count. */
static int ax_ticks(const axis *a, double *v, double *step)
{
    int n = 0;
    if (a->logs) {
        static const double sets[3][9] = {{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
        static const int set_n[3] = {1, 3, 9};
        int k0 = (int)floor(log10(a->lo)), k1 = (int)ceil(log10(a->hi));
        int stride = 1;
        while ((k1 - k0) / stride > 10) stride++;
        for (int s = 0; s < 3; s++) {
            n = 0;
            for (int k = k0; k <= k1 && n < TICKS_MAX; k += s ? 1 : stride)
                for (int j = 0; j < set_n[s] && n < TICKS_MAX; j++) {
                    double t = sets[s][j] * pow(10, k);
                    if (t < a->lo || t > a->hi) continue;
                    v[n] = t, step[n] = pow(10, k), n++;
                }
            if (n >= 3 && n <= 10) return n;
            if (n > 10) break;
        }
        if (n >= 3) return n;
    }
    double raw = (a->hi - a->lo) / 5, e = pow(10, floor(log10(raw)));
    double st = raw / e < 1.5 ? e : raw / e < 3.5 ? 2 * e : raw / e < 7.5 ? 5 * e : 10 * e;
    n = 0;
    for (double t = ceil(a->lo / st) * st; t <= a->hi && n < TICKS_MAX; t += st)
        v[n] = fabs(t) < st * 1e-9 ? 0 : t, step[n] = st, n++;
    return n;
}

/* ---- what the picture shows -------------------------------------------- */

typedef struct pic {
    FILE *f;
    const search_request *q;
    const search_answer *a;
    int tok;                /* --tokens given: x and y are to train */
    double xs, ys;          /* cost_usd and iteration_s to the axes' units */
    int gbin_lo, gbin_hi;   /* floor(log2(GPUs)) over the points */
    int64_t colour_min[N_COLOURS], colour_max[N_COLOURS]; /* GPUs per colour */
    double bar_x0;          /* where the bars start, right of the row labels */
} pic;

static double pt_x(const pic *p, const search_point *s) { return s->cost_usd * p->xs; }
static double pt_y(const pic *p, const search_point *s) { return s->iteration_s * p->ys; }

static int log2i(int64_t g)
{
    int b = 0;
    while (g > 1) g >>= 1, b++;
    return b;
}

/* Colour by GPU count: one per power-of-two bin, adjacent bins sharing one
 * when there are more than N_COLOURS (a ramp, dark to light, readable on
 * white). */
static int colour_of(const pic *p, int64_t gpus)
{
    int nb = p->gbin_hi - p->gbin_lo + 1, b = log2i(gpus) - p->gbin_lo;
    if (b < 0) b = 0;
    if (b >= nb) b = nb - 1;
    if (nb == 1) return 0;
    /* Few bins: spread over the ramp, far apart. */
    return nb <= N_COLOURS ? b * (N_COLOURS - 1) / (nb - 1) : b * N_COLOURS / nb;
}
static const char *const colours[N_COLOURS] = {
    "#3b0f70", "#5b3fa8", "#2c7fb8", "#1b9e77", "#66a61e", "#d9a400",
    "#e66101", "#c51b7d"};

/* Marker shapes by system, defined once in <defs>, centred on 0,0. */
#define N_SHAPES 5
static const char *const shapes[N_SHAPES] = {
    "<circle id=\"m0\" r=\"3.6\"/>",
    "<rect id=\"m1\" x=\"-3.3\" y=\"-3.3\" width=\"6.6\" height=\"6.6\"/>",
    "<path id=\"m2\" d=\"M0,-4.4L4,2.9L-4,2.9Z\"/>",
    "<path id=\"m3\" d=\"M0,-4.5L4.5,0L0,4.5L-4.5,0Z\"/>",
    "<path id=\"m4\" d=\"M-1.4,-4.4H1.4V-1.4H4.4V1.4H1.4V4.4H-1.4V1.4H-4.4V-1.4H-1.4Z\"/>"};
/* With several systems, each one's markers are outlined in a colour of
 * its own as well as shaped: two cues, either enough alone. */
static const char *const sys_strokes[N_SHAPES] = {"#000000", "#e41a1c", "#377eb8",
                                                  "#ff7f00", "#984ea3"};
static const char *const shape_names[N_SHAPES] = {"circle", "square", "triangle",
                                                  "diamond", "cross"};

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

static const char *sys_name(const pic *p, int sys)
{
    return p->q->systems[sys].ctx.sys->name;
}

static void tag_of(const pic *p, const search_point *s, char *tag, size_t cap)
{
    space_layout l;
    search_point_layout(p->q, s, &l);
    space_layout_tag(&l, p->q->systems[s->sys].ctx.sys->gpus_per_node, tag, cap);
}

/* The short label of a front point: "TP4 PP2 DP16 mb1 128 GPUs" (CP and
 * virtual stages where used, EP on every MoE layout; the system first when
 * there are several). */
static void label_of(const pic *p, const search_point *s, char *buf, size_t cap)
{
    space_layout l;
    search_point_layout(p->q, s, &l);
    int n = 0;
    if (p->q->n_systems > 1) n = snprintf(buf, cap, "%s: ", sys_name(p, s->sys));
    n += snprintf(buf + n, cap - (size_t)n, "TP%lld PP%lld", (long long)l.tp,
                  (long long)l.pp);
    if (l.cp > 1) n += snprintf(buf + n, cap - (size_t)n, " CP%lld", (long long)l.cp);
    n += snprintf(buf + n, cap - (size_t)n, " DP%lld", (long long)l.dp);
    if (l.ep > 0) n += snprintf(buf + n, cap - (size_t)n, " EP%lld", (long long)l.ep);
    n += snprintf(buf + n, cap - (size_t)n, " mb%lld", (long long)l.mbs);
    if (l.vpp > 1) n += snprintf(buf + n, cap - (size_t)n, " vpp%lld", (long long)l.vpp);
    snprintf(buf + n, cap - (size_t)n, " %lld GPUs", (long long)s->gpus);
}

/* Hover text: the full layout, its time, cost and memory. */
static void title_of(const pic *p, const search_point *s)
{
    char tag[128];
    tag_of(p, s, tag, sizeof tag);
    FILE *f = p->f;
    fprintf(f, "<title>%s on %s, %lld GPUs: %s s/iteration", tag,
            sys_name(p, s->sys), (long long)s->gpus, fx(s->iteration_s, 3).s);
    if (p->tok)
        fprintf(f, ", %s days, $%s to train", fx(pt_y(p, s), 2).s,
                fx(pt_x(p, s), 0).s);
    else
        fprintf(f, ", $%s/iteration", fx(s->cost_usd, 4).s);
    fprintf(f, ", peak %s GiB</title>", fx(s->mem_bytes / 1073741824.0, 2).s);
}

static void marker(const pic *p, const search_point *s, double x, double y)
{
    if (p->q->n_systems > 1)
        fprintf(p->f, "<use xlink:href=\"#m%d\" x=\"%s\" y=\"%s\" "
                      "stroke=\"%s\" stroke-width=\"1\">",
                s->sys % N_SHAPES, px(x).s, px(y).s,
                sys_strokes[s->sys % N_SHAPES]);
    else
        fprintf(p->f, "<use xlink:href=\"#m%d\" x=\"%s\" y=\"%s\">",
                s->sys % N_SHAPES, px(x).s, px(y).s);
    title_of(p, s);
    fputs("</use>\n", p->f);
}

/* ---- legends ------------------------------------------------------------ */

typedef struct legend {
    FILE *f;
    double x, y, x0, x1; /* pen, and the line's extent */
} legend;

/* Moves the pen past an item of w px, to the next line when it is full. */
static void lg_room(legend *g, double w)
{
    if (g->x > g->x0 && g->x + w > g->x1) g->x = g->x0, g->y += 16;
}

static void lg_swatch(legend *g, const char *fill, const char *text)
{
    double w = 16 + CHAR_W * (double)strlen(text) + 14;
    lg_room(g, w);
    fprintf(g->f,
            "<rect x=\"%s\" y=\"%s\" width=\"11\" height=\"11\" fill=\"%s\"/>"
            "<text x=\"%s\" y=\"%s\">",
            px(g->x).s, px(g->y - 9).s, fill, px(g->x + 15).s, px(g->y).s);
    esc(g->f, text);
    fputs("</text>\n", g->f);
    g->x += w;
}

/* An item drawn by svg (its origin at the pen, 5 px above the baseline). */
static void lg_item(legend *g, const char *svg, const char *text)
{
    double w = 18 + CHAR_W * (double)strlen(text) + 14;
    lg_room(g, w);
    fprintf(g->f, "<g transform=\"translate(%s,%s)\">%s</g><text x=\"%s\" y=\"%s\">",
            px(g->x + 6).s, px(g->y - 4).s, svg, px(g->x + 17).s, px(g->y).s);
    esc(g->f, text);
    fputs("</text>\n", g->f);
    g->x += w;
}

/* ---- panel 1 and 2: time against cost ------------------------------------ */

typedef place_label lab; /* item: the search_point */

static int lab_cmp(const void *a, const void *b)
{
    const lab *x = a, *y = b;
    return x->py < y->py ? -1 : x->py > y->py ? 1 : (x->px > y->px) - (x->px < y->px);
}

/* The admitted points of the panel in a place_occ (place.h). */
static void occ_build(place_occ *o, const pic *p, const axis *ax, const axis *ay)
{
    place_occ_init(o, ax->px0, ay->px1, (int)(ax->px1 - ax->px0) + 1,
                   (int)(ay->px0 - ay->px1) + 1);
    for (int64_t i = 0; i < p->a->n_points; i++) {
        const search_point *s = &p->a->points[i];
        double vx = pt_x(p, s), vy = pt_y(p, s);
        if (vx < ax->lo || vx > ax->hi || vy < ay->lo || vy > ay->hi) continue;
        place_occ_add(o, ax_px(ax, vx), ax_px(ay, vy));
    }
    place_occ_sum(o);
}

/* Labels the front points in the box (top, bot, right). Each label, from
 * the bottom point up (the lowest points are nearest the empty region),
 * takes the place nearest its point among those whose
 * box covers the fewest admitted points and no label placed before it:
 * beside the point where the cloud leaves room, else out in the empty
 * part of the panel (the front is the cloud's lower-left edge, so the
 * region below and right of it is empty) with a leader line back to its
 * point. Where more points than lines fit, every k-th is labelled (first
 * and last always). */
static void front_labels(const pic *p, const axis *ax, const axis *ay,
                         double top, double bot, double right)
{
    const search_answer *a = p->a;
    lab *L = tp_xcalloc((size_t)a->n_front + 1, sizeof *L);
    int n = 0;
    for (int i = 0; i < a->n_front; i++) {
        double x = pt_x(p, &a->front[i]), y = pt_y(p, &a->front[i]);
        if (x < ax->lo || x > ax->hi || y < ay->lo || y > ay->hi) continue;
        L[n++] = (lab){ax_px(ax, x), ax_px(ay, y), &a->front[i]};
    }
    qsort(L, (size_t)n, sizeof *L, lab_cmp);
    int fit = (int)((bot - top) / LABEL_H), every = 1;
    while (fit > 0 && (n + every - 1) / every > fit) every++;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (i % every == 0 || i == n - 1) L[m++] = L[i];
    n = m;
    place_occ occ;
    occ_build(&occ, p, ax, ay);
    double(*box)[4] = tp_xcalloc((size_t)n + 1, sizeof *box); /* placed */
    fputs("<g font-size=\"11\">\n", p->f);
    for (int i = n - 1; i >= 0; i--) {
        char text[160];
        label_of(p, L[i].item, text, sizeof text);
        double w = CHAR_W * (double)strlen(text) + 4;
        double left_lim = ax->px0 + 2, right_lim = right - 2;
        double best_bx = 0, best_by = 0, best_d = INFINITY;
        int32_t best_c = INT32_MAX;
        /* Every place on a 2 px grid; the box is the text's, its baseline
         * 10 px below its top. */
        for (double by = top + 2; by + LABEL_H <= bot; by += 2) {
            for (double bx = left_lim; bx + w <= right_lim; bx += 2) {
                const double here[4] = {bx, by, w, LABEL_H};
                int clash = 0;
                for (int k = i + 1; k < n && !clash; k++) clash = place_boxes_clash(here, box[k]);
                if (clash) continue;
                int32_t c = place_occ_count(&occ, bx, by, w, LABEL_H);
                if (c > best_c) continue;
                double d = place_box_dist(L[i].px, L[i].py, bx, by, w, LABEL_H);
                /* keep clear of its own marker */
                if (d < 7) continue;
                if (c < best_c || d < best_d) {
                    best_c = c, best_d = d;
                    best_bx = bx, best_by = by;
                }
            }
        }
        if (best_c == INT32_MAX) { /* no room at all: beside it, as it falls */
            best_bx = fmin(L[i].px + 10, right_lim - w);
            best_by = fmin(fmax(L[i].py - 6, top), bot - LABEL_H);
            best_d = place_box_dist(L[i].px, L[i].py, best_bx, best_by, w, LABEL_H);
        }
        box[i][0] = best_bx, box[i][1] = best_by, box[i][2] = w, box[i][3] = LABEL_H;
    }
    place_uncross(&occ, L, box, n);
    for (int i = 0; i < n; i++) {
        char text[160];
        label_of(p, L[i].item, text, sizeof text);
        double w = box[i][2], best_bx = box[i][0], best_by = box[i][1];
        double best_d = place_box_dist(L[i].px, L[i].py, best_bx, best_by, w, LABEL_H);
        /* The text starts at the box's side facing its point. */
        int left = best_bx + w / 2 < L[i].px;
        double tx = left ? best_bx + w - 2 : best_bx + 2, ty = best_by + 10;
        if (best_d > 12) {
            /* a leader from the marker's edge to the box's nearest side */
            double ex, ey;
            place_leader_end(&L[i], box[i], &ex, &ey);
            double dx = ex - L[i].px, dy = ey - L[i].py, len = sqrt(dx * dx + dy * dy);
            fprintf(p->f,
                    "<line class=\"leader\" x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" "
                    "stroke=\"#555\" stroke-width=\"0.7\"/>\n",
                    px(L[i].px + 5 * dx / len).s, px(L[i].py + 5 * dy / len).s,
                    px(ex).s, px(ey).s);
        }
        fprintf(p->f,
                "<text class=\"front-label\" data-box=\"%s %s %s %s\" x=\"%s\" "
                "y=\"%s\" text-anchor=\"%s\" stroke=\"white\" stroke-width=\"3\" "
                "paint-order=\"stroke\" stroke-linejoin=\"round\">",
                px(best_bx).s, px(best_by).s, px(w).s, px(LABEL_H).s, px(tx).s,
                px(ty).s, left ? "end" : "start");
        esc(p->f, text);
        fputs("</text>\n", p->f);
    }
    fputs("</g>\n", p->f);
    free(box);
    place_occ_free(&occ);
    free(L);
}

static void axes_draw(const pic *p, const axis *ax, const axis *ay)
{
    FILE *f = p->f;
    double v[TICKS_MAX], st[TICKS_MAX];
    fprintf(f, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"none\" "
               "stroke=\"#333\"/>\n",
            px(ax->px0).s, px(ay->px1).s, px(ax->px1 - ax->px0).s,
            px(ay->px0 - ay->px1).s);
    int n = ax_ticks(ax, v, st);
    for (int i = 0; i < n; i++) {
        double x = ax_px(ax, v[i]);
        fprintf(f,
                "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#e4e4e4\"/>"
                "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#333\"/>"
                "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">%s%s</text>\n",
                px(x).s, px(ay->px1).s, px(x).s, px(ay->px0).s, px(x).s,
                px(ay->px0).s, px(x).s, px(ay->px0 + 5).s, px(x).s,
                px(ay->px0 + 18).s, "$", human(v[i], st[i]).s);
    }
    n = ax_ticks(ay, v, st);
    for (int i = 0; i < n; i++) {
        double y = ax_px(ay, v[i]);
        fprintf(f,
                "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#e4e4e4\"/>"
                "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#333\"/>"
                "<text x=\"%s\" y=\"%s\" text-anchor=\"end\">%s %s</text>\n",
                px(ax->px0).s, px(y).s, px(ax->px1).s, px(y).s,
                px(ax->px0 - 5).s, px(y).s, px(ax->px0).s, px(y).s,
                px(ax->px0 - 8).s, px(y + 4).s, human(v[i], st[i]).s,
                p->tok ? "d" : "s");
    }
    double mx = (ax->px0 + ax->px1) / 2, my = (ay->px0 + ay->px1) / 2;
    fprintf(f,
            "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">%s (USD%s)</text>\n"
            "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 %s %s)\">%s%s</text>\n",
            px(mx).s, px(ay->px0 + 36).s,
            p->tok ? "cost to train" : "cost of one iteration",
            ax->logs ? ", log scale" : "", px(ax->px0 - 62).s, px(my).s,
            px(ax->px0 - 62).s, px(my).s,
            p->tok ? "time to train (days" : "time per iteration (s",
            ay->logs ? ", log scale)" : ")");
}

/* Draws the points of a inside the axes' box (one per 2 x 2 px cell, the
 * best by the search's order), the front and the top-k over them. */
static void scatter_points(const pic *p, const axis *ax, const axis *ay)
{
    const search_answer *a = p->a;
    FILE *f = p->f;
    int cw = (int)((ax->px1 - ax->px0) / 2) + 1, ch = (int)((ay->px0 - ay->px1) / 2) + 1;
    int64_t *cell = tp_xmalloc((size_t)cw * (size_t)ch * sizeof *cell);
    for (int64_t i = 0; i < (int64_t)cw * ch; i++) cell[i] = -1;
    for (int64_t i = 0; i < a->n_points; i++) {
        const search_point *s = &a->points[i];
        double x = pt_x(p, s), y = pt_y(p, s);
        if (x < ax->lo || x > ax->hi || y < ay->lo || y > ay->hi) continue;
        int cx = (int)((ax_px(ax, x) - ax->px0) / 2), cy = (int)((ax_px(ay, y) - ay->px1) / 2);
        if (cx < 0 || cx >= cw || cy < 0 || cy >= ch) continue;
        int64_t *c = &cell[(int64_t)cy * cw + cx];
        if (*c < 0 || search_point_cmp(s, &a->points[*c], p->q->objective) < 0) *c = i;
    }
    /* By colour, each in cell order: the same bytes whatever order the
     * points came in. */
    for (int k = 0; k < N_COLOURS; k++) {
        int open = 0;
        for (int64_t c = 0; c < (int64_t)cw * ch; c++) {
            if (cell[c] < 0) continue;
            const search_point *s = &a->points[cell[c]];
            if (colour_of(p, s->gpus) != k) continue;
            if (!open) fprintf(f, "<g fill=\"%s\" fill-opacity=\"0.75\">\n", colours[k]), open = 1;
            marker(p, s, ax_px(ax, pt_x(p, s)), ax_px(ay, pt_y(p, s)));
        }
        if (open) fputs("</g>\n", f);
    }
    free(cell);
    /* The top-k, ringed. */
    fputs("<g fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.4\">\n", f);
    for (int i = a->n_ranked - 1; i >= 0; i--) {
        const search_point *s = &a->ranked[i];
        double x = pt_x(p, s), y = pt_y(p, s);
        if (x < ax->lo || x > ax->hi || y < ay->lo || y > ay->hi) continue;
        fprintf(f, "<circle cx=\"%s\" cy=\"%s\" r=\"6\">", px(ax_px(ax, x)).s,
                px(ax_px(ay, y)).s);
        fprintf(f, "<title>#%d by %s: ", i + 1, search_objective_names[p->q->objective]);
        char tag[128];
        tag_of(p, s, tag, sizeof tag);
        fprintf(f, "%s</title></circle>\n", tag);
    }
    fputs("</g>\n", f);
    /* The front: a line, and its points outlined. */
    fputs("<polyline fill=\"none\" stroke=\"#111\" stroke-width=\"1.6\" points=\"", f);
    int first = 1;
    for (int i = 0; i < a->n_front; i++) {
        double x = pt_x(p, &a->front[i]), y = pt_y(p, &a->front[i]);
        if (x < ax->lo || x > ax->hi || y < ay->lo || y > ay->hi) continue;
        fprintf(f, "%s%s,%s", first ? "" : " ", px(ax_px(ax, x)).s, px(ax_px(ay, y)).s);
        first = 0;
    }
    fputs("\"/>\n<g stroke=\"#111\" stroke-width=\"1.2\">\n", f);
    for (int i = 0; i < a->n_front; i++) {
        const search_point *s = &a->front[i];
        double x = pt_x(p, s), y = pt_y(p, s);
        if (x < ax->lo || x > ax->hi || y < ay->lo || y > ay->hi) continue;
        fprintf(f, "<g class=\"front-point\" fill=\"%s\" "
                   "transform=\"translate(%s,%s) scale(1.7)\">",
                colours[colour_of(p, s->gpus)], px(ax_px(ax, x)).s, px(ax_px(ay, y)).s);
        marker(p, s, 0, 0);
        fputs("</g>\n", f);
    }
    fputs("</g>\n", f);
}

/* The legend of the scatter panels: GPU colours, system shapes (with
 * several systems), the top-k ring and the front's line. Returns the y
 * below it. */
static double scatter_legend(const pic *p, double y)
{
    legend g = {p->f, 90, y, 90, W - 20};
    fputs("<g font-size=\"11\">\n", p->f);
    fputs("<text x=\"90\" y=\"", p->f);
    fprintf(p->f, "%s\">colour: GPUs</text>\n", px(y).s);
    g.x += 80;
    for (int k = 0; k < N_COLOURS; k++) {
        if (p->colour_min[k] == 0) continue;
        char t[64];
        if (p->colour_min[k] == p->colour_max[k])
            snprintf(t, sizeof t, "%lld", (long long)p->colour_min[k]);
        else
            snprintf(t, sizeof t, "%lld-%lld", (long long)p->colour_min[k],
                     (long long)p->colour_max[k]);
        lg_swatch(&g, colours[k], t);
    }
    if (p->q->n_systems > 1)
        for (int s = 0; s < p->q->n_systems && s < N_SHAPES; s++) {
            char t[128], svg[200];
            snprintf(t, sizeof t, "%s (%s, outlined)", sys_name(p, s),
                     shape_names[s]);
            snprintf(svg, sizeof svg,
                     "<use xlink:href=\"#m%d\" fill=\"#bbb\" stroke=\"%s\" "
                     "stroke-width=\"1\" transform=\"scale(1.3)\"/>",
                     s, sys_strokes[s]);
            lg_item(&g, svg, t);
        }
    char t[96];
    snprintf(t, sizeof t, "top %d by %s", p->a->n_ranked,
             search_objective_names[p->q->objective]);
    lg_item(&g, "<circle r=\"6\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.4\"/>", t);
    lg_item(&g, "<path d=\"M-7,0H7\" stroke=\"#111\" stroke-width=\"1.6\"/>"
                "<circle r=\"4\" fill=\"#999\" stroke=\"#111\"/>",
            "Pareto front (none both faster and cheaper)");
    fputs("</g>\n", p->f);
    return g.y + 16;
}

/* A time-against-cost panel at top with the axes ax, ay (their pixels
 * set here). Returns the y below it. */
static double scatter_panel(const pic *p, double top, axis *ax, axis *ay,
                            const char *title)
{
    FILE *f = p->f;
    double h = 400;
    fprintf(f, "<g class=\"panel\" data-box=\"0 %s %s %s\">\n", px(top).s, px(W).s,
            px(h).s);
    fprintf(f, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" font-size=\"14\" "
               "font-weight=\"bold\">",
            px(W / 2).s, px(top + 20).s);
    esc(f, title);
    fputs("</text>\n", f);
    int empty = p->a->n_points == 0 && p->a->n_front == 0;
    double y = empty ? top + 40 : scatter_legend(p, top + 40);
    ax->px0 = 90, ax->px1 = W - 30;
    ay->px1 = y, ay->px0 = top + h - 48;
    axes_draw(p, ax, ay);
    scatter_points(p, ax, ay);
    if (empty)
        fprintf(f, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" font-size=\"14\">"
                   "no layout admitted: nothing fits the memory, budget and "
                   "deadline asked for</text>\n",
                px((ax->px0 + ax->px1) / 2).s, px((ay->px0 + ay->px1) / 2).s);
    front_labels(p, ax, ay, ay->px1, ay->px0 - 2, ax->px1);
    fputs("</g>\n", f);
    return top + h;
}

/* ---- panels 3 and 4: the top layouts term by term ------------------------ */

typedef struct bar_term {
    const char *name;
    const char *colour;
} bar_term;

static const char *const term_colours[] = {
    "#1f77b4", "#aec7e8", "#9467bd", "#ff7f0e", "#e377c2",
    "#8c564b", "#c7c7c7", "#2ca02c", "#bcbd22", "#d62728", "#17becf",
    "#7f7f7f"};
_Static_assert(sizeof term_colours / sizeof term_colours[0] == EST_TIME_TERMS,
               "a colour per time term");

/* The row label of the bar panels: rank, tag (and system, when several).
 * Returns its length. */
static int row_text(const pic *p, int i, char *buf, size_t cap)
{
    char tag[128];
    tag_of(p, &p->a->ranked[i], tag, sizeof tag);
    return snprintf(buf, cap, "%d  %s%s%s", i + 1, tag, p->q->n_systems > 1 ? " " : "",
                    p->q->n_systems > 1 ? sys_name(p, p->a->ranked[i].sys) : "");
}

static void row_label(const pic *p, int i, double y)
{
    char t[200];
    row_text(p, i, t, sizeof t);
    fprintf(p->f, "<text x=\"20\" y=\"%s\" font-size=\"11\">", px(y + 11).s);
    esc(p->f, t);
    fputs("</text>\n", p->f);
}

/* Ticks of a bar panel whose bars run from x0 (0) to x1 (vmax); the
 * labels in vmax / scale's unit. */
static void bar_axis(FILE *f, double x0, double x1, double y0, double y1,
                     double vmax, double scale, const char *unit)
{
    axis a = {0, vmax / scale, 0, x0, x1};
    double v[TICKS_MAX], st[TICKS_MAX];
    int n = ax_ticks(&a, v, st);
    for (int i = 0; i < n; i++) {
        double x = ax_px(&a, v[i]);
        fprintf(f,
                "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#e4e4e4\"/>"
                "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">%s %s</text>\n",
                px(x).s, px(y0).s, px(x).s, px(y1).s, px(x).s, px(y1 + 14).s,
                human(v[i], st[i]).s, unit);
    }
}

/* The top layouts' iteration time, stacked by term (est_time_terms). */
static double time_panel(const pic *p, const est_result *r, int n, double top)
{
    FILE *f = p->f;
    double x0 = p->bar_x0, x1 = W - 90, row = 22, y0 = top + 34;
    double vmax = 0, used[EST_TIME_TERMS] = {0};
    est_term t[EST_TIME_TERMS];
    for (int i = 0; i < n; i++) {
        double sum = 0;
        est_time_terms(&r[i].time, 0, t);
        for (int k = 0; k < EST_TIME_TERMS; k++) sum += fmax(t[k].v, 0), used[k] += t[k].v > 0;
        vmax = fmax(vmax, fmax(sum, r[i].iteration_s));
    }
    if (!(vmax > 0)) vmax = 1;
    double h = 34 + n * row + 24 + 40;
    fprintf(f, "<g class=\"panel\" data-box=\"0 %s %s %s\">\n", px(top).s, px(W).s,
            px(h).s);
    fprintf(f, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" font-size=\"14\" "
               "font-weight=\"bold\">Time per iteration of the top %d, term by term "
               "(the critical pipeline stage)</text>\n",
            px(W / 2).s, px(top + 20).s, n);
    bar_axis(f, x0, x1, y0 - 4, y0 + n * row, vmax, 1, "s");
    for (int i = 0; i < n; i++) {
        double y = y0 + i * row, x = x0;
        row_label(p, i, y);
        est_time_terms(&r[i].time, 0, t);
        for (int k = 0; k < EST_TIME_TERMS; k++) {
            if (!(t[k].v > 0)) continue;
            double w = t[k].v / vmax * (x1 - x0);
            fprintf(f, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"15\" "
                       "fill=\"%s\"><title>%s: %s s</title></rect>\n",
                    px(x).s, px(y).s, px(w).s, term_colours[k], t[k].name,
                    fx(t[k].v, 4).s);
            x += w;
        }
        fprintf(f, "<text x=\"%s\" y=\"%s\">%s s</text>\n", px(x + 5).s,
                px(y + 12).s, fx(r[i].iteration_s, 3).s);
    }
    legend g = {f, 20, y0 + n * row + 34, 20, W - 20};
    fputs("<g font-size=\"11\">\n", f);
    for (int k = 0; k < EST_TIME_TERMS; k++) {
        if (!used[k]) continue;
        char name[48];
        snprintf(name, sizeof name, "%s", t[k].name);
        for (char *c = name; *c; c++)
            if (*c == '_') *c = ' ';
        lg_swatch(&g, term_colours[k], name);
    }
    fputs("</g>\n</g>\n", f);
    return g.y + 14;
}

/* The peak of each top layout as est_memory splits it at the moment that
 * sets it (the backward, or the optimizer step), against the GPU's memory
 * and the peak the search admits (search_memory_limit). */
#define MEM_TERMS 7
static double memory_panel(const pic *p, const est_result *r, int n, double top)
{
    static const bar_term terms[MEM_TERMS] = {
        {"weights", "#1f77b4"},
        {"gradients", "#ff7f0e"},
        {"optimizer states", "#2ca02c"},
        {"fp8 weight copies", "#9467bd"},
        {"activations (or the step's fp32 gradient copy)", "#e377c2"},
        {"CUDA context + NCCL", "#8c564b"},
        {"workspaces, buffers, other", "#c7c7c7"}};
    FILE *f = p->f;
    const double G = 1073741824.0;
    double x0 = p->bar_x0, x1, row = 22, y0 = top + 50, textw = 0;
    double vmax = 0, used[MEM_TERMS] = {0}, v[BARS_MAX][MEM_TERMS];
    double cap[BARS_MAX], lim[BARS_MAX];
    char said[BARS_MAX][200];
    for (int i = 0; i < n; i++) {
        const est_memory *m = &r[i].mem;
        const search_system *sy = &p->q->systems[p->a->ranked[i].sys];
        cap[i] = sy->ctx.gpu->mem_bytes;
        lim[i] = search_memory_limit(p->q, sy, &r[i].layout);
        double t[MEM_TERMS] = {m->weights, m->grads, m->optimizer, m->fp8_weights,
                               m->peak_in_step ? m->step_transient : m->activations,
                               m->context + m->nccl, 0};
        double sum = 0;
        for (int k = 0; k < MEM_TERMS - 1; k++) sum += t[k] = fmax(t[k], 0);
        t[MEM_TERMS - 1] = fmax(m->total - sum, 0);
        for (int k = 0; k < MEM_TERMS; k++) v[i][k] = t[k], used[k] += t[k] > 0;
        vmax = fmax(vmax, fmax(m->total, cap[i]));
        snprintf(said[i], sizeof said[i], "%s GiB of %s, admits %s (%s %%)",
                 fx(m->total / G, 1).s, fx(cap[i] / G, 0).s, fx(lim[i] / G, 1).s,
                 fx(100 * lim[i] / cap[i], 0).s);
        textw = fmax(textw, CHAR_W * (double)strlen(said[i]));
    }
    x1 = W - 20 - textw;
    if (!(vmax > 0)) vmax = 1;
    double h = 50 + n * row + 24 + 58;
    fprintf(f, "<g class=\"panel\" data-box=\"0 %s %s %s\">\n", px(top).s, px(W).s,
            px(h).s);
    fprintf(f, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" font-size=\"14\" "
               "font-weight=\"bold\">Estimated peak memory per GPU of the top %d "
               "(the busiest stage)</text>\n",
            px(W / 2).s, px(top + 20).s, n);
    fprintf(f, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" font-size=\"11\">",
            px(W / 2).s, px(top + 36).s);
    if (p->q->max_memory_fraction > 0)
        fprintf(f, "admitted: peak within --max-memory-fraction %s of the GPU",
                fx(p->q->max_memory_fraction, 3).s);
    else
        fputs("admitted: peak plus the margin measured for the framework's runs "
              "fits the GPU", f);
    fputs("</text>\n", f);
    bar_axis(f, x0, x1, y0 - 4, y0 + n * row, vmax, G, "GiB");
    for (int i = 0; i < n; i++) {
        double y = y0 + i * row, x = x0;
        row_label(p, i, y);
        for (int k = 0; k < MEM_TERMS; k++) {
            if (!(v[i][k] > 0)) continue;
            double w = v[i][k] / vmax * (x1 - x0);
            fprintf(f, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"15\" "
                       "fill=\"%s\"><title>%s: %s GiB</title></rect>\n",
                    px(x).s, px(y).s, px(w).s, terms[k].colour, terms[k].name,
                    fx(v[i][k] / G, 2).s);
            x += w;
        }
        double xc = x0 + cap[i] / vmax * (x1 - x0), xl = x0 + lim[i] / vmax * (x1 - x0);
        fprintf(f,
                "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#b00\" "
                "stroke-width=\"2\"/><line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" "
                "stroke=\"#b00\" stroke-width=\"1.3\" stroke-dasharray=\"3,2\"/>\n",
                px(xc).s, px(y - 3).s, px(xc).s, px(y + row - 3).s, px(xl).s,
                px(y - 3).s, px(xl).s, px(y + row - 3).s);
        fprintf(f, "<text x=\"%s\" y=\"%s\" font-size=\"11\">%s</text>\n",
                px(fmax(x, xc) + 6).s, px(y + 12).s, said[i]);
    }
    legend g = {f, 20, y0 + n * row + 34, 20, W - 20};
    fputs("<g font-size=\"11\">\n", f);
    for (int k = 0; k < MEM_TERMS; k++)
        if (used[k]) lg_swatch(&g, terms[k].colour, terms[k].name);
    lg_item(&g, "<path d=\"M0,-6V6\" stroke=\"#b00\" stroke-width=\"2\"/>",
            "the GPU's memory");
    lg_item(&g, "<path d=\"M0,-6V6\" stroke=\"#b00\" stroke-width=\"1.3\" "
                "stroke-dasharray=\"3,2\"/>",
            "the largest peak admitted");
    fputs("</g>\n</g>\n", f);
    return g.y + 14;
}

/* ---- the file ----------------------------------------------------------- */

char *plot_search_svg(const search_request *q, const search_answer *a,
                      const char *version, size_t *len)
{
    pic p = {0};
    p.q = q, p.a = a;
    p.tok = q->tokens > 0;
    double its = p.tok ? q->tokens / ((double)q->base.gbs * (double)q->base.seq) : 1;
    p.xs = its, p.ys = p.tok ? its / 86400 : 1;
    /* The ranges, and the GPU bins, over every point the picture holds. */
    double x0 = INFINITY, x1 = 0, y0 = INFINITY, y1 = 0;
    p.gbin_lo = 99, p.gbin_hi = 0;
    for (int pass = 0; pass < 3; pass++) {
        const search_point *s = pass == 0 ? a->points : pass == 1 ? a->front : a->ranked;
        int64_t n = pass == 0 ? a->n_points : pass == 1 ? a->n_front : a->n_ranked;
        for (int64_t i = 0; i < n; i++) {
            x0 = fmin(x0, pt_x(&p, &s[i])), x1 = fmax(x1, pt_x(&p, &s[i]));
            y0 = fmin(y0, pt_y(&p, &s[i])), y1 = fmax(y1, pt_y(&p, &s[i]));
            int b = log2i(s[i].gpus);
            if (b < p.gbin_lo) p.gbin_lo = b;
            if (b > p.gbin_hi) p.gbin_hi = b;
        }
    }
    if (p.gbin_lo > p.gbin_hi) p.gbin_lo = p.gbin_hi = 0;
    for (int pass = 0; pass < 3; pass++) {
        const search_point *s = pass == 0 ? a->points : pass == 1 ? a->front : a->ranked;
        int64_t n = pass == 0 ? a->n_points : pass == 1 ? a->n_front : a->n_ranked;
        for (int64_t i = 0; i < n; i++) {
            int k = colour_of(&p, s[i].gpus);
            if (p.colour_min[k] == 0 || s[i].gpus < p.colour_min[k]) p.colour_min[k] = s[i].gpus;
            if (s[i].gpus > p.colour_max[k]) p.colour_max[k] = s[i].gpus;
        }
    }
    axis ax, ay;
    ax_fit(&ax, x0, x1, 90, W - 30);
    ax_fit(&ay, y0, y1, 0, 1);
    /* The zoom: when the front fills under a third of the width. */
    int zoom = 0;
    axis zx, zy;
    if (a->n_front >= 2) {
        double f0 = pt_x(&p, &a->front[0]), f1 = pt_x(&p, &a->front[a->n_front - 1]);
        zoom = ax_px(&ax, f1) - ax_px(&ax, f0) < (ax.px1 - ax.px0) / 3;
        double t0 = INFINITY, t1 = 0;
        for (int i = 0; i < a->n_front; i++)
            t0 = fmin(t0, pt_y(&p, &a->front[i])), t1 = fmax(t1, pt_y(&p, &a->front[i]));
        ax_fit(&zx, f0, f1, 0, 1);
        ax_fit(&zy, t0, t1, 0, 1);
        /* Room for the label of the costliest point right of it: the box
         * reaches further right, so that the point sits at u of the
         * width. */
        char t[160];
        label_of(&p, &a->front[a->n_front - 1], t, sizeof t);
        double u = 1 - (CHAR_W * (double)strlen(t) + 30) / (ax.px1 - ax.px0);
        u = u < 0.5 ? 0.5 : u > 0.95 ? 0.95 : u;
        if (zx.logs)
            zx.hi = pow(10, log10(zx.lo) + (log10(f1) - log10(zx.lo)) / u);
        else
            zx.hi = zx.lo + (f1 - zx.lo) / u;
    }
    int nb = a->n_ranked < BARS_MAX ? a->n_ranked : BARS_MAX;
    p.bar_x0 = 200;
    for (int i = 0; i < nb; i++) {
        char t[200];
        double w = 20 + CHAR_W * row_text(&p, i, t, sizeof t) + 14;
        if (w > p.bar_x0) p.bar_x0 = w;
    }
    est_result *r = tp_xcalloc((size_t)nb + 1, sizeof *r);
    for (int i = 0; i < nb; i++) search_point_estimate(q, &a->ranked[i], &r[i]);

    /* The panels into memory first: the root's height is known at the end. */
    char *body = NULL;
    size_t body_n = 0;
    FILE *f = open_memstream(&body, &body_n);
    if (!f) {
        fprintf(stderr, "trainplan: out of memory\n");
        abort();
    }
    p.f = f;
    /* The title carries the job, so that a copy of the picture keeps its
     * context: model, systems and GPUs, sequence, batch, precision,
     * tokens, the objective and the version that drew it. */
    char ctx[512];
    int cn = snprintf(ctx, sizeof ctx, "%s on", q->model->name);
    for (int i = 0; i < q->n_systems && cn > 0 && (size_t)cn < sizeof ctx; i++)
        cn += snprintf(ctx + cn, sizeof ctx - (size_t)cn, "%s %s (%s)",
                       i ? "," : "", q->systems[i].ctx.sys->name,
                       q->systems[i].ctx.gpu->name);
    if (cn > 0 && (size_t)cn < sizeof ctx)
        cn += snprintf(ctx + cn, sizeof ctx - (size_t)cn,
                       ", seq %lld, global batch %lld, %s", (long long)q->base.seq,
                       (long long)q->base.gbs, hw_dtype_names[q->base.dtype]);
    if (q->tokens > 0 && cn > 0 && (size_t)cn < sizeof ctx)
        snprintf(ctx + cn, sizeof ctx - (size_t)cn, ", %.3g tokens", q->tokens);
    fprintf(f, "<text x=\"%s\" y=\"22\" text-anchor=\"middle\" font-size=\"16\">",
            px(W / 2).s);
    esc(f, ctx);
    fprintf(f, "</text>\n<text x=\"%s\" y=\"40\" text-anchor=\"middle\" "
               "font-size=\"12\" fill=\"#444\">%lld layouts admitted, %d on the "
               "Pareto front of time against cost; best by %s; trainplan %s</text>\n",
            px(W / 2).s, (long long)a->n_points, a->n_front,
            search_objective_names[q->objective], version);
    double y = 52;
    y = scatter_panel(&p, y, &ax, &ay, "Every admitted layout");
    if (zoom) {
        char t[160];
        snprintf(t, sizeof t, "The front up close: costs within %s %% of each other",
                 fx(100 * (pt_x(&p, &a->front[a->n_front - 1]) / pt_x(&p, &a->front[0]) - 1), 1).s);
        y = scatter_panel(&p, y, &zx, &zy, t);
    }
    if (nb > 0) {
        y = time_panel(&p, r, nb, y + 10);
        y = memory_panel(&p, r, nb, y + 10);
    }
    free(r);
    if (fclose(f) || !body) {
        fprintf(stderr, "trainplan: out of memory\n");
        abort();
    }
    double h = ceil(y + 10);

    char *doc = NULL;
    size_t doc_n = 0;
    FILE *o = open_memstream(&doc, &doc_n);
    if (!o) {
        fprintf(stderr, "trainplan: out of memory\n");
        abort();
    }
    fprintf(o,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" "
            "xmlns:xlink=\"http://www.w3.org/1999/xlink\" version=\"1.1\" "
            "width=\"%s\" height=\"%s\" font-family=\"DejaVu Sans, Verdana, sans-serif\" "
            "font-size=\"12\">\n<defs>",
            fx(W, 0).s, fx(h, 0).s);
    for (int i = 0; i < N_SHAPES; i++) fputs(shapes[i], o);
    fprintf(o, "</defs>\n<rect width=\"%s\" height=\"%s\" fill=\"white\"/>\n",
            fx(W, 0).s, fx(h, 0).s);
    fwrite(body, 1, body_n, o);
    fputs("</svg>\n", o);
    free(body);
    if (fclose(o) || !doc) {
        fprintf(stderr, "trainplan: out of memory\n");
        abort();
    }
    *len = doc_n;
    return doc;
}
