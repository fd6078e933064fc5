/* The memory hierarchy as a program sees it: load-to-use latency by pointer chasing over
 * working sets from 4 KiB to 4x the last-level cache (a random cyclic permutation, one access
 * per line, so neither the prefetchers nor the line size help), level boundaries found on that
 * curve independently of hwloc, and bandwidth per level with 1..N threads (misses in flight:
 * mlp.c). Buffers use transparent huge pages where the
 * kernel allows, as chips-and-cheese's latency tests do, so TLB misses stay out of the curve. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define HUGE_PAGE ((size_t)2 << 20)

/* n bytes aligned to 2 MiB, advised to use transparent huge pages: with 4 KiB pages a random
 * chase over tens of MiB misses the TLB on most loads, and in a VM each miss is a nested
 * page walk, which would be timed as cache or memory latency (--small-pages keeps 4 KiB pages
 * to show that cost). The ends of the over-sized
 * mapping are returned at once, so munmap(p, n) frees it all. */
void *pmb_big_alloc(size_t n, bool small_pages) {
  size_t len = n + HUGE_PAGE;
  char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  char *p = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
  if (p > raw) munmap(raw, (size_t)(p - raw));
  size_t tail = (size_t)(raw + len - (p + n));
  if (tail) munmap(p + n, tail);
  madvise(p, n, small_pages ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
  return p;
}

/* Fraction of [p, p + n) the kernel backs with huge pages (AnonHugePages in
 * /proc/self/smaps), -1 when it cannot tell. Whether THP is on (madvise or always) and
 * whether 2 MiB of contiguous memory was free are the host's business, so it is recorded,
 * not required. */
static double huge_fraction(const void *p, size_t n) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  bool inside = false;
  double kb = -1;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char dash;
    if (sscanf(line, "%lx%c%lx", &lo, &dash, &hi) == 3 && dash == '-' && strchr(line, ' ') > strchr(line, '-'))
      inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
    else if (inside && strncmp(line, "AnonHugePages:", 14) == 0)
      kb = atof(line + 14), inside = false;
  }
  fclose(f);
  return kb < 0 ? -1 : fmin(1.0, kb * 1024 / (double)n);
}

/* Links the lines of buf into one random cycle (Sattolo's algorithm); returns the start and,
 * if asked, the visiting order (caller frees). */
