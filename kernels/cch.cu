/* cch.cu - the GPU CCH's device state (kernels/cch.h): a topology's device part (the upload, the
 * levels, the sweep plan of kernels/cch_plan.h laid out for the sweep kernels, the top table's and
 * piece tables' layouts), a customized CCH's metric, weights and workspace, their lifetimes, and
 * the lab's options (kernels/cch_lab.h). The kernels: customization and the plan's tables in
 * cch_customize.cu, the PHAST plan sweep in cch_sweep.cu, the level sweep and RPHAST in
 * cch_query.cu; their shared structs in cch_internal.cuh; the design in docs/gpu.md "CCH on the
 * GPU", the versions and their measurements in bench/lab_cch.cu.
 *
 * Weights are uint32 with 0xffffffff = none, customization sums saturate and flag an overflow
 * exactly as the CPU does (a shortcut is wrong only when every candidate overflowed), so the GPU's
 * customized weights are bit-identical to the CPU's (min is order-independent). Sweep distances are
 * uint64 (GP_INF unreachable).
 */
#include "kernels/cch_internal.cuh"

#include <algorithm>
#include <vector>

/* Frees what a topology part owns (device arrays, host metadata, its topology reference). */
static void topo_part_free(gp_dcch_topo *t) {
    if (!t) return;
    void *dev[] = {t->up_first,   t->up_head,    t->order,       t->tri_first,   t->tri,
                   t->d_levels,   t->d_elevels,  t->p_bin_first, t->p_bin_step,  t->p_step_first,
                   t->p_in_first, t->p_in_head,  t->p_in_edge,   t->p_out_first, t->p_out_head,
                   t->p_out_tail, t->p_out_edge, t->p_pnode,     t->p_pos,       t->p_in_ht,
                   t->p_step_arc, t->p_bin_rec,  t->p_border,    t->p_onode,     t->p_ooff,
                   t->t_first,    t->t_head,     t->t_edge,      t->q_bins,      t->q_first,
                   t->q_depth,    t->q_tmpl,     t->f_va,        t->f_perm,      t->f_vfirst,
                   t->eord,       t->cdesc};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++) cudaFree(dev[i]);
    free(t->level_first);
    free(t->edge_level);
    free(t->level_heavy);
    free(t->level_cls);
    free(t->level_chunk);
    free(t->p_phase_bin);
    free(t->p_max_nodes);
    free(t->p_max_arcs);
    free(t->p_max_steps);
    free(t->q_pent);
    free(t->q_parcs);
    free(t->q_pmaxn);
    free(t->f_ppos);
    free(t->f_pent);
    free(t->f_full);
    free(t->p_ppos);
    free(t->p_parcs);
    t->src.unref(t->src.owner);
    free(t);
}

extern "C" void gp_dcch_topo_ref(gp_dcch_topo *t) {
    __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
}

extern "C" void gp_dcch_topo_unref(gp_dcch_topo *t) {
    if (t && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0) topo_part_free(t);
}

extern "C" uint64_t gp_dcch_topo_bytes(const gp_dcch_topo *t) { return t ? t->tbytes : 0; }

/* This instance's plan weights and tables (sized by its topology part). */
static void metric_free(gp_dcch *d) {
    if (!d) return;
    void *dev[] = {d->p_in_wt, d->p_out_wt, d->t_wt, d->t_tab,
                   d->q_ent,   d->q_bad,    d->f_T,  d->p_in_pwt};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++) cudaFree(dev[i]);
    d->p_in_wt = d->p_out_wt = d->t_wt = d->q_bad = d->f_T = d->p_in_pwt = NULL;
    d->t_tab = d->q_ent = NULL;
    d->q_ok = 0;
}

static uint64_t metric_bytes(const gp_dcch_topo *t) {
    return ((uint64_t)t->p_nin + t->p_npad + t->p_nout + t->t_narcs) * 4 +
           (uint64_t)t->t_K * t->t_K * 8 + (t->q_ntab ? t->q_nent * 8 + 4 : 0) +
           (t->f_va ? t->q_nent * 4 : 0);
}

/* Points d at the topology part t (a reference the caller hands over), dropping the one it had,
 * and allocates the plan's weights and tables for it (the piece tables' layout copied). */
