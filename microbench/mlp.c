/* Misses in flight per level: for each level below L1 (and memory), k = 1..48 independent random
 * chases over a working set of that level; Little's law gives the misses that overlap as the
 * level's latency (k = 1) / the time per access with k chases, at the best k. Then strided walks
 * (a column walk: every access on a new line and page) over a buffer far beyond the last level
 * and the TLB's reach, in 4 KiB pages as the programs' own arrays are, and in 2 MiB pages. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

static const int chain_counts[] = {1, 2, 4, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128};
#define N_CHAINS ((int)PT_ARRAY_LEN(chain_counts))

/* Strided walks: stride, page. 4096 + 64: a new page and a new line offset each access (a
 * column walk of a row pitch just past a page); 4096: the same offset in every page (every
 * access in the same cache sets); 2048: two accesses per page; 8192: every other page; the
 * page-crossing strides again in 2 MiB pages: the same lines without TLB misses, so the
 * difference is the page walks'. */
static const struct {
  int64_t stride, page;
} walks[] = {{4096 + 64, 4096}, {4096, 4096}, {2048, 4096}, {8192, 4096}, {4096 + 64, (int64_t)2 << 20}, {4096, (int64_t)2 << 20}};

/* --quick: 1, 4, 12, 24, 48 and 96 chases only (the plateaus of this machine stay in reach). */
static bool skipped(const pmb_ctx *c, int i) {
  int k = chain_counts[i];
  return c->o->quick && k != 1 && k != 4 && k != 12 && k != 24 && k != 48 && k != 96;
}

typedef struct {
  pmb_kernel_fn chase[N_CHAINS];
  pmb_kernel_fn stride;
} mlp_kernels;

static int build(pmb_ctx *c, mlp_kernels *k, pt_diag *d) {
  LLVMModuleRef m = pmb_jit_module(c->jit, "mlp");
  char name[32];
  int err = PT_OK;
  for (int i = 0; i < N_CHAINS && err == 0; i++) {
    snprintf(name, sizeof name, "mlp_chase_%d", chain_counts[i]);
    err = pmb_chase_kernel_build(c->jit, m, chain_counts[i], name, d);
  }
  if (err == 0) err = pmb_stride_kernel_build(c->jit, m, "mlp_stride", false, d);
  if (err < 0) {
    LLVMDisposeModule(m);
    return err;
  }
  if ((err = pmb_jit_add(c->jit, m, d)) < 0) return err;
  for (int i = 0; i < N_CHAINS; i++) {
    snprintf(name, sizeof name, "mlp_chase_%d", chain_counts[i]);
    if (!(k->chase[i] = (pmb_kernel_fn)pmb_jit_lookup(c->jit, name, d))) return d->err;
  }
  if (!(k->stride = (pmb_kernel_fn)pmb_jit_lookup(c->jit, "mlp_stride", d))) return d->err;
  return PT_OK;
}

/* One random cycle over `bytes` of buf, and its visiting order (caller frees). */
typedef struct {
  char *buf;
  int64_t lines;
  int line;
  uint32_t *order;
} cycle;

static cycle make(char *buf, int64_t bytes, int line, pt_rng *rng) {
  cycle y = {buf, bytes / line, line, NULL};
  pmb_make_cycle(buf, (size_t)bytes, line, rng, &y.order);
  return y;
}

/* ns per access with chain_counts[i] chases started evenly along the cycle (no chase reaches
 * lines another has just brought in). */
static pmb_stats chase_ns(pmb_ctx *c, const mlp_kernels *k, int i, const cycle *y) {
  int chains = chain_counts[i];
  void *pos[PMB_MAX_CHASES], *sink;
  for (int j = 0; j < chains; j++) pos[j] = y->buf + (size_t)y->order[(int64_t)j * (y->lines / chains)] * y->line;
  pmb_stats st = pmb_time_kernel(k->chase[i], pos, &sink, c->min_seconds, c->reps);
  return pmb_stats_scale(st, 1e9 / ((double)pmb_chase_steps(chains) * chains));
}

int pmb_mlp_plateau(const double *overlap, int n, int *knee) {
  int top[3] = {-1, -1, -1}; /* the three highest overlaps, highest first */
  for (int i = 0; i < n; i++) {
    if (isnan(overlap[i])) continue;
    for (int j = 0; j < 3; j++)
      if (top[j] < 0 || overlap[i] > overlap[top[j]]) {
        for (int m = 2; m > j; m--) top[m] = top[m - 1];
        top[j] = i;
        break;
      }
  }
  int at = top[2] >= 0 ? top[1] : top[0]; /* fewer than 3 points: the highest */
  if (knee) {
    *knee = at;
    for (int i = 0; at >= 0 && i < n; i++)
      if (!isnan(overlap[i]) && overlap[i] >= 0.9 * overlap[at]) {
        *knee = i;
        break;
      }
  }
  return at;
}

