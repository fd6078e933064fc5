/* The reuse-distance tracker: LRU stack distance (distinct lines touched since the previous
 * access to the same line) in O(log n) per access, after Bennett & Kruskal (1975) / Almasi et
 * al. (2002): a hash map from line to its last access time and a Fenwick tree over times with
 * a 1 at each line's latest access, so the distance is a range count. Times are renumbered
 * when the tree fills (amortised O(1)).
 * Sampling: SHARDS (Waldspurger et al., FAST 2015) keeps a line iff hash(line) mod P < R*P and
 * scales its distances and counts by 1/R. Spatial sampling cannot resolve distances of a few
 * 1/R lines (the lines in between are mostly unsampled), so short distances come from bursts:
 * now and then (every `period` sampled accesses, and from the first access) the tracker asks
 * for every access (pa_tracker_bursting) and feeds them to an exact LRU window of the W most
 * recent lines. A burst first warms the window (until it holds W lines: a miss then means a
 * distance >= W), then measures: each measured access is exact below W or "beyond the
 * window". pa_tracker_hist scales the measured shares to the estimated number of accesses and
 * spreads the beyond-window share over the SHARDS estimates >= W and cold misses. The hash is
 * multiplicative (pa_shards_hash) so instrumented code can test it inline in a few integer
 * operations and call the tracker only for sampled lines and during bursts. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SHARDS_P (1ull << PA_SHARDS_BITS) /* modulus of the sampling hash (SHARDS uses 2^24) */

/* One LRU stack: unbounded (cap_lines 0) or keeping only the cap_lines most recent lines. */
typedef struct {
  uint64_t *keys; /* line + 1; 0 = empty */
  int64_t *times;
  size_t cap, n;
  int32_t *fen;      /* Fenwick tree over times 1..tcap: 1 at each live line's last access */
  uint64_t *line_at; /* time -> key, to find the line to evict */
  int64_t tcap, now;
  int64_t cap_lines;
} lru;

typedef enum { BURST_OFF, BURST_WARM, BURST_MEASURE } burst_phase;

struct pa_tracker {
  double rate;
  uint64_t threshold; /* keep a line iff pa_shards_hash(line) < threshold */
  int64_t window;     /* lines in the exact window (sampled mode only) */
  lru far;            /* every line (rate 1) or the sampled lines */
  lru near;           /* the exact window (rate < 1) */
  burst_phase phase;
  int64_t left;        /* accesses left in this phase (warm: at most) */
  int64_t since;       /* sampled accesses since the last burst ended */
  int64_t period;      /* sampled accesses between bursts */
  int64_t measure_len; /* accesses measured per burst */
  int n_groups;
  uint64_t *counts; /* [group][PA_TRACKER_WORDS], see internal.h */
};

static uint64_t mix(uint64_t x) { /* splitmix64 finaliser: a well-spread hash of the line */
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

int pa_reuse_bin(int64_t d) {
  if (d <= 0) return 0;
  int b = 64 - __builtin_clzll((unsigned long long)d); /* floor(log2 d) + 1 */
  return b < PA_REUSE_BINS ? b : PA_REUSE_BINS - 1;
}

static void lru_init(lru *u, int64_t cap_lines) {
  memset(u, 0, sizeof *u);
  u->cap_lines = cap_lines;
  u->cap = 1024;
  while (cap_lines && u->cap < (size_t)cap_lines * 2 + 2) u->cap *= 2;
  u->keys = calloc(u->cap, sizeof *u->keys);
  u->times = calloc(u->cap, sizeof *u->times);
  u->tcap = cap_lines ? 4 * cap_lines : 4096;
  u->fen = calloc((size_t)u->tcap + 1, sizeof *u->fen);
  u->line_at = calloc((size_t)u->tcap + 1, sizeof *u->line_at);
}

static void lru_free(lru *u) {
  free(u->keys);
  free(u->times);
  free(u->fen);
  free(u->line_at);
}

static void fen_add(lru *u, int64_t i, int32_t v) {
  for (; i <= u->tcap; i += i & -i) u->fen[i] += v;
}

static int64_t fen_sum(const lru *u, int64_t i) { /* marks at times 1..i */
  int64_t s = 0;
  for (; i > 0; i -= i & -i) s += u->fen[i];
  return s;
}

static int64_t fen_first(const lru *u) { /* the earliest marked time */
  int64_t pos = 0, step = 1;
  while (step * 2 <= u->tcap) step *= 2;
  for (; step; step /= 2)
    if (pos + step <= u->tcap && u->fen[pos + step] < 1) pos += step;
  return pos + 1;
}

static size_t slot_of(const lru *u, uint64_t key) {
  size_t i = (size_t)mix(key) & (u->cap - 1);
  while (u->keys[i] && u->keys[i] != key) i = (i + 1) & (u->cap - 1);
  return i;
}

static void grow_map(lru *u) {
  uint64_t *ok = u->keys;
  int64_t *ot = u->times;
  size_t oc = u->cap;
  u->cap *= 2;
  u->keys = calloc(u->cap, sizeof *u->keys);
  u->times = calloc(u->cap, sizeof *u->times);
  for (size_t i = 0; i < oc; i++)
    if (ok[i]) {
      size_t j = slot_of(u, ok[i]);
      u->keys[j] = ok[i];
      u->times[j] = ot[i];
    }
  free(ok);
  free(ot);
}

/* Linear-probing delete by backward shift (Knuth 6.4, Algorithm R): no tombstones. */
static void map_delete(lru *u, size_t i) {
  size_t mask = u->cap - 1, j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (!u->keys[j]) break;
    size_t home = (size_t)mix(u->keys[j]) & mask;
    /* move j into the hole at i unless its home lies cyclically in (i, j] */
    bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (stays) continue;
    u->keys[i] = u->keys[j];
    u->times[i] = u->times[j];
    i = j;
  }
  u->keys[i] = 0;
  u->n--;
}

