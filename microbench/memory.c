/* The memory hierarchy as a program sees it: load-to-use latency by pointer chasing over
 * working sets from 4 KiB to 4x the last-level cache (a random cyclic permutation, one access
 * per line, so neither the prefetchers nor the line size help), level boundaries found on that
 * curve independently of hwloc, bandwidth per level with 1..N threads, and memory-level
 * parallelism from several independent chases. Buffers use transparent huge pages where the
 * kernel allows, as chips-and-cheese's latency tests do, so TLB misses stay out of the curve. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

static void *big_alloc(size_t n) {
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  madvise(p, n, MADV_HUGEPAGE);
  return p;
}

/* Links the lines of buf into one random cycle (Sattolo's algorithm); returns the start and,
 * if asked, the visiting order (caller frees). */
static void **make_cycle(char *buf, size_t bytes, int line, pt_rng *rng, uint32_t **order_out) {
  size_t n = bytes / (size_t)line;
  uint32_t *order = malloc(n * sizeof *order);
  for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
  for (size_t i = n - 1; i > 0; i--) {
    size_t k = (size_t)pt_rng_range(rng, (int64_t)i); /* k < i: one single cycle */
    uint32_t t = order[i];
    order[i] = order[k];
    order[k] = t;
  }
  for (size_t i = 0; i < n; i++) *(void **)(buf + (size_t)order[i] * line) = buf + (size_t)order[(i + 1) % n] * line;
  void **start = (void **)(buf + (size_t)order[0] * line);
  if (order_out)
    *order_out = order;
  else
    free(order);
  return start;
}

#define MAX_CHASES 64
typedef struct {
  void **p[MAX_CHASES];
  int k;
} chase_state;

#define CHASE_STEPS 16
/* iters x 16 dependent loads on each of k chains. */
static void chase(int64_t iters, void *in, void *out) {
  chase_state *s = in;
  void **p[MAX_CHASES];
  memcpy(p, s->p, sizeof p);
  for (int64_t i = 0; i < iters; i++)
    for (int u = 0; u < CHASE_STEPS; u++)
      for (int j = 0; j < s->k; j++) p[j] = (void **)*p[j];
  memcpy(s->p, p, sizeof p);
  *(void **)out = p[0];
}

static pmb_stats chase_ns(pmb_ctx *c, void **start, int k, void **starts) {
  chase_state s = {.k = k};
  for (int j = 0; j < k; j++) s.p[j] = starts ? starts[j] : start;
  void *sink;
  pmb_stats st = pmb_time_kernel(chase, &s, &sink, c->min_seconds, c->reps);
  return pmb_stats_scale(st, 1e9 / (CHASE_STEPS * k));
}

/* Boundaries: where latency leaves a plateau by > 30%; the next plateau starts once it rises
 * less than 10% per step again. */
static void detect_levels(ptg_target *t) {
  double base = t->latency_curve[0].ns;
  bool rising = false;
  int level = 0;
  for (int i = 1; i < t->n_latency_curve && level < t->n_caches; i++) {
    double ns = t->latency_curve[i].ns, prev = t->latency_curve[i - 1].ns;
    if (!rising && ns > 1.3 * base) {
      t->caches[level++].detected_bytes = t->latency_curve[i - 1].bytes;
      rising = true;
    } else if (rising && ns < 1.1 * prev) {
      base = ns;
      rising = false;
    }
  }
}

/* A level's plateau: curve points between twice the level below (clear of it) and half the
 * level's capacity (clear of conflict misses and the level above); their lower quartile, since
 * interference only adds time (a VM's neighbours shift single points by 10-15%) while the
 * lowest point can still be a mixture with the level below. */
static const ptg_latency_point *point_in(const ptg_target *t, int64_t lo, int64_t hi) {
  const ptg_latency_point *in[64];
  int n = 0;
  for (int i = 0; i < t->n_latency_curve && n < 64; i++) {
    const ptg_latency_point *q = &t->latency_curve[i];
    if (q->bytes >= 2 * lo && q->bytes <= hi / 2) in[n++] = q;
  }
  if (n == 0) /* quick sweeps: the largest point below half the capacity */
    for (int i = 0; i < t->n_latency_curve; i++)
      if (t->latency_curve[i].bytes > lo && t->latency_curve[i].bytes <= hi / 2) in[0] = &t->latency_curve[i], n = 1;
  if (n == 0) return NULL;
  for (int i = 1; i < n; i++) /* insertion sort by latency; n is small */
    for (int j = i; j > 0 && in[j]->ns < in[j - 1]->ns; j--) {
      const ptg_latency_point *x = in[j];
      in[j] = in[j - 1];
      in[j - 1] = x;
    }
  return in[n / 4];
}

