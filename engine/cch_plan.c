/* cch_plan.c - the sweep plan of a CCH topology (see cch_plan.h for the model): elimination-subtree
 * sizes, phases by thresholds, pieces by their highest same-phase ancestor, pieces packed into bins
 * largest first, steps inside a bin, positions and the inner / outer arc lists; an invariant check
 * and a CPU execution of the plan for the tests. Linear in n + m apart from sorting the pieces of
 * a phase; built once per device CCH.
 */
#include "engine/cch_plan.h"

#include <stdlib.h>
#include <string.h>

void gp_cch_plan_free(gp_cch_plan *p) {
    if (!p) return;
    free(p->phase_bin);
    free(p->bin_first);
    free(p->bin_step);
    free(p->step_first);
    free(p->rank);
    free(p->pos);
    free(p->in_first);
    free(p->in_head);
    free(p->in_edge);
    free(p->out_first);
    free(p->out_head);
    free(p->out_tail);
    free(p->out_edge);
    free(p);
}

uint64_t gp_cch_plan_bytes(const gp_cch_plan *p) {
    if (!p) return 0;
    uint64_t arcs = (uint64_t)p->in_first[p->n] + p->out_first[p->n];
    return sizeof *p + ((uint64_t)p->nphases + 2 * p->nbins + p->nsteps + 4) * 4 +
           (uint64_t)p->n * 16 + 8 + arcs * 8 + (uint64_t)p->out_first[p->n] * 4;
}

uint32_t gp_cch_plan_thresholds(const gp_cch_topo *t, uint32_t base, uint32_t ratio,
                                uint32_t thr[8]) {
    uint32_t q = 0;
    if (base < 1) base = 1;
    if (ratio < 2) ratio = 2;
    for (uint64_t x = base; x < t->n && q < 8; x *= ratio) thr[q++] = (uint32_t)x;
    return q;
}

typedef struct piece {
    uint32_t root, size;
} piece;

static int cmp_piece(const void *a, const void *b) { /* size descending, then root */
    const piece *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return x->root < y->root ? -1 : x->root > y->root;
}

typedef struct binload {
    uint64_t load;
    uint32_t id;
} binload;

static int cmp_bin(const void *a, const void *b) { /* load descending, then id */
    const binload *x = a, *y = b;
    if (x->load != y->load) return x->load > y->load ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Min-heap of bins by load (ties by id) for the largest-first packing. */
static int heap_less(const binload *a, const binload *b) {
    return a->load < b->load || (a->load == b->load && a->id < b->id);
}
static void heap_down(binload *h, uint32_t n, uint32_t i) {
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < n && heap_less(&h[l], &h[s])) s = l;
        if (r < n && heap_less(&h[r], &h[s])) s = r;
        if (s == i) return;
        binload tmp = h[i];
        h[i] = h[s];
        h[s] = tmp;
        i = s;
    }
}

