/* The reuse-distance tracker: LRU stack distance (distinct lines touched since the previous
 * access to the same line) in O(log n) per access, after Bennett & Kruskal (1975) / Almasi et
 * al. (2002): a hash map from line to its last access time and a Fenwick tree over times with
 * a 1 at each line's latest access, so the distance is a range count. Times are renumbered
 * when the tree fills (amortised O(1)). Made cheap for tiled kernels (see lru below): a
 * small move-to-front array answers the shortest distances without hashing, and the count
 * over times is a bitmap plus a Fenwick tree over its words, small enough to stay in L1.
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
 * operations and call the tracker only for sampled lines and during bursts.
 * Per-set distances (PA_SETS sets, address bits 6-11) come from one LRU stack per set, keyed by
 * the line's bits above the set index and bounded at PA_SET_EXACT lines (caches of 64 sets have
 * at most 32 ways, so only "which of the 32 most recent of its set" matters): every line at rate
 * 1; when sampling, every line of a burst (the stacks cleared with the window), exact for lines
 * the burst has seen, since every access in between went through them too. */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "internal.h"

#define SHARDS_P (1ull << PA_SHARDS_BITS) /* modulus of the sampling hash (SHARDS uses 2^24) */

/* One LRU stack (unbounded; the exact window is one too, cleared per burst, that answers only
 * distances below W). Two levels, exact together: the `nf` most recent lines in
 * a small move-to-front array (a line there at position p has distance p: most accesses of a
 * tiled kernel end here, with no hashing; a new line moves nothing), and the older ones with
 * the time they left the array. The order of leaving is the order of last access, so such a
 * line's distance is nf plus the lines that left after it: a Fenwick range count over those
 * times. Times are kept in a radix table
 * (chunks of 2^10 consecutive lines found through a small hash directory and a one-entry
 * cache), so lines streamed in address order share the table's cache lines; a hash map
 * cost streaming kernels (bert_ffn1's 9 MiB weight) a cache miss per access. */
#define FRONT_MAX 32

#define CHUNK_BITS 10
#define CHUNK_LINES (1 << CHUNK_BITS)
#define IN_FRONT (-1)

typedef struct {
  uint64_t id;   /* key >> CHUNK_BITS */
  uint32_t gen;  /* the stack's generation when last cleared (lru_clear bumps the stack's) */
  int32_t t[CHUNK_LINES]; /* per line: 0 absent, IN_FRONT, or > 0 the time it left the front */
} lru_chunk;

typedef struct {
  /* The front: position p at index head + p of these arrays, twice as long as the front, so a
   * new line takes index head - 1 (nothing moves) until head reaches 0 and the front is copied
   * back up (once per FRONT_MAX new lines); a line found at p moves p entries, contiguously. */
  uint32_t tag[2 * FRONT_MAX + 4];      /* low 32 bits of the keys: scanned 4 at a time */
  uint64_t ring[2 * FRONT_MAX];         /* keys */
  int32_t *ring_time[2 * FRONT_MAX];    /* their time words (chunks stay put until the stack is cleared) */
  int nf, head;
  lru_chunk **dir; /* chunks by id: open addressing, Fibonacci hashing */
  size_t dcap, dn;
  int dshift;        /* 64 - log2(dcap) */
  lru_chunk *last;   /* the chunk found last */
  uint32_t gen;
  size_t n;          /* lines held */
  /* Live leave times 1..tcap (one per line out of the front array) as a bitmap, 64 times a word, and a Fenwick
   * tree over the words' popcounts: a range count is two popcounts plus a walk of a tree
   * 64 times smaller than one over times, so it stays in L1 for working sets of 10^5 lines. */
  uint64_t *bits; /* tcap / 64 + 1 words */
  int32_t *fen;   /* Fenwick over words: fen[1..nw] */
  int64_t nw;
  int32_t *rank;     /* compaction scratch, tcap + 1 */
  int64_t tcap, now;
} lru;
typedef enum { BURST_OFF, BURST_WARM, BURST_MEASURE } burst_phase;
/* Bursts (see pa_tracker_new): 64 x 4W accesses apart for the first 8, then 256 x 4W. A
 * short run keeps the schedule that bounds its curves (tests/analyzer: 8 bursts cover runs
 * of about 4M line accesses); a long one stops paying 2-4% of its accesses for shares that
 * 8 bursts of 4W measured accesses already estimate (docs/validation.md, Session 7). */