static int bind(gp_dcch *d, gp_dcch_topo *t, cudaStream_t s, gp_err *err) {
    int rc = GP_OK;
    if (d->tm) d->bytes -= metric_bytes(d->tm);
    metric_free(d);
    gp_dcch_graphs_free(d); /* graphs captured for the old part: dropped, and no old key matches */
    d->x_gen++;
    gp_dcch_topo_unref(d->tm);
    static_cast<gp_dcch_topo &>(*d) = *t;
    d->tm = t;
    d->p_dirty = d->pdist_cap; /* positions may have moved: every cell may be stale */
    d->p_dirty1 = d->pdist1_cap;
    CK(dput(&d->p_in_wt, (const uint32_t *)NULL, (size_t)t->p_nin, s, NULL), "allocating the plan");
    CK(dput(&d->p_in_pwt, (const uint32_t *)NULL, (size_t)t->p_npad, s, NULL),
       "allocating the plan");
    CK(dput(&d->p_out_wt, (const uint32_t *)NULL, (size_t)t->p_nout, s, NULL),
       "allocating the plan");
    if (t->t_K) {
        CK(dput(&d->t_wt, (const uint32_t *)NULL, (size_t)t->t_narcs, s, NULL),
           "allocating the top table");
        CK(dput(&d->t_tab, (const u64 *)NULL, (size_t)t->t_K * t->t_K, s, NULL),
           "allocating the top table");
    }
    if (t->q_ntab) {
        CK(dput(&d->q_ent, (const u64 *)NULL, (size_t)t->q_nent, s, NULL),
           "allocating the piece tables");
        CK(cudaMemcpyAsync(d->q_ent, t->q_tmpl, (size_t)t->q_nent * 8, cudaMemcpyDeviceToDevice, s),
           "copying the piece tables");
        CK(dput(&d->q_bad, (const uint32_t *)NULL, 1, s, NULL), "allocating the piece tables");
        if (t->f_va)
            CK(dput(&d->f_T, (const uint32_t *)NULL, (size_t)t->q_nent, s, NULL),
               "allocating the piece tables");
    }
    d->bytes += metric_bytes(t);
out:
    return rc;
}

extern "C" void gp_dcch_free(gp_dcch *d) {
    if (!d) return;
    gp_dcch_graphs_free(d);
    gp_dcch_cells_free(d);
    metric_free(d);
    void *dev[] = {d->pdist,   d->p_flag, d->ofw,       d->obw,       d->fmid,       d->bmid,
                   d->bad,     d->dist,   d->init_rank, d->init_dist, d->init_first, d->outbuf,
                   d->r_first, d->r_head, d->r_wt,      d->r_lev,     d->r_tgt,      d->p_ovf,
                   d->pdist1,  d->wit,    d->fb};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++) cudaFree(dev[i]);
    if (d->ev0) cudaEventDestroy(d->ev0);
    if (d->ev1) cudaEventDestroy(d->ev1);
    free(d->r_lev_host);
    gp_dcch_topo_unref(d->tm);
    free(d);
}

extern "C" uint64_t gp_dcch_bytes(const gp_dcch *d) {
    return d ? d->bytes + gp_dcch_topo_bytes(d->tm) : 0;
}

static int topo_plan(gp_dcch_topo *d, cudaStream_t s, gp_err *err);

/* Edges per chunk of a chunked level (gp_dcch_tune custom_chunk; a chunk's class counts are
 * packed in 16 bits each). */
static uint32_t tune_chunk(const gp_dcch_tune *tn) {
    return tn->custom_chunk > 0xffff ? 0xffff : tn->custom_chunk;
}

/* The plan fields of tn as a topology part keeps them (gp_dcch_topo.shape; 0: the default). */
static void tune_shape(const gp_dcch_tune *tn, uint32_t shape[10]) {
    shape[0] = tn->plan_base ? tn->plan_base : PLAN_BASE;
    shape[1] = tn->plan_ratio ? tn->plan_ratio : PLAN_RATIO;
    shape[2] = tn->bin_cap ? tn->bin_cap : PLAN_BIN_CAP;
    shape[3] = tn->top_max;
    shape[4] = tn->piece_max;
    shape[5] = tn->smem_max;
    shape[6] = tn->tiny_tri;
    shape[7] = tn->heavy_tri;
    shape[8] = tune_chunk(tn);
    shape[9] = tn->chunk_min;
}

/* An edge's class in a level launched alone (kernels/cch_customize.cu customize_level) by its
 * triangles: 0 a thread (fewer than tiny_tri), 1 SHORT_W lanes (at most SHORT_TRI), 2 a warp,
 * 3 a block (more than heavy_tri). */
static int edge_class(uint64_t nt, const gp_dcch_tune *tn) {
    if (nt < tn->tiny_tri) return 0;
    if (nt <= SHORT_TRI) return 1;
    return tn->heavy_tri && nt > tn->heavy_tri ? 3 : 2;
}