void **pmb_make_cycle(char *buf, size_t bytes, int line, pt_rng *rng, uint32_t **order_out) {
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

#define CHASE_STEPS 16
/* iters x 16 dependent loads (the latency curve; mlp.c chases several at once). */
static void chase(int64_t iters, void *in, void *out) {
  void **p = *(void ***)in;
  for (int64_t i = 0; i < iters; i++)
    for (int u = 0; u < CHASE_STEPS; u++) p = (void **)*p;
  *(void ***)in = p;
  *(void **)out = p;
}

static pmb_stats chase_ns(pmb_ctx *c, void **start) {
  void **p = start, *sink;
  pmb_stats st = pmb_time_kernel(chase, (void *)&p, &sink, c->min_seconds, c->reps);
  return pmb_stats_scale(st, 1e9 / CHASE_STEPS);
}

static int latency_curve(pmb_ctx *c, int64_t max_bytes, pt_diag *d) {
  ptg_target *t = c->t;
  char *buf = pmb_big_alloc((size_t)max_bytes, c->o->small_pages);
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
    void **start = pmb_make_cycle(buf, (size_t)bytes, line, &rng, NULL);
    pmb_recalibrate(c);
    pmb_stats st = chase_ns(c, start);
    per_size[t->n_latency_curve] = st;
    t->latency_curve[t->n_latency_curve++] = (ptg_latency_point){bytes, st.value, st.value * c->ghz};
    if (t->n_latency_curve % 4 == 1 || (double)bytes * step > (double)max_bytes)
      pmb_progress(c, "latency %8lld KiB: %6.2f ns (%.1f cycles)", (long long)bytes / 1024, st.value, st.value * c->ghz);
  }
  /* Every level's candidate points, timed again in rounds that alternate between the levels:
   * a neighbour that disturbs the machine for a second (a VM's SMT sibling sharing the L2,
   * another tenant streaming through the shared L3) then spoils one round, not the figure. */
  int n = t->n_latency_curve;
  double best[64], ghz_at[64];
  bool timed[64] = {false};
  for (int i = 0; i < n; i++) best[i] = t->latency_curve[i].ns, ghz_at[i] = t->latency_curve[i].cycles / t->latency_curve[i].ns;
  for (int k = 0; k < t->n_caches && k < 8; k++) {
    int idx[64];
    int m = pmb_level_candidates(t, k, idx, 64);
    for (int i = 0; i < m; i++) timed[idx[i]] = true;
  }
  for (int round = 0; round < (c->o->quick ? 1 : 3); round++)
    for (int i = 0; i < n; i++) {
      if (!timed[i]) continue;
      void **start = pmb_make_cycle(buf, (size_t)t->latency_curve[i].bytes, line, &rng, NULL);
      double ghz = pmb_recalibrate(c);
      double ns = chase_ns(c, start).value;
      if (ns < best[i]) best[i] = ns, ghz_at[i] = ghz;
    }
  double mem = pmb_curve_memory_ns(t);
  double below = 0;
  pmb_level_fit fits[8];
  int levels = t->n_caches < 8 ? t->n_caches : 8;
  for (int k = 0; k < levels; k++) {
    fits[k] = pmb_fit_level(t, k, best, ghz_at, below, mem);
    if (fits[k].idx < 0) continue;
    below = fits[k].ns;
    pmb_stats st = per_size[fits[k].idx];
    const char *how = fits[k].own_plateau
                          ? "pointer chase, median of the level's plateau, each point the best of the sweep and "
                            "interleaved rounds"
                          : "pointer chase: no plateau below memory latency in this run (the level held none of the "
                            "working set; a shared last level taken by other tenants), fastest candidate point";
    t->caches[k].latency_ns = (ptg_figure){fits[k].ns, st.spread, st.reps, how};
    t->caches[k].latency_cycles = (ptg_figure){fits[k].ns * fits[k].ghz, st.spread, st.reps, how};
  }
  char note[512] = "";
  size_t used = 0;
  for (int k = 0; k < levels; k++) {
    if (fits[k].idx < 0) continue;
    double next = mem;
    for (int j = k + 1; j < levels; j++)
      if (fits[j].idx >= 0 && fits[j].own_plateau) {
        next = fits[j].ns;
        break;
      }
    int64_t from = k ? t->caches[k - 1].size_bytes / 2 : 0;
    if (fits[k].own_plateau) t->caches[k].detected_bytes = pmb_effective_bytes(t, best, from, fits[k].ns, next);
    if (used < sizeof note)
      used += (size_t)snprintf(note + used, sizeof note - used, "%sL%d %.1f cycles up to %.2f MiB (%.2f MiB per hwloc)%s",
                               used ? "; " : "", k + 1, fits[k].ns * fits[k].ghz, t->caches[k].detected_bytes / 1048576.0,
                               t->caches[k].size_bytes / 1048576.0, fits[k].own_plateau ? "" : " no plateau of its own");
  }
  double huge = huge_fraction(buf, (size_t)max_bytes);
  c->memory_note = pt_sprintf(t->arena, "latency curve: %s; memory %.0f ns; chase buffer %s", note, mem,
                              huge < 0 ? "huge pages unknown"
                                       : pt_sprintf(t->arena, "%.0f%% in 2 MiB pages", 100 * huge));
  pmb_progress(c, "%s", c->memory_note);
  pmb_stats st = per_size[t->n_latency_curve - 1];
  const char *mem_how = "pointer chase, median of the three largest working sets (up to 4x the last-level cache)";
  t->memory.latency_ns = (ptg_figure){mem, st.spread, st.reps, mem_how};
  t->memory.latency_cycles = (ptg_figure){mem * c->ghz, st.spread, st.reps, mem_how};

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
    if (!(bufs[i] = pmb_big_alloc(per_thread[i], c->o->small_pages))) {
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

int64_t pmb_memory_bytes(const ptg_target *t) {
  const ptg_cache *llc = ptg_target_llc(t);
  int64_t max_bytes = llc ? 4 * llc->size_bytes * (llc->shared_by < t->cores ? t->cores / llc->shared_by : 1)
                          : (int64_t)64 << 20;
  if (max_bytes < ((int64_t)16 << 20)) max_bytes = (int64_t)16 << 20;
  if (max_bytes > ((int64_t)1 << 30)) max_bytes = (int64_t)1 << 30;
  return max_bytes;
}

int pmb_measure_memory(pmb_ctx *c, pt_diag *d) {
  int64_t max_bytes = pmb_memory_bytes(c->t);
  int err = latency_curve(c, max_bytes, d);
  if (err == 0) err = bandwidths(c, max_bytes, d);
  return err;
}
