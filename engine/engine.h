/* engine.h - the query engine: a primary backend (CUDA or CPU, from --backend auto|cuda|cpu) with
 * the CPU backend behind it as the fallback.
 *
 * Each gp_engine_* call runs on the primary backend; when it answers GP_EUNSUPPORTED, or a device
 * error after which the backend reports itself unhealthy (a sticky CUDA error), the call is re-run
 * on the CPU backend and later calls go straight to the CPU. Non-sticky device errors fail the call.
 * GP_ETIMEOUT (the caller's deadline passed) is returned as is, never re-run on the CPU.
 *
 * CCH (engine/cch.h). With cch "auto" (graphs of at least cch_min_nodes nodes) or "on" (every
 * graph), attach also builds the graph's customizable contraction hierarchy (topology reused from
 * the cache when the graph has the shape of an earlier one: a PATCH of link costs, a what-if) and
 * customizes it (on the GPU when CUDA is primary, else on the CPU threads); it is stored in g->cch
 * and lives and is swapped with the graph. Then p2p AUTO is the CCH query (CPU), sssp without a
 * distance limit is PHAST (GPU when it holds the CCH, else CPU) and table is RPHAST on the GPU or
 * buckets on the CPU. A graph whose CCH cannot be built (e.g. a shortcut weight over 2^32-1) keeps
 * the Dijkstra family, which also stays the answer for explicit algorithms and the reference.
 */
#ifndef GP_ENGINE_H
#define GP_ENGINE_H

#include "engine/backend.h"
#include "engine/cch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_engine {
    gp_backend *primary; /* == cpu when the CPU backend is in use */
    gp_backend *cpu;
    int primary_failed;     /* set (atomically) once the primary is out of service */
    char cpu_reason[256];   /* backend auto on the CPU: why ("no NVIDIA GPU found ..."), else "" */
    int cpu_threads;        /* as given to gp_engine_new (0 = all CPUs) */
    int cch_mode;           /* GP_CCH_OFF / AUTO / ON */
    uint32_t cch_min_nodes; /* auto: graphs with at least this many nodes */
    int cch_perfect;        /* GP_CCH_OFF / AUTO / ON: perfect customization (gp_cch_perfect) */
    uint64_t cch_spare_max; /* bytes: topologies whose spare is kept filled (gp_cch_warm_spare) */
    int cuda_device;
    int ncuda_devices; /* cuda_devices in use (CUDA primary), cuda_devices[0] == cuda_device */
    int cuda_devices[GP_CUDA_MAX_DEVICES];
    unsigned rr;    /* round-robin counter of the one-to-all trees over the devices (atomic) */
    int turn_costs; /* 1 (default): road graphs with a profile are routed with turn costs */
    uint64_t gpu_table_min_cells; /* CCH tables of fewer cells run on the CPU (0: all on the GPU) */
} gp_engine;

enum { GP_CCH_OFF = 0, GP_CCH_AUTO = 1, GP_CCH_ON = 2 };
/* Sets the CCH policy (config cch, cch_min_nodes, cch_max_triangles_per_node): mode "auto", "on"
 * or "off"; max_tri_per_node is the size guard of engine/cch.h (process-wide; 0 = none). Default
 * auto with GP_CCH_MIN_NODES_DEFAULT and GP_CCH_MAX_TRI_PER_NODE. */
#define GP_CCH_MIN_NODES_DEFAULT 10000
/* auto on a turn graph (its road graph's tables run on it): a CCH from this many turn nodes, or
 * from cch_min_nodes when that is lower */
#define GP_CCH_TURN_MIN_NODES 1024
int gp_engine_set_cch(gp_engine *e, const char *mode, uint32_t min_nodes, uint32_t max_tri_per_node,
                      gp_err *err);

/* Perfect customization after each CCH customization (config cch_perfect), which prunes the
 * query arcs (engine/cch.h gp_cch_perfect): "auto" (default) runs it in the background, the graph
 * answering over every arc meanwhile; "on" before the graph answers; "off" never. */
int gp_engine_set_cch_perfect(gp_engine *e, const char *mode, gp_err *err);
/* A CCH whose weight arrays (40 bytes a CCH edge) are at most max_mb MiB keeps a spare set
 * allocated for its next version or metric (config cch_spare_max_mb; engine/cch.h
 * gp_cch_warm_spare); 0 = never. */
#define GP_CCH_SPARE_MAX_MB 2048
void gp_engine_set_cch_spare(gp_engine *e, uint64_t max_mb);

/* The CCH order method (config cch_order; process-wide, for the topologies built from then on):
 * "nd" (default: the parallel nested dissection, gp_cch_order_nd) or "metis" (one METIS_NodeND
 * call, gp_cch_order_metis). */
int gp_engine_set_cch_order(gp_engine *e, const char *order, gp_err *err);

