/* L1 misses in flight per set: walks whose lines all fall in a few of L1's sets and that the
 * next level holds (a matrix column walked again and again from L2). Independent loads a fixed
 * stride apart, as a program's column walk issues them; one random chase through the same lines
 * gives their latency, and Little's law the misses in flight (latency / time per access). Zen 4
 * serves about one L1 fill per set at a time (docs/validation.md, "one L1 miss per set"), which
 * no random chase over a whole level (mlp.c) shows. Fills caches[0].set_walks; the second part
 * times the same walks as read-modify-writes (a column of C += ...), whose every fill also
 * evicts a dirty line: rmw_ns_per_access. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* Strides in L1 lines: 8, 16, 32 and 64 lines (512 B .. 4 KiB: 8, 4, 2 and 1 of a 64-set L1's
 * sets) and a padded 2 KiB row (33 lines: every set), the reference without the limit. */
static const int stride_lines[PMB_SET_WALKS] = {8, 16, 32, 64, 33};

/* The sets a walk `step` lines apart uses: the set index is the line number modulo the sets
 * within a page (virtual bits), so it cycles through page_sets / gcd(step, page_sets) of them. */
static int sets_touched(int64_t step, int64_t page_sets) { return (int)(page_sets / pt_gcd64(step % page_sets, page_sets)); }

/* The walks both parts time, in stride_lines' order (a stride whose sets would hold all its
 * lines left out): enough lines that the sets touched hold an eighth of them, few enough that a
 * quarter of the next level holds them all. Returns how many (rows[] has
 * PT_ARRAY_LEN(stride_lines) entries), by increasing sets; their figures NaN. */
int pmb_plan_set_walks(const ptg_target *t, const ptg_cache *l1, ptg_set_walk *rows) {
  int64_t line = l1->line_bytes, sets = l1->size_bytes / line / l1->associativity, page_sets = 4096 / line;
  if (page_sets > sets) page_sets = sets;
  int64_t next_bytes = t->n_caches > 1 ? t->caches[1].size_bytes : 8 * l1->size_bytes;
  int n = 0;
  for (size_t s = 0; s < PT_ARRAY_LEN(stride_lines); s++) {
    int touched = sets_touched(stride_lines[s], page_sets);
    int64_t lines = 8 * (int64_t)l1->associativity * touched;
    if (lines > next_bytes / 4 / line) lines = next_bytes / 4 / line;
    lines &= ~(int64_t)3; /* whole groups of the stride kernel's unrolled loads */
    if (lines <= (int64_t)l1->associativity * touched) continue; /* those sets would hold them all */
    ptg_figure none = {.value = NAN};
    rows[n++] = (ptg_set_walk){stride_lines[s] * line, touched, lines, none, none, none, none};
  }
  /* by increasing sets, as ptg_target_set_inflight reads them */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && rows[j].sets < rows[j - 1].sets; j--) {
      ptg_set_walk x = rows[j];
      rows[j] = rows[j - 1], rows[j - 1] = x;
    }
  return n;
}

bool pmb_l1_has_sets(const ptg_target *t) {
  const ptg_cache *l1 = t->n_caches ? &t->caches[0] : NULL;
  return l1 && l1->associativity >= 1 && l1->line_bytes >= 8;
}

typedef struct {
  pmb_kernel_fn stride, chase, rmw;
} walk_kernels;

/* The load walk and its chase, or (rmw) the read-modify-write walk: each part its own module,
 * since both parts may run in one JIT. */
static int build(pmb_ctx *c, walk_kernels *k, bool rmw, pt_diag *d) {
  LLVMModuleRef m = pmb_jit_module(c->jit, rmw ? "set_walks_rmw" : "set_walks");
  int err = rmw ? pmb_stride_kernel_build(c->jit, m, "set_walk_rmw", true, d)
                : pmb_stride_kernel_build(c->jit, m, "set_walk_stride", false, d);
  if (err == 0 && !rmw) err = pmb_chase_kernel_build(c->jit, m, 1, "set_walk_chase", d);
  if (err < 0) {
    LLVMDisposeModule(m);
    return err;
  }
  if ((err = pmb_jit_add(c->jit, m, d)) < 0) return err;
  if (rmw) return (k->rmw = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "set_walk_rmw", d)) ? PT_OK : d->err;
  if (!(k->stride = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "set_walk_stride", d))) return d->err;
  if (!(k->chase = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "set_walk_chase", d))) return d->err;
  return PT_OK;
}

/* ns per access of the stride kernel `fn` over `bytes` of buf. */
static pmb_stats time_walk(pmb_ctx *c, pmb_kernel_fn fn, char *buf, size_t bytes, int64_t stride) {
  struct {
    char *base;
    int64_t bytes, stride;
  } in = {buf, (int64_t)bytes, stride};
  int64_t sink;
  pmb_stats walk = pmb_time_kernel(fn, &in, &sink, c->min_seconds, c->reps);
  return pmb_stats_scale(walk, 1e9 / (double)pmb_stride_accesses((int64_t)bytes, stride));
}

