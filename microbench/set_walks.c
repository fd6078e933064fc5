/* L1 misses in flight per set: walks whose lines all fall in a few of L1's sets and that the
 * next level holds (a matrix column walked again and again from L2). Independent loads a fixed
 * stride apart, as a program's column walk issues them; one random chase through the same lines
 * gives their latency, and Little's law the misses in flight (latency / time per access). Zen 4
 * serves about one L1 fill per set at a time (docs/validation.md, "one L1 miss per set"), which
 * no random chase over a whole level (mlp.c) shows. Fills caches[0].set_walks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* Strides in L1 lines: 8, 16, 32 and 64 lines (512 B .. 4 KiB: 8, 4, 2 and 1 of a 64-set L1's
 * sets) and a padded 2 KiB row (33 lines: every set), the reference without the limit. */
static const int stride_lines[] = {8, 16, 32, 64, 33};

/* The sets a walk `step` lines apart uses: the set index is the line number modulo the sets
 * within a page (virtual bits), so it cycles through page_sets / gcd(step, page_sets) of them. */
static int sets_touched(int64_t step, int64_t page_sets) { return (int)(page_sets / pt_gcd64(step % page_sets, page_sets)); }

typedef struct {
  pmb_kernel_fn stride, chase;
} walk_kernels;

static int build(pmb_ctx *c, walk_kernels *k, pt_diag *d) {
  LLVMModuleRef m = pmb_jit_module(c->jit, "set_walks");
  int err = pmb_stride_kernel_build(c->jit, m, "set_walk_stride", d);
  if (err == 0) err = pmb_chase_kernel_build(c->jit, m, 1, "set_walk_chase", d);
  if (err < 0) {
    LLVMDisposeModule(m);
    return err;
  }
  if ((err = pmb_jit_add(c->jit, m, d)) < 0) return err;
  if (!(k->stride = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "set_walk_stride", d))) return d->err;
  if (!(k->chase = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "set_walk_chase", d))) return d->err;
  return PT_OK;
}

int pmb_measure_set_walks(pmb_ctx *c, pt_diag *d) {
  ptg_target *t = c->t;
  ptg_cache *l1 = t->n_caches ? &t->caches[0] : NULL;
  if (!l1 || l1->associativity < 1 || l1->line_bytes < 8) {
    pmb_progress(c, "L1 set walks: skipped (no L1 associativity from the topology)");
    return PT_OK;
  }
  walk_kernels k;
  int err = build(c, &k, d);
  if (err < 0) return err;
  int64_t line = l1->line_bytes, sets = l1->size_bytes / line / l1->associativity, page_sets = 4096 / line;
  if (page_sets > sets) page_sets = sets;
  /* enough lines that the sets touched hold an eighth of them, few enough that a quarter of
   * the next level holds them all */
  int64_t next_bytes = t->n_caches > 1 ? t->caches[1].size_bytes : 8 * l1->size_bytes;
  l1->set_walks = pt_alloc(t->arena, sizeof(ptg_set_walk) * PT_ARRAY_LEN(stride_lines));
  l1->n_set_walks = 0;
  pt_rng rng = {77};
  for (size_t s = 0; s < PT_ARRAY_LEN(stride_lines); s++) {
    int64_t stride = stride_lines[s] * line;
    int touched = sets_touched(stride_lines[s], page_sets);
    int64_t lines = 8 * (int64_t)l1->associativity * touched;
    if (lines > next_bytes / 4 / line) lines = next_bytes / 4 / line;
    lines &= ~(int64_t)3; /* whole groups of the stride kernel's unrolled loads */
    if (lines <= (int64_t)l1->associativity * touched) continue; /* those sets would hold them all */
    size_t bytes = (size_t)(lines * stride);
    char *buf = pmb_big_alloc(bytes, c->o->small_pages);
    if (!buf) return pt_fail(d, PT_ERR_NOMEM, "cannot map %zu bytes for the L1 set walks", bytes);
    memset(buf, 1, bytes);
    /* the walk's lines (line i at i x stride) in one random cycle */
    void *pos[1] = {pmb_make_cycle(buf, bytes, (int)stride, &rng, NULL)}, *sink_p;
    double ghz = pmb_recalibrate(c);
    pmb_stats lat = pmb_stats_scale(pmb_time_kernel(k.chase, pos, &sink_p, c->min_seconds, c->reps), 1e9 / pmb_chase_steps(1));
    struct {
      char *base;
      int64_t bytes, stride;
    } in = {buf, (int64_t)bytes, stride};
    int64_t sink;
    pmb_stats walk = pmb_time_kernel(k.stride, &in, &sink, c->min_seconds, c->reps);
    walk = pmb_stats_scale(walk, 1e9 / (double)pmb_stride_accesses((int64_t)bytes, stride));
    munmap(buf, bytes);
    const char *how = pt_sprintf(t->arena,
                                 "%lld lines %lld bytes apart (in %d of L1's %lld sets; %lld KiB of lines, in L2), %s pages: "
                                 "independent loads in address order, median of %d repetitions; latency: one random chase "
                                 "through the same lines, median; overlapping misses = latency / ns per access",
                                 (long long)lines, (long long)stride, touched, (long long)sets, (long long)(lines * line >> 10),
                                 c->o->small_pages ? "4 KiB" : "2 MiB", walk.reps);
    ptg_set_walk *w = &l1->set_walks[l1->n_set_walks++];
    w->stride_bytes = stride;
    w->sets = touched;
    w->lines = lines;
    w->latency_ns = (ptg_figure){lat.median, lat.spread, lat.reps, how};
    w->ns_per_access = (ptg_figure){walk.median, walk.spread, walk.reps, how};
    w->overlapping_misses = (ptg_figure){lat.median / walk.median, fmax(lat.spread, walk.spread), walk.reps, how};
    pmb_progress(c, "L1 set walk, stride %lld (%d set%s): %.2f cycles per access, latency %.1f cycles: %.2f misses in flight, %.2f per set",
                 (long long)stride, touched, touched == 1 ? "" : "s", walk.median * ghz, lat.median * ghz,
                 w->overlapping_misses.value, w->overlapping_misses.value / touched);
  }
  /* by increasing sets, as ptg_target_set_inflight reads them */
  for (int i = 1; i < l1->n_set_walks; i++)
    for (int j = i; j > 0 && l1->set_walks[j].sets < l1->set_walks[j - 1].sets; j--) {
      ptg_set_walk x = l1->set_walks[j];
      l1->set_walks[j] = l1->set_walks[j - 1], l1->set_walks[j - 1] = x;
    }
  return PT_OK;
}