/* A topology part with the plan fields of tn (gp_dcch_topo_new: the process-wide ones). */
static int topo_new(const gp_dcch_topo_src *t, cudaStream_t s, const gp_dcch_tune *tn,
                    gp_dcch_topo **out, gp_err *err) {
    int rc = GP_OK;
    gp_dcch_topo *d = (gp_dcch_topo *)calloc(1, sizeof *d);
    if (!d) return gp_err_set(err, GP_ENOMEM, "out of memory for the device CCH");
    d->refs = 1;
    t->ref(t->owner);
    d->src = *t;
    d->n = t->n;
    d->m = t->m;
    d->nlevels = t->nlevels;
    d->ntri = t->ntri;
    d->level_first = (uint32_t *)malloc(((size_t)t->nlevels + 1) * sizeof(uint32_t));
    d->edge_level = (uint32_t *)malloc(((size_t)t->nlevels + 1) * sizeof(uint32_t));
    d->level_heavy = (unsigned char *)malloc((size_t)t->nlevels + 1);
    d->level_cls = (uint32_t *)malloc(((size_t)t->nlevels + 1) * 3 * sizeof(uint32_t));
    d->level_chunk = (uint32_t *)malloc(((size_t)t->nlevels + 1) * sizeof(uint32_t));
    uint32_t *eord = (uint32_t *)malloc(((size_t)t->m + 1) * sizeof(uint32_t));
    std::vector<uint32_t> cdesc; /* the chunks' n1 | n8 << 16 */
    if (!d->level_first || !d->edge_level || !d->level_heavy || !d->level_cls || !d->level_chunk ||
        !eord) {
        free(eord);
        topo_part_free(d);
        return gp_err_set(err, GP_ENOMEM, "out of memory for the device CCH");
    }
    memcpy(d->level_first, t->level_first, ((size_t)t->nlevels + 1) * sizeof(uint32_t));
    for (uint32_t l = 0; l <= t->nlevels; l++) d->edge_level[l] = t->up_first[t->level_first[l]];
    for (uint32_t l = 0; l < t->nlevels; l++)
        d->level_heavy[l] = t->tri_first[d->edge_level[l + 1]] - t->tri_first[d->edge_level[l]] >
                            SMALL_TRI;
    d->level_heavy[t->nlevels] = 0;
    d->chunk = tune_chunk(tn);
    for (uint32_t l = 0; l < t->nlevels; l++) { /* tiny, short, long, heavy edges */
        const uint32_t lo = d->edge_level[l], hi = d->edge_level[l + 1];
        uint32_t at[4] = {0, 0, 0, 0};
        for (uint32_t e = lo; e < hi; e++)
            at[edge_class(t->tri_first[e + 1] - t->tri_first[e], tn)]++;
        for (int k = 0; k < 3; k++) d->level_cls[3 * (size_t)l + k] = at[k];
        d->level_chunk[l] = (uint32_t)cdesc.size();
        if (d->chunk && hi - lo >= tn->chunk_min && hi - lo > SMALL_ITEMS / 8 && at[3] < hi - lo) {
            /* the heavy edges, then chunk by chunk of the others (in id order) by class */
            uint32_t nh = 0, ch[3] = {0, 0, 0}, in = 0;
            std::vector<uint32_t> part[3];
            for (uint32_t e = lo; e < hi; e++)
                if (edge_class(t->tri_first[e + 1] - t->tri_first[e], tn) == 3) eord[lo + nh++] = e;
            uint32_t at_e = lo + nh;
            for (uint32_t e = lo; e <= hi; e++) {
                if (e == hi || in == d->chunk) { /* close the chunk */
                    if (in) {
                        for (int k = 0; k < 3; k++)
                            for (uint32_t x : part[k]) eord[at_e++] = x;
                        cdesc.push_back(ch[0] | ch[1] << 16);
                    }
                    for (int k = 0; k < 3; k++) part[k].clear(), ch[k] = 0;
                    in = 0;
                    if (e == hi) break;
                }
                const int k = edge_class(t->tri_first[e + 1] - t->tri_first[e], tn);
                if (k == 3) continue;
                part[k].push_back(e), ch[k]++, in++;
            }
            continue;
        }
        at[3] = lo + at[0] + at[1] + at[2], at[2] = lo + at[0] + at[1], at[1] = lo + at[0],
        at[0] = lo;
        for (uint32_t e = lo; e < hi; e++)
            eord[at[edge_class(t->tri_first[e + 1] - t->tri_first[e], tn)]++] = e;
    }
    d->level_chunk[t->nlevels] = (uint32_t)cdesc.size();
    for (int k = 0; k < 3; k++) d->level_cls[3 * (size_t)t->nlevels + k] = 0;
    {
        int dev = 0;
        CK(cudaGetDevice(&dev), "cudaGetDevice");
        CK(cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, dev),
           "device attributes");
        CK(cudaDeviceGetAttribute(&d->smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
           "device attributes");
    }
    CK(dput(&d->up_first, t->up_first, (size_t)t->n + 1, s, &d->tbytes), "uploading the CCH");
    CK(dput(&d->up_head, t->up_head, (size_t)t->m, s, &d->tbytes), "uploading the CCH");
    CK(dput(&d->order, t->order, (size_t)t->n, s, &d->tbytes), "uploading the CCH");
    CK(dput(&d->tri_first, (const uint64_t *)t->tri_first, (size_t)t->m + 1, s, &d->tbytes),
       "uploading the CCH triangles");
    CK(dput(&d->tri, t->tri, (size_t)t->ntri * 2, s, &d->tbytes), "uploading the CCH triangles");
    CK(dput(&d->eord, (const uint32_t *)eord, (size_t)t->m, s, &d->tbytes),
       "uploading the CCH triangles");
    if (!cdesc.empty())
        CK(dput(&d->cdesc, (const uint32_t *)cdesc.data(), cdesc.size(), s, &d->tbytes),
           "uploading the CCH triangles");
    CK(dput(&d->d_levels, d->level_first, (size_t)t->nlevels + 1, s, &d->tbytes),
       "uploading levels");
    CK(dput(&d->d_elevels, d->edge_level, (size_t)t->nlevels + 1, s, &d->tbytes),
       "uploading levels");
    CK(gp_dcch_customize_attrs(d->smem_max), "allowing the kernels' shared memory");
    CK(gp_dcch_sweep_attrs(d->smem_max), "allowing the kernels' shared memory");
    CK(gp_dcch_level_attrs(), "allowing the kernels' shared memory");
    /* a smaller shared-memory budget reaches the paths for bins that do not fit (the lab's
     * --small run under compute-sanitizer) */
    if (tn->smem_max > 0 && tn->smem_max < (uint32_t)d->smem_max) d->smem_max = (int)tn->smem_max;
    tune_shape(tn, d->shape);
    if ((rc = topo_plan(d, s, err)) != GP_OK) goto out;
    CK(cudaStreamSynchronize(s), "uploading the CCH");
    free(eord);
    *out = d;
    return GP_OK;
out:
    cudaStreamSynchronize(s);
    free(eord);
    topo_part_free(d);
    return rc;
}