static int latency_curve(pmb_ctx *c, int64_t max_bytes, pt_diag *d) {
  ptg_target *t = c->t;
  char *buf = big_alloc((size_t)max_bytes);
  if (!buf) return pt_fail(d, PT_ERR_NOMEM, "cannot map %lld bytes for the latency test", (long long)max_bytes);
  int line = t->n_caches ? t->caches[0].line_bytes : 64;
  int cap = 64;
  t->latency_curve = pt_alloc(t->arena, sizeof(ptg_latency_point) * (size_t)cap);
  pt_rng rng = {42};
  /* full: 4 points per doubling; quick: 1 */
  double step = c->o->quick ? 2.0 : pow(2.0, 0.25);
  pmb_stats per_size[64];
  for (double s = 4096; s <= (double)max_bytes * 1.0001 && t->n_latency_curve < cap; s *= step) {
    int64_t bytes = ((int64_t)s / line) * line;
    void **start = make_cycle(buf, (size_t)bytes, line, &rng, NULL);
    pmb_recalibrate(c);
    pmb_stats st = chase_ns(c, start, 1, NULL);
    per_size[t->n_latency_curve] = st;
    t->latency_curve[t->n_latency_curve++] = (ptg_latency_point){bytes, st.value, st.value * c->ghz};
    if (t->n_latency_curve % 4 == 1 || (double)bytes * step > (double)max_bytes)
      pmb_progress(c, "latency %8lld KiB: %6.2f ns (%.1f cycles)", (long long)bytes / 1024, st.value, st.value * c->ghz);
  }
  detect_levels(t);
  /* Each level's point, timed again in rounds that alternate between the levels: a neighbour
   * that disturbs the machine for a second (a VM's SMT sibling sharing the L2) then spoils
   * one round, not the figure. */
  const ptg_latency_point *chosen[8] = {NULL};
  double best_ns[8], ghz_at[8];
  int64_t below = 0;
  for (int k = 0; k < t->n_caches && k < 8; k++) {
    chosen[k] = point_in(t, below, t->caches[k].size_bytes);
    if (chosen[k]) best_ns[k] = chosen[k]->ns, ghz_at[k] = chosen[k]->cycles / chosen[k]->ns;
    below = t->caches[k].size_bytes;
  }
  for (int round = 0; round < (c->o->quick ? 1 : 3); round++)
    for (int k = 0; k < t->n_caches && k < 8; k++) {
      if (!chosen[k]) continue;
      void **start = make_cycle(buf, (size_t)chosen[k]->bytes, line, &rng, NULL);
      double ghz = pmb_recalibrate(c);
      double ns = chase_ns(c, start, 1, NULL).value;
      if (ns < best_ns[k]) best_ns[k] = ns, ghz_at[k] = ghz;
    }
  for (int k = 0; k < t->n_caches && k < 8; k++) {
    if (!chosen[k]) continue;
    pmb_stats st = per_size[chosen[k] - t->latency_curve];
    const char *how = "pointer chase, lower quartile of the level's plateau, best of interleaved rounds";
    t->caches[k].latency_ns = (ptg_figure){best_ns[k], st.spread, st.reps, how};
    t->caches[k].latency_cycles = (ptg_figure){best_ns[k] * ghz_at[k], st.spread, st.reps, how};
  }
  const ptg_latency_point *last = &t->latency_curve[t->n_latency_curve - 1];
  pmb_stats st = per_size[t->n_latency_curve - 1];
  t->memory.latency_ns = (ptg_figure){last->ns, st.spread, st.reps, "pointer chase at 4x the last-level cache"};
  t->memory.latency_cycles = (ptg_figure){last->cycles, st.spread, st.reps, "pointer chase at 4x the last-level cache"};

  /* memory-level parallelism: k chases started far apart on the biggest cycle */
  uint32_t *order;
  make_cycle(buf, (size_t)max_bytes, line, &rng, &order);
  void *starts[MAX_CHASES];
  int64_t lines = max_bytes / line;
  double best = 1, t1 = last->ns;
  static const int ks[] = {2, 4, 8, 12, 16, 24, 32, 48, 64};
  pmb_stats best_st = st;
  for (size_t i = 0; i < PT_ARRAY_LEN(ks); i++) {
    if (c->o->quick && ks[i] > 16) break;
    /* evenly spaced along the cycle: no chase reaches lines another has just brought in */
    for (int j = 0; j < ks[i]; j++) starts[j] = buf + (size_t)order[(int64_t)j * (lines / ks[i])] * line;
    pmb_stats m = chase_ns(c, NULL, ks[i], (void **)starts);
    /* at most k misses can overlap with k chases; more is timing noise */
    double overlap = fmin(t1 / m.value, ks[i]);
    if (overlap > best) best = overlap, best_st = m;
  }
  free(order);
  t->memory.overlapping_misses = (ptg_figure){best, best_st.spread, best_st.reps, "latency / time per access with k chases"};
  pmb_progress(c, "memory latency %.1f ns, %.1f overlapping misses", t1, best);
  munmap(buf, (size_t)max_bytes);
  return PT_OK;
}

