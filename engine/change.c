/* change.c - a cost change as one engine operation (contract in change.h): derive, then attach,
 * timing each step. The derived version is dropped when the attach fails, so a caller either gets
 * a version ready to answer or nothing.
 */
#include "engine/change.h"

int gp_engine_change_links(gp_engine *e, const gp_graph *g, const gp_link_change *ch, size_t nch,
                           const int64_t *fail_routers, size_t nfail, gp_graph **out,
                           gp_change_stats *st, gp_err *err) {
    gp_graph *g2 = NULL;
    *out = NULL;
    double t0 = gp_now();
    gp_engine_hold_background(g, 1); /* g's perfect pass waits: every CPU for the change */
    int rc = gp_graph_change_links(g, ch, nch, fail_routers, nfail, &g2, err);
    double t1 = gp_now();
    if (rc == GP_OK)
        rc = gp_engine_attach_from(e, g2, g, err); /* from g's CCH: the chain stays small */
    gp_engine_hold_background(g, 0);
    if (rc != GP_OK) {
        gp_graph_unref(g2); /* NULL when the change itself failed */
        return rc;
    }
    double t2 = gp_now();
    if (st) {
        st->change_ms = (t1 - t0) * 1e3;
        st->attach_ms = (t2 - t1) * 1e3;
    }
    /* the attach's phases: event=attach, event=turns_ready, event=cch_phases (engine.c) */
    GP_LOG(GP_LOG_DEBUG,
           "event=change_links graph=%s links=%zu routers=%zu change_ms=%.1f "
           "attach_ms=%.1f",
           g2->version, nch, nfail, (t1 - t0) * 1e3, (t2 - t1) * 1e3);
    *out = g2;
    return GP_OK;
}
