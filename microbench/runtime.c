/* Cost of portent's own thread pool (common/pool.c), which generated kernels run their
 * parallel loops on: fork/join = one pt_parallel_for with an empty body; barrier = one round
 * of a sense-reversing spin barrier among the pool's threads inside a parallel region (what
 * a kernel pays to synchronise without leaving the region). */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"

static void empty_body(void *ctx, int64_t begin, int64_t end) { (void)ctx, (void)begin, (void)end; }

typedef struct {
  pt_pool *pool;
  int threads;
} fj_state;

static void fork_join(int64_t iters, void *in, void *out) {
  fj_state *s = in;
  for (int64_t i = 0; i < iters; i++) pt_parallel_for(s->pool, empty_body, NULL, s->threads);
  (void)out;
}

typedef struct {
  _Alignas(64) atomic_int arrived;
  _Alignas(64) atomic_int sense;
  int threads;
  int64_t rounds;
} barrier_state;

static void barrier_body(void *ctx, int64_t begin, int64_t end) {
  barrier_state *b = ctx;
  (void)begin, (void)end;
  int local = 0;
  for (int64_t r = 0; r < b->rounds; r++) {
    local = !local;
    if (atomic_fetch_add(&b->arrived, 1) == b->threads - 1) {
      atomic_store(&b->arrived, 0);
      atomic_store(&b->sense, local);
    } else {
      /* spin, then yield: with more threads than free cores (a shared machine) the partner
       * only runs when this thread lets the scheduler switch */
      for (int spins = 0; atomic_load_explicit(&b->sense, memory_order_acquire) != local; spins++) {
        if (spins > 2000) sched_yield();
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
}

typedef struct {
  pt_pool *pool;
  barrier_state *b;
} barrier_run;

static void barriers(int64_t iters, void *in, void *out) {
  barrier_run *s = in;
  atomic_store(&s->b->arrived, 0);
  atomic_store(&s->b->sense, 0);
  s->b->rounds = iters;
  pt_parallel_for(s->pool, barrier_body, s->b, s->b->threads);
  (void)out;
}

int pmb_measure_runtime(pmb_ctx *c, pt_diag *d) {
  ptg_target *t = c->t;
  int max_threads = c->o->max_threads > 0 ? c->o->max_threads : t->cores;
  int counts[8], n = 0;
  for (int k = 1; k < max_threads && n < 7; k *= 2) counts[n++] = k;
  counts[n++] = max_threads;
  t->runtime = pt_alloc(t->arena, sizeof(ptg_runtime) * (size_t)n);
  for (int i = 0; i < n; i++) {
    pt_pool *pool = pt_pool_new(counts[i]);
    fj_state fj = {pool, counts[i]};
    char sink[64];
    pmb_stats s = pmb_time_kernel_wall(fork_join, &fj, sink, c->min_seconds * 5, c->reps);
    barrier_state *b = aligned_alloc(64, sizeof *b);
    *b = (barrier_state){.threads = counts[i]};
    barrier_run br = {pool, b};
    pmb_stats sb = pmb_time_kernel_wall(barriers, &br, sink, c->min_seconds * 5, c->reps);
    free(b);
    pt_pool_free(pool);
    s = pmb_stats_scale(s, 1e9);
    sb = pmb_stats_scale(sb, 1e9);
    t->runtime[i] = (ptg_runtime){.threads = counts[i], .fork_join_ns = pmb_figure(s), .barrier_ns = pmb_figure(sb)};
    pmb_progress(c, "thread pool, %d thread(s): fork/join %.0f ns, barrier %.0f ns", counts[i], s.value, sb.value);
  }
  t->n_runtime = n;
  (void)d;
  return PT_OK;
}
