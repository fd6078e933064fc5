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
 * the burst has seen, since every access in between went through them too. Larger set counts
 * on request (pa_tracker_set_llc: a last-level cache's 1024 sets) the same way, rate 1 only. */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "internal.h"

#define SHARDS_P (1ull << PA_SHARDS_BITS) /* modulus of the sampling hash (SHARDS uses 2^24) */

/* One LRU stack (unbounded; the exact window is one too, cleared per burst, that answers only
 * distances below W). Two levels, exact together: the `nf` most recent lines in a small front
 * (most accesses of a tiled kernel end here, with no hashing), and the older ones with the time
 * they left the front. The front's slots are in no order: each holds the stamp of its line's
 * last access, so a line there has the distance "slots with a later stamp" (one compare over
 * the 32 stamps) and the least recent, the smallest stamp, is the one that leaves; nothing
 * moves (a move-to-front array moved three arrays per hit: docs/validation.md, Session 16
 * part 2). The order of leaving is the order of last access, so such a
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
  /* The front: slots 0..nf-1 in no order. Tags and stamps are 16 bits, so one compare covers 8
   * slots and four the front. Stamps count accesses from 1 (0: an empty slot); at INT16_MAX
   * they are renumbered 1..nf. */
  alignas(16) uint16_t tag[FRONT_MAX]; /* low 16 bits of the keys (a match is then checked) */
  alignas(16) int16_t stamp[FRONT_MAX];
  uint64_t key[FRONT_MAX];
  int32_t *front_time[FRONT_MAX]; /* their time words (chunks stay put until the stack is cleared) */
  int nf, clock;                  /* clock: the last stamp given */
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
  /* Lines tracked at weight 1 beside a sample at weight 1/R (the moved locals' region,
   * pa_tracker_set_locals; lmap NULL: none): keys llo..llo + ln - 1 whose bit is set in lmap.
   * A distance then also counts how many of its lines are such: which front slots hold one,
   * and their leave times as a second bitmap and Fenwick tree beside bits and fen. */
  const uint64_t *lmap;
  uint64_t llo, ln;
  uint32_t front_local;
  uint64_t *lbits;
  int32_t *lfen;
} lru;
typedef enum { BURST_OFF, BURST_WARM, BURST_MEASURE } burst_phase;
/* Bursts (see pa_tracker_new): 64 x 4W accesses apart for the first 8, then 256 x 4W. A
 * short run keeps the schedule that bounds its curves (tests/analyzer: 8 bursts cover runs
 * of about 4M line accesses); a long one stops paying 2-4% of its accesses for shares that
 * 8 bursts of 4W measured accesses already estimate (docs/validation.md, Session 7). */
#define BURST_GAP 64
#define BURST_GAP_LATER 256
#define BURSTS_AT_FIRST_GAP 16

/* Per set, its PA_SET_EXACT most recent lines (keys line / PA_SETS) in unordered slots, as the
 * front of an lru: each slot holds a 16-bit tag of its key and the stamp of its last access
 * (the set's own clock), so a line's distance is the count of its set's slots with a later
 * stamp and a full set's least recent is the smallest stamp; nothing moves (a bounded stack
 * needs no times: a line that fell out is at distance PA_SET_EXACT or more). An unbounded stack
 * per set (the lru above) cost as much as the global one: mm512's full run 1.54G -> 2.58G
 * instructions (docs/validation.md, Session 10); a move-to-front array of keys searched and
 * moved up to 32 keys an access (docs/validation.md, Session 20). */
typedef struct {
  alignas(16) uint16_t tag[PA_SETS][PA_SET_EXACT];
  alignas(16) int16_t stamp[PA_SETS][PA_SET_EXACT]; /* 0: an empty slot */
  uint64_t key[PA_SETS][PA_SET_EXACT];
  int n[PA_SETS];
  int16_t clock[PA_SETS]; /* the last stamp given in the set */
} set_stacks;

/* Per-set stacks for a larger set count (pa_tracker_set_llc): the slots of one set together
 * (two cache lines of tags and stamps, four of keys), since a large cache's sets are far more
 * than stay in the host's L1 and an access touches one. */
typedef struct {
  alignas(16) uint16_t tag[PA_SET_EXACT];
  alignas(16) int16_t stamp[PA_SET_EXACT]; /* 0: an empty slot */
  uint64_t key[PA_SET_EXACT];
  int n;
  int16_t clock;
} llc_set;

typedef struct {
  int shift; /* log2 of the set count */
  llc_set *set;
} llc_stacks;

/* Bursts are few (tens in a short run) and a phase of the run gets bursts in proportion to its
 * sampled accesses, which swing with whether its few hot lines are in the sample; so the mix of
 * what they measured can be far from the run's (conv random 4 of test_line_filter.c: a phase of
 * 4.5% of the accesses measured by 4 of 23 bursts). So each burst's counts are kept by stratum
 * too, the block that made the access (pa_tracker_stratum), with the accesses of the block
 * sampled outside measurement; pa_tracker_finish weights each stratum's measured mix by the
 * block's own estimated accesses (measured + outside / R) instead of by how many bursts fell
 * on it: post-stratification. A stratum's words: */
#define SW_SHORT (PA_REUSE_BINS + 1)            /* bins and beyond-window, then PA_TW_SHORT's */
#define SW_SETS (SW_SHORT + PA_REUSE_BINS)      /* PA_TW_SETS' */
#define SW_MEASURED (SW_SETS + PA_SET_BINS)     /* accesses measured */
#define SW_OUTSIDE (SW_MEASURED + 1)            /* sampled accesses outside measurement (1/R each) */
#define SW_LOCAL_OUTSIDE (SW_OUTSIDE + 1)       /* weight-1 lines' accesses outside measurement */
#define SW_WORDS (SW_LOCAL_OUTSIDE + 1)
/* Where a stratum's words sit among a group's (PA_TRACKER_WORDS): runs of n words. */
static const struct {
  int group, stratum, n;
} SW_RUNS[] = {{0, 0, PA_REUSE_BINS + 1},
               {PA_TW_SHORT, SW_SHORT, PA_REUSE_BINS},
               {PA_TW_SETS, SW_SETS, PA_SET_BINS},
               {PA_TW_MEASURED, SW_MEASURED, 1},
               {PA_TW_OUTSIDE, SW_OUTSIDE, 1},
               {PA_TW_LOCAL_OUTSIDE, SW_LOCAL_OUTSIDE, 1}};
