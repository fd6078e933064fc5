/* Per-set reuse and quarter bins against brute force: a 64-set LRU cache simulated line by
 * line (misses of 1..32 ways must equal the per-set histogram's, exactly, at rate 1), a fully
 * associative LRU cache at sizes inside a log2 bin (768 lines: the quarter bins make them
 * exact), on random, strided and tiled-matmul traces; the 1% sampled per-set miss ratios
 * against the full run's. Links the library's internal tracker. */
#include <math.h>
#include <stdlib.h>

#include "analyzer/internal.h"
#include "sa_cache.h"
#include "test.h"

enum { N_WAYS = 8 };
static const int ways[N_WAYS] = {1, 2, 4, 8, 12, 16, 24, 32};
enum { N_SIZES = 6 };
static const int fa_lines[N_SIZES] = {48, 80, 112, 640, 768, 896}; /* 1.5 x 32, 1.25 x 64, 1.75 x 64, ... */

typedef struct {
  sa_cache sa[N_WAYS], fa[N_SIZES]; /* fully associative: one set */
  uint64_t sa_miss[N_WAYS], fa_miss[N_SIZES];
  int n_fa;     /* fully associative sizes simulated (their brute force is slow) */
  pa_tracker *full, *sampled;
  int64_t accesses;
} bench;

static void bench_init(bench *b, bool fully_associative) {
  memset(b, 0, sizeof *b);
  b->n_fa = fully_associative ? N_SIZES : 0;
  for (int i = 0; i < N_WAYS; i++) b->sa[i] = sa_new(PA_SETS, ways[i]);
  for (int i = 0; i < b->n_fa; i++) b->fa[i] = sa_new(1, fa_lines[i]);
  b->full = pa_tracker_new(1, 1.0, 0);
  b->sampled = pa_tracker_new(1, 0.01, 0);
}

static void feed(bench *b, uint64_t line) {
  for (int i = 0; i < N_WAYS; i++) b->sa_miss[i] += sa_access(&b->sa[i], line);
  for (int i = 0; i < b->n_fa; i++) b->fa_miss[i] += sa_access(&b->fa[i], line);
  pa_tracker_access(b->full, line, 0);
  pa_tracker_access(b->sampled, line, 0);
  b->accesses++;
}

/* Exact at rate 1; the sampled per-set miss ratios within `bound` of the full run's (not
 * checked when bound < 0: a trace too short for bursts after the first). */
static void bench_check(bench *b, const char *name, double bound) {
  pa_reuse_hist h, s;
  pa_tracker_hist(pa_tracker_counts(b->full, 0), 1, 0, &h);
  pa_tracker_hist(pa_tracker_counts(b->sampled, 0), 0.01, pa_tracker_window(b->sampled), &s);
  CHECK(h.has_sets && h.has_quarters && s.has_sets);
  double sum = 0;
  for (int k = 0; k < PA_SET_BINS; k++) sum += h.sets[k];
  CHECK_MSG(sum == h.accesses - h.cold, "%s: per-set bins %g, reuses %g", name, sum, h.accesses - h.cold);
  for (int k = 0; k < PA_REUSE_BINS; k++) {
    double q = h.quarters[k][0] + h.quarters[k][1] + h.quarters[k][2] + h.quarters[k][3];
    CHECK_MSG(fabs(q - h.bins[k]) <= 1e-9 * h.bins[k], "%s: bin %d quarters %g vs %g", name, k, q, h.bins[k]);
  }
  double worst = 0;
  for (int i = 0; i < N_WAYS; i++) {
    double m = pa_reuse_misses_sets(&h, ways[i]);
    CHECK_MSG(m == (double)b->sa_miss[i], "%s: %d-way: %g predicted, %llu simulated", name, ways[i], m,
              (unsigned long long)b->sa_miss[i]);
    double e = fabs(pa_reuse_misses_sets(&s, ways[i]) / s.accesses - m / h.accesses);
    if (ways[i] >= 4 && ways[i] <= 16 && e > worst) worst = e;
  }
  for (int i = 0; i < b->n_fa; i++) {
    double m = pa_reuse_misses_at(&h, fa_lines[i]);
    CHECK_MSG(fabs(m - (double)b->fa_miss[i]) < 0.5, "%s: %d lines fully associative: %g predicted, %llu simulated",
              name, fa_lines[i], m, (unsigned long long)b->fa_miss[i]);
  }
  fprintf(stderr, "%s: %lld accesses, 8-way misses %llu; 1%% sampled per-set miss ratio (4..16 ways) within %.4f\n",
          name, (long long)b->accesses, (unsigned long long)b->sa_miss[3], worst);
  CHECK_MSG(bound < 0 || worst <= bound, "%s: sampled per-set miss ratio off by %.4f", name, worst);
  for (int i = 0; i < N_WAYS; i++) sa_free(&b->sa[i]);
  for (int i = 0; i < b->n_fa; i++) sa_free(&b->fa[i]);
  pa_tracker_free(b->full);
  pa_tracker_free(b->sampled);
}

