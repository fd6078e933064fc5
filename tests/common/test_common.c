/* common/: the thread pool visits every index exactly once for any size and thread count;
 * atomic writes leave the old file intact on failure; the arena hands out zeroed memory; the
 * CPU clock does not count time the thread was not running. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "test.h"

typedef struct {
  int *hits;
} visit_ctx;

static void visit(void *ctx, int64_t b, int64_t e) {
  visit_ctx *v = ctx;
  for (int64_t i = b; i < e; i++) __atomic_fetch_add(&v->hits[i], 1, __ATOMIC_RELAXED);
}

int main(void) {
  static const int64_t sizes[] = {0, 1, 2, 3, 7, 64, 1000, 12345};
  for (int threads = 1; threads <= 5; threads++) {
    pt_pool *p = pt_pool_new(threads);
    CHECK(pt_pool_threads(p) == threads);
    for (size_t k = 0; k < PT_ARRAY_LEN(sizes); k++)
      for (int rep = 0; rep < 20; rep++) {
        int64_t n = sizes[k];
        visit_ctx v = {calloc((size_t)n + 1, sizeof(int))};
        pt_parallel_for(p, visit, &v, n);
        for (int64_t i = 0; i < n; i++) CHECK_MSG(v.hits[i] == 1, "threads %d n %lld index %lld hit %d times", threads, (long long)n, (long long)i, v.hits[i]);
        free(v.hits);
      }
    pt_pool_free(p);
  }
  pt_arena *a = pt_arena_new();
  for (int i = 0; i < 1000; i++) {
    unsigned char *m = pt_alloc(a, (size_t)(i * 37 % 5000) + 1);
    CHECK(((uintptr_t)m & 15) == 0 && m[0] == 0);
  }
  char *big = pt_alloc(a, 1 << 20);
  CHECK(big[(1 << 20) - 1] == 0);
  CHECK(strcmp(pt_sprintf(a, "%d-%s", 7, "x"), "7-x") == 0);
  pt_arena_free(a);

  char dir[] = "/tmp/portent_common_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[256];
  snprintf(path, sizeof path, "%s/f.json", dir);
  pt_diag d = {0};
  CHECK(pt_write_file_atomic(path, "first", 5, &d) == 0);
  chmod(dir, 0500); /* no new files: the atomic write must fail and leave the old content */
  if (geteuid() != 0) {
    CHECK(pt_write_file_atomic(path, "second", 6, &d) != 0 && strstr(d.msg, path));
    size_t len;
    char *back = pt_read_file(path, &len, &d);
    CHECK(back && strcmp(back, "first") == 0);
    free(back);
  }
  chmod(dir, 0700);
  pt_diag_clear(&d);
  CHECK(pt_write_file_atomic("/nonexistent/dir/x", "x", 1, &d) != 0 && strstr(d.msg, "/nonexistent/dir/x"));
  unlink(path);
  rmdir(dir);

  pt_rng r1 = {5}, r2 = {5};
  for (int i = 0; i < 100; i++) CHECK(pt_rng_next(&r1) == pt_rng_next(&r2));
  /* splitmix64's published first output for seed 0; and draw i computed from its index (the
   * analyzer's bulk fills) is the i-th of the sequence */
  pt_rng r0 = {0};
  CHECK(pt_rng_next(&r0) == 0xe220a8397b1dcdafull);
  uint64_t s0 = r1.s;
  for (uint64_t i = 0; i < 100; i++) {
    uint64_t draw = pt_rng_mix(s0 + (i + 1) * PT_RNG_STEP);
    if (i % 2) CHECK(pt_rng_next(&r1) == draw);
    else CHECK(pt_rng_uniform(&r1) == pt_rng_unit(draw));
  }
  for (int i = 0; i < 1000; i++) {
    double u = pt_rng_uniform(&r1);
    CHECK(u >= 0 && u < 1);
  }

  /* The CPU clock counts the thread's running time only: a 50 ms sleep (the time slices
   * another process would take) adds nearly nothing, spinning adds to both clocks. */
  double c0 = pt_cpu_now(), w0 = pt_now();
  struct timespec nap = {0, 50 * 1000 * 1000};
  nanosleep(&nap, NULL);
  double slept_cpu = pt_cpu_now() - c0;
  CHECK(pt_now() - w0 >= 0.05);
  CHECK_MSG(slept_cpu >= 0 && slept_cpu < 0.025, "a 50 ms sleep counted %.4f s of CPU time", slept_cpu);
  double c1 = pt_cpu_now();
  volatile uint64_t spin = 0;
  while (pt_cpu_now() - c1 < 0.01) spin++;
  CHECK(spin > 0 && pt_cpu_now() > c1);

  /* gcd: the sets a stride cycles through (32 lines in 64 sets: 2 of them) */
  CHECK(pt_gcd64(32, 64) == 32 && pt_gcd64(33, 64) == 1 && pt_gcd64(0, 64) == 64 && pt_gcd64(12, 0) == 12);
  { /* a shuffle is a permutation, and a seed repeats it */
    int v[10], w[10], seen[10] = {0};
    for (int i = 0; i < 10; i++) v[i] = w[i] = i;
    pt_rng r1 = {7}, r2 = {7};
    pt_rng_shuffle(&r1, v, 10), pt_rng_shuffle(&r2, w, 10);
    int moved = 0;
    for (int i = 0; i < 10; i++) seen[v[i]]++, moved += v[i] != i;
    for (int i = 0; i < 10; i++) CHECK(seen[i] == 1 && v[i] == w[i]);
    CHECK(moved > 0);
  }
  TEST_DONE();
}
