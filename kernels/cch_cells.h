/* cch_cells.h - a turn-cost table's cells on the GPU (kernels/cch_cells.cu), behind plain C for
 * engine/cch_cuda.c and engine/snap.c.
 *
 * A table between snapped positions on a turn graph is computed between their EBG ends (road
 * arcs the route may start or end on): RPHAST gives the ends' table, and each cell is the
 * cheapest pair of its row's and its column's ends, plus the origin's part of its arc, less the
 * destination's (engine/snap.c cell_turns). Done on the host, that combine reads the ends' table
 * (ks x kt 64-bit words, several times the cells) after its copy from the device; here the device
 * combines where the ends' table is and only the cells come back, as float32 in the graph's unit
 * (NaN: no route), 4 bytes a cell.
 *
 * Two kinds of cell need the host, and come back as a list instead: where the row's position lies
 * on the column's arc (the direct way along it), and where a pair meets at one EBG node with the
 * destination behind the origin (around and back: a search). For those the device gives the
 * minimum over its other pairs, and the host finishes the cell (engine/snap.c cell_extra).
 */
#ifndef GP_KERNELS_CCH_CELLS_H
#define GP_KERNELS_CCH_CELLS_H

#include "graph/gp.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The EBG ends of n positions: position i's are first[i] .. first[i+1]-1, each an EBG node
 * (node) with its cost (origins: to add; destinations: to subtract); per position its road arc and
 * the reverse arc (arc, rarc: GP_NONE when none) and the OSM id of the node it stands on (orig,
 * INT64_MIN when not at a node). ix: a column end's index in the table's distinct targets (rows:
 * unused, the row ends are the sources in their order). */
typedef struct gp_dcch_ends {
    uint32_t n;
    const uint32_t *first, *ix, *node, *arc, *rarc;
    const uint64_t *cost;
    const int64_t *orig;
} gp_dcch_ends;

/* Positions [r0, r0 + n) of e as ends of their own (their ends from e->first[r0] on). */
static inline gp_dcch_ends gp_dcch_ends_part(const gp_dcch_ends *e, uint32_t r0, uint32_t n) {
    gp_dcch_ends p = *e;
    p.n = n;
    p.first = e->first + r0;
    p.arc = e->arc + r0;
    p.rarc = e->rarc ? e->rarc + r0 : NULL;
    p.orig = e->orig + r0;
    return p;
}

/* A fixed-up cell: its index (row * columns + column, in the call's rows) and the cheapest of
 * the pairs the device could answer (UINT64_MAX: none). */
typedef struct gp_dcch_fix {
    uint64_t cell, partial;
} gp_dcch_fix;

typedef struct gp_dcch gp_dcch;

/* The table's columns for gp_dcch_cells, uploaded to d once per key (a table plan's: the blocks of
 * one answer share them); cols->ix index the targets of d's last gp_dcch_rphast_prepare. */
int gp_dcch_cells_cols(gp_dcch *d, void *stream, uint64_t key, const gp_dcch_ends *cols,
                       gp_err *err);
/* Bytes of one cell as gp_dcch_cells writes it: float32 with scale > 0, uint64 with scale 0. */
static inline size_t gp_dcch_cell_bytes(double scale) { return scale > 0 ? 4 : 8; }
/* The cells of rows->n rows against the columns of gp_dcch_cells_cols: RPHAST from the k =
 * rows->first[rows->n] - rows->first[0] row ends (init lists in local ids, as gp_dcch_rphast), in
 * 32-bit ends' cells (64-bit where one saturates), then a thread per cell. out (host, rows->n x
 * columns, page-locked for the bus's speed): with scale > 0 float32 of cost / scale, NaN for no
 * route; with scale 0 the costs as uint64 (UINT64_MAX no route); a cost of closed_from or more is
 * no route where closed_from is not 0. The cells the host finishes hold 0 and are listed in *fix
 * (malloc'd, *nfix entries; free it). *w64: 1 when the ends' table ran in 64-bit cells. *ms:
 * device milliseconds. */
int gp_dcch_cells(gp_dcch *d, void *stream, uint32_t k, const uint32_t *init_first,
                  const uint32_t *init_local, const uint64_t *init_dist, const gp_dcch_ends *rows,
                  uint64_t closed_from, double scale, void *out, gp_dcch_fix **fix, uint32_t *nfix,
                  int *w64, float *ms, gp_err *err);

#ifdef __cplusplus
}
#endif
#endif
