/* The xgb-imp cost model behind the tuner's interface: trained online on random schedules of
 * a small matmul whose "measured" costs are a known function of their features (no kernel is
 * run, so the test is fast), it ranks held-out schedules; the same with the importance
 * pre-fitted offline from a TVM log, which also exercises the record reader. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "predictor/learned.h"
#include "predictor/predictor.h"
#include "test.h"

#define N_MAX 160

/* Pairwise accuracy of scores against costs (lower cost = better) on programs lo..hi-1. */
static double pairwise(const double *cost, const double *score, int n) {
  int right = 0, pairs = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (cost[i] != cost[j]) pairs++, right += (cost[i] < cost[j]) == (score[i] > score[j]);
  return pairs ? (double)right / pairs : 0;
}

int main(void) {
  int n_train = getenv("PORTENT_TEST_QUICK") ? 60 : 100, n_test = 40, n = n_train + n_test;
  pt_diag d = {0};
  pc_program *p = pc_workload_build("matmul_relu:64,48,64", &d);
  CHECK_MSG(p != NULL, "%s", d.msg);
  pc_sketch_opts so;
  pc_sketch_opts_default(&so);
  so.vector_lanes = 8;
  pc_sketches *sk = pc_sketches_generate(p, &so, &d);
  CHECK_MSG(sk != NULL, "%s", d.msg);
  pc_state *states[N_MAX];
  float *rows[N_MAX];
  int n_rows[N_MAX];
  pt_rng rng = {99};
  for (int i = 0; i < n;) {
    pc_state *s = pc_sketch_sample(sk, (int)pt_rng_range(&rng, pc_sketches_count(sk)), &rng, &d);
    if (!s) continue;
    n_rows[i] = pp_features_state(s, 64, &rows[i], &d);
    CHECK(n_rows[i] > 0);
    states[i++] = s;
  }
  /* The cost: a function of the feature that varies most between the schedules' first rows. */
  int varied = 0;
  double best_var = -1;
  for (int f = 0; f < PP_FEATURES_PER_STORE; f++) {
    double m = 0, m2 = 0;
    for (int i = 0; i < n; i++) m += rows[i][f], m2 += (double)rows[i][f] * rows[i][f];
    double var = m2 / n - (m / n) * (m / n);
    if (var > best_var) best_var = var, varied = f;
  }
  double cost[N_MAX];
  pc_measure_result res[N_MAX];
  for (int i = 0; i < n; i++) {
    cost[i] = 1e-3 / (1 + rows[i][varied] * rows[i][varied]);
    memset(&res[i], 0, sizeof res[i]);
    res[i].error = PC_MEASURE_OK;
    res[i].median_s = res[i].min_s = res[i].max_s = cost[i];
    res[i].repeats = 1;
    free(rows[i]);
  }
  char name[64];
  printf("cost from feature %d (%s), variance %.2f\n", varied, pp_feature_name(varied, name, sizeof name), best_var);

  /* Online: importance fitted on the data seen, pruned + redistributed model. */
  pc_cost_model *m = pp_cost_model_xgb_imp(NULL, &d);
  CHECK(m && strcmp(m->name, "xgb-imp") == 0);
  double score[N_MAX];
  CHECK(m->predict(m->self, p, n_test, states + n_train, score, &d) == 0); /* untrained: random */
  CHECK_MSG(m->update(m->self, p, n_train / 2, states, res, &d) == 0, "%s", d.msg);
  CHECK_MSG(m->update(m->self, p, n_train - n_train / 2, states + n_train / 2, res + n_train / 2, &d) == 0, "%s", d.msg);
  CHECK_MSG(m->predict(m->self, p, n_test, states + n_train, score, &d) == 0, "%s", d.msg);
  double acc = pairwise(cost + n_train, score, n_test);
  printf("xgb-imp online: held-out pairwise accuracy %.3f\n", acc);
  CHECK(acc > 0.8);
  pp_cost_model_free(m);

  /* Offline pre-fit from a log of the training schedules. */
  char path[] = "/tmp/portent_xgbimp_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  for (int i = 0; i < n_train; i++) {
    pc_record r;
    pc_record_from_measure(&r, states[i], &res[i], cost[i]);
    CHECK_MSG(pc_record_append(path, &r, &d) == 0, "%s", d.msg);
  }
  pp_xgb_imp_opts io;
  pp_xgb_imp_opts_default(&io);
  io.prefit = path;
  io.threshold = 0.05;
  m = pp_cost_model_xgb_imp(&io, &d);
  CHECK_MSG(m != NULL, "%s", d.msg);
  CHECK_MSG(m->update(m->self, p, n_train, states, res, &d) == 0, "%s", d.msg);
  CHECK(m->predict(m->self, p, n_test, states + n_train, score, &d) == 0);
  acc = pairwise(cost + n_train, score, n_test);
  printf("xgb-imp pre-fitted: held-out pairwise accuracy %.3f\n", acc);
  CHECK(acc > 0.8);
  pp_cost_model_free(m);
  unlink(path);
  /* A log without usable records is an error naming the file. */
  io.prefit = "/nonexistent/xgbi.jsonl";
  CHECK(pp_cost_model_xgb_imp(&io, &d) == NULL && strstr(d.msg, "xgbi.jsonl"));

  for (int i = 0; i < n; i++) pc_state_free(states[i]);
  pc_sketches_free(sk);
  pc_program_free(p);
  TEST_DONE();
}
