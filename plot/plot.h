/*
 * plot.h - pictures of a search's answer (issue 32's module plot/: it
 * depends on search/ and below, and nothing below depends on it; the
 * command line writes what it returns to --svg FILE).
 */
#ifndef TRAINPLAN_PLOT_H
#define TRAINPLAN_PLOT_H

#include <stddef.h>

#include "search.h"

/* The search's picture (svg.c: every admitted layout by cost and time,
 * the Pareto front labelled and zoomed, the top layouts' time and memory
 * term by term) as one self-contained SVG 1.1 document: malloc'ed text
 * of *len bytes the caller frees. version is printed in the subtitle
 * (the program's, e.g. "0.1.0"). The same bytes at any thread count;
 * allocation failure aborts with a message. */
char *plot_search_svg(const search_request *q, const search_answer *a,
                      const char *version, size_t *len);

#endif