/* Turn costs (config turn_costs, gpath serve --turn-costs): "on" (default) or "off". With "on",
 * attaching a road graph with a profile (an OSM import) builds its turn graph (graph/turns.h),
 * attaches it in turn (CCH, device state) and hangs it off the graph (g->turns); every query on
 * the graph then runs on the turn graph (engine/snap.c; gp_engine_p2p / sssp / table by node id
 * too), and the road graph gets no CCH of its own. A reweighted version (a cost change) gets the
 * reweighted turn graph. A turn graph that cannot be built fails the attach (nothing half-built
 * is served). Applies to graphs attached from then on. */
int gp_engine_set_turn_costs(gp_engine *e, const char *mode, gp_err *err);
/* CCH tables (many-to-many, the turn graph's included) of fewer than `cells` cells are answered
 * by the CPU's many-to-many rather than the GPU's RPHAST (config gpu_table_min_cells): below a
 * few hundred thousand cells the device's fixed costs (target selection, uploads, one launch per
 * level, the copy back) exceed the CPU's whole search. 0 (the default): every table on the GPU. */
void gp_engine_set_gpu_table_min_cells(gp_engine *e, uint64_t cells);
/* The snapshot section (of the road graph) holding the CCH order of its turn graph (written by
 * `gpath import`, as GP_CCH_SNAPSHOT_SECTION holds the road graph's): attach then skips that
 * order. */
#define GP_TURNS_CCH_SNAPSHOT_SECTION "cch.turns.order"

/* Every GPU of the host (cuda_devices, backend.h): with more than one device, attach replicates
 * each CCH's device state onto the others (a version is published once every device holds it; a
 * device whose replica fails is logged and left out of that version), gp_engine_table splits
 * its rows into one contiguous share per device, each computed on its own host thread and written
 * in place (so in order), and gp_engine_sssp's PHAST trees go round-robin over the devices. The
 * Dijkstra family (near-far kernels) and APSP stay on the first device. */

/* backend: "auto" (CUDA when a GPU is usable, else CPU), "cuda" (error without a GPU), "cpu". */
gp_engine *gp_engine_new(const char *backend, int cpu_threads, const gp_cuda_opts *cuda,
                         gp_err *err);
void gp_engine_free(gp_engine *e);
/* The number of device shares a table is split into: cuda_devices' count while CUDA answers, else
 * 1 (the streamed .npy tables and matrix jobs size their blocks by it: one block per device). */
int gp_engine_devices(gp_engine *e);
/* Name of the backend answering now: "cuda" or "cpu". */
const char *gp_engine_backend(gp_engine *e);
void gp_engine_info(gp_engine *e, gp_backend_info *out);

int gp_engine_attach(gp_engine *e, gp_graph *g, gp_err *err);
/* gp_engine_attach for g, a version made from pred (a cost change of the version serving, both
 * versions of one base; pred attached, referenced by the caller until this returns): the CCH (the
 * turn graph's with turn costs) is customized from pred's rather than the base's
 * (engine/cch.h gp_cch_prepare_from), so a chain of small changes stays small. pred NULL:
 * gp_engine_attach. */
int gp_engine_attach_from(gp_engine *e, gp_graph *g, const gp_graph *pred, gp_err *err);
/* Holds (hold 1) or lets go on (hold 0) the background work of g's version (its CCHs' perfect
 * passes, engine/cch.h gp_cch_perfect_hold) while a new version is derived from it: that work is
 * for g's own queries and would take every CPU from the derivation. Pairs of calls. */
void gp_engine_hold_background(const gp_graph *g, int hold);
int gp_engine_sssp(gp_engine *e, const gp_graph *g, uint32_t src, uint64_t max_dist, uint64_t *dist,
                   uint32_t *pred, gp_err *err);
int gp_engine_p2p(gp_engine *e, const gp_graph *g, uint32_t s, uint32_t t, int algo, gp_path *path,
                  gp_err *err);
int gp_engine_table(gp_engine *e, const gp_graph *g, const uint32_t *src, uint32_t ns,
                    const uint32_t *dst, uint32_t nt, uint64_t *out, gp_err *err);
/* A turn table's cells (float32 with scale > 0, uint64 with scale 0) on the GPU CCH of the turn
 * graph tg (engine/cch.h gp_cch_gpu_cells_on), the rows split across its devices:
 * GP_EUNSUPPORTED where tg has no CCH on the GPU or the table has fewer than gpu_table_min_cells
 * cells (then the caller combines on the host). *fix: the cells the host finishes (cell = row *
 * cols->n + column; malloc'd). */
int gp_engine_table_cells(gp_engine *e, const gp_graph *tg, const uint32_t *dst, uint32_t kt,
                          uint64_t key, const gp_dcch_ends *rows, const gp_dcch_ends *cols,
                          uint64_t closed_from, double scale, void *out, gp_dcch_fix **fix,
                          uint32_t *nfix, gp_err *err);
int gp_engine_apsp(gp_engine *e, const gp_graph *g, uint64_t *dist, uint32_t *next, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