#define SW_WEIGHTED_RUNS 3 /* the first three: the burst words pa_tracker_finish weights */
typedef struct {
  const void *key;
  int group;
  uint64_t w[SW_WORDS];
} stratum;
typedef struct {
  stratum *v;      /* in order of first access (a deterministic order of the sums) */
  int n, cap;
  int *slot;       /* open addressing by key: index into v + 1, 0 = empty */
  int slots;       /* a power of 2 */
  const void *key; /* the current block, and its index in v (-1: none, accesses not by block) */
  int cur;
} strata;

/* Which access path the tracker takes, chosen when it is set up (one compare per call on the
 * runtime's path, as the rate test it replaces was). */
typedef enum { PATH_FULL, PATH_FULL_LLC, PATH_SAMPLED, PATH_WEIGHTED } tracker_path;

struct pa_tracker {
  tracker_path path;
  double rate;
  uint64_t threshold; /* keep a line iff pa_shards_hash(line) < threshold */
  int64_t window;     /* lines in the exact window (sampled mode only) */
  lru far;            /* every line (rate 1) or the sampled lines */
  lru near;           /* the exact window (rate < 1) */
  set_stacks *far_sets;  /* every line's per-set stack (rate 1) */
  set_stacks *near_sets; /* the bursts' per-set stacks (rate < 1 with a window) */
  int n_llc;             /* larger set counts tracked (rate 1; pa_tracker_set_llc) */
  llc_stacks llc[PA_LLC_COUNTS];
  burst_phase phase;
  int64_t left;        /* accesses left in this phase (warm: at most) */
  int64_t since;       /* sampled accesses since the last burst ended */
  int64_t local_since; /* weight-1 lines' accesses since then (each counts R of a sampled one) */
  uint64_t quarter_weight; /* with weight-1 lines (far.lmap): a sampled line's weight in the quarter counts, 1/R */
  int64_t period;      /* sampled accesses between bursts */
  int64_t bursts;      /* bursts started after the first */
  int64_t measure_len; /* accesses measured per burst */
  strata st;           /* the bursts' counts by the block that made the access (sampled mode) */
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
  free((void *)u->lmap);
  free(u->lbits);
  free(u->lfen);
}

/* A set of times: a bitmap and a Fenwick tree over its words' popcounts (nw words). */
static void tree_add(int32_t *fen, int64_t nw, int64_t w, int32_t v) { /* word w (0-based) */
  for (int64_t i = w + 1; i <= nw; i += i & -i) fen[i] += v;
}

static int64_t tree_range(const int32_t *fen, int64_t lo, int64_t hi) { /* words lo..hi-1 (0-based) */
  int64_t s = 0;
  while (hi != lo) {
    if (hi > lo) s += fen[hi], hi -= hi & -hi;
    else s -= fen[lo], lo -= lo & -lo;
  }
  return s;
}

static void set_mark(uint64_t *bits, int32_t *fen, int64_t nw, int64_t t) {
  bits[t >> 6] |= 1ULL << (t & 63);
  tree_add(fen, nw, t >> 6, 1);
}

static void set_unmark(uint64_t *bits, int32_t *fen, int64_t nw, int64_t t) {
  bits[t >> 6] &= ~(1ULL << (t & 63));
  tree_add(fen, nw, t >> 6, -1);
}

static void mark(lru *u, int64_t t) { set_mark(u->bits, u->fen, u->nw, t); }

static void unmark(lru *u, int64_t t) { set_unmark(u->bits, u->fen, u->nw, t); }

/* Times of the set in lo+1..hi (lo < hi). */
static inline __attribute__((always_inline)) int64_t set_between(const uint64_t *bits, const int32_t *fen, int64_t lo, int64_t hi) {
  int64_t wl = lo >> 6, wh = hi >> 6;
  uint64_t above = (lo & 63) == 63 ? 0 : ~0ULL << ((lo & 63) + 1);
  uint64_t upto = (hi & 63) == 63 ? ~0ULL : (2ULL << (hi & 63)) - 1;
  if (wl == wh) return __builtin_popcountll(bits[wl] & above & upto);
  return __builtin_popcountll(bits[wl] & above) + __builtin_popcountll(bits[wh] & upto) + tree_range(fen, wl + 1, wh);
}

/* Live times in lo+1..hi (lo < hi). */
static inline __attribute__((always_inline)) int64_t live_between(const lru *u, int64_t lo, int64_t hi) {
  return set_between(u->bits, u->fen, lo, hi);
}

/* A key tracked at weight 1 (lru.lmap). */
static bool key_local(const lru *u, uint64_t key) {
  uint64_t i = key - u->llo;
  return i < u->ln && (u->lmap[i >> 6] >> (i & 63) & 1);
}

static size_t dir_home(const lru *u, uint64_t id) { return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> u->dshift); }

static size_t dir_slot(const lru *u, uint64_t id) {
  size_t i = dir_home(u, id);
  while (u->dir[i] && u->dir[i]->id != id) i = (i + 1) & (u->dcap - 1);
  return i;
}