int pmb_measure_set_walks(pmb_ctx *c, pt_diag *d) {
  ptg_target *t = c->t;
  if (!pmb_l1_has_sets(t)) {
    pmb_progress(c, "L1 set walks: skipped (no L1 associativity from the topology)");
    return PT_OK;
  }
  ptg_cache *l1 = &t->caches[0];
  walk_kernels k;
  int err = build(c, &k, false, d);
  if (err < 0) return err;
  int64_t sets = l1->size_bytes / l1->line_bytes / l1->associativity;
  l1->set_walks = pt_alloc(t->arena, sizeof(ptg_set_walk) * PT_ARRAY_LEN(stride_lines));
  l1->n_set_walks = pmb_plan_set_walks(t, l1, l1->set_walks);
  pt_rng rng = {77};
  for (int i = 0; i < l1->n_set_walks; i++) {
    ptg_set_walk *w = &l1->set_walks[i];
    int64_t stride = w->stride_bytes, lines = w->lines;
    int touched = w->sets;
    size_t bytes = (size_t)(lines * stride);
    char *buf = pmb_big_alloc(bytes, c->o->small_pages);
    if (!buf) return pt_fail(d, PT_ERR_NOMEM, "cannot map %zu bytes for the L1 set walks", bytes);
    memset(buf, 1, bytes);
    /* the walk's lines (line i at i x stride) in one random cycle */
    void *pos[1] = {pmb_make_cycle(buf, bytes, (int)stride, &rng, NULL)}, *sink_p;
    double ghz = pmb_recalibrate(c);
    pmb_stats lat = pmb_stats_scale(pmb_time_kernel(k.chase, pos, &sink_p, c->min_seconds, c->reps), 1e9 / pmb_chase_steps(1));
    pmb_stats walk = time_walk(c, k.stride, buf, bytes, stride);
    munmap(buf, bytes);
    const char *how = pt_sprintf(t->arena,
                                 "%lld lines %lld bytes apart (in %d of L1's %lld sets; %lld KiB of lines, in L2), %s pages: "
                                 "independent loads in address order, median of %d repetitions; latency: one random chase "
                                 "through the same lines, median; overlapping misses = latency / ns per access",
                                 (long long)lines, (long long)stride, touched, (long long)sets,
                                 (long long)(lines * l1->line_bytes >> 10), c->o->small_pages ? "4 KiB" : "2 MiB", walk.reps);
    w->latency_ns = (ptg_figure){lat.median, lat.spread, lat.reps, how};
    w->ns_per_access = (ptg_figure){walk.median, walk.spread, walk.reps, how};
    w->overlapping_misses = (ptg_figure){lat.median / walk.median, fmax(lat.spread, walk.spread), walk.reps, how};
    pmb_progress(c, "L1 set walk, stride %lld (%d set%s): %.2f cycles per access, latency %.1f cycles: %.2f misses in flight, %.2f per set",
                 (long long)stride, touched, touched == 1 ? "" : "s", walk.median * ghz, lat.median * ghz,
                 w->overlapping_misses.value, w->overlapping_misses.value / touched);
  }
  return PT_OK;
}

#define RMW_BUFFERS 5
int pmb_measure_set_walks_rmw(pmb_ctx *c, pt_diag *d) {
  ptg_target *t = c->t;
  if (!pmb_l1_has_sets(t)) {
    pmb_progress(c, "L1 read-modify-write set walks: skipped (no L1 associativity from the topology)");
    return PT_OK;
  }
  ptg_cache *l1 = &t->caches[0];
  walk_kernels k;
  int err = build(c, &k, true, d);
  if (err < 0) return err;
  if (l1->n_set_walks == 0) { /* the load walks not measured in this run: their rows, figures NaN */
    l1->set_walks = pt_alloc(t->arena, sizeof(ptg_set_walk) * PT_ARRAY_LEN(stride_lines));
    l1->n_set_walks = pmb_plan_set_walks(t, l1, l1->set_walks);
  }
  for (int i = 0; i < l1->n_set_walks; i++) {
    ptg_set_walk *w = &l1->set_walks[i];
    size_t bytes = (size_t)(w->lines * w->stride_bytes);
    double ghz = pmb_recalibrate(c);
    /* one buffer's figure moves between runs (Zen 4, 4 sets: 4.7-6.4 or 9.1-9.5 cycles over
     * ten runs): the median buffer of RMW_BUFFERS */
    pmb_stats by_buffer[RMW_BUFFERS];
    for (int b = 0; b < RMW_BUFFERS; b++) {
      char *buf = pmb_big_alloc(bytes, c->o->small_pages);
      if (!buf) return pt_fail(d, PT_ERR_NOMEM, "cannot map %zu bytes for the L1 set walks", bytes);
      memset(buf, 1, bytes);
      by_buffer[b] = time_walk(c, k.rmw, buf, bytes, w->stride_bytes);
      munmap(buf, bytes);
      for (int j = b; j > 0 && by_buffer[j].median < by_buffer[j - 1].median; j--) {
        pmb_stats x = by_buffer[j];
        by_buffer[j] = by_buffer[j - 1], by_buffer[j - 1] = x;
      }
    }
    pmb_stats rmw = by_buffer[RMW_BUFFERS / 2];
    const char *how = pt_sprintf(t->arena,
                                 "%lld lines %lld bytes apart (in %d of L1's sets), %s pages: independent 8-byte loads in "
                                 "address order, each stored back plus one (the line goes back dirty), median of %d "
                                 "repetitions, the median of %d buffers",
                                 (long long)w->lines, (long long)w->stride_bytes, w->sets, c->o->small_pages ? "4 KiB" : "2 MiB",
                                 rmw.reps, RMW_BUFFERS);
    w->rmw_ns_per_access = (ptg_figure){rmw.median, rmw.spread, rmw.reps, how};
    pmb_progress(c, "L1 read-modify-write set walk, stride %lld (%d set%s): %.2f cycles per access",
                 (long long)w->stride_bytes, w->sets, w->sets == 1 ? "" : "s", rmw.median * ghz);
  }
  return PT_OK;
}