int gp_cch_plan_build(const gp_cch_topo *t, const uint32_t *thr, uint32_t nthr, uint32_t min_bins,
                      uint32_t bin_cap, gp_cch_plan **out, gp_err *err) {
    uint32_t n = t->n;
    for (uint32_t j = 0; j < nthr; j++)
        if (thr[j] < 1 || (j && thr[j] <= thr[j - 1]))
            return gp_err_set(err, GP_EINVAL, "CCH plan thresholds must ascend from 1");
    if (nthr > 64) return gp_err_set(err, GP_EINVAL, "CCH plan: at most 64 thresholds");
    if (min_bins < 1) min_bins = 1;
    if (bin_cap < 1) bin_cap = 1;
    gp_cch_plan *p = calloc(1, sizeof *p);
    uint32_t *sz = malloc((size_t)n * 4 + 4), *root = malloc((size_t)n * 4 + 4);
    uint32_t *bin = malloc((size_t)n * 4 + 4), *step = malloc((size_t)n * 4 + 4);
    unsigned char *ph = malloc((size_t)n + 1);
    uint32_t *pcount = calloc((size_t)nthr + 2, 4); /* pieces per phase */
    uint64_t *pnodes = calloc((size_t)nthr + 2, 8); /* nodes per phase */
    piece *pieces = NULL;
    binload *heap = NULL;
    int rc = GP_OK;
    uint32_t *bin_nsteps = NULL, *bin_order = NULL, *cnt = NULL;
    if (!p || !sz || !root || !bin || !step || !ph || !pcount || !pnodes) goto oom;
    p->n = n;
    /* subtree sizes (a parent has a higher rank) and phases */
    for (uint32_t r = 0; r < n; r++) sz[r] = 1;
    for (uint32_t r = 0; r < n; r++)
        if (t->parent[r] != GP_NONE) sz[t->parent[r]] += sz[r];
    for (uint32_t r = 0; r < n; r++) {
        uint32_t c = 0;
        while (c < nthr && sz[r] > thr[c]) c++;
        ph[r] = (unsigned char)(nthr - c);
    }
    /* pieces: the highest same-phase ancestor (descending ranks: the parent is done first) */
    uint32_t npieces = 0;
    for (uint32_t r1 = n; r1 > 0; r1--) { /* ranks n-1 .. 0 without an unsigned wrap */
        uint32_t rr = r1 - 1, par = t->parent[rr];
        if (par != GP_NONE && ph[par] == ph[rr]) {
            root[rr] = root[par];
        } else {
            root[rr] = rr;
            npieces++;
            pcount[ph[rr]]++;
        }
        pnodes[ph[rr]]++;
    }
    /* piece sizes, indexed by root through bin[] (reused as scratch) */
    pieces = malloc(((size_t)npieces + 1) * sizeof *pieces);
    if (!pieces) goto oom;
    {
        /* pieces grouped by phase: offsets */
        uint32_t off[64 + 2];
        off[0] = 0;
        for (uint32_t f = 0; f <= nthr; f++) off[f + 1] = off[f] + pcount[f];
        uint32_t fill[64 + 1];
        memcpy(fill, off, sizeof(uint32_t) * (nthr + 1));
        for (uint32_t r = 0; r < n; r++)
            if (root[r] == r) {
                uint32_t i = fill[ph[r]]++;
                pieces[i].root = r;
                pieces[i].size = 0;
                bin[r] = i; /* root -> piece index */
            }
        for (uint32_t r = 0; r < n; r++) pieces[bin[root[r]]].size++;
        /* per phase: sort pieces largest first, pack onto bins */
        uint32_t nphases = 0, nbins = 0;
        for (uint32_t f = 0; f <= nthr; f++) nphases += pcount[f] > 0;
        uint32_t maxb = 0;
        for (uint32_t f = 0; f <= nthr; f++) {
            uint64_t want = (pnodes[f] + bin_cap - 1) / bin_cap;
            if (want < min_bins) want = min_bins;
            if (want > pcount[f]) want = pcount[f];
            nbins += (uint32_t)want;
            if (want > maxb) maxb = (uint32_t)want;
        }
        p->nphases = nphases;
        p->nbins = nbins;
        p->phase_bin = malloc(((size_t)nphases + 1) * 4);
        p->bin_first = malloc(((size_t)nbins + 1) * 4);
        p->bin_step = malloc(((size_t)nbins + 1) * 4);
        heap = malloc(((size_t)maxb + 1) * sizeof *heap);
        bin_order = malloc(((size_t)maxb + 1) * 4);
        if (!p->phase_bin || !p->bin_first || !p->bin_step || !heap || !bin_order) goto oom;
        uint32_t b0 = 0, pi = 0;
        p->phase_bin[0] = 0;
        for (uint32_t f = 0; f <= nthr; f++) {
            if (!pcount[f]) continue;
            piece *pc = pieces + off[f];
            qsort(pc, pcount[f], sizeof *pc, cmp_piece);
            uint64_t want = (pnodes[f] + bin_cap - 1) / bin_cap;
            if (want < min_bins) want = min_bins;
            if (want > pcount[f]) want = pcount[f];
            uint32_t nb = (uint32_t)want;
            for (uint32_t i = 0; i < nb; i++) heap[i].load = 0, heap[i].id = i;
            for (uint32_t i = 0; i < pcount[f]; i++) {
                bin[pc[i].root] = heap[0].id; /* onto the least loaded bin (the heap's top) */
                heap[0].load += pc[i].size;
                heap_down(heap, nb, 0);
            }
            /* bins largest first: local id -> global bin */
            qsort(heap, nb, sizeof *heap, cmp_bin);
            for (uint32_t i = 0; i < nb; i++) bin_order[heap[i].id] = b0 + i;
            for (uint32_t i = 0; i < pcount[f]; i++) bin[pc[i].root] = bin_order[bin[pc[i].root]];
            b0 += nb;
            p->phase_bin[++pi] = b0;
        }
    }
    /* every node's bin is its root's (descending ranks: roots have the highest rank of a piece) */
    for (uint32_t r1 = n; r1 > 0; r1--)
        if (root[r1 - 1] != r1 - 1) bin[r1 - 1] = bin[root[r1 - 1]];
    /* steps inside a bin */
    bin_nsteps = calloc((size_t)p->nbins + 1, 4);
    if (!bin_nsteps) goto oom;
    for (uint32_t r1 = n; r1 > 0; r1--) {
        uint32_t rr = r1 - 1, s = 0;
        for (uint32_t e = t->up_first[rr]; e < t->up_first[rr + 1]; e++) {
            uint32_t h = t->up_head[e];
            if (bin[h] == bin[rr] && step[h] + 1 > s) s = step[h] + 1;
        }
        step[rr] = s;
        if (s + 1 > bin_nsteps[bin[rr]]) bin_nsteps[bin[rr]] = s + 1;
    }
    p->bin_step[0] = 0;
    p->max_bin_steps = 0;
    for (uint32_t b = 0; b < p->nbins; b++) {
        p->bin_step[b + 1] = p->bin_step[b] + bin_nsteps[b];
        if (bin_nsteps[b] > p->max_bin_steps) p->max_bin_steps = bin_nsteps[b];
    }
    p->nsteps = p->bin_step[p->nbins];
    /* positions: counting sort by global step, ranks ascending within one */
    cnt = calloc((size_t)p->nsteps + 2, 4);
    p->step_first = malloc(((size_t)p->nsteps + 1) * 4);
    p->rank = malloc((size_t)n * 4 + 4);
    p->pos = malloc((size_t)n * 4 + 4);
    if (!cnt || !p->step_first || !p->rank || !p->pos) goto oom;
    for (uint32_t r = 0; r < n; r++) cnt[p->bin_step[bin[r]] + step[r] + 1]++;
    for (uint32_t s = 0; s < p->nsteps; s++) cnt[s + 1] += cnt[s];
    memcpy(p->step_first, cnt, ((size_t)p->nsteps + 1) * 4);
    for (uint32_t r = 0; r < n; r++) {
        uint32_t q = cnt[p->bin_step[bin[r]] + step[r]]++;
        p->rank[q] = r;
        p->pos[r] = q;
    }
    p->max_bin_nodes = p->max_bin_arcs = p->max_bin_out = 0;
    for (uint32_t b = 0; b <= p->nbins; b++) p->bin_first[b] = p->step_first[p->bin_step[b]];
    /* arcs */
    p->in_first = malloc(((size_t)n + 1) * 4);
    p->out_first = malloc(((size_t)n + 1) * 4);
    if (!p->in_first || !p->out_first) goto oom;
    uint32_t ni = 0, no = 0;
    for (uint32_t q = 0; q < n; q++) {
        uint32_t r = p->rank[q];
        p->in_first[q] = ni;
        p->out_first[q] = no;
        for (uint32_t e = t->up_first[r]; e < t->up_first[r + 1]; e++) {
            if (bin[t->up_head[e]] == bin[r]) ni++;
            else no++;
        }
    }
    p->in_first[n] = ni;
    p->out_first[n] = no;
    p->in_head = malloc((size_t)ni * 4 + 4);
    p->in_edge = malloc((size_t)ni * 4 + 4);
    p->out_head = malloc((size_t)no * 4 + 4);
    p->out_tail = malloc((size_t)no * 4 + 4);
    p->out_edge = malloc((size_t)no * 4 + 4);
    if (!p->in_head || !p->in_edge || !p->out_head || !p->out_tail || !p->out_edge) goto oom;
    ni = no = 0;
    for (uint32_t q = 0; q < n; q++) {
        uint32_t r = p->rank[q], b = bin[r];
        for (uint32_t e = t->up_first[r]; e < t->up_first[r + 1]; e++) {
            uint32_t h = t->up_head[e];
            if (bin[h] == b) {
                p->in_head[ni] = p->pos[h] - p->bin_first[b];
                p->in_edge[ni++] = e;
            } else {
                p->out_head[no] = p->pos[h];
                p->out_tail[no] = q - p->bin_first[b];
                p->out_edge[no++] = e;
            }
        }
    }
    for (uint32_t b = 0; b < p->nbins; b++) {
        uint32_t nodes = p->bin_first[b + 1] - p->bin_first[b];
        uint32_t arcs = p->in_first[p->bin_first[b + 1]] - p->in_first[p->bin_first[b]];
        uint32_t outs = p->out_first[p->bin_first[b + 1]] - p->out_first[p->bin_first[b]];
        if (nodes > p->max_bin_nodes) p->max_bin_nodes = nodes;
        if (arcs > p->max_bin_arcs) p->max_bin_arcs = arcs;
        if (outs > p->max_bin_out) p->max_bin_out = outs;
    }
    *out = p;
    p = NULL;
    goto done;
oom:
    rc = gp_err_set(err, GP_ENOMEM, "out of memory for the CCH sweep plan of %u nodes", n);
done:
    free(sz);
    free(root);
    free(bin);
    free(step);
    free(ph);
    free(pcount);
    free(pnodes);
    free(pieces);
    free(heap);
    free(bin_nsteps);
    free(bin_order);
    free(cnt);
    gp_cch_plan_free(p);
    return rc;
}