/* Overlap at each k (latency / time per access, each the best of its repetitions, at most k;
 * best, not median: another tenant's work only ever adds time, to the latency as to the
 * accesses), and the plateau (pmb_mlp_plateau): `best` is the k that gave it. */
typedef struct {
  double latency_ns, per_access[N_CHAINS], overlap[N_CHAINS];
  int best, knee;
  pmb_stats best_st;
} mlp_curve;

static mlp_curve curve(pmb_ctx *c, const mlp_kernels *k, const cycle *y) {
  pmb_stats stats[N_CHAINS];
  mlp_curve r = {.best = 0};
  for (int i = 0; i < N_CHAINS; i++) {
    r.overlap[i] = NAN;
    if (skipped(c, i)) continue;
    pmb_recalibrate(c);
    pmb_stats st = chase_ns(c, k, i, y);
    r.per_access[i] = st.value;
    if (i == 0) r.latency_ns = st.value;
    r.overlap[i] = fmin(r.latency_ns / st.value, chain_counts[i]);
    stats[i] = st;
  }
  r.best = pmb_mlp_plateau(r.overlap, N_CHAINS, &r.knee);
  r.best_st = stats[r.best];
  return r;
}

/* The working set that stands for level k (1-based, n_caches + 1 = memory): the geometric
 * middle of the level's plateau (twice the level above to half the level, as levels.c takes
 * it), clear of the level above and of the level's own conflict misses; whole lines. */
static int64_t level_bytes(const ptg_target *t, int level, int64_t mem_bytes, int line) {
  if (level > t->n_caches) return mem_bytes;
  double lo = level > 1 ? 2.0 * (double)t->caches[level - 2].size_bytes : 4096, hi = t->caches[level - 1].size_bytes / 2.0;
  return (int64_t)sqrt(lo * (hi > lo ? hi : lo)) / line * line;
}

/* The fastest any number of chases can go through L1: what the kernel itself can issue (k past
 * the registers spills the chase pointers), so figures near latency / floor are capped by it. */
static double floor_ns(pmb_ctx *c, const mlp_kernels *k, char *buf, int line, pt_rng *rng) {
  int64_t bytes = c->t->n_caches ? c->t->caches[0].size_bytes / 4 : 8192;
  cycle y = make(buf, bytes, line, rng);
  double best = INFINITY;
  for (int i = 0; i < N_CHAINS; i++) {
    if (skipped(c, i)) continue;
    best = fmin(best, chase_ns(c, k, i, &y).value);
  }
  free(y.order);
  return best;
}

static int strided(pmb_ctx *c, const mlp_kernels *k, int64_t bytes, double mem_ns, pt_diag *d) {
  ptg_target *t = c->t;
  t->memory.strided = pt_alloc(t->arena, sizeof(ptg_strided_walk) * PT_ARRAY_LEN(walks));
  t->memory.n_strided = 0;
  for (size_t w = 0; w < PT_ARRAY_LEN(walks); w++) {
    bool small = walks[w].page == 4096;
    char *buf = pmb_big_alloc((size_t)bytes, small);
    if (!buf) return pt_fail(d, PT_ERR_NOMEM, "cannot map %lld bytes for the strided walks", (long long)bytes);
    memset(buf, 1, (size_t)bytes); /* every page faulted in before timing */
    struct {
      char *base;
      int64_t bytes, stride;
    } in = {buf, bytes, walks[w].stride};
    int64_t sink;
    pmb_recalibrate(c);
    pmb_stats st = pmb_time_kernel(k->stride, &in, &sink, c->min_seconds, c->reps);
    munmap(buf, (size_t)bytes);
    st = pmb_stats_scale(st, 1e9 / (double)pmb_stride_accesses(bytes, walks[w].stride));
    ptg_strided_walk *out = &t->memory.strided[t->memory.n_strided++];
    const char *how = pt_sprintf(t->arena,
                                 "independent loads %lld bytes apart over %lld MiB in %s pages, median of the repetitions; "
                                 "overlapping misses = random-chase memory latency %.1f ns (2 MiB pages) / ns per access; "
                                 "%s",
                                 (long long)walks[w].stride, (long long)(bytes >> 20), small ? "4 KiB" : "2 MiB", mem_ns,
                                 walks[w].stride >= 4096 ? "a new page each access: the prefetchers, which stay within a 4 KiB "
                                                           "page, cannot run ahead"
                                                         : "two accesses per 4 KiB page: a prefetcher may fetch the second");
    out->stride_bytes = walks[w].stride;
    out->page_bytes = walks[w].page;
    out->ns_per_access = (ptg_figure){st.median, st.spread, st.reps, how};
    out->overlapping_misses = (ptg_figure){mem_ns / st.median, st.spread, st.reps, how};
    pmb_progress(c, "strided walk, stride %lld, %s pages: %.2f ns per access, %.1f misses in flight", (long long)walks[w].stride,
                 small ? "4 KiB" : "2 MiB", st.median, mem_ns / st.median);
  }
  return PT_OK;
}

