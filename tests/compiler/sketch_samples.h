/* What the sketch tests measure over random annotation: the share of samples of every sketch
 * of a program for which a predicate holds. */
#ifndef PC_TEST_SKETCH_SAMPLES_H
#define PC_TEST_SKETCH_SAMPLES_H
#include <stdbool.h>
#include <stdint.h>

#include "compiler/compiler.h"

typedef bool (*sample_test)(const pc_sketches *sk, int sketch, const pc_state *s, void *ctx);

/* Share of `n` samples per sketch (drawn from `seed`) that pass `test`; samples that fail to
 * apply are counted in *n_bad and left out; -1 when no sketch could be generated. */
static inline double sample_share(const pc_program *p, const pc_sketch_opts *so, uint64_t seed, int n, sample_test test,
                                  void *ctx, int *n_bad) {
  pt_diag d = {0};
  pc_sketches *sk = pc_sketches_generate(p, so, &d);
  if (!sk) return -1;
  pt_rng rng = {seed};
  int hit = 0, total = 0;
  for (int i = 0; i < pc_sketches_count(sk); i++)
    for (int k = 0; k < n; k++) {
      pc_state *s = pc_sketch_sample(sk, i, &rng, &d);
      if (!s) {
        (*n_bad)++;
        continue;
      }
      hit += test(sk, i, s, ctx);
      total++;
      pc_state_free(s);
    }
  pc_sketches_free(sk);
  return total ? (double)hit / total : 0;
}
#endif