int gp_cch_plan_check(const gp_cch_plan *p, const gp_cch_topo *t, gp_err *err) {
    uint32_t n = t->n;
    if (p->n != n) return gp_err_set(err, GP_EINVAL, "plan: %u positions for %u nodes", p->n, n);
    if (n == 0) return GP_OK;
    if (p->phase_bin[0] != 0 || p->phase_bin[p->nphases] != p->nbins)
        return gp_err_set(err, GP_EINVAL, "plan: phases do not cover the bins");
    if (p->bin_step[0] != 0 || p->bin_step[p->nbins] != p->nsteps || p->bin_first[0] != 0 ||
        p->bin_first[p->nbins] != n || p->step_first[0] != 0 || p->step_first[p->nsteps] != n)
        return gp_err_set(err, GP_EINVAL, "plan: bins / steps do not cover the positions");
    for (uint32_t f = 0; f < p->nphases; f++)
        if (p->phase_bin[f + 1] <= p->phase_bin[f])
            return gp_err_set(err, GP_EINVAL, "plan: phase %u has no bin", f);
    for (uint32_t b = 0; b < p->nbins; b++) {
        if (p->bin_step[b + 1] <= p->bin_step[b] ||
            p->bin_first[b] != p->step_first[p->bin_step[b]])
            return gp_err_set(err, GP_EINVAL, "plan: bin %u is not a run of steps", b);
    }
    for (uint32_t s = 0; s < p->nsteps; s++)
        if (p->step_first[s + 1] <= p->step_first[s])
            return gp_err_set(err, GP_EINVAL, "plan: step %u is empty", s);
    for (uint32_t q = 0; q < n; q++)
        if (p->rank[q] >= n || p->pos[p->rank[q]] != q)
            return gp_err_set(err, GP_EINVAL, "plan: positions are not a permutation (%u)", q);
    /* position -> bin, step, phase */
    uint32_t *binof = malloc((size_t)n * 4), *stepof = malloc((size_t)n * 4);
    uint32_t *phof = malloc((size_t)n * 4);
    int rc = GP_OK;
    if (!binof || !stepof || !phof) {
        rc = gp_err_set(err, GP_ENOMEM, "out of memory checking the plan");
        goto done;
    }
    for (uint32_t f = 0; f < p->nphases; f++)
        for (uint32_t b = p->phase_bin[f]; b < p->phase_bin[f + 1]; b++)
            for (uint32_t s = p->bin_step[b]; s < p->bin_step[b + 1]; s++)
                for (uint32_t q = p->step_first[s]; q < p->step_first[s + 1]; q++)
                    binof[q] = b, stepof[q] = s, phof[q] = f;
    for (uint32_t q = 0; q < n; q++) {
        uint32_t r = p->rank[q], b = binof[q];
        uint32_t ia = p->in_first[q], oa = p->out_first[q];
        for (uint32_t e = t->up_first[r]; e < t->up_first[r + 1]; e++) {
            uint32_t hq = p->pos[t->up_head[e]];
            if (binof[hq] == b) {
                if (ia >= p->in_first[q + 1] || p->in_edge[ia] != e ||
                    p->in_head[ia] != hq - p->bin_first[b]) {
                    rc = gp_err_set(err, GP_EINVAL, "plan: inner arc of CCH edge %u missing", e);
                    goto done;
                }
                if (stepof[hq] >= stepof[q]) {
                    rc = gp_err_set(err, GP_EINVAL, "plan: edge %u reads its own or a later step",
                                    e);
                    goto done;
                }
                ia++;
            } else {
                if (oa >= p->out_first[q + 1] || p->out_edge[oa] != e || p->out_head[oa] != hq ||
                    p->out_tail[oa] != q - p->bin_first[b]) {
                    rc = gp_err_set(err, GP_EINVAL, "plan: outer arc of CCH edge %u missing", e);
                    goto done;
                }
                if (phof[hq] >= phof[q]) {
                    rc = gp_err_set(err, GP_EINVAL, "plan: edge %u leaves its bin within a phase",
                                    e);
                    goto done;
                }
                oa++;
            }
        }
        if (ia != p->in_first[q + 1] || oa != p->out_first[q + 1]) {
            rc = gp_err_set(err, GP_EINVAL, "plan: position %u has arcs that are no CCH edge", q);
            goto done;
        }
    }
done:
    free(binof);
    free(stepof);
    free(phof);
    return rc;
}

