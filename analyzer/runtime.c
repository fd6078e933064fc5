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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One thread's state; instrumented code reads `threshold` (its first word) on every block
 * with memory accesses, so each sits on its own cache line. */
/* Windowed runs: where the thread is in its schedule of time windows. Time is counted in
 * the accesses of gated blocks (those with buffered accesses), so "blocks" below are accesses. */
typedef enum { PH_START, PH_OFF, PH_WARM, PH_MEASURE } win_phase;
typedef struct {
  pa_trace_opts o;
  int64_t n;           /* accesses the run is expected to make (static counts) */
  int64_t L, W;        /* blocks per window; per warm-up (known after the first window) */
  int k;               /* windows done */
  int64_t start, len;  /* the current phase: first block and length */
  int64_t done;        /* end of the last window */
  win_phase phase;
  bool whole;          /* too short for windows: every block measured */
  double counted;      /* blocks measured */
  int n_groups;
  double *first, *rest; /* [group][PA_TRACKER_WORDS] of the first window and of the later ones */
  uint64_t *base;       /* tracker counts already taken */
  double *acc;          /* combined, after the run */
  pa_warm_filter filter; /* warm-ups feed the tracker through it */
} win_state;

struct pa_thread_state {
  alignas(64) uint64_t threshold;
  uint64_t pos;               /* buffered mode: words of buf in use */
  uint64_t *buf;              /* PA_BUF_WORDS + 2 x PA_BUF_MAX_ITEMS words */
  int64_t gate;               /* windowed: gated blocks left in this phase, minus one */
  uint64_t recording;         /* windowed: gated blocks append their accesses */
  uint64_t *repeats;          /* line filter: [function][PA_REUSE_BINS] accesses that repeated a line */
  void *locals;               /* moved locals' region (pa_move_locals); NULL: they stay on the stack */
  uint64_t *counts;           /* block counters, [n_blocks]: the thread's own, so no atomics */
  uint64_t sampled_threshold; /* threshold outside bursts */
  pa_tracker *tracker;        /* NULL: counts only, or a thread beyond PA_MAX_THREADS */
  win_state *win;             /* windowed runs only */
};

static_assert(offsetof(struct pa_thread_state, pos) == PA_BUF_OFFSET_POS &&
                  offsetof(struct pa_thread_state, buf) == PA_BUF_OFFSET_BUF &&
                  offsetof(struct pa_thread_state, gate) == PA_GATE_OFFSET &&
                  offsetof(struct pa_thread_state, recording) == PA_RECORDING_OFFSET &&
                  offsetof(struct pa_thread_state, repeats) == PA_REPEATS_OFFSET &&
                  offsetof(struct pa_thread_state, locals) == PA_LOCALS_OFFSET &&
                  offsetof(struct pa_thread_state, counts) == PA_COUNTS_OFFSET,
              "instrument.c addresses the buffer and the gate by these offsets");

struct pa_runtime {
  int n_functions, n_blocks;
  double rate;
  int64_t window;
  bool track_reuse;
  bool windowed;
  pa_trace_opts win_opts;
  int64_t win_blocks;
  int n_llc;                     /* larger set counts each tracker keeps per-set stacks for */
  int llc_sets[PA_LLC_COUNTS];
  pthread_mutex_t lock; /* taken only when a thread is seen for the first time */
  _Atomic int n_threads;
  pthread_t tids[PA_MAX_THREADS];
  pa_thread_state states[PA_MAX_THREADS + 1]; /* the last: threads beyond the limit (dropped) */
  _Atomic uint64_t *masks; /* per function: bit s set if thread slot s ran it */
  _Atomic int overflow;    /* accesses from threads beyond PA_MAX_THREADS were dropped */
  _Atomic int out_of_memory; /* a thread's buffers could not be made: it shares the spare ones */
  int n_stacks;            /* the locals region of each thread stack the run maps */
  struct {
    uintptr_t lo, hi;
    void *locals;
  } stacks[PA_MAX_THREADS];
  uint64_t *locals_map; /* the region's lines tracked at weight 1 (sampling), or NULL */
  int64_t locals_map_lines; /* lines the map covers (the region's), not how many are set */
};