extern "C" int gp_dcch_topo_new(const gp_dcch_topo_src *t, void *stream, gp_dcch_topo **out,
                                gp_err *err) {
    return topo_new(t, (cudaStream_t)stream, gp_dcch_tune_now(), out, err);
}

/* The sweep's fields of tn into d (from 32-bit warp-bin cells again until one saturates). */
static void sweep_tune(gp_dcch *d, const gp_dcch_tune *tn) {
    d->levels = tn->levels;
    d->profile = tn->profile;
    d->custom_profile = tn->custom_profile;
    d->custom_profile_arg = tn->custom_profile_arg;
    d->custom_graph = tn->custom_graph;
    if (d->custom_exec && d->custom_pdl != tn->custom_pdl) {
        cudaGraphExecDestroy(d->custom_exec); /* captured with the other launches */
        d->custom_exec = NULL;
    }
    d->custom_pdl = tn->custom_pdl;
    d->paths = tn->paths;
    d->wkw = tn->wkw >= 1 && tn->wkw <= WKW_MAX && !(tn->wkw & (tn->wkw - 1)) ? tn->wkw : WKW_MAX;
    d->sat = tn->sat > 0 && tn->sat < INF32 ? tn->sat : CELL_SAT;
    d->wbin_min = tn->wbin_per_sm * (uint32_t)d->sms;
    d->wmulti_min = tn->wmulti_per_sm * (uint32_t)d->sms;
    d->gather_min = tn->gather_min;
    d->w64 = 0;
    d->r_w64 = 0;
}

extern "C" int gp_dcch_new(gp_dcch_topo *t, const void *owner, const uint32_t *ofw,
                           const uint32_t *obw, void *stream, gp_dcch **out, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    if (t->src.owner != owner)
        return gp_err_set(err, GP_EINVAL, "device CCH: another topology's device part");
    gp_dcch *d = (gp_dcch *)calloc(1, sizeof *d);
    if (!d) return gp_err_set(err, GP_ENOMEM, "out of memory for the device CCH");
    gp_dcch_topo_ref(t);
    if ((rc = bind(d, t, s, err)) != GP_OK) goto out;
    CK(cudaEventCreate(&d->ev0), "cudaEventCreate");
    CK(cudaEventCreate(&d->ev1), "cudaEventCreate");
    CK(dput(&d->ofw, ofw, (size_t)t->m, s, &d->bytes), "uploading the CCH weights");
    CK(dput(&d->obw, obw, (size_t)t->m, s, &d->bytes), "uploading the CCH weights");
    CK(dput(&d->fb, (const uint2 *)NULL, (size_t)t->m, s, &d->bytes), "allocating weights");
    CK(dput(&d->fmid, (const uint32_t *)NULL, (size_t)t->m, s, &d->bytes), "allocating witnesses");
    CK(dput(&d->bmid, (const uint32_t *)NULL, (size_t)t->m, s, &d->bytes), "allocating witnesses");
    CK(dput(&d->bad, (const uint32_t *)NULL, 1, s, &d->bytes), "allocating a flag");
    CK(dput(&d->p_ovf, (const uint32_t *)NULL, 1, s, &d->bytes), "allocating a flag");
    CK(cudaMemsetAsync(d->p_ovf, 0, 4, s), "allocating a flag");
    CK(cudaStreamSynchronize(s), "uploading the CCH weights");
    sweep_tune(d, gp_dcch_tune_now());
    *out = d;
    return GP_OK;
out:
    cudaStreamSynchronize(s);
    gp_dcch_free(d);
    return rc;
}

