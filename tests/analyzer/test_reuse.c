/* The reuse tracker against a brute-force LRU stack on random traces (exact distances, and
 * misses of a fully associative LRU cache of S lines), its exact window's bursts in sampled mode, and
 * sampling at 1% against the full miss-ratio curve (within 5% absolute) on a random trace, a
 * gemm loop nest and a cyclic sweep. Links the library's internal tracker. */
#include <math.h>
#include <stdlib.h>

#include "analyzer/internal.h"
#include "test.h"

/* The textbook LRU stack: move-to-front list; a line's depth is its reuse distance. */
typedef struct {
  uint64_t *stack;
  int n;
} lru_stack;

static int64_t lru_access(lru_stack *s, uint64_t line) {
  for (int i = 0; i < s->n; i++)
    if (s->stack[i] == line) {
      memmove(s->stack + 1, s->stack, sizeof *s->stack * (size_t)i);
      s->stack[0] = line;
      return i;
    }
  memmove(s->stack + 1, s->stack, sizeof *s->stack * (size_t)s->n);
  s->stack[0] = line;
  s->n++;
  return -1;
}

/* A trace with structure: sequential sweeps, a hot set and uniform noise, over `lines` lines. */
static uint64_t next_line(pt_rng *r, int64_t lines, int64_t *cursor) {
  double u = pt_rng_uniform(r);
  if (u < 0.4) return (uint64_t)((*cursor)++ % lines);
  if (u < 0.7) return (uint64_t)pt_rng_range(r, lines / 16 + 1);
  return (uint64_t)pt_rng_range(r, lines);
}

static void test_exact(void) {
  for (int trial = 0; trial < 4; trial++) {
    pt_rng r = {1234 + (uint64_t)trial};
    int64_t lines = trial == 0 ? 7 : trial == 1 ? 300 : 2000;
    int n = trial == 3 ? 200000 : 50000; /* trial 3 forces several renumberings of the tree */
    lru_stack s = {calloc((size_t)lines + 1, sizeof(uint64_t)), 0};
    pa_tracker *t = pa_tracker_new(2, 1.0, 0);
    int64_t cursor = 0, mismatches = 0;
    uint64_t cold = 0, hist[PA_REUSE_BINS] = {0};
    int64_t sizes[] = {1, 2, 4, 8, 16, 64, 256, 1024};
    uint64_t miss[8] = {0};
    for (int i = 0; i < n; i++) {
      uint64_t line = next_line(&r, lines, &cursor) * 977 + 3; /* sparse line numbers */
      int64_t want = lru_access(&s, line), got = pa_tracker_access(t, line, i & 1);
      mismatches += want != got;
      if (want < 0) cold++;
      else hist[pa_reuse_bin(want)]++;
      for (int k = 0; k < 8; k++) miss[k] += want < 0 || want >= sizes[k];
    }
    CHECK_MSG(mismatches == 0, "trial %d: %lld distances differ", trial, (long long)mismatches);
    /* Histograms from the two groups add up to the brute-force one. */
    pa_reuse_hist h = {0};
    const uint64_t *c0 = pa_tracker_counts(t, 0), *c1 = pa_tracker_counts(t, 1);
    for (int k = 0; k < PA_REUSE_BINS; k++) {
      h.bins[k] = (double)(c0[k] + c1[k]);
      CHECK(c0[k] + c1[k] == hist[k]);
    }
    h.cold = (double)(c0[PA_REUSE_BINS] + c1[PA_REUSE_BINS]);
    CHECK(h.cold == (double)cold);
    for (int k = 0; k < 8; k++)
      CHECK_MSG(pa_reuse_misses(&h, sizes[k]) == (double)miss[k], "trial %d S=%lld: %g vs %llu", trial,
                (long long)sizes[k], pa_reuse_misses(&h, sizes[k]), (unsigned long long)miss[k]);
    pa_tracker_free(t);
    free(s.stack);
  }
}

/* In sampled mode, during a burst a distance below the window is answered by the exact
 * window (exactly); beyond it the answer is "not sampled" (-2) or an estimate of at least the
 * window. Bursts recur, and outside them only sampled lines are answered (estimates). */