typedef struct {
  pmb_bw_fn fn;
  int kind; /* 0 read, 1 write, 2 copy, 3 triad */
  char *bufs[64];
  int64_t vectors; /* per array per thread */
  int vbytes;
  int passes;
  double cpu_seconds[64]; /* per thread, of the last run */
} bw_job;

static void bw_worker(void *ctx, int64_t begin, int64_t end) {
  bw_job *j = ctx;
  for (int64_t t = begin; t < end; t++) {
    char *base = j->bufs[t];
    int64_t bytes = j->vectors * j->vbytes; /* the arrays lie back to back */
    /* staggered by 17 and 34 lines so a[i], b[i], c[i] never share an address modulo 4 KiB
     * (4K aliasing would stall loads behind unrelated stores) */
    char *b = j->kind >= 2 ? base + bytes + 17 * 64 : base, *c = j->kind == 3 ? base + 2 * bytes + 34 * 64 : base;
    double t0 = pmb_thread_seconds();
    for (int p = 0; p < j->passes; p++) j->fn(j->vectors, base, b, c);
    j->cpu_seconds[t] = pmb_thread_seconds() - t0;
  }
}

/* GB/s for one kind with `threads` threads, each over `ws` bytes (all arrays together). */
static pmb_stats bandwidth(pmb_ctx *c, pt_pool *pool, pmb_bw_fn fn, int kind, int threads, int64_t ws, char **bufs, int vbytes) {
  static const int arrays[4] = {1, 1, 2, 3};
  static const int traffic[4] = {1, 1, 2, 3}; /* arrays read or written per pass (STREAM) */
  bw_job j = {.fn = fn, .kind = kind, .passes = 1, .vbytes = vbytes};
  int64_t per_array = ws / arrays[kind];
  int64_t unit = (int64_t)vbytes * pmb_bandwidth_unroll();
  j.vectors = (per_array / unit) * pmb_bandwidth_unroll();
  if (j.vectors < pmb_bandwidth_unroll()) j.vectors = pmb_bandwidth_unroll();
  for (int t = 0; t < threads; t++) j.bufs[t] = bufs[t];
  pt_parallel_for(pool, bw_worker, &j, threads); /* warm: caches filled, pages touched */
  for (;;) {
    double t0 = pt_now();
    pt_parallel_for(pool, bw_worker, &j, threads);
    double dt = pt_now() - t0;
    if (dt >= c->min_seconds || j.passes > (1 << 24)) break;
    j.passes *= dt > 0 && c->min_seconds / dt < 16 ? (int)ceil(1.2 * c->min_seconds / dt) + 1 : 16;
  }
  double v[64];
  int reps = c->reps < 64 ? c->reps : 64;
  /* Each thread's rate over its own CPU time, summed: time other processes take from a
   * shared machine is not the kernel's (the same reason single-threaded kernels use CPU time). */
  double bytes = (double)traffic[kind] * (double)j.vectors * vbytes * j.passes;
  for (int r = 0; r < reps; r++) {
    pt_parallel_for(pool, bw_worker, &j, threads);
    v[r] = 0;
    for (int t = 0; t < threads; t++) v[r] += bytes / j.cpu_seconds[t] / 1e9;
  }
  pmb_stats s = pmb_stats_of(v, reps);
  s.value = s.max; /* a rate: the best repetition is the fastest */
  s.spread = s.value > 0 ? (s.max - s.min) / s.value : 0;
  return s;
}