/* Builds the sweep plan of a topology part (d->shape: thresholds, bin size, table caps): its
 * device arrays and host metadata, the top table's and piece tables' layouts. */
static int topo_plan(gp_dcch_topo *d, cudaStream_t s, gp_err *err) {
    const gp_dcch_topo_src *t = &d->src;
    int rc = GP_OK;
    /* the plan, its top table (a row fits in shared memory: top_table) and piece tables, built on
     * the host by the topology's owner */
    gp_dcch_plan_req rq = {d->shape[0],
                           d->shape[1],
                           (uint32_t)d->sms * PLAN_BLOCKS_PER_SM,
                           d->shape[2],
                           d->shape[3] < (uint32_t)d->smem_max / 8 ? d->shape[3]
                                                                   : (uint32_t)d->smem_max / 8,
                           PIECE_MIN_STEPS,
                           PIECE_MAX_BIN,
                           d->shape[4]};
    gp_dcch_plan pl = {NULL, NULL, NULL};
    uint32_t *pnode = NULL;
    rc = t->plan(t->owner, &rq, &pl, err);
    if (rc) return rc;
    const gp_cch_plan *p = pl.plan;
    const gp_cch_top *top = pl.top;
    const gp_cch_ptab *pt = pl.pt;
    d->p_nphases = p->nphases;
    d->p_nbins = p->nbins;
    d->p_nin = p->in_first[p->n];
    d->p_nout = p->out_first[p->n];
    d->p_phase_bin = (uint32_t *)malloc(((size_t)p->nphases + 1) * 4);
    d->p_max_nodes = (uint32_t *)calloc((size_t)p->nphases + 1, 4);
    d->p_max_arcs = (uint32_t *)calloc((size_t)p->nphases + 1, 4);
    d->p_max_steps = (uint32_t *)calloc((size_t)p->nphases + 1, 4);
    d->p_ppos = (uint32_t *)calloc((size_t)p->nphases + 1, 4);
    d->p_parcs = (uint32_t *)calloc((size_t)p->nphases + 1, 4);
    pnode = (uint32_t *)malloc((size_t)p->n * 4 + 4);
    if (!d->p_phase_bin || !d->p_max_nodes || !d->p_max_arcs || !d->p_max_steps || !d->p_ppos ||
        !d->p_parcs || !pnode) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory for the sweep plan");
        goto out;
    }
    memcpy(d->p_phase_bin, p->phase_bin, ((size_t)p->nphases + 1) * 4);
    for (uint32_t f = 0; f < p->nphases; f++)
        for (uint32_t b = p->phase_bin[f]; b < p->phase_bin[f + 1]; b++) {
            uint32_t nodes = p->bin_first[b + 1] - p->bin_first[b];
            uint32_t arcs = p->in_first[p->bin_first[b + 1]] - p->in_first[p->bin_first[b]];
            d->p_ppos[f] += nodes;
            d->p_parcs[f] += arcs;
            if (nodes > d->p_max_nodes[f]) d->p_max_nodes[f] = nodes;
            if (arcs > d->p_max_arcs[f]) d->p_max_arcs[f] = arcs;
            if (p->bin_step[b + 1] - p->bin_step[b] > d->p_max_steps[f])
                d->p_max_steps[f] = p->bin_step[b + 1] - p->bin_step[b];
        }
    d->p_mid = p->bin_first[p->phase_bin[p->nphases - 1]];
    d->p_lim = p->max_bin_nodes > p->max_bin_out ? p->max_bin_nodes : p->max_bin_out;
    for (uint32_t x = 0; x < p->n; x++) pnode[x] = t->order[p->rank[x]];
    CK(dput(&d->p_bin_first, p->bin_first, (size_t)p->nbins + 1, s, &d->tbytes),
       "uploading the plan");
    CK(dput(&d->p_bin_step, p->bin_step, (size_t)p->nbins + 1, s, &d->tbytes),
       "uploading the plan");
    CK(dput(&d->p_step_first, p->step_first, (size_t)p->nsteps + 1, s, &d->tbytes),
       "uploading the plan");
    CK(dput(&d->p_in_first, p->in_first, (size_t)p->n + 1, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_in_head, p->in_head, (size_t)d->p_nin, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_in_edge, p->in_edge, (size_t)d->p_nin, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_out_first, p->out_first, (size_t)p->n + 1, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_out_head, p->out_head, (size_t)d->p_nout, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_out_tail, p->out_tail, (size_t)d->p_nout, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_out_edge, p->out_edge, (size_t)d->p_nout, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_pnode, pnode, (size_t)p->n, s, &d->tbytes), "uploading the plan");
    CK(dput(&d->p_pos, p->pos, (size_t)p->n, s, &d->tbytes), "uploading the plan");
    { /* the arc-lane warp bins' layout: the inner arcs step by step, each step's padded with
       * dummy arcs (0, weight INF) to a multiple of PASS_ARCS (sweep_wpass: a pass never spans
       * two steps or two 32-arc chunks), an arc as its head and tail (offsets in its bin times
       * 16, head << 4 | tail << 20, in bins of fewer than 4096 nodes; 0 in larger ones, which
       * never run as warp bins), and each step's first arc there */
        uint32_t *sa = (uint32_t *)malloc(((size_t)p->nsteps + 1) * 4);
        uint64_t npad = 0;
        for (uint32_t st = 0; sa && st < p->nsteps; st++) {
            sa[st] = (uint32_t)npad;
            const uint32_t na = p->in_first[p->step_first[st + 1]] - p->in_first[p->step_first[st]];
            npad += (na + PASS_ARCS - 1) / PASS_ARCS * PASS_ARCS;
        }
        if (sa) sa[p->nsteps] = (uint32_t)npad;
        if (npad >= INF32) {
            free(sa);
            rc = gp_err_set(err, GP_ETOOBIG, "the sweep plan has too many inner arcs");
            goto out;
        }
        d->p_nsteps = p->nsteps;
        d->p_npad = (uint32_t)npad;
        uint32_t *ht = (uint32_t *)calloc((size_t)npad + 1, 4);
        uint32_t *on = (uint32_t *)malloc((size_t)p->n * 4 + 4); /* (OSORT below) */
        uint16_t *oo = (uint16_t *)malloc((size_t)p->n * 2 + 2);
        if (!ht || !sa || !on || !oo) {
            free(ht);
            free(sa);
            free(on);
            free(oo);
            rc = gp_err_set(err, GP_ENOMEM, "out of memory for the sweep plan");
            goto out;
        }
        for (uint32_t b = 0; b < p->nbins; b++) {
            const uint32_t p0 = p->bin_first[b], p1 = p->bin_first[b + 1];
            if (p1 - p0 >= 4096) continue;
            for (uint32_t st = p->bin_step[b]; st < p->bin_step[b + 1]; st++) {
                uint32_t j = sa[st];
                for (uint32_t x = p->step_first[st]; x < p->step_first[st + 1]; x++)
                    for (uint32_t a = p->in_first[x]; a < p->in_first[x + 1]; a++)
                        ht[j++] = p->in_head[a] << 4 | (x - p0) << 20;
            }
        }
        /* the output order: each bin's nodes ascending with their offsets, so that a warp
         * bin's 32 lanes store to neighbouring nodes (gen:1M's last phase: 9.5 32-byte sectors
         * per store of 64-bit distances instead of 19.6; 7.1 if the nodes were consecutive) */
        std::vector<uint64_t> key;
        for (uint32_t b = 0; b < p->nbins; b++) {
            const uint32_t p0 = p->bin_first[b], p1 = p->bin_first[b + 1];
            if (p1 - p0 >= 65536) { /* (never a warp bin) */
                for (uint32_t x = p0; x < p1; x++) on[x] = pnode[x], oo[x] = 0;
                continue;
            }
            key.resize(p1 - p0);
            for (uint32_t x = p0; x < p1; x++) key[x - p0] = (uint64_t)pnode[x] << 16 | (x - p0);
            std::sort(key.begin(), key.end());
            for (uint32_t x = p0; x < p1; x++) {
                on[x] = (uint32_t)(key[x - p0] >> 16);
                oo[x] = (uint16_t)(key[x - p0] & 0xffffu);
            }
        }
        cudaError_t e1 = dput(&d->p_in_ht, ht, (size_t)d->p_npad, s, &d->tbytes);
        cudaError_t e2 =
            e1 == cudaSuccess ? dput(&d->p_step_arc, sa, (size_t)p->nsteps + 1, s, &d->tbytes) : e1;
        std::vector<uint4> rec((size_t)p->nbins + 1);
        for (uint32_t b = 0; b <= p->nbins; b++) {
            const uint32_t q = p->bin_first[b], st = p->bin_step[b];
            rec[b] = make_uint4(q, st, sa[st], p->out_first[q]);
        }
        if (e2 == cudaSuccess) e2 = dput(&d->p_bin_rec, rec.data(), rec.size(), s, &d->tbytes);
        if (e2 == cudaSuccess) e2 = dput(&d->p_onode, on, (size_t)p->n, s, &d->tbytes);
        /* the warp bins' order: within each phase, the bins by their smallest node (on[] is
         * ascending per bin), so that the bins in flight together store to neighbouring nodes
         * and complete each other's 32-byte sectors of the output (the bins of a phase are
         * independent: any order is a valid sweep) */
        std::vector<uint32_t> bo(p->nbins ? p->nbins : 1);
        for (uint32_t f = 0; f < p->nphases; f++) {
            const uint32_t b0 = p->phase_bin[f], b1 = p->phase_bin[f + 1];
            for (uint32_t b = b0; b < b1; b++) bo[b] = b;
            std::stable_sort(bo.begin() + b0, bo.begin() + b1, [&](uint32_t x, uint32_t y) {
                const uint32_t vx = p->bin_first[x + 1] > p->bin_first[x] ? on[p->bin_first[x]]
                                                                          : UINT32_MAX;
                const uint32_t vy = p->bin_first[y + 1] > p->bin_first[y] ? on[p->bin_first[y]]
                                                                          : UINT32_MAX;
                return vx < vy;
            });
        }
        if (e2 == cudaSuccess) e2 = dput(&d->p_border, bo.data(), bo.size(), s, &d->tbytes);
        if (e2 == cudaSuccess) e2 = dput(&d->p_ooff, oo, (size_t)p->n, s, &d->tbytes);
        if (e2 == cudaSuccess) e2 = cudaStreamSynchronize(s); /* before the host copies go */
        free(ht);
        free(sa);
        free(on);
        free(oo);
        CK(e2, "uploading the plan");
    }
    if (top) {
        d->t_K = top->K;
        d->t_nph = top->nphases;
        d->t_narcs = top->first[top->K];
        CK(dput(&d->t_first, top->first, (size_t)top->K + 1, s, &d->tbytes),
           "uploading the top table");
        CK(dput(&d->t_head, top->head, (size_t)d->t_narcs, s, &d->tbytes),
           "uploading the top table");
        CK(dput(&d->t_edge, top->edge, (size_t)d->t_narcs, s, &d->tbytes),
           "uploading the top table");
    }
    if (pt && pt->ntab) {
        d->q_pent = (uint64_t *)calloc((size_t)p->nphases + 1, 8);
        d->q_parcs = (uint64_t *)calloc((size_t)p->nphases + 1, 8);
        d->q_pmaxn = (uint32_t *)calloc((size_t)p->nphases + 1, 4);
        if (!d->q_pent || !d->q_parcs || !d->q_pmaxn) {
            rc = gp_err_set(err, GP_ENOMEM, "out of memory for the piece tables");
            goto out;
        }
        for (uint32_t f = 0; f < p->nphases; f++)
            for (uint32_t b = p->phase_bin[f]; b < p->phase_bin[f + 1]; b++) {
                uint32_t N = p->bin_first[b + 1] - p->bin_first[b];
                d->q_parcs[f] += p->in_first[p->bin_first[b + 1]] - p->in_first[p->bin_first[b]];
                d->q_pent[f] += pt->first[b + 1] - pt->first[b];
                if (pt->first[b + 1] > pt->first[b] && N > d->q_pmaxn[f]) d->q_pmaxn[f] = N;
            }
        d->q_ntab = pt->ntab;
        d->q_max_steps = pt->max_steps;
        CK(dput(&d->q_bins, pt->bins, (size_t)pt->ntab, s, &d->tbytes),
           "uploading the piece tables");
        CK(dput(&d->q_first, pt->first, (size_t)p->nbins + 1, s, &d->tbytes),
           "uploading the piece tables");
        CK(dput(&d->q_depth, pt->depth, (size_t)p->n, s, &d->tbytes), "uploading the piece tables");
        d->q_nent = pt->first[p->nbins];
        CK(dput(&d->q_tmpl, (const u64 *)pt->ent, (size_t)pt->first[p->nbins], s, &d->tbytes),
           "uploading the piece tables");
        { /* flat phases: the entries with absolute positions, the phases' ranges */
            u64 *va = (u64 *)malloc((size_t)d->q_nent * 8 + 8);
            d->f_ppos = (uint32_t *)malloc(((size_t)p->nphases + 1) * 4);
            d->f_pent = (uint64_t *)malloc(((size_t)p->nphases + 1) * 8);
            d->f_full = (unsigned char *)calloc((size_t)p->nphases + 1, 1);
            if (!va || !d->f_ppos || !d->f_pent || !d->f_full) {
                free(va);
                rc = gp_err_set(err, GP_ENOMEM, "out of memory for the piece tables");
                goto out;
            }
            for (uint32_t f = 0; f <= p->nphases; f++) {
                d->f_ppos[f] = p->bin_first[p->phase_bin[f]];
                d->f_pent[f] = pt->first[p->phase_bin[f]];
                if (f == p->nphases) break;
                d->f_full[f] = 1;
                for (uint32_t b = p->phase_bin[f]; b < p->phase_bin[f + 1]; b++)
                    if (pt->first[b + 1] == pt->first[b]) d->f_full[f] = 0;
            }
            /* sorted by v (a bin's entries are a range of the table, column by column; here each
             * position's entries are a range, f_vfirst, for flat_gather), f_perm the order */
            std::vector<uint32_t> perm(d->q_nent), vfirst((size_t)d->p_mid + 1, 0);
            std::vector<uint64_t> ord; /* v << 32 | e: by v, then as the table had them */
            for (uint32_t b = 0; b < p->nbins; b++) {
                const uint32_t p0 = p->bin_first[b];
                ord.clear();
                for (uint32_t e = pt->first[b]; e < pt->first[b + 1]; e++)
                    ord.push_back((uint64_t)((uint32_t)pt->ent[e] >> 16) << 32 | e);
                std::sort(ord.begin(), ord.end());
                for (size_t i = 0; i < ord.size(); i++) {
                    const uint32_t e = (uint32_t)ord[i], lo = (uint32_t)pt->ent[e];
                    const uint64_t at = pt->first[b] + i;
                    perm[at] = e;
                    va[at] = (u64)(p0 + (lo >> 16)) << 32 | (p0 + (lo & 0xffffu));
                    if (p0 + (lo >> 16) < d->p_mid) vfirst[p0 + (lo >> 16) + 1]++;
                }
            }
            for (uint32_t v = 0; v < d->p_mid; v++) vfirst[v + 1] += vfirst[v];
            cudaError_t e1 = dput(&d->f_va, (const u64 *)va, (size_t)d->q_nent, s, &d->tbytes);
            if (e1 == cudaSuccess) e1 = dput(&d->f_perm, perm.data(), perm.size(), s, &d->tbytes);
            if (e1 == cudaSuccess)
                e1 = dput(&d->f_vfirst, vfirst.data(), vfirst.size(), s, &d->tbytes);
            if (e1 == cudaSuccess) e1 = cudaStreamSynchronize(s); /* before va goes */
            free(va);
            CK(e1, "uploading the piece tables");
        }
    }
    CK(cudaStreamSynchronize(s), "uploading the plan");