void gp_cch_top_free(gp_cch_top *t) {
    if (!t) return;
    free(t->first);
    free(t->head);
    free(t->edge);
    free(t);
}

int gp_cch_plan_top(const gp_cch_plan *p, uint32_t max_nodes, gp_cch_top **out, gp_err *err) {
    uint32_t f = 0;
    *out = NULL;
    while (f + 1 < p->nphases && p->bin_first[p->phase_bin[f + 1]] <= max_nodes) f++;
    if (f == 0) return GP_OK;
    gp_cch_top *t = calloc(1, sizeof *t);
    uint32_t K = p->bin_first[p->phase_bin[f]];
    uint32_t m = p->in_first[K] + p->out_first[K];
    if (t) {
        t->K = K;
        t->nphases = f;
        t->first = malloc(((size_t)K + 1) * 4);
        t->head = malloc((size_t)m * 4 + 4);
        t->edge = malloc((size_t)m * 4 + 4);
    }
    if (!t || !t->first || !t->head || !t->edge) {
        gp_cch_top_free(t);
        return gp_err_set(err, GP_ENOMEM, "out of memory for the top table of %u nodes", K);
    }
    uint32_t a = 0;
    for (uint32_t b = 0; b < p->phase_bin[f]; b++)
        for (uint32_t x = p->bin_first[b]; x < p->bin_first[b + 1]; x++) {
            t->first[x] = a;
            for (uint32_t i = p->out_first[x]; i < p->out_first[x + 1]; i++, a++)
                t->head[a] = p->out_head[i], t->edge[a] = p->out_edge[i];
            for (uint32_t i = p->in_first[x]; i < p->in_first[x + 1]; i++, a++)
                t->head[a] = p->bin_first[b] + p->in_head[i], t->edge[a] = p->in_edge[i];
        }
    t->first[K] = a;
    *out = t;
    return GP_OK;
}