static void test_window(void) {
  pa_tracker *t = pa_tracker_new(1, 0.01, 0);
  int64_t w = pa_tracker_window(t);
  CHECK(w >= 1600 && w <= 4096);
  CHECK(pa_tracker_bursting(t)); /* the first burst starts at the first access */
  lru_stack s = {calloc(20001, sizeof(uint64_t)), 0};
  pt_rng r = {77};
  int64_t cursor = 0, bad = 0, exact = 0, bursts = 0, answered_outside = 0, outside = 0;
  bool was = true;
  for (int i = 0; i < 1500000; i++) { /* ~3 periods between bursts */
    uint64_t line = next_line(&r, 4000, &cursor);
    bool bursting = pa_tracker_bursting(t);
    bursts += bursting && !was;
    was = bursting;
    int64_t want = lru_access(&s, line), got = pa_tracker_access(t, line, 0);
    if (want < 0) bad += got >= 0;                            /* a first touch is never a reuse */
    else if (!bursting) bad += got < -2;                      /* -2, or a SHARDS estimate */
    else if (got >= 0 && got < w) bad += got != want, exact++; /* the window: exact */
    else bad += !(got == -2 || got >= w);
    if (!bursting) outside++, answered_outside += got != -2;
  }
  CHECK_MSG(bad == 0, "%lld window answers wrong", (long long)bad);
  CHECK_MSG(exact > 10000 && bursts >= 2, "%lld exact answers in %lld bursts", (long long)exact, (long long)bursts);
  /* outside bursts only the ~1% sampled lines are answered */
  CHECK_MSG(answered_outside < outside / 20, "%lld of %lld answered", (long long)answered_outside, (long long)outside);
  free(s.stack);
  pa_tracker_free(t);
}

static void hist_of(const pa_tracker *t, double rate, pa_reuse_hist *h) {
  pa_tracker_hist(pa_tracker_counts(t, 0), rate, pa_tracker_window(t), h);
}

/* Largest |miss ratio (full) - miss ratio (sampled)| over S = 1, 2, 4, ..., 2^20 lines. */
static double mrc_error(const pa_tracker *full, const pa_tracker *sampled, double rate) {
  pa_reuse_hist hf, hs;
  hist_of(full, 1, &hf);
  hist_of(sampled, rate, &hs);
  double worst = 0;
  for (int64_t size = 1; size <= 1 << 20; size *= 2) {
    double mf = pa_reuse_misses(&hf, size) / hf.accesses, ms = pa_reuse_misses(&hs, size) / hs.accesses;
    if (fabs(mf - ms) > worst) worst = fabs(mf - ms);
  }
  return worst;
}

static void feed(pa_tracker *full, pa_tracker *sampled, uint64_t line) {
  pa_tracker_access(full, line, 0);
  pa_tracker_access(sampled, line, 0);
}

/* gemm's (i, j, k) nest at line granularity: A[i][k], B[k][j] per k, C[i][j] per (i, j). */
/* The sampled tracker's miss-ratio curve stays within 5% absolute of the full one; frees both. */
static void check_mrc(const char *trace, pa_tracker *full, pa_tracker *sampled) {
  double e = mrc_error(full, sampled, 0.01);
  fprintf(stderr, "sampling 1%%, %s: max |miss ratio error| over S = 1..2^20 lines: %.4f\n", trace, e);
  CHECK_MSG(e <= 0.05, "%s: error %.4f", trace, e);
  pa_tracker_free(full);
  pa_tracker_free(sampled);
}

static void test_gemm_trace(void) {
  const int64_t n = 128, per_line = 16;
  pa_tracker *full = pa_tracker_new(1, 1.0, 0), *sampled = pa_tracker_new(1, 0.01, 0);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      for (int64_t k = 0; k < n; k++) {
        feed(full, sampled, (uint64_t)((i * n + k) / per_line));
        feed(full, sampled, (uint64_t)(n * n + (k * n + j) / per_line));
      }
      feed(full, sampled, (uint64_t)(2 * n * n + (i * n + j) / per_line));
    }
  check_mrc("gemm 128 trace", full, sampled);
}

/* Cyclic sweeps over 6000 lines (every reuse at distance 5999: a cliff beyond the window)
 * mixed with a hot set of 64 lines. */
static void test_cyclic_trace(void) {
  pa_tracker *full = pa_tracker_new(1, 1.0, 0), *sampled = pa_tracker_new(1, 0.01, 0);
  pt_rng r = {5};
  for (int i = 0; i < 1500000; i++)
    feed(full, sampled, pt_rng_uniform(&r) < 0.5 ? (uint64_t)(i / 2 % 6000) : (uint64_t)(100000 + pt_rng_range(&r, 64)));
  check_mrc("cyclic trace", full, sampled);
}

