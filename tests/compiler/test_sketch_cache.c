/* The cache rule of tile sampling (compiler/sketch_cache.c): the working set of a matmul's
 * tile blocks equals the count by hand from its split lengths, a convolution's padded input
 * is counted with its window, and with L1/L2 sizes given, many more sampled tiles fit both
 * caches than without (same seed), every sample still applying. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "sketch_samples.h"
#include "test.h"

/* The split steps with 3 lengths (spatial, in axis order) and with 1 (reduction). */
static int splits(const pc_state *s, int n_lengths, const pc_step **out, int cap) {
  int n = 0;
  for (int k = 0; k < s->n_steps && n < cap; k++)
    if (s->steps[k].kind == PC_STEP_SP && s->steps[k].n_lengths == n_lengths) out[n++] = &s->steps[k];
  return n;
}

static int64_t inner2(const pc_step *sp) { return sp->lengths[1] * sp->lengths[2]; }

typedef struct {
  int64_t l1, l2;
} cache_sizes;

static bool fits(const pc_sketches *sk, int i, const pc_state *s, void *ctx) {
  const cache_sizes *c = ctx;
  int64_t w1 = pc_sketch_working_set(sk, i, s, 1), w2 = pc_sketch_working_set(sk, i, s, 2);
  return w1 > 0 && w1 <= c->l1 && w2 <= c->l2;
}

/* Fraction of `n` samples of every sketch whose blocks fit l1 and l2 bytes (the rule on or off). */
static double fit_fraction(const pc_program *p, int64_t l1, int64_t l2, bool rule, int n, int *n_bad) {
  pc_sketch_opts so;
  pc_sketch_opts_default(&so);
  if (rule) {
    so.cache_bytes[0] = l1;
    so.cache_bytes[1] = l2;
  }
  return sample_share(p, &so, 7, n, fits, &(cache_sizes){l1, l2}, n_bad);
}

