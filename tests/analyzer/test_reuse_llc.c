/* Per-set reuse for a last-level cache's set counts (pa_tracker_set_llc, `analyze --llc-sets`)
 * against brute force: LRU caches of 512, 1024 and 2048 sets simulated line by line, misses of
 * 1..32 ways equal to the llc bins' (pa_reuse_misses_llc) miss for miss at rate 1, on random,
 * strided and tiled-matmul traces whose working sets reach past the 64-set L1's; mm512's case
 * among them: a 1 MiB operand streamed against a 1 MiB 16-way cache. The rest of the histogram
 * (log2, quarter and 64-set bins) is the same as without the option. Links the library's
 * internal tracker. */
#include <stdlib.h>

#include "analyzer/internal.h"
#include "sa_cache.h"
#include "test.h"

enum { N_WAYS = 8, N_COUNTS = 3 };
static const int ways[N_WAYS] = {1, 2, 4, 8, 12, 16, 24, 32};
static const int set_counts[N_COUNTS] = {1024, 512, 2048}; /* not sorted: the order is the caller's */

typedef struct {
  sa_cache sa[N_COUNTS][N_WAYS];
  uint64_t miss[N_COUNTS][N_WAYS];
  pa_tracker *llc, *plain; /* with the set counts, and without (as every default profile) */
  int64_t accesses;
} bench;

static void bench_init(bench *b) {
  memset(b, 0, sizeof *b);
  for (int c = 0; c < N_COUNTS; c++)
    for (int i = 0; i < N_WAYS; i++) b->sa[c][i] = sa_new(set_counts[c], ways[i]);
  b->llc = pa_tracker_new(1, 1.0, 0);
  b->plain = pa_tracker_new(1, 1.0, 0);
  CHECK(pa_tracker_set_llc(b->llc, N_COUNTS, set_counts));
}

/* Every other access through the runtime's path (lines first..last), the rest one by one. */
static void feed(bench *b, uint64_t line) {
  for (int c = 0; c < N_COUNTS; c++)
    for (int i = 0; i < N_WAYS; i++) b->miss[c][i] += sa_access(&b->sa[c][i], line);
  if (b->accesses & 1) pa_tracker_access_lines(b->llc, line, line, 0);
  else pa_tracker_access(b->llc, line, 0);
  pa_tracker_access(b->plain, line, 0);
  b->accesses++;
}

static void bench_check(bench *b, const char *name) {
  pa_reuse_hist h, p;
  const uint64_t *c = pa_tracker_counts(b->llc, 0);
  pa_tracker_hist(c, 1, 0, &h);
  pa_tracker_llc_hist(c, N_COUNTS, set_counts, &h);
  pa_tracker_hist(pa_tracker_counts(b->plain, 0), 1, 0, &p);
  CHECK_MSG(h.n_llc == N_COUNTS && p.n_llc == 0, "%s: %d llc counts", name, h.n_llc);
  /* the rest of the histogram is the same with or without them */
  CHECK_MSG(memcmp(h.bins, p.bins, sizeof h.bins) == 0 && memcmp(h.sets, p.sets, sizeof h.sets) == 0 && h.cold == p.cold,
            "%s: the llc stacks changed the other bins", name);
  for (int k = 0; k < N_COUNTS; k++) {
    double sum = 0;
    for (int i = 0; i < PA_SET_BINS; i++) sum += h.llc[k].bins[i];
    CHECK_MSG(h.llc[k].sets == set_counts[k] && sum == h.accesses - h.cold, "%s: %d sets: bins %g, reuses %g", name,
              h.llc[k].sets, sum, h.accesses - h.cold);
    for (int i = 0; i < N_WAYS; i++) {
      double m = pa_reuse_misses_llc(&h, set_counts[k], ways[i]);
      CHECK_MSG(m == (double)b->miss[k][i], "%s: %d sets %d-way: %g predicted, %llu simulated", name, set_counts[k],
                ways[i], m, (unsigned long long)b->miss[k][i]);
    }
  }
  CHECK(pa_reuse_misses_llc(&h, 4096, 8) < 0 && pa_reuse_misses_llc(&h, 1024, 33) < 0 && pa_reuse_misses_llc(&p, 1024, 8) < 0);
  fprintf(stderr, "%s: %lld accesses; 1024 sets: 8-way %llu, 16-way %llu misses; fully associative 1 MiB %.0f\n", name,
          (long long)b->accesses, (unsigned long long)b->miss[0][3], (unsigned long long)b->miss[0][5],
          pa_reuse_misses(&h, 16384));
  for (int c = 0; c < N_COUNTS; c++)
    for (int i = 0; i < N_WAYS; i++) sa_free(&b->sa[c][i]);
  pa_tracker_free(b->llc);
  pa_tracker_free(b->plain);
}

