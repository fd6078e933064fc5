/* +shared: a parallel body whose threads store into the same cache lines (false sharing).
 * The pool gives each thread a contiguous chunk of the parallel loop's iterations; a store
 * whose address moves s bytes per iteration of that loop gives a thread s x chunk bytes, and
 * where that is under a line, every line it writes is also written by other threads: each such
 * store waits for the line to come from another core's cache. That transfer goes through the
 * level the cores share (its load latency, characterized), and such misses overlap at most as
 * the levels on the way let misses overlap (the least of their overlapping_misses and memory's:
 * an L1 miss holds one of L1's fill buffers however far it goes). dwconv_mb #28 on the 16-core Emerald Rapids host (the
 * parallel loop is x % 7: 7 threads store into every line of the output) runs slower at 8 and 16
 * threads than at one (docs/validation.md, predictor "Session 10"). */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

double pp_sharing_store_cycles(const ptg_target *t, double mlp) {
  int levels = ptg_target_cache_levels(t);
  double latency = NAN, inflight = mlp >= 1 ? mlp : 10;
  for (int L = 1; L <= levels; L++) {
    const ptg_cache *c = ptg_target_cache(t, L);
    if (!c) continue;
    /* every level's misses in flight on the way (L2's figure: L1 misses outstanding at once) */
    if (L >= 2 && c->overlapping_misses.value >= 1 && c->overlapping_misses.value < inflight)
      inflight = c->overlapping_misses.value;
    if (c->shared_by > 1) {
      latency = pp_level_latency(t, L);
      break;
    }
  }
  if (!isfinite(latency)) latency = pp_level_latency(t, 0); /* no shared cache: through memory */
  return latency / inflight;
}

int pp_shared_stores(const pa_function *f, const pa_block *b, int threads) {
  if (threads <= 1 || f->chunk_iterations <= 1 || b->loop < 0 || b->loop >= f->n_loops) return 0;
  /* the parallel loop is the body's one outermost loop: the strides' last entry */
  int outermost = 0;
  for (int l = 0; l < f->n_loops; l++) outermost += f->loops[l].parent < 0;
  if (outermost != 1) return 0;
  int64_t begin, end;
  pt_pool_chunk(f->chunk_iterations, threads < f->chunk_iterations ? threads : (int)f->chunk_iterations, 0, &begin,
                &end);
  int64_t chunk = end - begin, depth = f->loops[b->loop].depth;
  int n = 0;
  for (int k = 0; k < b->n_nodes; k++) {
    const pa_node *x = &b->nodes[k];
    if (x->op != PA_OP_STORE || x->n_strides != depth || x->n_strides < 1) continue;
    int64_t s = x->strides[x->n_strides - 1];
    if (s == PA_STRIDE_UNKNOWN || s == 0) continue;
    if (llabs(s) * chunk < PA_LINE_BYTES) n++;
  }
  return n;
}