void gp_cch_top_table(const gp_cch_top *t, const uint32_t *bw, uint64_t *tab) {
    uint32_t K = t->K;
    for (uint32_t u = 0; u < K; u++) {
        uint64_t *row = tab + (size_t)u * K;
        for (uint32_t x = 0; x < K; x++) row[x] = x == u ? 0 : GP_INF;
        for (uint32_t x = u + 1; x < K; x++) /* heads precede: row[h] is final */
            for (uint32_t a = t->first[x]; a < t->first[x + 1]; a++) {
                uint32_t w = bw[t->edge[a]];
                uint64_t dh = row[t->head[a]];
                if (w != GP_CCH_INF && dh != GP_INF && dh + w < row[x]) row[x] = dh + w;
            }
    }
}

void gp_cch_ptab_free(gp_cch_ptab *pt) {
    if (!pt) return;
    free(pt->first);
    free(pt->bins);
    free(pt->depth);
    free(pt->ent);
    free(pt);
}

int gp_cch_plan_pieces(const gp_cch_plan *p, const gp_cch_topo *t, uint32_t f0, uint32_t min_steps,
                       uint32_t max_bin, uint32_t max_total, gp_cch_ptab **out, gp_err *err) {
    uint32_t n = p->n, nb = p->nbins;
    gp_cch_ptab *pt = calloc(1, sizeof *pt);
    uint64_t *cnt = calloc((size_t)nb + 1, 8); /* entries of bin b if it gets a table, else 0 */
    uint32_t *anc = NULL;                      /* a bin's a_j, column by column */
    *out = NULL;
    if (pt) {
        pt->nbins = nb;
        pt->first = calloc((size_t)nb + 1, 4);
        pt->depth = malloc((size_t)n * 4 + 4);
    }
    if (!pt || !cnt || !pt->first || !pt->depth) goto oom;
    for (uint32_t b = 0; b < nb; b++)
        for (uint32_t s = p->bin_step[b]; s < p->bin_step[b + 1]; s++)
            for (uint32_t q = p->step_first[s]; q < p->step_first[s + 1]; q++)
                pt->depth[q] = s - p->bin_step[b];
    uint64_t total = 0;
    for (uint32_t f = f0; f < p->nphases; f++) {
        uint64_t sum = 0;
        for (uint32_t b = p->phase_bin[f]; b < p->phase_bin[f + 1]; b++) {
            uint32_t N = p->bin_first[b + 1] - p->bin_first[b],
                     st = p->bin_step[b + 1] - p->bin_step[b];
            uint64_t e = 0;
            for (uint32_t q = p->bin_first[b]; q < p->bin_first[b + 1]; q++) e += pt->depth[q];
            if (st >= min_steps && st >= 2 && N < 65536 && e <= max_bin) cnt[b] = e, sum += e;
        }
        if (total + sum > max_total) /* the whole phase or nothing */
            for (uint32_t b = p->phase_bin[f]; b < p->phase_bin[f + 1]; b++) cnt[b] = 0;
        else total += sum;
    }
    for (uint32_t b = 0; b < nb; b++) {
        pt->first[b + 1] = pt->first[b] + (uint32_t)cnt[b];
        if (cnt[b]) pt->ntab++;
    }
    pt->bins = malloc((size_t)pt->ntab * 4 + 4);
    pt->ent = malloc((size_t)total * 8 + 8);
    anc = malloc(65536 * 4);
    if (!pt->bins || !pt->ent || !anc) goto oom;
    pt->ntab = 0;
    for (uint32_t b = 0; b < nb; b++) {
        if (!cnt[b]) continue;
        uint32_t p0 = p->bin_first[b], N = p->bin_first[b + 1] - p0;
        uint32_t s0 = p->bin_step[b], ns = p->bin_step[b + 1] - s0;
        pt->bins[pt->ntab++] = b;
        if (N > pt->max_nodes) pt->max_nodes = N;
        if (ns > pt->max_steps) pt->max_steps = ns;
        uint64_t col = pt->first[b]; /* col(j) */
        for (uint32_t v = 0; v < N; v++) anc[v] = p0 + v;
        for (uint32_t j = 0; j + 1 < ns; j++) {
            uint32_t sj = p->step_first[s0 + j + 1] - p0; /* S(j+1) */
            for (uint32_t v = sj; v < N; v++) {
                /* a_j = the parent of a_(j-1) (in the bin while v is deeper than j) */
                anc[v] = p->pos[t->parent[p->rank[anc[v]]]];
                pt->ent[col + (v - sj)] = (uint64_t)GP_CCH_INF << 32 | (uint64_t)v << 16 |
                                          (anc[v] - p0);
            }
            col += N - sj;
        }
    }
    free(cnt);
    free(anc);
    *out = pt;
    return GP_OK;
oom:
    free(cnt);
    free(anc);
    gp_cch_ptab_free(pt);
    return gp_err_set(err, GP_ENOMEM, "out of memory for the piece tables of %u nodes", n);
}