/* Lines from three working sets: 3000 (fits every cache here), 30000 and 400000 lines. */
static void test_random(void) {
  bench b;
  bench_init(&b);
  pt_rng r = {57};
  for (int i = 0; i < 1500000; i++) {
    double u = pt_rng_uniform(&r);
    feed(&b, u < 0.4 ? (uint64_t)pt_rng_range(&r, 3000) : u < 0.8 ? (uint64_t)pt_rng_range(&r, 30000) : (uint64_t)pt_rng_range(&r, 400000));
  }
  bench_check(&b, "random");
}

/* Power-of-two strides: a column of rows 8 KiB apart (128 lines: 8 of 1024 sets, 4 of 512),
 * a 64 KiB stride (one set of any count here), and a row walk. */
static void test_strided(void) {
  bench b;
  bench_init(&b);
  for (int rep = 0; rep < 60; rep++)
    for (int j = 0; j < 64; j++) {
      for (int i = 0; i < 300; i++) feed(&b, (uint64_t)(i * 128 + j / 8));            /* column of a 300 x 2048 float array */
      for (int i = 0; i < 40; i++) feed(&b, (uint64_t)(1 << 22) + (uint64_t)(i * 1024)); /* one set */
      for (int i = 0; i < 64; i++) feed(&b, (uint64_t)(2 << 22) + (uint64_t)(j * 64 + i)); /* a row */
    }
  bench_check(&b, "strided");
}

/* mm512's case at line granularity, 16 floats a line: C[i][j] += A[i][k] * B[k][j] over
 * 16 x 512 x 512 with j innermost, B (512 x 512 floats) exactly 1 MiB = 16384 lines, so each
 * row of C streams all of B once and B's reuse distance sits at a 1 MiB cache's size (plus A's
 * and C's few lines); then the same nest in 64 x 64 tiles of k and j. */
static void test_matmul(void) {
  bench b;
  bench_init(&b);
  const int64_t M = 16, N = 512, K = 512, T = 64;
  const uint64_t A0 = 0, B0 = 1 << 20, C0 = 2 << 20;
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++) {
      feed(&b, A0 + (uint64_t)((i * K + k) / 16));
      for (int64_t j = 0; j < N; j += 16) {
        feed(&b, B0 + (uint64_t)((k * N + j) / 16));
        feed(&b, C0 + (uint64_t)((i * N + j) / 16));
      }
    }
  for (int64_t k0 = 0; k0 < K; k0 += T)
    for (int64_t j0 = 0; j0 < N; j0 += T)
      for (int64_t i = 0; i < M; i++)
        for (int64_t k = k0; k < k0 + T; k++) {
          feed(&b, A0 + (uint64_t)((i * K + k) / 16));
          for (int64_t j = j0; j < j0 + T; j += 16) {
            feed(&b, B0 + (uint64_t)((k * N + j) / 16));
            feed(&b, C0 + (uint64_t)((i * N + j) / 16));
          }
        }
  bench_check(&b, "matmul, B 1 MiB");
}

int main(void) {
  /* what the option takes: powers of two in 128..32768, distinct, at most 4; rate 1 only */
  CHECK(!pa_llc_sets_invalid(3, set_counts) && !pa_llc_sets_invalid(1, (int[]){128}) &&
        !pa_llc_sets_invalid(1, (int[]){32768}));
  CHECK(pa_llc_sets_invalid(1, (int[]){1000}) && pa_llc_sets_invalid(1, (int[]){64}) &&
        pa_llc_sets_invalid(1, (int[]){65536}) && pa_llc_sets_invalid(2, (int[]){1024, 1024}) &&
        pa_llc_sets_invalid(5, (int[]){128, 256, 512, 1024, 2048}));
  pa_tracker *sampled = pa_tracker_new(1, 0.01, 0);
  CHECK(!pa_tracker_set_llc(sampled, 1, (int[]){1024}));
  pa_tracker_free(sampled);
  test_random();
  test_strided();
  test_matmul();
  TEST_DONE();
}