/* Sampled runs measure short distances in bursts 64 x 4W accesses apart (reuse.c): the
 * traces below run 2-3M accesses, so a few bursts after the first (which sees every line new). */
static void test_random(bool fully_associative) {
  bench b;
  bench_init(&b, fully_associative);
  pt_rng r = {31};
  for (int i = 0; i < (fully_associative ? 300000 : 3000000); i++) {
    double u = pt_rng_uniform(&r);
    feed(&b, u < 0.5 ? (uint64_t)pt_rng_range(&r, 600) : u < 0.8 ? (uint64_t)pt_rng_range(&r, 3000) : (uint64_t)pt_rng_range(&r, 40000));
  }
  bench_check(&b, fully_associative ? "random, 300k" : "random", fully_associative ? -1 : 0.05);
}

/* Power-of-two strides: a column walk of rows 2048 bytes apart (32 lines: 2 of the 64 sets)
 * beside a row walk, and a 4096-byte stride (one set). */
static void test_strided(void) {
  bench b;
  bench_init(&b, false);
  for (int rep = 0; rep < 300; rep++)
    for (int j = 0; j < 64; j++) {
      for (int i = 0; i < 96; i++) feed(&b, (uint64_t)(i * 32 + j / 16));        /* column of a 96 x 512 float array */
      for (int i = 0; i < 24; i++) feed(&b, (uint64_t)(1 << 20) + (uint64_t)(i * 64)); /* one set */
      for (int i = 0; i < 8; i++) feed(&b, (uint64_t)(2 << 20) + (uint64_t)(j * 8 + i)); /* a row */
    }
  bench_check(&b, "strided", 0.05);
}

/* mm's tiled nest at line granularity, 16 floats a line: C[i][j] += A[i][k] * B[k][j] with
 * tiles of 32 x 64 x 64 over 64 x 128 x 256 (rows of B and C 1024 bytes apart: a column
 * falls in 4 of the 64 sets). */
static void test_tiled_matmul(void) {
  bench b;
  bench_init(&b, false);
  for (int rep = 0; rep < 8; rep++) {
  const int64_t M = 64, N = 256, K = 128, TI = 32, TJ = 64, TK = 64;
  const uint64_t A0 = 0, B0 = 1 << 20, C0 = 2 << 20;
  for (int64_t i0 = 0; i0 < M; i0 += TI)
    for (int64_t j0 = 0; j0 < N; j0 += TJ)
      for (int64_t k0 = 0; k0 < K; k0 += TK)
        for (int64_t i = i0; i < i0 + TI; i++)
          for (int64_t k = k0; k < k0 + TK; k++) {
            feed(&b, A0 + (uint64_t)((i * K + k) / 16));
            for (int64_t j = j0; j < j0 + TJ; j += 16) {
              feed(&b, B0 + (uint64_t)((k * N + j) / 16));
              feed(&b, C0 + (uint64_t)((i * N + j) / 16));
            }
          }
  }
  bench_check(&b, "tiled matmul", 0.05);
}

int main(void) {
  CHECK(pa_set_bin(0) == 0 && pa_set_bin(31) == 31 && pa_set_bin(32) == 32 && pa_set_bin(-1) == 32 &&
        pa_set_bin((int64_t)1 << 40) == PA_SET_BINS - 1);
  CHECK(pa_reuse_quarter(1) == 0 && pa_reuse_quarter(3) == 2 && pa_reuse_quarter(512) == 0 &&
        pa_reuse_quarter(767) == 1 && pa_reuse_quarter(768) == 2 && pa_reuse_quarter(1023) == 3);
  test_random(true);
  test_random(false);
  test_strided();
  test_tiled_matmul();
  TEST_DONE();
}