int64_t pa_runtime_set_locals_map(pa_runtime *rt, const uint64_t *map, int64_t n_lines) {
  int64_t n = 0;
  size_t words = (size_t)(n_lines + 63) / 64;
  for (size_t w = 0; w < words; w++) n += __builtin_popcountll(map[w]);
  free(rt->locals_map);
  rt->locals_map = NULL, rt->locals_map_lines = 0;
  if (rt->rate >= 1 || !rt->track_reuse || rt->windowed || !n || !(rt->locals_map = malloc(sizeof *map * words))) return 0;
  memcpy(rt->locals_map, map, sizeof *map * words);
  rt->locals_map_lines = n_lines;
  return n;
}

void pa_runtime_add_locals(pa_runtime *rt, const void *stack, size_t stack_bytes, void *locals) {
  if (rt->n_stacks == PA_MAX_THREADS) return;
  rt->stacks[rt->n_stacks].lo = (uintptr_t)stack;
  rt->stacks[rt->n_stacks].hi = (uintptr_t)stack + stack_bytes;
  rt->stacks[rt->n_stacks++].locals = locals;
}

/* By the stack the calling thread runs on, not by its slot: pool workers take slots in the
 * order they arrive, but each keeps its own stack, so its locals keep their addresses. */
static void *locals_of_this_thread(const pa_runtime *rt) {
  uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
  for (int i = 0; i < rt->n_stacks; i++)
    if (sp >= rt->stacks[i].lo && sp < rt->stacks[i].hi) return rt->stacks[i].locals;
  return NULL;
}

/* A slot's buffer, repeats and block counters, made when a thread takes the slot (20 KB): made
 * for all PA_MAX_THREADS slots up front they were 1.3 MB of allocations, 0.25 ms of the child's
 * CPU before every compile, for the one thread most runs use. False (nothing kept) when out of
 * memory. */
static bool state_buffers(const pa_runtime *rt, pa_thread_state *st) {
  st->buf = aligned_alloc(64, sizeof(uint64_t) * (PA_BUF_WORDS + 2 * PA_BUF_MAX_ITEMS));
  st->repeats = calloc((size_t)rt->n_functions * PA_REUSE_BINS + 1, sizeof(uint64_t));
  st->counts = calloc((size_t)rt->n_blocks + 1, sizeof(uint64_t));
  if (st->buf && st->repeats && st->counts) return true;
  free(st->buf), free(st->repeats), free(st->counts);
  st->buf = NULL, st->repeats = NULL, st->counts = NULL;
  return false;
}

pa_runtime *pa_runtime_new(int n_functions, int n_blocks, double rate, int64_t window, bool track_reuse) {
  pa_runtime *rt = aligned_alloc(64, (sizeof *rt + 63) / 64 * 64);
  if (!rt) return NULL;
  memset(rt, 0, sizeof *rt);
  rt->n_functions = n_functions;
  rt->n_blocks = n_blocks;
  rt->rate = rate;
  rt->window = window;
  rt->track_reuse = track_reuse;
  pthread_mutex_init(&rt->lock, NULL);
  rt->masks = calloc((size_t)n_functions + 1, sizeof *rt->masks);
  /* threads beyond the limit (or without buffers of their own) share these */
  if (!rt->masks || !state_buffers(rt, &rt->states[PA_MAX_THREADS])) {
    pa_runtime_free(rt);
    return NULL;
  }
  return rt;
}

