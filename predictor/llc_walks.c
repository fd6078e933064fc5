/* +llcwalk: walks served past the last level that this machine actually keeps. A walk that
 * opens a new line (and, at a page or more, a new page) at every access, whose lines come back
 * only after more bytes than the last level holds, is served by memory at the pace of a strided
 * walk there, which the prefetchers cannot run ahead of (bert_qkv's default: B's column, 9216
 * bytes apart, back only after one pass over its 7.1 MB; 7.7 ns an iteration measured where the
 * FMAs take 4.3). The reuse histograms place those lines in the nominal last level, and the
 * misses the model does see overlap the compute; neither knows the VM's last level holds about
 * 4 MB of its nominal 32 MiB (docs/validation.md, session 15).
 *
 * Where a walk's lines come back: its strides and, for a fused or parallel loop's split index,
 * the period after which they wrap (analyzer/access.c), outward from the walk's loop. Which share
 * of them the last level still serves at that reuse distance: the target's pointer-chase latency
 * curve at that many bytes, between the last level's latency and memory's. The time per access
 * of the rest: the target's strided walk (memory.strided_walks, 4 KiB pages) at the nearest
 * stride. All three are measured; a target without the curve or the walks is unchanged. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

#define PAGE_BYTES 4096

static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

/* Bytes a walk (node n of a block of loop `loop`, `lines` lines per sweep of it) touches before
 * its lines come back: outward from the loop, each enclosing loop that moves it a line or more
 * multiplies them by its iterations (or by its wrap period, when the wrap brings it back within
 * a line), up to the first that moves it less, whose next iteration finds the same lines. An
 * unknown stride stops there: what is known so far, a lower bound. */
static double reuse_bytes(const pa_function *f, int loop, const pa_node *n, double lines, const double *trip) {
  int q = f->loops[loop].parent;
  for (int k = 1; k < n->n_strides && q >= 0; k++, q = f->loops[q].parent) {
    int64_t s = n->strides[k];
    if (s == PA_STRIDE_UNKNOWN || abs64(s) < PA_LINE_BYTES) break;
    double outer = trip[f->loops[q].header];
    if (!(outer >= 1)) outer = 1;
    int64_t period = n->periods ? n->periods[k] : 0;
    if (period > 0 && (double)period < outer && abs64(n->period_strides[k]) < PA_LINE_BYTES) {
      lines *= (double)period; /* back after one period */
      break;
    }
    lines *= outer;
  }
  return lines * PA_LINE_BYTES;
}

/* The share of accesses at a reuse distance of `bytes` that the last level no longer serves:
 * where the target's latency curve (log-linear between its points) stands between the last
 * level's latency and memory's. 0 without the figures. */
static double memory_share(const ptg_target *t, double bytes) {
  int levels = ptg_target_cache_levels(t);
  const ptg_cache *last = levels > 0 ? ptg_target_cache(t, levels) : NULL;
  double hit = last ? last->latency_ns.value : NAN, miss = t->memory.latency_ns.value;
  if (t->n_latency_curve < 2 || !(hit > 0) || !(miss > hit)) return 0;
  const ptg_latency_point *c = t->latency_curve;
  int n = t->n_latency_curve;
  double ns;
  if (bytes <= (double)c[0].bytes) ns = c[0].ns;
  else if (bytes >= (double)c[n - 1].bytes) ns = c[n - 1].ns;
  else {
    int i = 1;
    while (i < n - 1 && (double)c[i].bytes < bytes) i++;
    double x = log(bytes / (double)c[i - 1].bytes) / log((double)c[i].bytes / (double)c[i - 1].bytes);
    ns = c[i - 1].ns + x * (c[i].ns - c[i - 1].ns);
  }
  double share = (ns - hit) / (miss - hit);
  return share < 0 ? 0 : share > 1 ? 1 : share;
}

void pp_llc_walks_init(pp_predictor *pp) {
  const ptg_target *t = pp->t;
  pp->llc_least_stride = 0;
  for (int i = 0; i < t->memory.n_strided; i++) {
    const ptg_strided_walk *w = &t->memory.strided[i];
    if (w->page_bytes == PAGE_BYTES && w->stride_bytes > 0 && w->ns_per_access.value > 0 &&
        (pp->llc_least_stride == 0 || w->stride_bytes < pp->llc_least_stride))
      pp->llc_least_stride = w->stride_bytes;
  }
}

double pp_loop_llc_walks(pp_predictor *pp, const pa_function *f, int loop, const double *trip, const double *ecount) {
  const ptg_target *t = pp->t;
  if (loop < 0 || loop >= f->n_loops || pp->llc_least_stride <= 0) return 0;
  const pa_loop *L = &f->loops[loop];
  double need = 0;
  for (int k = 0; k < L->n_blocks; k++) {
    int j = L->blocks[k];
    if (!pp_loop_walk_block(f, loop, j, trip, ecount)) continue;
    const pa_block *b = &f->blocks[j];
    for (int i = 0; i < b->n_nodes; i++) {
      const pa_node *n = &b->nodes[i];
      /* walks a measured stride or more apart (below it the prefetchers follow them, and the
       * bandwidth bound prices them) */
      if (!n->is_memory || n->n_strides < 1 || n->op == PA_OP_GATHER || n->strides[0] == PA_STRIDE_UNKNOWN ||
          abs64(n->strides[0]) < pp->llc_least_stride || pp_wraps_in_loop(n))
        continue;
      int64_t s = abs64(n->strides[0]);
      /* the strided walks are measured over more pages than the TLB reaches, each access on a
       * page the prefetchers have not seen lately; a sweep over fewer pages than the first-level
       * DTLB holds comes back to them while its pages are fresh (bert_qkv #1002: 24 rows, the
       * next j moves 128 bytes along each, a stream per page that the prefetchers follow) */
      double pages = s >= PAGE_BYTES ? trip[j] : trip[j] * (double)s / PAGE_BYTES;
      if (pages <= pp->tlb_l1_entries) continue;
      bool seen = false; /* a load and its store back, neighbouring elements: one stream */
      for (int e = 0; e < i && !seen; e++) seen = b->nodes[e].n_strides > 0 && pp_same_stream(&b->nodes[e], n);
      if (seen) continue;
      double parts = n->bytes > PA_LINE_BYTES ? (n->bytes + PA_LINE_BYTES - 1) / PA_LINE_BYTES : 1;
      double share = memory_share(t, reuse_bytes(f, loop, n, trip[j] * parts, trip));
      const ptg_strided_walk *w = share > 0 ? pp_nearest_strided_walk(t, s) : NULL;
      /* one access opens one page; the other lines of a wide access ride with it */
      if (w) need += ecount[j] * share * w->ns_per_access.value * pp->freq_ghz;
    }
  }
  return need;
}