int main(void) {
  int n = getenv("PORTENT_TEST_QUICK") ? 40 : 120;
  pt_diag d = {0};

  /* matmul C[N,M] = A[N,L] B[L,M]: block 1 = A (i x k1) + B (k1 x j) + C (i x j),
   * block 2 = A (i x L) + B (L x j) + C (i x j), with i, j the level-2 x level-3 tiles. */
  pc_program *mm = pc_workload_build("matmul:512,256,384", &d);
  CHECK_MSG(mm != NULL, "%s", d.msg);
  pc_sketch_opts so;
  pc_sketch_opts_default(&so);
  pc_sketches *sk = mm ? pc_sketches_generate(mm, &so, &d) : NULL;
  CHECK_MSG(sk != NULL, "%s", d.msg);
  int checked = 0;
  pt_rng rng = {3};
  for (int i = 0; sk && i < pc_sketches_count(sk); i++) {
    if (strstr(pc_sketch_describe(sk, i), "cache_write")) continue; /* the plain tiling */
    for (int k = 0; k < 20; k++) {
      pc_state *s = pc_sketch_sample(sk, i, &rng, &d);
      CHECK_MSG(s != NULL, "%s", d.msg);
      if (!s) continue;
      const pc_step *sp[2] = {0}, *rd[1] = {0};
      bool shaped = splits(s, 3, sp, 2) == 2 && splits(s, 1, rd, 1) == 1;
      CHECK(shaped);
      if (!shaped) {
        pc_state_free(s);
        continue;
      }
      int64_t ti = inner2(sp[0]), tj = inner2(sp[1]), k1 = rd[0]->lengths[0];
      int64_t want1 = 4 * (ti * k1 + k1 * tj + ti * tj), want2 = 4 * (ti * 256 + 256 * tj + ti * tj);
      int64_t got1 = pc_sketch_working_set(sk, i, s, 1), got2 = pc_sketch_working_set(sk, i, s, 2);
      CHECK_MSG(got1 == want1 && got2 == want2, "matmul tile i %lld j %lld k1 %lld: %lld/%lld bytes, want %lld/%lld",
                (long long)ti, (long long)tj, (long long)k1, (long long)got1, (long long)got2, (long long)want1,
                (long long)want2);
      checked++;
      pc_state_free(s);
    }
  }
  CHECK(checked == 20);
  CHECK(sk == NULL || pc_sketch_working_set(sk, 0, NULL, 1) == -1);
  pc_sketches_free(sk);

  /* conv2d 1x8x12x12, 16 filters 3x3, stride 1, pad 1: the padded input's block spans
   * (y tile + ry tile - 1) rows; with the whole reduction (block 2) the 14x14 padded image
   * is capped at its shape. */
  pc_program *cv = pc_workload_build("conv2d_nchw:1,8,12,12,16,3,3,1,1", &d);
  CHECK_MSG(cv != NULL, "%s", d.msg);
  sk = cv ? pc_sketches_generate(cv, &so, &d) : NULL;
  CHECK_MSG(sk != NULL, "%s", d.msg);
  int conv_checked = 0;
  for (int i = 0; sk && i < pc_sketches_count(sk); i++) {
    if (strstr(pc_sketch_describe(sk, i), "cache_write")) continue;
    for (int k = 0; k < 10; k++) {
      pc_state *s = pc_sketch_sample(sk, i, &rng, &d);
      if (!s) continue;
      const pc_step *sp[4] = {0}, *rd[3] = {0};
      if (splits(s, 3, sp, 4) != 4 || splits(s, 1, rd, 3) != 3) {
        pc_state_free(s);
        continue;
      }
      int64_t tn = inner2(sp[0]), tf = inner2(sp[1]), ty = inner2(sp[2]), tx = inner2(sp[3]);
      int64_t rc = rd[0]->lengths[0], ry = rd[1]->lengths[0], rx = rd[2]->lengths[0];
      int64_t pad1 = tn * rc * (ty + ry - 1) * (tx + rx - 1), w1 = tf * rc * ry * rx, out = tn * tf * ty * tx;
      int64_t pad2 = tn * 8 * (ty + 2 < 14 ? ty + 2 : 14) * (tx + 2 < 14 ? tx + 2 : 14), w2 = tf * 8 * 9;
      int64_t got1 = pc_sketch_working_set(sk, i, s, 1), got2 = pc_sketch_working_set(sk, i, s, 2);
      CHECK_MSG(got1 == 4 * (pad1 + w1 + out) && got2 == 4 * (pad2 + w2 + out),
                "conv tile n%lld f%lld y%lld x%lld rc%lld ry%lld rx%lld: %lld/%lld bytes, want %lld/%lld", (long long)tn,
                (long long)tf, (long long)ty, (long long)tx, (long long)rc, (long long)ry, (long long)rx,
                (long long)got1, (long long)got2, (long long)(4 * (pad1 + w1 + out)), (long long)(4 * (pad2 + w2 + out)));
      conv_checked++;
      pc_state_free(s);
    }
  }
  CHECK(conv_checked > 0);
  pc_sketches_free(sk);

  /* With Zen 5's 48 KiB L1d and 1 MiB L2, a 1024^3 matmul's samples fit far more often. */
  pc_program *big = pc_workload_build("matmul:1024,1024,1024", &d);
  CHECK_MSG(big != NULL, "%s", d.msg);
  int bad = 0;
  double off = big ? fit_fraction(big, 48 << 10, 1 << 20, false, n, &bad) : -1;
  double on = big ? fit_fraction(big, 48 << 10, 1 << 20, true, n, &bad) : -1;
  printf("matmul 1024: samples fitting L1 and L2: %.2f without the rule, %.2f with it\n", off, on);
  CHECK(bad == 0);
  CHECK_MSG(off >= 0 && on >= 0.5 && on > off + 0.2, "fit without %.2f, with %.2f", off, on);

  pc_program_free(mm);
  pc_program_free(cv);
  pc_program_free(big);
  TEST_DONE();
}