out:
    t->plan_free(&pl);
    free(pnode);
    return rc;
}

/* The service's options (kernels/cch_lab.h field order) and the process-wide ones
 * (gp_dcch_tune_set; the lab and the tests only). */
constexpr gp_dcch_tune TUNE_DEFAULTS = {PLAN_BASE,
                                        PLAN_RATIO,
                                        PLAN_BIN_CAP,
                                        TOP_MAX_NODES,
                                        PIECE_MAX_TOTAL,
                                        0,
                                        0,
                                        GP_DCCH_PATHS_DEFAULT,
                                        WKW_MAX,
                                        WBIN_PER_SM,
                                        WMULTI_PER_SM,
                                        GATHER_MIN,
                                        CELL_SAT,
                                        0,
                                        TINY_TRI,
                                        HEAVY_TRI,
                                        NULL,
                                        NULL,
                                        CUSTOM_GRAPH,
                                        CUSTOM_CHUNK,
                                        CHUNK_MIN,
                                        CUSTOM_PDL};
static gp_dcch_tune tune_now = TUNE_DEFAULTS;

extern "C" void gp_dcch_tune_defaults(gp_dcch_tune *t) { *t = TUNE_DEFAULTS; }

extern "C" int gp_dcch_edge_class(uint64_t ntri, const gp_dcch_tune *t) {
    return edge_class(ntri, t);
}

