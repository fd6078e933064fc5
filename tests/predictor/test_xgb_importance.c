/* The seed's feature importance on synthetic rows whose informative features are known: the
 * strongest ranks first and carries the sign of its effect, a harmful one is negative, pruning
 * drops the noise and constant columns, and the redistributed shares of a program's label are
 * non-negative, proportional to the importance-weighted sums and add up to the label. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predictor/learned.h"
#include "test.h"

#define GOOD 3  /* raises the label strongly */
#define BAD 5   /* lowers it, less strongly */
#define NOISE1 7
#define NOISE2 9
#define ROWS_PER_PROG 2

int main(void) {
  int n_prog = getenv("PORTENT_TEST_QUICK") ? 200 : 400, n_rows = n_prog * ROWS_PER_PROG;
  float *X = calloc((size_t)n_rows * PP_FEATURES_PER_STORE, sizeof(float));
  int *row_prog = malloc(sizeof(int) * (size_t)n_rows);
  double *label = malloc(sizeof(double) * (size_t)n_prog);
  pt_rng rng = {7};
  for (int p = 0; p < n_prog; p++) {
    double good = 0, bad = 0;
    for (int k = 0; k < ROWS_PER_PROG; k++) {
      int r = p * ROWS_PER_PROG + k;
      float *x = X + (size_t)r * PP_FEATURES_PER_STORE;
      x[GOOD] = (float)(4 * pt_rng_uniform(&rng));
      x[BAD] = (float)(4 * pt_rng_uniform(&rng));
      x[NOISE1] = (float)(4 * pt_rng_uniform(&rng));
      x[NOISE2] = (float)(4 * pt_rng_uniform(&rng));
      x[11] = 1; /* constant: no split can use it */
      good += x[GOOD], bad += x[BAD];
      row_prog[r] = p;
    }
    label[p] = 0.05 + 0.1 * good - 0.04 * bad + 0.4; /* in (0.13, 1.25) */
  }
  pp_xgb_view v = {X, row_prog, n_rows, label, n_prog};
  pt_diag d = {0};
  pp_xgb_opts o;
  pp_xgb_opts_default(&o);
  o.rounds = 30;
  o.max_depth = 4;
  pp_xgb_booster *b = NULL;
  CHECK_MSG(pp_xgb_fit(&o, &v, NULL, &b, &d) == 0 && b, "%s", d.msg);
  pp_xgb_importance imp;
  CHECK_MSG(pp_xgb_importance_compute(b, &v, &imp, &d) == 0, "%s", d.msg);
  printf("score: good %+.3f bad %+.3f noise %+.3f %+.3f const %+.3f; rho good %+.3f bad %+.3f\n", imp.score[GOOD],
         imp.score[BAD], imp.score[NOISE1], imp.score[NOISE2], imp.score[11], imp.rho[GOOD], imp.rho[BAD]);
  int top = 0;
  for (int f = 1; f < PP_FEATURES_PER_STORE; f++)
    if (fabs(imp.score[f]) > fabs(imp.score[top])) top = f;
  CHECK_MSG(top == GOOD, "the informative feature ranks first (got %d)", top);
  CHECK(imp.score[GOOD] > 0.5 && imp.score[GOOD] <= 1);
  CHECK(imp.rho[GOOD] > 0.5);
  CHECK_MSG(imp.score[BAD] < 0, "the harmful feature is signed negative (%g)", imp.score[BAD]);
  CHECK(imp.score[11] == 0 && imp.weight[11] == 0);
  for (int f = 0; f < PP_FEATURES_PER_STORE; f++) CHECK(fabs(imp.score[f]) <= 1 && imp.rho[f] >= -1 && imp.rho[f] <= 1);
  CHECK(fabs(imp.score[BAD]) > fabs(imp.score[NOISE1]) && fabs(imp.score[BAD]) > fabs(imp.score[NOISE2]));

  /* Pruning keeps the two informative features and drops the noise and the constants. */
  double threshold = fmax(fabs(imp.score[NOISE1]), fabs(imp.score[NOISE2]));
  unsigned char keep[PP_FEATURES_PER_STORE];
  int kept = pp_xgb_prune(&imp, threshold, keep);
  CHECK_MSG(kept == 2 && keep[GOOD] && keep[BAD] && !keep[NOISE1] && !keep[NOISE2], "kept %d", kept);
  CHECK(pp_xgb_prune(&imp, 0, keep) >= 2 && !keep[11] && !keep[0]);
  CHECK(pp_xgb_prune(&imp, 1, keep) == 0);
  /* The pruned model trains on its two columns and still orders programs by label. */
  pp_xgb_prune(&imp, threshold, keep);
  pp_xgb_fit_opts fo = {keep, imp.score};
  pp_xgb_booster *pruned = NULL;
  CHECK_MSG(pp_xgb_fit(&o, &v, &fo, &pruned, &d) == 0 && pruned, "%s", d.msg);
  CHECK(pp_xgb_booster_n_cols(pruned) == 2);
  double *score = malloc(sizeof(double) * (size_t)n_prog);
  CHECK(pp_xgb_booster_predict(pruned, X, row_prog, n_rows, n_prog, score, &d) == 0);
  int right = 0, pairs = 0;
  for (int i = 0; i < n_prog; i += 3)
    for (int j = i + 1; j < n_prog; j += 3)
      if (fabs(label[i] - label[j]) > 0.05) pairs++, right += (label[i] > label[j]) == (score[i] > score[j]);
  printf("pruned + redistributed: pairwise %.3f over %d pairs\n", (double)right / pairs, pairs);
  CHECK(right > 0.85 * pairs);
  double w[PP_FEATURES_PER_STORE], g[PP_FEATURES_PER_STORE], c[PP_FEATURES_PER_STORE];
  CHECK(pp_xgb_booster_importance(pruned, w, g, c, &d) == 0);
  CHECK(w[NOISE1] == 0 && (w[GOOD] > 0 || w[BAD] > 0)); /* mapped back to the feature numbers */

  /* Redistribution: shares add up to each label and follow the weighted sums. */
  float *share = malloc(sizeof(float) * (size_t)n_rows);
  pp_xgb_redistribute(&v, imp.score, share);
  for (int p = 0; p < n_prog; p++) {
    double sum = 0;
    for (int k = 0; k < ROWS_PER_PROG; k++) {
      int r = p * ROWS_PER_PROG + k;
      CHECK(share[r] >= 0);
      sum += share[r];
    }
    CHECK_MSG(fabs(sum - label[p]) < 1e-5 * label[p] + 1e-6, "program %d: shares %g, label %g", p, sum, label[p]);
  }
  float two[2 * PP_FEATURES_PER_STORE] = {0};
  int two_prog[2] = {0, 0};
  double one_label = 0.9, weights[PP_FEATURES_PER_STORE] = {0};
  weights[0] = -0.5, weights[1] = 1; /* a negative importance weighs by its magnitude */
  two[0] = 2, two[1] = -1;                          /* s = 0.5*2 + 1*1 = 2 */
  two[PP_FEATURES_PER_STORE + 1] = 4;               /* s = 4 */
  pp_xgb_view tv = {two, two_prog, 2, &one_label, 1};
  float out[2];
  pp_xgb_redistribute(&tv, weights, out);
  CHECK(fabs(out[0] - 0.3) < 1e-6 && fabs(out[1] - 0.6) < 1e-6);
  memset(two, 0, sizeof two); /* nothing weighted: equal shares */
  pp_xgb_redistribute(&tv, weights, out);
  CHECK(fabs(out[0] - 0.45) < 1e-6 && fabs(out[1] - 0.45) < 1e-6);

  /* Nothing to learn: no booster, no error. */
  double zeros[2] = {0, 0};
  pp_xgb_view none = {X, row_prog, 4, zeros, 2};
  pp_xgb_booster *nb = b; /* must come back NULL */
  CHECK(pp_xgb_fit(&o, &none, NULL, &nb, &d) == 0 && nb == NULL);

  free(share), free(score);
  pp_xgb_booster_free(b);
  pp_xgb_booster_free(pruned);
  free(X), free(row_prog), free(label);
  TEST_DONE();
}
