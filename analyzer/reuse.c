/* The reuse-distance tracker: LRU stack distance (distinct lines touched since the previous
 * access to the same line) in O(log n) per access, after Bennett & Kruskal (1975) / Almasi et
 * al. (2002): a hash map from line to its last access time and a Fenwick tree over times with
 * a 1 at each line's latest access, so the distance is a range count. Times are renumbered
 * when the tree fills (amortised O(1)). SHARDS (Waldspurger et al., FAST 2015) spatial
 * sampling keeps a line iff hash(line) mod P < R*P and scales its distances by 1/R. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SHARDS_P (1u << 24) /* modulus of the sampling hash (SHARDS uses 2^24) */

struct pa_tracker {
  double rate;
  uint64_t threshold; /* keep a line iff hash mod P < threshold */
  /* line -> last time (0 = empty slot; keys stored as line + 1) */
  uint64_t *keys;
  int64_t *times;
  size_t cap, n;
  /* Fenwick tree over times 1..tcap */
  int32_t *fen;
  int64_t tcap, now;
  int n_groups;
  uint64_t *counts; /* [group][PA_REUSE_BINS + 1] */
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

pa_tracker *pa_tracker_new(int n_groups, double rate) {
  pa_tracker *t = calloc(1, sizeof *t);
  if (rate <= 0 || rate > 1) rate = 1;
  t->rate = rate;
  t->threshold = rate >= 1 ? SHARDS_P : (uint64_t)(rate * SHARDS_P + 0.5);
  t->cap = 1024;
  t->keys = calloc(t->cap, sizeof *t->keys);
  t->times = calloc(t->cap, sizeof *t->times);
  t->tcap = 4096;
  t->fen = calloc((size_t)t->tcap + 1, sizeof *t->fen);
  t->n_groups = n_groups;
  t->counts = calloc((size_t)n_groups * (PA_REUSE_BINS + 1), sizeof *t->counts);
  return t;
}

void pa_tracker_free(pa_tracker *t) {
  if (!t) return;
  free(t->keys);
  free(t->times);
  free(t->fen);
  free(t->counts);
  free(t);
}

const uint64_t *pa_tracker_counts(const pa_tracker *t, int group) {
  return t->counts + (size_t)group * (PA_REUSE_BINS + 1);
}

static void fen_add(pa_tracker *t, int64_t i, int32_t v) {
  for (; i <= t->tcap; i += i & -i) t->fen[i] += v;
}

static int64_t fen_sum(const pa_tracker *t, int64_t i) { /* marks at times 1..i */
  int64_t s = 0;
  for (; i > 0; i -= i & -i) s += t->fen[i];
  return s;
}

static size_t slot_of(const pa_tracker *t, uint64_t key) {
  size_t i = (size_t)mix(key) & (t->cap - 1);
  while (t->keys[i] && t->keys[i] != key) i = (i + 1) & (t->cap - 1);
  return i;
}

static void grow_map(pa_tracker *t) {
  uint64_t *ok = t->keys;
  int64_t *ot = t->times;
  size_t oc = t->cap;
  t->cap *= 2;
  t->keys = calloc(t->cap, sizeof *t->keys);
  t->times = calloc(t->cap, sizeof *t->times);
  for (size_t i = 0; i < oc; i++)
    if (ok[i]) {
      size_t j = slot_of(t, ok[i]);
      t->keys[j] = ok[i];
      t->times[j] = ot[i];
    }
  free(ok);
  free(ot);
}

/* Renumbers the live last-access times 1..n (order kept) and rebuilds the tree, sized so at
 * least n more accesses fit before the next renumbering. */
static void compact(pa_tracker *t) {
  int64_t *rank = calloc((size_t)t->tcap + 1, sizeof *rank);
  for (size_t i = 0; i < t->cap; i++)
    if (t->keys[i]) rank[t->times[i]] = 1;
  int64_t r = 0;
  for (int64_t i = 1; i <= t->tcap; i++)
    if (rank[i]) rank[i] = ++r;
  for (size_t i = 0; i < t->cap; i++)
    if (t->keys[i]) t->times[i] = rank[t->times[i]];
  free(rank);
  int64_t need = 2 * r + 4096;
  if (need > t->tcap) {
    t->tcap = need;
    t->fen = realloc(t->fen, sizeof *t->fen * ((size_t)t->tcap + 1));
  }
  /* O(tcap) build: each node adds itself to its parent. */
  memset(t->fen, 0, sizeof *t->fen * ((size_t)t->tcap + 1));
  for (int64_t i = 1; i <= r; i++) t->fen[i] = 1;
  for (int64_t i = 1; i <= t->tcap; i++) {
    int64_t p = i + (i & -i);
    if (p <= t->tcap) t->fen[p] += t->fen[i];
  }
  t->now = r;
}

int64_t pa_tracker_access(pa_tracker *t, uint64_t line, int group) {
  uint64_t key = line + 1;
  if (t->threshold < SHARDS_P && (mix(line) & (SHARDS_P - 1)) >= t->threshold) return -2;
  if (t->now == t->tcap) compact(t);
  int64_t now = ++t->now;
  uint64_t *c = t->counts + (size_t)group * (PA_REUSE_BINS + 1);
  size_t s = slot_of(t, key);
  int64_t dist;
  if (t->keys[s]) {
    int64_t last = t->times[s];
    dist = fen_sum(t, now - 1) - fen_sum(t, last); /* distinct lines touched in between */
    fen_add(t, last, -1);
    if (t->rate < 1) dist = (int64_t)((double)dist / t->rate + 0.5);
    c[pa_reuse_bin(dist)]++;
  } else {
    if ((t->n + 1) * 2 > t->cap) {
      grow_map(t);
      s = slot_of(t, key);
    }
    t->keys[s] = key;
    t->n++;
    dist = -1;
    c[PA_REUSE_BINS]++;
  }
  t->times[s] = now;
  fen_add(t, now, 1);
  return dist;
}
