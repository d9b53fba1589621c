/*
 * place.c - the geometry of the search picture's front labels (place.h):
 * a summed-area table of the panel's points, box overlaps and distances,
 * leader lines, and the untangling of labels whose leaders cross.
 */
#include "place.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp_base.h"

void place_occ_init(place_occ *o, double x0, double y0, int w, int h)
{
    o->x0 = x0, o->y0 = y0;
    o->w = w, o->h = h;
    o->sum = tp_xcalloc(((size_t)w + 1) * ((size_t)h + 1), sizeof *o->sum);
}

/* A marker centred at (x, y), px; outside the table: not counted. */
void place_occ_add(place_occ *o, double x, double y)
{
    int cx = (int)(x - o->x0), cy = (int)(y - o->y0);
    if (cx < 0 || cx >= o->w || cy < 0 || cy >= o->h) return;
    o->sum[(size_t)(cy + 1) * ((size_t)o->w + 1) + (size_t)(cx + 1)]++;
}

void place_occ_sum(place_occ *o)
{
    size_t sw = (size_t)o->w + 1;
    for (int y = 1; y <= o->h; y++)
        for (int x = 1; x <= o->w; x++)
            o->sum[(size_t)y * sw + (size_t)x] += o->sum[(size_t)(y - 1) * sw + (size_t)x] +
                                                 o->sum[(size_t)y * sw + (size_t)(x - 1)] -
                                                 o->sum[(size_t)(y - 1) * sw + (size_t)(x - 1)];
}

void place_occ_free(place_occ *o)
{
    free(o->sum);
    o->sum = NULL;
}

/* Points whose marker (radius about 4 px) reaches into the box x, y, w, h. */
int32_t place_occ_count(const place_occ *o, double x, double y, double w,
                        double h)
{
    int x0 = (int)floor(x - 4 - o->x0), x1 = (int)ceil(x + w + 4 - o->x0);
    int y0 = (int)floor(y - 4 - o->y0), y1 = (int)ceil(y + h + 4 - o->y0);
    x0 = x0 < 0 ? 0 : x0 > o->w ? o->w : x0;
    x1 = x1 < 0 ? 0 : x1 > o->w ? o->w : x1;
    y0 = y0 < 0 ? 0 : y0 > o->h ? o->h : y0;
    y1 = y1 < 0 ? 0 : y1 > o->h ? o->h : y1;
    size_t sw = (size_t)o->w + 1;
    return o->sum[(size_t)y1 * sw + (size_t)x1] - o->sum[(size_t)y0 * sw + (size_t)x1] -
           o->sum[(size_t)y1 * sw + (size_t)x0] + o->sum[(size_t)y0 * sw + (size_t)x0];
}

/* Whether label boxes a and b (x, y, w, h) overlap, or stand closer than
 * 2 px side by side. */
int place_boxes_clash(const double *a, const double *b)
{
    return a[0] < b[0] + b[2] + 2 && b[0] < a[0] + a[2] + 2 && a[1] < b[1] + b[3]
           && b[1] < a[1] + a[3];
}

/* Distance from (x, y) to the nearest point of the box bx, by, bw, bh. */
double place_box_dist(double x, double y, double bx, double by, double bw,
                      double bh)
{
    double dx = x < bx ? bx - x : x > bx + bw ? x - bx - bw : 0;
    double dy = y < by ? by - y : y > by + bh ? y - by - bh : 0;
    return sqrt(dx * dx + dy * dy);
}

/* The end of a label's leader on its box: the box's point nearest its
 * marker. */
void place_leader_end(const place_label *l, const double *b, double *ex,
                      double *ey)
{
    *ex = fmin(fmax(l->px, b[0]), b[0] + b[2]);
    *ey = fmin(fmax(l->py, b[1]), b[1] + b[3]);
}

static double cross2(double ax, double ay, double bx, double by, double cx, double cy)
{
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

/* How tangled labels i and j would be with boxes bi and bj: their
 * leaders cross (2), and their labels stack in the other order than
 * their points (1). */
static int tangled(const place_label *i, const double *bi,
                   const place_label *j, const double *bj)
{
    double ix, iy, jx, jy;
    place_leader_end(i, bi, &ix, &iy);
    place_leader_end(j, bj, &jx, &jy);
    double d1 = cross2(i->px, i->py, ix, iy, j->px, j->py);
    double d2 = cross2(i->px, i->py, ix, iy, jx, jy);
    double d3 = cross2(j->px, j->py, jx, jy, i->px, i->py);
    double d4 = cross2(j->px, j->py, jx, jy, ix, iy);
    int cross = ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0))
                && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0));
    int inverted = (i->py - j->py) * (bi[1] - bj[1]) < 0;
    return 2 * cross + inverted;
}

/* Two labels whose leaders cross, or that stack in the other order than
 * their points, trade heights where neither then
 * overlaps another label nor covers more points, and the pair is less
 * tangled after: the greedy placement gives the top point the nearest
 * free line, which can lie below the next point's. */
void place_uncross(const place_occ *occ, const place_label *L,
                   double (*box)[4], int n)
{
    for (int pass = 0; pass < n; pass++) {
        int swapped = 0;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                int bad = tangled(&L[i], box[i], &L[j], box[j]);
                if (!bad) continue;
                double a[4] = {box[i][0], box[j][1], box[i][2], box[i][3]};
                double b[4] = {box[j][0], box[i][1], box[j][2], box[j][3]};
                if (tangled(&L[i], a, &L[j], b) >= bad) continue;
                int32_t before = place_occ_count(occ, box[i][0], box[i][1], box[i][2], box[i][3]) +
                                 place_occ_count(occ, box[j][0], box[j][1], box[j][2], box[j][3]);
                int32_t after = place_occ_count(occ, a[0], a[1], a[2], a[3]) +
                                place_occ_count(occ, b[0], b[1], b[2], b[3]);
                int clash = after > before || place_boxes_clash(a, b);
                for (int k = 0; k < n && !clash; k++)
                    if (k != i && k != j)
                        clash = place_boxes_clash(a, box[k]) || place_boxes_clash(b, box[k]);
                if (clash) continue;
                memcpy(box[i], a, sizeof a);
                memcpy(box[j], b, sizeof b);
                swapped = 1;
            }
        if (!swapped) break;
    }
}