/* Renumbers the live last-access times 1..n (order kept) and rebuilds the tree, sized so at
 * least n more accesses fit before the next renumbering. */
static void compact(lru *u) {
  int64_t *rank = calloc((size_t)u->tcap + 1, sizeof *rank);
  for (size_t i = 0; i < u->cap; i++)
    if (u->keys[i]) rank[u->times[i]] = 1;
  int64_t r = 0;
  for (int64_t i = 1; i <= u->tcap; i++)
    if (rank[i]) {
      rank[i] = ++r;
      u->line_at[r] = u->line_at[i]; /* r <= i: moving down in place is safe */
    }
  for (size_t i = 0; i < u->cap; i++)
    if (u->keys[i]) u->times[i] = rank[u->times[i]];
  free(rank);
  int64_t need = 2 * r + 4096;
  if (need > u->tcap) {
    u->tcap = need;
    u->fen = realloc(u->fen, sizeof *u->fen * ((size_t)u->tcap + 1));
    u->line_at = realloc(u->line_at, sizeof *u->line_at * ((size_t)u->tcap + 1));
  }
  /* O(tcap) build: each node adds itself to its parent. */
  memset(u->fen, 0, sizeof *u->fen * ((size_t)u->tcap + 1));
  for (int64_t i = 1; i <= r; i++) u->fen[i] = 1;
  for (int64_t i = 1; i <= u->tcap; i++) {
    int64_t p = i + (i & -i);
    if (p <= u->tcap) u->fen[p] += u->fen[i];
  }
  u->now = r;
}

/* Distance of this access, or -1 if the line is not in the stack (first touch, or for a
 * bounded stack evicted: distance >= cap_lines). */
static int64_t lru_access(lru *u, uint64_t line) {
  uint64_t key = line + 1;
  if (u->now == u->tcap) compact(u);
  int64_t now = ++u->now, dist = -1;
  size_t s = slot_of(u, key);
  if (u->keys[s]) {
    int64_t last = u->times[s];
    dist = fen_sum(u, now - 1) - fen_sum(u, last); /* distinct lines touched in between */
    fen_add(u, last, -1);
  } else {
    if ((u->n + 1) * 2 > u->cap) {
      grow_map(u);
      s = slot_of(u, key);
    }
    u->keys[s] = key;
    u->n++;
  }
  u->times[s] = now;
  u->line_at[now] = key;
  fen_add(u, now, 1);
  if (u->cap_lines && (int64_t)u->n > u->cap_lines) { /* evict the least recently used line */
    int64_t t = fen_first(u);
    fen_add(u, t, -1);
    map_delete(u, slot_of(u, u->line_at[t]));
  }
  return dist;
}

pa_tracker *pa_tracker_new(int n_groups, double rate, int64_t window) {
  pa_tracker *t = calloc(1, sizeof *t);
  if (rate <= 0 || rate > 1) rate = 1;
  t->rate = rate;
  t->threshold = rate >= 1 ? SHARDS_P : (uint64_t)(rate * SHARDS_P + 0.5);
  lru_init(&t->far, 0);
  if (rate < 1 && window >= 0) {
    /* W >= 16/R: then distances just beyond the window hold ~16 sampled lines. */
    t->window = window;
    if (!t->window)
      for (t->window = 64; (double)t->window < 16 / rate;) t->window *= 2;
    lru_init(&t->near, t->window);
    /* Bursts measure 4W accesses after warming for up to 8W, once per 64 x 4W accesses on
     * average (period in sampled accesses = R x that): about 2-4% of the accesses go through
     * the window. The first burst starts at the first access, with nothing to warm. */
    t->measure_len = 4 * t->window;
    t->period = (int64_t)(rate * 64.0 * (double)t->measure_len) + 1;
    t->phase = BURST_MEASURE;
    t->left = t->measure_len;
  }
  t->n_groups = n_groups;
  t->counts = calloc((size_t)n_groups * PA_TRACKER_WORDS, sizeof *t->counts);
  return t;
}

void pa_tracker_free(pa_tracker *t) {
  if (!t) return;
  lru_free(&t->far);
  if (t->window) lru_free(&t->near);
  free(t->counts);
  free(t);
}

