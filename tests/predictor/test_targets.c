/* Predictions of a suite workload's profile on the shipped published targets move the way
 * the targets' figures say: narrower native vectors -> more compute cycles; smaller caches
 * -> no less memory time; more threads -> less time for a parallel kernel. */
#include "predictor.h"
#include "test.h"

#include <math.h>

static ptg_target *shipped(const char *name) {
  char path[1024];
  pt_diag d = {0};
  snprintf(path, sizeof path, "%s/%s.json", ptg_shipped_dir(), name);
  ptg_target *t = ptg_target_load(path, &d);
  CHECK_MSG(t, "%s", d.msg);
  return t;
}

static pp_prediction *predict(const pa_profile *p, const ptg_target *t, int threads) {
  pt_diag d = {0};
  pp_options o;
  pp_options_default(&o);
  o.threads = threads;
  pp_prediction *r = pp_predict_profile(p, t, &o, &d);
  CHECK_MSG(r && r->seconds > 0, "%s: %s", t->name, d.msg);
  return r;
}

int main(void) {
  pt_diag d = {0};
  pc_program *prog = pc_workload_build("matmul:128,256,256", &d);
  CHECK_MSG(prog, "%s", d.msg);
  if (!prog) TEST_DONE();
  pc_state *s = pc_state_new(prog);
  CHECK(pc_schedule_default(s, 16, &d) == 0);
  pa_options po = {.sample_rate = 1};
  pa_profile *p = pp_profile_state(s, 1, &po, 0, &d);
  CHECK_MSG(p, "%s", d.msg);
  if (!p) TEST_DONE();

  /* narrower vectors: the same target at 512, 256 and 128 bits */
  ptg_target *t = shipped("intel-skylake-sp");
  double compute[3];
  const int widths[3] = {512, 256, 128};
  for (int i = 0; i < 3; i++) {
    t->native_vector_bits = widths[i];
    pp_prediction *r = predict(p, t, 1);
    compute[i] = r ? r->compute_seconds : NAN;
    pp_prediction_free(r);
  }
  CHECK_MSG(compute[0] < compute[1] && compute[1] < compute[2], "compute %g %g %g", compute[0], compute[1], compute[2]);
  t->native_vector_bits = 512;
  /* and across shipped targets, in cycles: 128-bit Neoverse N1 needs more than 512-bit Skylake-SP */
  ptg_target *n1 = shipped("arm-neoverse-n1");
  pp_prediction *a = predict(p, t, 1), *b = predict(p, n1, 1);
  if (a && b)
    CHECK_MSG(b->compute_seconds * b->frequency_ghz > a->compute_seconds * a->frequency_ghz, "N1 %g vs SKX %g cycles",
              b->compute_seconds * b->frequency_ghz, a->compute_seconds * a->frequency_ghz);
  pp_prediction_free(b);

  /* smaller caches: every level a sixteenth */
  for (int i = 0; i < t->n_caches; i++) t->caches[i].size_bytes /= 16;
  b = predict(p, t, 1);
  if (a && b) {
    CHECK_MSG(b->seconds >= a->seconds && b->memory_seconds >= a->memory_seconds, "small caches %g vs %g s",
              b->seconds, a->seconds);
    CHECK(b->functions[1].hit_fraction[0] <= a->functions[1].hit_fraction[0] + 1e-12);
  }
  pp_prediction_free(a), pp_prediction_free(b);
  for (int i = 0; i < t->n_caches; i++) t->caches[i].size_bytes *= 16;

  /* more cores: 1, 4, 16 threads of a parallel kernel */
  double sec[3];
  const int threads[3] = {1, 4, 16};
  for (int i = 0; i < 3; i++) {
    pp_prediction *r = predict(p, t, threads[i]);
    sec[i] = r ? r->seconds : NAN;
    pp_prediction_free(r);
  }
  CHECK_MSG(sec[0] > sec[1] && sec[1] > sec[2], "threads: %g %g %g", sec[0], sec[1], sec[2]);

  ptg_target_free(n1);
  ptg_target_free(t);
  pa_profile_free(p);
  pc_state_free(s);
  pc_program_free(prog);
  TEST_DONE();
}