/* The time word of key (created, as absent, if need be). */
static inline __attribute__((always_inline)) int32_t *time_of(lru *u, uint64_t key) {
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
  /* With weight-1 lines (hot ones, that leave the front on most accesses) renumberings came
   * every few thousand accesses, each scanning every chunk: leave as many times as the scan
   * costs (dwconv_mb #3: compact was 10% of the run). */
  if (u->lmap) need += (int64_t)u->dn * CHUNK_LINES;
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
  if (u->lmap) { /* the weight-1 lines' times, from their keys */
    u->lbits = realloc(u->lbits, sizeof *u->lbits * (size_t)u->nw);
    u->lfen = realloc(u->lfen, sizeof *u->lfen * ((size_t)u->nw + 1));
    memset(u->lbits, 0, sizeof *u->lbits * (size_t)u->nw);
    memset(u->lfen, 0, sizeof *u->lfen * ((size_t)u->nw + 1));
    for (size_t i = 0; i < u->dcap; i++)
      if (u->dir[i] && u->dir[i]->gen == u->gen)
        for (int k = 0; k < CHUNK_LINES; k++)
          if (u->dir[i]->t[k] > 0 && key_local(u, u->dir[i]->id << CHUNK_BITS | (uint64_t)k))
            set_mark(u->lbits, u->lfen, u->nw, u->dir[i]->t[k]);
  }
}

#ifdef __SSE2__
_Static_assert(FRONT_MAX == 32, "the front's tags and stamps are compared as four vectors of 8");
/* Bit i set where slot i's 16-bit word satisfies the compare with s (8 slots a vector, packed to bytes). */
#define FRONT_MASK(cmp, v, s)                                                                     \
  ((unsigned)_mm_movemask_epi8(_mm_packs_epi16(cmp((v)[0], s), cmp((v)[1], s))) |                 \
   (unsigned)_mm_movemask_epi8(_mm_packs_epi16(cmp((v)[2], s), cmp((v)[3], s))) << 16)
#endif

/* Unmarks time `from` and marks `to` (> from) in one walk: the two Fenwick paths meet (at the
 * node covering both words, at once when they share one) and above that their updates cancel. */
static inline __attribute__((always_inline)) void move_mark(lru *u, int64_t from, int64_t to) {
  u->bits[from >> 6] &= ~(1ULL << (from & 63));
  u->bits[to >> 6] |= 1ULL << (to & 63);
  for (int64_t i = (from >> 6) + 1, j = (to >> 6) + 1; i != j;) {
    if (i < j) {
      if (i > u->nw) break; /* both paths have left the tree */
      u->fen[i]--, i += i & -i;
    } else {
      if (j > u->nw) break;
      u->fen[j]++, j += j & -j;
    }
  }
}

/* The least recent line of the front moves to the older level (its time word kept by the
 * front). `reused` > 0: the leave time of the line that has just come back to the front (its
 * time word already IN_FRONT), unmarked here with the same walk. */
static inline __attribute__((always_inline)) void leave_front(lru *u, int32_t *time_word, int64_t reused) {
  bool renumber = u->now == u->tcap;
  if (renumber) compact(u); /* it drops `reused`: compact keeps only the times in the chunks */
  int64_t now = ++u->now;
  *time_word = (int32_t)now;
  if (reused && !renumber) move_mark(u, reused, now);
  else mark(u, now);
}

/* Slot of key in the front, or -1: the 16-bit tags of the nf used slots, then the key. */
static inline __attribute__((always_inline)) int front_find(const lru *u, uint64_t key) {
#ifdef __SSE2__
  const __m128i *v = (const __m128i *)u->tag, k = _mm_set1_epi16((short)(uint16_t)key);
  for (unsigned m = FRONT_MASK(_mm_cmpeq_epi16, v, k) & (unsigned)((1ULL << u->nf) - 1); m; m &= m - 1) {
    int p = __builtin_ctz(m);
    if (u->key[p] == key) return p;
  }
#else
  for (int p = 0; p < u->nf; p++)
    if (u->tag[p] == (uint16_t)key && u->key[p] == key) return p;
#endif
  return -1;
}

/* The slots accessed after the one with stamp s (bit i: slot i); their count is its distance. */
static inline __attribute__((always_inline)) unsigned front_newer(const lru *u, int16_t s) {
#ifdef __SSE2__
  const __m128i *v = (const __m128i *)u->stamp, k = _mm_set1_epi16(s);
  return FRONT_MASK(_mm_cmpgt_epi16, v, k);
#else
  unsigned m = 0;
  for (int i = 0; i < FRONT_MAX; i++) m |= (unsigned)(u->stamp[i] > s) << i;
  return m;
#endif
}

