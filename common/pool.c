/* The thread pool generated kernels run their parallel loops on: persistent workers woken
 * per call, static contiguous chunks (as TVM's parallel_for does), caller runs chunk 0.
 * Workers and the joining caller spin briefly before sleeping on a condition variable. */
#include <pthread.h>
#include <sched.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "common.h"

/* How long a worker polls for the next call (and the caller for the join) before sleeping,
 * in microseconds; PT_POOL_SPIN_US overrides it (0: sleep at once). A vCPU woken from a futex
 * sleep took ~50 us on the Zen 5 VM (2-thread fork/join 55 us sleeping, docs/validation.md);
 * kernels call pt_parallel_for back to back, so a short poll finds the next call while an idle
 * pool still sleeps after 0.2 ms instead of burning a core. OpenMP runtimes do the same with
 * longer bounds (GOMP_SPINCOUNT, KMP_BLOCKTIME: 200 ms in LLVM's libomp). */
#define DEFAULT_SPIN_US 200

struct pt_pool {
  int n;
  double spin_s;      /* the bound on spinning */
  double caller_spin; /* the caller's current bound (wait_adaptive) */
  pthread_t *threads;
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  atomic_uint_fast64_t generation; /* bumped under mu, read by spinning workers */
  atomic_int pending;              /* workers still running this call */
  int sleepers;                    /* workers waiting on `wake` (under mu) */
  bool caller_waits;               /* the caller waits on `done` (under mu) */
  atomic_bool stop;
  void (*fn)(void *, int64_t, int64_t);
  void *ctx;
  int64_t total;
};

typedef struct {
  pt_pool *pool;
  int index;
} worker_arg;

void pt_pool_chunk(int64_t n, int parts, int i, int64_t *b, int64_t *e) {
  int64_t per = n / parts, rem = n % parts;
  *b = i * per + (i < rem ? i : rem);
  *e = *b + per + (i < rem ? 1 : 0);
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Polls until done(p, seen) or `spin` seconds are over; true if done. Every 64 polls (a pause
 * is ~20-70 cycles) it reads the clock and yields: on a machine with more runnable threads
 * than cores, the thread being waited for may be queued behind this one on the same core
 * (spinning without the yield made 2-thread fork/join 85-130 us instead of 8-20 us at load
 * 9-12 on 2 cores); with nothing else runnable the yield returns at once. */
static bool spin_until(pt_pool *p, bool (*done)(pt_pool *, uint64_t), uint64_t seen, double spin) {
  if (spin <= 0) return done(p, seen);
  double start = pt_now(), now;
  for (int i = 1;; i++) {
    if (done(p, seen)) return true;
    relax();
    if ((i & 63) == 0) {
      if ((now = pt_now()) > start + spin) return done(p, seen);
      sched_yield();
    }
  }
}

/* Each waiter adapts its own bound (as glibc's adaptive mutexes do): a spin that ran out
 * halves it; a wait that ended within the pool's bound (a spin would have caught it) raises
 * it to twice that wait, or doubles it. An idle pool, or a loaded machine where the other side
 * is queued for milliseconds, soon sleeps at once; back-to-back calls on a quiet machine spin. */
static void wait_adaptive(pt_pool *p, bool (*done)(pt_pool *, uint64_t), uint64_t seen, double *spin, pthread_cond_t *cv,
                          bool caller) {
  double t0 = pt_now();
  if (spin_until(p, done, seen, *spin)) return;
  *spin = *spin < 2e-6 ? 0 : 0.5 * *spin;
  pthread_mutex_lock(&p->mu);
  if (caller) p->caller_waits = true;
  else p->sleepers++;
  /* re-checked under mu: the other side changes the state and signals under mu */
  while (!done(p, seen)) pthread_cond_wait(cv, &p->mu);
  if (caller) p->caller_waits = false;
  else p->sleepers--;
  pthread_mutex_unlock(&p->mu);
  double waited = pt_now() - t0;
  if (waited < p->spin_s) *spin = fmin(p->spin_s, fmax(2 * *spin, 2 * waited));
}

/* For a worker: a call after generation `seen`, or the pool is stopping. */
static bool new_call(pt_pool *p, uint64_t seen) {
  return atomic_load_explicit(&p->generation, memory_order_acquire) != seen || atomic_load_explicit(&p->stop, memory_order_relaxed);
}
static bool all_done(pt_pool *p, uint64_t unused) {
  (void)unused;
  return atomic_load_explicit(&p->pending, memory_order_acquire) == 0;
}

static void *worker(void *arg) {
  worker_arg *w = arg;
  pt_pool *p = w->pool;
  int index = w->index;
  free(w);
  uint64_t seen = 0; /* the last call this worker ran */
  double spin = p->spin_s;
  for (;;) {
    wait_adaptive(p, new_call, seen, &spin, &p->wake, false);
    if (atomic_load(&p->stop)) break;
    seen = atomic_load_explicit(&p->generation, memory_order_acquire);
    int64_t b, e;
    pt_pool_chunk(p->total, p->n, index, &b, &e);
    if (b < e) p->fn(p->ctx, b, e);
    if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&p->mu); /* the caller checks `pending` under mu before it sleeps */
      if (p->caller_waits) pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->mu);
    }
  }
  return NULL;
}

pt_pool *pt_pool_new(int n_threads) { return pt_pool_new_on_stacks(n_threads, NULL, 0); }

pt_pool *pt_pool_new_on_stacks(int n_threads, char *stacks, size_t stack_bytes) {
  if (n_threads < 1) n_threads = 1;
  pt_pool *p = calloc(1, sizeof *p);
  p->n = n_threads;
  const char *env = getenv("PT_POOL_SPIN_US");
  p->spin_s = p->caller_spin = 1e-6 * (env && *env ? atof(env) : DEFAULT_SPIN_US);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  atomic_init(&p->generation, 0);
  atomic_init(&p->pending, 0);
  atomic_init(&p->stop, false);
  p->threads = calloc((size_t)n_threads, sizeof(pthread_t));
  for (int i = 1; i < n_threads; i++) {
    worker_arg *w = malloc(sizeof *w);
    w->pool = p;
    w->index = i;
    pthread_attr_t attr, *pa = NULL;
    if (stacks && pthread_attr_init(&attr) == 0) {
      pa = &attr;
      pthread_attr_setstack(&attr, stacks + (size_t)(i - 1) * stack_bytes, stack_bytes);
    }
    pthread_create(&p->threads[i], pa, worker, w);
    if (pa) pthread_attr_destroy(pa);
  }
  return p;
}

void pt_pool_free(pt_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->stop, true);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (int i = 1; i < p->n; i++) pthread_join(p->threads[i], NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done);
  free(p->threads);
  free(p);
}

int pt_pool_threads(const pt_pool *p) { return p ? p->n : 1; }

void pt_parallel_for(pt_pool *p, void (*fn)(void *, int64_t, int64_t), void *ctx, int64_t n) {
  if (n <= 0) return;
  if (!p || p->n == 1 || n == 1) {
    fn(ctx, 0, n);
    return;
  }
  p->fn = fn;
  p->ctx = ctx;
  p->total = n;
  atomic_store_explicit(&p->pending, p->n - 1, memory_order_relaxed);
  pthread_mutex_lock(&p->mu);
  atomic_fetch_add_explicit(&p->generation, 1, memory_order_release); /* publishes fn, ctx, total */
  if (p->sleepers) pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  int64_t b, e;
  pt_pool_chunk(n, p->n, 0, &b, &e);
  if (b < e) fn(ctx, b, e);
  wait_adaptive(p, all_done, 0, &p->caller_spin, &p->done, true);
}
