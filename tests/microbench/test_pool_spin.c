/* common/pool.c as the microbenchmarks time it: workers spin briefly before sleeping, and the
 * caller spins before waiting for the join. Every index must be visited once whichever path
 * each side takes: back-to-back calls (found while spinning), calls after a pause longer than
 * the spin (workers asleep), chunks of uneven length (the caller waits), and no spin at all. */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "common/common.h"
#include "test.h"

typedef struct {
  atomic_int *hits;
  int64_t slow; /* indices below this sleep a little: the caller's join outlasts its spin */
} visit_ctx;

static void visit(void *ctx, int64_t b, int64_t e) {
  visit_ctx *v = ctx;
  for (int64_t i = b; i < e; i++) {
    atomic_fetch_add_explicit(&v->hits[i], 1, memory_order_relaxed);
    if (i < v->slow) {
      struct timespec ts = {0, 300 * 1000};
      nanosleep(&ts, NULL);
    }
  }
}

static void nap_us(long us) {
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

int main(void) {
  bool quick = getenv("PORTENT_TEST_QUICK") != NULL;
  static const char *spins[] = {"0", "50", "2000"};
  for (size_t s = 0; s < PT_ARRAY_LEN(spins); s++) {
    setenv("PT_POOL_SPIN_US", spins[s], 1);
    for (int threads = 2; threads <= 4; threads++) {
      pt_pool *p = pt_pool_new(threads);
      int calls = quick ? 60 : 300;
      for (int c = 0; c < calls; c++) {
        int64_t n = 1 + (c * 7919) % 97;
        visit_ctx v = {calloc((size_t)n, sizeof(atomic_int)), c % 5 == 0 ? n / threads : 0};
        pt_parallel_for(p, visit, &v, n);
        for (int64_t i = 0; i < n; i++)
          CHECK_MSG(atomic_load(&v.hits[i]) == 1, "spin %s us, %d threads, call %d, n %lld: index %lld hit %d times",
                    spins[s], threads, c, (long long)n, (long long)i, atomic_load(&v.hits[i]));
        free(v.hits);
        if (c % 7 == 3) nap_us(c % 2 ? 100 : 3000); /* past the spin: the workers go to sleep */
      }
      pt_pool_free(p);
    }
  }
  /* a pool freed while its workers still spin must not hang */
  setenv("PT_POOL_SPIN_US", "100000", 1);
  pt_pool *p = pt_pool_new(3);
  pt_pool_free(p);
  unsetenv("PT_POOL_SPIN_US");
  TEST_DONE();
}