static int bandwidths(pmb_ctx *c, int64_t mem_bytes, pt_diag *d) {
  ptg_target *t = c->t;
  pmb_bw_fn fns[4];
  int bits = t->max_vector_bits, vbytes = bits / 8;
  int err = pmb_bandwidth_kernels(c->jit, bits, fns, d);
  if (err < 0) return err;
  int max_threads = c->o->max_threads > 0 ? c->o->max_threads : t->cores;
  if (max_threads > 64) max_threads = 64;
  int counts[8], n_counts = 0;
  for (int n = 1; n < max_threads && n_counts < 7; n *= 2) counts[n_counts++] = n;
  counts[n_counts++] = max_threads;
  /* per thread: room for the largest working set (memory with one thread) */
  char *bufs[64];
  /* Thread i only ever runs in groups of more than i threads, each thread over at most
   * mem_bytes / threads (or half a cache), so it needs mem_bytes / (i + 1): the total stays
   * near mem_bytes x ln(threads) instead of mem_bytes x threads. */
  size_t per_thread[64];
  int64_t biggest_cache = 0;
  for (int k = 0; k < t->n_caches; k++) biggest_cache = t->caches[k].size_bytes > biggest_cache ? t->caches[k].size_bytes : biggest_cache;
  for (int i = 0; i < max_threads; i++) {
    int64_t need = mem_bytes / (i + 1) > biggest_cache / 2 ? mem_bytes / (i + 1) : biggest_cache / 2;
    per_thread[i] = (size_t)need + 3 * 4096;
    if (!(bufs[i] = big_alloc(per_thread[i]))) {
      for (int k = 0; k < i; k++) munmap(bufs[k], per_thread[k]);
      return pt_fail(d, PT_ERR_NOMEM, "cannot map bandwidth buffers");
    }
    memset(bufs[i], 0x3f, per_thread[i]); /* floats of 0.747: triad products stay normal (denormals trap to microcode) */
  }
  pt_pool *pool = pt_pool_new(max_threads);
  for (int level = 1; level <= t->n_caches + 1; level++) {
    ptg_bandwidth *out = pt_alloc(t->arena, sizeof(ptg_bandwidth) * (size_t)n_counts);
    for (int ci = 0; ci < n_counts; ci++) {
      int threads = counts[ci];
      int64_t ws;
      if (level <= t->n_caches) {
        const ptg_cache *k = &t->caches[level - 1];
        int sharing = threads < k->shared_by ? threads : k->shared_by;
        ws = k->size_bytes / 2 / sharing; /* half the capacity, split among the sharers */
      } else {
        ws = mem_bytes / threads;
      }
      out[ci].threads = threads;
      ptg_figure *f[4] = {&out[ci].read, &out[ci].write, &out[ci].copy, &out[ci].triad};
      for (int kind = 0; kind < 4; kind++) {
        /* pool of max_threads workers; a run with fewer threads leaves the rest idle */
        pt_pool *p = threads == max_threads ? pool : NULL;
        pt_pool *own = p ? NULL : pt_pool_new(threads);
        *f[kind] = pmb_figure(bandwidth(c, p ? p : own, fns[kind], kind, threads, ws, bufs, vbytes));
        pt_pool_free(own);
      }
      pmb_progress(c, "bandwidth %s, %d thread(s): read %.1f, write %.1f, copy %.1f, triad %.1f GB/s",
                   level <= t->n_caches ? pt_sprintf(t->arena, "L%d", level) : "memory", threads, out[ci].read.value,
                   out[ci].write.value, out[ci].copy.value, out[ci].triad.value);
    }
    if (level <= t->n_caches) {
      t->caches[level - 1].bandwidth = out;
      t->caches[level - 1].n_bandwidth = n_counts;
    } else {
      t->memory.bandwidth = out;
      t->memory.n_bandwidth = n_counts;
    }
  }
  pt_pool_free(pool);
  for (int i = 0; i < max_threads; i++) munmap(bufs[i], per_thread[i]);
  return PT_OK;
}

int pmb_measure_memory(pmb_ctx *c, pt_diag *d) {
  const ptg_cache *llc = ptg_target_llc(c->t);
  int64_t max_bytes = llc ? 4 * llc->size_bytes * (llc->shared_by < c->t->cores ? c->t->cores / llc->shared_by : 1)
                          : (int64_t)64 << 20;
  if (max_bytes < ((int64_t)16 << 20)) max_bytes = (int64_t)16 << 20;
  if (max_bytes > ((int64_t)1 << 30)) max_bytes = (int64_t)1 << 30;
  int err = latency_curve(c, max_bytes, d);
  if (err == 0) err = bandwidths(c, max_bytes, d);
  return err;
}