#define BURST_GAP 64
#define BURST_GAP_LATER 256
#define BURSTS_AT_FIRST_GAP 16

/* Per set, the keys (line / PA_SETS) of its PA_SET_EXACT most recent lines, most recent first:
 * a move-to-front array (a bounded stack needs no times: a line that fell out is at distance
 * PA_SET_EXACT or more). An unbounded stack per set (the lru above) cost as much as the global
 * one: mm512's full run 1.54G -> 2.58G instructions; this one docs/validation.md, Session 10. */
typedef struct {
  uint64_t key[PA_SETS][PA_SET_EXACT];
  int n[PA_SETS];
} set_stacks;

struct pa_tracker {
  double rate;
  uint64_t threshold; /* keep a line iff pa_shards_hash(line) < threshold */
  int64_t window;     /* lines in the exact window (sampled mode only) */
  lru far;            /* every line (rate 1) or the sampled lines */
  lru near;           /* the exact window (rate < 1) */
  set_stacks *far_sets;  /* every line's per-set stack (rate 1) */
  set_stacks *near_sets; /* the bursts' per-set stacks (rate < 1 with a window) */
  burst_phase phase;
  int64_t left;        /* accesses left in this phase (warm: at most) */
  int64_t since;       /* sampled accesses since the last burst ended */
  int64_t period;      /* sampled accesses between bursts */
  int64_t bursts;      /* bursts started after the first */
  int64_t measure_len; /* accesses measured per burst */
  int n_groups;
  uint64_t *counts; /* [group][PA_TRACKER_WORDS], see internal.h */
};


int pa_reuse_bin(int64_t d) {
  if (d <= 0) return 0;
  int b = 64 - __builtin_clzll((unsigned long long)d); /* floor(log2 d) + 1 */
  return b < PA_REUSE_BINS ? b : PA_REUSE_BINS - 1;
}

int pa_reuse_quarter(int64_t d) {
  if (d < 2) return 0;
  int k = 64 - __builtin_clzll((unsigned long long)d); /* d in [2^(k-1), 2^k) */
  int64_t lo = (int64_t)1 << (k - 1);
  return (int)(((uint64_t)(d - lo) << 2) >> (k - 1));
}

int pa_set_bin(int64_t d) { return d < 0 || d >= PA_SET_EXACT ? PA_SET_EXACT : (int)d; }

static void dir_alloc(lru *u, size_t cap) {
  u->dcap = cap;
  u->dshift = 64 - __builtin_ctzll((unsigned long long)cap);
  u->dir = calloc(cap, sizeof *u->dir);
}

/* times: leave times before the first renumbering (compact) */
static void lru_init(lru *u, int64_t times) {
  memset(u, 0, sizeof *u);
  u->head = FRONT_MAX;
  dir_alloc(u, 64);
  u->tcap = times;
  u->nw = u->tcap / 64 + 1;
  u->bits = calloc((size_t)u->nw, sizeof *u->bits);
  u->fen = calloc((size_t)u->nw + 1, sizeof *u->fen);
  u->rank = calloc((size_t)u->tcap + 1, sizeof *u->rank);
}

static void lru_free(lru *u) {
  for (size_t i = 0; i < u->dcap; i++) free(u->dir[i]);
  free(u->dir);
  free(u->bits);
  free(u->fen);
  free(u->rank);
}

static void tree_add(lru *u, int64_t w, int32_t v) { /* word w (0-based) */
  for (int64_t i = w + 1; i <= u->nw; i += i & -i) u->fen[i] += v;
}

static int64_t tree_range(const lru *u, int64_t lo, int64_t hi) { /* words lo..hi-1 (0-based) */
  int64_t s = 0;
  while (hi != lo) {
    if (hi > lo) s += u->fen[hi], hi -= hi & -hi;
    else s -= u->fen[lo], lo -= lo & -lo;
  }
  return s;
}

