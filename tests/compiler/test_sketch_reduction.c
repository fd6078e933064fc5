/* The reduction rule of tile sampling (compiler/sketch_cache.c, sketch_annotate.c): the inner
 * reduction tile r1 of a sample equals the product of its level-2 reduction lengths counted by
 * hand (matmul, convolution), the rule raises the share of samples with r1 >= 8 on a 1024^3
 * matmul, a reduction shorter than the floor is taken whole, and every sample still applies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "sketch_samples.h"
#include "test.h"

/* Product of the first lengths of the split steps with one length: the reduction splits of
 * the multi-level tiling ("SSRSRS": r0 = extent / l, r1 = l). */
static int64_t r1_by_hand(const pc_state *s) {
  int64_t r1 = 1;
  int n = 0;
  for (int k = 0; k < s->n_steps; k++)
    if (s->steps[k].kind == PC_STEP_SP && s->steps[k].n_lengths == 1) r1 *= s->steps[k].lengths[0], n++;
  return n ? r1 : 0;
}

typedef struct {
  int64_t at_least, exactly;
} tile_floor;

static bool reaches(const pc_sketches *sk, int i, const pc_state *s, void *ctx) {
  const tile_floor *t = ctx;
  int64_t r1 = pc_sketch_reduction_tile(sk, i, s);
  return t->exactly > 0 ? r1 == t->exactly : r1 >= t->at_least;
}

/* Share of `n` samples of every sketch of p with r1 >= `at_least` (or == `exactly` when > 0),
 * under the rule `min_tile` (0 off); samples that fail to apply are counted in *n_bad. */
static double share(const pc_program *p, int min_tile, int64_t at_least, int64_t exactly, int n, int *n_bad) {
  pc_sketch_opts so;
  pc_sketch_opts_default(&so);
  so.min_reduction_tile = min_tile;
  return sample_share(p, &so, 11, n, reaches, &(tile_floor){at_least, exactly}, n_bad);
}

/* Every sketch's samples: r1 as counted by hand, at least one sketch with a tiled reduction. */
static int check_by_hand(const char *workload, int n) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build(workload, &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  if (!p) return 0;
  pc_sketch_opts so;
  pc_sketch_opts_default(&so);
  pc_sketches *sk = pc_sketches_generate(p, &so, &d);
  CHECK_MSG(sk != NULL, "%s", d.msg);
  pt_rng rng = {5};
  int checked = 0;
  for (int i = 0; sk && i < pc_sketches_count(sk); i++)
    for (int k = 0; k < n; k++) {
      pc_state *s = pc_sketch_sample(sk, i, &rng, &d);
      CHECK_MSG(s != NULL, "%s sketch %d: %s", workload, i, d.msg);
      if (!s) continue;
      int64_t got = pc_sketch_reduction_tile(sk, i, s), want = r1_by_hand(s);
      if (got > 0) {
        CHECK_MSG(got == want, "%s sketch %d (%s): r1 %lld, by hand %lld", workload, i, pc_sketch_describe(sk, i),
                  (long long)got, (long long)want);
        checked++;
      }
      pc_state_free(s);
    }
  CHECK(sk == NULL || pc_sketch_reduction_tile(sk, 0, NULL) == -1);
  pc_sketches_free(sk);
  pc_program_free(p);
  return checked;
}

int main(void) {
  int n = getenv("PORTENT_TEST_QUICK") ? 40 : 120;
  pt_diag d = {0};

  /* matmul C[N,M] = A[N,L] B[L,M]: one reduction split; conv2d: rc, ry, rx each split once. */
  CHECK(check_by_hand("matmul:512,256,384", 20) >= 20);
  CHECK(check_by_hand("conv2d_nchw:1,8,12,12,16,3,3,1,1", 10) >= 10);

  /* A 1024^3 matmul: r1 is drawn among 1..64; with the rule at 8 far more samples reach it
   * (one draw in four skips the tile rules, as with the register rule). */
  pc_program *big = pc_workload_build("matmul:1024,1024,1024", &d);
  CHECK_MSG(big != NULL, "%s", d.msg);
  int bad = 0;
  double off = big ? share(big, 0, 8, 0, n, &bad) : -1;
  double on = big ? share(big, 8, 8, 0, n, &bad) : -1;
  printf("matmul 1024: samples with r1 >= 8: %.2f without the rule, %.2f with it\n", off, on);
  CHECK(bad == 0);
  CHECK_MSG(off >= 0 && on >= 0.8 && on > off + 0.2, "r1 >= 8 without %.2f, with %.2f", off, on);

  /* A reduction of 4, shorter than the floor: the rule asks for all of it (r1 = 4). */
  pc_program *short_k = pc_workload_build("matmul:64,4,64", &d);
  CHECK_MSG(short_k != NULL, "%s", d.msg);
  double whole_off = short_k ? share(short_k, 0, 0, 4, n, &bad) : -1;
  double whole_on = short_k ? share(short_k, 8, 0, 4, n, &bad) : -1;
  printf("matmul 64x4x64: samples with r1 = 4: %.2f without the rule, %.2f with it\n", whole_off, whole_on);
  CHECK(bad == 0);
  CHECK_MSG(whole_on >= 0.7 && whole_on > whole_off + 0.2, "r1 = 4 without %.2f, with %.2f", whole_off, whole_on);

  pc_program_free(big);
  pc_program_free(short_k);
  TEST_DONE();
}