int pmb_measure_mlp(pmb_ctx *c, pt_diag *d) {
  ptg_target *t = c->t;
  mlp_kernels k;
  int err = build(c, &k, d);
  if (err < 0) return err;
  int64_t mem_bytes = pmb_memory_bytes(t);
  int line = t->n_caches ? t->caches[0].line_bytes : 64;
  char *buf = pmb_big_alloc((size_t)mem_bytes, false);
  if (!buf) return pt_fail(d, PT_ERR_NOMEM, "cannot map %lld bytes for the chases", (long long)mem_bytes);
  pt_rng rng = {4242};
  double floor = floor_ns(c, &k, buf, line, &rng), mem_ns = NAN;
  pmb_progress(c, "misses in flight: the chase kernels reach %.2f ns per access in L1 (their own limit)", floor);
  /* memory first: a level whose chase is about as slow as memory held little of its working set
   * (a last level shared with other tenants of a VM), and its figure says so */
  int levels = t->n_caches + 1;
  for (int level = levels; level >= 2; level--) {
    int64_t bytes = level_bytes(t, level, mem_bytes, line);
    cycle y = make(buf, bytes, line, &rng);
    mlp_curve r = curve(c, &k, &y);
    free(y.order);
    if (level == levels) mem_ns = r.latency_ns;
    double bound = r.latency_ns / floor;
    bool absent = level < levels && r.latency_ns > 0.6 * mem_ns;
    const char *how = pt_sprintf(t->arena,
                                 "random chases over %lld KiB (2 MiB pages; the prefetchers cannot follow), 1 to %d at once: "
                                 "latency %.1f ns / %.2f ns per access with %d (each the best repetition; the median of "
                                 "the three highest overlaps); within 10%% of it from %d chases%s%s",
                                 (long long)(bytes >> 10), c->o->quick ? 96 : chain_counts[N_CHAINS - 1], r.latency_ns,
                                 r.per_access[r.best], chain_counts[r.best], chain_counts[r.knee],
                                 r.overlap[r.best] > 0.8 * bound ? pt_sprintf(t->arena, "; near the kernel's own limit of %.0f", bound) : "",
                                 absent ? pt_sprintf(t->arena, "; not a figure of this level: its chase was as slow as memory's "
                                                               "(%.0f ns), so the level held little of the working set (a last "
                                                               "level shared with other tenants); the more chases, the more of it "
                                                               "stays cached, which Little's law would count as overlap",
                                                     mem_ns)
                                        : "");
    /* the value of a level that held nothing of ours would be memory's, inflated: unknown */
    ptg_figure f = {absent ? NAN : r.overlap[r.best], r.best_st.spread, r.best_st.reps, how};
    char row[256];
    size_t used = 0;
    for (int i = 0; i < N_CHAINS && used < sizeof row; i++)
      if (r.per_access[i] > 0) used += (size_t)snprintf(row + used, sizeof row - used, " %d:%.1f", chain_counts[i], r.overlap[i]);
    pmb_progress(c, "misses in flight, %s (%lld KiB, latency %.1f ns): %.1f (k:overlap%s)",
                 level == levels ? "memory" : pt_sprintf(t->arena, "L%d", level), (long long)(bytes >> 10), r.latency_ns, f.value,
                 row);
    if (level < levels) t->caches[level - 1].overlapping_misses = f;
    else t->memory.overlapping_misses = f;
  }
  munmap(buf, (size_t)mem_bytes);
  return strided(c, &k, mem_bytes, mem_ns, d);
}