static void mark(lru *u, int64_t t) {
  u->bits[t >> 6] |= 1ULL << (t & 63);
  tree_add(u, t >> 6, 1);
}

static void unmark(lru *u, int64_t t) {
  u->bits[t >> 6] &= ~(1ULL << (t & 63));
  tree_add(u, t >> 6, -1);
}

/* Live times in lo+1..hi (lo < hi). */
static int64_t live_between(const lru *u, int64_t lo, int64_t hi) {
  int64_t wl = lo >> 6, wh = hi >> 6;
  uint64_t above = (lo & 63) == 63 ? 0 : ~0ULL << ((lo & 63) + 1);
  uint64_t upto = (hi & 63) == 63 ? ~0ULL : (2ULL << (hi & 63)) - 1;
  if (wl == wh) return __builtin_popcountll(u->bits[wl] & above & upto);
  return __builtin_popcountll(u->bits[wl] & above) + __builtin_popcountll(u->bits[wh] & upto) +
         tree_range(u, wl + 1, wh);
}

static size_t dir_home(const lru *u, uint64_t id) { return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> u->dshift); }

static size_t dir_slot(const lru *u, uint64_t id) {
  size_t i = dir_home(u, id);
  while (u->dir[i] && u->dir[i]->id != id) i = (i + 1) & (u->dcap - 1);
  return i;
}

/* The time word of key (created, as absent, if need be). */
static int32_t *time_of(lru *u, uint64_t key) {
  uint64_t id = key >> CHUNK_BITS;
  lru_chunk *c = u->last;
  if (!c || c->id != id) {
    size_t i = dir_slot(u, id);
    c = u->dir[i];
    if (!c) {
      if ((u->dn + 1) * 2 > u->dcap) {
        lru_chunk **old = u->dir;
        size_t oc = u->dcap;
        dir_alloc(u, oc * 2);
        for (size_t k = 0; k < oc; k++)
          if (old[k]) u->dir[dir_slot(u, old[k]->id)] = old[k];
        free(old);
        i = dir_slot(u, id);
      }
      c = malloc(sizeof *c);
      c->id = id;
      c->gen = u->gen - 1; /* cleared below */
      u->dir[i] = c;
      u->dn++;
    }
    u->last = c;
  }
  if (c->gen != u->gen) {
    memset(c->t, 0, sizeof c->t);
    c->gen = u->gen;
  }
  return &c->t[key & (CHUNK_LINES - 1)];
}

/* Renumbers the live leave times 1..r (order kept) and rebuilds the tree, sized so at least
 * r + 4096 more lines can leave the front before the next renumbering. */
static void compact(lru *u) {
  memset(u->rank, 0, sizeof *u->rank * ((size_t)u->tcap + 1));
  for (size_t i = 0; i < u->dcap; i++)
    if (u->dir[i] && u->dir[i]->gen == u->gen)
      for (int k = 0; k < CHUNK_LINES; k++)
        if (u->dir[i]->t[k] > 0) u->rank[u->dir[i]->t[k]] = 1;
  int32_t r = 0;
  for (int64_t i = 1; i <= u->tcap; i++)
    if (u->rank[i]) u->rank[i] = ++r;
  for (size_t i = 0; i < u->dcap; i++)
    if (u->dir[i] && u->dir[i]->gen == u->gen)
      for (int k = 0; k < CHUNK_LINES; k++)
        if (u->dir[i]->t[k] > 0) u->dir[i]->t[k] = u->rank[u->dir[i]->t[k]];
  int64_t need = 2 * (int64_t)r + 4096;
  if (need > u->tcap) {
    u->tcap = need;
    u->nw = u->tcap / 64 + 1;
    u->bits = realloc(u->bits, sizeof *u->bits * (size_t)u->nw);
    u->fen = realloc(u->fen, sizeof *u->fen * ((size_t)u->nw + 1));
    u->rank = realloc(u->rank, sizeof *u->rank * ((size_t)u->tcap + 1));
  }
  /* times 1..r live; O(nw) tree build: each node adds itself to its parent */
  memset(u->bits, 0, sizeof *u->bits * (size_t)u->nw);
  memset(u->fen, 0, sizeof *u->fen * ((size_t)u->nw + 1));
  for (int64_t t = 1; t <= r; t++) u->bits[t >> 6] |= 1ULL << (t & 63);
  for (int64_t w = 0; w < u->nw; w++) u->fen[w + 1] = __builtin_popcountll(u->bits[w]);
  for (int64_t i = 1; i <= u->nw; i++) {
    int64_t p = i + (i & -i);
    if (p <= u->nw) u->fen[p] += u->fen[i];
  }
  u->now = r;
}

