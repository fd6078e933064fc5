/* The analytic cost model: lowers, profiles and predicts each candidate; the hand-written
 * schedule (tiled, vectorized) must outscore the naive loop nest, and metrics behave. */
#include "predictor.h"
#include "synthetic.h"
#include "test.h"

#include <math.h>

int main(void) {
  pt_diag d = {0};
  ptg_target *t = synthetic_shipped_target("zen5-epyc-2c", &d);
  CHECK_MSG(t, "%s", d.msg);
  pc_program *prog = pc_workload_build("matmul:64,128,64", &d);
  CHECK_MSG(prog, "%s", d.msg);
  if (!t || !prog) TEST_DONE();
  pc_state *naive = pc_state_new(prog), *tuned = pc_state_new(prog);
  CHECK(pc_schedule_default(tuned, 16, &d) == 0);
  pc_cost_model *m = pp_cost_model_analytic(t, NULL, &d);
  CHECK(m && strcmp(m->name, "analytic") == 0);
  pc_state *states[2] = {naive, tuned};
  double scores[2] = {0, 0};
  CHECK(m->predict(m->self, prog, 2, states, scores, &d) == 0);
  CHECK_MSG(scores[1] > 2 * scores[0] && scores[0] > 0, "naive %g tuned %g", scores[0], scores[1]);
  pp_cost_model_free(m);

  /* metrics on a toy ranking */
  double meas[4] = {1, 2, 3, 4}, good[4] = {1.1, 2.2, 2.9, 4.4}, bad[4] = {4, 3, 2, 1};
  CHECK(fabs(pp_spearman(4, good, meas) - 1) < 1e-12 && fabs(pp_spearman(4, bad, meas) + 1) < 1e-12);
  CHECK(fabs(pp_pairwise_accuracy(4, good, meas) - 1) < 1e-12 && pp_pairwise_accuracy(4, bad, meas) == 0);
  CHECK(pp_topk(4, good, meas, 1) == 1 && fabs(pp_topk(4, bad, meas, 1) - 0.25) < 1e-12 && pp_topk(4, bad, meas, 4) == 1);
  CHECK(fabs(pp_mape(4, good, meas) - (0.1 + 0.1 + 0.1 / 3 + 0.1) / 4) < 1e-12);
  pc_state_free(naive), pc_state_free(tuned);
  pc_program_free(prog);
  ptg_target_free(t);
  TEST_DONE();
}