int gp_cch_ptab_fill(gp_cch_ptab *pt, const gp_cch_plan *p, const uint32_t *bw) {
    int over = 0;
    /* at[j] = the index of entry (v, j) of the bin is at[j] + v: col(j) - S(j+1) + first[b] */
    int64_t *at = malloc(((size_t)pt->max_steps + 1) * 8);
    if (!at) return -1;
    for (uint32_t i = 0; i < pt->ntab; i++) {
        uint32_t b = pt->bins[i], p0 = p->bin_first[b], q1 = p->bin_first[b + 1];
        uint32_t s0 = p->bin_step[b], ns = p->bin_step[b + 1] - s0, N = q1 - p0;
        int64_t col = pt->first[b];
        for (uint32_t j = 0; j + 1 < ns; j++) {
            int64_t sj = p->step_first[s0 + j + 1] - p0;
            at[j] = col - sj;
            col += N - sj;
        }
        for (uint32_t q = p0; q < q1; q++) { /* ascending positions: ascending steps */
            uint32_t s = pt->depth[q];
            for (uint32_t j = 0; j < s; j++) {
                uint64_t best = GP_CCH_INF;
                for (uint32_t a = p->in_first[q]; a < p->in_first[q + 1]; a++) {
                    uint32_t w = bw[p->in_edge[a]], h = p->in_head[a];
                    int64_t idx = (int64_t)pt->depth[p0 + h] - s + j; /* h = a_(s-dh-1) */
                    if (w == GP_CCH_INF || idx < -1) continue;
                    uint64_t th = idx < 0 ? 0 : pt->ent[at[idx] + h] >> 32;
                    if (th == GP_CCH_INF) continue;
                    if (th + w >= GP_CCH_INF) over = 1;
                    else if (th + w < best) best = th + w;
                }
                uint64_t *e = &pt->ent[at[j] + (q - p0)];
                *e = (*e & 0xffffffffu) | best << 32;
            }
        }
    }
    free(at);
    return over;
}