extern "C" void gp_dcch_tune_set(const gp_dcch_tune *t) { tune_now = t ? *t : TUNE_DEFAULTS; }

const gp_dcch_tune *gp_dcch_tune_now(void) { return &tune_now; }

extern "C" int gp_dcch_retune(gp_dcch *d, void *stream, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    const gp_dcch_tune *tn = gp_dcch_tune_now();
    uint32_t shape[10];
    tune_shape(tn, shape);
    sweep_tune(d, tn);
    if (tn->levels || !memcmp(shape, d->tm->shape, sizeof shape)) return GP_OK;
    /* a topology part of d's own: the shared one stays as it is for the other versions */
    gp_dcch_topo *t = NULL;
    int rc = topo_new(&d->src, s, tn, &t, err);
    if (rc) return rc;
    if ((rc = bind(d, t, s, err)) != GP_OK) {
        d->p_nphases = 0; /* no plan weights: the level sweep answers */
        return rc;
    }
    return gp_dcch_plan_weights(d, s, err);
}

extern "C" int gp_dcch_set_metric(gp_dcch *d, void *stream, const uint32_t *ofw,
                                  const uint32_t *obw, gp_err *err) {
    cudaStream_t s = (cudaStream_t)stream;
    int rc = GP_OK;
    CK(cudaMemcpyAsync(d->ofw, ofw, (size_t)d->m * 4, cudaMemcpyHostToDevice, s), "metric upload");
    CK(cudaMemcpyAsync(d->obw, obw, (size_t)d->m * 4, cudaMemcpyHostToDevice, s), "metric upload");
    CK(cudaStreamSynchronize(s), "metric upload");
out:
    return rc;
}