/* The least recent line of the front ring moves to the older level (its time word kept by the ring). */
static void leave_front(lru *u, int32_t *time_word) {
  if (u->now == u->tcap) compact(u);
  int64_t now = ++u->now;
  *time_word = (int32_t)now;
  mark(u, now);
}

/* Distance of this access, or -1 if the line is not in the stack (first touch). */
/* Position of key in the front, or -1: its 32-bit tags compared four at a time. */
static int front_find(const lru *u, uint64_t key) {
  uint32_t tag = (uint32_t)key;
  const uint32_t *tags = u->tag + u->head;
  const uint64_t *keys = u->ring + u->head;
#ifdef __SSE2__
  __m128i k = _mm_set1_epi32((int)tag);
  for (int c = 0; c < u->nf; c += 4) {
    int m = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(tags + c)), k)));
    while (m) {
      int p = c + __builtin_ctz((unsigned)m);
      if (p < u->nf && keys[p] == key) return p;
      m &= m - 1;
    }
  }
#else
  for (int p = 0; p < u->nf; p++)
    if (tags[p] == tag && keys[p] == key) return p;
#endif
  return -1;
}

/* The line at position p moves to the front: the p more recent ones move one place down. */
static void front_raise(lru *u, int p, uint64_t key) {
  int h = u->head;
  int32_t *time_word = u->ring_time[h + p];
  memmove(u->ring + h + 1, u->ring + h, sizeof *u->ring * (size_t)p);
  memmove(u->tag + h + 1, u->tag + h, sizeof *u->tag * (size_t)p);
  memmove(u->ring_time + h + 1, u->ring_time + h, sizeof *u->ring_time * (size_t)p);
  u->ring_time[h] = time_word;
  u->ring[h] = key;
  u->tag[h] = (uint32_t)key;
}

/* A new line takes position 0 (the caller has let the last one leave when the front is full). */
static void front_push(lru *u, uint64_t key, int32_t *time_word) {
  if (u->head == 0) { /* copy the front back up: FRONT_MAX free indices below it again */
    memmove(u->ring + FRONT_MAX, u->ring, sizeof *u->ring * (size_t)u->nf);
    memmove(u->tag + FRONT_MAX, u->tag, sizeof *u->tag * (size_t)u->nf);
    memmove(u->ring_time + FRONT_MAX, u->ring_time, sizeof *u->ring_time * (size_t)u->nf);
    u->head = FRONT_MAX;
  }
  int h = --u->head;
  u->ring[h] = key, u->tag[h] = (uint32_t)key, u->ring_time[h] = time_word;
}

static int64_t lru_access(lru *u, uint64_t line) {
  uint64_t key = line + 1;
  int nf = u->nf;
  int p = front_find(u, key);
  if (p >= 0) {
    front_raise(u, p, key);
    return p;
  }
  int64_t dist = -1;
  int32_t *tw = time_of(u, key);
  if (*tw) {
    int64_t last = *tw; /* > 0: it is not in the front array */
    dist = nf + (last < u->now ? live_between(u, last, u->now) : 0);
    unmark(u, last);
  } else {
    u->n++;
  }
  *tw = IN_FRONT;
  if (nf == FRONT_MAX) leave_front(u, u->ring_time[u->head + nf - 1]);
  else u->nf = nf + 1;
  front_push(u, key, tw);
  return dist;
}

static set_stacks *sets_new(void) { return calloc(1, sizeof(set_stacks)); }

static void sets_free(set_stacks *s) { free(s); }

