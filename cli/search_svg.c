/*
 * search_svg.c - the plot of a search: every admitted layout as a grey
 * dot (one per pixel: a large search has more layouts than the plot has
 * pixels), the Pareto front in red, joined, each front point titled with
 * its system and layout tag; x the cost (of training with --tokens, else
 * of one iteration, USD), y the time (days to train, else seconds per
 * iteration), each on a log scale when it spans more than a decade. Hand
 * written SVG 1.1, no dependencies; a browser opens it.
 */
#include "cli.h"
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double axis(double v, double lo, double hi, int logs, double px0,
                   double px1)
{
    double a = logs ? log10(v) : v, l = logs ? log10(lo) : lo,
           h = logs ? log10(hi) : hi;
    double u = h > l ? (a - l) / (h - l) : 0.5;
    return px0 + u * (px1 - px0);
}

static void svg_ticks(FILE *f, double lo, double hi, int logs, int horiz)
{
    for (int i = 0; i <= 4; i++) {
        double v = logs ? pow(10, log10(lo) + i * (log10(hi) - log10(lo)) / 4)
                        : lo + i * (hi - lo) / 4;
        if (horiz) {
            double x = axis(v, lo, hi, logs, 80, 760);
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"440\" x2=\"%.1f\" y2=\"446\" "
                    "stroke=\"black\"/><text x=\"%.1f\" y=\"462\" "
                    "text-anchor=\"middle\">%.4g</text>\n",
                    x, x, x, v);
        } else {
            double y = axis(v, lo, hi, logs, 440, 40);
            fprintf(f,
                    "<line x1=\"74\" y1=\"%.1f\" x2=\"80\" y2=\"%.1f\" "
                    "stroke=\"black\"/><text x=\"70\" y=\"%.1f\" "
                    "text-anchor=\"end\">%.4g</text>\n",
                    y, y, y + 4, v);
        }
    }
}

int cli_search_svg(const char *path, const search_request *q,
                   const search_answer *a, tp_err *e)
{
    cli_out o;
    int rc = cli_out_open(&o, path, e);
    if (rc) return rc;
    FILE *f = o.f;
    int tok = q->tokens > 0;
    double its = tok ? q->tokens / ((double)q->base.gbs * (double)q->base.seq) : 1;
    /* x: cost in USD (of training, or of one iteration); y: days to
     * train, or seconds per iteration. */
    double xs = its, ys = tok ? its / 86400 : 1;
    double x0 = INFINITY, x1 = 0, y0 = INFINITY, y1 = 0;
    for (int64_t i = 0; i < a->n_points; i++) {
        double x = a->points[i].cost_usd * xs, y = a->points[i].iteration_s * ys;
        x0 = fmin(x0, x), x1 = fmax(x1, x), y0 = fmin(y0, y), y1 = fmax(y1, y);
    }
    if (a->n_points == 0) x0 = y0 = 1, x1 = y1 = 10;
    int xlog = x1 > 10 * x0, ylog = y1 > 10 * y0;
    if (x1 <= x0) x1 = x0 * 1.1 + 1e-12;
    if (y1 <= y0) y1 = y0 * 1.1 + 1e-12;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" "
            "height=\"500\" font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"800\" height=\"500\" fill=\"white\"/>\n"
            "<text x=\"400\" y=\"22\" text-anchor=\"middle\" "
            "font-size=\"15\">%s: %lld layouts evaluated, Pareto front of "
            "time against cost (%d)</text>\n",
            q->model->name, (long long)a->n_points, a->n_front);
    fprintf(f,
            "<line x1=\"80\" y1=\"440\" x2=\"760\" y2=\"440\" stroke=\"black\"/>\n"
            "<line x1=\"80\" y1=\"40\" x2=\"80\" y2=\"440\" stroke=\"black\"/>\n"
            "<text x=\"420\" y=\"490\" text-anchor=\"middle\">%s (USD%s)</text>\n"
            "<text x=\"18\" y=\"240\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 18 240)\">%s%s</text>\n",
            tok ? "cost to train" : "cost of one iteration",
            xlog ? ", log scale" : "",
            tok ? "time to train (days" : "time per iteration (s",
            ylog ? ", log scale)" : ")");
    svg_ticks(f, x0, x1, xlog, 1);
    svg_ticks(f, y0, y1, ylog, 0);
    /* Every admitted point, one dot per pixel (a large search has more
     * points than the plot has pixels). */
    unsigned char *seen = tp_xcalloc(800 * 500, 1);
    fprintf(f, "<g fill=\"#aaaaaa\">\n");
    for (int64_t i = 0; i < a->n_points; i++) {
        int x = (int)lround(axis(a->points[i].cost_usd * xs, x0, x1, xlog, 80, 760));
        int y = (int)lround(axis(a->points[i].iteration_s * ys, y0, y1, ylog, 440, 40));
        if (x < 0 || x >= 800 || y < 0 || y >= 500 || seen[y * 800 + x]) continue;
        seen[y * 800 + x] = 1;
        fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"1.5\"/>\n", x, y);
    }
    fprintf(f, "</g>\n");
    free(seen);
    fprintf(f, "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" "
               "points=\"");
    for (int i = 0; i < a->n_front; i++)
        fprintf(f, "%s%.1f,%.1f", i ? " " : "",
                axis(a->front[i].cost_usd * xs, x0, x1, xlog, 80, 760),
                axis(a->front[i].iteration_s * ys, y0, y1, ylog, 440, 40));
    fprintf(f, "\"/>\n<g fill=\"#d62728\">\n");
    for (int i = 0; i < a->n_front; i++) {
        space_layout l;
        space_grid_layout(&q->systems[a->front[i].sys].grid, a->front[i].idx,
                          a->front[i].gpus, &q->base, &l);
        char tag[96];
        space_layout_tag(&l, q->systems[a->front[i].sys].ctx.sys->gpus_per_node,
                         tag, sizeof tag);
        fprintf(f,
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"><title>%s %s: %.4g "
                "s/iteration</title></circle>\n",
                axis(a->front[i].cost_usd * xs, x0, x1, xlog, 80, 760),
                axis(a->front[i].iteration_s * ys, y0, y1, ylog, 440, 40),
                q->systems[a->front[i].sys].ctx.sys->name, tag,
                a->front[i].iteration_s);
    }
    fprintf(f, "</g>\n<text x=\"760\" y=\"56\" text-anchor=\"end\" "
               "fill=\"#d62728\">red: Pareto front</text>\n</svg>\n");
    return cli_out_close(&o, 1, e);
}