void pa_runtime_free(pa_runtime *rt) {
  if (!rt) return;
  for (int i = 0; i < PA_MAX_THREADS; i++) {
    pa_tracker_free(rt->states[i].tracker);
    win_state *w = rt->states[i].win;
    if (w) free(w->first), free(w->rest), free(w->base), free(w->acc), free(w);
  }
  for (int i = 0; i <= PA_MAX_THREADS; i++) free(rt->states[i].buf), free(rt->states[i].repeats), free(rt->states[i].counts);
  pthread_mutex_destroy(&rt->lock);
  free((void *)rt->masks);
  free(rt->locals_map);
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
    if (!state_buffers(rt, st)) { /* the run will be an error; meanwhile the spare state */
      atomic_store(&rt->out_of_memory, 1);
      pthread_mutex_unlock(&rt->lock);
      return -1;
    }
    st->locals = locals_of_this_thread(rt);
    if (rt->track_reuse && rt->windowed) { /* warm-ups: one more group, never taken */
      st->tracker = pa_tracker_new(rt->n_functions + 1, 1, 0);
      if (rt->n_llc && !pa_tracker_set_llc(st->tracker, rt->n_llc, rt->llc_sets)) atomic_store(&rt->out_of_memory, 1);
      st->sampled_threshold = UINT64_MAX;
      st->threshold = UINT64_MAX;
      win_state *w = calloc(1, sizeof *w);
      size_t words = (size_t)rt->n_functions * PA_TRACKER_WORDS + 1;
      *w = (win_state){.o = rt->win_opts, .n = rt->win_blocks, .W = -1, .n_groups = rt->n_functions,
                       .first = calloc(words, sizeof(double)), .rest = calloc(words, sizeof(double)),
                       .base = calloc(words, sizeof(uint64_t)), .acc = calloc(words, sizeof(double))};
      st->win = w;
      st->gate = 0; /* the first gated block calls __pa_phase, which starts the first window */
    } else if (rt->track_reuse) {
      st->tracker = pa_tracker_new(rt->n_functions, rt->rate, rt->window);
      if (rt->n_llc && !pa_tracker_set_llc(st->tracker, rt->n_llc, rt->llc_sets)) atomic_store(&rt->out_of_memory, 1);
      /* every access at rate 1; a tracker starts in a burst when sampling */
      /* the limit on line x PA_SHARDS_MUL: hash < T iff the product is under T << (64 - bits) */
      st->sampled_threshold = rt->rate >= 1 ? UINT64_MAX
                                            : (uint64_t)(rt->rate * (double)(1ull << PA_SHARDS_BITS) + 0.5)
                                                  << (64 - PA_SHARDS_BITS);
      st->threshold = pa_tracker_bursting(st->tracker) ? UINT64_MAX : st->sampled_threshold;
      if (st->locals && rt->locals_map) /* the region is page-aligned: its lines from its first */
        pa_tracker_set_locals(st->tracker, (uint64_t)(uintptr_t)st->locals / PA_LINE_BYTES, rt->locals_map, rt->locals_map_lines);
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
  pa_tracker_access_lines(t, a / PA_LINE_BYTES, (a + bytes - 1) / PA_LINE_BYTES, fid);
}

void pa_rt_flush(pa_thread_state *st) {
  uint64_t n = st->pos;
  st->pos = 0;
  if (!st->tracker) return;
  if (st->win && st->win->phase == PH_WARM) {
    for (uint64_t i = 0; i + 1 < n; i += 2) {
      uint64_t bytes = st->buf[i + 1] >> 16, a = st->buf[i];
      if (!bytes) continue;
      for (uint64_t line = a / PA_LINE_BYTES, last = (a + bytes - 1) / PA_LINE_BYTES; line <= last; line++)
        pa_warm_filter_access(&st->win->filter, st->tracker, line, st->win->n_groups);
    }
    return;
  }
  for (uint64_t i = 0; i + 1 < n; i += 2) {
    uint64_t bytes = st->buf[i + 1] >> 16;
    if (bytes) access_lines(st->tracker, st->buf[i], bytes, (int)(st->buf[i + 1] & 0xffff));
  }
}

/* Adds the tracker's counts since the last take to dst. */
static void win_take(pa_thread_state *st, double *dst) {
  win_state *w = st->win;
  for (int f = 0; f < w->n_groups; f++) {
    const uint64_t *c = pa_tracker_counts(st->tracker, f);
    for (int k = 0; k < PA_TRACKER_WORDS; k++) {
      size_t i = (size_t)f * PA_TRACKER_WORDS + (size_t)k;
      dst[i] += (double)(c[k] - w->base[i]);
      w->base[i] = c[k];
    }
  }
}

/* The phase that ends at block `now`: a window's counts go to first or rest. */
static void win_close(pa_thread_state *st, int64_t now) {
  win_state *w = st->win;
  if (st->pos) pa_rt_flush(st);
  if (w->phase == PH_WARM) pa_warm_filter_flush(&w->filter, st->tracker, w->n_groups);
  if (w->phase != PH_MEASURE) return;
  win_take(st, w->k == 0 ? w->first : w->rest);
  w->counted += (double)(now - w->start);
  if (w->k == 0 && !w->whole) { /* warm-ups sized so they touch about warm_lines lines */
    double D = 0;
    for (int f = 0; f < w->n_groups; f++) D += w->first[(size_t)f * PA_TRACKER_WORDS + PA_REUSE_BINS];
    int64_t warm_lines = w->o.warm_lines > 0 ? w->o.warm_lines : (int64_t)1 << 17;
    w->W = D > 0 ? (int64_t)((double)warm_lines * (double)w->L / D + 0.999) : w->n;
  }
  w->k++;
  w->done = now;
}

/* Called by a gated block when the gate passes zero: that block starts the next phase. The
 * windows are placed as trace.c places them in a parallel body's range: K windows of L
 * blocks (share x n in all), the first at the start, the others centred in the K parts. */
void pa_rt_phase(pa_thread_state *st) {
  win_state *w = st->win;
  if (!w) { /* a thread beyond the limit */
    st->gate = INT64_MAX;
    return;
  }
  int64_t now = w->phase == PH_START ? 0 : w->start + w->len;
  win_close(st, now);
  int K = w->o.windows > 0 ? w->o.windows : 4;
  double share = w->o.share > 0 ? w->o.share : 0.05;
  if (w->phase == PH_START) {
    w->L = (int64_t)(share * (double)w->n / K + 0.5);
    w->whole = share >= 1 || w->L < 1 || (int64_t)K * w->L * 2 >= w->n;
  }
  win_phase next = PH_OFF;
  int64_t len = INT64_MAX / 2;
  if (w->whole) {
    if (w->k == 0) next = PH_MEASURE;
  } else if (w->k < K) {
    int64_t s = w->k == 0 ? 0 : (int64_t)(((double)w->k + 0.5) * (double)w->n / K) - w->L / 2;
    if (s < w->done) s = w->done;
    if (s + w->L > w->n) s = w->n - w->L;
    int64_t w0 = w->W < 0 || s - w->W < w->done ? w->done : s - w->W;
    if (s < w->done || s < now) next = PH_OFF; /* no room left (the estimate of n was high) */
    else if (now < w0) next = PH_OFF, len = w0 - now;
    else if (now < s) next = PH_WARM, len = s - now;
    else next = PH_MEASURE, len = w->L;
  }
  if (getenv("PA_WINDOWS_DEBUG"))
    fprintf(stderr, "windows: block %lld: phase %d for %lld (n %lld L %lld W %lld)\n", (long long)now, (int)next,
            (long long)len, (long long)w->n, (long long)w->L, (long long)w->W);
  w->phase = next;
  w->start = now;
  w->len = len;
  st->recording = next != PH_OFF;
  st->gate = len - 1;
}

/* An access of `bytes` > 0 bytes at a: to the tracker (outside windowed runs and with nothing
 * buffered), and the thread's limit set by the burst state after it. */
static inline __attribute__((always_inline)) void track(pa_thread_state *st, uint64_t a, uint64_t bytes, int32_t fid) {
  bool bursting = pa_tracker_access_lines(st->tracker, a / PA_LINE_BYTES, (a + bytes - 1) / PA_LINE_BYTES, fid);
  if (st->sampled_threshold != UINT64_MAX) st->threshold = bursting ? UINT64_MAX : st->sampled_threshold;
}

static void rt_access(pa_thread_state *st, const void *addr, int64_t bytes, int32_t fid) {
  if (st->pos) pa_rt_flush(st); /* buffered accesses come first */
  if (!st->tracker || bytes <= 0) return;
  if (st->win) { /* direct hooks of a windowed run: only inside windows and warm-ups */
    if (!st->recording) return;
    if (st->win->phase == PH_WARM) { /* through the filter, after what it holds is older */
      for (uint64_t a = (uint64_t)(uintptr_t)addr, line = a / PA_LINE_BYTES; line <= (a + (uint64_t)bytes - 1) / PA_LINE_BYTES; line++)
        pa_warm_filter_access(&st->win->filter, st->tracker, line, st->win->n_groups);
      return;
    }
  }
  track(st, (uint64_t)(uintptr_t)addr, (uint64_t)bytes, fid);
}

/* __pa_access: a direct hook, from no block's stratum (pa_tracker_stratum). */
void pa_rt_access(pa_thread_state *st, const void *addr, int64_t bytes, int32_t fid) {
  if (st->tracker) pa_tracker_stratum(st->tracker, NULL, fid);
  rt_access(st, addr, bytes, fid);
}

/* One line in [a / 64, (a + bytes - 1) / 64] is under the thread's limit. (A tracked local's
 * accesses are PA_DESC_ALWAYS, inline tested or not: the tracker takes every access to its lines.) */
static bool lines_sampled(const pa_thread_state *st, uint64_t a, uint64_t bytes) {
  for (uint64_t line = a / PA_LINE_BYTES, last = (a + bytes - 1) / PA_LINE_BYTES; line <= last; line++)
    if (line * PA_SHARDS_MUL < st->threshold) return true;
  return false;
}

/* Item k of a block's slow path (instrument.c's inline test of that access alone, against the
 * current limit): hooked or not (a filtered item only when it crossed into a new line; the
 * block itself took the crossings back from its repeats). */
static void block_item(pa_thread_state *st, const uint64_t *desc, uint64_t k, int64_t first) {
  const uint64_t *item = desc + PA_DESC_HEADER + PA_DESC_ITEM * k, *word = st->buf + item[2];
  uint64_t a = word[0], bytes = item[0] & PA_DESC_DYNAMIC ? word[1] : item[0] & PA_DESC_BYTES;
  if (item[0] & PA_DESC_MASKED) { /* the bytes from the first active lane to the last (item[1] bytes a lane) */
    uint64_t on = word[1];
    if (!on) return;
    int first = __builtin_ctzll(on), last = 63 - __builtin_clzll(on);
    a += (uint64_t)first * item[1], bytes = (uint64_t)(last - first + 1) * item[1];
  }
  if (!bytes) return;
  if (item[0] & PA_DESC_FILTERED) { /* instrument.c's line_crossed, then the line's test */
    int64_t stride = (int64_t)item[1];
    uint64_t off = a & (PA_LINE_BYTES - 1);
    if (!first && (stride > 0 ? off >= (uint64_t)stride : off < (uint64_t)(PA_LINE_BYTES + stride))) return;
  }
  if (!(item[0] & PA_DESC_ALWAYS) && !lines_sampled(st, a, bytes)) return;
  if (!st->pos && st->tracker && !st->win && (int64_t)bytes > 0) track(st, a, bytes, (int32_t)desc[1]); /* pa_rt_access's common case */
  else rt_access(st, (const void *)(uintptr_t)a, (int64_t)bytes, (int)desc[1]);
}

void pa_rt_block(pa_thread_state *st, const uint64_t *desc, uint64_t passed, int64_t first) {
  uint64_t n = desc[0], limit = st->threshold;
  if (st->tracker) pa_tracker_stratum(st->tracker, desc, (int)desc[1]);
  if (n <= 64) { /* the items of the tests that passed, as a set of bits in program order */
    const uint64_t *items_of_bit = desc + PA_DESC_HEADER + PA_DESC_ITEM * n;
    uint64_t todo = 0;
    for (uint64_t left = passed; left; left &= left - 1) todo |= items_of_bit[__builtin_ctzll(left)];
    while (todo) {
      uint64_t k = (uint64_t)__builtin_ctzll(todo);
      todo &= todo - 1;
      block_item(st, desc, k, first);
      if (st->threshold != limit) /* a burst started or ended: every later item is tested again */
        todo = k + 1 < n ? (~0ULL >> (64 - n)) & (~0ULL << (k + 1)) : 0, limit = st->threshold;
    }
  } else
    for (uint64_t k = 0; k < n; k++) {
      /* while the limit is the one the inline tests used, an item whose test failed is not hooked */
      if (!(passed >> desc[PA_DESC_HEADER + PA_DESC_ITEM * k + 3] & 1) && st->threshold == limit) continue;
      block_item(st, desc, k, first);
    }
}

bool pa_runtime_set_llc(pa_runtime *rt, int n, const int *sets) {
  if (rt->rate < 1 || pa_llc_sets_invalid(n, sets)) return false;
  rt->n_llc = n;
  memcpy(rt->llc_sets, sets, sizeof *sets * (size_t)n);
  return true;
}

void pa_runtime_set_windows(pa_runtime *rt, const pa_trace_opts *o, int64_t blocks) {
  rt->windowed = true;
  rt->win_opts = *o;
  rt->win_blocks = blocks > 0 ? blocks : 1;
}

void pa_runtime_flush_all(pa_runtime *rt) {
  int n = pa_runtime_threads(rt);
  for (int i = 0; i < n; i++) {
    pa_thread_state *st = &rt->states[i];
    win_state *w = st->win;
    if (!w) {
      pa_rt_flush(st);
      if (st->tracker) pa_tracker_finish(st->tracker);
      continue;
    }
    /* the accesses the run made: the gate counts down from len - 1 */
    int64_t now = w->phase == PH_START ? 0 : w->start + (w->len - st->gate);
    win_close(st, now);
    w->phase = PH_OFF;
    st->recording = 0;
    if (w->whole) { /* every block measured: the counts as they are */
      memcpy(w->acc, w->first, sizeof(double) * (size_t)w->n_groups * PA_TRACKER_WORDS);
      continue;
    }
    pa_windows_combine(w->n_groups, w->first, w->rest, (double)now, (double)w->L, w->counted, w->acc);
  }
}

void pa_runtime_counts(const pa_runtime *rt, int slot, int fid, uint64_t *out) {
  const pa_thread_state *st = &rt->states[slot];
  if (!st->win) {
    memcpy(out, pa_tracker_counts(st->tracker, fid), sizeof(uint64_t) * PA_TRACKER_WORDS);
    return;
  }
  for (int k = 0; k < PA_TRACKER_WORDS; k++) out[k] = (uint64_t)(st->win->acc[(size_t)fid * PA_TRACKER_WORDS + (size_t)k] + 0.5);
}

bool pa_runtime_overflowed(const pa_runtime *rt) { return atomic_load((_Atomic int *)&rt->overflow) != 0; }

bool pa_runtime_out_of_memory(const pa_runtime *rt) { return atomic_load((_Atomic int *)&rt->out_of_memory) != 0; }

void pa_runtime_block_counts(const pa_runtime *rt, uint64_t *out) {
  memset(out, 0, sizeof *out * (size_t)rt->n_blocks);
  for (int s = 0; s <= PA_MAX_THREADS; s++) { /* the spare state too: it counted for any thread it stood in for */
    const uint64_t *c = rt->states[s].counts;
    for (int b = 0; c && b < rt->n_blocks; b++) out[b] += c[b];
  }
}

int pa_runtime_threads(const pa_runtime *rt) { return atomic_load((_Atomic int *)&rt->n_threads); }

uint64_t pa_runtime_thread_mask(const pa_runtime *rt, int fid) { return atomic_load(&rt->masks[fid]); }

const uint64_t *pa_runtime_repeats(const pa_runtime *rt, int slot, int fid) {
  return rt->states[slot].repeats + (size_t)fid * PA_REUSE_BINS;
}

const pa_tracker *pa_runtime_tracker(const pa_runtime *rt, int slot) { return rt->states[slot].tracker; }