static void sets_clear(set_stacks *s) { memset(s->n, 0, sizeof s->n); }

/* The per-set distance of this access to `line`, -1 if it is not among the PA_SET_EXACT most
 * recent lines of its set (a first touch, or PA_SET_EXACT or more); it becomes the most recent. */
static int64_t set_access(set_stacks *s, uint64_t line) {
  int set = (int)(line & (PA_SETS - 1)), n = s->n[set], p = 0;
  uint64_t key = line / PA_SETS, *k = s->key[set];
  while (p < n && k[p] != key) p++;
  int64_t d = p < n ? p : -1;
  if (p == n) {
    if (n < PA_SET_EXACT) s->n[set] = n + 1;
    else p = n - 1; /* the least recent falls out */
  }
  memmove(k + 1, k, sizeof *k * (size_t)p);
  k[0] = key;
  return d;
}

pa_tracker *pa_tracker_new(int n_groups, double rate, int64_t window) {
  pa_tracker *t = calloc(1, sizeof *t);
  if (rate <= 0 || rate > 1) rate = 1;
  t->rate = rate;
  t->threshold = rate >= 1 ? SHARDS_P : (uint64_t)(rate * SHARDS_P + 0.5);
  lru_init(&t->far, 4096);
  if (rate >= 1) t->far_sets = sets_new();
  if (rate < 1 && window >= 0) {
    /* W >= 16/R: then distances just beyond the window hold ~16 sampled lines. */
    t->window = window;
    if (!t->window)
      for (t->window = 64; (double)t->window < 16 / rate;) t->window *= 2;
    lru_init(&t->near, 12 * t->window); /* a burst's accesses at most: never renumbered */
    t->near_sets = sets_new();
    /* Bursts measure 4W accesses after warming for up to 8W, once per BURST_GAP x 4W accesses
     * on average (period in sampled accesses = R x that) for the first BURSTS_AT_FIRST_GAP,
     * then BURST_GAP_LATER / BURST_GAP times as far apart: about 2-4% of a short run's accesses
     * go through the window, under 1% of a long one's, whose bursts are still as many.
     * The first burst starts at the first access, with nothing to warm. */
    t->measure_len = 4 * t->window;
    t->period = (int64_t)(rate * BURST_GAP * (double)t->measure_len) + 1;
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
  sets_free(t->far_sets);
  sets_free(t->near_sets);
  free(t->counts);
  free(t);
}

const uint64_t *pa_tracker_counts(const pa_tracker *t, int group) {
  return t->counts + (size_t)group * PA_TRACKER_WORDS;
}

int64_t pa_tracker_window(const pa_tracker *t) { return t->window; }

bool pa_tracker_bursting(const pa_tracker *t) { return t->phase != BURST_OFF; }

static void lru_clear(lru *u) {
  u->gen++; /* every chunk reads as empty until touched */
  memset(u->bits, 0, sizeof *u->bits * (size_t)u->nw);
  memset(u->fen, 0, sizeof *u->fen * ((size_t)u->nw + 1));
  u->nf = 0;
  u->head = FRONT_MAX;
  u->n = 0;
  u->now = 0;
}

/* One access during a burst: the exact window's answer, counted when measuring. */
static int64_t burst_access(pa_tracker *t, uint64_t line, uint64_t *exact) {
  int64_t near = lru_access(&t->near, line);
  int64_t in_set = set_access(t->near_sets, line);
  if (near >= t->window) near = -1; /* beyond the window */
  if (t->phase == BURST_MEASURE) {
    exact[near >= 0 ? pa_reuse_bin(near) : PA_REUSE_BINS]++;
    if (near >= 0) exact[PA_TW_QUARTERS + 4 * pa_reuse_bin(near) + pa_reuse_quarter(near)]++;
    if (in_set >= 0) exact[PA_TW_SETS + in_set]++; /* the rest: pa_tracker_hist */
  }
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
    int64_t d = lru_access(&t->far, line), in_set = set_access(t->far_sets, line);
    if (d < 0) {
      exact[PA_REUSE_BINS]++;
      return d;
    }
    int b = pa_reuse_bin(d);
    exact[b]++;
    exact[PA_TW_QUARTERS + 4 * b + pa_reuse_quarter(d)]++;
    exact[PA_TW_SETS + pa_set_bin(in_set)]++; /* -1: PA_SET_EXACT or more */
    return d;
  }
  bool in_sample = pa_shards_hash(line) < t->threshold;
  bool measuring = t->phase == BURST_MEASURE;
  int64_t est = -2;
  if (in_sample) {
    int64_t far = lru_access(&t->far, line);
    est = far < 0 ? -1 : (int64_t)((double)far / t->rate + 0.5);
    sampled[far < 0 ? PA_REUSE_BINS : pa_reuse_bin(est)]++;
    /* quarters beyond the window come from the sample, below it from the bursts */
    if (far >= 0 && (!t->window || est >= t->window)) exact[PA_TW_QUARTERS + 4 * pa_reuse_bin(est) + pa_reuse_quarter(est)]++;
    if (!measuring) exact[PA_TW_OUTSIDE]++; /* sampled outside measurement */
  }
  if (t->phase != BURST_OFF) {
    int64_t near = burst_access(t, line, exact);
    if (near >= 0) return near;
    if (est >= 0 && est < t->window) est = t->window; /* it missed the window: at least W away */
    return in_sample ? est : -2;
  }
  int64_t gap = t->bursts < BURSTS_AT_FIRST_GAP ? t->period : t->period * (BURST_GAP_LATER / BURST_GAP);
  if (in_sample && t->window && ++t->since >= gap) { /* the next access starts a burst */
    t->bursts++;
    lru_clear(&t->near);
    sets_clear(t->near_sets);
    t->phase = BURST_WARM;
    t->left = 2 * t->measure_len;
  }
  return est;
}

