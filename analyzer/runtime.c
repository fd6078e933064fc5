/* The hooks instrumented code calls (registered as absolute symbols in the JIT): function
 * entry (which threads ran a function; returns the thread's own state) and memory accesses
 * (fed line by line to the calling thread's own reuse tracker, so threads never share a
 * tracker and need no locks). At rate 1 instrumented code appends each access to the
 * thread's buffer and calls the flush hook once per ~10^3 accesses (a call per access made
 * the kernel spill its vector registers around it). When sampling it tests SHARDS' hash
 * inline against the thread's `threshold` word and calls the access hook only for sampled
 * lines, or for every access while the tracker is in a burst (the threshold is then above
 * every hash). */
#include <assert.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One thread's state; instrumented code reads `threshold` (its first word) on every block
 * with memory accesses, so each sits on its own cache line. */
struct pa_thread_state {
  alignas(64) uint64_t threshold;
  uint64_t pos;               /* buffered mode: words of buf in use */
  uint64_t *buf;              /* PA_BUF_WORDS + 2 x PA_BUF_MAX_ITEMS words */
  uint64_t sampled_threshold; /* threshold outside bursts */
  pa_tracker *tracker;        /* NULL: counts only, or a thread beyond PA_MAX_THREADS */
};

static_assert(offsetof(struct pa_thread_state, pos) == PA_BUF_OFFSET_POS &&
                  offsetof(struct pa_thread_state, buf) == PA_BUF_OFFSET_BUF,
              "instrument.c addresses the buffer by these offsets");

struct pa_runtime {
  int n_functions;
  double rate;
  int64_t window;
  bool track_reuse;
  pthread_mutex_t lock; /* taken only when a thread is seen for the first time */
  _Atomic int n_threads;
  pthread_t tids[PA_MAX_THREADS];
  pa_thread_state states[PA_MAX_THREADS + 1]; /* the last: threads beyond the limit (dropped) */
  _Atomic uint64_t *masks; /* per function: bit s set if thread slot s ran it */
  _Atomic int overflow;    /* accesses from threads beyond PA_MAX_THREADS were dropped */
};

pa_runtime *pa_runtime_new(int n_functions, double rate, int64_t window, bool track_reuse) {
  pa_runtime *rt = aligned_alloc(64, (sizeof *rt + 63) / 64 * 64);
  memset(rt, 0, sizeof *rt);
  rt->n_functions = n_functions;
  rt->rate = rate;
  rt->window = window;
  rt->track_reuse = track_reuse;
  pthread_mutex_init(&rt->lock, NULL);
  rt->masks = calloc((size_t)n_functions + 1, sizeof *rt->masks);
  for (int i = 0; i <= PA_MAX_THREADS; i++)
    rt->states[i].buf = aligned_alloc(64, sizeof(uint64_t) * (PA_BUF_WORDS + 2 * PA_BUF_MAX_ITEMS));
  return rt;
}

void pa_runtime_free(pa_runtime *rt) {
  if (!rt) return;
  for (int i = 0; i < PA_MAX_THREADS; i++) pa_tracker_free(rt->states[i].tracker);
  for (int i = 0; i <= PA_MAX_THREADS; i++) free(rt->states[i].buf);
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
    pa_thread_state *st = &rt->states[s];
    if (rt->track_reuse) {
      st->tracker = pa_tracker_new(rt->n_functions, rt->rate, rt->window);
      /* every access at rate 1; a tracker starts in a burst when sampling */
      st->sampled_threshold = rt->rate >= 1 ? UINT64_MAX : (uint64_t)(rt->rate * (double)(1ull << PA_SHARDS_BITS) + 0.5);
      st->threshold = pa_tracker_bursting(st->tracker) ? UINT64_MAX : st->sampled_threshold;
    }
    atomic_store_explicit(&rt->n_threads, n + 1, memory_order_release);
  }
  pthread_mutex_unlock(&rt->lock);
  if (s < 0) atomic_store(&rt->overflow, 1);
  return s;
}

pa_thread_state *pa_rt_enter(pa_runtime *rt, int32_t fid) {
  int s = thread_slot(rt);
  if (s < 0) return &rt->states[PA_MAX_THREADS]; /* threshold 0: never called */
  if (fid >= 0 && fid < rt->n_functions) atomic_fetch_or(&rt->masks[fid], 1ULL << s);
  return &rt->states[s];
}

static void access_lines(pa_tracker *t, uint64_t a, uint64_t bytes, int fid) {
  uint64_t first = a / PA_LINE_BYTES, last = (a + bytes - 1) / PA_LINE_BYTES;
  for (uint64_t line = first; line <= last; line++) pa_tracker_access(t, line, fid);
}

void pa_rt_flush(pa_thread_state *st) {
  uint64_t n = st->pos;
  st->pos = 0;
  if (!st->tracker) return;
  for (uint64_t i = 0; i + 1 < n; i += 2) {
    uint64_t bytes = st->buf[i + 1] >> 16;
    if (bytes) access_lines(st->tracker, st->buf[i], bytes, (int)(st->buf[i + 1] & 0xffff));
  }
}

void pa_rt_access(pa_thread_state *st, const void *addr, int64_t bytes, int32_t fid) {
  if (st->pos) pa_rt_flush(st); /* buffered accesses come first */
  if (!st->tracker || bytes <= 0) return;
  access_lines(st->tracker, (uint64_t)(uintptr_t)addr, (uint64_t)bytes, fid);
  if (st->sampled_threshold != UINT64_MAX)
    st->threshold = pa_tracker_bursting(st->tracker) ? UINT64_MAX : st->sampled_threshold;
}

void pa_runtime_flush_all(pa_runtime *rt) {
  int n = pa_runtime_threads(rt);
  for (int i = 0; i < n; i++) pa_rt_flush(&rt->states[i]);
}

bool pa_runtime_overflowed(const pa_runtime *rt) { return atomic_load((_Atomic int *)&rt->overflow) != 0; }

int pa_runtime_threads(const pa_runtime *rt) { return atomic_load((_Atomic int *)&rt->n_threads); }

uint64_t pa_runtime_thread_mask(const pa_runtime *rt, int fid) { return atomic_load(&rt->masks[fid]); }

const pa_tracker *pa_runtime_tracker(const pa_runtime *rt, int slot) { return rt->states[slot].tracker; }