const uint64_t *pa_tracker_counts(const pa_tracker *t, int group) {
  return t->counts + (size_t)group * PA_TRACKER_WORDS;
}

int64_t pa_tracker_window(const pa_tracker *t) { return t->window; }

bool pa_tracker_bursting(const pa_tracker *t) { return t->phase != BURST_OFF; }

static void lru_clear(lru *u) {
  memset(u->keys, 0, sizeof *u->keys * u->cap);
  memset(u->fen, 0, sizeof *u->fen * ((size_t)u->tcap + 1));
  u->n = 0;
  u->now = 0;
}

/* One access during a burst: the exact window's answer, counted when measuring. */
static int64_t burst_access(pa_tracker *t, uint64_t line, uint64_t *exact) {
  int64_t near = lru_access(&t->near, line);
  if (t->phase == BURST_MEASURE) exact[near >= 0 ? pa_reuse_bin(near) : PA_REUSE_BINS]++;
  if (t->phase == BURST_WARM && (int64_t)t->near.n >= t->window) t->left = 1; /* warm: measure next */
  if (--t->left == 0) {
    if (t->phase == BURST_WARM) {
      t->phase = BURST_MEASURE;
      t->left = t->measure_len;
    } else {
      t->phase = BURST_OFF;
      t->since = 0;
    }
  }
  return near;
}

int64_t pa_tracker_access(pa_tracker *t, uint64_t line, int group) {
  uint64_t *exact = t->counts + (size_t)group * PA_TRACKER_WORDS, *sampled = exact + PA_REUSE_BINS + 1;
  if (t->rate >= 1) {
    int64_t d = lru_access(&t->far, line);
    exact[d < 0 ? PA_REUSE_BINS : pa_reuse_bin(d)]++;
    return d;
  }
  bool in_sample = pa_shards_hash(line) < t->threshold;
  bool measuring = t->phase == BURST_MEASURE;
  int64_t est = -2;
  if (in_sample) {
    int64_t far = lru_access(&t->far, line);
    est = far < 0 ? -1 : (int64_t)((double)far / t->rate + 0.5);
    sampled[far < 0 ? PA_REUSE_BINS : pa_reuse_bin(est)]++;
    if (!measuring) exact[PA_TRACKER_WORDS - 1]++; /* sampled outside measurement */
  }
  if (t->phase != BURST_OFF) {
    int64_t near = burst_access(t, line, exact);
    if (near >= 0) return near;
    if (est >= 0 && est < t->window) est = t->window; /* it missed the window: at least W away */
    return in_sample ? est : -2;
  }
  if (in_sample && t->window && ++t->since >= t->period) { /* the next access starts a burst */
    lru_clear(&t->near);
    t->phase = BURST_WARM;
    t->left = 2 * t->measure_len;
  }
  return est;
}

void pa_tracker_hist(const uint64_t *c, double rate, int64_t window, pa_reuse_hist *h) {
  const uint64_t *sampled = c + PA_REUSE_BINS + 1;
  memset(h, 0, sizeof *h);
  double measured = 0, sampled_all = 0;
  for (int k = 0; k <= PA_REUSE_BINS; k++) measured += (double)c[k], sampled_all += (double)sampled[k];
  if (rate >= 1 || (measured == 0 && window > 0) || window <= 0) {
    /* exact, or plain SHARDS (also the fallback when no burst measured anything) */
    double w = rate >= 1 ? 1 : 1 / rate;
    for (int k = 0; k < PA_REUSE_BINS; k++) h->bins[k] = (double)(rate >= 1 ? c[k] : sampled[k]) * w;
    h->cold = (double)(rate >= 1 ? c[PA_REUSE_BINS] : sampled[PA_REUSE_BINS]) * w;
  } else {
    /* accesses = the measured ones + the rest estimated from the sample */
    double total = measured + (double)c[PA_TRACKER_WORDS - 1] / rate, scale = total / measured;
    int near_bins = pa_reuse_bin(window - 1) + 1; /* bins 0..near_bins-1 lie below W */
    for (int k = 0; k < near_bins; k++) h->bins[k] = (double)c[k] * scale;
    double beyond = (double)c[PA_REUSE_BINS] * scale, shards_beyond = (double)sampled[PA_REUSE_BINS];
    for (int k = near_bins; k < PA_REUSE_BINS; k++) shards_beyond += (double)sampled[k];
    if (shards_beyond > 0) {
      for (int k = near_bins; k < PA_REUSE_BINS; k++) h->bins[k] = beyond * (double)sampled[k] / shards_beyond;
      h->cold = beyond * (double)sampled[PA_REUSE_BINS] / shards_beyond;
    } else {
      h->cold = beyond; /* no sampled line reached beyond the window: call them first touches */
    }
    (void)sampled_all;
  }
  for (int k = 0; k < PA_REUSE_BINS; k++) h->accesses += h->bins[k];
  h->accesses += h->cold;
}
