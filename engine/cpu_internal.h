/* cpu_internal.h - what the CPU backend's own files share: engine/cpu_backend.c (lifecycle, the
 * workspace pool), engine/cpu_dijkstra.c (sssp, p2p, table: the Dijkstra family) and
 * engine/cpu_apsp.c (blocked Floyd-Warshall). Not part of the contract: other modules include
 * engine/backend.h only.
 */
#ifndef GP_CPU_INTERNAL_H
#define GP_CPU_INTERNAL_H

#include "engine/backend.h"
#include "engine/progress.h"

#include <pthread.h>
#include <stdatomic.h>

/* Workspaces (n-sized, pooled in the backend, reset in O(nodes touched)). */
#define ST_UNSEEN UINT32_MAX        /* hpos: never reached in this query */
#define ST_SETTLED (UINT32_MAX - 1) /* hpos: settled (popped) */

typedef struct gp_cpu_hent {
    uint64_t key;
    uint32_t v;
} gp_cpu_hent;

/* Radix heap bucket (monotone integer keys; see cpu_dijkstra.c). */
typedef struct gp_cpu_rbucket {
    gp_cpu_hent *e;
    uint32_t len, cap;
} gp_cpu_rbucket;
#define RADIX_BUCKETS 65

typedef struct gp_cpu_ws {
    uint32_t cap;   /* nodes the arrays hold */
    uint64_t *dist; /* GP_INF when unreached */
    uint32_t *pred; /* GP_NONE when none */
    uint32_t *hpos; /* heap index, ST_UNSEEN or ST_SETTLED */
    uint32_t *mark; /* table: target stamp per node (allocated on first table use) */
    uint32_t mark_cap;
    uint64_t *aux; /* A*: the node's bound, valid once the node is touched (lazy too) */
    uint32_t aux_cap;
    uint32_t stamp;    /* current target stamp */
    gp_cpu_hent *heap; /* binary min-heap on key */
    uint32_t hsize;
    uint32_t *touched; /* nodes whose dist/pred/hpos differ from the reset state */
    uint32_t ntouched;
    uint64_t settled;                 /* nodes settled in the last run */
    gp_cpu_rbucket rb[RADIX_BUCKETS]; /* radix heap: bucket i holds keys whose highest bit
                                       * differing from rlast is bit i-1 (bucket 0: key == rlast) */
    uint64_t rlast;                   /* last extracted key */
    uint64_t rsize;                   /* entries in the radix heap */
    struct gp_cpu_ws *next;           /* pool free list */
} gp_cpu_ws;

typedef struct gp_cpu_hcache {
    const gp_graph *g; /* identity (pointer + content hash + sizes) */
    uint64_t hash;
    uint32_t n, m;
    double factor; /* stored weight units per metre, lower bound over all arcs */
} gp_cpu_hcache;

#define HCACHE_SLOTS 8

typedef struct gp_cpu_impl {
    int threads;
    char model[128];
    pthread_mutex_t lock; /* guards pool and hcache */
    gp_cpu_ws *pool;
    int pooled;       /* workspaces in pool */
    int astar_binary; /* A* always on the binary heap (engine/engine_lab.h, tests) */
    gp_cpu_hcache hc[HCACHE_SLOTS];
    unsigned hc_next;
} gp_cpu_impl;

static inline gp_cpu_impl *gp_cpu_impl_of(gp_backend *b) { return (gp_cpu_impl *)b->impl; }

/* A workspace of at least n nodes in its reset state from c's pool (NULL out of memory, err
 * filled); gp_cpu_ws_put resets it and gives it back (NULL accepted). gp_cpu_ws_reset returns w to
 * its reset state in O(touched). need_mark / need_aux allocate the table's target marks / A*'s
 * per-node bounds on first use (GP_ENOMEM). (cpu_backend.c) */
gp_cpu_ws *gp_cpu_ws_get(gp_cpu_impl *c, uint32_t n, gp_err *err);
void gp_cpu_ws_put(gp_cpu_impl *c, gp_cpu_ws *w);
void gp_cpu_ws_reset(gp_cpu_ws *w);
int gp_cpu_ws_need_mark(gp_cpu_ws *w);
int gp_cpu_ws_need_aux(gp_cpu_ws *w);

/* A many-source operation on threads (table: one Dijkstra per source; apsp: the tiles of blocked
 * Floyd-Warshall), and one thread's part of it. */
typedef struct gp_cpu_job {
    gp_cpu_impl *c;
    const gp_graph *g;
    /* table */
    const uint32_t *src, *dst;
    uint32_t ns, nt;
    uint64_t *out;
    atomic_uint next_src;
    /* apsp */
    int64_t *d;
    uint32_t *nx;
    uint32_t n, tile, ntiles;
    atomic_uint *ctr; /* apsp: per round, the next phase-2 tile and phase-3 tile row */
    atomic_int stop;  /* apsp: set by worker 0 before a round's first barrier when past deadline */
    pthread_barrier_t barrier;
    int nthreads;
    pthread_mutex_t gate_lock; /* apsp start gate: 1 open, -1 abandoned */
    pthread_cond_t gate_cond;
    int gate_open;
    double deadline;   /* the caller's gp_deadline_get() (workers have their own thread-locals) */
    gp_progress *prog; /* the caller's gp_progress_get(): a unit per table source / APSP tile row */
    /* status */
    atomic_int rc;
    gp_err err;
    pthread_mutex_t err_lock;
} gp_cpu_job;

typedef struct gp_cpu_worker {
    gp_cpu_job *j;
    int id;
} gp_cpu_worker;

/* The backend's operations (backend.h gp_backend_ops). */
int gp_cpu_attach(gp_backend *b, gp_graph *g, gp_err *err);
int gp_cpu_sssp(gp_backend *b, const gp_graph *g, uint32_t src, uint64_t max_dist, uint64_t *dist,
                uint32_t *pred, gp_err *err);
int gp_cpu_p2p(gp_backend *b, const gp_graph *g, uint32_t s, uint32_t t, int algo, gp_path *path,
               gp_err *err);
int gp_cpu_table(gp_backend *b, const gp_graph *g, const uint32_t *src, uint32_t ns,
                 const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err);
int gp_cpu_apsp(gp_backend *b, const gp_graph *g, uint64_t *dist, uint32_t *next, gp_err *err);
/* Picks APSP's row update, AVX2 where the CPU has it and avx2 allows it (cpu_apsp.c; the engine
 * lab's cpu_avx2), process-wide: gp_cpu_backend_new calls it. */
void gp_cpu_apsp_select(int avx2);

#endif