/* The slot of the smallest of 32 distinct stamps (the least recent line of a full front or set). */
static inline __attribute__((always_inline)) int slots_oldest(const int16_t *stamp) {
#ifdef __SSE2__
  const __m128i *v = (const __m128i *)stamp;
  __m128i m = _mm_min_epi16(_mm_min_epi16(v[0], v[1]), _mm_min_epi16(v[2], v[3]));
  m = _mm_min_epi16(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
  m = _mm_min_epi16(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
  m = _mm_min_epi16(m, _mm_shufflelo_epi16(m, _MM_SHUFFLE(2, 3, 0, 1)));
  __m128i k = _mm_set1_epi16((int16_t)_mm_cvtsi128_si32(m));
  return __builtin_ctz(FRONT_MASK(_mm_cmpeq_epi16, v, k));
#else
  int o = 0;
  for (int i = 1; i < FRONT_MAX; i++)
    if (stamp[i] < stamp[o]) o = i;
  return o;
#endif
}

static inline __attribute__((always_inline)) int front_oldest(const lru *u) { return slots_oldest(u->stamp); }

/* The stamps renumbered 1..nf, order kept (once per 32K accesses). */
static void front_renumber(lru *u) {
  int16_t rank[FRONT_MAX];
  for (int i = 0; i < u->nf; i++) {
    rank[i] = 1;
    for (int j = 0; j < u->nf; j++) rank[i] += u->stamp[j] < u->stamp[i];
  }
  memcpy(u->stamp, rank, sizeof *rank * (size_t)u->nf);
  u->clock = u->nf;
}

/* The access to a line not in the front (key: line + 1; stamp: its access's, already given):
 * its distance, or -1 if it is not in the stack (first touch); it enters the front. weighted (a
 * constant: the stack has lines of weight 1, lmap): *local is how many of the distance's lines
 * are such. */
static inline __attribute__((always_inline)) int64_t lru_miss_w(lru *u, uint64_t key, int16_t stamp, bool weighted,
                                                                int64_t *local) {
  int nf = u->nf, i;
  int32_t *tw = time_of(u, key);
  int64_t last = *tw, dist = -1; /* last > 0: the time it left the front; 0: a new line */
  if (last) dist = nf + (last < u->now ? live_between(u, last, u->now) : 0);
  else u->n++;
  bool is_local = weighted && key_local(u, key);
  if (weighted && last)
    *local = __builtin_popcount(u->front_local) + (last < u->now ? set_between(u->lbits, u->lfen, last, u->now) : 0);
  *tw = IN_FRONT;
  if (nf == FRONT_MAX) {
    i = front_oldest(u);
    bool renumber = u->now == u->tcap, leaving_local = weighted && (u->front_local >> i & 1);
    leave_front(u, u->front_time[i], last); /* a renumbering rebuilt lbits without either line */
    if (weighted && is_local && last && !renumber) set_unmark(u->lbits, u->lfen, u->nw, last);
    if (leaving_local) set_mark(u->lbits, u->lfen, u->nw, u->now);
  } else {
    if (last) unmark(u, last); /* never so far: lines leave only a full front */
    if (weighted && is_local && last) set_unmark(u->lbits, u->lfen, u->nw, last);
    i = u->nf++;
  }
  u->tag[i] = (uint16_t)key, u->key[i] = key, u->front_time[i] = tw, u->stamp[i] = stamp;
  if (weighted) u->front_local = (u->front_local & ~(1u << i)) | (unsigned)is_local << i;
  return dist;
}

static __attribute__((noinline)) int64_t lru_miss(lru *u, uint64_t key, int16_t stamp) {
  return lru_miss_w(u, key, stamp, false, NULL);
}

static __attribute__((noinline)) int64_t lru_miss_weighted(lru *u, uint64_t key, int16_t stamp, int64_t *local) {
  return lru_miss_w(u, key, stamp, true, local);
}

/* Distance of this access, or -1 if the line is not in the stack (first touch); weighted (a
 * constant), *local as in lru_miss_w. A line in the front (most accesses of a tiled kernel) is
 * answered inline, the rest out of line (lru_miss: its register saves were a sixth of a front
 * hit's instructions). */
static inline __attribute__((always_inline)) int64_t lru_access_w(lru *u, uint64_t line, bool weighted, int64_t *local) {
  uint64_t key = line + 1;
  if (u->clock == INT16_MAX) front_renumber(u);
  int16_t stamp = (int16_t)++u->clock;
  int i = front_find(u, key);
  if (i >= 0) {
    unsigned newer = front_newer(u, u->stamp[i]);
    if (weighted) *local = __builtin_popcount(newer & u->front_local);
    u->stamp[i] = stamp;
    return __builtin_popcount(newer);
  }
  return weighted ? lru_miss_weighted(u, key, stamp, local) : lru_miss(u, key, stamp);
}

static inline __attribute__((always_inline)) int64_t lru_access(lru *u, uint64_t line) { return lru_access_w(u, line, false, NULL); }

static inline __attribute__((always_inline)) int64_t lru_access_weighted(lru *u, uint64_t line, int64_t *local) {
  return lru_access_w(u, line, true, local);
}

static set_stacks *sets_new(void) {
  set_stacks *s = aligned_alloc(alignof(set_stacks), sizeof(set_stacks)); /* a multiple of its alignment */
  if (s) memset(s, 0, sizeof *s);
  return s;
}

static void sets_free(set_stacks *s) { free(s); }

static void sets_clear(set_stacks *s) {
  memset(s->n, 0, sizeof s->n);
  memset(s->clock, 0, sizeof s->clock);
}

_Static_assert(PA_SET_EXACT == FRONT_MAX, "a set's slots are compared as the front's");

/* A set's stamps renumbered 1..n, order kept (once per 32K accesses to the set). */
static __attribute__((noinline)) void slots_renumber(int16_t *st, int n, int16_t *clock) {
  int16_t rank[PA_SET_EXACT];
  for (int i = 0; i < n; i++) {
    rank[i] = 1;
    for (int j = 0; j < n; j++) rank[i] += st[j] < st[i];
  }
  memcpy(st, rank, sizeof *rank * (size_t)n);
  *clock = (int16_t)n;
}

/* One set's access to the line of `key` (its bits above the set index): the per-set distance,
 * -1 if it is not among the set's PA_SET_EXACT most recent lines (a first touch, or PA_SET_EXACT
 * or more); it becomes the most recent. tag, st, keys: the set's slots; *np its lines, *clock
 * its last stamp. */
static inline __attribute__((always_inline)) int64_t slots_access(uint16_t *tag, int16_t *st, uint64_t *keys, int *np,
                                                                  int16_t *clock, uint64_t key) {
  int n = *np;
  if (*clock == INT16_MAX) slots_renumber(st, n, clock);
  int16_t stamp = ++*clock;
  unsigned used = (unsigned)((1ULL << n) - 1);
#ifdef __SSE2__
  const __m128i *tv = (const __m128i *)tag, *sv = (const __m128i *)st;
  const __m128i k = _mm_set1_epi16((short)(uint16_t)key);
  for (unsigned m = FRONT_MASK(_mm_cmpeq_epi16, tv, k) & used; m; m &= m - 1) {
    int p = __builtin_ctz(m);
    if (keys[p] == key) {
      const __m128i q = _mm_set1_epi16(st[p]);
      unsigned newer = FRONT_MASK(_mm_cmpgt_epi16, sv, q) & used;
      st[p] = stamp;
      return __builtin_popcount(newer);
    }
  }
#else
  for (int p = 0; p < n; p++)
    if (tag[p] == (uint16_t)key && keys[p] == key) {
      int d = 0;
      for (int i = 0; i < n; i++) d += st[i] > st[p];
      st[p] = stamp;
      return d;
    }
#endif
  int p = n < PA_SET_EXACT ? (*np)++ : slots_oldest(st); /* a full set: the least recent falls out */
  tag[p] = (uint16_t)key, keys[p] = key, st[p] = stamp;
  return -1;
}

/* The per-set distance of this access to `line` among PA_SETS sets (slots_access). */
static inline __attribute__((always_inline)) int64_t set_access(set_stacks *s, uint64_t line) {
  int set = (int)(line & (PA_SETS - 1));
  return slots_access(s->tag[set], s->stamp[set], s->key[set], &s->n[set], &s->clock[set], line / PA_SETS);
}

/* The per-set distance of this access to `line` among 2^shift sets. */
static inline __attribute__((always_inline)) int64_t llc_access(llc_stacks *s, uint64_t line) {
  llc_set *x = &s->set[line & (((uint64_t)1 << s->shift) - 1)];
  return slots_access(x->tag, x->stamp, x->key, &x->n, &x->clock, line >> s->shift);
}

pa_tracker *pa_tracker_new(int n_groups, double rate, int64_t window) {
  pa_tracker *t = calloc(1, sizeof *t);
  if (rate <= 0 || rate > 1) rate = 1;
  t->rate = rate;
  t->threshold = rate >= 1 ? SHARDS_P : (uint64_t)(rate * SHARDS_P + 0.5);
  lru_init(&t->far, 4096);
  if (rate >= 1) t->far_sets = sets_new();
  t->path = rate >= 1 ? PATH_FULL : PATH_SAMPLED;
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
  t->st.cur = -1;
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
  for (int i = 0; i < t->n_llc; i++) free(t->llc[i].set);
  free(t->counts);
  free(t->st.v), free(t->st.slot);
  free(t);
}

const uint64_t *pa_tracker_counts(const pa_tracker *t, int group) {
  return t->counts + (size_t)group * PA_TRACKER_WORDS;
}

int64_t pa_tracker_window(const pa_tracker *t) { return t->window; }

bool pa_tracker_set_llc(pa_tracker *t, int n, const int *sets) {
  if (t->rate < 1 || t->n_llc || pa_llc_sets_invalid(n, sets)) return false;
  for (int i = 0; i < n; i++) {
    size_t bytes = sizeof(llc_set) * (size_t)sets[i]; /* a multiple of its alignment */
    llc_set *x = aligned_alloc(alignof(llc_set), bytes);
    if (!x) {
      for (int j = 0; j < i; j++) free(t->llc[j].set);
      return false;
    }
    memset(x, 0, bytes);
    t->llc[i] = (llc_stacks){__builtin_ctz((unsigned)sets[i]), x};
  }
  t->n_llc = n;
  t->path = n ? PATH_FULL_LLC : PATH_FULL;
  return true;
}

bool pa_tracker_set_locals(pa_tracker *t, uint64_t first_line, const uint64_t *map, int64_t n_lines) {
  lru *u = &t->far;
  if (t->rate >= 1 || n_lines <= 0 || u->lmap || u->n) return false;
  size_t words = (size_t)(n_lines + 63) / 64;
  uint64_t *m = malloc(sizeof *m * words);
  u->lbits = calloc((size_t)u->nw, sizeof *u->lbits);
  u->lfen = calloc((size_t)u->nw + 1, sizeof *u->lfen);
  if (!m || !u->lbits || !u->lfen) {
    free(m), free(u->lbits), free(u->lfen);
    u->lbits = NULL, u->lfen = NULL;
    return false;
  }
  memcpy(m, map, sizeof *m * words);
  u->lmap = m, u->llo = first_line + 1, u->ln = (uint64_t)n_lines; /* keys are line + 1 */
  t->quarter_weight = (uint64_t)(1 / t->rate + 0.5);
  t->path = PATH_WEIGHTED;
  return true;
}

bool pa_tracker_is_local(const pa_tracker *t, uint64_t line) { return t->far.lmap && key_local(&t->far, line + 1); }

bool pa_tracker_bursting(const pa_tracker *t) { return t->phase != BURST_OFF; }

static void lru_clear(lru *u) {
  u->gen++; /* every chunk reads as empty until touched */
  memset(u->bits, 0, sizeof *u->bits * (size_t)u->nw);
  memset(u->fen, 0, sizeof *u->fen * ((size_t)u->nw + 1));
  if (u->lbits) {
    memset(u->lbits, 0, sizeof *u->lbits * (size_t)u->nw);
    memset(u->lfen, 0, sizeof *u->lfen * ((size_t)u->nw + 1));
  }
  u->front_local = 0;
  u->nf = 0;
  u->clock = 0;
  memset(u->stamp, 0, sizeof u->stamp);
  u->n = 0;
  u->now = 0;
}

/* The current block's stratum, or NULL. */
static inline stratum *cur_stratum(pa_tracker *t) { return t->st.cur >= 0 ? &t->st.v[t->st.cur] : NULL; }

static int stratum_slot(const strata *x, const void *key) {
  size_t mask = (size_t)x->slots - 1, i = (size_t)(((uintptr_t)key * PA_SHARDS_MUL) >> 32) & mask;
  while (x->slot[i] && x->v[x->slot[i] - 1].key != key) i = (i + 1) & mask;
  return (int)i;
}

void pa_tracker_stratum(pa_tracker *t, const void *key, int group) {
  strata *x = &t->st;
  if (key == x->key) return;
  x->key = key, x->cur = -1;
  if (!t->window || t->rate >= 1 || !key) return; /* only bursts are stratified */
  if (2 * (x->n + 1) > x->slots) { /* grow the table (and rehash) */
    int slots = x->slots ? 2 * x->slots : 256, *old = x->slot;
    x->slot = calloc((size_t)slots, sizeof *x->slot);
    if (!x->slot) {
      x->slot = old;
      return;
    }
    free(old);
    x->slots = slots;
    for (int k = 0; k < x->n; k++) x->slot[stratum_slot(x, x->v[k].key)] = k + 1;
  }
  int i = stratum_slot(x, key);
  if (!x->slot[i]) {
    if (x->n == x->cap) {
      int cap = x->cap ? 2 * x->cap : 64;
      stratum *v = realloc(x->v, sizeof *v * (size_t)cap);
      if (!v) return;
      x->v = v, x->cap = cap;
    }
    memset(&x->v[x->n], 0, sizeof x->v[x->n]);
    x->v[x->n].key = key, x->v[x->n].group = group;
    x->slot[i] = ++x->n;
  }
  x->cur = x->slot[i] - 1;
}

/* A stratum with fewer measured accesses than this joins the pooled rest (its own mix would be
 * a handful of accesses standing for all of its block's), unless they are half of its accesses
 * or more (a short run's blocks, measured whole); so does what came from no block. */
#define STRATUM_MIN_MEASURED 256

/* The block's estimated accesses: measured + sampled outside measurement / R + weight-1 ones. */
static double stratum_accesses(const uint64_t *w, double rate) {
  return (double)w[SW_MEASURED] + (double)w[SW_OUTSIDE] / rate + (double)w[SW_LOCAL_OUTSIDE];
}

static bool stratum_stands(const uint64_t *w, double rate) {
  double m = (double)w[SW_MEASURED];
  return m >= STRATUM_MIN_MEASURED || (m > 0 && stratum_accesses(w, rate) <= 2 * m);
}

/* Adds stratum words w, weighted by the block's estimated accesses over its measured ones, to
 * the group's burst words (in PA_BURST_UNIT per access). */
static void add_stratum(const uint64_t *w, double rate, double *out) {
  double m = (double)w[SW_MEASURED];
  if (m <= 0) return;
  double f = PA_BURST_UNIT * stratum_accesses(w, rate) / m;
  for (int r = 0; r < SW_WEIGHTED_RUNS; r++)
    for (int k = 0; k < SW_RUNS[r].n; k++) out[SW_RUNS[r].group + k] += f * (double)w[SW_RUNS[r].stratum + k];
}

void pa_tracker_finish(pa_tracker *t) {
  strata *x = &t->st;
  if (!x->n) return;
  double *out = malloc(sizeof *out * PA_TRACKER_WORDS);
  for (int g = 0; out && g < t->n_groups; g++) {
    uint64_t *c = t->counts + (size_t)g * PA_TRACKER_WORDS, pool[SW_WORDS];
    /* the pool: what no block's stratum holds (c's words less every stratum's), and the small strata */
    for (size_t r = 0; r < PT_ARRAY_LEN(SW_RUNS); r++)
      for (int k = 0; k < SW_RUNS[r].n; k++) pool[SW_RUNS[r].stratum + k] = c[SW_RUNS[r].group + k];
    memset(out, 0, sizeof *out * PA_TRACKER_WORDS);
    bool any = false;
    for (int i = 0; i < x->n; i++) {
      const stratum *s = &x->v[i];
      if (s->group != g) continue;
      for (int k = 0; k < SW_WORDS; k++) pool[k] -= s->w[k];
      if (!stratum_stands(s->w, t->rate)) { /* back into the pool */
        for (int k = 0; k < SW_WORDS; k++) pool[k] += s->w[k];
        continue;
      }
      add_stratum(s->w, t->rate, out);
      any = true;
    }
    if (!any) continue; /* the group's counts as they are */
    /* a pool measured too little stands for nothing: its accesses (in the total) take the
     * strata's mix, as those of blocks no burst measured do (pa_tracker_hist's scale) */
    if (stratum_stands(pool, t->rate)) add_stratum(pool, t->rate, out);
    for (int r = 0; r < SW_WEIGHTED_RUNS; r++)
      for (int k = SW_RUNS[r].group; k < SW_RUNS[r].group + SW_RUNS[r].n; k++) c[k] = (uint64_t)(out[k] + 0.5);
  }
  free(out);
  free(x->v), free(x->slot);
  memset(x, 0, sizeof *x);
  x->cur = -1;
}

/* One access during a burst: the exact window's answer, counted when measuring. */
static inline __attribute__((always_inline)) int64_t burst_access(pa_tracker *t, uint64_t line, uint64_t *exact) {
  int64_t held = (int64_t)t->near.n;
  int64_t near = lru_access(&t->near, line);
  int64_t in_set = set_access(t->near_sets, line);
  /* new to a window that holds fewer than W lines (the warm-up ran out first): at least `held`
   * away, not necessarily W */
  bool short_miss = near < 0 && held < t->window;
  if (near >= t->window) near = -1; /* beyond the window */
  if (t->phase == BURST_MEASURE) {
    int w = short_miss ? PA_TW_SHORT + pa_reuse_bin(held) : near >= 0 ? pa_reuse_bin(near) : PA_REUSE_BINS;
    exact[w]++;
    if (near >= 0) exact[PA_TW_QUARTERS + 4 * pa_reuse_bin(near) + pa_reuse_quarter(near)]++;
    if (in_set >= 0) exact[PA_TW_SETS + in_set]++; /* the rest: pa_tracker_hist */
    exact[PA_TW_MEASURED]++;
    stratum *s = cur_stratum(t);
    if (s) { /* the same words by block */
      s->w[short_miss ? SW_SHORT + pa_reuse_bin(held) : w]++;
      if (in_set >= 0) s->w[SW_SETS + in_set]++;
      s->w[SW_MEASURED]++;
    }
  }
  if (t->phase == BURST_WARM && (int64_t)t->near.n >= t->window) t->left = 1; /* warm: measure next */
  if (--t->left == 0) {
    if (t->phase == BURST_WARM) {
      t->phase = BURST_MEASURE;
      t->left = t->measure_len;
    } else {
      t->phase = BURST_OFF;
      t->since = 0, t->local_since = 0;
    }
  }
  return near;
}

/* An access when sampling; weighted (a constant): the tracker has lines of weight 1 (far.lmap).
 * Two instantiations, so a tracker without them runs the code it always ran. */
static inline __attribute__((always_inline)) int64_t sampled_access(pa_tracker *t, uint64_t line, uint64_t *exact,
                                                                    bool weighted) {
  uint64_t *sampled = exact + PA_TW_SAMPLED;
  /* a line of weight 1 (the locals region) is always in the sample */
  bool local = weighted && key_local(&t->far, line + 1);
  bool in_sample = local || pa_shards_hash(line) < t->threshold;
  bool measuring = t->phase == BURST_MEASURE;
  int64_t est = -2;
  if (in_sample) {
    int64_t far;
    if (weighted) { /* a weighted count of the distinct lines: 1/R each sampled one, 1 each local one */
      int64_t near_local = 0;
      far = lru_access_weighted(&t->far, line, &near_local);
      est = far < 0 ? -1 : (int64_t)((double)(far - near_local) / t->rate + (double)near_local + 0.5);
    } else {
      far = lru_access(&t->far, line);
      est = far < 0 ? -1 : (int64_t)((double)far / t->rate + 0.5);
    }
    uint64_t *counted = local ? exact + PA_TW_LOCAL : sampled; /* weight 1, or 1/R */
    counted[far < 0 ? PA_REUSE_BINS : pa_reuse_bin(est)]++;
    /* quarters beyond the window come from the sample, below it from the bursts (only their
     * shares within a bin are used: a sampled line counts 1/R times a local one) */
    if (far >= 0 && (!t->window || est >= t->window))
      exact[PA_TW_QUARTERS + 4 * pa_reuse_bin(est) + pa_reuse_quarter(est)] += weighted && !local ? t->quarter_weight : 1;
    if (!measuring) { /* sampled outside measurement */
      exact[local ? PA_TW_LOCAL_OUTSIDE : PA_TW_OUTSIDE]++;
      stratum *s = cur_stratum(t);
      if (s) s->w[local ? SW_LOCAL_OUTSIDE : SW_OUTSIDE]++;
    }
  }
  if (t->phase != BURST_OFF) {
    int64_t near = burst_access(t, line, exact);
    if (near >= 0) return near;
    if (est >= 0 && est < t->window) est = t->window; /* it missed the window: at least W away */
    return in_sample ? est : -2;
  }
  int64_t gap = t->bursts < BURSTS_AT_FIRST_GAP ? t->period : t->period * (BURST_GAP_LATER / BURST_GAP);
  bool due = false; /* bursts are as far apart in accesses as without weight-1 lines */
  if (in_sample && t->window) {
    if (local) t->local_since++; /* each counts `rate` of a sampled access (below) */
    else t->since++;
    due = weighted ? (double)t->since + (double)t->local_since * t->rate >= (double)gap : t->since >= gap;
  }
  if (due) { /* the next access starts a burst */
    t->bursts++;
    lru_clear(&t->near);
    sets_clear(t->near_sets);
    t->phase = BURST_WARM;
    t->left = 2 * t->measure_len;
  }
  return est;
}

static __attribute__((noinline)) int64_t sampled_access_weighted(pa_tracker *t, uint64_t line, uint64_t *exact) {
  return sampled_access(t, line, exact, true);
}

static __attribute__((noinline)) void sampled_lines_weighted(pa_tracker *t, uint64_t first, uint64_t last, uint64_t *exact) {
  for (uint64_t line = first; line <= last; line++) sampled_access(t, line, exact, true);
}

/* One access at rate 1: exact distances, per-set too. */
static inline __attribute__((always_inline)) int64_t full_access(pa_tracker *t, uint64_t line, uint64_t *exact) {
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

/* full_access with the larger set counts too (a first touch is one in every set count). */
static __attribute__((noinline)) int64_t full_access_llc(pa_tracker *t, uint64_t line, uint64_t *exact) {
  int64_t d = full_access(t, line, exact);
  for (int i = 0; i < t->n_llc; i++) {
    int64_t in_set = llc_access(&t->llc[i], line);
    if (d >= 0) exact[PA_TW_LLC + i * PA_SET_BINS + pa_set_bin(in_set)]++;
  }
  return d;
}

int64_t pa_tracker_access(pa_tracker *t, uint64_t line, int group) {
  uint64_t *exact = t->counts + (size_t)group * PA_TRACKER_WORDS;
  if (t->path == PATH_FULL) return full_access(t, line, exact);
  if (t->path == PATH_FULL_LLC) return full_access_llc(t, line, exact);
  if (t->path == PATH_WEIGHTED) return sampled_access_weighted(t, line, exact);
  return sampled_access(t, line, exact, false);
}

/* The runtime's slow path: one call per access of lines first..last (the tracker's mode chosen
 * once, not per line; the same order and results as pa_tracker_access line by line). */
bool pa_tracker_access_lines(pa_tracker *t, uint64_t first, uint64_t last, int group) {
  uint64_t *exact = t->counts + (size_t)group * PA_TRACKER_WORDS;
  if (t->path == PATH_FULL)
    for (uint64_t line = first; line <= last; line++) full_access(t, line, exact);
  else if (t->path == PATH_FULL_LLC)
    for (uint64_t line = first; line <= last; line++) full_access_llc(t, line, exact);
  else if (t->path == PATH_WEIGHTED)
    sampled_lines_weighted(t, first, last, exact);
  else
    for (uint64_t line = first; line <= last; line++) sampled_access(t, line, exact, false);
  return t->phase != BURST_OFF;
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

#define SHARDS_MIN_COLD 32

void pa_tracker_hist(const uint64_t *c, double rate, int64_t window, pa_reuse_hist *h) {
  const uint64_t *sampled = c + PA_TW_SAMPLED, *local = c + PA_TW_LOCAL; /* local: weight 1 (0 without them) */
  memset(h, 0, sizeof *h);
  /* the bursts' measured accesses, and the same counted in the burst words' units (1, or
   * PA_BURST_UNIT after pa_tracker_finish) */
  double measured = (double)c[PA_TW_MEASURED], weighted = 0;
  for (int k = 0; k <= PA_REUSE_BINS; k++) weighted += (double)c[k];
  for (int k = 0; k < PA_REUSE_BINS; k++) weighted += (double)c[PA_TW_SHORT + k];
  if (rate >= 1 || (measured == 0 && window > 0) || window <= 0) {
    /* exact, or plain SHARDS (also the fallback when no burst measured anything) */
    double w = rate >= 1 ? 1 : 1 / rate;
    for (int k = 0; k < PA_REUSE_BINS; k++) h->bins[k] = (double)(rate >= 1 ? c[k] : sampled[k]) * w + (double)local[k];
    h->cold = (double)(rate >= 1 ? c[PA_REUSE_BINS] : sampled[PA_REUSE_BINS]) * w + (double)local[PA_REUSE_BINS];
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
    double total = measured + (double)c[PA_TW_OUTSIDE] / rate + (double)c[PA_TW_LOCAL_OUTSIDE], scale = total / weighted;
    int near_bins = pa_reuse_bin(window - 1) + 1; /* bins 0..near_bins-1 lie below W */
    for (int k = 0; k < near_bins; k++) h->bins[k] = (double)c[k] * scale;
    /* the SHARDS estimates in units of a sampled access (a local one counts R) */
    double est[PA_REUSE_BINS + 1];
    for (int k = 0; k <= PA_REUSE_BINS; k++) est[k] = (double)sampled[k] + (double)local[k] * rate;
    /* accesses new to a window of fewer than W lines: spread over the SHARDS estimates from
     * the bin of the lines it held up (their distance is at least that), and cold misses */
    for (int b = 0; b < near_bins; b++) {
      double n_short = (double)c[PA_TW_SHORT + b] * scale, from_b = 0;
      if (n_short == 0) continue;
      for (int k = b; k <= PA_REUSE_BINS; k++) from_b += est[k];
      if (from_b <= 0) {
        h->cold += n_short;
        continue;
      }
      for (int k = b; k < PA_REUSE_BINS; k++) h->bins[k] += n_short * est[k] / from_b;
      h->cold += n_short * est[PA_REUSE_BINS] / from_b;
    }
    double beyond = (double)c[PA_REUSE_BINS] * scale, shards_beyond = est[PA_REUSE_BINS];
    for (int k = near_bins; k < PA_REUSE_BINS; k++) shards_beyond += est[k];
    if (shards_beyond > 0) {
      for (int k = near_bins; k < PA_REUSE_BINS; k++) h->bins[k] += beyond * est[k] / shards_beyond;
      h->cold += beyond * est[PA_REUSE_BINS] / shards_beyond;
    } else {
      h->cold += beyond; /* no sampled line reached beyond the window: call them first touches */
    }
    /* First touches from the sample (the distinct sampled lines / R, a local line R of one:
     * SHARDS' own estimate), the reuses rescaled to the rest. The bursts' share of accesses
     * beyond the window, spread in SHARDS' proportions, had counted the first touches of a
     * phase as often as bursts fell on it: a convolution that streams its input once between
     * tight loops got 4-40% of them (conv_r50_4 default at 1%: LL 1M -90.6%, -0.1% now;
     * docs/validation.md, Session 26). Not below SHARDS_MIN_COLD sampled lines (+-18% at 32),
     * where a small footprint's few sampled lines say less than bursts that saw most of it
     * (matmul 16^3: 49 first touches, none of them sampled). */
    double cold_s = est[PA_REUSE_BINS] / rate, rest = total - h->cold;
    if (est[PA_REUSE_BINS] >= SHARDS_MIN_COLD && cold_s < total && rest > 0) {
      for (int k = 0; k < PA_REUSE_BINS; k++) h->bins[k] *= (total - cold_s) / rest;
      h->cold = cold_s;
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

void pa_tracker_llc_hist(const uint64_t *c, int n, const int *sets, pa_reuse_hist *h) {
  h->n_llc = n;
  for (int i = 0; i < n; i++) {
    h->llc[i].sets = sets[i];
    for (int k = 0; k < PA_SET_BINS; k++) h->llc[i].bins[k] = (double)c[PA_TW_LLC + i * PA_SET_BINS + k];
  }
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
      for (int w = PA_TW_QUARTERS; w < PA_TW_LOCAL; w++) a[w] += (x[w] + y[w]) * sc;
      continue;
    }
    for (int w = 0; w < PA_REUSE_BINS; w++) a[w] += y[w] * (total - cold) / reuses;
    a[PA_REUSE_BINS] += cold;
    /* quarters and per-set distances are reuses too, shared out as the later windows' */
    for (int w = PA_TW_QUARTERS; w < PA_TW_LOCAL; w++) a[w] += y[w] * (total - cold) / reuses;
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
