/* The learned model: Ansor's per-store features are finite, one row per computed stage, and
 * tell schedules apart; XGBoost trained with the pack-sum objective on measured random
 * schedules of a small matmul ranks a held-out set better than chance (pairwise accuracy). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predictor/learned.h"
#include "predictor/predictor.h"
#include "test.h"

#define N_TRAIN 96
#define N_TEST 24

int main(void) {
  pt_diag d = {0};
  pc_program *p = pc_workload_build("matmul_relu:64,48,64", &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  pc_sketch_opts so;
  pc_sketch_opts_default(&so);
  so.vector_lanes = 8;
  pc_sketches *sk = pc_sketches_generate(p, &so, &d);
  CHECK_MSG(sk != NULL, "%s", d.msg);
  pc_measure_opts mo;
  pc_measure_opts_default(&mo);
  mo.threads = 1;
  mo.min_time_s = 0.01;
  mo.min_repeats = 3;
  /* the labels by the thread's CPU time: the wall clock of a loaded machine (the ASan build
   * beside other jobs) took held-out accuracy to 0.58 once */
  mo.cpu_clock = true;
  pc_reference *ref = pc_reference_new(p, &mo, &d);
  CHECK(ref != NULL);
  pc_state *states[N_TRAIN + N_TEST];
  pc_measure_result res[N_TRAIN + N_TEST];
  pt_rng rng = {2024};
  int n = 0;
  char name[64];
  CHECK(strcmp(pp_feature_name(0, name, sizeof name), "float_mad") == 0);
  CHECK(strcmp(pp_feature_name(PP_FEATURES_PER_STORE - 1, name, sizeof name), "auto_unroll_max_step") == 0);
  float *first = NULL;
  int distinct = 0;
  while (n < N_TRAIN + N_TEST) {
    pc_state *s = pc_sketch_sample(sk, (int)pt_rng_range(&rng, pc_sketches_count(sk)), &rng, &d);
    if (!s) continue;
    float *rows = NULL;
    int k = pp_features_state(s, 64, &rows, &d);
    int computed = 0;
    for (int i = 0; i < s->n_stages; i++)
      computed += !s->prog->ops[s->stages[i].op].is_placeholder && s->stages[i].at != PC_AT_INLINE;
    CHECK_MSG(k == computed, "%d rows for %d computed stages", k, computed);
    for (int i = 0; i < k * PP_FEATURES_PER_STORE; i++) CHECK(isfinite(rows[i]));
    if (!first) first = rows;
    else {
      distinct += memcmp(first, rows, sizeof(float) * PP_FEATURES_PER_STORE) != 0;
      free(rows);
    }
    pc_measure(s, ref, &mo, &res[n], &d);
    states[n++] = s;
  }
  free(first);
  CHECK(distinct > (N_TRAIN + N_TEST) / 2);
  pc_cost_model *m = pp_cost_model_xgb(NULL, &d);
  double t0 = pt_now();
  CHECK_MSG(m->update(m->self, p, N_TRAIN, states, res, &d) == 0, "%s", d.msg);
  double t_train = pt_now() - t0;
  double scores[N_TEST];
  CHECK_MSG(m->predict(m->self, p, N_TEST, states + N_TRAIN, scores, &d) == 0, "%s", d.msg);
  /* Pairwise ranking accuracy on the held-out candidates that ran. */
  int pairs = 0, right = 0;
  for (int i = N_TRAIN; i < N_TRAIN + N_TEST; i++)
    for (int j = i + 1; j < N_TRAIN + N_TEST; j++) {
      if (res[i].error || res[j].error || res[i].median_s == res[j].median_s) continue;
      pairs++;
      bool faster = res[i].median_s < res[j].median_s;
      right += faster == (scores[i - N_TRAIN] > scores[j - N_TRAIN]);
    }
  double acc = pairs ? (double)right / pairs : 0;
  printf("xgb: trained on %d in %.2f s, held-out pairwise accuracy %.2f over %d pairs (chance 0.5)\n", N_TRAIN, t_train,
         acc, pairs);
  CHECK(pairs > 100);
  CHECK(acc > 0.6);
  pp_cost_model_free(m);
  for (int i = 0; i < n; i++) pc_state_free(states[i]);
  pc_reference_free(ref);
  pc_sketches_free(sk);
  pc_program_free(p);
  TEST_DONE();
}