int gp_cch_plan_sssp(const gp_cch *c, const gp_cch_plan *p, const gp_cch_top *top,
                     const uint64_t *tab, const gp_cch_ptab *pt, uint32_t src, uint64_t *dist,
                     gp_err *err) {
    const gp_cch_topo *t = c->topo;
    uint32_t n = t->n;
    if (src >= n) return gp_err_set(err, GP_EINVAL, "source %u out of range", src);
    uint64_t *d = malloc((size_t)n * 8);
    uint32_t *ur = malloc(((size_t)t->height + 2) * 4);
    uint64_t *ud = malloc(((size_t)t->height + 2) * 8);
    uint64_t *d1 = malloc(((size_t)(pt ? pt->max_nodes : 0) + 1) * 8); /* a bin's D1 */
    int cnt = (d && ur && ud && d1) ? gp_cch_upward(c, src, 1, ur, ud) : -1;
    if (cnt < 0) {
        free(d1);
        free(d);
        free(ur);
        free(ud);
        return gp_err_set(err, GP_ENOMEM, "out of memory for a planned PHAST sweep");
    }
    for (uint32_t q = 0; q < n; q++) d[q] = GP_INF;
    uint32_t b0 = 0;
    if (top) { /* the top's cells: the product of the search's top labels with the table */
        uint32_t K = top->K;
        for (uint32_t v = 0; v < K; v++) {
            uint64_t best = GP_INF;
            for (int i = 0; i < cnt; i++) {
                uint32_t u = p->pos[ur[i]];
                uint64_t t = u < K ? tab[(size_t)u * K + v] : GP_INF;
                if (t != GP_INF && ud[i] != GP_INF && ud[i] + t < best) best = ud[i] + t;
            }
            d[v] = best;
        }
        b0 = p->phase_bin[top->nphases];
    }
    for (int i = 0; i < cnt; i++)
        if (!top || p->pos[ur[i]] >= top->K) d[p->pos[ur[i]]] = ud[i];
    for (uint32_t b = b0; b < p->nbins; b++) { /* phases are runs of bins, in order */
        uint32_t p0 = p->bin_first[b];
        for (uint32_t a = p->out_first[p0]; a < p->out_first[p->bin_first[b + 1]]; a++) {
            uint32_t w = c->bw[p->out_edge[a]], q = p0 + p->out_tail[a]; /* arc by arc */
            uint64_t dh = d[p->out_head[a]];
            if (w != GP_CCH_INF && dh != GP_INF && dh + w < d[q]) d[q] = dh + w;
        }
        if (pt && pt->first[b + 1] > pt->first[b]) { /* the bin's table: one product */
            uint32_t N = p->bin_first[b + 1] - p0;
            memcpy(d1, d + p0, (size_t)N * 8);
            for (uint32_t i = pt->first[b]; i < pt->first[b + 1]; i++) {
                uint64_t e = pt->ent[i], T = e >> 32, da = d1[e & 0xffff];
                uint32_t v = (uint32_t)(e >> 16) & 0xffff;
                if (T != GP_CCH_INF && da != GP_INF && da + T < d[p0 + v]) d[p0 + v] = da + T;
            }
            continue;
        }
        for (uint32_t s = p->bin_step[b]; s < p->bin_step[b + 1]; s++)
            for (uint32_t q = p->step_first[s]; q < p->step_first[s + 1]; q++)
                for (uint32_t a = p->in_first[q]; a < p->in_first[q + 1]; a++) {
                    uint32_t w = c->bw[p->in_edge[a]];
                    uint64_t dh = d[p0 + p->in_head[a]];
                    if (w != GP_CCH_INF && dh != GP_INF && dh + w < d[q]) d[q] = dh + w;
                }
    }
    for (uint32_t q = 0; q < n; q++) dist[t->order[p->rank[q]]] = d[q];
    free(d1);
    free(d);
    free(ur);
    free(ud);
    return GP_OK;
}

int gp_cch_plan_make(const gp_cch_topo *t, const gp_dcch_plan_req *rq, gp_dcch_plan *out,
                     gp_err *err) {
    uint32_t thr[8], q = gp_cch_plan_thresholds(t, rq->base, rq->ratio, thr);
    memset(out, 0, sizeof *out);
    int rc = gp_cch_plan_build(t, thr, q, rq->min_bins, rq->bin_cap, &out->plan, err);
    if (rc == GP_OK && rq->top_max) rc = gp_cch_plan_top(out->plan, rq->top_max, &out->top, err);
    if (rc == GP_OK && rq->piece_max)
        rc = gp_cch_plan_pieces(out->plan, t, out->top ? out->top->nphases : 0, rq->piece_min_steps,
                                rq->piece_max_bin, rq->piece_max, &out->pt, err);
    if (rc != GP_OK) gp_cch_plan_clear(out);
    return rc;
}

void gp_cch_plan_clear(gp_dcch_plan *pl) {
    gp_cch_plan_free(pl->plan);
    gp_cch_top_free(pl->top);
    gp_cch_ptab_free(pl->pt);
    memset(pl, 0, sizeof *pl);
}