/* Each bin's quarters in the shares its quarter counts give (evenly where it has none). */
static void quarters_from_counts(const uint64_t *qc, pa_reuse_hist *h) {
  for (int k = 0; k < PA_REUSE_BINS; k++) {
    double sum = 0;
    for (int q = 0; q < 4; q++) sum += (double)qc[4 * k + q];
    for (int q = 0; q < 4; q++)
      h->quarters[k][q] = sum > 0 ? h->bins[k] * (double)qc[4 * k + q] / sum : k < 2 ? (q ? 0 : h->bins[k]) : h->bins[k] / 4;
  }
  h->has_quarters = true;
}

void pa_tracker_hist(const uint64_t *c, double rate, int64_t window, pa_reuse_hist *h) {
  const uint64_t *sampled = c + PA_TW_SAMPLED;
  memset(h, 0, sizeof *h);
  double measured = 0;
  for (int k = 0; k <= PA_REUSE_BINS; k++) measured += (double)c[k];
  if (rate >= 1 || (measured == 0 && window > 0) || window <= 0) {
    /* exact, or plain SHARDS (also the fallback when no burst measured anything) */
    double w = rate >= 1 ? 1 : 1 / rate;
    for (int k = 0; k < PA_REUSE_BINS; k++) h->bins[k] = (double)(rate >= 1 ? c[k] : sampled[k]) * w;
    h->cold = (double)(rate >= 1 ? c[PA_REUSE_BINS] : sampled[PA_REUSE_BINS]) * w;
    if (rate >= 1) { /* per-set distances only where every access of a stretch was seen */
      for (int k = 0; k < PA_SET_BINS; k++) h->sets[k] = (double)c[PA_TW_SETS + k];
      h->has_sets = true;
    } else if (window > 0) {
      /* a group no burst measured (a function that ran only between bursts): its reuses spread
       * evenly over the sets, distance d at d / PA_SETS, so a profile's sum keeps its per-set
       * bins (plain SHARDS has none) */
      for (int k = 1; k < PA_REUSE_BINS; k++) h->sets[pa_set_bin(((int64_t)1 << (k - 1)) / PA_SETS)] += h->bins[k];
      h->sets[0] += h->bins[0];
      h->has_sets = true;
    }
  } else {
    /* accesses = the measured ones + the rest estimated from the sample */
    double total = measured + (double)c[PA_TW_OUTSIDE] / rate, scale = total / measured;
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
    /* Per-set: exact below PA_SET_EXACT where the burst had seen the line; the others (that far
     * or more, or new to the burst: at least as far as the lines of their set the burst holds,
     * a warm window's 32 per set on average) are what the reuse estimate leaves, at
     * PA_SET_EXACT or more. */
    double known = 0, reuses = total - h->cold;
    for (int k = 0; k < PA_SET_BINS; k++) h->sets[k] = (double)c[PA_TW_SETS + k] * scale, known += h->sets[k];
    if (known <= reuses) h->sets[pa_set_bin(PA_SET_EXACT)] += reuses - known;
    else
      for (int k = 0; k < PA_SET_BINS; k++) h->sets[k] *= reuses > 0 ? reuses / known : 0;
    h->has_sets = true;
  }
  quarters_from_counts(c + PA_TW_QUARTERS, h);
  for (int k = 0; k < PA_REUSE_BINS; k++) h->accesses += h->bins[k];
  h->accesses += h->cold;
}

