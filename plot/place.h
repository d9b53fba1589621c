/*
 * place.h - where the search picture's front labels go (plot/ only): the
 * geometry svg.c's front_labels uses to place each label where it covers
 * the fewest points and no other label, and to untangle leader lines.
 * Pixels throughout; a box is {x, y, w, h} with y growing down.
 */
#ifndef TP_PLOT_PLACE_H
#define TP_PLOT_PLACE_H

#include <stdint.h>

/* A point to label, at (px, py), and what it stands for (the caller's). */
typedef struct place_label {
    double px, py;
    const void *item;
} place_label;

/* Where the panel's points are: a summed-area table of the points' marker
 * centres at one pixel, so the points a label's box would cover are
 * counted in O(1) for each of the thousands of places tried. */
typedef struct place_occ {
    double x0, y0;  /* the panel's top-left corner, px */
    int w, h;       /* cells, 1 px each */
    int32_t *sum;   /* (w + 1) x (h + 1): points with centre above-left */
} place_occ;

/* An empty table of w x h cells from (x0, y0); add the points, then sum. */
void place_occ_init(place_occ *o, double x0, double y0, int w, int h);
void place_occ_add(place_occ *o, double x, double y);
void place_occ_sum(place_occ *o);
void place_occ_free(place_occ *o);

/* Points whose marker (radius about 4 px) reaches into the box x, y, w, h. */
int32_t place_occ_count(const place_occ *o, double x, double y, double w,
                        double h);

/* Whether boxes a and b overlap, or stand closer than 2 px side by side. */
int place_boxes_clash(const double *a, const double *b);

/* Distance from (x, y) to the nearest point of the box bx, by, bw, bh. */
double place_box_dist(double x, double y, double bx, double by, double bw,
                      double bh);

/* The end of a label's leader on its box b: the box's point nearest the
 * label's point. */
void place_leader_end(const place_label *l, const double *b, double *ex,
                      double *ey);

/* Two labels whose leaders cross, or that stack in the other order than
 * their points, trade heights where neither then overlaps another label
 * nor covers more points, and the pair is less tangled after. */
void place_uncross(const place_occ *occ, const place_label *L,
                   double (*box)[4], int n);

#endif