static void test_random_trace(void) {
  for (int plain = 0; plain < 2; plain++) { /* with the exact window, and plain SHARDS */
    pa_tracker *full = pa_tracker_new(1, 1.0, 0), *sampled = pa_tracker_new(1, 0.01, plain ? -1 : 0);
    CHECK(pa_tracker_window(sampled) == (plain ? 0 : 2048));
    pt_rng r = {99};
    int64_t cursor = 0;
    for (int i = 0; i < 2000000; i++) feed(full, sampled, next_line(&r, 200000, &cursor));
    check_mrc(plain ? "random trace, plain SHARDS" : "random trace", full, sampled);
  }
}

/* Lines of weight 1 beside a sample (pa_tracker_set_locals, the locals region): every access to
 * them is answered, and a distance is the weighted count of the distinct in-sample lines since
 * the line's last access, 1/R for each hash-sampled line and 1 for each local one, against the
 * textbook stack of in-sample lines (plain SHARDS, no window, so the tracker answers every
 * in-sample access with its estimate). Long enough to renumber the tree several times. */
static void test_weighted_locals(void) {
  const double rate = 0.05;
  const uint64_t first = 5000, n_local = 200;
  uint64_t map[(200 + 63) / 64] = {0};
  for (uint64_t i = 0; i < n_local; i++)
    if (i % 7 != 3) map[i / 64] |= 1ULL << (i % 64); /* a few of the region's lines are not tracked */
  pa_tracker *t = pa_tracker_new(1, rate, -1);
  CHECK(pa_tracker_set_locals(t, first, map, (int64_t)n_local));
  uint64_t threshold = (uint64_t)(rate * (1ull << PA_SHARDS_BITS) + 0.5);
  pt_rng r = {77};
  int64_t lines = 40000, cursor = 0, mismatches = 0, local_accesses = 0, answered = 0;
  lru_stack s = {calloc((size_t)(lines + n_local) + 1, sizeof(uint64_t)), 0};
  for (int i = 0; i < 400000; i++) {
    uint64_t line = pt_rng_uniform(&r) < 0.5 ? first + (uint64_t)pt_rng_range(&r, (int64_t)n_local)
                                              : 100000 + next_line(&r, lines, &cursor);
    bool local = line >= first && line < first + n_local && (map[(line - first) / 64] >> ((line - first) % 64) & 1);
    CHECK(pa_tracker_is_local(t, line) == local);
    int64_t got = pa_tracker_access(t, line, 0);
    if (!local && pa_shards_hash(line) >= threshold) {
      mismatches += got != -2;
      continue;
    }
    local_accesses += local, answered++;
    int64_t d = lru_access(&s, line), want = -1;
    if (d >= 0) {
      double sampled = 0, ones = 0;
      for (int64_t k = 0; k < d; k++) {
        uint64_t o = s.stack[k + 1]; /* the lines above it, now one deeper */
        bool l = o >= first && o < first + n_local && (map[(o - first) / 64] >> ((o - first) % 64) & 1);
        if (l) ones++;
        else sampled++;
      }
      want = (int64_t)(sampled / rate + ones + 0.5);
    }
    mismatches += got != want;
  }
  CHECK_MSG(mismatches == 0, "%lld of %lld weighted distances differ", (long long)mismatches, (long long)answered);
  /* the local accesses are counted apart, at weight 1, and the histogram adds them as such */
  const uint64_t *c = pa_tracker_counts(t, 0);
  uint64_t counted = c[PA_TW_LOCAL_OUTSIDE];
  for (int k = 0; k <= PA_REUSE_BINS; k++) CHECK(c[PA_TW_LOCAL + k] <= counted);
  CHECK_MSG((int64_t)counted == local_accesses, "local accesses %llu, want %lld", (unsigned long long)counted,
            (long long)local_accesses);
  pa_reuse_hist h;
  pa_tracker_hist(c, rate, -1, &h);
  double want_accesses = (double)c[PA_TW_OUTSIDE] / rate + (double)local_accesses;
  CHECK_MSG(fabs(h.accesses - want_accesses) < 1e-6 * want_accesses, "histogram accesses %g, want %g", h.accesses,
            want_accesses);
  pa_tracker_free(t);
  free(s.stack);
}

int main(void) {
  test_exact();
  test_window();
  test_weighted_locals();
  test_random_trace();
  test_gemm_trace();
  test_cyclic_trace();
  TEST_DONE();
}