/* The iterations stand for the whole range, but the start does not: its first touches are
 * true cold misses (counted once), where later iterations reuse. So accesses scale with the
 * iterations, the cold misses are the first window's plus the later windows' scaled to the
 * other n - first_len iterations, and the rest are reuses distributed as in the later windows. */
void pa_windows_combine(int n_groups, const double *first, const double *rest, double n, double first_len,
                        double counted, double *acc) {
  double sc = counted > 0 ? n / counted : 1, later = counted - first_len;
  for (int f = 0; f < n_groups; f++) {
    double *a = acc + (size_t)f * PA_TRACKER_WORDS, reuses = 0, total = 0;
    const double *x = first + (size_t)f * PA_TRACKER_WORDS, *y = rest + (size_t)f * PA_TRACKER_WORDS;
    for (int w = 0; w < PA_REUSE_BINS; w++) reuses += y[w];
    for (int w = 0; w <= PA_REUSE_BINS; w++) total += (x[w] + y[w]) * sc;
    double cold = x[PA_REUSE_BINS] + y[PA_REUSE_BINS] * (n - first_len) / (later > 0 ? later : 1);
    if (later <= 0 || reuses <= 0 || cold > total) { /* no later window: plain scaling */
      for (int w = 0; w <= PA_REUSE_BINS; w++) a[w] += (x[w] + y[w]) * sc;
      for (int w = PA_TW_QUARTERS; w < PA_TRACKER_WORDS; w++) a[w] += (x[w] + y[w]) * sc;
      continue;
    }
    for (int w = 0; w < PA_REUSE_BINS; w++) a[w] += y[w] * (total - cold) / reuses;
    a[PA_REUSE_BINS] += cold;
    /* quarters and per-set distances are reuses too, shared out as the later windows' */
    for (int w = PA_TW_QUARTERS; w < PA_TRACKER_WORDS; w++) a[w] += y[w] * (total - cold) / reuses;
  }
}

void pa_warm_filter_access(pa_warm_filter *f, pa_tracker *t, uint64_t line, int group) {
  size_t i = (size_t)((line * PA_SHARDS_MUL) >> 56) & (PA_WARM_FILTER_LINES - 1);
  if (f->slot[i].stamp && f->slot[i].line == line) {
    f->slot[i].stamp = ++f->clock;
    return;
  }
  if (f->slot[i].stamp) pa_tracker_access(t, f->slot[i].line, group);
  f->slot[i].line = line, f->slot[i].stamp = ++f->clock;
}

static int by_stamp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

void pa_warm_filter_flush(pa_warm_filter *f, pa_tracker *t, int group) {
  uint64_t order[PA_WARM_FILTER_LINES][2];
  int n = 0;
  for (int i = 0; i < PA_WARM_FILTER_LINES; i++)
    if (f->slot[i].stamp) order[n][0] = f->slot[i].stamp, order[n++][1] = f->slot[i].line, f->slot[i].stamp = 0;
  qsort(order, (size_t)n, sizeof order[0], by_stamp);
  for (int i = 0; i < n; i++) pa_tracker_access(t, order[i][1], group);
}
