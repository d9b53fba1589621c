/*
 * terms.c - an iteration's time breakdown as named terms, in the one
 * order every output of the program uses (the command line's text, JSON
 * and CSV, the SVG's stacked bars): the names are the outputs' keys.
 */
#include "est.h"

int est_time_terms(const est_breakdown *b, int with_unit, est_term *t)
{
    static const char *const names[EST_TIME_TERMS][2] = {
        {"compute_fwd", "compute_fwd_s"},
        {"compute_bwd", "compute_bwd_s"},
        {"recompute", "recompute_s"},
        {"tp_comm", "tp_comm_s"},
        {"cp_comm", "cp_comm_s"},
        {"pp_p2p", "pp_p2p_s"},
        {"pp_bubble", "pp_bubble_s"},
        {"dp_comm_exposed", "dp_comm_exposed_s"},
        {"ep_comm", "ep_comm_s"},
        {"optimizer", "optimizer_s"},
        {"activation_offload", "activation_offload_s"},
        {"host_exposed", "host_exposed_s"},
    };
    const double v[EST_TIME_TERMS] = {b->fwd_s, b->bwd_s, b->recompute_s,
                                      b->tp_s, b->cp_s, b->pp_p2p_s,
                                      b->bubble_s, b->dp_s, b->ep_s,
                                      b->optimizer_s, b->offload_s,
                                      b->host_s};
    for (int i = 0; i < EST_TIME_TERMS; i++)
        t[i] = (est_term){names[i][with_unit ? 1 : 0], v[i]};
    return EST_TIME_TERMS;
}
