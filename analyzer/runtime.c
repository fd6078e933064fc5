/* The hooks instrumented code calls (registered as absolute symbols in the JIT): function
 * entry (which threads ran a function) and memory accesses (fed line by line to the calling
 * thread's own reuse tracker, so threads never share a tracker and need no locks). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"

struct pa_runtime {
  int n_functions;
  double rate;
  int64_t window;
  bool track_reuse;
  pthread_mutex_t lock; /* taken only when a thread is seen for the first time */
  _Atomic int n_threads;
  pthread_t tids[PA_MAX_THREADS];
  pa_tracker *trackers[PA_MAX_THREADS];
  _Atomic uint64_t *masks; /* per function: bit s set if thread slot s ran it */
  _Atomic int overflow;    /* accesses from threads beyond PA_MAX_THREADS were dropped */
};

pa_runtime *pa_runtime_new(int n_functions, double rate, int64_t window, bool track_reuse) {
  pa_runtime *rt = calloc(1, sizeof *rt);
  rt->n_functions = n_functions;
  rt->rate = rate;
  rt->window = window;
  rt->track_reuse = track_reuse;
  pthread_mutex_init(&rt->lock, NULL);
  rt->masks = calloc((size_t)n_functions + 1, sizeof *rt->masks);
  return rt;
}

void pa_runtime_free(pa_runtime *rt) {
  if (!rt) return;
  for (int i = 0; i < PA_MAX_THREADS; i++) pa_tracker_free(rt->trackers[i]);
  pthread_mutex_destroy(&rt->lock);
  free((void *)rt->masks);
  free(rt);
}

static int thread_slot(pa_runtime *rt) {
  pthread_t self = pthread_self();
  int n = atomic_load_explicit(&rt->n_threads, memory_order_acquire);
  for (int i = 0; i < n; i++)
    if (pthread_equal(rt->tids[i], self)) return i;
  pthread_mutex_lock(&rt->lock);
  n = atomic_load_explicit(&rt->n_threads, memory_order_relaxed);
  int s = -1;
  for (int i = 0; i < n && s < 0; i++)
    if (pthread_equal(rt->tids[i], self)) s = i;
  if (s < 0 && n < PA_MAX_THREADS) {
    s = n;
    rt->tids[s] = self;
    if (rt->track_reuse) rt->trackers[s] = pa_tracker_new(rt->n_functions, rt->rate, rt->window);
    atomic_store_explicit(&rt->n_threads, n + 1, memory_order_release);
  }
  pthread_mutex_unlock(&rt->lock);
  if (s < 0) atomic_store(&rt->overflow, 1);
  return s;
}

void pa_rt_enter(pa_runtime *rt, int32_t fid) {
  int s = thread_slot(rt);
  if (s >= 0 && fid >= 0 && fid < rt->n_functions) atomic_fetch_or(&rt->masks[fid], 1ULL << s);
}

void pa_rt_access(pa_runtime *rt, const void *addr, int64_t bytes, int32_t fid) {
  if (!rt->track_reuse || bytes <= 0) return;
  int s = thread_slot(rt);
  if (s < 0) return;
  uint64_t a = (uint64_t)(uintptr_t)addr;
  uint64_t first = a / PA_LINE_BYTES, last = (a + (uint64_t)bytes - 1) / PA_LINE_BYTES;
  for (uint64_t line = first; line <= last; line++) pa_tracker_access(rt->trackers[s], line, fid);
}

bool pa_runtime_overflowed(const pa_runtime *rt) { return atomic_load((_Atomic int *)&rt->overflow) != 0; }

int pa_runtime_threads(const pa_runtime *rt) { return atomic_load((_Atomic int *)&rt->n_threads); }

uint64_t pa_runtime_thread_mask(const pa_runtime *rt, int fid) { return atomic_load(&rt->masks[fid]); }

const pa_tracker *pa_runtime_tracker(const pa_runtime *rt, int slot) { return rt->trackers[slot]; }
